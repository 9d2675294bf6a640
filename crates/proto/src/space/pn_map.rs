//! A map keyed by packet number for keys that are inserted roughly in increasing order
//! and removed roughly from the oldest: outstanding packets, recently acknowledged ones.
//!
//! Packet numbers of a space only grow (RFC 9000 §12.3), so a window of slots starting
//! at the oldest live key gives O(1) insert, lookup and removal, and an ACK range is an
//! index range, where a tree map pays O(log n) per packet plus node allocations.

use std::collections::VecDeque;
use std::ops::RangeInclusive;

/// Values indexed by packet number within a sliding window `base..base + slots.len()`.
#[derive(Debug, Clone)]
pub(crate) struct PnMap<V> {
    /// Packet number of `slots[0]`.
    base: u64,
    /// One slot per packet number in the window; the first and last are always occupied
    /// (when not empty).
    slots: VecDeque<Option<V>>,
    len: usize,
    /// Keys below this are no longer accepted.
    floor: u64,
}

impl<V> Default for PnMap<V> {
    fn default() -> Self {
        Self {
            base: 0,
            slots: VecDeque::new(),
            len: 0,
            floor: 0,
        }
    }
}

impl<V> PnMap<V> {
    /// Number of entries.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no entries.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Inserts `value` at `pn`, replacing any previous value. Keys below the floor set
    /// by [`PnMap::forget_below`] are ignored: returns false for them.
    pub(crate) fn insert(&mut self, pn: u64, value: V) -> bool {
        if pn < self.floor {
            return false;
        }
        if self.slots.is_empty() {
            self.base = pn;
        }
        // Rare: an older key after newer ones (ACKs of several paths in one space).
        while pn < self.base {
            self.slots.push_front(None);
            self.base -= 1;
        }
        let idx = (pn - self.base) as usize;
        if idx >= self.slots.len() {
            self.slots.resize_with(idx, || None);
            self.slots.push_back(Some(value));
            self.len += 1;
            return true;
        }
        if self.slots[idx].replace(value).is_none() {
            self.len += 1;
        }
        true
    }

    /// The value at `pn`.
    pub(crate) fn get(&self, pn: u64) -> Option<&V> {
        let idx = usize::try_from(pn.checked_sub(self.base)?).ok()?;
        self.slots.get(idx)?.as_ref()
    }

    /// Removes and returns the value at `pn`.
    pub(crate) fn remove(&mut self, pn: u64) -> Option<V> {
        let idx = usize::try_from(pn.checked_sub(self.base)?).ok()?;
        let v = self.slots.get_mut(idx)?.take()?;
        self.len -= 1;
        self.trim();
        Some(v)
    }

    /// Removes every entry in `range`, passing each to `f` in increasing order.
    pub(crate) fn take_range(&mut self, range: RangeInclusive<u64>, mut f: impl FnMut(u64, V)) {
        let end_pn = self.base + self.slots.len() as u64; // exclusive
        let start = (*range.start()).max(self.base);
        let end = range.end().saturating_add(1).min(end_pn);
        if start >= end {
            return;
        }
        for pn in start..end {
            if let Some(v) = self.slots[(pn - self.base) as usize].take() {
                self.len -= 1;
                f(pn, v);
            }
        }
        self.trim();
    }

    /// Drops every entry below `pn`; later inserts below it are ignored.
    pub(crate) fn forget_below(&mut self, pn: u64) {
        self.floor = self.floor.max(pn);
        while self.base < self.floor && !self.slots.is_empty() {
            if self.slots.pop_front().flatten().is_some() {
                self.len -= 1;
            }
            self.base += 1;
        }
        self.trim();
    }

    /// Drops empty slots at both ends so the window starts and ends at live entries.
    fn trim(&mut self) {
        while matches!(self.slots.front(), Some(None)) {
            self.slots.pop_front();
            self.base += 1;
        }
        while matches!(self.slots.back(), Some(None)) {
            self.slots.pop_back();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[test]
    fn window_follows_live_entries() {
        let mut m = PnMap::default();
        for pn in [5, 6, 9] {
            assert!(m.insert(pn, pn * 10));
        }
        assert_eq!(m.len(), 3);
        assert_eq!(m.get(9), Some(&90));
        assert_eq!(m.get(7), None);
        let mut got = Vec::new();
        m.take_range(0..=6, |pn, v| got.push((pn, v)));
        assert_eq!(got, vec![(5, 50), (6, 60)]);
        assert_eq!(m.remove(9), Some(90));
        assert!(m.is_empty());
        // Empty again: any key is accepted.
        assert!(m.insert(2, 20));
        m.forget_below(3);
        assert!(m.is_empty());
        assert!(!m.insert(1, 10));
        assert!(m.insert(4, 40));
        assert!(m.insert(3, 30));
        assert_eq!((m.len(), m.get(3), m.get(4)), (2, Some(&30), Some(&40)));
    }

    proptest! {
        /// Behaves like a BTreeMap for every operation mix, rejecting keys below the
        /// forgotten floor.
        #[test]
        fn matches_btree_model(ops in proptest::collection::vec((0u8..4, 0u64..200, 0u64..20), 1..300)) {
            let mut m = PnMap::default();
            let mut model = BTreeMap::new();
            let mut floor = 0u64;
            for (op, pn, span) in ops {
                match op {
                    0 => {
                        prop_assert_eq!(m.insert(pn, pn), pn >= floor);
                        if pn >= floor {
                            model.insert(pn, pn);
                        }
                    }
                    1 => prop_assert_eq!(m.remove(pn), model.remove(&pn)),
                    2 => {
                        let mut got = Vec::new();
                        m.take_range(pn..=pn + span, |k, v| got.push((k, v)));
                        let want: Vec<(u64, u64)> = model.range(pn..=pn + span).map(|(&k, &v)| (k, v)).collect();
                        for (k, _) in &want {
                            model.remove(k);
                        }
                        prop_assert_eq!(got, want);
                    }
                    _ => {
                        floor = floor.max(pn / 4);
                        m.forget_below(floor);
                        model = model.split_off(&floor);
                    }
                }
                prop_assert_eq!(m.len(), model.len());
                for (&k, v) in &model {
                    prop_assert_eq!(m.get(k), Some(v));
                }
            }
        }
    }
}
