//! Configuration of endpoints and connections. Everything a run can vary lives here, so the
//! simulator, the CLI and tests configure one type.

use std::sync::Arc;

use crate::ack::AckConfig;
use crate::cc::CcAlgorithm;
use crate::scheduler::SchedulerKind;
use crate::spns_rules::SpnsRules;
use crate::streams::StreamsConfig;
use crate::time::Duration;

mod builder;
pub(crate) mod forms;
mod validate;

pub use validate::{ConfigError, MAX_ACK_RANGES};

/// Which multipath design an endpoint offers (issue 5, docs/MULTIPATH.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MultipathMode {
    /// No multipath: plain RFC 9000 single path.
    Single,
    /// Only a single packet number space shared by all paths (draft-01 `enable_multipath` = 1).
    Spns,
    /// Only per-path packet number spaces (RFC 10069; draft-01 `enable_multipath` = 2).
    Mpns,
    /// Offer both; take what the peer supports, preferring MPNS (draft-01 `enable_multipath` = 3).
    #[default]
    Auto,
}

impl std::str::FromStr for MultipathMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "single" | "none" => Ok(Self::Single),
            "spns" => Ok(Self::Spns),
            "mpns" => Ok(Self::Mpns),
            "auto" => Ok(Self::Auto),
            _ => Err(format!(
                "unknown multipath mode '{s}' (expected single, spns, mpns or auto)"
            )),
        }
    }
}

/// Transport settings of a connection. Built from the defaults with chained setters
/// (`TransportConfig::default().multipath(MultipathMode::Mpns)`, module `builder`) or by
/// assigning fields; [`TransportConfig::validate`] checks it (connections refuse an invalid one).
///
/// It is also the one file schema of the transport (serde, module `forms`): a scenario's
/// `[transport]` table, a `--transport` file and a JSON record all read and write these keys,
/// each named as its field except `cc` (`congestion`, also accepted). Missing keys keep their
/// defaults, unknown ones are refused; durations are written `"40ms"`, algorithms by their
/// registered names (`cc = "cubic"`, `scheduler = "min-rtt"`), features on by default are
/// turned off with `false` (`mtu_discovery = false`). Plug-ins are not data: a file chooses a
/// built-in by its registry name, while the application's own factories
/// (`with_congestion_controller_factory`, ...) and `qlog` are set in code and never written.
/// [`TransportConfig::deserialize_validated`] reads and validates in one step.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct TransportConfig {
    /// Our max_idle_timeout (RFC 9000 §10.1); zero disables.
    #[serde(with = "forms::duration")]
    pub idle_timeout: Duration,
    /// kInitialRtt (RFC 9002 §6.2.2).
    #[serde(with = "forms::duration")]
    pub initial_rtt: Duration,
    /// UDP payload size of every packet when `mtu_discovery` is None (RFC 9000 §14: at least
    /// 1200). With discovery each path starts at 1200 and finds its own size.
    pub max_datagram_size: u16,
    /// Path MTU discovery (DPLPMTUD, RFC 9000 §14.3, RFC 8899), per path (`crate::mtud`).
    /// On by default, up to 1452 bytes of UDP payload; None uses `max_datagram_size` always.
    #[serde(with = "forms::mtu_discovery")]
    pub mtu_discovery: Option<crate::mtud::MtuDiscoveryConfig>,
    /// Congestion controller for every path unless overridden per path (key `cc`, the
    /// command line's `--cc` and the scenario files' name).
    #[serde(
        rename = "cc",
        alias = "congestion",
        deserialize_with = "forms::from_str"
    )]
    pub congestion: CcAlgorithm,
    /// Per-path overrides of `congestion`, by path ID (issue 6).
    #[serde(
        with = "forms::path_congestion",
        skip_serializing_if = "std::collections::BTreeMap::is_empty"
    )]
    pub path_congestion: std::collections::BTreeMap<crate::path::PathId, CcAlgorithm>,
    /// The application's own congestion controller (as quinn's
    /// `congestion_controller_factory`): when set, every path without an entry in
    /// `path_congestion` gets its controller from it instead of `congestion`. Code only.
    #[serde(skip)]
    pub congestion_controller_factory: Option<Arc<dyn crate::cc::ControllerFactory>>,
    /// Acknowledgement policy (thresholds, ranges, which path).
    pub ack: AckConfig,
    /// Stream limits and flow-control windows.
    pub streams: StreamsConfig,
    /// Multipath design offered.
    #[serde(deserialize_with = "forms::from_str")]
    pub multipath: MultipathMode,
    /// Highest path ID we allow the peer to use initially (RFC 10069 initial_max_path_id).
    pub max_path_id: u32,
    /// Scheduler choosing the path of new data.
    #[serde(deserialize_with = "forms::from_str")]
    pub scheduler: SchedulerKind,
    /// The application's own scheduler: when set, used instead of `scheduler`. Code only.
    #[serde(skip)]
    pub scheduler_factory: Option<Arc<dyn crate::scheduler::SchedulerFactory>>,
    /// active_connection_id_limit we advertise (RFC 9000 §18.2); per path in multipath.
    pub active_connection_id_limit: u8,
    /// The Alibaba report's SPNS rules (§2.1 loss detection, §2.2 RTT and ACK path, §2.4 ACK
    /// ranges), each a switch; [`SpnsRules::report`] by default, [`SpnsRules::naive`] turns
    /// them all off. They apply in both designs (with one space per path most coincide with
    /// RFC 9000 / RFC 9002).
    #[serde(with = "forms::spns_rules")]
    pub spns_rules: SpnsRules,
    /// Pace packets (RFC 9002 §7.7).
    pub pacing: bool,
    /// Initiate a 1-RTT key update after this many packets sent with one key (None: only on
    /// AEAD limits). Used by tests to exercise RFC 9001 §6.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_update_interval: Option<u64>,
    /// Consecutive PTOs after which a path is considered failed and its data moved to others.
    pub path_failure_ptos: u32,
    /// Highest packet threshold of loss detection (RFC 9002 §6.1.1, kPacketThreshold = 3):
    /// when a packet declared lost by the packet threshold is acknowledged after all, its
    /// path's threshold rises past the reordering that showed, up to this value (§6.1.1 allows
    /// it; [`crate::recovery`]'s `reordering`). 3 keeps the threshold fixed at kPacketThreshold.
    #[serde(skip_serializing_if = "is_default_max_packet_threshold")]
    pub max_packet_threshold: u64,
    /// Highest time threshold of loss detection, in RTTs (RFC 9002 §6.1.2, kTimeThreshold =
    /// 9/8): each round trip in which a packet declared lost by the time threshold is
    /// acknowledged after all adds an eighth of an RTT to its path's threshold, up to this
    /// value (rounded down to eighths). 1.125 keeps it fixed at kTimeThreshold.
    #[serde(skip_serializing_if = "is_default_max_time_threshold")]
    pub max_time_threshold: f64,
    /// Abandon a path that received nothing for this long while another path is active
    /// (RFC 10069 §3.5 leaves per-path idle timeouts to the implementation). None: never.
    #[serde(with = "forms::opt_duration", skip_serializing_if = "Option::is_none")]
    pub path_idle_timeout: Option<Duration>,
    /// Re-inject the unacknowledged tail of streams on another path (XLINK). By default only a
    /// tail that a copy on another path delivers sooner ([`ReinjectionMode::Tail`], issue 15).
    ///
    /// [`ReinjectionMode::Tail`]: crate::reinjection::ReinjectionMode::Tail
    #[serde(with = "forms::reinjection")]
    pub reinjection: crate::reinjection::ReinjectionMode,
    /// The application's own re-injection policy: when set, used instead of `reinjection`.
    /// Code only.
    #[serde(skip)]
    pub reinjection_factory: Option<Arc<dyn crate::reinjection::ReinjectionFactory>>,
    /// Offer / accept the XLINK QoE feedback extension (QOE_CONTROL_SIGNAL frames).
    pub qoe_feedback: bool,
    /// qlog (docs/QLOG.md): makes the event sink of each connection; None logs nothing. Code
    /// only (a sink factory).
    #[serde(skip)]
    pub qlog: Option<crate::qlog::QlogConfig>,
    /// DATAGRAM frames (RFC 9221): Some(bytes) advertises max_datagram_frame_size (65535, or
    /// `bytes` if smaller) and keeps up to `bytes` of received datagram payload for the
    /// application (each datagram counted with its queue entry's size, so that empty ones
    /// cannot queue without bound), dropping the oldest beyond it. None: not offered (a peer's DATAGRAM frame
    /// is then a PROTOCOL_VIOLATION) and sending is disabled too. Default Some(1,250,000), as
    /// quinn's `datagram_receive_buffer_size`. Written `false` when None.
    #[serde(with = "forms::datagram_receive_buffer")]
    pub datagram_receive_buffer: Option<usize>,
    /// Payload bytes of datagrams queued for sending; a datagram that does not fit drops the
    /// oldest queued ones. Default 1 MiB, as quinn's `datagram_send_buffer_size`.
    pub datagram_send_buffer: usize,
    /// Testing hook: raw bytes appended to our encoded transport parameters, to check how a
    /// peer rejects malformed ones. Empty in any real configuration.
    #[doc(hidden)]
    #[serde(skip)]
    pub raw_transport_params: Vec<u8>,
    /// Mark outgoing datagrams ECT(0) on each path while its ECN validation succeeds, and
    /// react to CE marks (RFC 9000 §13.4, RFC 9002 §7.1). Received marks are counted and
    /// reported either way (RFC 9000 §13.4.1).
    pub ecn: bool,
}

impl TransportConfig {
    /// [`Self::max_time_threshold`] in eighths of an RTT (at least kTimeThreshold's 9).
    pub(crate) fn max_time_threshold_eighths(&self) -> u32 {
        let eighths = (self.max_time_threshold * 8.0).floor();
        if eighths.is_finite() {
            (eighths as u32).max(crate::recovery::reordering::TIME_THRESHOLD_EIGHTHS)
        } else {
            crate::recovery::reordering::TIME_THRESHOLD_EIGHTHS
        }
    }

    /// The congestion controller a path uses, by name (ignores
    /// `congestion_controller_factory`; see [`Self::controller_factory_for`]).
    pub fn congestion_for(&self, path: crate::path::PathId) -> CcAlgorithm {
        self.path_congestion
            .get(&path)
            .copied()
            .unwrap_or(self.congestion)
    }

    /// The factory making the congestion controller of `path`: its entry in `path_congestion`,
    /// else the application's factory, else `congestion`.
    pub fn controller_factory_for(
        &self,
        path: crate::path::PathId,
    ) -> Arc<dyn crate::cc::ControllerFactory> {
        match (
            self.path_congestion.get(&path),
            &self.congestion_controller_factory,
        ) {
            (Some(algorithm), _) => algorithm.factory(),
            (None, Some(factory)) => factory.clone(),
            (None, None) => self.congestion.factory(),
        }
    }

    /// The factory making each connection's scheduler.
    pub fn scheduler_factory(&self) -> Arc<dyn crate::scheduler::SchedulerFactory> {
        self.scheduler_factory
            .clone()
            .unwrap_or_else(|| self.scheduler.factory())
    }

    /// The factory making each connection's re-injection policy.
    pub fn reinjection_factory(&self) -> Arc<dyn crate::reinjection::ReinjectionFactory> {
        self.reinjection_factory
            .clone()
            .unwrap_or_else(|| self.reinjection.factory())
    }
}

/// Default of [`TransportConfig::max_packet_threshold`].
pub const DEFAULT_MAX_PACKET_THRESHOLD: u64 = 64;

fn is_default_max_packet_threshold(value: &u64) -> bool {
    *value == DEFAULT_MAX_PACKET_THRESHOLD
}

/// Default of [`TransportConfig::max_time_threshold`], in RTTs.
pub const DEFAULT_MAX_TIME_THRESHOLD: f64 = 2.0;

fn is_default_max_time_threshold(value: &f64) -> bool {
    *value == DEFAULT_MAX_TIME_THRESHOLD
}

impl Default for TransportConfig {
    fn default() -> Self {
        Self {
            idle_timeout: Duration::from_secs(30),
            initial_rtt: crate::recovery::rtt::INITIAL_RTT,
            max_datagram_size: 1350,
            mtu_discovery: Some(crate::mtud::MtuDiscoveryConfig::default()),
            congestion: CcAlgorithm::default(),
            path_congestion: Default::default(),
            congestion_controller_factory: None,
            ack: AckConfig::default(),
            streams: StreamsConfig::default(),
            multipath: MultipathMode::Auto,
            max_path_id: 7,
            scheduler: SchedulerKind::default(),
            scheduler_factory: None,
            active_connection_id_limit: 4,
            spns_rules: SpnsRules::report(),
            pacing: true,
            key_update_interval: None,
            path_failure_ptos: 3,
            max_packet_threshold: DEFAULT_MAX_PACKET_THRESHOLD,
            max_time_threshold: DEFAULT_MAX_TIME_THRESHOLD,
            path_idle_timeout: None,
            reinjection: crate::reinjection::ReinjectionMode::default(),
            reinjection_factory: None,
            qoe_feedback: false,
            qlog: None,
            datagram_receive_buffer: Some(DEFAULT_DATAGRAM_RECEIVE_BUFFER),
            datagram_send_buffer: DEFAULT_DATAGRAM_SEND_BUFFER,
            ecn: true,
            raw_transport_params: Vec::new(),
        }
    }
}

/// Default [`TransportConfig::datagram_receive_buffer`] (quinn 0.11's default).
pub(crate) const DEFAULT_DATAGRAM_RECEIVE_BUFFER: usize = 1_250_000;
/// Default [`TransportConfig::datagram_send_buffer`] (quinn 0.11's default).
pub(crate) const DEFAULT_DATAGRAM_SEND_BUFFER: usize = 1024 * 1024;

/// Client-side settings of one connection attempt ([`ClientConfig::new`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ClientConfig {
    /// The rustls client configuration (TLS 1.3, ALPN set).
    pub tls: Arc<rustls::ClientConfig>,
    /// Transport settings of connections made with this configuration.
    pub transport: Arc<TransportConfig>,
    /// Where address-validation tokens from NEW_TOKEN frames are kept for later connections to
    /// the same server (RFC 9000 §8.1.3); None: tokens are ignored.
    pub token_store: Option<Arc<dyn TokenStore>>,
    /// Where round-trip times are kept for later connections over the same addresses (RFC 9002
    /// §6.2.2; [`ClientConfig::with_rtt_memory`]); None (the default): every connection starts
    /// from `transport.initial_rtt`.
    pub rtt_store: Option<Arc<dyn crate::RttStore>>,
}

impl ClientConfig {
    /// A client configuration keeping NEW_TOKEN tokens in memory ([`TokenMemoryStore`]), so
    /// connections made with clones of it skip the server's address validation.
    pub fn new(tls: Arc<rustls::ClientConfig>, transport: Arc<TransportConfig>) -> Self {
        Self {
            tls,
            transport,
            token_store: Some(Arc::new(TokenMemoryStore::default())),
            rtt_store: None,
        }
    }

    /// The same configuration remembering round-trip times in memory ([`crate::RttMemoryStore`]):
    /// a connection made with a clone of it from the local address and to the server address of
    /// an earlier one starts from that connection's smoothed RTT instead of
    /// `transport.initial_rtt` (RFC 9002 §6.2.2), so a lost first Initial costs about three RTTs
    /// rather than a second.
    pub fn with_rtt_memory(mut self) -> Self {
        self.rtt_store = Some(Arc::new(crate::RttMemoryStore::default()));
        self
    }
}

/// Keeps the tokens servers hand out in NEW_TOKEN frames (RFC 9000 §8.1.3), by server name.
pub trait TokenStore: std::fmt::Debug + Send + Sync {
    /// Remember `token` for connections to `server_name`.
    fn insert(&self, server_name: &str, token: bytes::Bytes);
    /// A token for a new connection to `server_name`, removed from the store: §8.1.3 asks
    /// clients not to reuse a token, so that connections cannot be linked by it.
    fn take(&self, server_name: &str) -> Option<bytes::Bytes>;
}

/// A bounded in-memory [`TokenStore`]: the newest few tokens of each of the most recently used
/// servers.
#[derive(Debug, Default)]
pub struct TokenMemoryStore {
    tokens: std::sync::Mutex<std::collections::VecDeque<(String, bytes::Bytes)>>,
}

/// Tokens a [`TokenMemoryStore`] keeps in all.
const TOKEN_STORE_CAPACITY: usize = 256;

impl TokenStore for TokenMemoryStore {
    fn insert(&self, server_name: &str, token: bytes::Bytes) {
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        if tokens.len() >= TOKEN_STORE_CAPACITY {
            tokens.pop_front();
        }
        tokens.push_back((server_name.to_owned(), token));
    }

    fn take(&self, server_name: &str) -> Option<bytes::Bytes> {
        let mut tokens = self.tokens.lock().unwrap_or_else(|e| e.into_inner());
        let newest = tokens.iter().rposition(|(name, _)| name == server_name)?;
        tokens.remove(newest).map(|(_, token)| token)
    }
}

/// Server-side settings ([`ServerConfig::new`]; [`ServerConfig::validate`] checks them).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ServerConfig {
    /// The rustls server configuration (TLS 1.3, certificate, ALPN).
    pub tls: Arc<rustls::ServerConfig>,
    /// Transport settings of the connections this server accepts.
    pub transport: Arc<TransportConfig>,
    /// Refuse new connections (CONNECTION_REFUSED) when this many are open.
    pub max_connections: usize,
    /// Handshakes in progress allowed at once (connections not yet confirmed). Beyond it new
    /// clients are refused with CONNECTION_REFUSED, or asked to Retry under
    /// [`RetryPolicy::UnderLoad`] (RFC 9000 §8.1.2).
    pub max_handshakes: usize,
    /// When to validate a client's address with a Retry before keeping any state for it.
    pub retry: RetryPolicy,
    /// Keys sealing Retry and NEW_TOKEN tokens (RFC 9000 §8.1.3–8.1.4).
    pub token_keys: TokenKeys,
    /// How long a Retry token is accepted after it was issued.
    pub retry_token_lifetime: Duration,
    /// How long a NEW_TOKEN token is accepted after it was issued; zero sends none.
    pub new_token_lifetime: Duration,
    /// IPv4 address advertised in the `preferred_address` transport parameter (RFC 9000
    /// §18.2, §9.6); see [`ServerConfig::set_preferred_address`].
    pub preferred_address_v4: Option<std::net::SocketAddrV4>,
    /// IPv6 address advertised in the `preferred_address` transport parameter.
    pub preferred_address_v6: Option<std::net::SocketAddrV6>,
}

/// Connections a server accepts at once unless told otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 10_000;
/// Handshakes a server keeps in progress at once unless told otherwise.
pub const DEFAULT_MAX_HANDSHAKES: usize = 1_000;

impl ServerConfig {
    /// A server configuration with defaults: up to [`DEFAULT_MAX_CONNECTIONS`] connections,
    /// Retry under load (more than half of [`DEFAULT_MAX_HANDSHAKES`] in progress), token keys
    /// drawn from `rng`.
    ///
    /// With 0-RTT on (`max_early_data_size` set, [`crate::crypto::resumption::server_allow_0rtt`])
    /// `tls` is copied with its session store bound to `transport`'s 0-RTT limits: a ticket
    /// issued under larger limits than `transport`'s is not resumed (RFC 9000 §7.4.1). Change
    /// `transport` through a new `ServerConfig::new`, not the field, to keep that binding.
    pub fn new(
        tls: Arc<rustls::ServerConfig>,
        transport: Arc<TransportConfig>,
        rng: &mut dyn rand_core::RngCore,
    ) -> Self {
        let limits = crate::connection::remembered_limits(&transport);
        Self {
            tls: crate::crypto::ticket_limits::bind_tickets_to_limits(tls, limits),
            transport,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_handshakes: DEFAULT_MAX_HANDSHAKES,
            retry: RetryPolicy::UnderLoad {
                handshakes: DEFAULT_MAX_HANDSHAKES / 2,
            },
            token_keys: TokenKeys::random(rng),
            retry_token_lifetime: Duration::from_secs(10),
            new_token_lifetime: Duration::from_secs(24 * 3600),
            preferred_address_v4: None,
            preferred_address_v6: None,
        }
    }

    /// Advertise `addr` as this server's other address of its family (replacing an earlier one
    /// of that family): connections then carry a `preferred_address` transport parameter with
    /// a connection ID of sequence number 1 for path 0 (RFC 9000 §5.1.1, §18.2; RFC 10069
    /// "Path ID and connection IDs"). The server must receive on that address; clients may
    /// open paths to it (or migrate, RFC 9000 §9.6), the choice is theirs.
    pub fn set_preferred_address(&mut self, addr: std::net::SocketAddr) {
        match addr {
            std::net::SocketAddr::V4(v4) => self.preferred_address_v4 = Some(v4),
            std::net::SocketAddr::V6(v6) => self.preferred_address_v6 = Some(v6),
        }
    }

    /// The advertised addresses (IPv4 first), empty when none is set.
    pub fn preferred_addresses(&self) -> Vec<std::net::SocketAddr> {
        let v4 = self.preferred_address_v4.map(std::net::SocketAddr::V4);
        let v6 = self.preferred_address_v6.map(std::net::SocketAddr::V6);
        v4.into_iter().chain(v6).collect()
    }
}

/// When a server answers an Initial with a Retry (RFC 9000 §8.1.2) instead of creating state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RetryPolicy {
    /// Never: every client is accepted on its first Initial (subject to the limits).
    Never,
    /// Always: every client without a valid token must prove its address first.
    Always,
    /// Only while at least this many handshakes are in progress.
    UnderLoad {
        /// Handshakes in progress from which on Retry is required.
        handshakes: usize,
    },
}

impl std::str::FromStr for RetryPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().as_str() {
            "never" | "off" => Ok(Self::Never),
            "always" | "on" => Ok(Self::Always),
            "auto" | "under-load" => Ok(Self::UnderLoad {
                handshakes: DEFAULT_MAX_HANDSHAKES / 2,
            }),
            _ => Err(format!(
                "unknown retry policy '{s}' (expected never, always or auto)"
            )),
        }
    }
}

/// Secret keys authenticating address-validation tokens. Tokens are sealed with `current` and
/// accepted under `current` or any of `previous`, so an operator can rotate keys without
/// invalidating tokens already handed out.
#[derive(Clone)]
pub struct TokenKeys {
    /// The key new tokens are sealed with.
    pub current: [u8; 32],
    /// Earlier keys whose tokens are still accepted (key rotation).
    pub previous: Vec<[u8; 32]>,
}

impl TokenKeys {
    /// A fresh random key (tokens do not survive a restart).
    pub fn random(rng: &mut dyn rand_core::RngCore) -> Self {
        let mut current = [0u8; 32];
        rng.fill_bytes(&mut current);
        Self {
            current,
            previous: Vec::new(),
        }
    }

    /// Make `key` current, keeping the old current key for validation only.
    pub fn rotate(&mut self, key: [u8; 32]) {
        let old = std::mem::replace(&mut self.current, key);
        self.previous.insert(0, old);
        self.previous.truncate(3);
    }
}

impl std::fmt::Debug for TokenKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenKeys")
            .field("previous", &self.previous.len())
            .finish_non_exhaustive()
    }
}

/// Settings of an endpoint (client and server alike; [`EndpointConfig::new`]).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct EndpointConfig {
    /// Length of the connection IDs we issue (RFC 9000 §5.1); 4..=20.
    pub cid_len: usize,
    /// Key for deriving stateless reset tokens (RFC 9000 §10.3.2).
    pub reset_key: [u8; 32],
}

impl EndpointConfig {
    /// Configuration with the given stateless-reset key (an operator's key, so that a
    /// restarted server still resets the connections of its previous life: RFC 9000 §10.3.2).
    pub fn with_reset_key(reset_key: [u8; 32]) -> Self {
        Self {
            cid_len: 8,
            reset_key,
        }
    }

    /// Configuration with a reset key drawn from `rng`.
    pub fn new(rng: &mut dyn rand_core::RngCore) -> Self {
        let mut reset_key = [0u8; 32];
        rng.fill_bytes(&mut reset_key);
        Self {
            cid_len: 8,
            reset_key,
        }
    }
}
