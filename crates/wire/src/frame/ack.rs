//! ACK (RFC 9000 §19.3) and PATH_ACK (RFC 10069 §"PATH_ACK Frame") frames.

use super::decode::FrameReader;
use super::encode::{Counter, Out, Sink};
use super::ty;
use crate::error::FrameError;
use crate::range_set::RangeSet;
use bytes::BufMut;
use std::ops::RangeInclusive;

/// ECN counts carried by ACK 0x03 / PATH_ACK 0x3f (RFC 9000 §19.3.2).
#[derive(Debug, Copy, Clone, PartialEq, Eq, Default, Hash)]
pub struct EcnCounts {
    /// Packets received with the ECT(0) codepoint.
    pub ect0: u64,
    /// Packets received with the ECT(1) codepoint.
    pub ect1: u64,
    /// Packets received with the ECN-CE codepoint.
    pub ce: u64,
}

/// An ACK or PATH_ACK frame.
///
/// `ranges` are inclusive and **descending**: `ranges[0]` ends at `largest`,
/// and each following range lies strictly below the previous one with at
/// least one unacknowledged packet in between (RFC 9000 §19.3.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckFrame {
    /// `None` for ACK (0x02/0x03), `Some(path)` for PATH_ACK (0x3e/0x3f).
    pub path_id: Option<u64>,
    /// Largest Acknowledged.
    pub largest: u64,
    /// Raw ACK Delay field, before scaling by 2^ack_delay_exponent.
    pub ack_delay: u64,
    /// Acknowledged ranges, descending; the first contains `largest`.
    pub ranges: Vec<RangeInclusive<u64>>,
    /// ECN counts (frame type 0x03 / 0x3f when present).
    pub ecn: Option<EcnCounts>,
}

impl AckFrame {
    /// Builds an ACK from the acknowledged packet numbers in `set` (half-open
    /// ranges as stored by [`RangeSet`]). Returns `None` if `set` is empty.
    /// At most `max_ranges` ranges (the largest ones) are included; pass
    /// `usize::MAX` for all of them.
    pub fn from_range_set(
        path_id: Option<u64>,
        set: &RangeSet,
        ack_delay: u64,
        ecn: Option<EcnCounts>,
        max_ranges: usize,
    ) -> Option<AckFrame> {
        let ranges: Vec<RangeInclusive<u64>> = set
            .iter_rev()
            .filter(|r| r.end > r.start)
            .take(max_ranges.max(1))
            .map(|r| r.start..=r.end - 1)
            .collect();
        let largest = *ranges.first()?.end();
        Some(AckFrame {
            path_id,
            largest,
            ack_delay,
            ranges,
            ecn,
        })
    }

    /// The frame type: 0x02/0x03 for ACK, 0x3e/0x3f for PATH_ACK.
    pub fn frame_type(&self) -> u64 {
        match (self.path_id.is_some(), self.ecn.is_some()) {
            (false, false) => ty::ACK,
            (false, true) => ty::ACK_ECN,
            (true, false) => ty::PATH_ACK,
            (true, true) => ty::PATH_ACK_ECN,
        }
    }

    /// The acknowledged ranges, descending.
    pub fn iter_acked(&self) -> impl DoubleEndedIterator<Item = RangeInclusive<u64>> + '_ {
        self.ranges.iter().cloned()
    }

    /// Whether packet number `pn` is acknowledged by this frame.
    pub fn contains(&self, pn: u64) -> bool {
        self.ranges.iter().any(|r| r.contains(&pn))
    }

    /// Appends the wire encoding (RFC 9000 §19.3).
    ///
    /// Precondition: `ranges` is non-empty, descending, with gaps of at least
    /// one packet, and `ranges[0]` ends at `largest`. Violations are caller
    /// bugs: they never panic but encode saturated (wrong) gap values.
    pub fn encode(&self, out: &mut impl BufMut) {
        self.write(&mut Out(out))
    }

    /// Exact number of bytes [`AckFrame::encode`] writes.
    pub fn encoded_len(&self) -> usize {
        let mut c = Counter::default();
        self.write(&mut c);
        c.0
    }

    pub(crate) fn write<S: Sink>(&self, s: &mut S) {
        s.varint(self.frame_type());
        if let Some(p) = self.path_id {
            s.varint(p);
        }
        s.varint(self.largest);
        s.varint(self.ack_delay);
        s.varint(self.ranges.len().saturating_sub(1) as u64);
        // First ACK Range: packets acknowledged below `largest`.
        let first_start = self.ranges.first().map_or(self.largest, |r| *r.start());
        s.varint(self.largest.saturating_sub(first_start));
        let mut prev_smallest = first_start;
        for r in self.ranges.iter().skip(1) {
            // Gap: unacknowledged packets between ranges, minus one (§19.3.1).
            let gap = prev_smallest.saturating_sub(*r.end()).saturating_sub(2);
            s.varint(gap);
            s.varint(r.end().saturating_sub(*r.start()));
            prev_smallest = *r.start();
        }
        if let Some(e) = &self.ecn {
            s.varint(e.ect0);
            s.varint(e.ect1);
            s.varint(e.ce);
        }
    }

    /// Decodes the body of an ACK/PATH_ACK of type `t` (type already read).
    pub(crate) fn decode(r: &mut FrameReader<'_, '_>, t: u64) -> Result<AckFrame, FrameError> {
        let path_id = if matches!(t, ty::PATH_ACK | ty::PATH_ACK_ECN) {
            Some(r.path_id()?)
        } else {
            None
        };
        let largest = r.varint()?;
        let ack_delay = r.varint()?;
        let count = r.varint()?;
        let first = r.varint()?;
        let mut smallest = largest
            .checked_sub(first)
            .ok_or_else(|| r.err("first ACK range exceeds largest acknowledged"))?;
        // Each further range takes at least two bytes: bound the allocation.
        let cap = usize::try_from(count)
            .unwrap_or(usize::MAX)
            .min(r.remaining() / 2)
            .saturating_add(1);
        let mut ranges = Vec::with_capacity(cap);
        ranges.push(smallest..=largest);
        let mut i = 0u64;
        while i < count {
            let gap = r.varint()?;
            let len = r.varint()?;
            // Largest of this range = previous smallest - gap - 2 (§19.3.1).
            let hi = smallest
                .checked_sub(gap)
                .and_then(|v| v.checked_sub(2))
                .ok_or_else(|| r.err("ACK gap underflows packet number"))?;
            smallest = hi
                .checked_sub(len)
                .ok_or_else(|| r.err("ACK range underflows packet number"))?;
            ranges.push(smallest..=hi);
            i += 1;
        }
        let ecn = if matches!(t, ty::ACK_ECN | ty::PATH_ACK_ECN) {
            Some(EcnCounts {
                ect0: r.varint()?,
                ect1: r.varint()?,
                ce: r.varint()?,
            })
        } else {
            None
        };
        Ok(AckFrame {
            path_id,
            largest,
            ack_delay,
            ranges,
            ecn,
        })
    }
}
