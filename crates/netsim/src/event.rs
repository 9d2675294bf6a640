//! The event queue: a binary heap keyed by `(time, insertion sequence)`, so
//! events at the same virtual time run in the order they were scheduled.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

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
    /// The FIFO lane this entry heads, or [`NO_LANE`].
    lane: u32,
}

/// [`Entry::lane`] of events that live in the heap only.
const NO_LANE: u32 = u32::MAX;

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
///
/// Events pushed with [`EventQueue::push_fifo`] whose times never decrease within their lane
/// (a link's deliveries: constant delay, no reordering) wait in that lane's FIFO; only each
/// lane's head is in the heap. The heap then holds a few entries per link instead of one per
/// packet in flight, and the pop order is still exactly `(time, insertion sequence)`.
#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: BinaryHeap<Entry>,
    /// Per lane, the entries behind its head (the head itself is in `heap`).
    lanes: Vec<VecDeque<Entry>>,
    /// Per lane, the time of the last entry pushed to it (`None`: the lane is empty).
    lane_tail: Vec<Option<SimTime>>,
    next_seq: u64,
    queued: usize,
}

impl EventQueue {
    pub(crate) fn push(&mut self, time: SimTime, kind: EventKind) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.queued += 1;
        self.heap.push(Entry {
            time,
            seq,
            kind,
            lane: NO_LANE,
        });
    }

    /// Like [`EventQueue::push`], for an event of FIFO lane `lane` (a small dense index, e.g. a
    /// link id). Same pop order as `push`; cheaper when the lane's times do not decrease.
    pub(crate) fn push_fifo(&mut self, lane: u32, time: SimTime, kind: EventKind) {
        let i = lane as usize;
        if lane == NO_LANE {
            return self.push(time, kind);
        }
        if self.lanes.len() <= i {
            self.lanes.resize_with(i + 1, VecDeque::new);
            self.lane_tail.resize(i + 1, None);
        }
        match self.lane_tail[i] {
            // Empty lane: the event heads it.
            None => {}
            Some(last) if last <= time => {
                let seq = self.next_seq;
                self.next_seq += 1;
                self.queued += 1;
                self.lanes[i].push_back(Entry {
                    time,
                    seq,
                    kind,
                    lane,
                });
                self.lane_tail[i] = Some(time);
                return;
            }
            // Earlier than the lane's tail: an ordinary heap event.
            Some(_) => return self.push(time, kind),
        }
        let seq = self.next_seq;
        self.next_seq += 1;
        self.queued += 1;
        self.heap.push(Entry {
            time,
            seq,
            kind,
            lane,
        });
        self.lane_tail[i] = Some(time);
    }

    pub(crate) fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }

    pub(crate) fn pop(&mut self) -> Option<(SimTime, EventKind)> {
        let mut top = self.heap.peek_mut()?;
        let e = *top;
        self.queued -= 1;
        if e.lane != NO_LANE {
            let i = e.lane as usize;
            if let Some(next) = self.lanes[i].pop_front() {
                // The lane's next event takes the head's place: one sift-down instead of a
                // pop and a push (the same order: keys are unique).
                *top = next;
                return Some((e.time, e.kind));
            }
            self.lane_tail[i] = None;
        }
        std::collections::binary_heap::PeekMut::pop(top);
        Some((e.time, e.kind))
    }

    pub(crate) fn len(&self) -> usize {
        self.queued
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

    /// Lanes change nothing about the order: the same events pushed through lanes (in and out
    /// of order) and through the heap alone pop identically.
    #[test]
    fn lanes_keep_the_order() {
        let mut rng = 0x1234_5678_u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut plain = EventQueue::default();
        let mut laned = EventQueue::default();
        let mut popped = (Vec::new(), Vec::new());
        let mut clock = 0;
        for i in 0..5000u32 {
            let r = next();
            if r % 3 == 0 {
                for (q, out) in [(&mut plain, &mut popped.0), (&mut laned, &mut popped.1)] {
                    if let Some((t, k)) = q.pop() {
                        out.push((t, k));
                    }
                }
                clock = popped.0.last().map_or(clock, |p| p.0);
                continue;
            }
            let lane = (r >> 8) as u32 % 4;
            // Mostly increasing per lane, sometimes earlier than the lane's tail.
            let t = clock + (r >> 16) % 50;
            let kind = EventKind::Deliver {
                link: lane,
                packet: i,
                epoch: 0,
            };
            plain.push(t, kind);
            laned.push_fifo(lane, t, kind);
            assert_eq!(plain.len(), laned.len());
            assert_eq!(plain.peek_time(), laned.peek_time());
        }
        while let Some(p) = plain.pop() {
            popped.0.push(p);
        }
        while let Some(p) = laned.pop() {
            popped.1.push(p);
        }
        assert_eq!(popped.0, popped.1);
        assert_eq!(laned.len(), 0);
    }
}
