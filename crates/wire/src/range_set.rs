//! A set of `u64` values stored as sorted, disjoint, non-adjacent ranges.
//!
//! Representation: a `VecDeque` of half-open `(start, end)` ranges sorted by `start`, found by
//! binary search. Adjacent or overlapping ranges are always merged, so the deque is canonical.
//! Lookups are O(log n); an insertion or removal moves the ranges on the shorter side of its
//! position (none at either end, where packet numbers and stream offsets mostly land). Sets
//! hold from one range (in-order data) to about a thousand (a receive record over several
//! paths): contiguous ranges cost a few instructions per step where a B-tree's cost tens,
//! and a small set takes 64 bytes instead of a 192-byte tree node (issue 19).
//!
//! Because ends are exclusive, `u64::MAX` itself cannot be a member; inserting
//! it is ignored (packet numbers and offsets are at most 2^62-1).

use std::collections::{vec_deque, VecDeque};
use std::ops::Range;

/// Capacity a set keeps whatever its size (ranges); above it, a set using under a quarter of
/// its capacity gives the rest back, so that a burst of gaps does not pin memory for good.
const KEPT_CAPACITY: usize = 16;

/// A set of `u64` stored as disjoint half-open ranges; see the module docs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RangeSet(VecDeque<(u64, u64)>);

impl RangeSet {
    /// Creates an empty set.
    pub const fn new() -> Self {
        RangeSet(VecDeque::new())
    }

    /// Index of the first range starting after `v` (the range holding `v`, if any, is the one
    /// before it).
    fn after(&self, v: u64) -> usize {
        self.0.partition_point(|&(s, _)| s <= v)
    }

    /// Inserts every value of `x`. Returns whether any value was newly added.
    pub fn insert(&mut self, x: Range<u64>) -> bool {
        if x.is_empty() {
            return false;
        }
        let (start, end) = (x.start, x.end);
        // Fastest path (the common case: packet numbers and stream data arriving in order):
        // `x` starts at or after the last range's start, so nothing follows it and the last
        // range is its only possible predecessor.
        if let Some(last) = self.0.back_mut() {
            if start >= last.0 {
                if start > last.1 {
                    self.0.push_back((start, end));
                    return true;
                }
                if end <= last.1 {
                    return false;
                }
                last.1 = end;
                return true;
            }
        }
        // Ranges [lo, hi) overlap or touch `x`: those starting at or before `end`, from the
        // predecessor of `start` if it reaches `start`.
        let hi = self.after(end);
        let mut lo = self.after(start);
        if lo > 0 && self.0[lo - 1].1 >= start {
            lo -= 1;
        }
        if lo == hi {
            self.0.insert(lo, (start, end));
            return true;
        }
        let (first_start, first_end) = self.0[lo];
        if hi - lo == 1 && first_start <= start && first_end >= end {
            return false; // already fully contained
        }
        let last_end = self.0[hi - 1].1;
        self.0[lo] = (first_start.min(start), last_end.max(end));
        self.0.drain(lo + 1..hi);
        self.release_spare();
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
        match (self.0.front(), self.0.back()) {
            (Some(&(lo, _)), Some(&(_, hi))) if x.end > lo && x.start < hi => {}
            _ => return false,
        }
        // Ranges [first, past) share values with `x`.
        let first = self.0.partition_point(|&(_, e)| e <= x.start);
        let past = self.0.partition_point(|&(s, _)| s < x.end);
        if first >= past {
            return false;
        }
        let (head_start, _) = self.0[first];
        let (_, tail_end) = self.0[past - 1];
        let head = (head_start < x.start).then_some((head_start, x.start));
        let tail = (tail_end > x.end).then_some((x.end, tail_end));
        match (head, tail) {
            (Some(h), Some(t)) if past - first == 1 => {
                // `x` splits one range in two.
                self.0[first] = h;
                self.0.insert(first + 1, t);
            }
            _ => {
                let mut keep = first;
                for piece in [head, tail].into_iter().flatten() {
                    self.0[keep] = piece;
                    keep += 1;
                }
                self.0.drain(keep..past);
                self.release_spare();
            }
        }
        true
    }

    /// Whether `v` is in the set.
    pub fn contains(&self, v: u64) -> bool {
        // The last range first: a receiver asks about each new packet number, which is at or
        // above it when packets arrive in order.
        match self.0.back() {
            None => return false,
            Some(&(start, end)) if v >= start => return v < end,
            Some(_) => {}
        }
        self.range_containing(v).is_some()
    }

    /// The range holding `v`, if any (O(log n)).
    pub fn range_containing(&self, v: u64) -> Option<Range<u64>> {
        let i = self.after(v).checked_sub(1)?;
        let (start, end) = self.0[i];
        (end > v).then_some(start..end)
    }

    /// Whether any value of `x` is in the set (O(log n)).
    pub fn intersects(&self, x: Range<u64>) -> bool {
        if x.is_empty() {
            return false;
        }
        let before_end = self.0.partition_point(|&(s, _)| s < x.end);
        before_end
            .checked_sub(1)
            .is_some_and(|i| self.0[i].1 > x.start)
    }

    /// The smallest value in the set.
    pub fn min(&self) -> Option<u64> {
        self.0.front().map(|&(s, _)| s)
    }

    /// The largest value in the set.
    pub fn max(&self) -> Option<u64> {
        self.0.back().map(|&(_, e)| e.saturating_sub(1))
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
            .fold(0u64, |acc, &(s, e)| acc.saturating_add(e - s))
    }

    /// Ranges in ascending order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.0.iter())
    }

    /// Ranges starting at or after `start`, in ascending order.
    pub fn iter_from(&self, start: u64) -> impl Iterator<Item = Range<u64>> + '_ {
        let first = self.0.partition_point(|&(s, _)| s < start);
        Iter(self.0.range(first..))
    }

    /// Ranges in descending order (largest first, as in ACK frames).
    pub fn iter_rev(&self) -> std::iter::Rev<Iter<'_>> {
        self.iter().rev()
    }

    /// Ranges starting at or below `last`, in descending order: [`RangeSet::iter_rev`] without
    /// the ranges above `last`, which it skips in O(log n) instead of visiting them.
    pub fn iter_rev_to(&self, last: u64) -> impl Iterator<Item = Range<u64>> + '_ {
        Iter(self.0.range(..self.after(last))).rev()
    }

    /// Removes and returns the lowest range.
    pub fn pop_min(&mut self) -> Option<Range<u64>> {
        let r = self.0.pop_front().map(|(s, e)| s..e);
        self.release_spare();
        r
    }

    /// Removes and returns the highest range.
    pub fn pop_max(&mut self) -> Option<Range<u64>> {
        let r = self.0.pop_back().map(|(s, e)| s..e);
        self.release_spare();
        r
    }

    /// The lowest range without removing it.
    pub fn peek_min(&self) -> Option<Range<u64>> {
        self.0.front().map(|&(s, e)| s..e)
    }

    /// Removes every value that is in `other`.
    pub fn subtract(&mut self, other: &RangeSet) {
        for r in other.iter() {
            self.remove(r);
        }
    }

    /// Removes all values (and gives back the memory of a large set).
    pub fn clear(&mut self) {
        self.0.clear();
        self.release_spare();
    }

    /// Gives back most of a large capacity the set no longer uses.
    fn release_spare(&mut self) {
        let capacity = self.0.capacity();
        if capacity > KEPT_CAPACITY && self.0.len() < capacity / 4 {
            self.0.shrink_to((2 * self.0.len()).max(KEPT_CAPACITY));
        }
    }
}

/// Iterator over the ranges of a [`RangeSet`].
#[derive(Debug, Clone)]
pub struct Iter<'a>(vec_deque::Iter<'a, (u64, u64)>);

impl Iterator for Iter<'_> {
    type Item = Range<u64>;
    fn next(&mut self) -> Option<Range<u64>> {
        self.0.next().map(|&(s, e)| s..e)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Range<u64>> {
        self.0.next_back().map(|&(s, e)| s..e)
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

    /// A set that held many ranges gives the memory back once it holds few again.
    #[test]
    fn large_sets_release_their_memory() {
        let mut set = RangeSet::new();
        for v in 0..2_000u64 {
            set.insert_one(2 * v);
        }
        assert_eq!(set.len(), 2_000);
        assert!(set.0.capacity() >= 2_000);
        set.remove(0..3_990);
        assert_eq!(set.len(), 5);
        assert!(set.0.capacity() <= KEPT_CAPACITY, "{}", set.0.capacity());
        for v in 0..2_000u64 {
            set.insert_one(2 * v + 10_000);
        }
        while set.len() > 3 {
            set.pop_min();
        }
        assert!(set.0.capacity() <= KEPT_CAPACITY, "{}", set.0.capacity());
        set.clear();
        assert!(set.0.capacity() <= KEPT_CAPACITY);
    }

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
        PopMax,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u64..200, 0u64..12).prop_map(|(s, l)| Op::Insert(s, s + l)),
            (0u64..200).prop_map(Op::InsertOne),
            (0u64..200, 0u64..12).prop_map(|(s, l)| Op::Remove(s, s + l)),
            (0u64..200, 0u64..90).prop_map(|(s, l)| Op::Remove(s, s + l)),
            (0u64..200, 12u64..60).prop_map(|(s, l)| Op::Insert(s, s + l)),
            Just(Op::PopMin),
            Just(Op::PopMax),
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
        for v in [0u64, 3, 50, 120, 199, 230] {
            let run = model.contains(&v).then(|| {
                let mut lo = v;
                while lo > 0 && model.contains(&(lo - 1)) {
                    lo -= 1;
                }
                let mut hi = v + 1;
                while model.contains(&hi) {
                    hi += 1;
                }
                lo..hi
            });
            prop_assert_eq!(set.range_containing(v), run, "range_containing({})", v);
            let from: Vec<_> = set.iter_from(v).collect();
            let filtered: Vec<_> = set.iter().filter(|r| r.start >= v).collect();
            prop_assert_eq!(from, filtered, "iter_from({})", v);
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
                    Op::PopMin | Op::PopMax => {
                        let was_empty = model.is_empty();
                        let got = if matches!(op, Op::PopMin) { set.pop_min() } else { set.pop_max() };
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
