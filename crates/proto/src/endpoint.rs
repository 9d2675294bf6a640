//! The endpoint: routes datagrams to connections by connection ID, accepts new connections,
//! answers unknown versions (RFC 9000 §6) and unknown connection IDs (stateless reset, §10.3).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::BytesMut;
use mpquic_wire::cid::ConnectionId;
use mpquic_wire::header::{Header, HeaderError, PacketKind, PartialDecode, SUPPORTED_VERSIONS};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

use crate::config::{ClientConfig, EndpointConfig, ServerConfig};
use crate::connection::{ConnectError, Connection, ConnectionParams, EndpointEvent, Transmit};
use crate::path::PathId;
use crate::time::Timestamp;

/// Identifies a connection within its endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnectionHandle(pub u64);

/// RFC 9000 §14.1: servers only answer Initial datagrams of at least this size.
const MIN_INITIAL_DATAGRAM: usize = 1200;

/// A QUIC endpoint holding all its connections.
pub struct Endpoint {
    config: Arc<EndpointConfig>,
    server_config: Option<Arc<ServerConfig>>,
    rng: ChaCha20Rng,
    connections: BTreeMap<ConnectionHandle, Connection>,
    /// Destination CID -> connection and the path the CID belongs to (RFC 10069 §5).
    routes: HashMap<ConnectionId, (ConnectionHandle, PathId)>,
    incoming: VecDeque<ConnectionHandle>,
    /// Endpoint-generated datagrams (version negotiation, stateless reset).
    outbox: VecDeque<(Transmit, Vec<u8>)>,
    next_handle: u64,
    next_poll: u64,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("connections", &self.connections.len())
            .finish_non_exhaustive()
    }
}

impl Endpoint {
    /// An endpoint; `server_config` makes it accept connections. `rng_seed` seeds every random
    /// choice it and its connections make (injected for determinism).
    pub fn new(
        config: Arc<EndpointConfig>,
        server_config: Option<Arc<ServerConfig>>,
        rng_seed: [u8; 32],
    ) -> Self {
        Self {
            config,
            server_config,
            rng: ChaCha20Rng::from_seed(rng_seed),
            connections: BTreeMap::new(),
            routes: HashMap::new(),
            incoming: VecDeque::new(),
            outbox: VecDeque::new(),
            next_handle: 0,
            next_poll: 0,
        }
    }

    /// Replace (or remove) the server configuration.
    pub fn set_server_config(&mut self, server_config: Option<Arc<ServerConfig>>) {
        self.server_config = server_config;
    }

    /// Start a connection to `remote` from `local`.
    pub fn connect(
        &mut self,
        now: Timestamp,
        config: &ClientConfig,
        local: SocketAddr,
        remote: SocketAddr,
        server_name: &str,
    ) -> Result<ConnectionHandle, ConnectError> {
        let params = self.connection_params(now, local, remote);
        let conn = Connection::new_client(config, server_name, params)?;
        Ok(self.insert(conn))
    }

    fn connection_params(
        &mut self,
        now: Timestamp,
        local: SocketAddr,
        remote: SocketAddr,
    ) -> ConnectionParams {
        let mut rng_seed = [0u8; 32];
        self.rng.fill_bytes(&mut rng_seed);
        ConnectionParams {
            local,
            remote,
            rng_seed,
            cid_len: self.config.cid_len,
            reset_key: self.config.reset_key,
            now,
        }
    }

    fn insert(&mut self, conn: Connection) -> ConnectionHandle {
        let handle = ConnectionHandle(self.next_handle);
        self.next_handle += 1;
        self.connections.insert(handle, conn);
        self.sync(handle);
        handle
    }

    /// Apply a connection's endpoint events (CID routes, teardown).
    fn sync(&mut self, handle: ConnectionHandle) {
        let Some(conn) = self.connections.get_mut(&handle) else {
            return;
        };
        while let Some(event) = conn.poll_endpoint_event() {
            match event {
                EndpointEvent::NewCid { cid, path, .. } => {
                    self.routes.insert(cid, (handle, path));
                }
                EndpointEvent::RetireCid(cid) => {
                    self.routes.remove(&cid);
                }
                EndpointEvent::Drained => self.routes.retain(|_, (h, _)| *h != handle),
            }
        }
    }

    /// Process a received datagram. Returns the connection it was delivered to, if any.
    pub fn handle_datagram(
        &mut self,
        now: Timestamp,
        local: SocketAddr,
        remote: SocketAddr,
        data: BytesMut,
    ) -> Option<ConnectionHandle> {
        let len = data.len();
        let (first, rest) = match PartialDecode::new(data, self.config.cid_len) {
            Ok(ok) => ok,
            Err(HeaderError::UnsupportedVersion { dcid, scid, .. }) => {
                if self.server_config.is_some() && len >= MIN_INITIAL_DATAGRAM {
                    self.send_version_negotiation(local, remote, dcid, scid);
                }
                return None;
            }
            Err(_) => return None,
        };
        let dcid = first.dcid();
        if let Some(&(handle, path)) = self.routes.get(&dcid) {
            let conn = self.connections.get_mut(&handle)?;
            conn.handle_datagram(now, local, remote, first, rest, Some(path));
            self.sync(handle);
            return Some(handle);
        }
        match first.kind() {
            PacketKind::Initial => self.accept_initial(now, local, remote, first, rest, len),
            PacketKind::Short => {
                if let Some(handle) = self.stateless_reset_target(first.packet(), rest.as_deref()) {
                    return Some(handle);
                }
                self.send_stateless_reset(local, remote, &dcid, len);
                None
            }
            _ => None,
        }
    }

    fn accept_initial(
        &mut self,
        now: Timestamp,
        local: SocketAddr,
        remote: SocketAddr,
        first: PartialDecode,
        rest: Option<BytesMut>,
        len: usize,
    ) -> Option<ConnectionHandle> {
        let server = self.server_config.clone()?;
        // RFC 9000 §14.1: drop Initial datagrams below 1200 bytes; §7.2: DCID at least 8 bytes.
        if len < MIN_INITIAL_DATAGRAM || first.dcid().len() < 8 {
            return None;
        }
        let open = self
            .connections
            .values()
            .filter(|c| !c.is_drained())
            .count();
        if open >= server.max_connections {
            return None;
        }
        let client_dcid = first.dcid();
        let client_scid = first.scid()?;
        let params = self.connection_params(now, local, remote);
        let conn = Connection::new_server(&server, client_dcid, client_scid, params).ok()?;
        let handle = self.insert(conn);
        // The client keeps using its chosen DCID until it sees our SCID (RFC 9000 §7.2).
        self.routes.insert(client_dcid, (handle, 0));
        self.incoming.push_back(handle);
        let conn = self.connections.get_mut(&handle)?;
        conn.handle_datagram(now, local, remote, first, rest, Some(0));
        self.sync(handle);
        Some(handle)
    }

    /// RFC 9000 §10.3.1: an unroutable datagram whose last 16 bytes equal a reset token the peer
    /// of one of our connections issued is a stateless reset for that connection.
    fn stateless_reset_target(
        &mut self,
        first: &[u8],
        rest: Option<&[u8]>,
    ) -> Option<ConnectionHandle> {
        let tail = rest.filter(|r| !r.is_empty()).unwrap_or(first);
        if first.len() + rest.map_or(0, <[u8]>::len) < 21 || tail.len() < 16 {
            return None;
        }
        let mut token = [0u8; 16];
        token.copy_from_slice(&tail[tail.len() - 16..]);
        let handle = self
            .connections
            .iter()
            .find(|(_, c)| c.is_reset_token(&token))
            .map(|(h, _)| *h)?;
        let now = self
            .connections
            .get(&handle)
            .and_then(|c| c.poll_timeout())
            .unwrap_or_default();
        self.connections
            .get_mut(&handle)?
            .handle_stateless_reset(now);
        self.sync(handle);
        Some(handle)
    }

    fn send_version_negotiation(
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
        let size = buf.len();
        self.outbox.push_back((
            Transmit {
                local,
                remote,
                size,
            },
            buf,
        ));
    }

    /// RFC 9000 §10.3: answer a short-header packet for an unknown CID with a stateless reset
    /// smaller than it (to avoid loops), if it is large enough to hide the token.
    fn send_stateless_reset(
        &mut self,
        local: SocketAddr,
        remote: SocketAddr,
        dcid: &ConnectionId,
        trigger_len: usize,
    ) {
        const MIN_RESET: usize = 21;
        if trigger_len <= MIN_RESET + 1 || self.outbox.len() > 64 {
            return;
        }
        let size = (trigger_len - 1).min(43);
        let mut buf = vec![0u8; size];
        self.rng.fill_bytes(&mut buf[..size - 16]);
        buf[0] = 0x40 | (buf[0] & 0x3f);
        let token = crate::connection::reset_token_for_endpoint(&self.config.reset_key, dcid);
        buf[size - 16..].copy_from_slice(&token.0);
        self.outbox.push_back((
            Transmit {
                local,
                remote,
                size,
            },
            buf,
        ));
    }

    /// Next connection accepted by the server side.
    pub fn accept(&mut self) -> Option<ConnectionHandle> {
        self.incoming.pop_front()
    }

    pub fn connection(&self, handle: ConnectionHandle) -> Option<&Connection> {
        self.connections.get(&handle)
    }

    /// Mutable access; call [`Endpoint::after_connection_call`] afterwards if CIDs may change.
    pub fn connection_mut(&mut self, handle: ConnectionHandle) -> Option<&mut Connection> {
        self.connections.get_mut(&handle)
    }

    /// Apply CID changes a direct connection call may have made.
    pub fn after_connection_call(&mut self, handle: ConnectionHandle) {
        self.sync(handle);
    }

    /// Handles of all connections.
    pub fn handles(&self) -> Vec<ConnectionHandle> {
        self.connections.keys().copied().collect()
    }

    /// Forget a drained connection.
    pub fn remove(&mut self, handle: ConnectionHandle) -> Option<Connection> {
        self.routes.retain(|_, (h, _)| *h != handle);
        self.connections.remove(&handle)
    }

    /// Next datagram to send from any connection (round robin), written into `buf`.
    pub fn poll_transmit(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        if let Some((t, data)) = self.outbox.pop_front() {
            buf.clear();
            buf.extend_from_slice(&data);
            return Some(t);
        }
        // Round robin from the cursor, wrapping around once.
        let mut cursor = ConnectionHandle(self.next_poll);
        for _ in 0..self.connections.len() {
            let next = match self.connections.range_mut(cursor..).next() {
                Some(entry) => Some(entry),
                None => self.connections.iter_mut().next(),
            };
            let (&h, conn) = next?;
            cursor = ConnectionHandle(h.0.wrapping_add(1));
            if let Some(t) = conn.poll_transmit(now, buf) {
                self.next_poll = h.0 + 1;
                self.sync(h);
                return Some(t);
            }
            self.sync(h);
        }
        None
    }

    /// Earliest timer of any connection.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        self.connections
            .values()
            .filter_map(Connection::poll_timeout)
            .min()
    }

    /// Run expired timers of every connection.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        let due: Vec<ConnectionHandle> = self
            .connections
            .iter()
            .filter(|(_, c)| c.poll_timeout().is_some_and(|t| t <= now))
            .map(|(h, _)| *h)
            .collect();
        for h in due {
            if let Some(c) = self.connections.get_mut(&h) {
                c.handle_timeout(now);
            }
            self.sync(h);
        }
    }
}
