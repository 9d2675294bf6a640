//! Creating connections, driving TLS over CRYPTO frames, transport parameters, key installation
//! and discarding, handshake completion and confirmation (RFC 9000 §7, RFC 9001 §4).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use mpquic_wire::cid::{ConnectionId, ResetToken};
use mpquic_wire::error::TransportErrorCode;
use mpquic_wire::stream_id::Side;
use mpquic_wire::transport_params::{PreferredAddress, TransportParameters};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

use super::handshake_state::HandshakeState;
use super::{Connection, ConnectionError, Event, State};
use crate::cc::CcConfig;
use crate::cid::{LocalCids, RemoteCids};
use crate::config::{ClientConfig, ServerConfig, TransportConfig};
use crate::crypto::{initial_keys, Epoch, HandshakeOutput, KeyPair, PacketProtection, TlsSession};
use crate::error::TransportError;
use crate::path::{Path, PathId};
use crate::small_map::SmallMap;
use crate::space::{negotiate, SpaceId};
use crate::streams::Streams;
use crate::time::{Duration, Timestamp};

/// Everything needed to create a connection besides TLS.
#[derive(Debug, Clone)]
pub struct ConnectionParams {
    /// Our address of the first path.
    pub local: SocketAddr,
    /// The peer's address of the first path.
    pub remote: SocketAddr,
    /// Seed of the connection's own RNG (CIDs, path challenges): injected, never global.
    pub rng_seed: [u8; 32],
    /// Length of the connection IDs we issue.
    pub cid_len: usize,
    /// The endpoint's stateless-reset key (RFC 9000 §10.3.2).
    pub(crate) reset_key: ResetKey,
    /// When the connection is created.
    pub now: Timestamp,
    /// 1-RTT packet protection: real unless the endpoint was made with
    /// [`crate::Endpoint::new_for_simulation`] (crate-private, so only the endpoint sets it).
    pub(crate) protection: PacketProtection,
    /// What the endpoint's sockets allow for path MTU discovery.
    pub(crate) socket_mtu: crate::mtud::SocketMtu,
}

/// What the endpoint learnt about a client Initial before creating its connection.
pub struct ServerAccept {
    /// The Destination CID of the client's Initial (keys, first route).
    pub client_dcid: ConnectionId,
    /// The client's Source CID.
    pub client_scid: ConnectionId,
    /// The Destination CID of the client's very first Initial: `client_dcid`, or the one a
    /// Retry token recorded (RFC 9000 §7.3 original_destination_connection_id).
    pub original_dcid: ConnectionId,
    /// Source CID of our Retry, when the client came back with its token (§7.3
    /// retry_source_connection_id).
    pub retry_scid: Option<ConnectionId>,
    /// The client proved its address with a token (§8.1): no amplification limit.
    pub address_validated: bool,
    /// Initial keys of `client_dcid`, already derived to authenticate the packet.
    pub initial_keys: KeyPair,
    /// A token to hand out in a NEW_TOKEN frame once the handshake is confirmed (§8.1.3).
    pub new_token: Option<Bytes>,
}

impl std::fmt::Debug for ServerAccept {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerAccept")
            .field("client_dcid", &self.client_dcid)
            .field("original_dcid", &self.original_dcid)
            .field("retry_scid", &self.retry_scid)
            .field("address_validated", &self.address_validated)
            .finish_non_exhaustive()
    }
}

/// Why a connection could not be created.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("TLS configuration: {0}")]
    /// rustls refused the TLS configuration.
    Tls(String),
    #[error("invalid server name '{0}'")]
    /// The server name is not a valid DNS name or IP address.
    InvalidServerName(String),
    /// The transport configuration is invalid ([`crate::TransportConfig::validate`]).
    #[error("invalid transport configuration: {0}")]
    Config(#[from] crate::ConfigError),
}

/// The endpoint's stateless-reset key (RFC 9000 §10.3.2), as an HMAC-SHA256 key ready to use:
/// its padded inner and outer blocks are hashed once, not for every token (each connection
/// issues a token per CID, about ten per handshake with multipath), and one key is shared by
/// the endpoint and all its connections.
#[derive(Clone)]
pub(crate) struct ResetKey(std::sync::Arc<ring::hmac::Key>);

impl ResetKey {
    pub(crate) fn new(key: &[u8; 32]) -> Self {
        Self(std::sync::Arc::new(ring::hmac::Key::new(
            ring::hmac::HMAC_SHA256,
            key,
        )))
    }

    /// RFC 9000 §10.3.2: the stateless reset token of `cid`, derived from the static key.
    pub(crate) fn token_for(&self, cid: &ConnectionId) -> ResetToken {
        let tag = ring::hmac::sign(&self.0, cid.as_slice());
        let mut token = [0u8; 16];
        token.copy_from_slice(&tag.as_ref()[..16]);
        ResetToken(token)
    }
}

impl std::fmt::Debug for ResetKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResetKey(..)")
    }
}

pub(crate) fn random_cid(rng: &mut ChaCha20Rng, len: usize) -> ConnectionId {
    let mut bytes = [0u8; 20];
    let len = len.clamp(1, 20);
    rng.fill_bytes(&mut bytes[..len]);
    ConnectionId::new(&bytes[..len]).expect("length clamped to 20")
}

/// Longest remembered RTT a connection starts from (the configuration's bound on
/// `initial_rtt`); anything else recalled is ignored.
const MAX_RECALLED_RTT: Duration = Duration::from_secs(60);

impl Connection {
    /// A client connection; the first Initial is produced by `poll_transmit`.
    pub fn new_client(
        config: &ClientConfig,
        server_name: &str,
        params: ConnectionParams,
    ) -> Result<Connection, ConnectError> {
        let mut rng = ChaCha20Rng::from_seed(params.rng_seed);
        // RFC 9000 §7.2: the client's first DCID is unpredictable and at least 8 bytes.
        let dcid = random_cid(&mut rng, params.cid_len.max(8));
        let scid = random_cid(&mut rng, params.cid_len);
        let local_params =
            build_local_params(&config.transport, Side::Client, &scid, None, None, None);
        let mut encoded = encode_params(&local_params);
        encoded.extend_from_slice(&config.transport.raw_transport_params);
        let tls = TlsSession::new_client(config.tls.clone(), server_name, encoded)
            .map_err(|e| ConnectError::Tls(e.to_string()))?;
        let mut handshake = HandshakeState::client(dcid, server_name, config.token_store.clone());
        handshake.rtt_store = config.rtt_store.clone();
        // RFC 9002 §6.2.2: the final smoothed RTT of an earlier connection over the same
        // addresses, if remembered, instead of the configured initial RTT.
        let initial_rtt = config
            .rtt_store
            .as_ref()
            .and_then(|store| store.recall(params.local, params.remote))
            .filter(|rtt| !rtt.is_zero() && *rtt <= MAX_RECALLED_RTT)
            .unwrap_or(config.transport.initial_rtt);
        let mut conn = Connection::assemble(
            Side::Client,
            config.transport.clone(),
            initial_rtt,
            tls,
            rng,
            local_params,
            &params,
            dcid,
            scid,
            handshake,
        );
        conn.keys
            .install_initial(initial_keys(dcid.as_slice(), Side::Client));
        conn.drive_tls()?;
        // RFC 9001 §4.6.1: a resumed session may allow 0-RTT (zero_rtt.rs).
        conn.start_zero_rtt();
        conn.qlog_start(params.now);
        Ok(conn)
    }

    /// A server connection for an authenticated client Initial.
    pub fn new_server(
        config: &ServerConfig,
        accept: ServerAccept,
        params: ConnectionParams,
    ) -> Result<Connection, ConnectError> {
        let mut rng = ChaCha20Rng::from_seed(params.rng_seed);
        let scid = random_cid(&mut rng, params.cid_len);
        let token = params.reset_key.token_for(&scid);
        let mut local_params = build_local_params(
            &config.transport,
            Side::Server,
            &scid,
            Some(accept.original_dcid),
            accept.retry_scid,
            Some(token),
        );
        local_params.preferred_address = preferred_address(config, &mut rng, &params);
        let tls = TlsSession::new_server(config.tls.clone(), encode_params(&local_params))
            .map_err(|e| ConnectError::Tls(e.to_string()))?;
        let handshake =
            HandshakeState::server(accept.original_dcid, accept.client_scid, accept.new_token);
        let mut conn = Connection::assemble(
            Side::Server,
            config.transport.clone(),
            config.transport.initial_rtt,
            tls,
            rng,
            local_params,
            &params,
            accept.client_scid,
            scid,
            handshake,
        );
        conn.keys.install_initial(accept.initial_keys);
        if accept.address_validated {
            // RFC 9000 §8.1: a valid token validates the address; no amplification limit.
            if let Some(path) = conn.paths.get_mut(&PathId::ZERO) {
                path.amplification_limited = false;
            }
        }
        conn.qlog_start(params.now);
        Ok(conn)
    }

    #[allow(clippy::too_many_arguments)]
    fn assemble(
        side: Side,
        config: Arc<TransportConfig>,
        initial_rtt: Duration,
        tls: TlsSession,
        rng: ChaCha20Rng,
        local_params: TransportParameters,
        params: &ConnectionParams,
        remote_cid: ConnectionId,
        local_cid: ConnectionId,
        handshake: HandshakeState,
    ) -> Connection {
        let mtu =
            crate::mtud::Mtud::for_path(&config, params.socket_mtu, params.local, params.remote);
        let cc = config
            .controller_factory_for(PathId::ZERO)
            .build(CcConfig::new(u64::from(mtu.current())));
        let mut path = Path::new(
            PathId::ZERO,
            params.local,
            params.remote,
            cc,
            initial_rtt,
            mtu,
            params.now,
        );
        // The client trusts the address it chose; the server validates the client by the
        // handshake (RFC 9000 §8.1) and applies the amplification limit until then.
        if side == Side::Client {
            path.validate();
            path.amplification_limited = false;
        }
        let mut local_cids = LocalCids::default();
        local_cids.issue(local_cid, false);
        let mut endpoint_events = VecDeque::new();
        endpoint_events.push_back(super::EndpointEvent::NewCid {
            cid: local_cid,
            path: PathId::ZERO,
            reset_token: params.reset_key.token_for(&local_cid),
        });
        if let Some(pa) = &local_params.preferred_address {
            // RFC 9000 §5.1.1: the preferred_address CID has sequence number 1; with multipath
            // it belongs to path ID 0 (RFC 10069 "Path ID and connection IDs"). It travels in
            // the transport parameters, so no NEW_CONNECTION_ID announces it, and the pool's
            // numbering gives later CIDs sequence numbers from 2 on.
            let seq = local_cids.issue(pa.connection_id, false);
            debug_assert_eq!(seq, 1);
            endpoint_events.push_back(super::EndpointEvent::NewCid {
                cid: pa.connection_id,
                path: PathId::ZERO,
                reset_token: pa.stateless_reset_token,
            });
        }
        let streams = Streams::new(side, config.streams.clone());
        Connection {
            side,
            state: State::Handshaking,
            error: None,
            tls,
            keys: super::keys::Keys::new(params.protection),
            socket_mtu: params.socket_mtu,
            crypto: Default::default(),
            send_spaces: SmallMap::new(),
            records: SmallMap::new(),
            layout: negotiate::initial_layout(&config),
            paths: SmallMap::from([(PathId::ZERO, Box::new(path))]),
            local_cids: SmallMap::from([(PathId::ZERO, local_cids)]),
            remote_cids: SmallMap::from([(PathId::ZERO, RemoteCids::with_initial(remote_cid))]),
            streams,
            scheduler: config.scheduler_factory().build(),
            events: VecDeque::new(),
            endpoint_events,
            handshake,
            ack_frequency: Default::default(),
            rng: super::ConnRng::continuing(&rng),
            local_params,
            peer_params: None,
            idle_since: params.now,
            path_ids: super::path_ids::PathIdLimits::new(PathId::new(config.max_path_id)),
            pacing_wakeup: None,
            stats: Default::default(),
            cid_len: params.cid_len,
            reset_key: params.reset_key.clone(),
            next_urgent_path: PathId::ZERO,
            probes_elsewhere: false,
            raw_frames: Vec::new(),
            // Allocated by the first coalesced packet, released with the Handshake keys.
            scratch: Vec::new(),
            views_buf: Vec::new(),
            copies: None,
            ack_scratch: None,
            ack_only_packets: 0,
            early_datagrams: Vec::new(),
            reinjection: config.reinjection_factory().build(),
            qoe: Default::default(),
            qlog: None,
            datagrams: Default::default(),
            zero_rtt: Default::default(),
            rx_ecn: None,
            config,
        }
    }

    /// Feed in-order CRYPTO data of `epoch` to TLS and collect its output (RFC 9001 §4.1.3).
    pub(crate) fn on_crypto_data(
        &mut self,
        now: Timestamp,
        epoch: Epoch,
        offset: u64,
        data: Bytes,
    ) -> Result<(), TransportError> {
        let stream = self.crypto_mut(epoch);
        if offset + data.len() as u64 > stream.read_offset + CRYPTO_BUFFER_LIMIT {
            return Err(TransportError::new(
                TransportErrorCode::CRYPTO_BUFFER_EXCEEDED,
                "too much out-of-order CRYPTO data",
            ));
        }
        stream.recv.insert(offset, data).map_err(|e| {
            TransportError::new(TransportErrorCode::CRYPTO_BUFFER_EXCEEDED, e.to_string())
        })?;
        let mut buf = [0u8; 4096];
        loop {
            let stream = self.crypto_mut(epoch);
            let n = stream.recv.read(&mut buf);
            if n == 0 {
                break;
            }
            stream.read_offset += n as u64;
            self.tls.read_handshake_at(epoch, &buf[..n])?;
        }
        self.drive_tls()
            .map_err(|e| TransportError::internal(e.to_string()))?;
        self.check_zero_rtt_accepted();
        if self.peer_params.is_none() && self.peer_params_final() {
            if let Some(raw) = self.tls.peer_transport_params() {
                let raw = raw.to_vec();
                self.on_peer_params(&raw)?;
            }
        }
        if self.side == Side::Server
            && matches!(self.state, State::Handshaking)
            && self.keys.has(Epoch::Data)
            && self.peer_params.is_some()
        {
            // 0.5-RTT (RFC 9000 §12.1, RFC 9001 §5.7: the server may send 1-RTT data before
            // the handshake completes): CIDs for path 0 and, with multipath, for the other path
            // IDs ride with the server's first flight, so the client can open a second path
            // as soon as its handshake completes (RFC 10069 §3) instead of one round trip of
            // the initial path later. Idempotent: issues only what is missing.
            self.issue_initial_cids();
        }
        if matches!(self.state, State::Handshaking) && !self.tls.is_handshaking() {
            self.on_zero_rtt_outcome()?;
            self.on_handshake_complete(now);
            // A server's TLS session has nothing left to do once confirmed: free it.
            self.tls.release();
            self.drive_tls()
                .map_err(|e| TransportError::internal(e.to_string()))?;
        }
        Ok(())
    }

    /// Whether what TLS reports as the peer's transport parameters are this connection's.
    ///
    /// The server reads them from the ClientHello. A client resuming a session gets, from the
    /// moment it writes its ClientHello, the parameters remembered with the ticket (RFC 9000
    /// §7.4.1: for 0-RTT only) until the server's EncryptedExtensions replace them; the
    /// server's new parameters carry this connection's CIDs (§7.3), so reading earlier (e.g.
    /// after the ServerHello) checks another connection's CIDs. EncryptedExtensions is the first
    /// Handshake message and the handshake only completes after it, so the client reads them
    /// once the handshake is complete (before that it sends nothing that needs them: 1-RTT keys
    /// arrive with the completion, and 0-RTT uses the remembered ones, `zero_rtt.rs`).
    fn peer_params_final(&self) -> bool {
        self.side == Side::Server || !self.tls.is_handshaking()
    }

    /// Move TLS output into CRYPTO send buffers and install keys as TLS produces them.
    pub(crate) fn drive_tls(&mut self) -> Result<(), ConnectError> {
        for output in self.tls.write_handshake() {
            match output {
                HandshakeOutput::Data(epoch, bytes) => self.crypto_mut(epoch).send.write(&bytes),
                HandshakeOutput::HandshakeKeys(keys) => self.keys.install_handshake(keys),
                HandshakeOutput::OneRttKeys(keys) => self.keys.install_one_rtt(keys),
            }
        }
        Ok(())
    }

    /// RFC 9000 §7.3–7.4: validate and apply the peer's transport parameters.
    fn on_peer_params(&mut self, raw: &[u8]) -> Result<(), TransportError> {
        let params = TransportParameters::decode(raw, self.side.peer()).map_err(|e| {
            TransportError::new(TransportErrorCode::TRANSPORT_PARAMETER_ERROR, e.to_string())
        })?;
        let bad = |reason: &str| {
            Err(TransportError::new(
                TransportErrorCode::TRANSPORT_PARAMETER_ERROR,
                reason,
            ))
        };
        // RFC 9000 §7.3: authenticate the connection IDs used during the handshake.
        if let Err(reason) = self.handshake.authenticate_peer_cids(self.side, &params) {
            return bad(reason);
        }
        if self.side == Side::Client {
            if let (Some(token), Some(pool)) = (
                params.stateless_reset_token,
                self.remote_cids.get_mut(&PathId::ZERO),
            ) {
                pool.set_initial_token(token);
                self.endpoint_events
                    .push_back(super::EndpointEvent::PeerResetToken(token));
            }
            self.on_peer_preferred_address(&params)?;
        }
        self.streams.set_peer_params(&params);
        self.qoe.negotiated = self.local_params.enable_qoe_feedback && params.enable_qoe_feedback;
        self.layout = negotiate::negotiate(&self.config, &self.local_params, &params);
        if let Some(max) = self.layout.peer_max_path_id(&params) {
            self.path_ids.set_remote(max);
        }
        if self.layout.grants_path_ids_by_frame(&params) {
            self.path_ids.queue_grant();
        }
        self.peer_params = Some(params);
        self.qlog_peer_params();
        Ok(())
    }

    /// RFC 9000 §18.2: a client takes the CID of the server's preferred_address as sequence
    /// number 1 of path 0 (§5.1.1; RFC 10069 "Path ID and connection IDs") and keeps the
    /// addresses for the application ([`Connection::peer_preferred_address`]); it does not
    /// migrate by itself: with multipath, opening a path there is the application's choice.
    fn on_peer_preferred_address(
        &mut self,
        params: &TransportParameters,
    ) -> Result<(), TransportError> {
        let Some(pa) = &params.preferred_address else {
            return Ok(());
        };
        // §18.2: "A server that chooses a zero-length connection ID MUST NOT provide a
        // preferred address" (a zero-length CID inside it is refused by the decoder).
        if params
            .initial_source_connection_id
            .as_ref()
            .is_none_or(|cid| cid.is_empty())
        {
            return Err(TransportError::new(
                TransportErrorCode::TRANSPORT_PARAMETER_ERROR,
                "preferred_address from a server using zero-length connection IDs",
            ));
        }
        let limit = self.local_params.active_connection_id_limit;
        self.remote_cids
            .entry(PathId::ZERO)
            .or_default()
            .on_new_cid(1, 0, pa.connection_id, pa.stateless_reset_token, limit)?;
        self.endpoint_events
            .push_back(super::EndpointEvent::PeerResetToken(
                pa.stateless_reset_token,
            ));
        Ok(())
    }

    fn on_handshake_complete(&mut self, now: Timestamp) {
        self.state = State::Established;
        self.stats.handshake_completed_at = Some(now);
        if self.handshake.take_connected_event() {
            self.events.push_back(Event::Connected);
        }
        if self.side == Side::Server {
            // RFC 9001 §4.1.2: the server's handshake is confirmed at completion; it tells the
            // client with HANDSHAKE_DONE (RFC 9000 §19.20).
            self.handshake.queue_handshake_done();
            self.on_handshake_confirmed(now);
        }
        self.issue_initial_cids();
    }

    /// RFC 9001 §4.1.2 handshake confirmed: drop Handshake keys (§4.9.2), allow key updates.
    pub(crate) fn on_handshake_confirmed(&mut self, now: Timestamp) {
        if !self.handshake.confirm() {
            return;
        }
        // draft-ietf-quic-ack-frequency: only to a peer that advertised min_ack_delay, and never
        // in 0-RTT (we send it in 1-RTT once the handshake is confirmed).
        let peer_supports = self
            .peer_params
            .as_ref()
            .is_some_and(|p| p.min_ack_delay_us.is_some());
        self.ack_frequency
            .request(peer_supports && self.config.ack.request_ack_frequency.is_some());
        self.keys.on_handshake_confirmed();
        self.remember_rtts();
        self.discard_keys(now, Epoch::Handshake);
        self.discard_keys(now, Epoch::Initial);
    }

    /// Client with an RTT store: record each validated path's smoothed RTT, keyed by its
    /// addresses, for later connections (RFC 9002 §6.2.2). At handshake confirmation and when
    /// the connection drains.
    pub(crate) fn remember_rtts(&self) {
        let Some(store) = &self.handshake.rtt_store else {
            return;
        };
        for path in self.paths.values() {
            if path.rtt.has_sample() && path.is_validated() {
                store.remember(path.local, path.remote, path.rtt.smoothed());
            }
        }
    }

    /// RFC 9001 §4.9: discard a level's keys and its recovery state (RFC 9002 §6.4).
    pub(crate) fn discard_keys(&mut self, _now: Timestamp, epoch: Epoch) {
        if !self.keys.discard(epoch) {
            return;
        }
        let space = if epoch == Epoch::Initial {
            SpaceId::Initial
        } else {
            SpaceId::Handshake
        };
        if let Some(path) = self.paths.get_mut(&PathId::ZERO) {
            path.ledger(epoch).drain();
            if epoch == Epoch::Handshake {
                path.ledgers.release_handshake_levels();
            }
            path.acks.remove(&space);
            path.pto_count = 0;
        }
        self.send_spaces.remove(&space);
        // Its packets can no longer be opened (RFC 9001 §4.9), so nothing is received there.
        self.records.remove(&space);
        if epoch == Epoch::Handshake {
            // Coalescing (RFC 9000 §12.2) was for the long-header packets: free its buffer.
            self.scratch = Vec::new();
        }
        self.crypto[epoch.index()] = None;
    }

    /// ConnectionError for an incoming version negotiation packet (RFC 9000 §6.2).
    pub(crate) fn on_version_negotiation(&mut self) {
        self.error = Some(ConnectionError::VersionMismatch);
        self.events
            .push_back(Event::ConnectionLost(ConnectionError::VersionMismatch));
        self.state = State::Drained;
        self.endpoint_events
            .push_back(super::EndpointEvent::Drained);
    }
}

/// Out-of-order CRYPTO data we buffer before CRYPTO_BUFFER_EXCEEDED (RFC 9000 §7.5: at least 4096).
const CRYPTO_BUFFER_LIMIT: u64 = 64 * 1024;

fn encode_params(params: &TransportParameters) -> Vec<u8> {
    let mut out = Vec::new();
    params.encode(&mut out);
    out
}

/// The transport parameters a server configured with `config` sends, but for its CIDs and
/// tokens (what 0-RTT remembers does not depend on them).
pub(crate) fn server_params_for(config: &TransportConfig) -> TransportParameters {
    build_local_params(config, Side::Server, &ConnectionId::EMPTY, None, None, None)
}

/// Our transport parameters (RFC 9000 §18.2, RFC 10069 §2.1, draft-01 §3).
fn build_local_params(
    config: &TransportConfig,
    side: Side,
    scid: &ConnectionId,
    original_dcid: Option<ConnectionId>,
    retry_scid: Option<ConnectionId>,
    reset_token: Option<ResetToken>,
) -> TransportParameters {
    let mut params = TransportParameters {
        max_idle_timeout_ms: u64::try_from(config.idle_timeout.as_millis()).unwrap_or(u64::MAX),
        max_udp_payload_size: 65527,
        ack_delay_exponent: u64::from(config.ack.ack_delay_exponent),
        max_ack_delay_ms: config.ack.max_ack_delay_ms,
        active_connection_id_limit: u64::from(config.active_connection_id_limit.max(2)),
        initial_source_connection_id: Some(*scid),
        enable_qoe_feedback: config.qoe_feedback,
        // RFC 9221 §3: offered only with a receive buffer.
        max_datagram_frame_size: super::datagrams::advertised_frame_size(
            config.datagram_receive_buffer,
        ),
        // draft-ietf-quic-ack-frequency: never above our max_ack_delay.
        min_ack_delay_us: config
            .ack
            .min_ack_delay_us
            .map(|us| us.min(config.ack.max_ack_delay_ms.saturating_mul(1000))),
        ..TransportParameters::default()
    };
    if side == Side::Server {
        params.original_destination_connection_id = original_dcid;
        params.retry_source_connection_id = retry_scid;
        params.stateless_reset_token = reset_token;
    }
    negotiate::advertise(config, &mut params);
    Streams::new(side, config.streams.clone()).fill_transport_params(&mut params);
    params
}

/// The server's `preferred_address` parameter (RFC 9000 §18.2) when it advertises an address:
/// a fresh CID (sequence number 1, never zero-length: `random_cid` gives at least one byte)
/// and the reset token the endpoint derives for it, so a stateless reset after a restart
/// covers it too (§10.3.2).
fn preferred_address(
    config: &ServerConfig,
    rng: &mut ChaCha20Rng,
    params: &ConnectionParams,
) -> Option<PreferredAddress> {
    if config.preferred_address_v4.is_none() && config.preferred_address_v6.is_none() {
        return None;
    }
    let connection_id = random_cid(rng, params.cid_len);
    Some(PreferredAddress {
        address_v4: config.preferred_address_v4,
        address_v6: config.preferred_address_v6,
        connection_id,
        stateless_reset_token: params.reset_key.token_for(&connection_id),
    })
}
