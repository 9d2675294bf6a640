//! Datagrams the endpoint sends without a connection: Version Negotiation (RFC 9000 §6),
//! stateless reset (§10.3), Retry (§8.1.2, §17.2.5) and an Initial CONNECTION_CLOSE that
//! refuses a client (§5.2.2, §10.2.3) — all answers to input nobody has authenticated, so each
//! is bounded by the outbox size and none is larger than what triggered it allows.

use std::net::SocketAddr;

use bytes::Bytes;
use mpquic_wire::cid::ConnectionId;
use mpquic_wire::error::TransportErrorCode;
use mpquic_wire::frame::{ConnectionClose, Frame};
use mpquic_wire::header::{Header, QUIC_V1, SUPPORTED_VERSIONS};
use rand_core::RngCore;

use super::{Endpoint, MAX_OUTBOX};
use crate::connection::Transmit;
use crate::crypto::{retry_integrity_tag, seal_initial, DirectionalKeys};

impl Endpoint {
    fn queue(&mut self, local: SocketAddr, remote: SocketAddr, datagram: Vec<u8>) -> bool {
        if self.outbox.len() >= MAX_OUTBOX {
            return false;
        }
        let size = datagram.len();
        self.outbox.push_back((
            Transmit {
                local,
                remote,
                size,
                ecn: None,
            },
            datagram,
        ));
        true
    }

    pub(super) fn send_version_negotiation(
        &mut self,
        local: SocketAddr,
        remote: SocketAddr,
        dcid: ConnectionId,
        scid: ConnectionId,
    ) {
        let mut buf = Vec::new();
        // RFC 9000 §17.2.1: echo the CIDs swapped; list the versions we support.
        Header::VersionNegotiation {
            dcid: scid,
            scid: dcid,
            versions: SUPPORTED_VERSIONS.to_vec(),
        }
        .encode(0, None, &mut buf);
        if let Some(first) = buf.first_mut() {
            *first |= (self.rng.next_u32() as u8) & 0x7f;
        }
        self.queue(local, remote, buf);
    }

    /// RFC 9000 §10.3: answer a short-header packet for an unknown CID with a stateless reset
    /// smaller than it (to avoid loops), if it is large enough to hide the token.
    pub(super) fn send_stateless_reset(
        &mut self,
        local: SocketAddr,
        remote: SocketAddr,
        dcid: &ConnectionId,
        trigger_len: usize,
    ) {
        const MIN_RESET: usize = 21;
        // Resets are cheap to trigger: keep most of the outbox for other answers.
        if trigger_len <= MIN_RESET + 1 || self.outbox.len() > MAX_OUTBOX / 4 {
            return;
        }
        let size = (trigger_len - 1).min(43);
        let mut buf = vec![0u8; size];
        self.rng.fill_bytes(&mut buf[..size - 16]);
        buf[0] = 0x40 | (buf[0] & 0x3f);
        let token = self.reset_key.token_for(dcid);
        buf[size - 16..].copy_from_slice(&token.0);
        if self.queue(local, remote, buf) {
            self.stats.stateless_resets_sent += 1;
        }
    }

    /// RFC 9000 §17.2.5: a Retry to the client's Source CID, from a fresh CID of ours that the
    /// client must use next, carrying `token`; the integrity tag covers the client's original
    /// Destination CID (RFC 9001 §5.8).
    pub(super) fn send_retry(
        &mut self,
        local: SocketAddr,
        remote: SocketAddr,
        client_dcid: &ConnectionId,
        client_scid: ConnectionId,
        retry_scid: ConnectionId,
        token: Vec<u8>,
    ) {
        let mut buf = Vec::with_capacity(64 + token.len());
        Header::Retry {
            version: QUIC_V1,
            dcid: client_scid,
            scid: retry_scid,
            token: Bytes::from(token),
        }
        .encode(0, None, &mut buf);
        if let Some(first) = buf.first_mut() {
            // §17.2.5: the four low bits are unused; send them random.
            *first = (*first & 0xf0) | (self.rng.next_u32() as u8 & 0x0f);
        }
        let tag = retry_integrity_tag(client_dcid.as_slice(), &buf);
        buf.extend_from_slice(&tag);
        if self.queue(local, remote, buf) {
            self.stats.retries_sent += 1;
        }
    }

    /// Refuse a client with an Initial packet carrying CONNECTION_CLOSE (RFC 9000 §10.2.3: before
    /// the handshake completes, a close goes in the Initial space), protected with the server
    /// Initial keys of the client's Destination CID, so the client reports `code` at once instead
    /// of retransmitting until its handshake times out.
    pub(super) fn send_initial_close(
        &mut self,
        local: SocketAddr,
        remote: SocketAddr,
        keys: &DirectionalKeys,
        client_dcid: ConnectionId,
        client_scid: ConnectionId,
        (code, reason): (TransportErrorCode, &'static str),
    ) {
        let mut frame = Vec::with_capacity(8 + reason.len());
        Frame::ConnectionClose(ConnectionClose {
            error_code: code.0,
            frame_type: Some(0),
            reason: Bytes::from_static(reason.as_bytes()),
        })
        .encode(&mut frame);
        // A CONNECTION_CLOSE is not ack-eliciting: no 1,200-byte minimum (RFC 9000 §14.1).
        let cids = (client_scid, client_dcid);
        if let Ok(packet) = seal_initial(keys, cids, Bytes::new(), 0, &frame, 0) {
            if self.queue(local, remote, packet) {
                self.stats.refused += 1;
            }
        }
    }
}
