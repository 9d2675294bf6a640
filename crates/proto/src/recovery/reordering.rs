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

use crate::recovery::ledger::PACKET_THRESHOLD;

/// Loss detection's packet threshold on one path at one level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PacketThreshold(u64);

impl Default for PacketThreshold {
    fn default() -> Self {
        PacketThreshold(PACKET_THRESHOLD)
    }
}

impl PacketThreshold {
    /// The threshold: packets of the path acknowledged after a packet before it is lost.
    pub(crate) fn get(self) -> u64 {
        self.0
    }

    /// A packet declared lost by this threshold was acknowledged after all, `displacement`
    /// packets of the path after it having been acknowledged first: raise the threshold past
    /// that reordering, up to `max`. Returns whether it rose.
    pub(crate) fn on_spurious_loss(&mut self, displacement: u64, max: u64) -> bool {
        let wanted = displacement.saturating_add(1).min(max);
        if wanted > self.0 {
            self.0 = wanted;
            true
        } else {
            false
        }
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
        let mut fixed = PacketThreshold::default();
        assert!(
            !fixed.on_spurious_loss(50, PACKET_THRESHOLD),
            "max 3: fixed"
        );
        assert_eq!(fixed.get(), 3);
    }
}
