//! What one packet number space has received: for duplicate detection (RFC 9000 §12.3) and for
//! building ACK frames (RFC 9000 §13.2).

use mpquic_wire::range_set::RangeSet;

use crate::time::Timestamp;

/// Ranges kept for duplicate detection before the oldest settled ones are dropped (see
/// [`ReceiveRecord::set_settled`]).
const MAX_RECEIVED_RANGES: usize = 1024;
/// Ranges kept for duplicate detection in any case: beyond it the oldest go even if packets
/// may still arrive in the gaps below them (a path that stopped delivering pins `settled`).
const HARD_MAX_RECEIVED_RANGES: usize = 8 * MAX_RECEIVED_RANGES;
/// Ranges kept for acknowledgement. Far more than an ACK frame carries: in a shared space the
/// slow paths' in-flight packets are holes between the fast path's packets, and a slow path's
/// packets arrive below all of them, so the ranges a path's ACK must reach can be many
/// hundreds below the space's largest.
const MAX_TO_ACK_RANGES: usize = 1024;

/// Receive record of one packet number space.
#[derive(Debug, Default)]
pub(crate) struct ReceiveRecord {
    /// Every packet number received (bounded; below `floor` all are treated as duplicates).
    received: RangeSet,
    /// Packet numbers still worth acknowledging (pruned by ACK-of-ACK, RFC 9000 §13.2.4).
    to_ack: RangeSet,
    /// Packet numbers received since the last ACK frame for this space was sent.
    newly_received: RangeSet,
    /// Every range of `to_ack` starting below this holds a newly received packet: the search
    /// for a range to drop starts here. Raised when a search found none; back to 0 whenever
    /// packets leave `newly_received` other than below the dropped lowest range. Without it,
    /// a peer that asked for no ACK for a long while (ACK_FREQUENCY) and left a gap after every
    /// packet had each of its packets search all MAX_TO_ACK_RANGES ranges.
    all_newly_below: u64,
    /// Packets below this number are refused as duplicates or too old.
    floor: u64,
    /// Every path of the space has received a packet numbered at least this: a gap below it
    /// will not be filled by a packet still in flight on an in-order path.
    settled: u64,
    largest: Option<(u64, Timestamp)>,
    /// The largest Largest Acknowledged of the ACK frames sent for this space.
    largest_reported: Option<u64>,
    /// ECN codepoints of the packets received in this space (RFC 9000 §13.4.1).
    pub ecn: mpquic_wire::frame::EcnCounts,
}

impl ReceiveRecord {
    /// Whether `pn` was already received (or is too old to tell).
    pub(crate) fn is_duplicate(&self, pn: u64) -> bool {
        pn < self.floor || self.received.contains(pn)
    }

    /// Record a packet that was successfully decrypted. Returns true if it arrived out of order
    /// (below the largest so far, or leaving a gap) — RFC 9000 §13.2.1 immediate-ACK trigger.
    pub(crate) fn on_received(&mut self, pn: u64, now: Timestamp) -> bool {
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
        // The floor rises over the oldest gaps (refusing what might still fill them) only
        // where every path has delivered something newer: in a shared space the gaps above
        // that are a slower path's packets still in flight (RFC 9000 §12.3 lets a receiver
        // bound its duplicate detection, not refuse packets it is still owed).
        while self.received.len() > MAX_RECEIVED_RANGES {
            let lowest_end = self.received.peek_min().map_or(0, |r| r.end);
            if lowest_end > self.settled && self.received.len() <= HARD_MAX_RECEIVED_RANGES {
                break;
            }
            if let Some(r) = self.received.pop_min() {
                self.floor = self.floor.max(r.end);
            }
        }
        while self.to_ack.len() > MAX_TO_ACK_RANGES {
            // The oldest range no ACK still has to report: a range holding a packet not yet
            // reported (a slow path's, arriving far below the space's largest) is kept, or the
            // sender would never see it acknowledged and declare it lost.
            let victim = self
                .to_ack
                .iter_from(self.all_newly_below)
                .inspect(|_| crate::work::count_ack_range_scan(1))
                .find(|r| !self.newly_received.intersects(r.clone()));
            match victim {
                Some(r) => {
                    self.to_ack.remove(r);
                }
                None => {
                    self.all_newly_below = self.to_ack.max().unwrap_or(0);
                    if let Some(r) = self.to_ack.pop_min() {
                        // Never to be acknowledged now: not "new" either (keeps it bounded).
                        self.newly_received.remove(0..r.end);
                    }
                }
            }
        }
        out_of_order
    }

    /// Every path that receives packets of this space has received one numbered at least
    /// `pn` (the smallest of the paths' largest received packets; with one path per space,
    /// that path's largest).
    pub(crate) fn set_settled(&mut self, pn: u64) {
        self.settled = self.settled.max(pn);
    }

    /// The largest packet number received, with its arrival time.
    pub(crate) fn largest(&self) -> Option<(u64, Timestamp)> {
        self.largest
    }

    /// The largest packet number any ACK frame sent for this space acknowledged ("Largest
    /// Acked" of draft-ietf-quic-ack-frequency).
    pub(crate) fn largest_reported(&self) -> Option<u64> {
        self.largest_reported
    }

    /// The smallest packet number in `from..below` not received (packets under the
    /// duplicate-detection floor count as received).
    /// The walk starts at the range holding `from`: the ranges below it (up to
    /// HARD_MAX_RECEIVED_RANGES, kept while a slow path pins `settled`) ended before it, and a
    /// peer leaving a gap after every packet under a Reordering Threshold had each of its
    /// packets walk them all.
    pub(crate) fn first_missing_from(&self, from: u64, below: u64) -> Option<u64> {
        let mut next = from.max(self.floor);
        let start = self
            .received
            .range_containing(next)
            .map_or(next, |r| r.start);
        for r in self.received.iter_from(start) {
            crate::work::count_received_range_walk(1);
            if r.start > next {
                break;
            }
            next = next.max(r.end);
        }
        (next < below).then_some(next)
    }

    /// Ranges to acknowledge at or below `largest`, highest first.
    pub(crate) fn ack_ranges_desc(
        &self,
        largest: u64,
    ) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        self.to_ack
            .iter_rev_to(largest)
            .map(move |r| r.start..r.end.min(largest + 1))
    }

    /// The ranges to acknowledge that start below `end`, highest first, as they are (not
    /// clipped at `end`).
    pub(crate) fn ack_ranges_rev_below(
        &self,
        end: u64,
    ) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        end.checked_sub(1)
            .into_iter()
            .flat_map(|last| self.to_ack.iter_rev_to(last))
    }

    /// [`Self::ack_ranges_desc`] lowest first.
    pub(crate) fn ack_ranges_asc(
        &self,
        largest: u64,
    ) -> impl Iterator<Item = std::ops::Range<u64>> + '_ {
        self.to_ack
            .iter()
            .take_while(move |r| r.start <= largest)
            .map(move |r| r.start..r.end.min(largest + 1))
    }

    /// Packets received since the last ACK was sent for this space.
    pub(crate) fn newly_received(&self) -> &RangeSet {
        &self.newly_received
    }

    /// An ACK frame reporting `ranges` (descending) was sent: those packets have been
    /// acknowledged once.
    /// Packets it left out stay "newly received" (in SPNS a path's ACK starts at that path's
    /// largest, so packets of faster paths above it are not in the frame and must still be
    /// reported by their own path's next ACK, Alibaba report §2.4).
    pub(crate) fn on_ranges_reported(&mut self, ranges: &[std::ops::RangeInclusive<u64>]) {
        if let Some(largest) = ranges.iter().map(|r| *r.end()).max() {
            self.largest_reported = Some(self.largest_reported.map_or(largest, |l| l.max(largest)));
        }
        self.all_newly_below = 0;
        for r in ranges {
            // Descending ranges (an ACK frame's): once one ends below the newly received
            // packets, so do the rest; most of a frame's ranges are older than the last ACK.
            if self.newly_received.min().is_none_or(|min| *r.end() < min) {
                break;
            }
            self.newly_received
                .remove(*r.start()..r.end().saturating_add(1));
        }
    }

    /// The peer acknowledged a packet carrying our ACK frame with `ranges` (descending): stop
    /// repeating them (RFC 9000 §13.2.4). Only those ranges: ranges the frame left out (over
    /// the range limit) and packets that arrived after it in the gaps between its ranges (a
    /// slower path's packets, in a shared space) were not reported and stay. The frame's
    /// Largest Acknowledged stays too, so later ACKs start at a known packet.
    pub(crate) fn on_ack_acked(&mut self, ranges: &[std::ops::RangeInclusive<u64>]) {
        let Some(largest) = ranges.first().map(|r| *r.end()) else {
            return;
        };
        self.all_newly_below = 0;
        for r in ranges {
            // Exclusive end; the largest itself is kept.
            let end = if *r.end() == largest {
                largest
            } else {
                r.end().saturating_add(1)
            };
            if end > *r.start() {
                self.to_ack.remove(*r.start()..end);
                self.newly_received.remove(*r.start()..end);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eviction search that starts above the ranges found all holding new packets drops
    /// the same ranges as one over every range (`all_newly_below` kept at 0), through gaps,
    /// reordering, ACKs sent and ACKs acknowledged.
    #[test]
    fn eviction_from_the_mark_matches_a_full_search() {
        let (mut fast, mut full) = (ReceiveRecord::default(), ReceiveRecord::default());
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut pn, mut capped, mut marked) = (0u64, false, false);
        let mut sent = Vec::new();
        for step in 0..30_000u32 {
            let r = next();
            // A long stretch without ACKs: every range holds new packets, the mark rises.
            let kind = if (10_000..16_000).contains(&step) {
                0
            } else {
                r % 1000
            };
            match kind {
                // Mostly new packets with a gap, now and then one arriving late.
                0..=989 => {
                    pn += 1 + r / 1000 % 3;
                    let p = if r % 7 == 0 {
                        pn.saturating_sub(r / 1000 % 50)
                    } else {
                        pn
                    };
                    if !full.is_duplicate(p) {
                        fast.on_received(p, Timestamp::ZERO);
                        full.all_newly_below = 0;
                        full.on_received(p, Timestamp::ZERO);
                    }
                }
                990..=994 => {
                    let ranges: Vec<_> = full
                        .ack_ranges_desc(pn)
                        .take(64)
                        .map(|r| r.start..=r.end - 1)
                        .collect();
                    fast.on_ranges_reported(&ranges);
                    full.on_ranges_reported(&ranges);
                    sent.push(ranges);
                }
                // The peer acknowledged the oldest ACK frame sent not yet acknowledged.
                _ if !sent.is_empty() => {
                    let ranges = sent.remove(0);
                    fast.on_ack_acked(&ranges);
                    full.on_ack_acked(&ranges);
                }
                _ => {}
            }
            capped |= fast.to_ack.len() == MAX_TO_ACK_RANGES;
            marked |= fast.all_newly_below > 0;
            if step % 64 == 0 {
                assert_eq!(fast.to_ack, full.to_ack, "step {step}");
                assert_eq!(fast.newly_received, full.newly_received, "step {step}");
            }
        }
        assert!(capped && marked, "capped {capped}, marked {marked}");
    }

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

    /// Duplicate detection gives up the oldest gaps only below `settled`: above it a slower
    /// path's packets are still on their way.
    #[test]
    fn the_duplicate_floor_waits_for_every_path() {
        let mut rec = ReceiveRecord::default();
        // A fast path delivers every other packet number; the slow path's (the odd ones) are
        // all still in flight.
        let n = MAX_RECEIVED_RANGES as u64 + 10;
        for k in 0..n {
            rec.on_received(2 * k, Timestamp::ZERO);
        }
        assert!(
            !rec.is_duplicate(1),
            "the slow path's first packet is still accepted"
        );
        // The slow path delivered up to 21: gaps below it may be given up.
        rec.set_settled(21);
        rec.on_received(2 * n, Timestamp::ZERO);
        assert!(rec.is_duplicate(1));
        assert!(!rec.is_duplicate(23));
    }

    /// Over the range cap, the oldest range that was already reported goes, not a range with
    /// a packet no ACK has reported yet (a slow path's, below many holes).
    #[test]
    fn the_range_cap_keeps_unreported_packets() {
        let mut rec = ReceiveRecord::default();
        // A slow path's packet 1 arrives and is not reported yet; then every other packet
        // number of a fast path, all reported.
        rec.on_received(1, Timestamp::ZERO);
        let fast: Vec<u64> = (0..MAX_TO_ACK_RANGES as u64 + 8)
            .map(|k| 10 + 2 * k)
            .collect();
        for &pn in &fast {
            rec.on_received(pn, Timestamp::ZERO);
            rec.on_ranges_reported(&[pn..=pn]);
        }
        let top = *fast.last().unwrap();
        let ranges: Vec<_> = rec.ack_ranges_desc(top).collect();
        assert_eq!(ranges.len(), MAX_TO_ACK_RANGES);
        assert_eq!(ranges.last(), Some(&(1..2)), "the unreported packet stays");
        assert!(
            !rec.ack_ranges_desc(top).any(|r| r.start == 10),
            "the oldest reported goes"
        );
        assert_eq!(rec.newly_received().iter().collect::<Vec<_>>(), vec![1..2]);
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
        // An ACK with Largest Acknowledged 3 reported 3 and 1-0: all but its largest go.
        rec.on_ack_acked(&[3..=3, 0..=1]);
        let ranges: Vec<_> = rec.ack_ranges_desc(5).collect();
        assert_eq!(ranges, vec![5..6, 3..4]);
        assert!(rec.is_duplicate(1), "pruned ranges still count as received");
    }

    /// A slow path's packet that arrived after an ACK was sent, in a gap between the ranges
    /// that ACK reported, was not reported by it: pruning that ACK's ranges must keep it.
    #[test]
    fn pruning_keeps_packets_that_arrived_in_the_gaps_later() {
        let mut rec = ReceiveRecord::default();
        for pn in [0, 1, 2, 5, 6, 9, 10] {
            rec.on_received(pn, Timestamp::ZERO);
        }
        let sent = [9..=10, 5..=6, 0..=2];
        rec.on_ranges_reported(&sent);
        // 3 and 7 (another path's) arrive before the ACK is acknowledged.
        rec.on_received(3, Timestamp::ZERO);
        rec.on_received(7, Timestamp::ZERO);
        rec.on_ack_acked(&sent);
        assert_eq!(
            rec.ack_ranges_desc(10).collect::<Vec<_>>(),
            vec![10..11, 7..8, 3..4],
            "the frame's largest, and the two packets it never reported"
        );
        let new: Vec<_> = rec.newly_received().iter().collect();
        assert_eq!(new, vec![3..4, 7..8], "still to be reported");
    }
}
