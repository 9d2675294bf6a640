//! One-shot handshake bookkeeping of a connection: the connection IDs the peer's transport
//! parameters authenticate (RFC 9000 §7.3), the address validation tokens (§8.1), and the
//! flags of handshake completion and confirmation (RFC 9001 §4.1).

use std::sync::Arc;

use bytes::Bytes;
use mpquic_wire::cid::ConnectionId;
use mpquic_wire::stream_id::Side;
use mpquic_wire::transport_params::TransportParameters;

use crate::config::TokenStore;

/// What the handshake remembers until it is confirmed (and a little beyond).
pub(crate) struct HandshakeState {
    /// Destination CID of the client's first Initial (RFC 9000 §7.3).
    original_dcid: ConnectionId,
    /// The peer's SCID from its first long-header packet, checked against its transport params.
    peer_initial_scid: Option<ConnectionId>,
    /// Client: the Source CID of the Retry we followed (RFC 9000 §7.3), at most one.
    retry_scid: Option<ConnectionId>,
    /// Client: the token our Initial packets carry (from a Retry or an earlier NEW_TOKEN).
    initial_token: Bytes,
    /// Client: the server name, which keys NEW_TOKEN tokens in `token_store`.
    server_name: String,
    /// Client: where tokens from NEW_TOKEN frames go (RFC 9000 §8.1.3).
    token_store: Option<Arc<dyn TokenStore>>,
    /// Client: where the paths' round-trip times go for later connections (RFC 9002 §6.2.2).
    pub(super) rtt_store: Option<Arc<dyn crate::RttStore>>,
    /// Server: the NEW_TOKEN token to send (again, if lost) once the handshake is confirmed.
    new_token: Option<Bytes>,
    /// Server: `new_token` waits to be sent.
    new_token_pending: bool,
    /// RFC 9001 §4.1.2.
    confirmed: bool,
    /// Server: HANDSHAKE_DONE waits to be sent (again, if lost).
    done_pending: bool,
    /// The application was told the connection is established.
    connected_event_sent: bool,
}

impl std::fmt::Debug for HandshakeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HandshakeState")
            .field("original_dcid", &self.original_dcid)
            .field("peer_initial_scid", &self.peer_initial_scid)
            .field("retry_scid", &self.retry_scid)
            .field("confirmed", &self.confirmed)
            .finish_non_exhaustive()
    }
}

impl HandshakeState {
    fn new(original_dcid: ConnectionId) -> Self {
        Self {
            original_dcid,
            peer_initial_scid: None,
            retry_scid: None,
            initial_token: Bytes::new(),
            server_name: String::new(),
            token_store: None,
            rtt_store: None,
            new_token: None,
            new_token_pending: false,
            confirmed: false,
            done_pending: false,
            connected_event_sent: false,
        }
    }

    /// A client that sends its first Initial to `original_dcid`. RFC 9000 §8.1.3: a token the
    /// store kept from an earlier connection to `server_name` lets the server skip validation.
    pub(crate) fn client(
        original_dcid: ConnectionId,
        server_name: &str,
        token_store: Option<Arc<dyn TokenStore>>,
    ) -> Self {
        let mut state = Self::new(original_dcid);
        state.initial_token = token_store
            .as_ref()
            .and_then(|store| store.take(server_name))
            .unwrap_or_default();
        state.server_name = server_name.to_owned();
        state.token_store = token_store;
        state
    }

    /// A server for a client whose first Initial went to `original_dcid` with the Source CID
    /// `client_scid`; `new_token` is handed out once the handshake is confirmed (§8.1.3).
    pub(crate) fn server(
        original_dcid: ConnectionId,
        client_scid: ConnectionId,
        new_token: Option<Bytes>,
    ) -> Self {
        let mut state = Self::new(original_dcid);
        state.peer_initial_scid = Some(client_scid);
        state.new_token_pending = new_token.is_some();
        state.new_token = new_token;
        state
    }

    /// Destination CID of the client's first Initial.
    pub(crate) fn original_dcid(&self) -> ConnectionId {
        self.original_dcid
    }

    /// Whether a long-header packet from the peer told us its Source CID (client: any packet
    /// from the server was processed).
    pub(crate) fn peer_scid_known(&self) -> bool {
        self.peer_initial_scid.is_some()
    }

    /// Client: the Source CID of the server's first long-header packet (RFC 9000 §7.2).
    pub(crate) fn record_peer_scid(&mut self, scid: ConnectionId) {
        self.peer_initial_scid = Some(scid);
    }

    /// Client: a Retry may be followed only once and only before any other packet from the
    /// server (RFC 9000 §17.2.5.2).
    pub(crate) fn may_follow_retry(&self) -> bool {
        self.retry_scid.is_none() && self.peer_initial_scid.is_none()
    }

    /// Client: follow a Retry: its Source CID is checked against the server's transport
    /// parameters, its token rides in our Initial packets from now on.
    pub(crate) fn follow_retry(&mut self, retry_scid: ConnectionId, token: Bytes) {
        self.retry_scid = Some(retry_scid);
        self.initial_token = token;
    }

    /// Client: the token of our Initial packets (empty when we have none).
    pub(crate) fn initial_token(&self) -> &Bytes {
        &self.initial_token
    }

    /// RFC 9000 §7.3: authenticate the connection IDs used during the handshake against the
    /// peer's transport parameters. `side` is ours. Err names the mismatch.
    pub(crate) fn authenticate_peer_cids(
        &self,
        side: Side,
        params: &TransportParameters,
    ) -> Result<(), &'static str> {
        if params.initial_source_connection_id != self.peer_initial_scid {
            return Err("initial_source_connection_id does not match the packet's source CID");
        }
        if side == Side::Client {
            if params.original_destination_connection_id != Some(self.original_dcid) {
                return Err("original_destination_connection_id does not match");
            }
            // §7.3: present and equal to the Retry's Source CID iff we followed a Retry.
            if params.retry_source_connection_id != self.retry_scid {
                return Err("retry_source_connection_id does not match the Retry");
            }
        }
        Ok(())
    }

    /// Client: keep a NEW_TOKEN token for the next connection to this server (§8.1.3).
    pub(crate) fn store_new_token(&self, token: Bytes) {
        if let Some(store) = &self.token_store {
            store.insert(&self.server_name, token);
        }
    }

    /// Server: the NEW_TOKEN token, when it waits to be sent and the handshake is confirmed.
    pub(crate) fn new_token_to_send(&self) -> Option<&Bytes> {
        if !self.new_token_pending || !self.confirmed {
            return None;
        }
        self.new_token.as_ref()
    }

    /// Server: the NEW_TOKEN frame was written.
    pub(crate) fn new_token_sent(&mut self) {
        self.new_token_pending = false;
    }

    /// Server: the packet with the NEW_TOKEN frame was lost; send it again (§13.3).
    pub(crate) fn requeue_new_token(&mut self) {
        self.new_token_pending = true;
    }

    /// Whether the handshake is confirmed (RFC 9001 §4.1.2).
    #[inline]
    pub(crate) fn is_confirmed(&self) -> bool {
        self.confirmed
    }

    /// The handshake is confirmed; returns false when it already was.
    pub(crate) fn confirm(&mut self) -> bool {
        !std::mem::replace(&mut self.confirmed, true)
    }

    /// Server: owe the client a HANDSHAKE_DONE frame (at confirmation, again after a loss;
    /// RFC 9000 §19.20, §13.3).
    pub(crate) fn queue_handshake_done(&mut self) {
        self.done_pending = true;
    }

    /// Whether a HANDSHAKE_DONE frame is owed.
    pub(crate) fn handshake_done_pending(&self) -> bool {
        self.done_pending
    }

    /// Take the owed HANDSHAKE_DONE frame: true when one was owed (the caller writes it).
    pub(crate) fn take_handshake_done(&mut self) -> bool {
        std::mem::take(&mut self.done_pending)
    }

    /// True the first time only: the Connected event is emitted once per connection.
    pub(crate) fn take_connected_event(&mut self) -> bool {
        !std::mem::replace(&mut self.connected_event_sent, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cid(byte: u8) -> ConnectionId {
        ConnectionId::new(&[byte; 8]).unwrap()
    }

    fn params(
        initial_scid: Option<ConnectionId>,
        odcid: Option<ConnectionId>,
        retry_scid: Option<ConnectionId>,
    ) -> TransportParameters {
        TransportParameters {
            initial_source_connection_id: initial_scid,
            original_destination_connection_id: odcid,
            retry_source_connection_id: retry_scid,
            ..TransportParameters::default()
        }
    }

    #[test]
    fn client_authenticates_the_server_cids_and_the_retry() {
        let mut hs = HandshakeState::client(cid(1), "example.org", None);
        assert!(hs.initial_token().is_empty() && hs.may_follow_retry());
        hs.follow_retry(cid(2), Bytes::from_static(b"token"));
        assert!(!hs.may_follow_retry(), "at most one Retry");
        assert_eq!(hs.initial_token().as_ref(), b"token");
        hs.record_peer_scid(cid(3));
        assert!(hs.peer_scid_known());
        let side = Side::Client;
        let good = params(Some(cid(3)), Some(cid(1)), Some(cid(2)));
        assert_eq!(hs.authenticate_peer_cids(side, &good), Ok(()));
        for bad in [
            params(Some(cid(9)), Some(cid(1)), Some(cid(2))),
            params(Some(cid(3)), Some(cid(9)), Some(cid(2))),
            params(Some(cid(3)), None, Some(cid(2))),
            params(Some(cid(3)), Some(cid(1)), None),
        ] {
            assert!(hs.authenticate_peer_cids(side, &bad).is_err());
        }
    }

    #[test]
    fn client_tokens_come_from_and_go_to_the_store() {
        let store = Arc::new(crate::config::TokenMemoryStore::default());
        store.insert("example.org", Bytes::from_static(b"old"));
        let hs = HandshakeState::client(cid(1), "example.org", Some(store.clone()));
        assert_eq!(hs.initial_token().as_ref(), b"old");
        assert_eq!(store.take("example.org"), None, "a token is used once");
        hs.store_new_token(Bytes::from_static(b"new"));
        assert_eq!(store.take("example.org").as_deref(), Some(&b"new"[..]));
    }

    #[test]
    fn server_checks_only_the_client_scid() {
        let hs = HandshakeState::server(cid(1), cid(4), None);
        assert!(hs.peer_scid_known());
        let side = Side::Server;
        assert_eq!(
            hs.authenticate_peer_cids(side, &params(Some(cid(4)), None, None)),
            Ok(())
        );
        assert!(hs
            .authenticate_peer_cids(side, &params(None, None, None))
            .is_err());
    }

    #[test]
    fn one_shot_flags_fire_once_and_the_token_waits_for_confirmation() {
        let mut hs = HandshakeState::server(cid(1), cid(4), Some(Bytes::from_static(b"t")));
        assert!(hs.take_connected_event() && !hs.take_connected_event());
        assert!(hs.new_token_to_send().is_none(), "not before confirmation");
        assert!(!hs.is_confirmed() && hs.confirm() && !hs.confirm() && hs.is_confirmed());
        assert_eq!(hs.new_token_to_send().map(|t| t.as_ref()), Some(&b"t"[..]));
        hs.new_token_sent();
        assert!(hs.new_token_to_send().is_none());
        hs.requeue_new_token();
        assert!(hs.new_token_to_send().is_some());
        assert!(!hs.handshake_done_pending() && !hs.take_handshake_done());
        hs.queue_handshake_done();
        assert!(hs.handshake_done_pending());
        assert!(hs.take_handshake_done() && !hs.take_handshake_done());
    }
}
