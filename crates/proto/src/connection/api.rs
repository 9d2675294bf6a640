//! The application-facing API of a connection: streams, events, paths, closing.

use bytes::Bytes;
use mpquic_wire::stream_id::{Dir, StreamId};

use super::{Connection, State};
use crate::error::TransportError;
use crate::path::{PathId, PathStats};
use crate::streams::{ReadError, StreamEvent, WriteError};
use crate::time::Timestamp;

/// Why a connection ended.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectionError {
    /// We detected a protocol error and closed with this code.
    #[error("local transport error: {0}")]
    TransportError(TransportError),
    /// The peer closed with a transport error code.
    #[error("peer closed the connection: {code:#x} ({reason})")]
    PeerTransportClose {
        /// The transport error code (RFC 9000 §20.1).
        code: u64,
        /// The frame type that triggered the error, if the peer named one.
        frame_type: Option<u64>,
        /// The reason phrase the peer sent.
        reason: String,
    },
    /// The peer's application closed.
    #[error("peer application closed the connection: code {code} ({reason})")]
    PeerApplicationClose {
        /// The application's error code.
        code: u64,
        /// The reason phrase the peer sent.
        reason: String,
    },
    /// Our application closed.
    #[error("closed locally: code {code}")]
    LocallyClosed {
        /// The application's error code.
        code: u64,
    },
    /// No packet for the idle timeout (RFC 9000 §10.1).
    #[error("idle timeout")]
    TimedOut,
    /// The peer sent a stateless reset (RFC 9000 §10.3).
    #[error("stateless reset by the peer")]
    Reset,
    /// The server supports none of our versions (RFC 9000 §6).
    #[error("no common QUIC version")]
    VersionMismatch,
}

/// Path events (issue 4: opened, validated, status changed, abandoned with reason).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PathEvent {
    /// A path exists (opened by us, or the peer started using a new path ID).
    Opened {
        /// The path.
        id: PathId,
    },
    /// Path validation succeeded (RFC 9000 §8.2).
    Validated {
        /// The path.
        id: PathId,
    },
    /// Path validation failed or the path stopped delivering; data moved to other paths.
    Failed {
        /// The path.
        id: PathId,
    },
    /// The peer advertised a new status for the path (PATH_STATUS_BACKUP or
    /// PATH_STATUS_AVAILABLE, RFC 10069 §3.3).
    StatusChanged {
        /// The path.
        id: PathId,
        /// True: backup; false: available.
        backup: bool,
    },
    /// Our application changed the status we advertise for the path (`set_path_status`).
    LocalStatusChanged {
        /// The path.
        id: PathId,
        /// True: backup; false: available.
        backup: bool,
    },
    /// PATH_ABANDON sent or received with this error code (RFC 10069 §3.4).
    Abandoned {
        /// The path.
        id: PathId,
        /// The application error code of the PATH_ABANDON frame.
        error_code: u64,
    },
}

/// Events for the application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The handshake completed.
    Connected,
    /// The connection ended.
    ConnectionLost(ConnectionError),
    /// A stream became readable, writable, finished, reset or was opened by the peer.
    Stream(StreamEvent),
    /// A path was opened, validated, failed, changed status or was abandoned.
    Path(PathEvent),
    /// A datagram arrived while none was waiting to be read (RFC 9221): call
    /// [`Connection::recv_datagram`] until it returns None. Like quinn's event, it is not
    /// repeated for datagrams arriving while older ones are unread.
    DatagramReceived,
}

/// Errors of path operations.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("multipath was not negotiated with the peer")]
    /// The peer did not negotiate multipath, so no path beyond the first exists.
    MultipathNotNegotiated,
    #[error("the peer allows no more path IDs (MAX_PATH_ID)")]
    /// Every path ID the peer allows is in use (RFC 10069 §6.2 MAX_PATH_ID).
    PathIdLimit,
    #[error("no connection ID available for a new path")]
    /// The peer has not issued a connection ID for the next path ID yet.
    NoConnectionId,
    #[error("only clients open paths (RFC 10069 §3)")]
    /// Only clients open paths (RFC 10069 §3).
    ServerCannotOpen,
    #[error("unknown or closed path {0}")]
    /// No open path has this ID.
    UnknownPath(PathId),
    #[error("the handshake has not completed")]
    /// The handshake has not completed (for a migration: is not confirmed, RFC 9000 §9).
    NotEstablished,
    #[error("only clients migrate (RFC 9000 §9)")]
    /// Only clients move a path to another local address (RFC 9000 §9).
    ServerCannotMigrate,
    #[error("the peer asked for no migration (disable_active_migration)")]
    /// The peer sent disable_active_migration (RFC 9000 §18.2): no active migration.
    MigrationDisabled,
    #[error("the server advertised no preferred address of this address family")]
    /// The server's preferred_address transport parameter (RFC 9000 §18.2) is absent or has
    /// no address of path 0's family.
    NoPreferredAddress,
}

impl Connection {
    /// Next application event.
    pub fn poll_event(&mut self) -> Option<Event> {
        if let Some(e) = self.events.pop_front() {
            return Some(e);
        }
        self.streams.poll_event().map(Event::Stream)
    }

    /// Open a bidirectional stream (None while the peer's stream limit is reached).
    pub fn open_bi(&mut self) -> Option<StreamId> {
        self.streams.open(Dir::Bi)
    }

    /// Open a unidirectional stream.
    pub fn open_uni(&mut self) -> Option<StreamId> {
        self.streams.open(Dir::Uni)
    }

    /// Next stream opened by the peer.
    pub fn accept(&mut self, dir: Dir) -> Option<StreamId> {
        self.streams.accept(dir)
    }

    /// Write to a stream; returns the bytes accepted.
    pub fn write(&mut self, id: StreamId, data: &[u8]) -> Result<usize, WriteError> {
        if self.is_closed() {
            return Err(WriteError::ClosedStream);
        }
        let n = self.streams.write(id, data)?;
        self.qlog_stream_moved(id, n, false, false);
        Ok(n)
    }

    /// Write without copying: the stream keeps a reference to `data`.
    pub fn write_bytes(&mut self, id: StreamId, data: Bytes) -> Result<usize, WriteError> {
        if self.is_closed() {
            return Err(WriteError::ClosedStream);
        }
        let n = self.streams.write_bytes(id, data)?;
        self.qlog_stream_moved(id, n, false, false);
        Ok(n)
    }

    /// Mark the end of a stream's data.
    pub fn finish(&mut self, id: StreamId) -> Result<(), WriteError> {
        self.streams.finish(id)?;
        self.qlog_stream_moved(id, 0, false, true);
        Ok(())
    }

    /// Set a stream's send priority: when several streams have data to send, packets take it
    /// from the highest priority first; streams of equal priority (0 by default) take turns.
    /// Retransmissions go before new data whatever their priority.
    pub fn set_priority(&mut self, id: StreamId, priority: i32) -> Result<(), WriteError> {
        self.streams.set_priority(id, priority)
    }

    /// A stream's send priority (see [`Connection::set_priority`]).
    pub fn priority(&self, id: StreamId) -> Result<i32, WriteError> {
        self.streams.priority(id)
    }

    /// Abandon sending on a stream (RESET_STREAM).
    pub fn reset(&mut self, id: StreamId, error_code: u64) -> Result<(), WriteError> {
        self.streams.reset(id, error_code)
    }

    /// Read in-order data: Ok(Some(n)) bytes, Ok(None) at the end of the stream.
    pub fn read(&mut self, id: StreamId, buf: &mut [u8]) -> Result<Option<usize>, ReadError> {
        let read = self.streams.read(id, buf)?;
        self.qlog_stream_moved(id, read.unwrap_or(0), true, read.is_none());
        Ok(read)
    }

    /// Read without copying: the next in-order chunk of at most `max` bytes (`max > 0`; a
    /// slice of a received datagram), `Ok(None)` at the end of the stream.
    pub fn read_chunk(&mut self, id: StreamId, max: usize) -> Result<Option<Bytes>, ReadError> {
        let chunk = self.streams.read_chunk(id, max.max(1))?;
        let n = chunk.as_ref().map_or(0, Bytes::len);
        self.qlog_stream_moved(id, n, true, chunk.is_none());
        Ok(chunk)
    }

    /// Ask the peer to stop sending on a stream (STOP_SENDING).
    pub fn stop_sending(&mut self, id: StreamId, error_code: u64) -> Result<(), ReadError> {
        self.streams.stop_sending(id, error_code)
    }

    /// Close the connection with an application error code (RFC 9000 §10.2, frame 0x1d).
    pub fn close(&mut self, now: Timestamp, error_code: u64, reason: Bytes) {
        if self.is_closed() {
            return;
        }
        self.error = Some(ConnectionError::LocallyClosed { code: error_code });
        self.enter_closing(now, error_code, None, reason);
        self.qlog_sync(now);
    }

    /// Statistics of every path (including abandoned ones still in their closing period).
    pub fn path_stats(&self) -> Vec<PathStats> {
        self.paths
            .values()
            .map(|p| {
                let mut stats = p.stats();
                if !self.config.ecn {
                    stats.ecn.state = crate::ecn::EcnState::Disabled;
                }
                stats
            })
            .collect()
    }

    /// The addresses of the server's `preferred_address` transport parameter (RFC 9000 §18.2;
    /// IPv4 first), empty on a server or when the server advertised none. Nothing migrates by
    /// itself: a client may open a path to one (RFC 10069: allowed even under
    /// disable_active_migration), but cannot assume that it and the initial address work at
    /// the same time.
    pub fn peer_preferred_address(&self) -> Vec<std::net::SocketAddr> {
        let Some(pa) = self
            .peer_params
            .as_ref()
            .and_then(|p| p.preferred_address.as_ref())
            .filter(|_| self.side.is_client())
        else {
            return Vec::new();
        };
        let v4 = pa.address_v4.map(std::net::SocketAddr::V4);
        let v6 = pa.address_v6.map(std::net::SocketAddr::V6);
        v4.into_iter().chain(v6).collect()
    }

    /// The negotiated ALPN protocol.
    pub fn alpn_protocol(&self) -> Option<Vec<u8>> {
        self.tls.alpn_protocol().map(|a| a.to_vec())
    }

    /// The SNI the client asked for (server side).
    pub fn server_name(&self) -> Option<String> {
        self.tls.server_name().map(str::to_string)
    }

    /// The certificate chain the peer presented (end-entity first), once received; None for a
    /// client that presented none.
    pub fn peer_certificates(&self) -> Option<Vec<rustls_pki_types::CertificateDer<'static>>> {
        self.tls.peer_certificates().map(<[_]>::to_vec)
    }

    /// The TLS 1.3 cipher suite the handshake negotiated, once known.
    pub fn negotiated_cipher_suite(&self) -> Option<rustls::SupportedCipherSuite> {
        self.tls.negotiated_cipher_suite()
    }

    /// Whether all data written to `id` has been acknowledged... exposed through
    /// `StreamEvent::Finished`; this helper reports whether any stream data awaits sending.
    pub fn has_pending_stream_data(&self) -> bool {
        self.streams.has_pending_data()
    }

    /// Whether the connection is still sending or waiting for acknowledgements.
    pub fn is_idle(&self) -> bool {
        !self.streams.has_pending_data()
            && !self.has_pending_datagrams()
            && self.paths.values().all(|p| p.bytes_in_flight() == 0)
    }

    pub(crate) fn push_path_event(&mut self, event: PathEvent) {
        self.events.push_back(Event::Path(event));
    }

    /// Whether we are in the closing or draining state and should not send anything but close frames.
    pub(crate) fn state_allows_data(&self) -> bool {
        matches!(self.state, State::Handshaking | State::Established)
    }
}
