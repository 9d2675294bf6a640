//! [`SmallMap`]: an ordered map for the few entries a connection keeps per path or per packet
//! number space (paths, send spaces, receive records, per-path ACK states, CID pools).
//!
//! These maps hold one to a handful of entries and are looked up dozens of times per packet. A
//! `BTreeMap` spends most of such a lookup walking its node layout; here the entries sit in one
//! vector sorted by key, searched linearly. Iteration is in key order, exactly as a `BTreeMap`'s,
//! so replacing one by the other changes no behaviour. The methods mirror the `BTreeMap` ones
//! the connection uses, with the same signatures.

use std::ops::RangeBounds;

/// An ordered map backed by a vector sorted by key (see the module documentation). Meant for
/// a few entries: insertion and removal are O(n).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct SmallMap<K, V> {
    entries: Vec<(K, V)>,
}

impl<K, V> Default for SmallMap<K, V> {
    fn default() -> Self {
        Self {
            entries: Vec::new(),
        }
    }
}

impl<K: std::fmt::Debug, V: std::fmt::Debug> std::fmt::Debug for SmallMap<K, V> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.entries.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}

impl<K: Ord, V, const N: usize> From<[(K, V); N]> for SmallMap<K, V> {
    fn from(items: [(K, V); N]) -> Self {
        let mut map = Self::new();
        for (k, v) in items {
            map.insert(k, v);
        }
        map
    }
}

/// A vacant or occupied slot of a [`SmallMap`] (the part of `btree_map::Entry` in use).
pub(crate) struct Entry<'a, K, V> {
    map: &'a mut SmallMap<K, V>,
    key: K,
}

impl<'a, K: Ord, V> Entry<'a, K, V> {
    /// The value, inserted from `make` if the key was absent.
    pub(crate) fn or_insert_with(self, make: impl FnOnce() -> V) -> &'a mut V {
        let i = match self.map.search(&self.key) {
            Ok(i) => i,
            Err(i) => {
                // Exact growth: these maps stay small and live as long as the connection.
                self.map.entries.reserve_exact(1);
                self.map.entries.insert(i, (self.key, make()));
                i
            }
        };
        &mut self.map.entries[i].1
    }

    /// The value, inserted as `V::default()` if the key was absent.
    pub(crate) fn or_default(self) -> &'a mut V
    where
        V: Default,
    {
        self.or_insert_with(V::default)
    }
}

impl<K, V> SmallMap<K, V> {
    /// An empty map (no allocation).
    pub(crate) const fn new() -> Self {
        Self {
            entries: Vec::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// Entries in key order.
    pub(crate) fn iter(&self) -> impl DoubleEndedIterator<Item = (&K, &V)> + Clone {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// Entries in key order, values mutable.
    pub(crate) fn iter_mut(&mut self) -> impl DoubleEndedIterator<Item = (&K, &mut V)> {
        self.entries.iter_mut().map(|(k, v)| (&*k, v))
    }

    pub(crate) fn keys(&self) -> impl DoubleEndedIterator<Item = &K> + Clone {
        self.entries.iter().map(|(k, _)| k)
    }

    pub(crate) fn values(&self) -> impl DoubleEndedIterator<Item = &V> + Clone {
        self.entries.iter().map(|(_, v)| v)
    }

    pub(crate) fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut V> {
        self.entries.iter_mut().map(|(_, v)| v)
    }
}

impl<K: Ord, V> SmallMap<K, V> {
    /// `Ok(index)` of `key`, or `Err(index)` where it would be inserted. Linear: the maps are
    /// small, and a scan of a few keys beats a binary search's branches.
    fn search(&self, key: &K) -> Result<usize, usize> {
        for (i, (k, _)) in self.entries.iter().enumerate() {
            match k.cmp(key) {
                std::cmp::Ordering::Less => {}
                std::cmp::Ordering::Equal => return Ok(i),
                std::cmp::Ordering::Greater => return Err(i),
            }
        }
        Err(self.entries.len())
    }

    pub(crate) fn get(&self, key: &K) -> Option<&V> {
        let i = self.search(key).ok()?;
        Some(&self.entries[i].1)
    }

    pub(crate) fn get_mut(&mut self, key: &K) -> Option<&mut V> {
        let i = self.search(key).ok()?;
        Some(&mut self.entries[i].1)
    }

    pub(crate) fn contains_key(&self, key: &K) -> bool {
        self.search(key).is_ok()
    }

    /// Insert or replace; returns the previous value.
    pub(crate) fn insert(&mut self, key: K, value: V) -> Option<V> {
        match self.search(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) => {
                self.entries.reserve_exact(1);
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    pub(crate) fn remove(&mut self, key: &K) -> Option<V> {
        let i = self.search(key).ok()?;
        Some(self.entries.remove(i).1)
    }

    /// The slot of `key`, for `or_default` / `or_insert_with`.
    pub(crate) fn entry(&mut self, key: K) -> Entry<'_, K, V> {
        Entry { map: self, key }
    }

    /// Entries whose keys fall in `range`, in key order. (A named iterator type, like
    /// `btree_map::Range`: an opaque one would keep the map borrowed to the end of a `while let`.)
    pub(crate) fn range<R: RangeBounds<K>>(&self, range: R) -> Iter<'_, K, V> {
        use std::ops::Bound;
        // Sorted keys: the entries in range are contiguous.
        let start = self
            .entries
            .partition_point(|(k, _)| match range.start_bound() {
                Bound::Included(s) => k < s,
                Bound::Excluded(s) => k <= s,
                Bound::Unbounded => false,
            });
        let end = self
            .entries
            .partition_point(|(k, _)| match range.end_bound() {
                Bound::Included(e) => k <= e,
                Bound::Excluded(e) => k < e,
                Bound::Unbounded => true,
            });
        self.entries[start..end.max(start)].iter().map(pair)
    }
}

/// Iterator over a [`SmallMap`]'s entries as `(&K, &V)`.
pub(crate) type Iter<'a, K, V> =
    std::iter::Map<std::slice::Iter<'a, (K, V)>, fn(&'a (K, V)) -> (&'a K, &'a V)>;

fn pair<K, V>((k, v): &(K, V)) -> (&K, &V) {
    (k, v)
}

impl<K: Ord, V> std::ops::Index<&K> for SmallMap<K, V> {
    type Output = V;

    /// The value of `key`. Panics if absent, as `BTreeMap`'s index does.
    fn index(&self, key: &K) -> &V {
        match self.get(key) {
            Some(v) => v,
            None => panic!("SmallMap: no entry for the key"),
        }
    }
}

impl<'a, K, V> IntoIterator for &'a SmallMap<K, V> {
    type Item = (&'a K, &'a V);
    type IntoIter = Iter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(pair)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, u32),
        Remove(u8),
        Entry(u8),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0u8..12, any::<u32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            (0u8..12).prop_map(Op::Remove),
            (0u8..12).prop_map(Op::Entry),
        ]
    }

    proptest! {
        /// Every operation mix gives the same answers and the same iteration order as a
        /// `BTreeMap`: the connection behaves identically with either.
        #[test]
        fn behaves_like_a_btree_map(ops in proptest::collection::vec(op(), 0..64)) {
            let mut small = SmallMap::new();
            let mut model = BTreeMap::new();
            for op in ops {
                match op {
                    Op::Insert(k, v) => prop_assert_eq!(small.insert(k, v), model.insert(k, v)),
                    Op::Remove(k) => prop_assert_eq!(small.remove(&k), model.remove(&k)),
                    Op::Entry(k) => {
                        *small.entry(k).or_default() += 1;
                        *model.entry(k).or_default() += 1;
                    }
                }
                prop_assert_eq!(small.len(), model.len());
                prop_assert!(small.iter().eq(model.iter()));
                for k in 0..12u8 {
                    prop_assert_eq!(small.get(&k), model.get(&k));
                    prop_assert_eq!(small.contains_key(&k), model.contains_key(&k));
                    prop_assert!(small.range(k..).eq(model.range(k..)));
                }
            }
        }
    }

    #[test]
    fn from_array_sorts() {
        let map = SmallMap::from([(3, 'c'), (1, 'a'), (2, 'b')]);
        assert_eq!(map.keys().copied().collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!((&map).into_iter().count(), 3);
    }
}
