//! Streams with data waiting to be sent, by priority.
//!
//! The application may give each stream a priority (an `i32`, higher first, 0 by default, as
//! in quinn's `SendStream::set_priority`): a packet takes data from the highest level that has
//! any, and within one level the streams take turns (one stream fills what it can of a packet,
//! the next packet starts with the next stream). With every stream at the same level this is
//! the plain round robin the queue was before priorities existed.

use std::collections::VecDeque;

use mpquic_wire::stream_id::StreamId;

/// Empty levels are kept (a stream that empties and refills its level would otherwise free
/// and reallocate it per packet) until there are more than this many levels.
const KEEP_EMPTY_LEVELS: usize = 8;

/// Stream IDs queued by priority: levels in descending priority, FIFO within a level.
#[derive(Debug, Default)]
pub(crate) struct PendingStreams {
    /// Sorted by descending priority; a level may be empty.
    levels: Vec<(i32, VecDeque<StreamId>)>,
}

impl PendingStreams {
    /// Appends `id` at the back of its priority's level.
    pub(crate) fn push_back(&mut self, id: StreamId, priority: i32) {
        self.level(priority).push_back(id);
    }

    /// Puts `id` at the front of its priority's level (it keeps its turn).
    pub(crate) fn push_front(&mut self, id: StreamId, priority: i32) {
        self.level(priority).push_front(id);
    }

    /// The first stream of the highest non-empty level, removed.
    pub(crate) fn pop_front(&mut self) -> Option<StreamId> {
        self.levels.iter_mut().find_map(|(_, q)| q.pop_front())
    }

    /// The first stream of the highest non-empty level.
    pub(crate) fn front(&self) -> Option<StreamId> {
        self.levels.iter().find_map(|(_, q)| q.front().copied())
    }

    /// Every queued stream, highest priority first.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = &StreamId> + '_ {
        self.levels.iter().flat_map(|(_, q)| q.iter())
    }

    /// Whether `f` holds for a queued stream. A loop per level rather than a flattened
    /// iterator: this runs after every packet and the flattened form costs more per stream.
    pub(crate) fn any(&self, mut f: impl FnMut(StreamId) -> bool) -> bool {
        for (_, q) in &self.levels {
            if q.iter().any(|&id| f(id)) {
                return true;
            }
        }
        false
    }

    /// Calls `f` for every queued stream, highest priority first.
    pub(crate) fn for_each(&self, mut f: impl FnMut(StreamId)) {
        for (_, q) in &self.levels {
            q.iter().for_each(|&id| f(id));
        }
    }

    /// Removes `id` wherever it is queued.
    pub(crate) fn remove(&mut self, id: StreamId) {
        for (_, q) in &mut self.levels {
            q.retain(|&x| x != id);
        }
    }

    /// The queue of `priority`'s level, created in its place if missing.
    fn level(&mut self, priority: i32) -> &mut VecDeque<StreamId> {
        // Levels are sorted by descending priority: compare the other way round.
        let find = |levels: &[(i32, VecDeque<StreamId>)]| {
            levels.binary_search_by(|(p, _)| priority.cmp(p))
        };
        let at = match find(&self.levels) {
            Ok(at) => at,
            Err(_) => {
                if self.levels.len() >= KEEP_EMPTY_LEVELS {
                    self.levels.retain(|(_, q)| !q.is_empty());
                }
                let at = find(&self.levels).unwrap_err();
                self.levels.insert(at, (priority, VecDeque::new()));
                at
            }
        };
        &mut self.levels[at].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpquic_wire::stream_id::{Dir, StreamId};
    use mpquic_wire::Side;

    fn id(n: u64) -> StreamId {
        StreamId::new(Side::Client, Dir::Uni, n)
    }

    fn drain(q: &mut PendingStreams) -> Vec<StreamId> {
        std::iter::from_fn(|| q.pop_front()).collect()
    }

    #[test]
    fn one_level_is_first_in_first_out() {
        let mut q = PendingStreams::default();
        for n in 0..4 {
            q.push_back(id(n), 0);
        }
        q.push_front(id(9), 0);
        assert_eq!(drain(&mut q), [9, 0, 1, 2, 3].map(id));
    }

    #[test]
    fn higher_priorities_come_first_and_levels_keep_their_order() {
        let mut q = PendingStreams::default();
        q.push_back(id(0), 0);
        q.push_back(id(1), -5);
        q.push_back(id(2), 7);
        q.push_back(id(3), 0);
        q.push_back(id(4), 7);
        assert_eq!(q.front(), Some(id(2)));
        let all: Vec<_> = q.iter().copied().collect();
        assert_eq!(all, [2, 4, 0, 3, 1].map(id));
        q.remove(id(4));
        assert_eq!(drain(&mut q), [2, 0, 3, 1].map(id));
    }

    #[test]
    fn many_distinct_priorities_do_not_pile_up_empty_levels() {
        let mut q = PendingStreams::default();
        for p in 0..1000 {
            q.push_back(id(p as u64), p);
            assert_eq!(q.pop_front(), Some(id(p as u64)));
        }
        assert!(q.levels.len() <= KEEP_EMPTY_LEVELS + 1);
        q.push_back(id(1), i32::MIN);
        q.push_back(id(2), i32::MAX);
        assert_eq!(drain(&mut q), [2, 1].map(id));
    }
}
