//! Configuration of endpoints and connections. Everything a run can vary lives here, so the
//! simulator, the CLI and tests configure one type.

use std::sync::Arc;

use crate::ack::AckConfig;
use crate::cc::CcAlgorithm;
use crate::scheduler::SchedulerKind;
use crate::streams::StreamsConfig;
use crate::time::Duration;

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

/// Transport settings of a connection.
#[derive(Debug, Clone)]
pub struct TransportConfig {
    /// Our max_idle_timeout (RFC 9000 §10.1); zero disables.
    pub idle_timeout: Duration,
    /// kInitialRtt (RFC 9002 §6.2.2).
    pub initial_rtt: Duration,
    /// Maximum UDP payload we send (path MTU is not probed: RFC 9000 §14 minimum is 1200).
    pub max_datagram_size: u16,
    /// Congestion controller for every path unless overridden per path.
    pub congestion: CcAlgorithm,
    /// Per-path overrides of `congestion`, by path ID (issue 6).
    pub path_congestion: std::collections::BTreeMap<crate::path::PathId, CcAlgorithm>,
    /// Acknowledgement policy (thresholds, ranges, which path).
    pub ack: AckConfig,
    /// Stream limits and flow-control windows.
    pub streams: StreamsConfig,
    /// Multipath design offered.
    pub multipath: MultipathMode,
    /// Highest path ID we allow the peer to use initially (RFC 10069 initial_max_path_id).
    pub max_path_id: u32,
    /// Scheduler choosing the path of new data.
    pub scheduler: SchedulerKind,
    /// active_connection_id_limit we advertise (RFC 9000 §18.2); per path in multipath.
    pub active_connection_id_limit: u8,
    /// Take an RTT sample for a path only from ACKs received on that path (Alibaba report §2.2).
    /// Off gives the naive rule: the ACK's largest packet's RTT is credited to the receiving path.
    pub rtt_sample_on_receiving_path: bool,
    /// Pace packets (RFC 9002 §7.7).
    pub pacing: bool,
    /// Initiate a 1-RTT key update after this many packets sent with one key (None: only on
    /// AEAD limits). Used by tests to exercise RFC 9001 §6.
    pub key_update_interval: Option<u64>,
    /// Consecutive PTOs after which a path is considered failed and its data moved to others.
    pub path_failure_ptos: u32,
    /// Abandon a path that received nothing for this long while another path is active
    /// (RFC 10069 §3.5 leaves per-path idle timeouts to the implementation). None: never.
    pub path_idle_timeout: Option<Duration>,
    /// Re-inject the unacknowledged tail of streams on another path (XLINK); off by default.
    pub reinjection: crate::reinjection::ReinjectionMode,
    /// Offer / accept the XLINK QoE feedback extension (QOE_CONTROL_SIGNAL frames).
    pub qoe_feedback: bool,
    /// Testing hook: raw bytes appended to our encoded transport parameters, to check how a
    /// peer rejects malformed ones. Empty in any real configuration.
    #[doc(hidden)]
    pub raw_transport_params: Vec<u8>,
}

impl TransportConfig {
    /// The congestion controller a path uses.
    pub fn congestion_for(&self, path: crate::path::PathId) -> CcAlgorithm {
        self.path_congestion
            .get(&path)
            .copied()
            .unwrap_or(self.congestion)
    }
}

impl Default for TransportConfig {
    fn default() -> Self {
        Self {
            idle_timeout: Duration::from_secs(30),
            initial_rtt: crate::recovery::rtt::INITIAL_RTT,
            max_datagram_size: 1350,
            congestion: CcAlgorithm::default(),
            path_congestion: Default::default(),
            ack: AckConfig::default(),
            streams: StreamsConfig::default(),
            multipath: MultipathMode::Auto,
            max_path_id: 7,
            scheduler: SchedulerKind::default(),
            active_connection_id_limit: 4,
            rtt_sample_on_receiving_path: true,
            pacing: true,
            key_update_interval: None,
            path_failure_ptos: 3,
            path_idle_timeout: None,
            reinjection: crate::reinjection::ReinjectionMode::Off,
            qoe_feedback: false,
            raw_transport_params: Vec::new(),
        }
    }
}

/// Client-side settings of one connection attempt.
#[derive(Debug, Clone)]
pub struct ClientConfig {
    pub tls: Arc<rustls::ClientConfig>,
    pub transport: Arc<TransportConfig>,
}

/// Server-side settings.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    pub tls: Arc<rustls::ServerConfig>,
    pub transport: Arc<TransportConfig>,
    /// Refuse new connections (CONNECTION_REFUSED) when this many are open.
    pub max_connections: usize,
}

/// Settings of an endpoint (client and server alike).
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// Length of the connection IDs we issue (RFC 9000 §5.1); 4..=20.
    pub cid_len: usize,
    /// Key for deriving stateless reset tokens (RFC 9000 §10.3.2).
    pub reset_key: [u8; 32],
}

impl EndpointConfig {
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
