//! [`QuicNode`]: an `mpquic_proto` endpoint plus its application, driven by
//! the simulator as a [`Node`].
//!
//! Virtual time maps one-to-one onto protocol time
//! (`Timestamp::from_nanos(sim_time)`). The simulator hands every datagram,
//! timer and wake-up to the node; after each one the node runs the
//! endpoint, then the application ([`ClientApp`] / [`ServerApp`]), and the
//! simulator drains [`Node::poll_transmit`].

use std::cell::RefCell;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::BytesMut;
use mpquic_netsim::{Datagram, Ecn, Node, SimTime};
use mpquic_proto::crypto::identity::LabIdentity;
use mpquic_proto::crypto::resumption::{
    client_enable_0rtt, memory_session_store, server_allow_0rtt,
};
use mpquic_proto::crypto::PacketProtection;
use mpquic_proto::EcnCodepoint;
use mpquic_proto::{
    ClientConfig, Connection, ConnectionHandle, Endpoint, EndpointConfig, ServerConfig, Timestamp,
    TransportConfig,
};

use crate::error::LabError;
use crate::h3sim::{Protocol, H3_ALPN};
use crate::race::HandshakeRace;
use crate::workload::{ClientApp, ServerApp};

/// ALPN of simulated connections.
pub const ALPN: &[u8] = b"mpquic-sim";

/// Server name the client asks for (the test certificate's name).
const SERVER_NAME: &str = "localhost";

/// How far a stalled timer is pushed (see [`QuicNode::timer_stalls`]).
pub const STALL_BACKOFF: SimTime = mpquic_netsim::time::MILLISECOND;

/// Size of the buffers received datagrams are copied into (see `QuicNode::rx_arena`).
const RX_ARENA: usize = 64 * 1024;
/// Payload buffers kept for reuse, per thread (see [`SPARE`]).
const MAX_SPARE: usize = 256;
/// Capacity of a new send buffer (the largest datagram the lab sends fits).
const TX_CAPACITY: usize = 1500;

thread_local! {
    /// Payload buffers of received datagrams, reused for the next datagrams sent by any node
    /// of the thread's simulations. One pool for all nodes, not one per node: in a download
    /// the server sends most datagrams and the client receives them, so per-node pools left
    /// the sender allocating each payload and the receiver freeing it. Per thread (not
    /// shared across threads): suites run simulations on several threads, each entirely on
    /// one. Only the allocations change, not what is sent.
    static SPARE: RefCell<Vec<Vec<u8>>> = const { RefCell::new(Vec::new()) };
}

/// How a simulated client connects.
#[derive(Debug, Clone, Copy, Default)]
pub struct ClientOptions {
    /// The protocol of the requests (and the ALPN).
    pub protocol: Protocol,
    /// Session resumption and 0-RTT across successive connections
    /// (`transport.zero_rtt`).
    pub zero_rtt: bool,
    /// Race the first handshake over every interface (`transport.race_paths`, see
    /// [`crate::race`]); without it the client connects from interface 0.
    pub race: bool,
    /// When the client moves path 0 to its second interface (`transport.migrate_at`).
    pub migrate_at: Option<SimTime>,
    /// The certificate the client expects and whether it offers certificate compression
    /// (`transport.cert_extra_names`, `transport.cert_compression`).
    pub identity: LabIdentity,
}

/// How a simulated server answers.
#[derive(Debug, Clone, Copy, Default)]
pub struct ServerOptions {
    /// Issue session tickets and accept 0-RTT (`transport.zero_rtt`; rustls' single-use
    /// tickets, see `mpquic_proto::crypto::resumption`).
    pub zero_rtt: bool,
    /// The certificate the server presents and whether it compresses it.
    pub identity: LabIdentity,
}

/// The application running on a node.
#[derive(Debug)]
pub enum App {
    /// Client workload (boxed: far larger than the server's state).
    Client(Box<ClientApp>),
    /// Server workload.
    Server(ServerApp),
}

/// A QUIC endpoint inside the simulator.
pub struct QuicNode {
    endpoint: Endpoint,
    app: App,
    tx_buf: Vec<u8>,
    /// Received datagrams are copied into this buffer and handed to the endpoint as slices of
    /// it: one allocation per [`RX_ARENA`] bytes instead of two per datagram.
    rx_arena: BytesMut,
    /// Time of the last `handle_timeout` call.
    last_timeout: Option<SimTime>,
    /// Consecutive polls whose deadline was not after `last_timeout`.
    overdue_polls: u32,
    /// Deadlines that were still due after being handled (see `timer_stalls`).
    stalls: u64,
}

impl std::fmt::Debug for QuicNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuicNode")
            .field("app", &self.app)
            .finish_non_exhaustive()
    }
}

impl QuicNode {
    /// A client connecting from `interfaces[0]` to `servers[0]` at time 0;
    /// after the handshake it opens one path from each further interface
    /// `i` to `servers[i]` (the server address as seen from interface `i`).
    /// `rng_seed` seeds every random choice of the endpoint. `protection` is
    /// [`PacketProtection::Real`] unless the scenario asks for the simulator's stand-in
    /// (`transport.crypto = "sim"`, not secure; both nodes must agree).
    pub fn client(
        transport: TransportConfig,
        endpoint_config: Arc<EndpointConfig>,
        rng_seed: [u8; 32],
        protection: PacketProtection,
        interfaces: &[SocketAddr],
        servers: &[SocketAddr],
        response_sizes: &[u64],
    ) -> Result<Self, LabError> {
        Self::client_with(
            ClientOptions::default(),
            transport,
            endpoint_config,
            rng_seed,
            protection,
            (interfaces, servers),
            response_sizes,
        )
    }

    /// [`QuicNode::client`] with `options`: the requests over `options.protocol` (ALPN [`ALPN`]
    /// for the custom protocol, `h3` for HTTP/3). With `options.zero_rtt` the client's TLS
    /// configuration keeps one session store for all its connections (the configuration
    /// lives in the [`ClientApp`] for the whole run) and offers 0-RTT; the app then writes
    /// each new connection's requests as soon as 0-RTT keys are available.
    pub fn client_with(
        options: ClientOptions,
        transport: TransportConfig,
        endpoint_config: Arc<EndpointConfig>,
        rng_seed: [u8; 32],
        protection: PacketProtection,
        (interfaces, servers): (&[SocketAddr], &[SocketAddr]),
        response_sizes: &[u64],
    ) -> Result<Self, LabError> {
        let ClientOptions {
            protocol,
            zero_rtt,
            race,
            migrate_at,
            identity,
        } = options;
        let alpn = match protocol {
            Protocol::Custom => ALPN,
            Protocol::H3 => H3_ALPN,
        };
        let (mut tls, _) = identity.tls_configs(&[alpn]);
        if zero_rtt {
            let mut c = Arc::unwrap_or_clone(tls);
            client_enable_0rtt(&mut c, memory_session_store());
            tls = Arc::new(c);
        }
        let config = ClientConfig::new(tls, Arc::new(transport));
        let mut endpoint =
            Endpoint::new_for_simulation(endpoint_config, None, rng_seed, protection);
        let (Some(&local), Some(&remote)) = (interfaces.first(), servers.first()) else {
            return Err(LabError::invalid(
                "paths",
                "the client needs at least one interface",
            ));
        };
        let pairs: Vec<_> = interfaces
            .iter()
            .copied()
            .zip(servers.iter().copied())
            .collect();
        let race = if race && pairs.len() > 1 {
            Some(
                HandshakeRace::start(&mut endpoint, 0, &config, &pairs, SERVER_NAME)
                    .map_err(|e| LabError::invalid("client", e))?,
            )
        } else {
            None
        };
        let handle = match race.as_ref().and_then(HandshakeRace::first) {
            Some(h) => h,
            None => endpoint
                .connect(Timestamp::ZERO, &config, local, remote, SERVER_NAME)
                .map_err(|e| LabError::invalid("client", e.to_string()))?,
        };
        let mut app = ClientApp::new(handle, response_sizes, &pairs[1..]);
        if let (Some(at), Some(&(to, _))) = (migrate_at, pairs.get(1)) {
            app.set_migration(at, to);
        }
        if let Some(race) = race {
            app.set_race(race, pairs);
        }
        app.set_redial(config, local, remote, SERVER_NAME);
        app.set_protocol(protocol);
        app.set_zero_rtt(zero_rtt);
        Ok(Self::with_app(endpoint, App::Client(Box::new(app))))
    }

    /// A server accepting connections and answering requests (`protection` as for
    /// [`QuicNode::client`]): over the custom protocol, or over HTTP/3 on connections
    /// whose ALPN is `h3`.
    pub fn server(
        transport: TransportConfig,
        endpoint_config: Arc<EndpointConfig>,
        rng_seed: [u8; 32],
        protection: PacketProtection,
    ) -> Self {
        Self::server_with(
            transport,
            endpoint_config,
            rng_seed,
            protection,
            ServerOptions::default(),
        )
    }

    /// [`QuicNode::server`] with `options`: session tickets and 0-RTT, the certificate.
    pub fn server_with(
        transport: TransportConfig,
        endpoint_config: Arc<EndpointConfig>,
        rng_seed: [u8; 32],
        protection: PacketProtection,
        options: ServerOptions,
    ) -> Self {
        let (_, mut tls) = options.identity.tls_configs(&[ALPN, H3_ALPN]);
        if options.zero_rtt {
            let mut c = Arc::unwrap_or_clone(tls);
            server_allow_0rtt(&mut c);
            tls = Arc::new(c);
        }
        let mut token_rng =
            <rand_chacha::ChaCha20Rng as rand_core::SeedableRng>::from_seed(rng_seed);
        let mut config = ServerConfig::new(tls, Arc::new(transport), &mut token_rng);
        config.max_connections = 64;
        let endpoint = Endpoint::new_for_simulation(
            endpoint_config,
            Some(Arc::new(config)),
            rng_seed,
            protection,
        );
        Self::with_app(endpoint, App::Server(ServerApp::default()))
    }

    fn with_app(endpoint: Endpoint, app: App) -> Self {
        Self {
            endpoint,
            app,
            tx_buf: Vec::with_capacity(TX_CAPACITY),
            rx_arena: BytesMut::new(),
            last_timeout: None,
            overdue_polls: 0,
            stalls: 0,
        }
    }

    /// The endpoint.
    pub fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    /// How often the endpoint asked, twice in a row, to be woken at a time
    /// at or before its last `handle_timeout`, although every datagram it
    /// wanted to send had been taken: a timer that handling does not clear.
    /// A correct endpoint never does this; the adapter then wakes it
    /// [`STALL_BACKOFF`] after the last handled time instead of spinning at
    /// one virtual instant forever (see the lab's `core_issues` tests).
    pub fn timer_stalls(&self) -> u64 {
        self.stalls
    }

    /// The application.
    pub fn app(&self) -> &App {
        &self.app
    }

    /// Makes the client a video player (see [`ClientApp::enable_video`]);
    /// no effect on a server.
    pub fn enable_video(&mut self, spec: crate::video::VideoSpec) {
        if let App::Client(c) = &mut self.app {
            c.enable_video(spec);
        }
    }

    /// Spreads the client's requests over successive connections (see
    /// [`ClientApp::set_connection_batches`]); no effect on a server.
    pub fn set_connection_batches(&mut self, ends: Vec<usize>) {
        if let App::Client(c) = &mut self.app {
            c.set_connection_batches(ends);
        }
    }

    /// The client application, if this is a client.
    pub fn client_app(&self) -> Option<&ClientApp> {
        match &self.app {
            App::Client(c) => Some(c.as_ref()),
            App::Server(_) => None,
        }
    }

    /// The node's main connection: the client's connection, or the first
    /// connection the server accepted.
    pub fn main_connection(&self) -> Option<&Connection> {
        self.endpoint.connection(self.main_handle()?)
    }

    fn main_handle(&self) -> Option<ConnectionHandle> {
        match &self.app {
            App::Client(c) => Some(c.handle()),
            App::Server(s) => s.main_handle(),
        }
    }

    fn run_app(&mut self, now: SimTime) {
        match &mut self.app {
            App::Client(c) => c.step(now, &mut self.endpoint),
            App::Server(s) => s.step(now, &mut self.endpoint),
        }
    }
}

impl Node for QuicNode {
    fn handle_datagram(&mut self, now: SimTime, datagram: Datagram) {
        let Datagram {
            src,
            dst,
            mut payload,
            ecn,
        } = datagram;
        let len = payload.len();
        if self.rx_arena.capacity() < len {
            self.rx_arena = BytesMut::with_capacity(RX_ARENA.max(len));
        }
        self.rx_arena.extend_from_slice(&payload);
        let data = self.rx_arena.split();
        SPARE.with_borrow_mut(|spare| {
            if spare.len() < MAX_SPARE {
                payload.clear();
                spare.push(payload);
            }
        });
        self.endpoint.handle_datagram_ecn(
            Timestamp::from_nanos(now),
            dst,
            src,
            from_sim_ecn(ecn),
            data,
        );
        self.run_app(now);
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        let t = self
            .endpoint
            .poll_transmit(Timestamp::from_nanos(now), &mut self.tx_buf)?;
        let next = SPARE
            .with_borrow_mut(Vec::pop)
            .unwrap_or_else(|| Vec::with_capacity(TX_CAPACITY));
        let mut payload = std::mem::replace(&mut self.tx_buf, next);
        payload.truncate(t.size);
        Some(Datagram::new(t.local, t.remote, payload).with_ecn(to_sim_ecn(t.ecn)))
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        let mut endpoint = self.endpoint.next_timeout().map(Timestamp::as_nanos);
        match (endpoint, self.last_timeout) {
            (Some(due), Some(last)) if due <= last => {
                // One more immediate call is fine (something may have become due
                // at this very instant); a second in a row is a stall.
                self.overdue_polls += 1;
                if self.overdue_polls >= 2 {
                    self.stalls += 1;
                    endpoint = Some(last.saturating_add(STALL_BACKOFF));
                }
            }
            _ => self.overdue_polls = 0,
        }
        let app = match &self.app {
            App::Client(c) => c.timeout(),
            App::Server(_) => None,
        };
        match (endpoint, app) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn handle_timeout(&mut self, now: SimTime) {
        self.last_timeout = Some(now);
        self.endpoint.handle_timeout(Timestamp::from_nanos(now));
        self.run_app(now);
    }

    fn is_done(&self) -> bool {
        match &self.app {
            App::Client(c) => c.is_done(),
            App::Server(_) => false,
        }
    }
}

/// The simulated IP header's ECN bits as the core sees them.
fn from_sim_ecn(ecn: Ecn) -> Option<EcnCodepoint> {
    match ecn {
        Ecn::NotEct => None,
        Ecn::Ect0 => Some(EcnCodepoint::Ect0),
        Ecn::Ect1 => Some(EcnCodepoint::Ect1),
        Ecn::Ce => Some(EcnCodepoint::Ce),
    }
}

/// The codepoint the core chose for a transmit, in the simulated IP header.
fn to_sim_ecn(ecn: Option<EcnCodepoint>) -> Ecn {
    match ecn {
        None => Ecn::NotEct,
        Some(EcnCodepoint::Ect0) => Ecn::Ect0,
        Some(EcnCodepoint::Ect1) => Ecn::Ect1,
        Some(EcnCodepoint::Ce) => Ecn::Ce,
    }
}
