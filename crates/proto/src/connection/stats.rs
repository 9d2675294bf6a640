//! Connection statistics.

use crate::time::Timestamp;

/// Histogram bucket upper bounds for ranges per ACK frame.
pub(super) const ACK_RANGE_BUCKETS: [usize; 8] = [1, 2, 4, 8, 16, 32, 64, usize::MAX];

/// Counters of one connection (issue 5: ACK statistics; issue 2: packets sent/lost).
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct ConnectionStats {
    /// UDP datagrams handed out for sending (each may hold coalesced packets).
    pub datagrams_sent: u64,
    /// UDP datagrams passed in for this connection, counted before their packets are processed.
    pub datagrams_received: u64,
    /// Bytes of those sent datagrams (UDP payload): every packet and its padding included.
    pub bytes_sent: u64,
    /// Bytes (whole packet size) of in-flight packets newly acknowledged; ACK-only packets do
    /// not count.
    pub bytes_acked: u64,
    /// QUIC packets sent, at every encryption level and on every path.
    pub packets_sent: u64,
    /// QUIC packets received, authenticated and processed.
    pub packets_received: u64,
    /// Packets declared lost by loss detection (RFC 9002 §6); packets moved off a failed path do
    /// not count.
    pub packets_lost: u64,
    /// Received packets discarded unprocessed: another DCID in a coalesced datagram, unparsable,
    /// no keys, failed authentication, duplicate, unaccepted 0-RTT or Retry, early-packet overflow.
    pub packets_dropped: u64,
    /// Received packets whose number was already received in their space (also counted in
    /// `packets_dropped`).
    pub duplicate_packets: u64,
    /// Packets that failed AEAD authentication (RFC 9001 §5.5), at any encryption level: forged
    /// or corrupted packets, stateless resets, and packets whose number was decoded wrongly
    /// (RFC 9000 §17.1, Appendix A.3) or whose keys are gone.
    pub auth_failures: u64,
    /// Packets declared lost that were acknowledged later (spurious losses).
    pub spurious_losses: u64,
    /// Probe timeouts that fired, over all paths and encryption levels (RFC 9002 §6.2).
    pub pto_count: u64,
    /// 1-RTT key updates (RFC 9001 §6), started here or by the peer.
    pub key_updates: u64,
    /// Paths declared failed (once per path), whose in-flight data moved to other paths (issue 4).
    pub handovers: u64,
    /// Stream bytes sent again on another path by XLINK re-injection.
    pub reinjected_bytes: u64,
    /// ACK and PATH_ACK frames sent.
    pub ack_frames_sent: u64,
    /// Encoded size of those ACK frames, in bytes.
    pub ack_frame_bytes: u64,
    /// ACK ranges in those ACK frames, summed.
    pub ack_ranges_total: u64,
    /// Count of ACK frames whose range count is <= the matching bucket bound.
    pub ack_range_histogram: [u64; 8],
    /// DATAGRAM frames (RFC 9221) sent, acknowledged, lost, received and dropped.
    pub datagram_frames: super::DatagramStats,
    /// When the handshake completed (RFC 9001 §4.1.1); None until then.
    pub handshake_completed_at: Option<Timestamp>,
    /// 0-RTT packets (RFC 9000 §17.2.3) sent (client) and opened (server).
    pub zero_rtt_packets_sent: u64,
    /// Server: 0-RTT packets opened and processed.
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
