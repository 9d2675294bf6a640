//! A set of `u64` values stored as sorted, disjoint, non-adjacent ranges.
//!
//! Representation: a `BTreeMap<u64, u64>` mapping each range's `start` to its
//! **exclusive** `end` (half-open `start..end`). Adjacent or overlapping ranges
//! are always merged, so the map is canonical. Insertion and removal are
//! O(log n + k) where k is the number of ranges merged or split.
//!
//! Because ends are exclusive, `u64::MAX` itself cannot be a member; inserting
//! it is ignored (packet numbers and offsets are at most 2^62-1).

use std::collections::btree_map;
use std::collections::BTreeMap;
use std::ops::Range;

/// A set of `u64` stored as disjoint half-open ranges; see the module docs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RangeSet(BTreeMap<u64, u64>);

impl RangeSet {
    /// Creates an empty set.
    pub const fn new() -> Self {
        RangeSet(BTreeMap::new())
    }

    /// Inserts every value of `x`. Returns whether any value was newly added.
    pub fn insert(&mut self, x: Range<u64>) -> bool {
        if x.is_empty() {
            return false;
        }
        let (mut start, mut end) = (x.start, x.end);
        // Fastest path (the common case: packet numbers and stream data arriving in order):
        // `x` starts at or after the last range's start, so nothing follows it and the last
        // range is its only possible predecessor.
        if let Some(mut last) = self.0.last_entry() {
            if start >= *last.key() {
                let last_end = *last.get();
                if start > last_end {
                    self.0.insert(start, end);
                    return true;
                }
                if end <= last_end {
                    return false;
                }
                *last.get_mut() = end;
                return true;
            }
        }
        // Fast path (packets filling a gap, a new range between others): one lookup of the
        // last range starting at or before `end`. When it starts at or before `start`, no
        // range starts inside `x` or right after it, so it is the only one `x` can touch.
        if let Some((&ps, pe)) = self.0.range_mut(..=end).next_back() {
            if ps <= start {
                if *pe >= end {
                    return false;
                }
                if *pe >= start {
                    *pe = end;
                    return true;
                }
                self.0.insert(start, end);
                return true;
            }
        } else {
            // Nothing starts at or before `end`: no range touches `x`.
            self.0.insert(start, end);
            return true;
        }
        // A predecessor that overlaps or touches `x` is absorbed.
        if let Some((&ps, &pe)) = self.0.range(..=start).next_back() {
            if pe >= end {
                return false; // already fully contained
            }
            if pe >= start {
                self.0.remove(&ps);
                start = ps;
            }
        }
        // Absorb every successor starting within or right after `x`.
        while let Some((&ns, &ne)) = self.0.range(start..=end).next() {
            self.0.remove(&ns);
            end = end.max(ne);
        }
        self.0.insert(start, end);
        true
    }

    /// Inserts one value. Returns whether it was newly added.
    pub fn insert_one(&mut self, v: u64) -> bool {
        match v.checked_add(1) {
            Some(end) => self.insert(v..end),
            None => false,
        }
    }

    /// Removes every value of `x`. Returns whether anything was removed.
    pub fn remove(&mut self, x: Range<u64>) -> bool {
        if x.is_empty() {
            return false;
        }
        // Outside the set's span: no search. Callers remove every range of an ACK frame from
        // a set holding only the newest packets, so most removals miss.
        match (self.0.first_key_value(), self.0.last_key_value()) {
            (Some((&lo, _)), Some((_, &hi))) if x.end > lo && x.start < hi => {}
            _ => return false,
        }
        let mut changed = false;
        // A predecessor starting before `x` may extend into it.
        if let Some((&ps, &pe)) = self.0.range(..x.start).next_back() {
            if pe > x.start {
                self.0.insert(ps, x.start);
                if pe > x.end {
                    self.0.insert(x.end, pe);
                    return true;
                }
                changed = true;
            }
        }
        while let Some((&ns, &ne)) = self.0.range(x.start..x.end).next() {
            self.0.remove(&ns);
            if ne > x.end {
                self.0.insert(x.end, ne);
            }
            changed = true;
        }
        changed
    }

    /// Whether `v` is in the set.
    pub fn contains(&self, v: u64) -> bool {
        // The last range first: a receiver asks about each new packet number, which is at or
        // above it when packets arrive in order.
        match self.0.last_key_value() {
            None => return false,
            Some((&start, &end)) if v >= start => return v < end,
            Some(_) => {}
        }
        self.0
            .range(..=v)
            .next_back()
            .is_some_and(|(_, &end)| end > v)
    }

    /// The range holding `v`, if any (O(log n)).
    pub fn range_containing(&self, v: u64) -> Option<Range<u64>> {
        self.0
            .range(..=v)
            .next_back()
            .filter(|(_, &end)| end > v)
            .map(|(&start, &end)| start..end)
    }

    /// Whether any value of `x` is in the set (O(log n)).
    pub fn intersects(&self, x: Range<u64>) -> bool {
        !x.is_empty()
            && self
                .0
                .range(..x.end)
                .next_back()
                .is_some_and(|(_, &end)| end > x.start)
    }

    /// The smallest value in the set.
    pub fn min(&self) -> Option<u64> {
        self.0.first_key_value().map(|(&s, _)| s)
    }

    /// The largest value in the set.
    pub fn max(&self) -> Option<u64> {
        self.0.last_key_value().map(|(_, &e)| e.saturating_sub(1))
    }

    /// Number of disjoint ranges (not elements; see [`RangeSet::elements_count`]).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Total number of values in the set.
    pub fn elements_count(&self) -> u64 {
        self.0
            .iter()
            .fold(0u64, |acc, (&s, &e)| acc.saturating_add(e - s))
    }

    /// Ranges in ascending order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.0.iter())
    }

    /// Ranges starting at or after `start`, in ascending order.
    pub fn iter_from(&self, start: u64) -> impl Iterator<Item = Range<u64>> + '_ {
        self.0.range(start..).map(|(&s, &e)| s..e)
    }

    /// Ranges in descending order (largest first, as in ACK frames).
    pub fn iter_rev(&self) -> std::iter::Rev<Iter<'_>> {
        self.iter().rev()
    }

    /// Ranges starting at or below `last`, in descending order: [`RangeSet::iter_rev`] without
    /// the ranges above `last`, which it skips in O(log n) instead of visiting them.
    pub fn iter_rev_to(&self, last: u64) -> impl Iterator<Item = Range<u64>> + '_ {
        self.0.range(..=last).rev().map(|(&s, &e)| s..e)
    }

    /// Removes and returns the lowest range.
    pub fn pop_min(&mut self) -> Option<Range<u64>> {
        self.0.pop_first().map(|(s, e)| s..e)
    }

    /// Removes and returns the highest range.
    pub fn pop_max(&mut self) -> Option<Range<u64>> {
        self.0.pop_last().map(|(s, e)| s..e)
    }

    /// The lowest range without removing it.
    pub fn peek_min(&self) -> Option<Range<u64>> {
        self.0.first_key_value().map(|(&s, &e)| s..e)
    }

    /// Removes every value that is in `other`.
    pub fn subtract(&mut self, other: &RangeSet) {
        for r in other.iter() {
            self.remove(r);
        }
    }

    /// Removes all values.
    pub fn clear(&mut self) {
        self.0.clear()
    }
}

/// Iterator over the ranges of a [`RangeSet`].
#[derive(Debug, Clone)]
pub struct Iter<'a>(btree_map::Iter<'a, u64, u64>);

impl Iterator for Iter<'_> {
    type Item = Range<u64>;
    fn next(&mut self) -> Option<Range<u64>> {
        self.0.next().map(|(&s, &e)| s..e)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Range<u64>> {
        self.0.next_back().map(|(&s, &e)| s..e)
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a RangeSet {
    type Item = Range<u64>;
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    #[test]
    fn basics() {
        let mut s = RangeSet::new();
        assert!(s.insert(5..10));
        assert!(!s.insert(6..8));
        assert!(s.insert(10..12)); // adjacent: merged
        assert_eq!(s.len(), 1);
        assert!(s.insert_one(0));
        assert!(!s.insert_one(0));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0..1, 5..12]);
        assert_eq!(s.iter_rev().collect::<Vec<_>>(), vec![5..12, 0..1]);
        assert!(s.remove(7..9));
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0..1, 5..7, 9..12]);
        assert_eq!((s.min(), s.max()), (Some(0), Some(11)));
        assert_eq!(s.elements_count(), 6);
        assert_eq!(s.pop_min(), Some(0..1));
        assert!(!s.insert_one(u64::MAX));
        assert!(s.insert(u64::MAX - 1..u64::MAX));
        assert!(s.contains(u64::MAX - 1));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u64, u64),
        InsertOne(u64),
        Remove(u64, u64),
        PopMin,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..200, 0u64..12).prop_map(|(s, l)| Op::Insert(s, s + l)),
            (0u64..200).prop_map(Op::InsertOne),
            (0u64..200, 0u64..12).prop_map(|(s, l)| Op::Remove(s, s + l)),
            Just(Op::PopMin),
        ]
    }

    fn check(set: &RangeSet, model: &BTreeSet<u64>) -> Result<(), TestCaseError> {
        let flat: Vec<u64> = set.iter().flatten().collect();
        let want: Vec<u64> = model.iter().copied().collect();
        prop_assert_eq!(&flat, &want);
        let rev: Vec<u64> = set.iter_rev().flat_map(|r| r.rev()).collect();
        prop_assert_eq!(rev, want.iter().rev().copied().collect::<Vec<_>>());
        prop_assert_eq!(set.min(), model.first().copied());
        prop_assert_eq!(set.max(), model.last().copied());
        prop_assert_eq!(set.elements_count(), model.len() as u64);
        prop_assert_eq!(set.is_empty(), model.is_empty());
        for (a, len) in [(0u64, 5u64), (7, 1), (50, 30), (150, 0), (199, 3)] {
            let want = model.range(a..a + len).next().is_some();
            prop_assert_eq!(
                set.intersects(a..a + len),
                want,
                "intersects {}..{}",
                a,
                a + len
            );
        }
        // Canonical: disjoint, non-adjacent, non-empty, ascending.
        let ranges: Vec<_> = set.iter().collect();
        for w in ranges.windows(2) {
            prop_assert!(w[0].end < w[1].start);
        }
        for r in &ranges {
            prop_assert!(r.start < r.end);
        }
        for v in 0..220 {
            prop_assert_eq!(set.contains(v), model.contains(&v));
        }
        for last in [0u64, 1, 9, 50, 120, 199, 250] {
            let to: Vec<_> = set.iter_rev_to(last).collect();
            let filtered: Vec<_> = set.iter_rev().filter(|r| r.start <= last).collect();
            prop_assert_eq!(to, filtered, "iter_rev_to({})", last);
        }
        Ok(())
    }

    proptest! {
        #[test]
        fn matches_btreeset_model(ops in proptest::collection::vec(op(), 0..60)) {
            let mut set = RangeSet::new();
            let mut model = BTreeSet::new();
            for op in ops {
                match op {
                    Op::Insert(s, e) => {
                        let newly = (s..e).any(|v| !model.contains(&v));
                        model.extend(s..e);
                        prop_assert_eq!(set.insert(s..e), newly);
                    }
                    Op::InsertOne(v) => prop_assert_eq!(set.insert_one(v), model.insert(v)),
                    Op::Remove(s, e) => {
                        let any = (s..e).any(|v| model.contains(&v));
                        for v in s..e { model.remove(&v); }
                        prop_assert_eq!(set.remove(s..e), any);
                    }
                    Op::PopMin => {
                        let was_empty = model.is_empty();
                        let got = set.pop_min();
                        if let Some(r) = got.clone() {
                            for v in r { prop_assert!(model.remove(&v)); }
                        }
                        prop_assert_eq!(got.is_none(), was_empty);
                    }
                }
                check(&set, &model)?;
            }
        }

        #[test]
        fn subtract_matches_model(
            a in proptest::collection::vec((0u64..200, 0u64..12), 0..20),
            b in proptest::collection::vec((0u64..200, 0u64..12), 0..20),
        ) {
            let (mut sa, mut sb) = (RangeSet::new(), RangeSet::new());
            let (mut ma, mut mb) = (BTreeSet::new(), BTreeSet::new());
            for (s, l) in a { sa.insert(s..s + l); ma.extend(s..s + l); }
            for (s, l) in b { sb.insert(s..s + l); mb.extend(s..s + l); }
            sa.subtract(&sb);
            let model: BTreeSet<u64> = ma.difference(&mb).copied().collect();
            check(&sa, &model)?;
        }
    }
}
