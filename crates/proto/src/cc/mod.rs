//! Congestion control seam (RFC 9002 §7). Every path owns one controller behind
//! [`CongestionController`]; loss detection and RTT live in `recovery` and feed controllers events.
//! A coupled controller (LIA, OLIA) additionally receives a [`CouplingState`] of every path of its
//! connection on each event; decoupled controllers ignore it.
//!
//! Controllers are made by a [`ControllerFactory`]; the built-in ones are registered by name in
//! [`registry`]. A new algorithm is a new file implementing the trait plus one registry line
//! (and, to name it in configuration files, a variant of the convenience enum [`CcAlgorithm`]).

use std::fmt::Debug;

use crate::recovery::rtt::RttEstimator;
use crate::time::{Duration, Timestamp};

pub mod bbr;
pub mod cubic;
pub mod delivery_rate;
pub mod lia;
pub mod new_reno;
pub mod olia;
pub mod pacer;
pub mod registry;
#[cfg(test)]
pub(crate) mod test_sim;

pub use delivery_rate::{DeliveryRateEstimator, PacketDeliveryState, RateSample};
pub use pacer::Pacer;
pub use registry::ControllerFactory;

/// RFC 9002 §7.2: kMinimumWindow = 2 * max_datagram_size.
pub const MINIMUM_WINDOW_PACKETS: u64 = 2;
/// RFC 9002 §7.2: initial window = min(10 * max_datagram_size, max(14720, 2 * max_datagram_size)).
pub fn initial_window(max_datagram_size: u64) -> u64 {
    (10 * max_datagram_size).min(14_720u64.max(2 * max_datagram_size))
}

/// Parameters shared by all controllers.
#[derive(Debug, Clone, Copy)]
pub struct CcConfig {
    /// Maximum datagram size in bytes (the "MSS" of RFC 9002).
    pub max_datagram_size: u64,
    /// Initial congestion window in bytes.
    pub initial_window: u64,
}

impl CcConfig {
    /// RFC 9002 defaults for a given datagram size.
    pub fn new(max_datagram_size: u64) -> Self {
        Self {
            max_datagram_size,
            initial_window: initial_window(max_datagram_size),
        }
    }
}

/// One acknowledgement's worth of newly acknowledged, in-flight packets on a path.
#[derive(Debug, Clone)]
pub struct AckEvent<'a> {
    /// When the acknowledgement was processed.
    pub now: Timestamp,
    /// Bytes newly acknowledged that were counted in flight.
    pub bytes_acked: u64,
    /// Send time of the most recently sent of the newly acknowledged packets.
    pub largest_acked_sent_time: Timestamp,
    /// Bytes in flight on this path after removing the acknowledged packets.
    pub bytes_in_flight: u64,
    /// The sender was application-limited when these packets were sent (RFC 9002 §7.8).
    pub app_limited: bool,
    /// This path's RTT estimator, already updated with this ACK's sample if there was one.
    pub rtt: &'a RttEstimator,
    /// This ACK gave the path an RTT sample (`rtt.latest()` is fresh). In SPNS an ACK frame
    /// can acknowledge a path's packets without sampling its RTT (report §2.2: the Largest
    /// Acknowledged went on another path), and `rtt.latest()` is then an older sample.
    pub rtt_sampled: bool,
    /// Delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation), if one was produced.
    pub rate_sample: Option<RateSample>,
}

/// Packets declared lost on a path by one loss-detection run.
#[derive(Debug, Clone)]
pub struct LossEvent<'a> {
    /// When the loss was detected.
    pub now: Timestamp,
    /// Bytes newly declared lost that were counted in flight.
    pub lost_bytes: u64,
    /// Send time of the most recently sent lost packet (RFC 9002 §7.3.2 congestion recovery start).
    pub largest_lost_sent_time: Timestamp,
    /// RFC 9002 §7.6: the loss establishes persistent congestion.
    pub persistent_congestion: bool,
    /// RFC 9002 §7.1: the event is an increase of the peer's ECN-CE count (`lost_bytes` is
    /// then zero); `largest_lost_sent_time` is the largest acknowledged packet's send time.
    pub ecn_ce: bool,
    /// Bytes in flight on this path after removing the lost packets.
    pub bytes_in_flight: u64,
    /// This path's RTT estimator (for persistent congestion and recovery periods).
    pub rtt: &'a RttEstimator,
}

/// What a controller exposes of itself to the coupled controllers of its sibling paths.
#[derive(Debug, Clone, Copy, Default)]
pub struct CouplingState {
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Smoothed RTT of the path.
    pub srtt: Duration,
    /// OLIA's l_r: bytes acknowledged between the last two losses (or since the last loss, if larger).
    pub inter_loss_bytes: u64,
    /// False for paths that carry no data (backup, abandoned, unvalidated): coupling ignores them.
    pub active: bool,
}

/// Everything a coupled controller may know of its connection: one entry per path, and which is
/// the caller's own.
#[derive(Debug, Clone, Copy)]
pub struct Coupling<'a> {
    /// One entry per path of the connection, in path order.
    pub paths: &'a [CouplingState],
    /// The index in `paths` of the caller's own path.
    pub own: usize,
}

impl Coupling<'_> {
    /// A view for a connection with a single path (decoupled use, tests).
    pub fn single(state: &[CouplingState; 1]) -> Coupling<'_> {
        Coupling {
            paths: state,
            own: 0,
        }
    }
}

/// Statistics of a controller, for path statistics and the lab.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct CcStats {
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Slow-start threshold in bytes; None while it is still infinite (RFC 9002 §7.3.1).
    pub ssthresh: Option<u64>,
    /// Pacing rate in bytes per second, if the controller sets one.
    pub pacing_rate: Option<u64>,
    /// Bottleneck bandwidth estimate in bytes per second (BBR).
    pub bandwidth_estimate: Option<u64>,
    /// Name of the current state (e.g. "slow_start", "congestion_avoidance", "probe_bw").
    pub state: &'static str,
    /// Window reductions so far (one per congestion event, RFC 9002 §7.3.2).
    pub congestion_events: u64,
}

/// A congestion controller for one path.
pub trait CongestionController: Send + Debug {
    /// A packet of `bytes` counted in flight was sent; `bytes_in_flight` includes it.
    fn on_packet_sent(&mut self, now: Timestamp, bytes: u64, bytes_in_flight: u64);
    /// Newly acknowledged in-flight packets.
    fn on_ack(&mut self, ack: &AckEvent<'_>, coupling: Coupling<'_>);
    /// An ACK gave this path an RTT sample (`rtt.latest()`) but acknowledged none of its
    /// in-flight packets, so no [`Self::on_ack`] follows. In SPNS this is the usual way a slow
    /// path learns its RTT: another path's ACK acknowledged its packets first, and the path's
    /// own ACK, arriving later, still samples its round trip (report §2.2). Default: ignore.
    fn on_rtt_sample_without_ack(&mut self, _now: Timestamp, _rtt: &RttEstimator) {}
    /// The path's RTT estimate started over: its first own sample replaced those borrowed from
    /// other paths' ACKs (RFC 10069 §5.4, report §2.2), or the path moved to another network
    /// (RFC 9000 §9.4). RTT history the controller kept describes another route. Default:
    /// ignore.
    fn on_rtt_restart(&mut self) {}
    /// Newly lost packets (RFC 9002 §7.3.2 OnPacketsLost / OnCongestionEvent).
    fn on_congestion_event(&mut self, loss: &LossEvent<'_>, coupling: Coupling<'_>);
    /// A previous congestion event was caused by packets later acknowledged. Default: ignore.
    fn on_spurious_congestion_event(&mut self) {}
    /// Congestion window in bytes.
    fn window(&self) -> u64;
    /// Pacing rate in bytes per second given the path's smoothed RTT. Default: RFC 9002 §7.7,
    /// N = 1.25 times cwnd per smoothed RTT.
    fn pacing_rate(&self, srtt: Duration) -> u64 {
        let srtt_ns = srtt.as_nanos().max(1);
        let bytes = self.window() as u128 * 5 / 4;
        // The same quotient in 64-bit arithmetic whenever it fits (always, in practice): the
        // 128-bit division is a slow library call on the per-packet path.
        if let (Ok(n), Ok(d)) = (u64::try_from(bytes * 1_000_000_000), u64::try_from(srtt_ns)) {
            return n / d;
        }
        (bytes * 1_000_000_000 / srtt_ns).min(u64::MAX as u128) as u64
    }
    /// What sibling paths' coupled controllers may see of this one.
    fn coupling_state(&self) -> CouplingState {
        CouplingState {
            cwnd: self.window(),
            active: true,
            ..CouplingState::default()
        }
    }
    /// The path's maximum datagram size changed (path MTU discovery, RFC 9000 §14.3): windows
    /// measured in datagrams follow it (RFC 9002 §7.2 kMinimumWindow; the initial window is
    /// recomputed if the window is still the initial one). Default: ignore.
    fn on_mtu_update(&mut self, _max_datagram_size: u64) {}
    /// Algorithm name ("newreno", "cubic", ...).
    fn name(&self) -> &'static str;
    /// Current statistics.
    fn stats(&self) -> CcStats;
}

/// The built-in algorithms by name, for configuration files and the command line; each names
/// a factory of [`registry::BUILTIN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CcAlgorithm {
    /// NewReno (RFC 9002 §7.3).
    NewReno,
    #[default]
    /// CUBIC (RFC 9438) with HyStart++ (RFC 9406); the default.
    Cubic,
    /// BBRv3 (draft-ietf-ccwg-bbr); needs pacing and delivery-rate samples.
    Bbr,
    /// RFC 6356 coupled congestion control.
    Lia,
    /// OLIA (Khalili et al., CoNEXT 2012) coupled congestion control.
    Olia,
}

impl CcAlgorithm {
    /// The algorithm's registered name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, a)| *a == self)
            .map_or("", |(name, _)| name)
    }

    /// The registered factory of this algorithm.
    pub fn factory(self) -> std::sync::Arc<dyn ControllerFactory> {
        registry::lookup(self.name()).expect("every CcAlgorithm is registered")
    }

    /// A fresh controller of this algorithm.
    pub fn build(self, config: CcConfig) -> Box<dyn CongestionController> {
        self.factory().build(config)
    }

    /// All algorithms with their names, for CLI parsing and listings.
    pub const ALL: &'static [(&'static str, CcAlgorithm)] = &[
        ("newreno", CcAlgorithm::NewReno),
        ("cubic", CcAlgorithm::Cubic),
        ("bbr", CcAlgorithm::Bbr),
        ("lia", CcAlgorithm::Lia),
        ("olia", CcAlgorithm::Olia),
    ];
}

impl std::str::FromStr for CcAlgorithm {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let lower = s.to_ascii_lowercase();
        Self::ALL
            .iter()
            .find(|(name, _)| *name == lower)
            .map(|(_, a)| *a)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|(n, _)| *n).collect();
                format!(
                    "unknown congestion controller '{s}' (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}
