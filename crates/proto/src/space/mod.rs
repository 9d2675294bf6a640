//! Packet number spaces and the layout seam that maps paths to them.
//!
//! Connection code asks [`SpaceLayout`] which space a path uses and what that implies, and never
//! sees the multipath design: the design is known only here. Each layout is one file: single
//! path ([`SinglePath`]), SPNS (one application-data space shared by every path, Alibaba report;
//! [`SharedSpace`]) and MPNS (one space per path, RFC 10069 §4; [`PerPathSpaces`]). The
//! negotiation that picks one is [`negotiate`]; a new layout is a new file and one line there.

mod history;
pub(crate) mod negotiate;
mod per_path;
mod pn_map;
mod record;
mod shared;
mod single;

use std::collections::VecDeque;

use mpquic_wire::transport_params::TransportParameters;

pub(crate) use history::SendHistory;
pub(crate) use per_path::PerPathSpaces;
pub(crate) use pn_map::PnMap;
pub(crate) use record::ReceiveRecord;
pub(crate) use shared::SharedSpace;
pub(crate) use single::SinglePath;

use crate::path::PathId;
use crate::recovery::LossCause;
use crate::spns_rules::SpnsRules;

/// A packet number space: Initial, Handshake (RFC 9000 §12.3), or an application-data space,
/// identified by the path ID whose space it is (always 0 unless MPNS).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum SpaceId {
    Initial,
    Handshake,
    Data(PathId),
}

/// The negotiated multipath design of a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Design {
    /// Plain RFC 9000: one path.
    Single,
    /// Single packet number space shared by every path (the Alibaba report, draft-01).
    Spns,
    /// Multiple packet number spaces, one per path (RFC 10069).
    Mpns,
}

/// How paths map onto packet number spaces and what that implies on the wire.
pub(crate) trait SpaceLayout: std::fmt::Debug + Send + Sync {
    /// The application-data space packets on `path` are numbered in.
    fn space_for(&self, path: PathId) -> SpaceId;
    /// The path ID mixed into the AEAD nonce of 1-RTT packets on `path` (RFC 10069 §2.4), or
    /// None for the RFC 9001 nonce.
    fn nonce_path_id(&self, path: PathId) -> Option<u32>;
    /// The Path ID field of the frame acknowledging `space`: Some for PATH_ACK (RFC 10069 §7.1),
    /// None for a plain ACK frame.
    fn ack_path_id(&self, space: SpaceId) -> Option<u64>;
    /// The space acknowledged by a received ACK (None) or PATH_ACK (Some(path ID)) frame.
    fn space_of_ack(&self, path_id: Option<u64>) -> Option<SpaceId>;
    /// Whether paths other than path 0 may exist.
    fn is_multipath(&self) -> bool;
    /// Whether one application-data space may number the packets of several paths (SPNS).
    /// Where it may not, the packet-number length needs no estimate of overtaking packets
    /// (`connection/pn_len.rs`).
    fn shares_spaces(&self) -> bool;
    /// Whether a gap in a space's received packet numbers hints at loss (RFC 9000 §13.2.1
    /// immediate ACK). Not when several paths interleave their packets in one space (SPNS):
    /// there only arrivals below the path's own largest packet count as reordering.
    fn gaps_signal_loss(&self) -> bool;
    /// The application-data space forgotten together with `path` once the path is removed
    /// (None: the path's space is shared with other paths or with path 0, and stays).
    fn space_retired_with(&self, path: PathId) -> Option<SpaceId>;
    /// The highest path ID the peer's transport parameters allow us (RFC 10069 §2.1), or None
    /// when this layout does not take path IDs from them.
    fn peer_max_path_id(&self, peer: &TransportParameters) -> Option<PathId>;
    /// Whether we grant path IDs to the peer with a MAX_PATH_ID frame once the handshake is
    /// done, rather than through our transport parameters (which `peer` may not read).
    fn grants_path_ids_by_frame(&self, peer: &TransportParameters) -> bool;
    /// The report's rules (loss detection, RTT samples, ACKs) the seams apply in this layout.
    fn report_rules(&self) -> &SpnsRules;
    /// Which design this is (statistics and logs only: behaviour comes from the methods above).
    fn design(&self) -> Design;
}

impl crate::connection::Connection {
    /// The negotiated multipath design (what the connection's layout reports).
    pub fn design(&self) -> Design {
        self.layout.design()
    }
}

/// A packet declared lost: (packet number, path, when, why, per-path sequence number).
type Lost = (u64, PathId, crate::time::Timestamp, LossCause, u64);

/// A packet declared lost that an ACK frame acknowledged after all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpuriousLoss {
    pub pn: u64,
    pub path: PathId,
    /// Why it had been declared lost.
    pub cause: LossCause,
    /// Its sequence number in its path's ledger.
    pub seq: u64,
}

/// [`gallop_down`] after a few single steps: the entries between two ranges of a frame are
/// its gaps, usually one or two packets.
fn walk_down(lost: &VecDeque<Lost>, upper: usize, end: u64) -> usize {
    let mut i = upper;
    for _ in 0..4 {
        if i == 0 || lost[i - 1].0 <= end {
            return i;
        }
        i -= 1;
    }
    gallop_down(lost, i, end)
}

/// The lowest index `i <= upper` with every entry of `lost[i..upper]` above `end` (`lost` is
/// sorted by packet number): steps of 1, 2, 4, ... down from `upper`, then a binary search
/// within the last step.
fn gallop_down(lost: &VecDeque<Lost>, upper: usize, end: u64) -> usize {
    let mut hi = upper; // lost[hi..upper] are all above `end`
    let mut step = 1;
    while hi > 0 {
        let probe = hi.saturating_sub(step);
        if lost[probe].0 <= end {
            // The answer lies in probe + 1 ..= hi.
            let (mut l, mut h) = (probe + 1, hi);
            while l < h {
                let m = (l + h) / 2;
                if lost[m].0 <= end {
                    l = m + 1;
                } else {
                    h = m;
                }
            }
            return l;
        }
        hi = probe;
        step *= 2;
    }
    0
}

/// Packet numbers below the newest acknowledged one whose acknowledgement is remembered
/// per space for late RTT samples.
const ACKED_HISTORY: usize = 4096;

/// Sending state of one space: packet numbers and which path each outstanding packet went on.
#[derive(Debug, Default)]
pub(crate) struct SendSpace {
    next_pn: u64,
    /// Outstanding packets: packet number -> (path, per-path sequence number in the ledger).
    outstanding: PnMap<(PathId, u64)>,
    /// Packets declared lost, remembered for a while to count spurious losses (later ACKed):
    /// (packet number, path, when, why), sorted by packet number. A sorted deque, not a
    /// B-tree: every range of every ACK frame is looked up here (a B-tree range search per
    /// range was 5% of a simulated download), losses arrive mostly in packet-number order (a
    /// push at the back) and expire from the front.
    recently_lost: VecDeque<Lost>,
    /// Recently acknowledged packets: (path, send time, ack-eliciting), for RTT samples from
    /// ACKs whose Largest Acknowledged was already acknowledged on another path.
    acked_history: PnMap<(PathId, crate::time::Timestamp, bool)>,
    largest_acked: Option<u64>,
    /// Recent packet numbering, for packet-number lengths (RFC 9000 §17.1).
    history: SendHistory,
    /// ECN counts of the last ACK frame used for ECN validation (RFC 9000 §13.4.2.1).
    pub ecn_baseline: mpquic_wire::frame::EcnCounts,
    /// That frame's lowest reported and largest acknowledged packet numbers, and the path of
    /// the largest (see `Connection::on_ack_ecn`).
    pub ecn_span: Option<(u64, u64, Option<crate::path::PathId>)>,
}

impl SendSpace {
    /// Allocate the next packet number (RFC 9000 §12.3: never reused within a space).
    pub(crate) fn next_pn(&mut self) -> u64 {
        let pn = self.next_pn;
        self.next_pn += 1;
        pn
    }

    /// The packet number the next packet will get.
    pub(crate) fn peek_pn(&self) -> u64 {
        self.next_pn
    }

    /// Remember that `pn` went on `path` with ledger sequence `seq`.
    pub(crate) fn on_sent(&mut self, pn: u64, path: PathId, seq: u64) {
        self.outstanding.insert(pn, (path, seq));
    }

    /// Remove and return outstanding packets whose numbers fall in `range` (an ACK range).
    pub(crate) fn take_acked(
        &mut self,
        range: std::ops::RangeInclusive<u64>,
        out: &mut Vec<(u64, PathId, u64)>,
    ) {
        self.outstanding
            .take_range(range, |pn, (path, seq)| out.push((pn, path, seq)));
    }

    /// Forget an outstanding packet discarded with its keys or path.
    pub(crate) fn forget(&mut self, pn: u64) {
        self.outstanding.remove(pn);
    }

    /// An outstanding packet was declared lost at `now`.
    pub(crate) fn on_lost(&mut self, pn: u64, now: crate::time::Timestamp, cause: LossCause) {
        if let Some((path, seq)) = self.outstanding.remove(pn) {
            let entry = (pn, path, now, cause, seq);
            match self.recently_lost.back() {
                Some(last) if last.0 >= pn => {
                    match self.recently_lost.binary_search_by_key(&pn, |e| e.0) {
                        Ok(i) => self.recently_lost[i] = entry,
                        Err(i) => self.recently_lost.insert(i, entry),
                    }
                }
                _ => self.recently_lost.push_back(entry),
            }
        }
    }

    /// Packets in an ACK frame's `ranges` (descending and disjoint, as decoded) that had been
    /// declared lost: each is a spurious loss, returned as (packet number, path, why it had been
    /// declared lost), in the order of `ranges` and ascending within each range.
    pub(crate) fn take_spuriously_lost(
        &mut self,
        ranges: &[std::ops::RangeInclusive<u64>],
        out: &mut Vec<SpuriousLoss>,
    ) {
        let lost = &mut self.recently_lost;
        // Entries below `upper` are below the previous (higher) range. The entries between two
        // ranges are the frame's gaps, mostly a few packets each, so the next range's end is
        // found by galloping down from `upper` rather than searching the whole list per range.
        let mut upper = lost.len();
        for range in ranges {
            let (start, end) = (*range.start(), *range.end());
            if upper == 0 || lost[0].0 > end {
                return;
            }
            let hi = walk_down(lost, upper, end);
            let mut lo = hi;
            while lo > 0 && lost[lo - 1].0 >= start {
                lo -= 1;
            }
            if lo < hi {
                out.extend(
                    lost.drain(lo..hi)
                        .map(|(pn, path, _, cause, seq)| SpuriousLoss {
                            pn,
                            path,
                            cause,
                            seq,
                        }),
                );
            }
            upper = lo;
        }
    }

    /// Remember an acknowledged packet (bounded history).
    pub(crate) fn remember_acked(
        &mut self,
        pn: u64,
        path: PathId,
        sent: crate::time::Timestamp,
        eliciting: bool,
    ) {
        self.acked_history.insert(pn, (path, sent, eliciting));
        self.acked_history
            .forget_below(pn.saturating_sub(ACKED_HISTORY as u64));
    }

    /// The largest packet number among `ranges` (an ACK frame's, descending) that was sent on
    /// `path`, looking at no more than `budget` packet numbers (the frame's newest first).
    /// Only acknowledged packets are considered: call it after the frame's packets were
    /// removed from the outstanding ones and remembered.
    pub(crate) fn largest_reported_on(
        &self,
        ranges: &[std::ops::RangeInclusive<u64>],
        path: PathId,
        budget: usize,
    ) -> Option<u64> {
        ranges
            .iter()
            .flat_map(|r| r.clone().rev())
            .take(budget)
            .find(|&pn| {
                self.acked_history
                    .get(pn)
                    .is_some_and(|(p, _, _)| *p == path)
            })
    }

    /// Path, send time and ack-eliciting flag of a recently acknowledged packet.
    pub(crate) fn acked_info(&self, pn: u64) -> Option<(PathId, crate::time::Timestamp, bool)> {
        self.acked_history.get(pn).copied()
    }

    /// Stop remembering losses declared before `horizon`.
    /// Losses are declared in roughly packet-number order, so expiry stops at the first entry
    /// still young enough: O(expired) per call, not a scan (it runs on every timer).
    pub(crate) fn expire_lost(&mut self, horizon: crate::time::Timestamp) {
        while self
            .recently_lost
            .front()
            .is_some_and(|&(_, _, t, _, _)| t < horizon)
        {
            self.recently_lost.pop_front();
        }
    }

    /// Record the largest acknowledged packet number; returns the value used for packet number
    /// encoding (RFC 9000 §17.1).
    pub(crate) fn on_largest_acked(&mut self, pn: u64) {
        self.largest_acked = Some(self.largest_acked.map_or(pn, |l| l.max(pn)));
    }

    pub(crate) fn largest_acked(&self) -> Option<u64> {
        self.largest_acked
    }

    /// The next packet number is about to be used at `now`: remember it for
    /// [`Self::numbered_since`] with windows up to `horizon`.
    pub(crate) fn note_numbering(
        &mut self,
        now: crate::time::Timestamp,
        horizon: crate::time::Duration,
    ) {
        self.history.note(now, self.next_pn, horizon);
    }

    /// An upper bound on the packets numbered in this space during the last `window`.
    pub(crate) fn numbered_since(
        &self,
        now: crate::time::Timestamp,
        window: crate::time::Duration,
    ) -> u64 {
        self.history.numbered_since(now, window, self.next_pn)
    }

    /// Whether an ACK naming `pn` refers to a packet we never sent (RFC 9000 §13.1:
    /// PROTOCOL_VIOLATION).
    pub(crate) fn never_sent(&self, pn: u64) -> bool {
        pn >= self.next_pn
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;
    use proptest::prelude::*;

    proptest! {
        /// The galloping lookup finds what a per-range filter of the sorted list finds, in the
        /// same order, and leaves the same entries behind.
        #[test]
        fn spurious_losses_match_a_per_range_filter(
            lost_pns in proptest::collection::btree_set(0u64..300, 0..80),
            cuts in proptest::collection::btree_set(0u64..320, 1..24),
        ) {
            let mut space = SendSpace::default();
            for &pn in &lost_pns {
                space.on_sent(pn, PathId::new((pn % 3) as u32), pn);
            }
            // Declared lost out of order now and then (a shared space's several paths).
            for &pn in lost_pns.iter().rev().step_by(3).chain(lost_pns.iter()) {
                space.on_lost(pn, Timestamp::from_nanos(pn), LossCause::PacketThreshold);
            }
            // Consecutive cut points taken in pairs: disjoint ranges with gaps, descending.
            let cuts: Vec<u64> = cuts.into_iter().collect();
            let ranges: Vec<_> = cuts.chunks(2).rev().map(|c| c[0]..=c[c.len() - 1]).collect();
            let mut expected = Vec::new();
            let mut left: Vec<u64> = lost_pns.iter().copied().collect();
            for r in &ranges {
                expected.extend(left.iter().filter(|pn| r.contains(pn)).map(|&pn| SpuriousLoss {
                    pn,
                    path: PathId::new((pn % 3) as u32),
                    cause: LossCause::PacketThreshold,
                    seq: pn,
                }));
                left.retain(|pn| !r.contains(pn));
            }
            let mut out = Vec::new();
            space.take_spuriously_lost(&ranges, &mut out);
            prop_assert_eq!(out, expected);
            let rest: Vec<u64> = space.recently_lost.iter().map(|e| e.0).collect();
            prop_assert_eq!(rest, left);
        }
    }
}
