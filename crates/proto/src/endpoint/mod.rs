//! The endpoint: routes datagrams to connections by connection ID, accepts new connections
//! (`accept`: authentication, limits, Retry), and answers what no connection owns
//! (`stateless`: version negotiation, stateless reset, Retry, refusals).
//!
//! Every per-datagram operation is O(1) in the number of connections: routing and reset-token
//! lookups are hash maps, the open and handshaking counts are kept as counters, and each
//! connection's entry lists its own CIDs and tokens so that removing it touches only those.
//! Timers and transmissions are O(log n) per connection that has something to do: each
//! connection's next timeout is kept in an ordered index, and `poll_transmit` visits only
//! connections that may have something to send (one that had an event since it last had
//! nothing: a datagram, a timer, an application call).

mod accept;
mod incoming;
mod stateless;

pub use incoming::{AcceptError, Incoming, RetryError};

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::BytesMut;
use mpquic_wire::cid::{ConnectionId, ResetToken};
use mpquic_wire::header::{HeaderError, PacketKind, PartialDecode};
use rand_chacha::ChaCha20Rng;
use rand_core::{RngCore, SeedableRng};

use crate::config::{ClientConfig, EndpointConfig, ServerConfig};
use crate::connection::{
    ConnectError, Connection, ConnectionParams, EndpointEvent, ResetKey, Transmit,
};
use crate::crypto::PacketProtection;
use crate::path::PathId;
use crate::time::Timestamp;

/// Identifies a connection within its endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ConnectionHandle(
    /// The endpoint's number for the connection.
    pub u64,
);

/// RFC 9000 §14.1: servers only answer Initial datagrams of at least this size.
const MIN_INITIAL_DATAGRAM: usize = 1200;
/// Endpoint-generated datagrams waiting to be sent, at most: beyond it stateless answers are
/// dropped rather than queued (they are responses to unauthenticated input).
const MAX_OUTBOX: usize = 256;
/// Peer reset tokens indexed per connection before retired ones are pruned.
const MAX_TRACKED_PEER_TOKENS: usize = 32;

/// What an endpoint counts, for operators and tests.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct EndpointStats {
    /// Initial datagrams dropped because their first packet did not authenticate.
    pub unauthenticated_initials: u64,
    /// Retry packets sent (RFC 9000 §8.1.2).
    pub retries_sent: u64,
    /// Connection attempts refused with CONNECTION_REFUSED (limits reached).
    pub refused: u64,
    /// Initials whose token failed validation (closed with INVALID_TOKEN when it was a Retry
    /// token, otherwise treated as having none).
    pub invalid_tokens: u64,
    /// Stateless resets sent (RFC 9000 §10.3).
    pub stateless_resets_sent: u64,
}

/// A connection and what the endpoint tracks for it.
struct Entry {
    conn: Connection,
    /// Destination CIDs routed to it (removed with it).
    cids: Vec<ConnectionId>,
    /// Reset tokens its peer issued (RFC 9000 §10.3.1), indexed in `reset_tokens`.
    peer_tokens: Vec<ResetToken>,
    /// Counted in `handshaking`.
    handshaking: bool,
    /// Counted in `open`.
    open: bool,
    /// Its entry in `Endpoint::timers` (none while `stale`).
    timer: Option<Timestamp>,
    /// Something happened since its timer was last computed: listed in `Endpoint::stale`, out
    /// of `Endpoint::timers` until [`Endpoint::refresh_timers`].
    stale: bool,
    /// Handed out by `connection_mut` since the last sync: its timer may be stale.
    dirty: bool,
    /// Listed in `Endpoint::dirty`.
    queued: bool,
    /// Listed in `Endpoint::touched`.
    touched: bool,
}

/// A QUIC endpoint holding all its connections.
pub struct Endpoint {
    config: Arc<EndpointConfig>,
    /// `config.reset_key` ready for HMAC, shared with every connection.
    reset_key: ResetKey,
    server_config: Option<Arc<ServerConfig>>,
    rng: ChaCha20Rng,
    /// Boxed: a `Connection` is several kB, and B-tree leaves (11 slots, half full when filled
    /// in handle order) would hold about as much again unused.
    connections: BTreeMap<ConnectionHandle, Box<Entry>>,
    /// Destination CID -> connection and the path the CID belongs to (RFC 10069 §5).
    routes: HashMap<ConnectionId, (ConnectionHandle, PathId)>,
    /// Peer-issued stateless reset token -> connection.
    reset_tokens: HashMap<ResetToken, ConnectionHandle>,
    /// Connections not yet drained.
    open: usize,
    /// Server connections whose handshake has not completed.
    handshaking: usize,
    incoming: VecDeque<ConnectionHandle>,
    /// Client Initials are handed to the application ([`Endpoint::set_incoming_decisions`]).
    incoming_decisions: bool,
    /// Decisions not yet taken from [`Endpoint::poll_incoming`].
    incoming_queue: VecDeque<Incoming>,
    /// Destination CIDs of Initials waiting for a decision, with the datagrams that arrived
    /// for them meanwhile.
    pending: HashMap<ConnectionId, Vec<incoming::InitialDatagram>>,
    /// Each connection's next timeout.
    timers: BTreeSet<(Timestamp, ConnectionHandle)>,
    /// Connections whose timer must be recomputed (see `Entry::stale`). Computing a
    /// connection's timer walks all its paths, so it is done once when the timer is asked
    /// for, not after every datagram sent or received.
    stale: Vec<ConnectionHandle>,
    /// Connections whose timer may be stale (see `Entry::dirty`).
    dirty: Vec<ConnectionHandle>,
    /// Connections that may have something to send.
    ready: BTreeSet<ConnectionHandle>,
    /// Connections that had any activity since the caller last took this list.
    touched: Vec<ConnectionHandle>,
    /// Endpoint-generated datagrams (version negotiation, stateless reset, Retry, refusals).
    outbox: VecDeque<(Transmit, Vec<u8>)>,
    stats: EndpointStats,
    next_handle: u64,
    next_poll: u64,
    /// 1-RTT packet protection of every connection: real, except in the simulator
    /// ([`Endpoint::new_for_simulation`]).
    protection: PacketProtection,
    /// What the sockets allow for path MTU discovery ([`Endpoint::set_socket_mtu`]).
    socket_mtu: crate::mtud::SocketMtu,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoint")
            .field("connections", &self.connections.len())
            .field("handshaking", &self.handshaking)
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
            reset_key: ResetKey::new(&config.reset_key),
            config,
            server_config,
            rng: ChaCha20Rng::from_seed(rng_seed),
            connections: BTreeMap::new(),
            routes: HashMap::new(),
            reset_tokens: HashMap::new(),
            open: 0,
            handshaking: 0,
            incoming: VecDeque::new(),
            incoming_decisions: false,
            incoming_queue: VecDeque::new(),
            pending: HashMap::new(),
            timers: BTreeSet::new(),
            stale: Vec::new(),
            dirty: Vec::new(),
            ready: BTreeSet::new(),
            touched: Vec::new(),
            outbox: VecDeque::new(),
            stats: EndpointStats::default(),
            next_handle: 0,
            next_poll: 0,
            protection: PacketProtection::Real,
            socket_mtu: crate::mtud::SocketMtu::default(),
        }
    }

    /// What the I/O layer knows of its sockets, for the connections created from now on: the
    /// largest UDP payload they can send, and whether they set the don't-fragment bit (path MTU
    /// discovery needs it, RFC 8899 §3: a fragmented probe would pass; without it discovery
    /// stays off and the configured fixed size is used).
    pub fn set_socket_mtu(&mut self, socket_mtu: crate::mtud::SocketMtu) {
        self.socket_mtu = socket_mtu;
    }

    /// **Simulator only.** [`Endpoint::new`] whose connections protect 1-RTT packets as
    /// `protection` says. [`PacketProtection::SimulationOnly`] is **not secure**: payloads travel
    /// in plaintext under a checksum tag (see `crate::crypto::sim`); it exists so the network
    /// simulator does not spend its time in AES-GCM, and only the simulator adapter
    /// (`mpquic-lab`) calls this. The TLS handshake, Initial and Handshake packets stay real,
    /// and a peer with real keys cannot talk to such an endpoint (every 1-RTT packet fails
    /// authentication). The runtime (`mpquic`) and the command-line client and server only
    /// use [`Endpoint::new`].
    pub fn new_for_simulation(
        config: Arc<EndpointConfig>,
        server_config: Option<Arc<ServerConfig>>,
        rng_seed: [u8; 32],
        protection: PacketProtection,
    ) -> Self {
        Self {
            protection,
            ..Self::new(config, server_config, rng_seed)
        }
    }

    /// How this endpoint's connections protect 1-RTT packets.
    pub fn packet_protection(&self) -> PacketProtection {
        self.protection
    }

    /// Replace (or remove) the server configuration.
    pub fn set_server_config(&mut self, server_config: Option<Arc<ServerConfig>>) {
        self.server_config = server_config;
    }

    /// The server configuration, if this endpoint accepts connections.
    pub fn server_config(&self) -> Option<&Arc<ServerConfig>> {
        self.server_config.as_ref()
    }

    /// The endpoint's own configuration (CID length, reset key).
    pub fn config(&self) -> &Arc<EndpointConfig> {
        &self.config
    }

    /// What the endpoint has counted so far.
    pub fn stats(&self) -> EndpointStats {
        self.stats
    }

    /// Connections not yet drained, and of them the server handshakes still in progress.
    pub fn open_connections(&self) -> (usize, usize) {
        (self.open, self.handshaking)
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
        config.validate()?;
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
            reset_key: self.reset_key.clone(),
            now,
            protection: self.protection,
            socket_mtu: self.socket_mtu,
        }
    }

    fn insert(&mut self, conn: Connection) -> ConnectionHandle {
        let handle = ConnectionHandle(self.next_handle);
        self.next_handle += 1;
        self.connections.insert(
            handle,
            Box::new(Entry {
                conn,
                cids: Vec::new(),
                peer_tokens: Vec::new(),
                handshaking: false,
                open: false,
                timer: None,
                stale: false,
                dirty: false,
                queued: false,
                touched: false,
            }),
        );
        self.ready.insert(handle);
        self.sync(handle);
        handle
    }

    /// Apply a connection's endpoint events (CID routes, reset tokens, teardown) and update
    /// the open and handshaking counts.
    fn sync(&mut self, handle: ConnectionHandle) {
        let Some(entry) = self.connections.get_mut(&handle) else {
            return;
        };
        while let Some(event) = entry.conn.poll_endpoint_event() {
            match event {
                EndpointEvent::NewCid { cid, path, .. } => {
                    self.routes.insert(cid, (handle, path));
                    // Exact growth: a handful per connection, held as long as it lives.
                    entry.cids.reserve_exact(1);
                    entry.cids.push(cid);
                }
                EndpointEvent::RetireCid(cid) => {
                    if self.routes.get(&cid).is_some_and(|(h, _)| *h == handle) {
                        self.routes.remove(&cid);
                    }
                    entry.cids.retain(|c| *c != cid);
                }
                EndpointEvent::PeerResetToken(token) => {
                    if entry.peer_tokens.len() >= MAX_TRACKED_PEER_TOKENS {
                        // Keep the index to the tokens the connection still honours, so a
                        // peer churning CIDs cannot grow it without bound.
                        let conn = &entry.conn;
                        entry.peer_tokens.retain(|t| {
                            let live = conn.is_reset_token(&t.0);
                            if !live && self.reset_tokens.get(t) == Some(&handle) {
                                self.reset_tokens.remove(t);
                            }
                            live
                        });
                    }
                    if !entry.peer_tokens.contains(&token) {
                        self.reset_tokens.insert(token, handle);
                        entry.peer_tokens.reserve_exact(1);
                        entry.peer_tokens.push(token);
                    }
                }
                EndpointEvent::Drained => {
                    Self::unroute(&mut self.routes, &mut self.reset_tokens, handle, entry)
                }
            }
        }
        let open = !entry.conn.is_drained();
        let handshaking = open && !entry.conn.is_established() && !entry.conn.is_closed();
        let handshaking = handshaking && entry.conn.side() == mpquic_wire::stream_id::Side::Server;
        if open != entry.open {
            entry.open = open;
            if open {
                self.open += 1;
            } else {
                self.open -= 1;
            }
        }
        if handshaking != entry.handshaking {
            entry.handshaking = handshaking;
            if handshaking {
                self.handshaking += 1;
            } else {
                self.handshaking -= 1;
            }
        }
        if !entry.touched {
            entry.touched = true;
            self.touched.push(handle);
        }
        entry.dirty = false;
        if !entry.stale {
            entry.stale = true;
            if let Some(old) = entry.timer.take() {
                self.timers.remove(&(old, handle));
            }
            self.stale.push(handle);
        }
    }

    /// Recompute the timers of the connections that had activity since their last computation.
    fn refresh_timers(&mut self) {
        for handle in self.stale.drain(..) {
            let Some(entry) = self.connections.get_mut(&handle) else {
                continue;
            };
            entry.stale = false;
            entry.timer = entry.conn.poll_timeout();
            if let Some(t) = entry.timer {
                self.timers.insert((t, handle));
            }
        }
    }

    /// Bring the timer index up to date for connections handed out by `connection_mut`.
    fn sync_dirty(&mut self) {
        // Taken and put back (emptied): the list keeps its allocation.
        let mut dirty = std::mem::take(&mut self.dirty);
        for handle in dirty.drain(..) {
            if let Some(entry) = self.connections.get_mut(&handle) {
                entry.queued = false;
                if entry.dirty {
                    self.sync(handle);
                }
            }
        }
        self.dirty = dirty;
    }

    /// Remove every route and reset token that points at `handle`.
    fn unroute(
        routes: &mut HashMap<ConnectionId, (ConnectionHandle, PathId)>,
        reset_tokens: &mut HashMap<ResetToken, ConnectionHandle>,
        handle: ConnectionHandle,
        entry: &mut Entry,
    ) {
        for cid in entry.cids.drain(..) {
            if routes.get(&cid).is_some_and(|(h, _)| *h == handle) {
                routes.remove(&cid);
            }
        }
        for token in entry.peer_tokens.drain(..) {
            if reset_tokens.get(&token) == Some(&handle) {
                reset_tokens.remove(&token);
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
        self.handle_datagram_ecn(now, local, remote, None, data)
    }

    /// [`Endpoint::handle_datagram`] with the ECN codepoint the datagram arrived with (RFC
    /// 9000 §13.4.1: counted per packet number space and reported in ACK frames).
    pub fn handle_datagram_ecn(
        &mut self,
        now: Timestamp,
        local: SocketAddr,
        remote: SocketAddr,
        ecn: Option<crate::ecn::EcnCodepoint>,
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
            let conn = &mut self.connections.get_mut(&handle)?.conn;
            conn.rx_ecn = ecn;
            conn.handle_datagram(now, local, remote, first, rest, Some(path));
            conn.rx_ecn = None;
            self.ready.insert(handle);
            self.sync(handle);
            return Some(handle);
        }
        if matches!(first.kind(), PacketKind::Initial | PacketKind::ZeroRtt)
            && self.pending.contains_key(&dcid)
        {
            // The client's attempt awaits the application's decision: keep this for it.
            let datagram = incoming::InitialDatagram {
                local,
                remote,
                ecn,
                first,
                rest,
            };
            self.buffer_for_pending(datagram);
            return None;
        }
        match first.kind() {
            PacketKind::Initial => self.accept_initial(now, local, remote, first, rest, (len, ecn)),
            PacketKind::Short => {
                if let Some(handle) = self.stateless_reset_target(now, first.packet(), &rest) {
                    return Some(handle);
                }
                self.send_stateless_reset(local, remote, &dcid, len);
                None
            }
            _ => None,
        }
    }

    /// RFC 9000 §10.3.1: an unroutable datagram whose last 16 bytes equal a reset token the peer
    /// of one of our connections issued is a stateless reset for that connection.
    fn stateless_reset_target(
        &mut self,
        now: Timestamp,
        first: &[u8],
        rest: &Option<BytesMut>,
    ) -> Option<ConnectionHandle> {
        let rest = rest.as_deref();
        let tail = rest.filter(|r| !r.is_empty()).unwrap_or(first);
        if first.len() + rest.map_or(0, <[u8]>::len) < 21 || tail.len() < 16 {
            return None;
        }
        let mut token = [0u8; 16];
        token.copy_from_slice(&tail[tail.len() - 16..]);
        let handle = *self.reset_tokens.get(&ResetToken(token))?;
        let entry = self.connections.get_mut(&handle)?;
        // The index may hold tokens of CIDs the peer has since retired: ask the connection.
        if !entry.conn.is_reset_token(&token) {
            return None;
        }
        entry.conn.handle_stateless_reset(now);
        self.ready.insert(handle);
        self.sync(handle);
        Some(handle)
    }

    /// Next connection accepted by the server side.
    pub fn accept(&mut self) -> Option<ConnectionHandle> {
        self.incoming.pop_front()
    }

    /// The connection behind `handle`, if the endpoint still holds it.
    pub fn connection(&self, handle: ConnectionHandle) -> Option<&Connection> {
        self.connections.get(&handle).map(|e| &e.conn)
    }

    /// Mutable access; call [`Endpoint::after_connection_call`] afterwards if CIDs may change
    /// (the endpoint also catches up on its own at the next poll).
    pub fn connection_mut(&mut self, handle: ConnectionHandle) -> Option<&mut Connection> {
        let entry = self.connections.get_mut(&handle)?;
        entry.dirty = true;
        if !entry.queued {
            entry.queued = true;
            self.dirty.push(handle);
        }
        if !entry.touched {
            entry.touched = true;
            self.touched.push(handle);
        }
        self.ready.insert(handle);
        Some(&mut entry.conn)
    }

    /// The next application event of a connection. Unlike going through
    /// [`Endpoint::connection_mut`], this does not count as activity (see
    /// [`Endpoint::take_touched`]): taking events changes nothing the connection sends.
    pub fn poll_event(&mut self, handle: ConnectionHandle) -> Option<crate::Event> {
        self.connections.get_mut(&handle)?.conn.poll_event()
    }

    /// Move into `out` every connection that received a datagram, ran a timer, sent, or was
    /// handed out by `connection_mut` since the last call: the only ones whose events or state
    /// can have changed. A runtime processes these instead of scanning every connection.
    pub fn take_touched(&mut self, out: &mut Vec<ConnectionHandle>) {
        for handle in self.touched.drain(..) {
            if let Some(entry) = self.connections.get_mut(&handle) {
                entry.touched = false;
                out.push(handle);
            }
        }
    }

    /// Connections held, drained or not.
    pub fn connection_count(&self) -> usize {
        self.connections.len()
    }

    /// Apply CID changes a direct connection call may have made.
    pub fn after_connection_call(&mut self, handle: ConnectionHandle) {
        self.sync(handle);
    }

    /// Handles of all connections.
    pub fn handles(&self) -> Vec<ConnectionHandle> {
        self.connections.keys().copied().collect()
    }

    /// Forget a connection (normally once drained).
    pub fn remove(&mut self, handle: ConnectionHandle) -> Option<Connection> {
        let mut entry = self.connections.remove(&handle)?;
        Self::unroute(&mut self.routes, &mut self.reset_tokens, handle, &mut entry);
        if let Some(t) = entry.timer {
            self.timers.remove(&(t, handle));
        }
        self.ready.remove(&handle);
        self.dirty.retain(|h| *h != handle);
        self.stale.retain(|h| *h != handle);
        self.open -= usize::from(entry.open);
        self.handshaking -= usize::from(entry.handshaking);
        Some(entry.conn)
    }

    /// Next datagram to send from any connection (round robin), written into `buf`.
    pub fn poll_transmit(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        if let Some((t, data)) = self.outbox.pop_front() {
            buf.clear();
            buf.extend_from_slice(&data);
            return Some(t);
        }
        self.sync_dirty();
        // Round robin over the connections that may send, from the cursor, wrapping around
        // once; one with nothing to send leaves the set until its next event.
        let mut cursor = ConnectionHandle(self.next_poll);
        for _ in 0..self.ready.len() {
            let next = self.ready.range(cursor..).next().or(self.ready.first());
            let h = *next?;
            cursor = ConnectionHandle(h.0.wrapping_add(1));
            let Some(entry) = self.connections.get_mut(&h) else {
                self.ready.remove(&h);
                continue;
            };
            let sent = entry.conn.poll_transmit(now, buf);
            if sent.is_none() {
                self.ready.remove(&h);
            }
            // Sending (or finding nothing to send) moves loss, pacing and ACK timers.
            self.sync(h);
            if let Some(t) = sent {
                self.next_poll = h.0 + 1;
                return Some(t);
            }
        }
        None
    }

    /// Earliest timer of any connection. Computes the timers of connections that had activity
    /// since they were last computed on every call; [`Endpoint::next_timeout`] keeps them.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        let indexed = self.timers.first().map(|(t, _)| *t);
        let stale = self.stale.iter().chain(&self.dirty).filter_map(|h| {
            let entry = self.connections.get(h)?;
            (entry.stale || entry.dirty).then(|| entry.conn.poll_timeout())?
        });
        indexed.into_iter().chain(stale).min()
    }

    /// Earliest timer of any connection, bringing the timer index up to date first (cheaper
    /// than [`Endpoint::poll_timeout`] when called repeatedly).
    pub fn next_timeout(&mut self) -> Option<Timestamp> {
        self.sync_dirty();
        self.refresh_timers();
        self.timers.first().map(|(t, _)| *t)
    }

    /// Run expired timers of every connection.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.sync_dirty();
        self.refresh_timers();
        let due: Vec<ConnectionHandle> = self
            .timers
            .iter()
            .take_while(|(t, _)| *t <= now)
            .map(|(_, h)| *h)
            .collect();
        for h in due {
            if let Some(e) = self.connections.get_mut(&h) {
                e.conn.handle_timeout(now);
            }
            self.ready.insert(h);
            self.sync(h);
        }
    }
}
