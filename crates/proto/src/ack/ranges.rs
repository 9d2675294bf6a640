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
///
/// With one space over several paths the record can hold up to a thousand ranges, while a
/// frame carries a few dozen: the ranges are walked only as far as the selection needs (the
/// first ones, down to the lowest newly received packet, and the lowest ones), never collected
/// all.
pub(crate) fn select_ranges(
    record: &ReceiveRecord,
    largest: u64,
    config: &AckConfig,
    rules: &SpnsRules,
) -> Vec<RangeInclusive<u64>> {
    // TransportConfig::validate, the one check of these limits, guarantees
    // 1 <= default_range_limit <= max_range_limit.
    let hard_limit = config.max_range_limit;
    let default_limit = config.default_range_limit;
    // The common case (within the limit) returns these as they are.
    let mut head: Vec<RangeInclusive<u64>> = Vec::with_capacity(default_limit + 1);
    head.extend(desc(record, largest).take(default_limit + 1));
    if head.len() <= default_limit {
        return head;
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
                .then(|| last_range_with_new_packet(record, largest))
                .flatten();
            let count = default_limit
                .max(newest_needed.map_or(0, |i| i + 1))
                .min(hard_limit);
            if count <= head.len() {
                head.truncate(count);
                head
            } else {
                desc(record, largest).take(count).collect()
            }
        }
        RangeOrder::LowestFirst => lowest_first(
            record,
            largest,
            head[0].clone(),
            default_limit,
            hard_limit,
            new_slots,
        ),
    }
}

/// The record's ranges at or below `largest` in the frame's form, highest first.
fn desc(record: &ReceiveRecord, largest: u64) -> impl Iterator<Item = RangeInclusive<u64>> + '_ {
    record.ack_ranges_desc(largest).map(|r| r.start..=r.end - 1)
}

/// The ranges of `desc(record, largest)` after the first that hold a newly received packet,
/// highest first. Each newly received range is looked up in the record (O(log n) each) instead
/// of walking every range down to the lowest new packet ([`indexed_ranges_with_new_packets`]):
/// with one space over several paths a slow path's packets arrive hundreds of ranges below the
/// top, and that walk was a tenth of a three-path SPNS run's instructions.
fn ranges_with_new_packets(
    record: &ReceiveRecord,
    largest: u64,
) -> impl Iterator<Item = RangeInclusive<u64>> + '_ {
    // Only ranges starting below this are yielded: below the first range, and below the
    // previous one yielded (a range holding several new packets comes once).
    let mut below = desc(record, largest).next().map_or(0, |r| *r.start());
    record
        .newly_received()
        .iter_rev_to(largest)
        .flat_map(move |n| {
            // The record's ranges that share a packet with `n` (at or below `largest`).
            let end = n.end.min(largest + 1);
            record
                .ack_ranges_rev_below(end)
                .take_while(move |r| r.end > n.start)
        })
        .filter_map(move |r| {
            (r.start < below).then(|| {
                below = r.start;
                r.start..=r.end - 1
            })
        })
}

/// [`ranges_with_new_packets`] with each range's index in `desc(record, largest)`: one merge
/// of the two descending range lists.
fn indexed_ranges_with_new_packets(
    record: &ReceiveRecord,
    largest: u64,
) -> impl Iterator<Item = (usize, RangeInclusive<u64>)> + '_ {
    let mut new = record.newly_received().iter_rev().peekable();
    desc(record, largest)
        .enumerate()
        .skip(1)
        .map_while(move |(i, r)| {
            // Skip the new packets above this range (in higher ranges or above `largest`).
            while new.next_if(|n| n.start > *r.end()).is_some() {}
            // No new packet left at or below this range: no lower range holds one either.
            let n = new.peek()?;
            // `n` starts at or below the range's end: they share a packet if `n` reaches its
            // start.
            Some((n.end > *r.start()).then_some((i, r)))
        })
        .flatten()
}

/// The lowest-ranges-first heuristic (De Coninck, CCR 2022, the picoquic fix): after the range
/// holding Largest Acknowledged, the slots go to the lowest ranges, so old packets delayed
/// by a slow path are acknowledged before the sender gives up on them. With `new_slots`,
/// ranges holding a packet received since the last ACK still come first (the report's rule,
/// §2.4, up to Maximum_Limit): a packet that is never acknowledged is retransmitted for
/// nothing, and on a path with reordering those are the newest packets in the middle ranges.
/// `first` is the highest range; the record has more than `default_limit` ranges.
fn lowest_first(
    record: &ReceiveRecord,
    largest: u64,
    first: RangeInclusive<u64>,
    default_limit: usize,
    hard_limit: usize,
    new_slots: bool,
) -> Vec<RangeInclusive<u64>> {
    // The first range and those with new packets, highest first.
    let mut top = vec![first];
    if new_slots && hard_limit > 1 {
        top.extend(ranges_with_new_packets(record, largest).take(hard_limit - 1));
    }
    // The lowest ranges not yet taken fill the frame up to Default_Limit.
    let need = default_limit.saturating_sub(top.len());
    let mut bottom: Vec<RangeInclusive<u64>> = Vec::with_capacity(need);
    if need > 0 {
        let taken = |r: &RangeInclusive<u64>| top.iter().any(|t| t.start() == r.start());
        bottom.extend(
            record
                .ack_ranges_asc(largest)
                .map(|r| r.start..=r.end - 1)
                .filter(|r| !taken(r))
                .take(need),
        );
    }
    // Both lists are disjoint; the frame lists them highest first.
    let mut out = Vec::with_capacity(top.len() + bottom.len());
    let mut top = top.into_iter().peekable();
    let mut bottom = bottom.into_iter().rev().peekable();
    loop {
        let next = match (top.peek(), bottom.peek()) {
            (Some(t), Some(b)) if t.start() > b.start() => top.next(),
            (Some(_), Some(_)) | (None, Some(_)) => bottom.next(),
            (Some(_), None) => top.next(),
            (None, None) => break,
        };
        out.extend(next);
    }
    out
}

/// Index (in descending order) of the lowest range that holds a packet received since the last
/// ACK: a range that must be reported so the new packet is acknowledged.
fn last_range_with_new_packet(record: &ReceiveRecord, largest: u64) -> Option<usize> {
    let first_holds_new = desc(record, largest)
        .next()
        .filter(|r| record.newly_received().intersects(half_open(r)))
        .map(|_| 0);
    indexed_ranges_with_new_packets(record, largest)
        .map(|(i, _)| i)
        .last()
        .or(first_holds_new)
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

    /// `select_ranges` as first written (every range collected, a lookup in the newly
    /// received set per range): the reference the faster version must equal.
    fn select_ranges_reference(
        record: &ReceiveRecord,
        largest: u64,
        config: &AckConfig,
        rules: &SpnsRules,
    ) -> Vec<RangeInclusive<u64>> {
        let hard_limit = config.max_range_limit;
        let mut all: Vec<RangeInclusive<u64>> = record
            .ack_ranges_desc(largest)
            .map(|r| r.start..=r.end - 1)
            .collect();
        let default_limit = config.default_range_limit;
        if all.len() <= default_limit {
            return all;
        }
        let (hard_limit, new_slots) = if rules.two_range_limits {
            (hard_limit, true)
        } else {
            (default_limit, false)
        };
        let new = record.newly_received();
        match config.range_order {
            RangeOrder::HighestFirst => {
                let newest_needed = new_slots
                    .then(|| {
                        let lowest_new = new.min()?;
                        all.iter()
                            .rposition(|r| *r.end() >= lowest_new && new.intersects(half_open(r)))
                    })
                    .flatten();
                let count = default_limit
                    .max(newest_needed.map_or(0, |i| i + 1))
                    .min(hard_limit);
                all.truncate(count);
                all
            }
            RangeOrder::LowestFirst => {
                let mut keep = vec![false; all.len()];
                keep[0] = true;
                let mut count = 1;
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
        }
    }

    proptest::proptest! {
        #[test]
        fn selection_matches_the_reference(
            first in proptest::collection::vec(0u64..300, 1..150),
            later in proptest::collection::vec(0u64..320, 0..25),
            largest in 0u64..330,
            default in 1usize..8,
            above_default in 0usize..5,
            lowest_first in proptest::bool::ANY,
            two_limits in proptest::bool::ANY,
        ) {
            let mut rec = record_with(&first);
            report_all(&mut rec);
            for &pn in &later {
                rec.on_received(pn, Timestamp::ZERO);
            }
            let order = if lowest_first { RangeOrder::LowestFirst } else { RangeOrder::HighestFirst };
            // Valid limits only (TransportConfig::validate): default <= max.
            let cfg = config(default, default + above_default, order);
            let rules = SpnsRules::report()
                .with(crate::spns_rules::SpnsRule::TwoRangeLimits, two_limits);
            proptest::prop_assert_eq!(
                select_ranges(&rec, largest, &cfg, &rules),
                select_ranges_reference(&rec, largest, &cfg, &rules)
            );
            // The lookups find the ranges the walk finds, in the same order.
            let looked_up: Vec<_> = ranges_with_new_packets(&rec, largest).collect();
            let walked: Vec<_> = indexed_ranges_with_new_packets(&rec, largest)
                .map(|(_, r)| r)
                .collect();
            proptest::prop_assert_eq!(looked_up, walked);
        }
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
