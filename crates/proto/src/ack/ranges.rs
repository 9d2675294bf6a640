//! ACK range selection under the two limits of the Alibaba report §2.4: at most Default_Limit
//! ranges, exceeded only to cover a packet received since the last ACK, never beyond
//! Maximum_Limit.

use std::ops::{Range, RangeInclusive};

use super::{AckConfig, RangeOrder};
use crate::space::ReceiveRecord;

/// The reported block of an ACK: every received packet number in `low..high` is in the frame.
pub type Reported = (u64, u64);

/// The ranges of an ACK frame with Largest Acknowledged `largest`, descending, and the block of
/// packet numbers whose receipt they report completely (for ACK-of-ACK pruning: ranges left out
/// by the limits must not be forgotten).
pub fn select_ranges(
    record: &ReceiveRecord,
    largest: u64,
    config: &AckConfig,
) -> (Vec<RangeInclusive<u64>>, Reported) {
    let hard_limit = config.max_range_limit.max(1);
    // Built once, in the frame's form; the common case (within the limit) returns it as is.
    let mut all: Vec<RangeInclusive<u64>> = record
        .ack_ranges_desc(largest)
        .map(|r| r.start..=r.end - 1)
        .collect();
    let default_limit = config.default_range_limit.clamp(1, hard_limit);
    if all.len() <= default_limit {
        return (all, (0, largest));
    }
    match config.range_order {
        RangeOrder::HighestFirst => {
            let newest_needed = last_range_with_new_packet(&all, record);
            let count = default_limit
                .max(newest_needed.map_or(0, |i| i + 1))
                .min(hard_limit);
            // Everything from the lowest included range up to the largest was reported.
            let low = *all[count - 1].start();
            all.truncate(count);
            (all, (low, largest))
        }
        RangeOrder::LowestFirst => lowest_first(&all, record, default_limit, hard_limit),
    }
}

/// The lowest-ranges-first heuristic (De Coninck, CCR 2022, the picoquic fix): after the range
/// holding Largest Acknowledged, the slots go to the lowest ranges, so old packets delayed
/// by a slow path are acknowledged before the sender gives up on them. Ranges holding a
/// packet received since the last ACK still come first (the report's rule, §2.4, up to
/// Maximum_Limit): a packet that is never acknowledged is retransmitted for nothing, and on
/// a path with reordering those are the newest packets in the middle ranges.
fn lowest_first(
    all: &[RangeInclusive<u64>],
    record: &ReceiveRecord,
    default_limit: usize,
    hard_limit: usize,
) -> (Vec<RangeInclusive<u64>>, Reported) {
    let mut keep = vec![false; all.len()];
    keep[0] = true;
    let mut count = 1;
    let new = record.newly_received();
    for (i, r) in all.iter().enumerate().skip(1) {
        if count == hard_limit {
            break;
        }
        if new.intersects(half_open(r)) {
            keep[i] = true;
            count += 1;
        }
    }
    for i in (1..all.len()).rev() {
        if count >= default_limit {
            break;
        }
        if !keep[i] {
            keep[i] = true;
            count += 1;
        }
    }
    let picked: Vec<RangeInclusive<u64>> = all
        .iter()
        .zip(&keep)
        .filter(|(_, &k)| k)
        .map(|(r, _)| r.clone())
        .collect();
    // The completely reported block: the kept run at the bottom when the lowest range is
    // kept, otherwise the kept run at the top.
    let reported = if keep[all.len() - 1] {
        let first = keep.iter().rposition(|&k| !k).map_or(0, |i| i + 1);
        let high = if first == 0 {
            u64::MAX
        } else {
            *all[first].end() + 1
        };
        (0, high)
    } else {
        let run = keep.iter().position(|&k| !k).unwrap_or(all.len());
        (*all[run - 1].start(), u64::MAX)
    };
    (picked, reported)
}

/// Index (in descending order) of the lowest range that holds a packet received since the last
/// ACK: a range that must be reported so the new packet is acknowledged.
fn last_range_with_new_packet(
    all: &[RangeInclusive<u64>],
    record: &ReceiveRecord,
) -> Option<usize> {
    let new = record.newly_received();
    let lowest_new = new.min()?;
    all.iter()
        .rposition(|r| *r.end() >= lowest_new && new.intersects(half_open(r)))
}

fn half_open(r: &RangeInclusive<u64>) -> Range<u64> {
    *r.start()..*r.end() + 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    fn record_with(pns: &[u64]) -> ReceiveRecord {
        let mut rec = ReceiveRecord::default();
        for &pn in pns {
            rec.on_received(pn, Timestamp::ZERO);
        }
        rec
    }

    /// An ACK reporting every received packet was sent: nothing is new any more.
    fn report_all(rec: &mut ReceiveRecord) {
        let all: Vec<_> = rec
            .ack_ranges_desc(u64::MAX - 1)
            .map(|r| r.start..=r.end - 1)
            .collect();
        rec.on_ranges_reported(&all);
        assert!(rec.newly_received().is_empty());
    }

    fn config(default: usize, max: usize, order: RangeOrder) -> AckConfig {
        AckConfig {
            default_range_limit: default,
            max_range_limit: max,
            range_order: order,
            ..AckConfig::default()
        }
    }

    #[test]
    fn alibaba_figures_1_and_2() {
        // Path 0 sent {1,2,6,7,11,12}, path 1 sent {0,3,4,5,8,9,10,13,14,15} in one space.
        // When #7 arrives on path 0, path 1 (faster) already delivered 8, 9 and 10: the ACK on
        // path 0 starts at path 0's largest (7), so it carries the single range 7-0.
        let rec = record_with(&[0, 3, 4, 5, 1, 2, 8, 9, 10, 6, 7]);
        let (ranges, _) = select_ranges(&rec, 7, &AckConfig::default());
        assert_eq!(ranges, vec![0..=7]);
        // When #13 arrives on path 1 (with 11 and 12 still in flight on path 0) the record is
        // {0..=10, 13}; path 1's largest is 13 => ranges 13 and 10-0.
        let rec = record_with(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13]);
        let (ranges, _) = select_ranges(&rec, 13, &AckConfig::default());
        assert_eq!(ranges, vec![13..=13, 0..=10]);
    }

    #[test]
    fn default_limit_is_exceeded_only_for_new_packets() {
        // Ranges (descending): 20, 16, 12, 8, 4, 0.
        let mut rec = record_with(&[0, 4, 8, 12, 16, 20]);
        report_all(&mut rec);
        let cfg = config(2, 64, RangeOrder::HighestFirst);
        assert_eq!(select_ranges(&rec, 20, &cfg).0, vec![20..=20, 16..=16]);
        // A newly received packet in an old range must be covered: limit grows to reach it.
        rec.on_received(9, Timestamp::ZERO);
        assert_eq!(
            select_ranges(&rec, 20, &cfg).0,
            vec![20..=20, 16..=16, 12..=12, 8..=9]
        );
        // ... but never beyond Maximum_Limit.
        let cfg = config(2, 3, RangeOrder::HighestFirst);
        assert_eq!(select_ranges(&rec, 20, &cfg).0.len(), 3);
    }

    #[test]
    fn reported_block_excludes_ranges_left_out() {
        let mut rec = record_with(&[0, 4, 8, 12, 16, 20]);
        report_all(&mut rec);
        let (_, reported) = select_ranges(&rec, 20, &config(2, 64, RangeOrder::HighestFirst));
        assert_eq!(
            reported,
            (16, 20),
            "ranges 12 and below were not reported: keep them"
        );
        let (_, reported) = select_ranges(&rec, 20, &config(3, 64, RangeOrder::LowestFirst));
        assert_eq!(
            reported,
            (0, 5),
            "only the bottom block 0..=4 was reported completely"
        );
        let (_, reported) = select_ranges(&rec, 20, &config(32, 64, RangeOrder::HighestFirst));
        assert_eq!(reported, (0, 20));
    }

    #[test]
    fn lowest_first_still_covers_new_packets() {
        // Ranges (descending): 20, 16, 12, 8, 4, 0; then 13 arrives late on a slow path.
        let mut rec = record_with(&[0, 4, 8, 12, 16, 20]);
        report_all(&mut rec);
        rec.on_received(13, Timestamp::ZERO);
        let (ranges, reported) = select_ranges(&rec, 20, &config(3, 64, RangeOrder::LowestFirst));
        assert_eq!(ranges, vec![20..=20, 12..=13, 0..=0]);
        assert_eq!(
            reported,
            (0, 1),
            "only the bottom range is a complete block"
        );
        // The new range takes precedence up to Maximum_Limit, lowest ranges fill the rest.
        let (ranges, _) = select_ranges(&rec, 20, &config(4, 64, RangeOrder::LowestFirst));
        assert_eq!(ranges, vec![20..=20, 12..=13, 4..=4, 0..=0]);
        let (ranges, reported) = select_ranges(&rec, 20, &config(1, 2, RangeOrder::LowestFirst));
        assert_eq!(ranges, vec![20..=20, 12..=13]);
        assert_eq!(
            reported,
            (20, u64::MAX),
            "only the top range is a complete block"
        );
    }

    #[test]
    fn lowest_first_keeps_the_first_range() {
        let mut rec = record_with(&[0, 4, 8, 12, 16, 20]);
        report_all(&mut rec);
        let cfg = config(3, 64, RangeOrder::LowestFirst);
        assert_eq!(select_ranges(&rec, 20, &cfg).0, vec![20..=20, 4..=4, 0..=0]);
    }
}
