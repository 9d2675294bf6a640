//! What one packet number space has received: for duplicate detection (RFC 9000 §12.3) and for
//! building ACK frames (RFC 9000 §13.2).

use mpquic_wire::range_set::RangeSet;

use crate::time::Timestamp;

/// Ranges kept for duplicate detection before the oldest are dropped.
const MAX_RECEIVED_RANGES: usize = 1024;
/// Ranges kept for acknowledgement (more than any ACK frame carries).
const MAX_TO_ACK_RANGES: usize = 256;

/// Receive record of one packet number space.
#[derive(Debug, Default)]
pub struct ReceiveRecord {
    /// Every packet number received (bounded; below `floor` all are treated as duplicates).
    received: RangeSet,
    /// Packet numbers still worth acknowledging (pruned by ACK-of-ACK, RFC 9000 §13.2.4).
    to_ack: RangeSet,
    /// Packet numbers received since the last ACK frame for this space was sent.
    newly_received: RangeSet,
    /// Packets below this number are refused as duplicates or too old.
    floor: u64,
    largest: Option<(u64, Timestamp)>,
}

impl ReceiveRecord {
    /// Whether `pn` was already received (or is too old to tell).
    pub fn is_duplicate(&self, pn: u64) -> bool {
        pn < self.floor || self.received.contains(pn)
    }

    /// Record a packet that was successfully decrypted. Returns true if it arrived out of order
    /// (below the largest so far, or leaving a gap) — RFC 9000 §13.2.1 immediate-ACK trigger.
    pub fn on_received(&mut self, pn: u64, now: Timestamp) -> bool {
        let out_of_order = match self.largest {
            Some((largest, _)) => pn < largest || pn > largest + 1,
            None => pn != 0,
        };
        if self.largest.is_none_or(|(l, _)| pn > l) {
            self.largest = Some((pn, now));
        }
        self.received.insert_one(pn);
        self.to_ack.insert_one(pn);
        self.newly_received.insert_one(pn);
        while self.received.len() > MAX_RECEIVED_RANGES {
            if let Some(r) = self.received.pop_min() {
                self.floor = self.floor.max(r.end);
            }
        }
        while self.to_ack.len() > MAX_TO_ACK_RANGES {
            if let Some(r) = self.to_ack.pop_min() {
                // Never to be acknowledged now: not "new" either (keeps the set bounded).
                self.newly_received.remove(0..r.end);
            }
        }
        out_of_order
    }

    /// The largest packet number received, with its arrival time.
    pub fn largest(&self) -> Option<(u64, Timestamp)> {
        self.largest
    }

    /// Ranges to acknowledge at or below `largest`, highest first.
    pub fn ack_ranges_desc(&self, largest: u64) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        self.to_ack
            .iter_rev()
            .filter(move |r| r.start <= largest)
            .map(move |r| r.start..r.end.min(largest + 1))
    }

    /// Packets received since the last ACK was sent for this space.
    pub fn newly_received(&self) -> &RangeSet {
        &self.newly_received
    }

    /// An ACK frame reporting `ranges` was sent: those packets have been acknowledged once.
    /// Packets it left out stay "newly received" (in SPNS a path's ACK starts at that path's
    /// largest, so packets of faster paths above it are not in the frame and must still be
    /// reported by their own path's next ACK, Alibaba report §2.4).
    pub fn on_ranges_reported(&mut self, ranges: &[std::ops::RangeInclusive<u64>]) {
        for r in ranges {
            self.newly_received
                .remove(*r.start()..r.end().saturating_add(1));
        }
    }

    /// The peer acknowledged a packet carrying our ACK that reported every received packet
    /// number in `low..high`: stop repeating them (RFC 9000 §13.2.4). Ranges the frame left out
    /// (over the range limit) stay, so they are still acknowledged later. The caller passes a
    /// `high` that excludes the frame's Largest Acknowledged, so later ACKs start at a known
    /// packet.
    pub fn on_ack_acked(&mut self, low: u64, high: u64) {
        if high > low {
            self.to_ack.remove(low..high);
            self.newly_received.remove(low..high);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reported_ranges_are_no_longer_new_but_the_rest_is() {
        let mut rec = ReceiveRecord::default();
        for pn in [0, 1, 2, 5, 6, 9] {
            rec.on_received(pn, Timestamp::ZERO);
        }
        // A slow path's ACK starts at its largest (2): packets above it stay new.
        rec.on_ranges_reported(&[0..=2]);
        let new: Vec<_> = rec.newly_received().iter().collect();
        assert_eq!(new, vec![5..7, 9..10]);
        rec.on_ranges_reported(&[9..=9, 5..=6]);
        assert!(rec.newly_received().is_empty());
    }

    #[test]
    fn detects_duplicates_and_reordering() {
        let mut rec = ReceiveRecord::default();
        let t = Timestamp::ZERO;
        assert!(!rec.on_received(0, t));
        assert!(!rec.on_received(1, t));
        assert!(rec.on_received(5, t));
        assert!(rec.on_received(3, t));
        assert!(rec.is_duplicate(3));
        assert!(!rec.is_duplicate(4));
        let ranges: Vec<_> = rec.ack_ranges_desc(5).collect();
        assert_eq!(ranges, vec![5..6, 3..4, 0..2]);
        let ranges: Vec<_> = rec.ack_ranges_desc(3).collect();
        assert_eq!(ranges, vec![3..4, 0..2]);
        rec.on_ack_acked(0, 3);
        let ranges: Vec<_> = rec.ack_ranges_desc(5).collect();
        assert_eq!(ranges, vec![5..6, 3..4]);
        // A block the ACK did not report is kept.
        rec.on_ack_acked(4, 5);
        assert_eq!(rec.ack_ranges_desc(5).collect::<Vec<_>>(), vec![5..6, 3..4]);
        assert!(rec.is_duplicate(1), "pruned ranges still count as received");
    }
}
