//! Drop-tail queues.
//!
//! A link's queue holds packets waiting for the transmitter. For fixed-rate
//! links the packet currently being serialized has already left the queue
//! (as in ns-3's `DropTailQueue` + device model), so a queue limit of `N`
//! packets means up to `N` *waiting* packets plus one on the wire (a packet
//! reaching an idle transmitter is always accepted, even with a limit of 0).
//! For trace links packets wait in the queue for a delivery opportunity, so
//! the limit covers every packet in the link that has not been sent yet.

use std::collections::VecDeque;

use serde::{Deserialize, Serialize};

use crate::time::{as_secs_f64, SimTime};

/// Smallest queue produced by [`QueueLimit::bdp_multiple`]: one MTU.
pub const MIN_BDP_QUEUE_BYTES: u64 = 1500;

/// Capacity of a drop-tail queue. A packet that would exceed the limit on
/// arrival is dropped ([`crate::stats::DropCause::QueueOverflow`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum QueueLimit {
    /// At most this many bytes waiting.
    Bytes(u64),
    /// At most this many packets waiting.
    Packets(u64),
    /// No limit (tests and idealized links).
    #[default]
    Infinite,
}

impl QueueLimit {
    /// A byte limit of `factor` times the bandwidth-delay product of a link of
    /// `rate_bps` bit/s and round-trip time `rtt`, never less than
    /// [`MIN_BDP_QUEUE_BYTES`]. Non-finite or negative factors count as 0.
    pub fn bdp_multiple(rate_bps: u64, rtt: SimTime, factor: f64) -> QueueLimit {
        let factor = if factor.is_finite() && factor > 0.0 {
            factor
        } else {
            0.0
        };
        let bdp_bytes = rate_bps as f64 * as_secs_f64(rtt) / 8.0;
        let bytes = (bdp_bytes * factor).ceil();
        let bytes = if bytes >= u64::MAX as f64 {
            u64::MAX
        } else {
            bytes as u64
        };
        QueueLimit::Bytes(bytes.max(MIN_BDP_QUEUE_BYTES))
    }

    /// Would a queue currently holding `packets`/`bytes` accept one more
    /// packet of `size` bytes?
    pub fn admits(&self, packets: usize, bytes: u64, size: u64) -> bool {
        match *self {
            QueueLimit::Bytes(limit) => bytes.saturating_add(size) <= limit,
            QueueLimit::Packets(limit) => (packets as u64) < limit,
            QueueLimit::Infinite => true,
        }
    }
}

/// One waiting packet (a handle into the simulator's packet store).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct QueueEntry {
    pub(crate) packet: u32,
    pub(crate) bytes: u64,
    pub(crate) enqueued_at: SimTime,
}

/// FIFO drop-tail queue with O(1) byte accounting.
#[derive(Debug, Clone, Default)]
pub(crate) struct DropTailQueue {
    entries: VecDeque<QueueEntry>,
    bytes: u64,
    limit: QueueLimit,
}

impl DropTailQueue {
    pub(crate) fn new(limit: QueueLimit) -> Self {
        Self {
            entries: VecDeque::new(),
            bytes: 0,
            limit,
        }
    }

    /// Enqueues `entry` if the limit allows; returns false (and leaves the
    /// queue untouched) otherwise.
    pub(crate) fn try_push(&mut self, entry: QueueEntry) -> bool {
        let size = entry.bytes;
        if !self.limit.admits(self.entries.len(), self.bytes, size) {
            return false;
        }
        self.bytes += size;
        self.entries.push_back(entry);
        true
    }

    /// Enqueues `entry` regardless of the limit (used when the packet goes
    /// straight to an idle transmitter and never really waits).
    pub(crate) fn push_unchecked(&mut self, entry: QueueEntry) {
        self.bytes += entry.bytes;
        self.entries.push_back(entry);
    }

    pub(crate) fn front(&self) -> Option<&QueueEntry> {
        self.entries.front()
    }

    pub(crate) fn pop(&mut self) -> Option<QueueEntry> {
        let e = self.entries.pop_front()?;
        self.bytes -= e.bytes;
        Some(e)
    }

    pub(crate) fn bytes(&self) -> u64 {
        self.bytes
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn set_limit(&mut self, limit: QueueLimit) {
        self.limit = limit;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    fn entry(bytes: u64) -> QueueEntry {
        QueueEntry {
            packet: 0,
            bytes,
            enqueued_at: 0,
        }
    }

    #[test]
    fn bdp_helper() {
        // 100 Mbit/s * 40 ms = 500 kB.
        assert_eq!(
            QueueLimit::bdp_multiple(100_000_000, ms(40), 1.0),
            QueueLimit::Bytes(500_000)
        );
        assert_eq!(
            QueueLimit::bdp_multiple(100_000_000, ms(40), 1.5),
            QueueLimit::Bytes(750_000)
        );
        assert_eq!(
            QueueLimit::bdp_multiple(1_000, ms(1), 1.0),
            QueueLimit::Bytes(MIN_BDP_QUEUE_BYTES)
        );
        assert_eq!(
            QueueLimit::bdp_multiple(1_000_000, ms(1), f64::NAN),
            QueueLimit::Bytes(MIN_BDP_QUEUE_BYTES)
        );
    }

    #[test]
    fn byte_limit_is_exact() {
        let mut q = DropTailQueue::new(QueueLimit::Bytes(3000));
        assert!(q.try_push(entry(1500)));
        assert!(q.try_push(entry(1500)));
        assert!(!q.try_push(entry(1)));
        assert_eq!(q.bytes(), 3000);
        assert_eq!(q.pop().map(|e| e.bytes), Some(1500));
        assert!(q.try_push(entry(1500)));
        assert_eq!(q.len(), 2);
    }

    #[test]
    fn packet_limit_is_exact() {
        let mut q = DropTailQueue::new(QueueLimit::Packets(2));
        assert!(q.try_push(entry(10)));
        assert!(q.try_push(entry(9000)));
        assert!(!q.try_push(entry(1)));
        q.set_limit(QueueLimit::Infinite);
        assert!(q.try_push(entry(1)));
        assert!(!q.is_empty());
        assert!(q.front().is_some());
    }
}
