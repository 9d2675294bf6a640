//! An adaptive packet threshold (RFC 9002 §6.1.1): "Implementations that detect spurious
//! retransmissions and wish to reduce spurious retransmissions MAY increase the reordering
//! threshold".
//!
//! A path whose packets arrive out of order by more than kPacketThreshold (3) has packets
//! declared lost by the packet threshold that arrive a moment later: each such spurious loss
//! resends data and reduces the congestion window (undone only once every loss behind the
//! reduction proves spurious). Jitter on a fast path (5 ms of it at 50 Mbit/s spreads ~20
//! packets) does this to most losses it declares. The threshold of the path then rises to
//! the reordering the path showed, as TCP does with its `reordering` metric (RFC 8985 §2): the
//! distance, in packets of the path, between the late packet and the largest packet of the
//! path acknowledged before it, plus one. It never falls within a connection; a real loss is
//! then found by the time threshold (RFC 9002 §6.1.2) at the latest, about an eighth of an RTT
//! later than by the packet threshold, and by the packet threshold once enough later packets
//! are acknowledged.
//!
//! The time threshold adapts the same way (§6.1.2: "Implementations MAY experiment with ...
//! adaptive thresholds"): on a path whose delay varies by more than an eighth of its RTT (5 ms
//! of jitter on a 10 ms path) packets overtaken by later ones are declared lost by time, then
//! acknowledged. Each round trip that shows such a spurious loss adds an eighth of an RTT to
//! the path's loss delay, up to a maximum (2 RTTs by default: RACK's reordering window grows
//! to one smoothed RTT, RFC 8985 §6.2, which is about the same).

use crate::recovery::ledger::PACKET_THRESHOLD;
use crate::recovery::rtt::{RttEstimator, GRANULARITY};
use crate::time::{Duration, Timestamp};

/// RFC 9002 §6.1.2 kTimeThreshold, 9/8, in eighths of an RTT.
pub(crate) const TIME_THRESHOLD_EIGHTHS: u32 = 9;

/// The loss-detection thresholds of one path (all its levels: the reordering is the
/// network path's).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct LossThresholds {
    pub packet: PacketThreshold,
    pub time: TimeThreshold,
}

/// Loss detection's packet threshold on one path, and the largest reordering it measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PacketThreshold {
    value: u32,
    /// The largest displacement a spurious loss showed (not capped by the maximum threshold):
    /// packets of the path that overtook one of its packets (0 while none did). Packet-number
    /// lengths cover it (`connection/pn_len.rs`).
    seen: u32,
}

impl Default for PacketThreshold {
    fn default() -> Self {
        PacketThreshold {
            value: PACKET_THRESHOLD as u32,
            seen: 0,
        }
    }
}

impl PacketThreshold {
    /// The threshold: packets of the path acknowledged after a packet before it is lost.
    pub(crate) fn get(self) -> u64 {
        u64::from(self.value)
    }

    /// The most packets of the path seen to overtake one of its packets (0: none yet).
    pub(crate) fn reordering_seen(self) -> u64 {
        u64::from(self.seen)
    }

    /// A packet declared lost by this threshold was acknowledged after all, `displacement`
    /// packets of the path after it having been acknowledged first: raise the threshold past
    /// that reordering, up to `max` (at most 2^16, `TransportConfig::validate`). Returns
    /// whether it rose.
    pub(crate) fn on_spurious_loss(&mut self, displacement: u64, max: u64) -> bool {
        let clamp = |v: u64| u32::try_from(v).unwrap_or(u32::MAX);
        self.seen = self.seen.max(clamp(displacement));
        let wanted = displacement.saturating_add(1).min(max);
        if wanted > self.get() {
            self.value = clamp(wanted);
            true
        } else {
            false
        }
    }
}

/// Loss detection's time threshold on one path, in eighths of max(smoothed_rtt, latest_rtt).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TimeThreshold {
    eighths: u32,
    /// When it last rose: it rises at most once per smoothed RTT (the spurious losses of one
    /// round trip are one piece of evidence).
    raised_at: Option<Timestamp>,
}

impl Default for TimeThreshold {
    fn default() -> Self {
        TimeThreshold {
            eighths: TIME_THRESHOLD_EIGHTHS,
            raised_at: None,
        }
    }
}

impl TimeThreshold {
    /// RFC 9002 §6.1.2: max(threshold * max(smoothed_rtt, latest_rtt), kGranularity).
    pub(crate) fn loss_delay(self, rtt: &RttEstimator) -> Duration {
        (rtt.smoothed().max(rtt.latest()) * self.eighths / 8).max(GRANULARITY)
    }

    /// The threshold in eighths of an RTT.
    pub(crate) fn eighths(self) -> u32 {
        self.eighths
    }

    /// A packet declared lost by this threshold was acknowledged after all: add an eighth of
    /// an RTT, up to `max_eighths`, unless it already rose within the last `srtt`. Returns
    /// whether it rose.
    pub(crate) fn on_spurious_loss(
        &mut self,
        now: Timestamp,
        srtt: Duration,
        max_eighths: u32,
    ) -> bool {
        if self.eighths >= max_eighths || self.raised_at.is_some_and(|t| now < t + srtt) {
            return false;
        }
        self.eighths += 1;
        self.raised_at = Some(now);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rises_to_the_reordering_seen_and_never_past_the_maximum() {
        let mut t = PacketThreshold::default();
        assert_eq!(t.get(), 3);
        assert!(!t.on_spurious_loss(2, 64), "within the threshold already");
        assert!(t.on_spurious_loss(9, 64));
        assert_eq!(t.get(), 10);
        assert!(!t.on_spurious_loss(5, 64), "never falls");
        assert!(t.on_spurious_loss(1_000, 64));
        assert_eq!(t.get(), 64);
        assert_eq!(
            t.reordering_seen(),
            1_000,
            "what was seen, beyond the maximum"
        );
        let mut fixed = PacketThreshold::default();
        assert!(
            !fixed.on_spurious_loss(50, PACKET_THRESHOLD),
            "max 3: fixed"
        );
        assert_eq!(fixed.get(), 3);
    }
}
