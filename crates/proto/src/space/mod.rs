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

use std::collections::BTreeMap;

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
    /// done, rather than through our transport parameters.
    fn grants_path_ids_by_frame(&self) -> bool;
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

/// Packet numbers below the newest acknowledged one whose acknowledgement is remembered
/// per space for late RTT samples.
const ACKED_HISTORY: usize = 4096;

/// Sending state of one space: packet numbers and which path each outstanding packet went on.
#[derive(Debug, Default)]
pub(crate) struct SendSpace {
    next_pn: u64,
    /// Outstanding packets: packet number -> (path, per-path sequence number in the ledger).
    outstanding: PnMap<(PathId, u64)>,
    /// Packets declared lost, remembered for a while to count spurious losses (later ACKed).
    recently_lost: BTreeMap<u64, (PathId, crate::time::Timestamp, LossCause)>,
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
        if let Some((path, _)) = self.outstanding.remove(pn) {
            self.recently_lost.insert(pn, (path, now, cause));
        }
    }

    /// Packets in `range` that had been declared lost: each is a spurious loss, returned as
    /// (packet number, path, why it had been declared lost).
    pub(crate) fn take_spuriously_lost(
        &mut self,
        range: std::ops::RangeInclusive<u64>,
        out: &mut Vec<(u64, PathId, LossCause)>,
    ) {
        // Most ACK ranges cover no declared loss: check the bounds before searching.
        let (Some((&first, _)), Some((&last, _))) = (
            self.recently_lost.first_key_value(),
            self.recently_lost.last_key_value(),
        ) else {
            return;
        };
        if *range.end() < first || *range.start() > last {
            return;
        }
        let pns: Vec<u64> = self.recently_lost.range(range).map(|(&pn, _)| pn).collect();
        for pn in pns {
            if let Some((path, _, cause)) = self.recently_lost.remove(&pn) {
                out.push((pn, path, cause));
            }
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
            .first_key_value()
            .is_some_and(|(_, (_, t, _))| *t < horizon)
        {
            self.recently_lost.pop_first();
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
