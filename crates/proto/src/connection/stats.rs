//! Connection statistics.

use crate::time::Timestamp;

/// Histogram bucket upper bounds for ranges per ACK frame.
pub const ACK_RANGE_BUCKETS: [usize; 8] = [1, 2, 4, 8, 16, 32, 64, usize::MAX];

/// Counters of one connection (issue 5: ACK statistics; issue 2: packets sent/lost).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ConnectionStats {
    pub datagrams_sent: u64,
    pub datagrams_received: u64,
    pub bytes_sent: u64,
    pub bytes_acked: u64,
    pub packets_sent: u64,
    pub packets_received: u64,
    pub packets_lost: u64,
    pub packets_dropped: u64,
    pub duplicate_packets: u64,
    /// Packets that failed AEAD authentication (RFC 9001 §5.5), at any encryption level: forged
    /// or corrupted packets, stateless resets, and packets whose number was decoded wrongly
    /// (RFC 9000 §17.1, Appendix A.3) or whose keys are gone.
    pub auth_failures: u64,
    pub spurious_losses: u64,
    pub pto_count: u64,
    pub key_updates: u64,
    pub handovers: u64,
    /// Stream bytes sent again on another path by XLINK re-injection.
    pub reinjected_bytes: u64,
    pub ack_frames_sent: u64,
    pub ack_frame_bytes: u64,
    pub ack_ranges_total: u64,
    /// Count of ACK frames whose range count is <= the matching bucket bound.
    pub ack_range_histogram: [u64; 8],
    /// DATAGRAM frames (RFC 9221) sent, acknowledged, lost, received and dropped.
    pub datagram_frames: super::DatagramStats,
    pub handshake_completed_at: Option<Timestamp>,
    /// 0-RTT packets (RFC 9000 §17.2.3) sent (client) and opened (server).
    pub zero_rtt_packets_sent: u64,
    pub zero_rtt_packets_received: u64,
    /// Client: stream bytes sent in 0-RTT packets.
    pub zero_rtt_stream_bytes: u64,
    /// Client: 0-RTT packets taken out of flight because the server rejected 0-RTT (their data
    /// went again in 1-RTT, RFC 9001 §4.6.2) or answered with a Retry (again in 0-RTT).
    pub zero_rtt_packets_requeued: u64,
    /// Whether the server accepted 0-RTT; None when it was not attempted or not yet known.
    pub zero_rtt_accepted: Option<bool>,
}

impl ConnectionStats {
    pub(crate) fn on_ack_sent(&mut self, bytes: usize, ranges: usize) {
        self.ack_frames_sent += 1;
        self.ack_frame_bytes += bytes as u64;
        self.ack_ranges_total += ranges as u64;
        let bucket = ACK_RANGE_BUCKETS
            .iter()
            .position(|&b| ranges <= b)
            .unwrap_or(ACK_RANGE_BUCKETS.len() - 1);
        self.ack_range_histogram[bucket] += 1;
    }

    /// Mean ACK frame size in bytes.
    pub fn mean_ack_frame_bytes(&self) -> f64 {
        if self.ack_frames_sent == 0 {
            0.0
        } else {
            self.ack_frame_bytes as f64 / self.ack_frames_sent as f64
        }
    }
}

impl super::Connection {
    /// Connection statistics.
    pub fn stats(&self) -> ConnectionStats {
        self.stats.clone()
    }

    /// Retransmitted stream bytes (from the stream layer).
    pub fn retransmitted_bytes(&self) -> u64 {
        self.streams.stats().bytes_retransmitted
    }
}
