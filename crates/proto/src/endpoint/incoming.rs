//! The application's decision on a new connection (quinn's `Incoming`): with
//! [`Endpoint::set_incoming_decisions`] a verified client Initial is not turned into a
//! connection at once but handed out as an [`Incoming`], which the application accepts,
//! refuses (CONNECTION_REFUSED, RFC 9000 §20.1), answers with a Retry (address validation,
//! RFC 9000 §8.1.2) or ignores.
//!
//! Nothing is kept for an Initial whose packet protection does not verify (`accept.rs` drops
//! it before this point). While a decision is pending the endpoint keeps the Initial itself
//! (inside the [`Incoming`]) and, for the datagrams the client sends meanwhile with the same
//! Destination CID (Initial retransmissions, 0-RTT), a small bounded buffer; pending decisions
//! count against `max_handshakes`, so the state is bounded like handshakes are.

use std::net::SocketAddr;

use bytes::BytesMut;
use mpquic_wire::cid::ConnectionId;
use mpquic_wire::error::TransportErrorCode;
use mpquic_wire::header::PartialDecode;

use super::{ConnectionHandle, Endpoint};
use crate::crypto::KeyPair;
use crate::ecn::EcnCodepoint;
use crate::error::TransportError;
use crate::time::Timestamp;
use crate::token::ValidToken;

/// Datagrams buffered per pending decision (with the same Destination CID as the Initial):
/// enough for a ClientHello spread over a few datagrams and the first 0-RTT packets; more are
/// dropped and the client retransmits them once the connection exists.
const MAX_BUFFERED_PER_INCOMING: usize = 8;

/// A received client datagram, split at its first packet.
#[derive(Debug)]
pub(super) struct InitialDatagram {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub ecn: Option<EcnCodepoint>,
    pub first: PartialDecode,
    pub rest: Option<BytesMut>,
}

/// A client's first Initial waiting for the application's decision. Give it back to the
/// endpoint that produced it through exactly one of [`Endpoint::accept_incoming`],
/// [`Endpoint::refuse_incoming`], [`Endpoint::retry_incoming`] or
/// [`Endpoint::ignore_incoming`].
#[derive(Debug)]
pub struct Incoming {
    initial: InitialDatagram,
    /// The Initial keys the packet was verified with (RFC 9001 §5.2), kept for the
    /// connection or the refusal: deriving them again costs an HKDF extract and six expands.
    keys: KeyPair,
    validated: Option<ValidToken>,
    scid: ConnectionId,
    received_at: Timestamp,
}

impl Incoming {
    /// The client's address.
    pub fn remote_address(&self) -> SocketAddr {
        self.initial.remote
    }

    /// Our address the Initial arrived on.
    pub fn local_address(&self) -> SocketAddr {
        self.initial.local
    }

    /// Whether the client proved it receives at its address: its Initial carried a valid
    /// token, from our Retry or from a NEW_TOKEN frame of an earlier connection (RFC 9000
    /// §8.1.2, §8.1.3). A validated client cannot be sent another Retry.
    pub fn remote_address_validated(&self) -> bool {
        self.validated.is_some()
    }

    /// Whether [`Endpoint::retry_incoming`] may be used (the address is not validated yet).
    pub fn may_retry(&self) -> bool {
        self.validated.is_none()
    }

    /// When the Initial arrived.
    pub fn received_at(&self) -> Timestamp {
        self.received_at
    }

    fn dcid(&self) -> ConnectionId {
        self.initial.first.dcid()
    }
}

/// [`Endpoint::retry_incoming`] on a client whose address is already validated (RFC 9000
/// §8.1.2 allows one Retry per connection attempt); the [`Incoming`] is given back.
#[derive(Debug, thiserror::Error)]
#[error("the client's address is already validated: it cannot be sent another Retry")]
pub struct RetryError(
    /// The attempt, to accept, refuse or ignore instead.
    pub Box<Incoming>,
);

/// Why [`Endpoint::accept_incoming`] did not create a connection.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AcceptError {
    /// The endpoint no longer has a server configuration.
    #[error("the endpoint no longer accepts connections")]
    NotServing,
    /// The connection limit was reached since the Initial arrived; the client was refused.
    #[error("connection limit reached: the client was refused")]
    Refused,
    /// The core could not create the connection (its Initial did not parse as a ClientHello).
    #[error("the client's Initial could not start a connection")]
    Invalid,
}

impl Endpoint {
    /// Hand client Initials to the application as [`Incoming`]s (see
    /// [`Endpoint::poll_incoming`]) instead of accepting them at once. The server
    /// configuration's limits and [`crate::RetryPolicy`] still apply first: an Initial the
    /// endpoint refuses or answers with a Retry on its own is never handed out.
    pub fn set_incoming_decisions(&mut self, on: bool) {
        self.incoming_decisions = on;
    }

    /// The next client Initial waiting for a decision.
    pub fn poll_incoming(&mut self) -> Option<Incoming> {
        self.incoming_queue.pop_front()
    }

    /// Incoming connection attempts waiting for a decision (handed out or not).
    pub fn pending_incoming(&self) -> usize {
        self.pending.len()
    }

    pub(super) fn hand_to_application(
        &mut self,
        now: Timestamp,
        (initial, keys): (InitialDatagram, KeyPair),
        validated: Option<ValidToken>,
        scid: ConnectionId,
    ) {
        self.pending.insert(initial.first.dcid(), Vec::new());
        self.incoming_queue.push_back(Incoming {
            initial,
            keys,
            validated,
            scid,
            received_at: now,
        });
    }

    /// Keep a datagram for a pending decision (its Destination CID is one).
    pub(super) fn buffer_for_pending(&mut self, datagram: InitialDatagram) {
        if let Some(buffer) = self.pending.get_mut(&datagram.first.dcid()) {
            if buffer.len() < MAX_BUFFERED_PER_INCOMING {
                buffer.push(datagram);
            }
        }
    }

    /// Create the connection: the Initial and the datagrams buffered meanwhile go to it.
    pub fn accept_incoming(
        &mut self,
        now: Timestamp,
        incoming: Incoming,
    ) -> Result<ConnectionHandle, AcceptError> {
        let dcid = incoming.dcid();
        let buffered = self.pending.remove(&dcid).unwrap_or_default();
        let Some(server) = self.server_config.clone() else {
            return Err(AcceptError::NotServing);
        };
        if self.open >= server.max_connections {
            self.refuse_incoming(incoming);
            return Err(AcceptError::Refused);
        }
        let Incoming {
            initial,
            keys,
            validated,
            scid,
            ..
        } = incoming;
        let handle = self
            .establish(now, &server, (initial, keys), validated, scid)
            .ok_or(AcceptError::Invalid)?;
        for d in buffered {
            if let Some(entry) = self.connections.get_mut(&handle) {
                entry.conn.rx_ecn = d.ecn;
                entry.conn.handle_datagram(
                    now,
                    d.local,
                    d.remote,
                    d.first,
                    d.rest,
                    Some(crate::path::PathId::ZERO),
                );
                entry.conn.rx_ecn = None;
            }
        }
        self.sync(handle);
        Ok(handle)
    }

    /// Refuse the client with CONNECTION_REFUSED in an Initial packet (RFC 9000 §10.2.3,
    /// §20.1), so it fails at once instead of retransmitting until it times out.
    pub fn refuse_incoming(&mut self, incoming: Incoming) {
        let dcid = incoming.dcid();
        self.pending.remove(&dcid);
        let InitialDatagram { local, remote, .. } = incoming.initial;
        self.send_initial_close(
            local,
            remote,
            &incoming.keys.local,
            dcid,
            incoming.scid,
            (TransportErrorCode::CONNECTION_REFUSED, "refused"),
        );
    }

    /// Answer with a Retry packet (RFC 9000 §8.1.2): the client repeats its Initial with the
    /// token, which comes back as a new [`Incoming`] whose address is validated. Fails for a
    /// client whose address is already validated.
    pub fn retry_incoming(&mut self, now: Timestamp, incoming: Incoming) -> Result<(), RetryError> {
        if !incoming.may_retry() {
            return Err(RetryError(Box::new(incoming)));
        }
        let dcid = incoming.dcid();
        self.pending.remove(&dcid);
        let Some(server) = self.server_config.clone() else {
            return Ok(());
        };
        let addrs = (incoming.initial.local, incoming.initial.remote);
        self.retry_from(now, &server, addrs, dcid, incoming.scid);
        Ok(())
    }

    /// Refuse a client whose connection was already created (a runtime that accepts every
    /// attempt on the application's behalf, then hears the application refuse it): the
    /// connection closes with CONNECTION_REFUSED (RFC 9000 §20.1), the answer
    /// [`Endpoint::refuse_incoming`] gives an attempt still pending, and counts as refused.
    /// Nothing happens to a connection that is unknown or already closing.
    pub fn refuse_connection(&mut self, now: Timestamp, handle: ConnectionHandle) {
        let Some(conn) = self.connection_mut(handle) else {
            return;
        };
        if conn.is_closed() {
            return;
        }
        conn.close_with_error(
            now,
            TransportError::new(TransportErrorCode::CONNECTION_REFUSED, "refused"),
        );
        self.stats.refused += 1;
    }

    /// Drop the Initial without an answer (the client times out, or retransmits and is
    /// decided on again).
    pub fn ignore_incoming(&mut self, incoming: Incoming) {
        self.pending.remove(&incoming.dcid());
    }
}
