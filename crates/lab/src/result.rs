//! The result of a run, serializable to JSON.
//!
//! Figures come from three sources: the **sender** (the server, which sends
//! the downloaded data: per-path bytes, losses, RTT estimates, congestion
//! windows, retransmissions), the **receiver** (the client, which sends the
//! ACKs: ACK frame counts and sizes), and the simulator's **ground truth**
//! (true RTTs, drops, queueing delay).

use mpquic_netsim::stats::{DropCounters, LinkSummary};
use mpquic_netsim::time::as_secs_f64;
use mpquic_netsim::{Capacity, LinkConfig, QueueLimit};
use mpquic_proto::{Connection, ConnectionStats, Design, PathId, PathStats};
use serde::Serialize;

use crate::scenario::Scenario;
use crate::workload::LoggedEvent;

/// Everything measured in one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    /// `simulated` (virtual time, [`crate::run`]) or `emulated` (real sockets through the
    /// emulator, [`crate::real::run`]).
    pub network: String,
    /// Emulated runs: how late the emulator released datagrams against their links' schedule.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release_jitter: Option<mpquic_emulate::JitterStats>,
    /// True when every request completed byte-exact within the time limit.
    pub completed: bool,
    /// `completed`, `failed` (connection or response error), `time_limit`,
    /// `idle` (nothing left to simulate) or `stuck` (timers fired without virtual time
    /// moving on: `mpquic_netsim::StopReason::Stuck`).
    pub outcome: String,
    /// Why the run did not complete, if it did not.
    pub error: Option<String>,
    /// Virtual time from the start until the last response was read.
    pub completion_time_s: Option<f64>,
    /// Virtual time until the client's (first) handshake completed.
    pub handshake_time_s: Option<f64>,
    /// The client's connections in order: one, or one per batch of a
    /// successive-connections workload.
    pub connections: Vec<ConnectionResult>,
    /// Response bytes asked for.
    pub bytes_requested: u64,
    /// Response bytes read by the client.
    pub bytes_received: u64,
    /// Bytes received × 8 / completion time (or / end time if incomplete).
    pub goodput_mbps: f64,
    /// Goodput over the second half of the bytes (from the time half had
    /// been read until completion): the steady-state rate.
    pub steady_goodput_mbps: Option<f64>,
    /// Negotiated multipath design (client's view).
    pub design: Option<Design>,
    /// Per-path figures, by path ID (of the first connection when the
    /// workload uses successive connections).
    pub paths: Vec<PathResult>,
    /// ACK frames sent by the receiver (client).
    pub ack_frames_sent: u64,
    /// Mean size of the receiver's ACK frames in bytes.
    pub avg_ack_frame_bytes: f64,
    /// Receiver's ACK frames by range count: buckets `<= 1, 2, 4, 8, 16, 32, 64, more`.
    pub ack_range_histogram: [u64; 8],
    /// Mean ranges per receiver ACK frame.
    pub mean_ranges_per_ack: f64,
    /// Stream bytes the sender retransmitted.
    pub retransmitted_bytes: u64,
    /// Packets the sender declared lost that were acknowledged later.
    pub spurious_retransmissions: u64,
    /// Ground truth: packets dropped on the links of the download direction (every path's
    /// `down` link and a shared bottleneck): the sender's true losses.
    pub true_losses: u64,
    /// Ground-truth invariants the run broke (see [`crate::truth`]); empty for a sound run.
    pub violations: Vec<String>,
    /// Sender (server) connection figures, summed over every connection.
    pub sender: ConnectionFigures,
    /// Receiver (client) connection figures, summed over every connection.
    pub receiver: ConnectionFigures,
    /// Per-request outcome, in issue order.
    pub requests: Vec<RequestResult>,
    /// Ground truth per link.
    pub links: Vec<LinkResult>,
    /// Connection and path events (client, then server).
    pub log: Vec<SideEvent>,
    /// Virtual time when the run stopped.
    pub sim_time_s: f64,
    /// Wall-clock time of the run (not deterministic).
    pub sim_wall_time_s: f64,
    /// Simulator events processed.
    pub events: u64,
    /// Optional time series (`record.time_series`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_series: Option<TimeSeries>,
    /// Video metrics, when the workload is a video.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub video: Option<crate::video::VideoResult>,
    /// The scenario, echoed back.
    pub scenario: Scenario,
}

/// Figures of one path.
#[derive(Debug, Clone, Serialize)]
pub struct PathResult {
    /// QUIC path ID.
    pub id: PathId,
    /// Client interface (scenario path index) the path starts at.
    pub interface: Option<usize>,
    /// Stream bytes the sender sent on the path (including retransmissions).
    pub bytes_sent: u64,
    /// Packets the sender sent on the path.
    pub packets_sent: u64,
    /// Packets the sender declared lost on the path.
    pub packets_lost: u64,
    /// Of those, acknowledged later.
    pub spurious_losses: u64,
    /// Of `packets_lost`, declared by the time threshold (RFC 9002 §6.1.2; the rest by the
    /// packet threshold).
    pub time_threshold_losses: u64,
    /// Of `spurious_losses`, declared by the time threshold.
    pub time_threshold_spurious: u64,
    /// Window reductions the sender undid because every loss behind them was spurious.
    pub congestion_undos: u64,
    /// Ground truth: packets the path's download link dropped (the sender's true losses on
    /// the path, apart from a shared bottleneck's).
    pub link_drops: Option<u64>,
    /// Stream bytes retransmitted on the path.
    pub retransmitted_bytes: u64,
    /// Sender's smoothed RTT at the end.
    pub srtt_ms: f64,
    /// Sender's minimum RTT.
    pub min_rtt_ms: f64,
    /// Sender's RTT variation at the end.
    pub rttvar_ms: f64,
    /// Mean true RTT over the transfer (ground truth, at the sampling times).
    pub true_rtt_ms: Option<f64>,
    /// Mean absolute error of the sampled srtt against the true RTT.
    pub srtt_mae_ms: Option<f64>,
    /// `srtt_mae_ms / true_rtt_ms`.
    pub srtt_mae_ratio: Option<f64>,
    /// Number of srtt samples behind the MAE.
    pub srtt_samples: usize,
    /// RTT samples the sender took on the path.
    pub rtt_samples: u64,
    /// Of those, round trips on the path itself (see [`crate::truth`]).
    pub own_rtt_samples: u64,
    /// Of those, borrowed from another path's ACK before the path had one of its own.
    pub borrowed_rtt_samples: u64,
    /// Ground truth: the smallest RTT a round trip on the path alone can have (smallest
    /// one-way delay of the download route plus that of the upload route, ms).
    pub min_rtt_floor_ms: Option<f64>,
    /// The receiver's minimum RTT of the path, when it had a round trip of its own on it.
    pub receiver_min_rtt_ms: Option<f64>,
    /// Sender's congestion window at the end.
    pub cwnd: u64,
    /// Sender's datagram size (UDP payload bytes) at the end, with path MTU discovery on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u64>,
    /// Sender's path MTU discovery counters (probes, black holes), with discovery on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu_counters: Option<mpquic_proto::MtuCounters>,
    /// Path validated.
    pub validated: bool,
    /// Path abandoned.
    pub abandoned: bool,
    /// ACK frames the receiver sent on the path.
    pub receiver_ack_frames: u64,
    /// Mean size of those ACK frames.
    pub receiver_avg_ack_frame_bytes: f64,
    /// The sender's ECN state of the path and CE feedback (RFC 9000 §13.4).
    pub ecn: mpquic_proto::EcnPathStats,
}

/// Connection-level figures of one side.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConnectionFigures {
    /// Packets sent.
    pub packets_sent: u64,
    /// Packets received.
    pub packets_received: u64,
    /// Packets declared lost.
    pub packets_lost: u64,
    /// Packets declared lost, then acknowledged.
    pub spurious_losses: u64,
    /// UDP payload bytes sent.
    pub bytes_sent: u64,
    /// Probe timeouts.
    pub pto_count: u64,
    /// Packets received that failed AEAD authentication (e.g. a wrongly decoded packet number).
    pub auth_failures: u64,
    /// 1-RTT key updates (initiated or followed).
    pub key_updates: u64,
    /// Handovers (data moved off a failed path).
    pub handovers: u64,
    /// ACK frames sent.
    pub ack_frames_sent: u64,
    /// Mean ACK frame size in bytes.
    pub avg_ack_frame_bytes: f64,
    /// ACK frames by range count (buckets `<= 1, 2, 4, 8, 16, 32, 64, more`).
    pub ack_range_histogram: [u64; 8],
    /// Mean ranges per ACK frame.
    pub mean_ranges_per_ack: f64,
    /// Stream bytes retransmitted.
    pub retransmitted_bytes: u64,
    /// Why the connection ended, if it did.
    pub error: Option<String>,
    /// Times the endpoint's timer stayed due after being handled (a core
    /// bug the adapter works around; see [`crate::QuicNode::timer_stalls`]).
    pub timer_stalls: u64,
}

impl ConnectionFigures {
    /// Figures of a connection.
    pub fn of(conn: &Connection) -> Self {
        Self::from_stats(
            &conn.stats(),
            conn.retransmitted_bytes(),
            conn.error().map(ToString::to_string),
        )
    }

    /// Figures from a connection's statistics (what the tokio runtime exposes).
    pub fn from_stats(
        s: &ConnectionStats,
        retransmitted_bytes: u64,
        error: Option<String>,
    ) -> Self {
        let mean_ranges = if s.ack_frames_sent == 0 {
            0.0
        } else {
            s.ack_ranges_total as f64 / s.ack_frames_sent as f64
        };
        Self {
            packets_sent: s.packets_sent,
            packets_received: s.packets_received,
            packets_lost: s.packets_lost,
            spurious_losses: s.spurious_losses,
            bytes_sent: s.bytes_sent,
            pto_count: s.pto_count,
            auth_failures: s.auth_failures,
            key_updates: s.key_updates,
            handovers: s.handovers,
            ack_frames_sent: s.ack_frames_sent,
            avg_ack_frame_bytes: s.mean_ack_frame_bytes(),
            ack_range_histogram: s.ack_range_histogram,
            mean_ranges_per_ack: mean_ranges,
            retransmitted_bytes,
            error,
            timer_stalls: 0,
        }
    }
}

impl ConnectionFigures {
    /// The figures of several successive connections: counts summed,
    /// means weighted by ACK frames, the error of the last. One part is
    /// returned as is (so single-connection runs are unchanged).
    pub fn combine(parts: &[ConnectionFigures]) -> ConnectionFigures {
        if let [one] = parts {
            return one.clone();
        }
        let mut out = ConnectionFigures::default();
        let (mut ack_bytes, mut ranges) = (0.0, 0.0);
        for p in parts {
            out.packets_sent += p.packets_sent;
            out.packets_received += p.packets_received;
            out.packets_lost += p.packets_lost;
            out.spurious_losses += p.spurious_losses;
            out.bytes_sent += p.bytes_sent;
            out.pto_count += p.pto_count;
            out.auth_failures += p.auth_failures;
            out.key_updates += p.key_updates;
            out.handovers += p.handovers;
            out.ack_frames_sent += p.ack_frames_sent;
            for (o, n) in out
                .ack_range_histogram
                .iter_mut()
                .zip(p.ack_range_histogram)
            {
                *o += n;
            }
            out.retransmitted_bytes += p.retransmitted_bytes;
            out.timer_stalls += p.timer_stalls;
            ack_bytes += p.avg_ack_frame_bytes * p.ack_frames_sent as f64;
            ranges += p.mean_ranges_per_ack * p.ack_frames_sent as f64;
            out.error.clone_from(&p.error);
        }
        if out.ack_frames_sent > 0 {
            out.avg_ack_frame_bytes = ack_bytes / out.ack_frames_sent as f64;
            out.mean_ranges_per_ack = ranges / out.ack_frames_sent as f64;
        }
        out
    }
}

/// Timeline of one client connection.
#[derive(Debug, Clone, Serialize)]
pub struct ConnectionResult {
    /// When the client started the handshake (s).
    pub opened_s: f64,
    /// When the handshake completed (s).
    pub handshake_s: Option<f64>,
    /// When the client closed it after its last response (s).
    pub closed_s: Option<f64>,
    /// 0-RTT packets the client sent on it (with `transport.zero_rtt` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero_rtt_packets_sent: Option<u64>,
    /// Whether the server accepted its 0-RTT data (with `transport.zero_rtt`, when the
    /// client attempted 0-RTT, i.e. resumed a session that allowed early data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero_rtt_accepted: Option<bool>,
}

/// Upper bounds of the ACK range histogram buckets, as the core counts
/// them (`ConnectionStats::ack_range_histogram`); the last bucket is
/// unbounded.
pub const ACK_RANGE_BUCKET_BOUNDS: [&str; 8] = ["1", "2", "4", "8", "16", "32", "64", "inf"];

/// Outcome of one request.
#[derive(Debug, Clone, Serialize)]
pub struct RequestResult {
    /// Response size.
    pub size: u64,
    /// Bytes read.
    pub received: u64,
    /// Completion time from the start of the run.
    pub completion_time_s: Option<f64>,
    /// What went wrong, if anything.
    pub error: Option<String>,
    /// Index of the connection that carried it.
    pub connection: usize,
    /// When that connection's handshake started (s): its network time is
    /// `completion_time_s - connection_start_s`, handshake included.
    pub connection_start_s: f64,
}

/// Ground truth of one link.
#[derive(Debug, Clone, Serialize)]
pub struct LinkResult {
    /// `path0.up` (client to server), `path0.down`, `bottleneck`.
    pub name: String,
    /// Nominal capacity (a trace's mean rate).
    pub rate_mbps: Option<f64>,
    /// Initial one-way propagation delay.
    pub delay_ms: f64,
    /// Drop-tail limit as configured (`{"bytes": N}`, `{"packets": N}` or
    /// `"infinite"`): reports state the queue sizing from it.
    pub queue_limit: QueueLimit,
    /// The trace's source (file path or `gen:NAME:SEED`), for trace links.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
    /// Where the trace's replay started in its period (ms), for trace links.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trace_start_ms: Option<u64>,
    /// Packets that left the link.
    pub delivered_packets: u64,
    /// Bytes that left the link.
    pub delivered_bytes: u64,
    /// Drops by cause (packets and bytes).
    pub drops: DropCounters,
    /// Mean time delivered packets waited in the queue.
    pub mean_queue_delay_ms: Option<f64>,
    /// Longest wait in the queue.
    pub max_queue_delay_ms: f64,
    /// Time-weighted mean queue occupancy.
    pub mean_queue_bytes: f64,
    /// Largest queue occupancy.
    pub max_queue_bytes: u64,
    /// ECN-capable packets the link marked CE (`ecn=` step marking).
    #[serde(skip_serializing_if = "is_zero")]
    pub ce_marked: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl LinkResult {
    /// Summary of a link from its configuration and ground truth.
    pub fn new(name: String, config: &LinkConfig, s: &LinkSummary) -> Self {
        let rate_mbps = match &config.capacity {
            Capacity::Unlimited => None,
            c => c.nominal_rate_bps().map(|b| b / 1e6),
        };
        let trace = match &config.capacity {
            Capacity::Trace(t) => Some(t),
            _ => None,
        };
        Self {
            name,
            rate_mbps,
            delay_ms: ns_to_ms(config.delay),
            queue_limit: config.queue,
            trace: trace.map(|t| t.source().to_owned()),
            trace_start_ms: trace.map(|t| t.start_ms()),
            delivered_packets: s.delivered.packets,
            delivered_bytes: s.delivered.bytes,
            drops: s.dropped,
            mean_queue_delay_ms: s.queue_delay.mean_ns().map(|ns| ns / 1e6),
            max_queue_delay_ms: ns_to_ms(s.queue_delay.max_ns),
            mean_queue_bytes: s.mean_queue_bytes,
            max_queue_bytes: s.max_queue_bytes,
            ce_marked: s.ce_marked,
        }
    }
}

/// An event with the side it happened on.
#[derive(Debug, Clone, Serialize)]
pub struct SideEvent {
    /// `client` or `server`.
    pub side: &'static str,
    /// The event.
    #[serde(flatten)]
    pub event: LoggedEvent,
}

/// Sampled time series.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TimeSeries {
    /// Sender srtt against the true RTT, per path.
    pub rtt: Vec<RttSeries>,
    /// Client progress: `[time_s, response bytes read, packets received]`.
    pub progress: Vec<[f64; 3]>,
}

/// srtt samples of one path.
#[derive(Debug, Clone, Serialize)]
pub struct RttSeries {
    /// QUIC path ID.
    pub path: PathId,
    /// `[time_s, srtt_ms, true_rtt_ms]`.
    pub points: Vec<[f64; 3]>,
}

/// Nanoseconds to milliseconds.
pub fn ns_to_ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// Mean of a slice, `None` when empty.
pub fn mean(v: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, n) = v
        .into_iter()
        .fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The sender's srtt of one path against the ground truth.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RttTruth {
    /// Mean true RTT at the sampling times.
    pub true_rtt_ms: Option<f64>,
    /// Mean absolute error of the srtt samples.
    pub mae_ms: Option<f64>,
    /// Number of srtt samples.
    pub samples: usize,
}

/// Whether a path's minimum RTT comes from samples other than the RFC 10069 §5.4 fallback:
/// from own round trips (the first one restarts the estimator), or from the naive rule.
pub fn samples_without_fallback(c: &mpquic_proto::PathCounters) -> bool {
    c.own_rtt_samples > 0 || (c.rtt_samples > 0 && c.borrowed_rtt_samples == 0)
}

/// The simulator's ground truth about a path's links.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkTruth {
    /// Packets dropped on the download link.
    pub drops: Option<u64>,
    /// Smallest possible RTT of a round trip on the path (ms).
    pub min_rtt_floor_ms: Option<f64>,
}

/// Path figures from the sender's stats, the receiver's stats of the same
/// path and the srtt error analysis.
pub fn path_result(
    sender: &PathStats,
    receiver: Option<&PathStats>,
    interface: Option<usize>,
    truth: RttTruth,
    links: LinkTruth,
) -> PathResult {
    let RttTruth {
        true_rtt_ms,
        mae_ms: srtt_mae_ms,
        samples: srtt_samples,
    } = truth;
    let c = &sender.counters;
    // Runs without path MTU discovery record what they did before it existed.
    let discovering = sender.mtu_phase != mpquic_proto::MtuPhase::Disabled;
    let (acks, ack_bytes) = receiver.map_or((0, 0), |r| {
        (r.counters.ack_frames_sent, r.counters.ack_frame_bytes)
    });
    PathResult {
        id: sender.id,
        interface,
        bytes_sent: c.stream_bytes_sent,
        packets_sent: c.packets_sent,
        packets_lost: c.packets_lost,
        spurious_losses: c.spurious_losses,
        time_threshold_losses: c.time_threshold_losses,
        time_threshold_spurious: c.time_threshold_spurious,
        congestion_undos: c.congestion_undos,
        link_drops: links.drops,
        retransmitted_bytes: c.retransmitted_bytes,
        srtt_ms: sender.srtt_ms,
        min_rtt_ms: sender.min_rtt_ms,
        rttvar_ms: sender.rttvar_ms,
        true_rtt_ms,
        srtt_mae_ms,
        srtt_mae_ratio: match (srtt_mae_ms, true_rtt_ms) {
            (Some(e), Some(t)) if t > 0.0 => Some(e / t),
            _ => None,
        },
        srtt_samples,
        rtt_samples: c.rtt_samples,
        own_rtt_samples: c.own_rtt_samples,
        borrowed_rtt_samples: c.borrowed_rtt_samples,
        min_rtt_floor_ms: links.min_rtt_floor_ms,
        receiver_min_rtt_ms: receiver
            .filter(|r| samples_without_fallback(&r.counters))
            .map(|r| r.min_rtt_ms),
        cwnd: sender.cwnd,
        mtu: discovering.then_some(sender.mtu),
        mtu_counters: discovering.then_some(sender.mtu_counters),
        validated: sender.validation == mpquic_proto::Validation::Validated,
        abandoned: sender.abandoned,
        receiver_ack_frames: acks,
        receiver_avg_ack_frame_bytes: if acks == 0 {
            0.0
        } else {
            ack_bytes as f64 / acks as f64
        },
        ecn: sender.ecn.clone(),
    }
}

/// Goodput in Mbit/s of `bytes` over `seconds`.
pub fn mbps(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 * 8.0 / seconds / 1e6
    } else {
        0.0
    }
}

/// Virtual nanoseconds to seconds.
pub fn secs(ns: u64) -> f64 {
    as_secs_f64(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combined_figures_sum_counts_and_weight_means_by_ack_frames() {
        let a = ConnectionFigures {
            ack_frames_sent: 10,
            avg_ack_frame_bytes: 8.0,
            mean_ranges_per_ack: 1.0,
            ack_range_histogram: [10, 0, 0, 0, 0, 0, 0, 0],
            retransmitted_bytes: 100,
            ..ConnectionFigures::default()
        };
        let b = ConnectionFigures {
            ack_frames_sent: 30,
            avg_ack_frame_bytes: 16.0,
            mean_ranges_per_ack: 3.0,
            ack_range_histogram: [0, 0, 30, 0, 0, 0, 0, 0],
            error: Some("closed".into()),
            ..ConnectionFigures::default()
        };
        let c = ConnectionFigures::combine(&[a.clone(), b]);
        assert_eq!(c.ack_frames_sent, 40);
        assert_eq!(c.avg_ack_frame_bytes, 14.0);
        assert_eq!(c.mean_ranges_per_ack, 2.5);
        assert_eq!(c.ack_range_histogram, [10, 0, 30, 0, 0, 0, 0, 0]);
        assert_eq!(c.retransmitted_bytes, 100);
        assert_eq!(c.error.as_deref(), Some("closed"));
        assert_eq!(
            ConnectionFigures::combine(std::slice::from_ref(&a)).avg_ack_frame_bytes,
            8.0
        );
    }
}
