//! ACK range selection under the two limits of the Alibaba report §2.4: at most Default_Limit
//! ranges, exceeded only to cover a packet received since the last ACK, never beyond
//! Maximum_Limit.

use std::ops::{Range, RangeInclusive};

use super::{AckConfig, RangeOrder};
use crate::space::ReceiveRecord;

/// The ranges of an ACK frame with Largest Acknowledged `largest`, descending.
pub fn select_ranges(
    record: &ReceiveRecord,
    largest: u64,
    config: &AckConfig,
) -> Vec<RangeInclusive<u64>> {
    let hard_limit = config.max_range_limit.max(1);
    // Collect one more than the hard limit is enough to know whether capping is needed for the
    // highest-first order; lowest-first needs all candidates (bounded by the record's size).
    let all: Vec<Range<u64>> = record.ack_ranges_desc(largest).collect();
    let default_limit = config.default_range_limit.clamp(1, hard_limit);
    if all.len() <= default_limit {
        return all.into_iter().map(|r| r.start..=r.end - 1).collect();
    }
    let chosen: Vec<Range<u64>> = match config.range_order {
        RangeOrder::HighestFirst => {
            let newest_needed = last_range_with_new_packet(&all, record);
            let count = default_limit
                .max(newest_needed.map_or(0, |i| i + 1))
                .min(hard_limit);
            all[..count].to_vec()
        }
        RangeOrder::LowestFirst => {
            // The first range must contain Largest Acknowledged; then the lowest ones.
            let mut picked = vec![all[0].clone()];
            let rest = default_limit - 1;
            picked.extend(all[all.len() - rest..].iter().cloned());
            picked
        }
    };
    chosen.into_iter().map(|r| r.start..=r.end - 1).collect()
}

/// Index (in descending order) of the lowest range that holds a packet received since the last
/// ACK: a range that must be reported so the new packet is acknowledged.
fn last_range_with_new_packet(all: &[Range<u64>], record: &ReceiveRecord) -> Option<usize> {
    let new = record.newly_received();
    let lowest_new = new.min()?;
    all.iter()
        .rposition(|r| r.end > lowest_new && new.iter().any(|n| n.start < r.end && n.end > r.start))
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
        let ranges = select_ranges(&rec, 7, &AckConfig::default());
        assert_eq!(ranges, vec![0..=7]);
        // When #13 arrives on path 1 (with 11 and 12 still in flight on path 0) the record is
        // {0..=10, 13}; path 1's largest is 13 => ranges 13 and 10-0.
        let rec = record_with(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13]);
        let ranges = select_ranges(&rec, 13, &AckConfig::default());
        assert_eq!(ranges, vec![13..=13, 0..=10]);
    }

    #[test]
    fn default_limit_is_exceeded_only_for_new_packets() {
        // Ranges (descending): 20, 16, 12, 8, 4, 0.
        let mut rec = record_with(&[0, 4, 8, 12, 16, 20]);
        rec.on_ack_sent();
        let cfg = config(2, 64, RangeOrder::HighestFirst);
        assert_eq!(select_ranges(&rec, 20, &cfg), vec![20..=20, 16..=16]);
        // A newly received packet in an old range must be covered: limit grows to reach it.
        rec.on_received(9, Timestamp::ZERO);
        assert_eq!(
            select_ranges(&rec, 20, &cfg),
            vec![20..=20, 16..=16, 12..=12, 8..=9]
        );
        // ... but never beyond Maximum_Limit.
        let cfg = config(2, 3, RangeOrder::HighestFirst);
        assert_eq!(select_ranges(&rec, 20, &cfg).len(), 3);
    }

    #[test]
    fn lowest_first_keeps_the_first_range() {
        let mut rec = record_with(&[0, 4, 8, 12, 16, 20]);
        rec.on_ack_sent();
        let cfg = config(3, 64, RangeOrder::LowestFirst);
        assert_eq!(select_ranges(&rec, 20, &cfg), vec![20..=20, 4..=4, 0..=0]);
    }
}
