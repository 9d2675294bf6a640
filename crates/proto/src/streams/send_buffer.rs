//! The sending half's byte buffer: data written by the application, tracked as
//! unsent / sent-in-flight / lost (to retransmit) / acknowledged ranges.
//!
//! Reused for CRYPTO streams (RFC 9000 §19.6), which have the same
//! retransmission needs but no flow control.

use std::collections::VecDeque;
use std::ops::Range;

use bytes::{Bytes, BytesMut};

use super::ranges::Ranges;

/// Smallest allocation made for coalescing small writes.
const MIN_TAIL_ALLOC: usize = 4096;

/// A retransmission buffer for one byte stream (a QUIC stream or a CRYPTO stream).
///
/// Bytes are stored once, as reference-counted [`Bytes`] segments, so that a chunk
/// handed out by [`SendBuffer::next_chunk`] is a zero-copy slice that the packet
/// builder copies exactly once into the packet. Small writes are coalesced into a
/// growing tail that is frozen into a segment when it is first sent.
///
/// Stored bytes are immutable, so retransmissions carry exactly the original data
/// (RFC 9000 §2.2: the data at a given offset MUST NOT change).
///
/// Offsets below [`SendBuffer::acked_offset`] are acknowledged and their memory is
/// released. Between that and [`SendBuffer::sent_offset`] data is in flight, lost
/// (queued for retransmission) or acknowledged out of order; above it data has
/// never been sent. All operations are O(log n) in the number of segments/ranges
/// (plus the ranges they touch).
#[derive(Debug, Default)]
pub(crate) struct SendBuffer {
    /// Frozen data as `(offset, bytes)`, contiguous and ascending; the first segment
    /// starts at `acked` (its acknowledged prefix is trimmed).
    segments: VecDeque<(u64, Bytes)>,
    /// Written data not yet frozen into `segments`; starts at `frozen_end`.
    tail: BytesMut,
    /// End offset of `segments`.
    frozen_end: u64,
    /// Everything below this offset is acknowledged and freed.
    acked: u64,
    /// Everything below this offset has been sent at least once.
    unsent: u64,
    /// Lost ranges waiting for retransmission (within `acked..unsent`).
    retransmit: Ranges,
    /// Ranges acknowledged above `acked` (out of order).
    acked_ranges: Ranges,
}

impl SendBuffer {
    /// An empty buffer starting at offset 0.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Appends a copy of `data` (coalesced with previous small writes).
    pub(crate) fn write(&mut self, data: &[u8]) {
        if self.tail.capacity() - self.tail.len() < data.len() {
            self.tail.reserve(data.len().max(MIN_TAIL_ALLOC));
        }
        self.tail.extend_from_slice(data);
    }

    /// Appends `data` without copying it.
    pub(crate) fn write_bytes(&mut self, data: Bytes) {
        if data.is_empty() {
            return;
        }
        self.freeze_tail();
        let len = data.len() as u64;
        self.segments.push_back((self.frozen_end, data));
        self.frozen_end += len;
    }

    /// Total bytes ever written (the offset the next write lands at).
    pub(crate) fn end(&self) -> u64 {
        self.frozen_end + self.tail.len() as u64
    }

    /// Offset below which every byte is acknowledged (and freed).
    #[cfg(test)]
    pub(crate) fn acked_offset(&self) -> u64 {
        self.acked
    }

    /// Offset below which every byte has been sent at least once.
    pub(crate) fn sent_offset(&self) -> u64 {
        self.unsent
    }

    /// Bytes held in memory: written and not yet acknowledged in order.
    pub(crate) fn buffered(&self) -> u64 {
        self.end() - self.acked
    }

    /// Bytes written and never sent.
    pub(crate) fn unsent_len(&self) -> u64 {
        self.end() - self.unsent
    }

    /// Whether some data has never been sent.
    pub(crate) fn has_unsent(&self) -> bool {
        self.unsent < self.end()
    }

    /// Whether some lost data waits for retransmission.
    pub(crate) fn has_retransmit(&self) -> bool {
        !self.retransmit.is_empty()
    }

    /// Whether [`SendBuffer::next_chunk`] would return something.
    pub(crate) fn has_pending(&self) -> bool {
        self.has_retransmit() || self.has_unsent()
    }

    /// Whether every written byte has been acknowledged.
    pub(crate) fn is_fully_acked(&self) -> bool {
        self.acked == self.end()
    }

    /// Offset of the next retransmission, if any.
    pub(crate) fn retransmit_offset(&self) -> Option<u64> {
        self.retransmit.peek_min().map(|r| r.start)
    }

    /// The next chunk to send, at most `max_len` bytes: lost data first, then new data.
    /// The chunk may be shorter than `max_len` even when more data is pending (it never
    /// spans two stored segments); call again to continue.
    pub(crate) fn next_chunk(&mut self, max_len: usize) -> Option<(u64, Bytes)> {
        self.next_retransmit(max_len)
            .or_else(|| self.next_unsent(max_len))
    }

    /// The next lost chunk to retransmit, at most `max_len` bytes.
    pub(crate) fn next_retransmit(&mut self, max_len: usize) -> Option<(u64, Bytes)> {
        let r = self.retransmit.peek_min()?;
        let n = (r.end - r.start).min(max_len as u64) as usize;
        if n == 0 {
            return None;
        }
        let data = self.slice(r.start, n);
        self.retransmit.remove(r.start..r.start + data.len() as u64);
        Some((r.start, data))
    }

    /// The next never-sent chunk, at most `max_len` bytes.
    pub(crate) fn next_unsent(&mut self, max_len: usize) -> Option<(u64, Bytes)> {
        let n = (self.end() - self.unsent).min(max_len as u64) as usize;
        if n == 0 {
            return None;
        }
        if self.unsent >= self.frozen_end {
            self.freeze_tail();
        }
        let offset = self.unsent;
        let data = self.slice(offset, n);
        self.unsent += data.len() as u64;
        Some((offset, data))
    }

    /// Takes the next lost range to retransmit, at most `max_len` bytes. Unlike
    /// [`SendBuffer::next_retransmit`] the range may span stored segments; copy
    /// its bytes with [`SendBuffer::copy_range_into`] before acknowledging it.
    pub(crate) fn take_retransmit(&mut self, max_len: usize) -> Option<Range<u64>> {
        let r = self.retransmit.peek_min()?;
        let end = r.end.min(r.start + max_len as u64);
        if end == r.start {
            return None;
        }
        self.retransmit.remove(r.start..end);
        Some(r.start..end)
    }

    /// Takes the next never-sent range, at most `max_len` bytes, possibly
    /// spanning stored segments (see [`SendBuffer::take_retransmit`]).
    pub(crate) fn take_unsent(&mut self, max_len: usize) -> Option<Range<u64>> {
        let end = self.end().min(self.unsent + max_len as u64);
        if end == self.unsent {
            return None;
        }
        if end > self.frozen_end {
            // Sent data is immutable from here on (RFC 9000 §2.2).
            self.freeze_tail();
        }
        let range = self.unsent..end;
        self.unsent = end;
        Some(range)
    }

    /// Appends the stored bytes of `range` to `out`. The range must lie within
    /// sent, not yet in-order-acknowledged data, as returned by the `take_*`
    /// methods.
    pub(crate) fn copy_range_into(&self, range: Range<u64>, out: &mut Vec<u8>) {
        debug_assert!(range.start >= self.acked && range.end <= self.frozen_end);
        let mut idx = self
            .segments
            .partition_point(|(start, b)| start + b.len() as u64 <= range.start);
        let mut at = range.start;
        while at < range.end {
            let (start, seg) = &self.segments[idx];
            let rel = (at - start) as usize;
            let n = (seg.len() - rel).min((range.end - at) as usize);
            out.extend_from_slice(&seg[rel..rel + n]);
            at += n as u64;
            idx += 1;
        }
    }

    /// Marks `offset..offset + len` acknowledged; frees the acknowledged prefix.
    pub(crate) fn on_acked(&mut self, offset: u64, len: u64) {
        let start = offset.max(self.acked);
        let end = offset.saturating_add(len).min(self.unsent);
        if start >= end {
            return;
        }
        self.retransmit.remove(start..end);
        if start > self.acked {
            self.acked_ranges.insert(start..end);
            return;
        }
        self.acked = end;
        while let Some(r) = self.acked_ranges.peek_min() {
            if r.start > self.acked {
                break;
            }
            self.acked = self.acked.max(r.end);
            self.acked_ranges.pop_min();
        }
        self.free_acked_prefix();
    }

    /// Marks `offset..offset + len` lost: its unacknowledged parts are queued for
    /// retransmission.
    pub(crate) fn on_lost(&mut self, offset: u64, len: u64) {
        for gap in self.unacked_in(offset, len) {
            self.retransmit.insert(gap);
        }
    }

    /// The parts of `offset..offset + len` (within sent data) not yet acknowledged.
    pub(crate) fn unacked_in(&self, offset: u64, len: u64) -> Vec<Range<u64>> {
        let start = offset.max(self.acked);
        let end = offset.saturating_add(len).min(self.unsent);
        if start >= end {
            return Vec::new();
        }
        self.acked_ranges.gaps(start..end)
    }

    /// Drops all buffered data (after a reset), keeping the offsets.
    pub(crate) fn clear(&mut self) {
        self.freeze_tail();
        self.segments.clear();
        self.retransmit.clear();
        self.acked_ranges.clear();
        self.acked = self.frozen_end;
        self.unsent = self.frozen_end;
    }

    /// Number of stored segments (for memory accounting in tests).
    #[cfg(test)]
    pub(crate) fn segment_count(&self) -> usize {
        self.segments.len() + usize::from(!self.tail.is_empty())
    }

    fn freeze_tail(&mut self) {
        if self.tail.is_empty() {
            return;
        }
        let data = self.tail.split().freeze();
        let len = data.len() as u64;
        self.segments.push_back((self.frozen_end, data));
        self.frozen_end += len;
    }

    /// Up to `n` bytes at `offset` (< `frozen_end`), without crossing a segment.
    fn slice(&self, offset: u64, n: usize) -> Bytes {
        let idx = self
            .segments
            .partition_point(|(start, b)| start + b.len() as u64 <= offset);
        let (start, seg) = &self.segments[idx];
        let rel = (offset - start) as usize;
        let n = n.min(seg.len() - rel);
        seg.slice(rel..rel + n)
    }

    fn free_acked_prefix(&mut self) {
        while let Some((start, seg)) = self.segments.front_mut() {
            let seg_end = *start + seg.len() as u64;
            if seg_end <= self.acked {
                self.segments.pop_front();
            } else {
                if *start < self.acked {
                    let cut = (self.acked - *start) as usize;
                    *seg = seg.slice(cut..);
                    *start = self.acked;
                }
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn chunks_retransmit_first_and_free_memory() {
        let mut b = SendBuffer::new();
        b.write(b"hello ");
        b.write_bytes(Bytes::from_static(b"world"));
        assert_eq!(b.end(), 11);
        let (o1, c1) = b.next_chunk(4).unwrap();
        assert_eq!((o1, &c1[..]), (0, &b"hell"[..]));
        let (o2, c2) = b.next_chunk(100).unwrap();
        assert_eq!((o2, &c2[..]), (4, &b"o "[..])); // stops at the segment boundary
        b.on_lost(0, 4);
        let (o3, c3) = b.next_chunk(100).unwrap();
        assert_eq!((o3, &c3[..]), (0, &b"hell"[..]));
        let (o4, c4) = b.next_chunk(100).unwrap();
        assert_eq!((o4, &c4[..]), (6, &b"world"[..]));
        assert!(b.next_chunk(100).is_none());
        b.on_acked(6, 5);
        assert_eq!(b.acked_offset(), 0);
        b.on_acked(0, 6);
        assert!(b.is_fully_acked());
        assert_eq!(b.segment_count(), 0);
    }

    #[test]
    fn taken_ranges_span_segments_and_copy_exactly() {
        let mut b = SendBuffer::new();
        b.write_bytes(Bytes::from_static(b"abc"));
        b.write_bytes(Bytes::from_static(b"defg"));
        b.write(b"hij");
        let r = b.take_unsent(8).unwrap();
        assert_eq!(r, 0..8);
        let mut out = Vec::new();
        b.copy_range_into(r, &mut out);
        assert_eq!(out, b"abcdefgh");
        // Written after the tail froze: a new segment, still copied in one go.
        b.write(b"kl");
        b.on_lost(2, 4);
        let r = b.take_retransmit(100).unwrap();
        assert_eq!(r, 2..6);
        out.clear();
        b.copy_range_into(r, &mut out);
        assert_eq!(out, b"cdef");
        assert_eq!(b.take_retransmit(100), None);
        let r = b.take_unsent(100).unwrap();
        assert_eq!(r, 8..12);
        out.clear();
        b.copy_range_into(r, &mut out);
        assert_eq!(out, b"ijkl");
        assert_eq!(b.take_unsent(100), None);
        b.on_acked(0, 12);
        assert!(b.is_fully_acked());
        assert_eq!(b.segment_count(), 0);
    }

    #[test]
    fn lost_then_acked_is_not_resent() {
        let mut b = SendBuffer::new();
        b.write(&[7; 100]);
        let _ = b.next_chunk(100);
        b.on_lost(0, 100);
        b.on_acked(20, 30);
        let (o, c) = b.next_chunk(1000).unwrap();
        assert_eq!((o, c.len()), (0, 20));
        let (o, c) = b.next_chunk(1000).unwrap();
        assert_eq!((o, c.len()), (50, 50));
        // Acknowledged data reported lost again stays acknowledged.
        b.on_lost(0, 100);
        assert_eq!(b.unacked_in(0, 100), vec![0..20, 50..100]);
    }

    proptest! {
        /// Random chunk sizes, random loss and acknowledgement order: every byte is
        /// eventually delivered exactly as written and all memory is freed.
        #[test]
        fn random_loss_delivers_everything(
            writes in proptest::collection::vec(1usize..3000, 1..20),
            seed in any::<u64>(),
        ) {
            let mut rng = seed;
            let mut next = move || { rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17; rng };
            let mut b = SendBuffer::new();
            let mut expected = Vec::new();
            for (i, &w) in writes.iter().enumerate() {
                let data: Vec<u8> = (0..w).map(|j| (i * 31 + j) as u8).collect();
                if i % 3 == 0 {
                    b.write_bytes(Bytes::from(data.clone()));
                } else {
                    b.write(&data);
                }
                expected.extend_from_slice(&data);
            }
            let mut received = vec![None; expected.len()];
            let mut in_flight: Vec<(u64, Bytes)> = Vec::new();
            for _ in 0..100_000 {
                if b.is_fully_acked() {
                    break;
                }
                if let Some(chunk) = b.next_chunk(1 + (next() % 1500) as usize) {
                    in_flight.push(chunk);
                }
                if in_flight.is_empty() || next() % 3 != 0 {
                    continue;
                }
                let (off, data) = in_flight.swap_remove((next() as usize) % in_flight.len());
                if next() % 4 == 0 {
                    b.on_lost(off, data.len() as u64);
                } else {
                    for (k, &byte) in data.iter().enumerate() {
                        received[off as usize + k] = Some(byte);
                    }
                    b.on_acked(off, data.len() as u64);
                }
            }
            prop_assert!(b.is_fully_acked());
            prop_assert_eq!(b.segment_count(), 0);
            let got: Vec<u8> = received.into_iter().map(|x| x.unwrap()).collect();
            prop_assert_eq!(got, expected);
        }
    }
}
