//! A QUIC connection: a dispatcher over the handshake, receive, send, timer, path and CID
//! modules. Sans-IO: datagrams go in through [`Connection::handle_datagram`], out through
//! [`Connection::poll_transmit`], time through [`Connection::handle_timeout`].

mod ack_frequency;
mod ack_recv;
mod ack_send;
mod api;
mod close;
mod datagrams;
mod ecn;
mod frames;
mod handshake;
mod handshake_state;
mod keys;
mod loss;
mod migration;
mod mtu;
mod path_ids;
mod paths;
mod pn_len;
mod recv;
mod redundant;
mod send;
mod stats;
mod timers;
mod tokens;
mod views;
mod xlink;
mod zero_rtt;

pub(crate) use zero_rtt::{remembered_limits, REMEMBERED_LIMITS};

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use mpquic_wire::cid::{ConnectionId, ResetToken};
use mpquic_wire::stream_id::Side;
use mpquic_wire::transport_params::TransportParameters;
use rand_chacha::ChaCha20Rng;

pub use datagrams::{DatagramStats, SendDatagramError};
pub(crate) use handshake::random_cid;
pub use handshake::ConnectError;
pub(crate) use handshake::{ConnectionParams, ResetKey, ServerAccept};
pub use stats::ConnectionStats;
pub use xlink::QoeReport;

use crate::cid::{LocalCids, RemoteCids};
use crate::config::TransportConfig;
use crate::crypto::TlsSession;
use crate::path::{Path, PathId};
use crate::scheduler::Scheduler;
use crate::small_map::SmallMap;
use crate::space::{ReceiveRecord, SendSpace, SpaceId, SpaceLayout};
use crate::streams::{Assembler, SendBuffer, Streams};
use crate::time::Timestamp;

pub use api::{ConnectionError, Event, PathError, PathEvent};

/// One outgoing datagram, written into the caller's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    /// The local address to send from.
    pub local: SocketAddr,
    /// The peer address to send to.
    pub remote: SocketAddr,
    /// Bytes of the datagram written into the buffer.
    pub size: usize,
    /// ECN codepoint for the IP header (RFC 9000 §13.4.2: ECT(0) while the path's ECN
    /// validation is testing or capable); None = Not-ECT.
    pub ecn: Option<crate::ecn::EcnCodepoint>,
}

/// What the endpoint must learn from a connection (CID routing, teardown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EndpointEvent {
    /// Route packets with this destination CID to this connection and path.
    NewCid {
        cid: ConnectionId,
        path: PathId,
        reset_token: ResetToken,
    },
    /// Stop routing this CID.
    RetireCid(ConnectionId),
    /// The peer issued this stateless reset token (RFC 9000 §10.3.1): a datagram ending in it
    /// that no CID routes belongs to this connection.
    PeerResetToken(ResetToken),
    /// The connection is gone; release everything.
    Drained,
}

/// A datagram held back until the handshake completes (see `Connection::early_datagrams`).
#[derive(Debug)]
pub(crate) struct EarlyDatagram {
    local: SocketAddr,
    remote: SocketAddr,
    first: mpquic_wire::header::PartialDecode,
    path_hint: Option<PathId>,
    ecn: Option<crate::ecn::EcnCodepoint>,
}

/// Life cycle (RFC 9000 §10).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum State {
    Handshaking,
    Established,
    /// We sent CONNECTION_CLOSE; resend it on receipt until `until` (RFC 9000 §10.2.1).
    Closing {
        until: Timestamp,
        frame: Bytes,
        resend: bool,
    },
    /// The peer closed; stay silent until `until` (RFC 9000 §10.2.2).
    Draining {
        until: Timestamp,
    },
    Drained,
}

/// CRYPTO stream of one encryption level.
#[derive(Debug, Default)]
pub(crate) struct CryptoStream {
    pub send: SendBuffer,
    pub recv: Assembler,
    /// Offset up to which received data was handed to TLS.
    pub read_offset: u64,
}

impl Connection {
    /// The CRYPTO stream of `epoch`, made on first use.
    fn crypto_mut(&mut self, epoch: crate::crypto::Epoch) -> &mut CryptoStream {
        self.crypto[epoch.index()].get_or_insert_with(Box::default)
    }

    /// Whether no packet is outstanding on any path: the connection may stay idle for long
    /// now, so scratch buffers go (issue 19, memory per idle connection).
    fn nothing_outstanding(&self) -> bool {
        self.paths.values().all(|p| p.ledgers.all_empty())
    }

    /// Whether `epoch`'s CRYPTO stream has data to send.
    fn crypto_pending(&self, epoch: crate::crypto::Epoch) -> bool {
        self.crypto[epoch.index()]
            .as_ref()
            .is_some_and(|c| c.send.has_pending())
    }
}

/// The connection's random generator, kept as its seed and position: the same numbers as a
/// `ChaCha20Rng` held in the connection, in 48 bytes instead of 320 (the generator's block
/// buffer), since it is drawn from a few times per connection (issue 19, memory per idle
/// connection).
#[derive(Debug, Clone)]
pub(crate) struct ConnRng {
    seed: [u8; 32],
    word_pos: u128,
}

impl ConnRng {
    /// Continues where `rng` is (its seed and position; stream 0).
    pub(crate) fn continuing(rng: &ChaCha20Rng) -> Self {
        debug_assert_eq!(rng.get_stream(), 0);
        Self {
            seed: rng.get_seed(),
            word_pos: rng.get_word_pos(),
        }
    }

    /// Runs `f` with the generator at the current position, then keeps the new position.
    pub(crate) fn with<R>(&mut self, f: impl FnOnce(&mut ChaCha20Rng) -> R) -> R {
        let mut rng = <ChaCha20Rng as rand_core::SeedableRng>::from_seed(self.seed);
        rng.set_word_pos(self.word_pos);
        let out = f(&mut rng);
        self.word_pos = rng.get_word_pos();
        out
    }
}

/// Buffers `on_ack_frame` reuses from one ACK frame to the next (always left empty).
#[derive(Debug, Default)]
pub(crate) struct AckScratch {
    pub(crate) acked: Vec<(u64, crate::path::PathId, u64)>,
    pub(crate) spurious: Vec<crate::space::SpuriousLoss>,
    pub(crate) seqs: Vec<u64>,
    pub(crate) outcomes: Vec<(crate::path::PathId, crate::recovery::AckedOutcome)>,
    /// Paths that took an RTT sample from the ACK frame being processed.
    pub(crate) sampled: Vec<crate::path::PathId>,
    /// Emptied packet lists of earlier outcomes, reused for the next ones.
    pub(crate) spare_packets: Vec<Vec<crate::recovery::SentPacket>>,
    /// The paths with newly acknowledged packets, and those without that may have losses.
    pub(crate) acked_paths: Vec<crate::path::PathId>,
    pub(crate) unacked_paths: Vec<crate::path::PathId>,
    /// Each path's share of the frame and the RTT samples planned from them.
    pub(crate) shares: Vec<crate::recovery::sampling::PathAcked>,
    pub(crate) planned: Vec<crate::recovery::sampling::PlannedSample>,
    /// The paths' coupling states handed to a controller.
    pub(crate) coupling: Vec<crate::cc::CouplingState>,
}

/// A QUIC connection.
pub struct Connection {
    pub(crate) side: Side,
    pub(crate) config: Arc<TransportConfig>,
    pub(crate) state: State,
    pub(crate) error: Option<ConnectionError>,
    tls: TlsSession,
    /// Packet protection keys of every level and 1-RTT key update state (RFC 9001 §4, §6).
    pub(crate) keys: keys::Keys,
    /// What the endpoint's sockets allow for path MTU discovery (each new path's [`Mtud`]).
    ///
    /// [`Mtud`]: crate::mtud::Mtud
    socket_mtu: crate::mtud::SocketMtu,
    /// One CRYPTO stream per encryption level, made on first use and dropped with the level's
    /// keys: an established connection rarely has any (issue 19, memory per idle connection).
    crypto: [Option<Box<CryptoStream>>; 3],
    // Per-path and per-space state lives in `SmallMap`s (a vector sorted by key: these maps
    // hold a few entries and are looked up dozens of times per packet; docs/PERFORMANCE.md,
    // "Simulator speed"). Their large values are boxed so that an insertion moves pointers,
    // and so that the maps' spare capacity holds no unused `Path`s (docs/PERFORMANCE.md,
    // "Memory").
    send_spaces: SmallMap<SpaceId, Box<SendSpace>>,
    records: SmallMap<SpaceId, Box<ReceiveRecord>>,
    pub(crate) layout: Box<dyn SpaceLayout>,
    pub(crate) paths: SmallMap<PathId, Box<Path>>,
    pub(crate) local_cids: SmallMap<PathId, LocalCids>,
    pub(crate) remote_cids: SmallMap<PathId, RemoteCids>,
    streams: Streams,
    scheduler: Box<dyn Scheduler>,
    events: VecDeque<Event>,
    endpoint_events: VecDeque<EndpointEvent>,
    /// Handshake CIDs and tokens, completion and confirmation flags (RFC 9000 §7.3, §8.1).
    pub(crate) handshake: handshake_state::HandshakeState,
    /// ACK_FREQUENCY requests both ways (draft-ietf-quic-ack-frequency).
    ack_frequency: ack_frequency::AckFrequencyState,
    rng: ConnRng,
    pub(crate) local_params: TransportParameters,
    pub(crate) peer_params: Option<TransportParameters>,
    /// Time of the last activity for the idle timeout (RFC 9000 §10.1).
    idle_since: Timestamp,
    /// Path ID limits of both sides (RFC 10069 §2.1).
    path_ids: path_ids::PathIdLimits,
    /// Time of the earliest pacing release among paths blocked only by pacing.
    pacing_wakeup: Option<Timestamp>,
    stats: ConnectionStats,
    cid_len: usize,
    reset_key: handshake::ResetKey,
    /// Round-robin cursor over paths for urgent, path-specific frames.
    next_urgent_path: PathId,
    /// Some path may owe a probe sent apart from its other packets: an off-path PATH_RESPONSE
    /// or a server's challenge from its preferred address (`send_probe_elsewhere`). Spares
    /// every `poll_transmit` a scan of the paths.
    probes_elsewhere: bool,
    /// 1-RTT packets sent with only ACK frames since the last ack-eliciting one.
    ack_only_packets: u32,
    /// A server's 1-RTT datagrams that arrived before its handshake completed (RFC 9001 §5.7),
    /// processed once it completes.
    early_datagrams: Vec<EarlyDatagram>,
    /// Reused buffer for assembling one packet.
    scratch: Vec<u8>,
    /// Reused buffer for the scheduler's per-path views (see `path_views`).
    views_buf: Vec<crate::scheduler::PathView>,
    /// Reused buffers of ACK frame processing (`on_ack_frame`).
    /// `None` while nothing is outstanding (see `on_ack_frame`).
    ack_scratch: Option<Box<AckScratch>>,
    /// Raw frame bytes queued by tests to exercise the peer's error handling.
    raw_frames: Vec<Vec<u8>>,
    /// Copies of the redundant scheduler's packets still to send (`redundant.rs`); allocated
    /// by the first copy.
    copies: Option<Box<redundant::PendingCopies>>,
    /// Re-injection policy (XLINK) of this sender.
    reinjection: Box<dyn crate::reinjection::ReinjectionPolicy>,
    /// QoE feedback: negotiated, our next sequence, frames to send, the peer's latest report.
    qoe: xlink::QoeState,
    /// qlog sink and what it was last told; None when not logging.
    pub(crate) qlog: Option<Box<crate::qlog::Qlog>>,
    /// DATAGRAM queues (RFC 9221), both directions.
    datagrams: datagrams::DatagramState,
    /// 0-RTT keys, remembered parameters and outcome (`zero_rtt.rs`).
    zero_rtt: zero_rtt::ZeroRttState,
    /// ECN codepoint of the datagram being processed (RFC 9000 §13.4.1).
    pub(crate) rx_ecn: Option<crate::ecn::EcnCodepoint>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("side", &self.side)
            .field("state", &self.state)
            .field("layout", &self.layout)
            .field("paths", &self.paths.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Whether this is the client or the server.
    pub fn side(&self) -> Side {
        self.side
    }

    /// True once the handshake has completed (RFC 9001 §4.1.1).
    pub fn is_established(&self) -> bool {
        matches!(self.state, State::Established)
    }

    /// True when nothing is left of the connection (after closing, draining or idle timeout).
    pub fn is_drained(&self) -> bool {
        matches!(self.state, State::Drained)
    }

    /// True once the connection is closing, draining or drained.
    pub fn is_closed(&self) -> bool {
        matches!(
            self.state,
            State::Closing { .. } | State::Draining { .. } | State::Drained
        )
    }

    /// Why the connection ended, once it has.
    pub fn error(&self) -> Option<&ConnectionError> {
        self.error.as_ref()
    }

    /// Take the next event for the endpoint (CID routing).
    pub fn poll_endpoint_event(&mut self) -> Option<EndpointEvent> {
        let event = self.endpoint_events.pop_front();
        if event.is_none() && self.endpoint_events.capacity() > 0 {
            // Events are rare (CIDs, tokens, teardown): an idle connection keeps no queue.
            self.endpoint_events = VecDeque::new();
        }
        event
    }

    pub(crate) fn max_ack_delay(&self) -> crate::time::Duration {
        self.ack_frequency
            .peer()
            .max_ack_delay(self.config.ack.max_ack_delay())
    }

    /// The peer's max_ack_delay (RFC 9000 §18.2), or the default before its parameters arrive.
    pub(crate) fn peer_max_ack_delay(&self) -> crate::time::Duration {
        let ms = self.peer_params.as_ref().map_or(25, |p| p.max_ack_delay_ms);
        let advertised = crate::time::Duration::from_millis(ms);
        // Once we asked for another max_ack_delay (ACK_FREQUENCY), the larger of the two until
        // we know which one the peer uses (draft-ietf-quic-ack-frequency §"Computation of
        // Probe Timeout Period").
        match (
            self.ack_frequency.has_requested(),
            self.config.ack.request_ack_frequency,
        ) {
            (true, Some(r)) => {
                advertised.max(crate::time::Duration::from_micros(r.max_ack_delay_us))
            }
            _ => advertised,
        }
    }

    /// Testing hook: send these bytes as-is in the next 1-RTT packet (to check how the peer
    /// handles malformed or forbidden frames). Only with the `testing` feature.
    #[cfg(any(test, feature = "testing"))]
    pub fn inject_raw_frame(&mut self, bytes: Vec<u8>) {
        self.raw_frames.push(bytes);
    }

    pub(crate) fn send_space(&mut self, space: SpaceId) -> &mut SendSpace {
        self.send_spaces.entry(space).or_default()
    }

    pub(crate) fn record(&mut self, space: SpaceId) -> &mut ReceiveRecord {
        self.records.entry(space).or_default()
    }
}
