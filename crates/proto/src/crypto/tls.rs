//! The TLS 1.3 handshake of QUIC (RFC 9001 §4), wrapping `rustls::quic::Connection`.
//!
//! # Calling protocol
//!
//! 1. Create the session ([`TlsSession::new_client`] / [`TlsSession::new_server`]) and install
//!    [`super::initial_keys`] for the Initial epoch yourself (rustls does not produce them).
//! 2. After creating the session and after every [`TlsSession::read_handshake`], call
//!    [`TlsSession::write_handshake`] and process its outputs **in order**:
//!    `Data(epoch, bytes)` → append `bytes` to the CRYPTO stream of `epoch` (RFC 9001 §4.1.3);
//!    `HandshakeKeys(keys)` → install Handshake keys; `OneRttKeys(keys)` → install 1-RTT keys.
//!    Data chunks are tagged with the epoch rustls wrote them for (bytes written before a key
//!    change belong to the old level, RFC 9001 §4.1.4), so the order of the list is the order of
//!    the level changes.
//! 3. Feed received CRYPTO frame data, reassembled in order per epoch, to
//!    [`TlsSession::read_handshake_at`] (or `read_handshake`), one epoch per call ("Handshake
//!    data obtained from separate encryption levels should be supplied in separate calls").
//!    The epoch check of `read_handshake_at` implements RFC 9001 §4.1.3: data at an unexpected
//!    level is a PROTOCOL_VIOLATION.
//! 4. [`TlsSession::is_handshaking`] turning false is "handshake complete" (RFC 9001 §4.1.1).
//!    A server must not process 1-RTT packets before that, although it gets its 1-RTT keys
//!    earlier (RFC 9001 §5.7).

use std::fmt;
use std::sync::Arc;

use mpquic_wire::error::TransportErrorCode;
use rustls::quic::{ClientConnection, Connection, KeyChange, ServerConnection, Version};
use rustls_pki_types::{CertificateDer, ServerName};

use super::{CryptoError, Epoch, KeyPair, OneRttKeys, Side};
use crate::TransportError;

/// One step of the handshake's output, in the order the caller must apply them.
#[derive(Debug)]
pub(crate) enum HandshakeOutput {
    /// Handshake bytes to send in CRYPTO frames of this epoch.
    Data(Epoch, Vec<u8>),
    /// The Handshake keys: install them now; later `Data` belongs to the Handshake epoch.
    HandshakeKeys(KeyPair),
    /// The 1-RTT keys: install them now; later `Data` belongs to the 1-RTT epoch.
    OneRttKeys(OneRttKeys),
}

/// What is kept of a server's TLS session once its handshake is over (see
/// [`TlsSession::release`]).
struct Finished {
    alpn: Option<Vec<u8>>,
    server_name: Option<String>,
    peer_certificates: Option<Vec<CertificateDer<'static>>>,
    cipher_suite: Option<rustls::SupportedCipherSuite>,
}

/// The rustls connection while it is needed, then only what the application may still ask.
enum Session {
    Live(Box<Connection>),
    Finished(Box<Finished>),
}

/// A QUIC v1 TLS session (client or server).
pub(crate) struct TlsSession {
    session: Session,
    side: Side,
    /// The epoch rustls is writing handshake data for.
    write_epoch: Epoch,
    /// Handshake keys were handed out: the peer now sends at the Handshake level.
    handshake_keys_out: bool,
    /// Output taken from rustls but not yet returned by `write_handshake`.
    pending: Vec<HandshakeOutput>,
}

impl TlsSession {
    /// A client session for QUIC v1 (RFC 9001) with our encoded `transport_params` (RFC 9001
    /// §8.2). `config` must allow TLS 1.3 (RFC 9001 §4.2) and set ALPN protocols (RFC 9001 §8.1:
    /// "endpoints MUST use ALPN").
    pub(crate) fn new_client(
        config: Arc<rustls::ClientConfig>,
        server_name: &str,
        transport_params: Vec<u8>,
    ) -> Result<Self, CryptoError> {
        if config.alpn_protocols.is_empty() {
            return Err(CryptoError::InvalidConfig(
                "QUIC requires ALPN (RFC 9001 §8.1)",
            ));
        }
        let name = ServerName::try_from(server_name.to_owned())
            .map_err(|_| CryptoError::InvalidServerName(server_name.to_owned()))?;
        let conn = ClientConnection::new(config, Version::V1, name, transport_params)?;
        Ok(Self::wrap(conn.into(), Side::Client))
    }

    /// A server session for QUIC v1 with our encoded `transport_params`. `config` must allow
    /// TLS 1.3 and should set ALPN protocols (rustls then closes with no_application_protocol,
    /// 0x178, when there is no overlap, RFC 9001 §8.1).
    pub(crate) fn new_server(
        config: Arc<rustls::ServerConfig>,
        transport_params: Vec<u8>,
    ) -> Result<Self, CryptoError> {
        let conn = ServerConnection::new(config, Version::V1, transport_params)?;
        Ok(Self::wrap(conn.into(), Side::Server))
    }

    fn wrap(conn: Connection, side: Side) -> Self {
        let mut session = Self {
            session: Session::Live(Box::new(conn)),
            side,
            write_epoch: Epoch::Initial,
            handshake_keys_out: false,
            pending: Vec::new(),
        };
        session.drain();
        session
    }

    /// Takes everything rustls has to write, tagging each chunk with its epoch.
    ///
    /// `write_hs` appends the messages of the current level and returns `Some(KeyChange)` when
    /// the level changes: the bytes appended in that same call still belong to the old level, and
    /// later ones to the new level. Draining right after every `read_hs` keeps rustls' queue from
    /// ever holding messages of two levels beyond a single key change.
    fn drain(&mut self) {
        loop {
            let Session::Live(conn) = &mut self.session else {
                return;
            };
            let mut buf = Vec::new();
            let change = conn.write_hs(&mut buf);
            if !buf.is_empty() {
                self.push_data(self.write_epoch, buf);
            }
            match change {
                None => break,
                Some(KeyChange::Handshake { keys }) => {
                    self.write_epoch = Epoch::Handshake;
                    self.handshake_keys_out = true;
                    self.pending
                        .push(HandshakeOutput::HandshakeKeys(keys.into()));
                }
                Some(KeyChange::OneRtt { keys, next }) => {
                    self.write_epoch = Epoch::Data;
                    self.pending
                        .push(HandshakeOutput::OneRttKeys(OneRttKeys::new(keys, next)));
                }
            }
        }
    }

    fn push_data(&mut self, epoch: Epoch, bytes: Vec<u8>) {
        if let Some(HandshakeOutput::Data(last, data)) = self.pending.last_mut() {
            if *last == epoch {
                data.extend_from_slice(&bytes);
                return;
            }
        }
        self.pending.push(HandshakeOutput::Data(epoch, bytes));
    }

    /// Feeds in-order CRYPTO stream data of one epoch to TLS (RFC 9001 §4.1.3).
    ///
    /// Errors: a TLS alert becomes CRYPTO_ERROR 0x100 + alert (RFC 9001 §4.8), a local failure
    /// (e.g. no randomness) INTERNAL_ERROR, anything else PROTOCOL_VIOLATION. After an error the
    /// session is dead: close the connection with the returned error.
    pub(crate) fn read_handshake(&mut self, data: &[u8]) -> Result<(), TransportError> {
        let Session::Live(conn) = &mut self.session else {
            // RFC 9001 §4.1.3: after the handshake an endpoint MAY discard CRYPTO data it does
            // not keep state for; a released server session has no use for any.
            return Ok(());
        };
        if let Err(e) = conn.read_hs(data) {
            return Err(self.map_error(e));
        }
        self.drain();
        Ok(())
    }

    /// [`Self::read_handshake`] after checking that `epoch` is the level at which the peer's
    /// handshake data is expected now ([`Self::read_epoch`]); RFC 9001 §4.1.3: "If an endpoint
    /// receives data at an unexpected level, it MUST treat it as a connection error of type
    /// PROTOCOL_VIOLATION". Empty data is accepted at any epoch.
    pub(crate) fn read_handshake_at(
        &mut self,
        epoch: Epoch,
        data: &[u8],
    ) -> Result<(), TransportError> {
        if data.is_empty() {
            return Ok(());
        }
        let expected = self.read_epoch();
        if epoch != expected {
            return Err(TransportError::protocol_violation(format!(
                "TLS handshake data at {epoch} level, expected {expected}"
            )));
        }
        self.read_handshake(data)
    }

    /// The level the peer's next handshake data must arrive at: Initial until the Handshake keys
    /// exist, then Handshake until the handshake completes, then 1-RTT (post-handshake messages
    /// such as NewSessionTicket, RFC 9001 §4.1.3).
    pub(crate) fn read_epoch(&self) -> Epoch {
        if !self.is_handshaking() {
            Epoch::Data
        } else if self.handshake_keys_out {
            Epoch::Handshake
        } else {
            Epoch::Initial
        }
    }

    fn map_error(&self, e: rustls::Error) -> TransportError {
        let alert = match &self.session {
            Session::Live(conn) => conn.alert(),
            Session::Finished(_) => None,
        };
        if let Some(alert) = alert {
            let code = TransportErrorCode::crypto(u8::from(alert));
            return TransportError::new(code, format!("TLS alert {alert:?}: {e}"));
        }
        match e {
            rustls::Error::General(_)
            | rustls::Error::Other(_)
            | rustls::Error::FailedToGetCurrentTime
            | rustls::Error::FailedToGetRandomBytes
            | rustls::Error::EncryptError => TransportError::internal(format!("TLS: {e}")),
            _ => TransportError::protocol_violation(format!("TLS: {e}")),
        }
    }

    /// Everything TLS produced since the last call, in order (see the module documentation).
    pub(crate) fn write_handshake(&mut self) -> Vec<HandshakeOutput> {
        self.drain();
        std::mem::take(&mut self.pending)
    }

    /// True until the handshake is complete (RFC 9001 §4.1.1: Finished sent and the peer's
    /// Finished verified).
    pub(crate) fn is_handshaking(&self) -> bool {
        match &self.session {
            Session::Live(conn) => conn.is_handshaking(),
            Session::Finished(_) => false,
        }
    }

    /// Server, handshake complete: drop the rustls connection (its buffers and handshake state
    /// are most of an idle connection's memory) and keep only what the application may still
    /// ask. Output not yet taken stays queued. Clients keep theirs for post-handshake messages
    /// (NewSessionTicket, RFC 9001 §4.1.3); key updates need only the 1-RTT secrets, which
    /// [`OneRttKeys`] holds.
    pub(crate) fn release(&mut self) {
        if self.side != Side::Server || self.is_handshaking() {
            return;
        }
        self.drain();
        let Session::Live(conn) = &self.session else {
            return;
        };
        let server_name = match conn.as_ref() {
            Connection::Server(s) => s.server_name().map(str::to_owned),
            Connection::Client(_) => None,
        };
        let finished = Finished {
            alpn: conn.alpn_protocol().map(<[u8]>::to_vec),
            server_name,
            peer_certificates: conn.peer_certificates().map(<[_]>::to_vec),
            cipher_suite: conn.negotiated_cipher_suite(),
        };
        self.session = Session::Finished(Box::new(finished));
    }

    /// The peer's encoded transport parameters (RFC 9001 §8.2), once received. Available before
    /// the handshake completes but only authenticated after (RFC 9001 §8.2).
    pub(crate) fn peer_transport_params(&self) -> Option<&[u8]> {
        match &self.session {
            Session::Live(conn) => conn.quic_transport_parameters(),
            // Read (and checked) when the handshake completed, before the release.
            Session::Finished(_) => None,
        }
    }

    /// The 0-RTT keys (RFC 9001 §4.6.1, §5.1): on a client, right after creation when rustls
    /// offered a ticket allowing early data (`ClientConfig::enable_early_data`); on a server,
    /// after the ClientHello when it accepted early data (rustls clears them on rejection).
    pub(crate) fn zero_rtt_keys(&self) -> Option<super::DirectionalKeys> {
        match &self.session {
            Session::Live(conn) => conn.zero_rtt_keys().map(Into::into),
            Session::Finished(_) => None,
        }
    }

    /// Client: whether the server accepted early data (RFC 9001 §4.6.2: known from its
    /// EncryptedExtensions, so meaningful once the handshake is complete). None on a server.
    pub(crate) fn early_data_accepted(&self) -> Option<bool> {
        match &self.session {
            Session::Live(conn) => match conn.as_ref() {
                Connection::Client(c) => Some(c.is_early_data_accepted()),
                Connection::Server(_) => None,
            },
            Session::Finished(_) => None,
        }
    }

    /// The negotiated ALPN protocol (RFC 9001 §8.1).
    pub(crate) fn alpn_protocol(&self) -> Option<&[u8]> {
        match &self.session {
            Session::Live(conn) => conn.alpn_protocol(),
            Session::Finished(f) => f.alpn.as_deref(),
        }
    }

    /// Our role.
    #[cfg(test)]
    pub(crate) fn side(&self) -> Side {
        self.side
    }

    /// The SNI the client sent (server side only; `None` on a client or before ClientHello).
    pub(crate) fn server_name(&self) -> Option<&str> {
        match &self.session {
            Session::Live(conn) => match conn.as_ref() {
                Connection::Server(s) => s.server_name(),
                Connection::Client(_) => None,
            },
            Session::Finished(f) => f.server_name.as_deref(),
        }
    }

    /// The peer's certificate chain, once received.
    pub(crate) fn peer_certificates(&self) -> Option<&[CertificateDer<'static>]> {
        match &self.session {
            Session::Live(conn) => conn.peer_certificates(),
            Session::Finished(f) => f.peer_certificates.as_deref(),
        }
    }

    /// The negotiated TLS 1.3 cipher suite, once known.
    pub(crate) fn negotiated_cipher_suite(&self) -> Option<rustls::SupportedCipherSuite> {
        match &self.session {
            Session::Live(conn) => conn.negotiated_cipher_suite(),
            Session::Finished(f) => f.cipher_suite,
        }
    }
}

impl fmt::Debug for TlsSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsSession")
            .field("side", &self.side)
            .field("write_epoch", &self.write_epoch)
            .field("handshaking", &self.is_handshaking())
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[path = "tls_tests.rs"]
pub(crate) mod tests;
