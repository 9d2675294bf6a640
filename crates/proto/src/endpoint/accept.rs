//! Accepting new connections: nothing is kept for a client Initial until its packet protection
//! verifies, the connection and handshake limits are checked in O(1), and address validation by
//! Retry and NEW_TOKEN tokens decides whether the client may be answered at once
//! (RFC 9000 §7.2, §8.1, §14.1; RFC 9001 §5.2).

use std::net::SocketAddr;

use bytes::BytesMut;
use mpquic_wire::cid::ConnectionId;
use mpquic_wire::error::TransportErrorCode;
use mpquic_wire::header::PartialDecode;
use mpquic_wire::stream_id::Side;

use super::incoming::InitialDatagram;
use super::{ConnectionHandle, Endpoint, MIN_INITIAL_DATAGRAM};
use crate::config::{RetryPolicy, ServerConfig};
use crate::connection::random_cid;
use crate::connection::{Connection, ServerAccept};
use crate::crypto::{initial_keys, open_initial, KeyPair};
use crate::time::Timestamp;
use crate::token::{self, Lifetimes, TokenCheck, ValidToken};

impl Endpoint {
    /// A client Initial for no known CID: refuse, Retry, or create the connection.
    pub(super) fn accept_initial(
        &mut self,
        now: Timestamp,
        local: SocketAddr,
        remote: SocketAddr,
        first: PartialDecode,
        rest: Option<BytesMut>,
        (len, ecn): (usize, Option<crate::ecn::EcnCodepoint>),
    ) -> Option<ConnectionHandle> {
        let server = self.server_config.clone()?;
        let dcid = first.dcid();
        // RFC 9000 §14.1: drop Initial datagrams below 1200 bytes; §7.2: DCID at least 8 bytes.
        if len < MIN_INITIAL_DATAGRAM || dcid.len() < 8 {
            return None;
        }
        let scid = first.scid()?;
        let keys = initial_keys(dcid.as_slice(), Side::Server);
        if open_initial(&keys.remote, &first).is_none() {
            // Forged or corrupt: no state, no answer (an answer would amplify spoofed input).
            self.stats.unauthenticated_initials += 1;
            return None;
        }
        let lifetimes = Lifetimes {
            retry: server.retry_token_lifetime,
            new_token: server.new_token_lifetime,
        };
        let validated =
            match token::check(&server.token_keys, first.token(), now, remote, lifetimes) {
                TokenCheck::Valid(ValidToken::Retry { retry_scid, .. }) if retry_scid != dcid => {
                    self.refuse_invalid_token(local, remote, &keys, dcid, scid);
                    return None;
                }
                TokenCheck::Valid(valid) => Some(valid),
                TokenCheck::InvalidRetry => {
                    self.refuse_invalid_token(local, remote, &keys, dcid, scid);
                    return None;
                }
                TokenCheck::Invalid => {
                    self.stats.invalid_tokens += 1;
                    None
                }
                TokenCheck::Absent => None,
            };
        // Initials waiting for the application's decision count as handshakes: they are what
        // bounds the state an unanswered flood of (verified) Initials can make us keep.
        let handshaking = self.handshaking + self.pending.len();
        if self.open >= server.max_connections || handshaking >= server.max_handshakes {
            // RFC 9000 §5.2.2 / §20.1: refuse explicitly rather than let the client time out.
            self.send_initial_close(
                local,
                remote,
                &keys.local,
                dcid,
                scid,
                (TransportErrorCode::CONNECTION_REFUSED, "server busy"),
            );
            return None;
        }
        if validated.is_none() && self.wants_retry(&server, handshaking) {
            self.retry_from(now, &server, (local, remote), dcid, scid);
            return None;
        }
        let initial = InitialDatagram {
            local,
            remote,
            ecn,
            first,
            rest,
        };
        if self.incoming_decisions {
            // The application decides (accept, refuse, retry, ignore); only this verified
            // Initial is kept meanwhile, and the handshake limit above counts it.
            self.hand_to_application(now, (initial, keys), validated, scid);
            return None;
        }
        let handle = self.establish(now, &server, (initial, keys), validated, scid)?;
        self.incoming.push_back(handle);
        Some(handle)
    }

    /// Create the server connection for a verified client Initial and feed it the datagram.
    pub(super) fn establish(
        &mut self,
        now: Timestamp,
        server: &ServerConfig,
        (initial, keys): (InitialDatagram, KeyPair),
        validated: Option<ValidToken>,
        scid: ConnectionId,
    ) -> Option<ConnectionHandle> {
        let InitialDatagram {
            local,
            remote,
            ecn,
            first,
            rest,
        } = initial;
        let dcid = first.dcid();
        let accept = self.server_accept(now, server, remote, dcid, scid, validated, keys);
        let params = self.connection_params(now, local, remote);
        let conn = Connection::new_server(server, accept, params).ok()?;
        let handle = self.insert(conn);
        // The client keeps using its chosen DCID until it sees our SCID (RFC 9000 §7.2).
        self.routes
            .insert(dcid, (handle, crate::path::PathId::ZERO));
        let entry = self.connections.get_mut(&handle)?;
        entry.cids.push(dcid);
        entry.conn.rx_ecn = ecn;
        entry.conn.handle_datagram(
            now,
            local,
            remote,
            first,
            rest,
            Some(crate::path::PathId::ZERO),
        );
        entry.conn.rx_ecn = None;
        self.sync(handle);
        Some(handle)
    }

    /// Answer a client Initial with a Retry (RFC 9000 §8.1.2) carrying a fresh token.
    pub(super) fn retry_from(
        &mut self,
        now: Timestamp,
        server: &ServerConfig,
        (local, remote): (SocketAddr, SocketAddr),
        dcid: ConnectionId,
        scid: ConnectionId,
    ) {
        let retry_scid = random_cid(&mut self.rng, self.config.cid_len.max(8));
        let token = token::seal_retry(
            &server.token_keys,
            &mut self.rng,
            now,
            remote,
            &dcid,
            &retry_scid,
        );
        self.send_retry(local, remote, &dcid, scid, retry_scid, token);
    }

    /// Whether a client without a valid token must prove its address first.
    fn wants_retry(&self, server: &ServerConfig, handshaking: usize) -> bool {
        match server.retry {
            RetryPolicy::Never => false,
            RetryPolicy::Always => true,
            RetryPolicy::UnderLoad { handshakes } => handshaking >= handshakes,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn server_accept(
        &mut self,
        now: Timestamp,
        server: &ServerConfig,
        remote: SocketAddr,
        dcid: ConnectionId,
        scid: ConnectionId,
        validated: Option<ValidToken>,
        keys: KeyPair,
    ) -> ServerAccept {
        let (original_dcid, retry_scid) = match validated {
            Some(ValidToken::Retry {
                original_dcid,
                retry_scid,
            }) => (original_dcid, Some(retry_scid)),
            _ => (dcid, None),
        };
        let new_token = (!server.new_token_lifetime.is_zero()).then(|| {
            token::seal_new_token(&server.token_keys, &mut self.rng, now, remote.ip()).into()
        });
        ServerAccept {
            client_dcid: dcid,
            client_scid: scid,
            original_dcid,
            retry_scid,
            address_validated: validated.is_some(),
            initial_keys: keys,
            new_token,
        }
    }

    /// RFC 9000 §8.1.3: a Retry token that does not validate means the client cannot get a
    /// connection in this attempt; say so with INVALID_TOKEN.
    fn refuse_invalid_token(
        &mut self,
        local: SocketAddr,
        remote: SocketAddr,
        keys: &KeyPair,
        dcid: ConnectionId,
        scid: ConnectionId,
    ) {
        self.stats.invalid_tokens += 1;
        self.send_initial_close(
            local,
            remote,
            &keys.local,
            dcid,
            scid,
            (TransportErrorCode::INVALID_TOKEN, "invalid token"),
        );
    }
}
