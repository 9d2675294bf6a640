//! A set of stream offsets stored as disjoint half-open ranges, with the
//! overlap queries the send buffer needs (the wire crate's `RangeSet` is tuned
//! for ACK bookkeeping and does not expose range queries).

use std::collections::BTreeMap;
use std::ops::Range;

/// Disjoint, non-adjacent half-open ranges of `u64`, keyed by start.
///
/// Insertion and removal are O(log n + k) where k is the number of ranges
/// merged or split; [`Ranges::overlapping`] is O(log n + k) for k results.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Ranges(BTreeMap<u64, u64>);

impl Ranges {
    /// Inserts `x`, merging with overlapping or adjacent ranges.
    pub(crate) fn insert(&mut self, x: Range<u64>) {
        if x.is_empty() {
            return;
        }
        let (mut start, mut end) = (x.start, x.end);
        // Fast path (acknowledgements arriving in order above a gap): `x` starts at or after
        // the last range's start, so that range is the only one it can touch; extended in
        // place instead of removed and inserted again.
        if let Some(mut last) = self.0.last_entry() {
            if start >= *last.key() {
                let last_end = *last.get();
                if start > last_end {
                    self.0.insert(start, end);
                } else if end > last_end {
                    *last.get_mut() = end;
                }
                return;
            }
        }
        if let Some((&ps, &pe)) = self.0.range(..=start).next_back() {
            if pe >= end {
                return;
            }
            if pe >= start {
                self.0.remove(&ps);
                start = ps;
            }
        }
        while let Some((&ns, &ne)) = self.0.range(start..=end).next() {
            self.0.remove(&ns);
            end = end.max(ne);
        }
        self.0.insert(start, end);
    }

    /// Removes every value of `x`.
    pub(crate) fn remove(&mut self, x: Range<u64>) {
        if x.is_empty() {
            return;
        }
        // Outside the set's span (an empty retransmission queue, mostly): no search.
        match (self.0.first_key_value(), self.0.last_key_value()) {
            (Some((&lo, _)), Some((_, &hi))) if x.end > lo && x.start < hi => {}
            _ => return,
        }
        if let Some((&ps, &pe)) = self.0.range(..x.start).next_back() {
            if pe > x.start {
                self.0.insert(ps, x.start);
                if pe > x.end {
                    self.0.insert(x.end, pe);
                    return;
                }
            }
        }
        while let Some((&ns, &ne)) = self.0.range(x.start..x.end).next() {
            self.0.remove(&ns);
            if ne > x.end {
                self.0.insert(x.end, ne);
            }
        }
    }

    /// The parts of the set that intersect `x`, clipped to `x`, ascending.
    pub(crate) fn overlapping(&self, x: Range<u64>) -> impl Iterator<Item = Range<u64>> + '_ {
        let first = self
            .0
            .range(..x.start)
            .next_back()
            .filter(|(_, &e)| e > x.start)
            .map(|(&s, &e)| s..e);
        let rest = self.0.range(x.start..x.end).map(|(&s, &e)| s..e);
        first
            .into_iter()
            .chain(rest)
            .map(move |r| r.start.max(x.start)..r.end.min(x.end))
            .filter(|r| !r.is_empty())
    }

    /// The parts of `x` that are *not* in the set, ascending.
    pub(crate) fn gaps(&self, x: Range<u64>) -> Vec<Range<u64>> {
        let mut out = Vec::new();
        let mut pos = x.start;
        for r in self.overlapping(x.clone()) {
            if r.start > pos {
                out.push(pos..r.start);
            }
            pos = r.end;
        }
        if pos < x.end {
            out.push(pos..x.end);
        }
        out
    }

    /// The lowest range.
    pub(crate) fn peek_min(&self) -> Option<Range<u64>> {
        self.0.first_key_value().map(|(&s, &e)| s..e)
    }

    /// Removes and returns the lowest range.
    pub(crate) fn pop_min(&mut self) -> Option<Range<u64>> {
        self.0.pop_first().map(|(s, e)| s..e)
    }

    /// Whether the set is empty.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Number of disjoint ranges.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }

    /// Removes everything.
    pub(crate) fn clear(&mut self) {
        self.0.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_remove_gaps() {
        let mut r = Ranges::default();
        r.insert(10..20);
        r.insert(30..40);
        r.insert(20..25); // adjacent: merges
        assert_eq!(r.len(), 2);
        assert_eq!(r.peek_min(), Some(10..25));
        assert_eq!(r.gaps(0..50), vec![0..10, 25..30, 40..50]);
        assert_eq!(
            r.overlapping(12..35).collect::<Vec<_>>(),
            vec![12..25, 30..35]
        );
        r.remove(15..32);
        assert_eq!(
            r.overlapping(0..100).collect::<Vec<_>>(),
            vec![10..15, 32..40]
        );
        r.remove(0..100);
        assert!(r.is_empty());
    }

    proptest::proptest! {
        /// Random inserts and removals (many at or after the last range: the fast paths) give
        /// the same values, in maximal disjoint ranges, as a plain set of values.
        #[test]
        fn matches_a_set_of_values(
            ops in proptest::collection::vec((proptest::bool::ANY, 0u64..200, 0u64..12), 0..60)
        ) {
            let mut r = Ranges::default();
            let mut values = std::collections::BTreeSet::new();
            for (insert, start, len) in ops {
                if insert {
                    r.insert(start..start + len);
                    values.extend(start..start + len);
                } else {
                    r.remove(start..start + len);
                    for v in start..start + len {
                        values.remove(&v);
                    }
                }
            }
            let got: Vec<Range<u64>> = r.overlapping(0..u64::MAX).collect();
            let mut want: Vec<Range<u64>> = Vec::new();
            for v in values {
                match want.last_mut() {
                    Some(last) if last.end == v => last.end = v + 1,
                    _ => want.push(v..v + 1),
                }
            }
            proptest::prop_assert_eq!(got, want);
        }
    }
}
