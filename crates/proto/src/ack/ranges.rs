//! ACK range selection under the two limits of the Alibaba report §2.4: at most Default_Limit
//! ranges, exceeded only to cover a packet received since the last ACK, never beyond
//! Maximum_Limit. With the rule off ([`SpnsRules::two_range_limits`]) Default_Limit is a hard
//! limit.

use std::ops::{Range, RangeInclusive};

use super::{AckConfig, RangeOrder};
use crate::space::ReceiveRecord;
use crate::spns_rules::SpnsRules;

/// The ranges of an ACK frame with Largest Acknowledged `largest`, descending. Exactly these
/// ranges are what the frame reports: once it is acknowledged, they (and nothing else, such
/// as packets that arrived later in gaps between them) may be pruned (RFC 9000 §13.2.4).
pub fn select_ranges(
    record: &ReceiveRecord,
    largest: u64,
    config: &AckConfig,
    rules: &SpnsRules,
) -> Vec<RangeInclusive<u64>> {
    let hard_limit = config.max_range_limit.max(1);
    // Built once, in the frame's form; the common case (within the limit) returns it as is.
    let mut all: Vec<RangeInclusive<u64>> = record
        .ack_ranges_desc(largest)
        .map(|r| r.start..=r.end - 1)
        .collect();
    let default_limit = config.default_range_limit.clamp(1, hard_limit);
    if all.len() <= default_limit {
        return all;
    }
    // Report §2.4: Maximum_Limit applies only with the two-limit rule; without it the
    // Default_Limit is the frame's limit and new packets beyond it are left out.
    let (hard_limit, new_slots) = if rules.two_range_limits {
        (hard_limit, true)
    } else {
        (default_limit, false)
    };
    match config.range_order {
        RangeOrder::HighestFirst => {
            let newest_needed = new_slots
                .then(|| last_range_with_new_packet(&all, record))
                .flatten();
            let count = default_limit
                .max(newest_needed.map_or(0, |i| i + 1))
                .min(hard_limit);
            all.truncate(count);
            all
        }
        RangeOrder::LowestFirst => lowest_first(&all, record, default_limit, hard_limit, new_slots),
    }
}

/// The lowest-ranges-first heuristic (De Coninck, CCR 2022, the picoquic fix): after the range
/// holding Largest Acknowledged, the slots go to the lowest ranges, so old packets delayed
/// by a slow path are acknowledged before the sender gives up on them. With `new_slots`,
/// ranges holding a packet received since the last ACK still come first (the report's rule,
/// §2.4, up to Maximum_Limit): a packet that is never acknowledged is retransmitted for
/// nothing, and on a path with reordering those are the newest packets in the middle ranges.
fn lowest_first(
    all: &[RangeInclusive<u64>],
    record: &ReceiveRecord,
    default_limit: usize,
    hard_limit: usize,
    new_slots: bool,
) -> Vec<RangeInclusive<u64>> {
    let mut keep = vec![false; all.len()];
    keep[0] = true;
    let mut count = 1;
    let new = record.newly_received();
    for (i, r) in all.iter().enumerate().skip(1) {
        if count == hard_limit || !new_slots {
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
    all.iter()
        .zip(&keep)
        .filter(|(_, &k)| k)
        .map(|(r, _)| r.clone())
        .collect()
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

    const REPORT: SpnsRules = SpnsRules::report();

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
        let ranges = select_ranges(&rec, 7, &AckConfig::default(), &REPORT);
        assert_eq!(ranges, vec![0..=7]);
        // When #13 arrives on path 1 (with 11 and 12 still in flight on path 0) the record is
        // {0..=10, 13}; path 1's largest is 13 => ranges 13 and 10-0.
        let rec = record_with(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13]);
        let ranges = select_ranges(&rec, 13, &AckConfig::default(), &REPORT);
        assert_eq!(ranges, vec![13..=13, 0..=10]);
    }

    #[test]
    fn default_limit_is_exceeded_only_for_new_packets() {
        // Ranges (descending): 20, 16, 12, 8, 4, 0.
        let mut rec = record_with(&[0, 4, 8, 12, 16, 20]);
        report_all(&mut rec);
        let cfg = config(2, 64, RangeOrder::HighestFirst);
        assert_eq!(
            select_ranges(&rec, 20, &cfg, &REPORT),
            vec![20..=20, 16..=16]
        );
        // A newly received packet in an old range must be covered: limit grows to reach it.
        rec.on_received(9, Timestamp::ZERO);
        assert_eq!(
            select_ranges(&rec, 20, &cfg, &REPORT),
            vec![20..=20, 16..=16, 12..=12, 8..=9]
        );
        // ... but never beyond Maximum_Limit.
        let cfg = config(2, 3, RangeOrder::HighestFirst);
        assert_eq!(select_ranges(&rec, 20, &cfg, &REPORT).len(), 3);
    }

    /// Report §2.4 as a switch: without the two limits, Default_Limit is hard and the newly
    /// received packet in an old range is left out (the sender may then declare it lost).
    #[test]
    fn without_two_limits_new_packets_beyond_the_default_limit_are_left_out() {
        let mut rec = record_with(&[0, 4, 8, 12, 16, 20]);
        report_all(&mut rec);
        rec.on_received(9, Timestamp::ZERO);
        let rules = SpnsRules::report().with(crate::spns_rules::SpnsRule::TwoRangeLimits, false);
        for order in [RangeOrder::HighestFirst, RangeOrder::LowestFirst] {
            let cfg = config(2, 64, order);
            let ranges = select_ranges(&rec, 20, &cfg, &rules);
            assert_eq!(ranges.len(), 2, "{order:?}");
            assert!(
                ranges.iter().all(|r| !r.contains(&9)),
                "{order:?}: {ranges:?}"
            );
            let with_rule = select_ranges(&rec, 20, &cfg, &REPORT);
            assert!(with_rule.iter().any(|r| r.contains(&9)), "{order:?}");
        }
    }

    #[test]
    fn lowest_first_still_covers_new_packets() {
        // Ranges (descending): 20, 16, 12, 8, 4, 0; then 13 arrives late on a slow path.
        let mut rec = record_with(&[0, 4, 8, 12, 16, 20]);
        report_all(&mut rec);
        rec.on_received(13, Timestamp::ZERO);
        let ranges = select_ranges(&rec, 20, &config(3, 64, RangeOrder::LowestFirst), &REPORT);
        assert_eq!(ranges, vec![20..=20, 12..=13, 0..=0]);
        // The new range takes precedence up to Maximum_Limit, lowest ranges fill the rest.
        let ranges = select_ranges(&rec, 20, &config(4, 64, RangeOrder::LowestFirst), &REPORT);
        assert_eq!(ranges, vec![20..=20, 12..=13, 4..=4, 0..=0]);
        let ranges = select_ranges(&rec, 20, &config(1, 2, RangeOrder::LowestFirst), &REPORT);
        assert_eq!(ranges, vec![20..=20, 12..=13]);
    }

    #[test]
    fn lowest_first_keeps_the_first_range() {
        let mut rec = record_with(&[0, 4, 8, 12, 16, 20]);
        report_all(&mut rec);
        let cfg = config(3, 64, RangeOrder::LowestFirst);
        assert_eq!(
            select_ranges(&rec, 20, &cfg, &REPORT),
            vec![20..=20, 4..=4, 0..=0]
        );
    }
}
