//! The event queue: a binary heap keyed by `(time, insertion sequence)`, so
//! events at the same virtual time run in the order they were scheduled.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::time::SimTime;

/// What happens when an event fires. Kept small (16 bytes) so heap
/// operations stay cheap; packets live in the packet store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// Poll a node without a timeout (node added or woken externally).
    NodeWake { node: u32 },
    /// A node's timer; stale if `gen` differs from the node's generation.
    NodeTimer { node: u32, gen: u64 },
    /// Transmission done / delivery opportunity on a link; stale if `gen`
    /// differs from the link's service generation.
    LinkService { link: u32, gen: u64 },
    /// A packet finishes propagating over a link. `epoch` is the link's
    /// down-counter at departure: if the link went down since, it is lost.
    Deliver { link: u32, packet: u32, epoch: u32 },
    /// A scheduled configuration change (index into the link's actions).
    LinkAction { link: u32, action: u32 },
}

#[derive(Debug, Clone, Copy)]
struct Entry {
    time: SimTime,
    seq: u64,
    kind: EventKind,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        (self.time, self.seq) == (other.time, other.seq)
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first.
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// Deterministic min-heap of events.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Entry>,
    next_seq: u64,
}

impl EventQueue {
    pub(crate) fn push(&mut self, time: SimTime, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, kind });
    }

    pub(crate) fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    pub(crate) fn pop(&mut self) -> Option<(SimTime, EventKind)> {
        self.heap.pop().map(|e| (e.time, e.kind))
    }

    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_insertion() {
        let mut q = EventQueue::default();
        q.push(5, EventKind::NodeWake { node: 0 });
        q.push(3, EventKind::NodeWake { node: 1 });
        q.push(5, EventKind::NodeWake { node: 2 });
        q.push(3, EventKind::NodeWake { node: 3 });
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        let nodes: Vec<u32> = order
            .iter()
            .map(|(_, k)| match k {
                EventKind::NodeWake { node } => *node,
                _ => u32::MAX,
            })
            .collect();
        assert_eq!(nodes, vec![1, 3, 0, 2]);
        assert_eq!(std::mem::size_of::<EventKind>(), 16);
    }
}
