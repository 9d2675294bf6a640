//! Explicit Congestion Notification per path (RFC 9000 §13.4, RFC 9002 §7.1 and §B.6,
//! RFC 10069 §"PATH_ACK Frame": ECN counts per packet number space).
//!
//! Sender: every path starts in [`EcnState::Testing`] and marks its datagrams ECT(0) while
//! testing or capable (RFC 9000 §13.4.2). Each ACK frame that raises the space's largest
//! acknowledged packet is checked against the ECN counts the peer reported
//! ([`process_ack_ecn`], RFC 9000 §13.4.2.1 / §A.4): the counts must be present when ECT
//! packets are newly acknowledged, may not report ECT(1) (we never send it), and ECT(0) + CE
//! must grow by at least the number of newly acknowledged ECT(0) packets. Counts below those
//! of an ACK already processed mark a stale ACK, which is skipped.
//! A failure disables marking on that path only ([`EcnState::Failed`]). A path whose first
//! [`TESTING_LOST_LIMIT`] marked packets are all lost without any marked packet acknowledged
//! fails too (§13.4.2.2: a network element may drop ECT packets).
//!
//! Shared packet number space (SPNS): the counts of an ACK cover the whole space, so an
//! increase is attributed to paths through the newly acknowledged packets' paths:
//! * validation: when one path's ECT packets are newly acknowledged the verdict is that
//!   path's; when several paths' are and the counts fall short, the ACK is ambiguous and gives
//!   blames the one path whose required packets alone can explain the shortfall (a path
//!   whose marks are all bleached explains all of it), and no path if several can; when the
//!   counts suffice, every such path passes. Which packets are required is the caller's
//!   decision (`Connection::on_ack_ecn`: not those an earlier frame may have counted).
//! * CE: an increase is one congestion event for the path whose packets were newly
//!   acknowledged (RFC 9002 §B.6, with the send time of that path's largest newly acknowledged
//!   packet). If several paths' were, the marks most likely come from the queue that is
//!   building: the event goes to the path with the largest queueing delay estimate (latest
//!   RTT above the minimum), ties to the path of the largest newly acknowledged packet.
//!   Two rules were tried first and measured (`crates/lab/tests/ecn.rs`, 20 + 15 Mbit/s,
//!   `ecn=20kb`): the path of the largest newly acknowledged packet alone is nearly always the
//!   fastest path, which then answered the slow path's marks (its window fell to 2 packets,
//!   the slow path's queue stayed at 33 ms, 18.4 Mbit/s in all); every path with newly
//!   acknowledged marks made the slow path answer the fast path's marks too (its queue stayed
//!   empty). Per-path counts (MPNS) need no such guess.
//!   Validation in a shared space is weak for the same reason: ACKs carry their own path's
//!   largest packet, so counts of packets they do not acknowledge hide a bleaching path's
//!   shortfall (not detected in the simulator; the unit tests cover the attribution rule).
//!
//! With one space per path (MPNS) every PATH_ACK concerns one path and no attribution is
//! needed. The code is the same for both designs: the caller hands per-path shares.

use mpquic_wire::frame::EcnCounts;

use crate::path::PathId;

/// Marked packets lost with none acknowledged after which testing fails (RFC 9000 §13.4.2.2
/// suggests testing with the first ten packets).
pub(crate) const TESTING_LOST_LIMIT: u64 = 10;

/// An ECN codepoint of a datagram (RFC 3168 §5); `None` where one is optional means Not-ECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub enum EcnCodepoint {
    /// ECT(0), 0b10.
    Ect0,
    /// ECT(1), 0b01.
    Ect1,
    /// Congestion experienced, 0b11.
    Ce,
}

impl EcnCodepoint {
    /// From the two ECN bits of the IP header; None for Not-ECT.
    pub fn from_bits(bits: u8) -> Option<Self> {
        match bits & 0b11 {
            0b10 => Some(Self::Ect0),
            0b01 => Some(Self::Ect1),
            0b11 => Some(Self::Ce),
            _ => None,
        }
    }

    /// The two ECN bits of the IP header.
    pub fn bits(self) -> u8 {
        match self {
            Self::Ect0 => 0b10,
            Self::Ect1 => 0b01,
            Self::Ce => 0b11,
        }
    }
}

/// RFC 9000 §13.4.1: count a received packet's codepoint in its space's counts.
pub(crate) fn count_received(counts: &mut EcnCounts, codepoint: Option<EcnCodepoint>) {
    match codepoint {
        Some(EcnCodepoint::Ect0) => counts.ect0 += 1,
        Some(EcnCodepoint::Ect1) => counts.ect1 += 1,
        Some(EcnCodepoint::Ce) => counts.ce += 1,
        None => {}
    }
}

/// ECN validation state of a path (RFC 9000 §13.4.2, §A.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EcnState {
    /// Marking; no ACK has yet confirmed the marks.
    #[default]
    Testing,
    /// An ACK confirmed our marks: marking.
    Capable,
    /// Validation failed: not marking on this path any more.
    Failed,
    /// ECN is switched off in the configuration (`TransportConfig::ecn`): never marking.
    Disabled,
}

/// What one ACK frame says about one path's marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// The counts account for the path's newly acknowledged ECT(0) packets.
    Pass,
    /// Validation failed for the path, and why.
    Fail(&'static str),
}

/// Per-path ECN sender state and counters.
#[derive(Debug, Clone, Default)]
pub(crate) struct EcnPath {
    state: EcnState,
    failure: Option<&'static str>,
    /// Our ECT(0) packets on this path that were acknowledged / declared lost.
    marked_acked: u64,
    marked_lost: u64,
    /// Congestion events the peer's CE reports caused on this path (RFC 9002 §7.1).
    ce_events: u64,
    /// CE count increases attributed to this path.
    ce_reported: u64,
    /// Datagrams received on this path with each codepoint (RFC 9000 §13.4.1 counts them per
    /// space; these per-path totals are for statistics).
    received: EcnCounts,
}

/// Snapshot of a path's ECN state for the API and the lab.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct EcnPathStats {
    /// Where validation of our marks stands (RFC 9000 §13.4.2).
    pub state: EcnState,
    /// Why validation failed, once it has.
    pub failure: Option<&'static str>,
    /// Our ECT(0)-marked packets on this path that were acknowledged.
    pub marked_acked: u64,
    /// Our ECT(0)-marked packets on this path that were declared lost.
    pub marked_lost: u64,
    /// CE increases in the peer's ACKs attributed to this path.
    pub ce_reported: u64,
    /// Congestion events those caused.
    pub ce_congestion_events: u64,
    /// Datagrams received on this path marked ECT(0), ECT(1), CE.
    pub ect0_received: u64,
    /// Datagrams received on this path marked ECT(1).
    pub ect1_received: u64,
    /// Datagrams received on this path marked CE.
    pub ce_received: u64,
}

impl EcnPath {
    /// Whether packets sent now on this path carry ECT(0).
    pub(crate) fn is_marking(&self) -> bool {
        matches!(self.state, EcnState::Testing | EcnState::Capable)
    }

    #[cfg(test)]
    pub(crate) fn state(&self) -> EcnState {
        self.state
    }

    /// `n` of this path's ECT(0) packets were newly acknowledged.
    pub(crate) fn on_marked_acked(&mut self, n: u64) {
        self.marked_acked += n;
    }

    /// Apply an ACK's verdict for this path.
    pub(crate) fn on_verdict(&mut self, verdict: Verdict) {
        if self.state == EcnState::Failed {
            return;
        }
        match verdict {
            Verdict::Pass => self.state = EcnState::Capable,
            Verdict::Fail(why) => {
                self.state = EcnState::Failed;
                self.failure = Some(why);
            }
        }
    }

    /// Marked packets of this path were declared lost (RFC 9000 §13.4.2.2: all marked packets
    /// lost while testing suggests a network element drops ECT packets).
    pub(crate) fn on_marked_lost(&mut self, n: u64) {
        self.marked_lost += n;
        if self.state == EcnState::Testing
            && self.marked_acked == 0
            && self.marked_lost >= TESTING_LOST_LIMIT
        {
            self.state = EcnState::Failed;
            self.failure = Some("every marked packet lost while testing");
        }
    }

    /// The peer reported `n` more CE marks for this path; `event` if that started a congestion
    /// event (the caller's recovery period decides).
    pub(crate) fn on_ce(&mut self, n: u64, event: bool) {
        self.ce_reported += n;
        self.ce_events += u64::from(event);
    }

    /// A datagram arrived on this path with this codepoint.
    pub(crate) fn on_received(&mut self, codepoint: Option<EcnCodepoint>) {
        count_received(&mut self.received, codepoint);
    }

    pub(crate) fn stats(&self) -> EcnPathStats {
        EcnPathStats {
            state: self.state,
            failure: self.failure,
            marked_acked: self.marked_acked,
            marked_lost: self.marked_lost,
            ce_reported: self.ce_reported,
            ce_congestion_events: self.ce_events,
            ect0_received: self.received.ect0,
            ect1_received: self.received.ect1,
            ce_received: self.received.ce,
        }
    }
}

/// One path's part of the packets an ACK frame newly acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PathShare {
    pub path: PathId,
    /// Newly acknowledged packets of the path that we sent ECT(0).
    pub ect_acked: u64,
    /// Of those, the ones the counts must account for (RFC 9000 §13.4.2.1: all of them, but
    /// in a shared space some may have been counted by an earlier ACK; see
    /// `Connection::on_ack_ecn`).
    pub ect_required: u64,
    /// The path's largest newly acknowledged packet number.
    pub largest_pn: u64,
    /// The path's current queueing delay estimate (latest RTT above the minimum), in µs.
    pub queueing_us: u64,
}

/// What an ACK frame's ECN counts mean for the paths of its space.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AckEcnOutcome {
    /// Validation verdicts (paths with newly acknowledged ECT packets, unless ambiguous).
    pub verdicts: Vec<(PathId, Verdict)>,
    /// The CE count grew by this much, attributed to these paths (RFC 9002 §7.1).
    pub ce: Vec<(PathId, u64)>,
    /// The frame's counts became the new baseline (they were present and not stale).
    pub used: bool,
}

/// RFC 9000 §13.4.2.1 / RFC 9002 §B.6 for one ACK frame that raised the space's largest
/// acknowledged packet (out-of-order ACKs are not used: §13.4.2.1). `baseline` holds the
/// counts of the last ACK processed for the space and is updated when the new counts are
/// usable. `shares` lists the paths with newly acknowledged packets.
pub(crate) fn process_ack_ecn(
    baseline: &mut EcnCounts,
    reported: Option<EcnCounts>,
    shares: &[PathShare],
) -> AckEcnOutcome {
    let mut out = AckEcnOutcome::default();
    let marked: Vec<&PathShare> = shares.iter().filter(|s| s.ect_acked > 0).collect();
    let fail_all = |out: &mut AckEcnOutcome, why| {
        out.verdicts = marked
            .iter()
            .map(|s| (s.path, Verdict::Fail(why)))
            .collect();
    };
    let Some(counts) = reported else {
        // §13.4.2.1: ECT packets newly acknowledged without ECN counts.
        fail_all(&mut out, "ACK without ECN counts");
        return out;
    };
    if counts.ect0 < baseline.ect0 || counts.ect1 < baseline.ect1 || counts.ce < baseline.ce {
        // A stale ACK: older counts than an ACK already processed. With one space over
        // several paths an ACK carries its own path's largest packet (report §2.2), so a
        // later largest does not mean a later ACK; skipped like a reordered ACK (§13.4.2.1).
        // Its packets' marks are covered by the newer counts' surplus.
        return out;
    }
    let ect0 = counts.ect0 - baseline.ect0;
    let ect1 = counts.ect1 - baseline.ect1;
    let ce = counts.ce - baseline.ce;
    *baseline = counts;
    out.used = true;
    let expected: u64 = marked.iter().map(|s| s.ect_required).sum();
    // The paths whose required packets alone can explain a shortfall: a path whose marks
    // are all bleached accounts for all of it, one whose marks arrive for none.
    let shortfall = expected.saturating_sub(ect0 + ce);
    let short: Vec<PathId> = marked
        .iter()
        .filter(|s| s.ect_required >= shortfall.max(1))
        .map(|s| s.path)
        .collect();
    if ect1 > 0 {
        // §13.4.2.1: more ECT(1) reported than we sent (none).
        fail_all(&mut out, "ECT(1) reported but never sent");
    } else if ect0 + ce >= expected {
        out.verdicts = marked.iter().map(|s| (s.path, Verdict::Pass)).collect();
    } else if let [path] = short[..] {
        // Bleached or dropped marks: the sum of the ECT(0) and CE increases is short.
        let why = "ECN counts short of the marked packets acknowledged";
        out.verdicts = vec![(path, Verdict::Fail(why))];
    }
    // else: several paths' marks and too few counts; SPNS cannot tell whose (module docs).
    if ce > 0 {
        let owner = match shares {
            [only] => Some(only.path),
            _ => shares
                .iter()
                .max_by_key(|s| (s.queueing_us, s.largest_pn))
                .map(|s| s.path),
        };
        out.ce = owner.map(|p| (p, ce)).into_iter().collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const P0: PathId = PathId::ZERO;
    const P1: PathId = PathId::new(1);
    const P3: PathId = PathId::new(3);

    fn counts(ect0: u64, ect1: u64, ce: u64) -> EcnCounts {
        EcnCounts { ect0, ect1, ce }
    }

    fn share(path: PathId, ect_acked: u64, largest_pn: u64) -> PathShare {
        PathShare {
            path,
            ect_acked,
            ect_required: ect_acked,
            largest_pn,
            queueing_us: 0,
        }
    }

    #[test]
    fn codepoint_bits_round_trip() {
        for cp in [EcnCodepoint::Ect0, EcnCodepoint::Ect1, EcnCodepoint::Ce] {
            assert_eq!(EcnCodepoint::from_bits(cp.bits()), Some(cp));
        }
        assert_eq!(EcnCodepoint::from_bits(0), None);
    }

    #[test]
    fn counts_matching_the_marked_packets_make_the_path_capable() {
        let mut base = EcnCounts::default();
        let out = process_ack_ecn(&mut base, Some(counts(3, 0, 0)), &[share(P0, 3, 7)]);
        assert_eq!(out.verdicts, [(P0, Verdict::Pass)]);
        assert!(out.ce.is_empty());
        assert!(out.used);
        assert_eq!(base, counts(3, 0, 0));
        let mut path = EcnPath::default();
        assert_eq!(path.state(), EcnState::Testing);
        assert!(path.is_marking());
        path.on_marked_acked(3);
        path.on_verdict(Verdict::Pass);
        assert_eq!(path.state(), EcnState::Capable);
        assert!(path.is_marking());
    }

    #[test]
    fn more_counts_than_packets_pass_lost_acks_leave_a_surplus() {
        let mut base = counts(2, 0, 0);
        let out = process_ack_ecn(&mut base, Some(counts(10, 0, 0)), &[share(P0, 3, 9)]);
        assert_eq!(out.verdicts, [(P0, Verdict::Pass)]);
    }

    #[test]
    fn bleached_marks_fail_validation_and_stop_marking() {
        let mut base = EcnCounts::default();
        let out = process_ack_ecn(&mut base, Some(counts(0, 0, 0)), &[share(P1, 4, 4)]);
        assert!(matches!(out.verdicts[..], [(P1, Verdict::Fail(_))]));
        let mut path = EcnPath::default();
        path.on_verdict(out.verdicts[0].1);
        assert_eq!(path.state(), EcnState::Failed);
        assert!(!path.is_marking());
        // A later good ACK does not revive it.
        path.on_verdict(Verdict::Pass);
        assert_eq!(path.state(), EcnState::Failed);
        assert!(path.stats().failure.is_some());
    }

    #[test]
    fn missing_counts_fail_only_when_marked_packets_were_acknowledged() {
        let mut base = EcnCounts::default();
        let out = process_ack_ecn(&mut base, None, &[share(P0, 2, 5)]);
        assert!(matches!(out.verdicts[..], [(P0, Verdict::Fail(_))]));
        let out = process_ack_ecn(&mut base, None, &[share(P0, 0, 5)]);
        assert!(out.verdicts.is_empty());
    }

    #[test]
    fn decreasing_counts_are_a_stale_ack_and_ect1_fails() {
        let mut base = counts(5, 0, 1);
        let out = process_ack_ecn(&mut base, Some(counts(4, 0, 1)), &[share(P0, 1, 9)]);
        assert_eq!(out, AckEcnOutcome::default());
        assert_eq!(base, counts(5, 0, 1), "the newer baseline is kept");
        let mut base = counts(5, 0, 1);
        let out = process_ack_ecn(&mut base, Some(counts(6, 1, 1)), &[share(P0, 1, 9)]);
        assert!(matches!(out.verdicts[..], [(P0, Verdict::Fail(_))]));
    }

    #[test]
    fn ce_increase_counts_as_marked_and_is_reported_for_the_path() {
        let mut base = counts(10, 0, 0);
        let out = process_ack_ecn(&mut base, Some(counts(11, 0, 2)), &[share(P3, 3, 20)]);
        assert_eq!(out.verdicts, [(P3, Verdict::Pass)]);
        assert_eq!(out.ce, [(P3, 2)]);
    }

    #[test]
    fn shared_space_ce_goes_to_the_path_of_the_largest_newly_acknowledged_packet() {
        let mut base = EcnCounts::default();
        let shares = [share(P0, 2, 10), share(P1, 2, 12)];
        let out = process_ack_ecn(&mut base, Some(counts(3, 0, 1)), &shares);
        assert_eq!(out.verdicts, [(P0, Verdict::Pass), (P1, Verdict::Pass)]);
        assert_eq!(out.ce, [(P1, 1)]);
        let out = process_ack_ecn(&mut base, Some(counts(4, 0, 2)), &shares[..1]);
        assert_eq!(out.ce, [(P0, 1)]);
    }

    #[test]
    fn shared_space_ce_goes_to_the_path_whose_queue_builds() {
        let mut base = EcnCounts::default();
        let slow = PathShare {
            queueing_us: 9_000,
            ..share(P1, 2, 10)
        };
        let fast = PathShare {
            queueing_us: 500,
            ..share(P0, 2, 12)
        };
        let out = process_ack_ecn(&mut base, Some(counts(3, 0, 1)), &[fast, slow]);
        assert_eq!(out.ce, [(P1, 1)]);
    }

    #[test]
    fn shared_space_shortfall_blames_a_single_path_only() {
        // Path 1 bleaches: ACKs covering only path 0 pass, ACKs covering only path 1 fail it,
        // ACKs covering both are ambiguous and decide nothing.
        let mut base = EcnCounts::default();
        let out = process_ack_ecn(&mut base, Some(counts(2, 0, 0)), &[share(P0, 2, 2)]);
        assert_eq!(out.verdicts, [(P0, Verdict::Pass)]);
        let both = [share(P0, 2, 6), share(P1, 2, 5)];
        let out = process_ack_ecn(&mut base, Some(counts(4, 0, 0)), &both);
        assert!(out.verdicts.is_empty(), "either path could be short by 2");
        // Short by 3 with 3 and 1 required: only path 1 can explain it.
        let both = [share(P0, 1, 10), share(P1, 3, 9)];
        let out = process_ack_ecn(&mut base, Some(counts(5, 0, 0)), &both);
        assert!(matches!(out.verdicts[..], [(P1, Verdict::Fail(_))]));
        let out = process_ack_ecn(&mut base, Some(counts(5, 0, 0)), &[share(P1, 2, 11)]);
        assert!(matches!(out.verdicts[..], [(P1, Verdict::Fail(_))]));
    }

    #[test]
    fn packets_an_earlier_ack_may_have_counted_are_not_required() {
        // Shared space: path 1's two packets may have been counted by the previous ACK.
        let mut base = counts(4, 0, 0);
        let exempt = PathShare {
            ect_required: 0,
            ..share(P1, 2, 12)
        };
        let out = process_ack_ecn(&mut base, Some(counts(4, 0, 0)), &[exempt]);
        assert_eq!(out.verdicts, [(P1, Verdict::Pass)]);
    }

    #[test]
    fn all_marked_packets_lost_while_testing_fails() {
        let mut path = EcnPath::default();
        path.on_marked_lost(TESTING_LOST_LIMIT - 1);
        assert_eq!(path.state(), EcnState::Testing);
        path.on_marked_lost(1);
        assert_eq!(path.state(), EcnState::Failed);
        // Losses after validation succeeded are congestion, not a verdict.
        let mut capable = EcnPath::default();
        capable.on_verdict(Verdict::Pass);
        capable.on_marked_lost(100);
        assert_eq!(capable.state(), EcnState::Capable);
    }

    #[test]
    fn received_codepoints_are_counted() {
        let mut c = EcnCounts::default();
        for cp in [
            Some(EcnCodepoint::Ect0),
            Some(EcnCodepoint::Ect0),
            Some(EcnCodepoint::Ce),
            Some(EcnCodepoint::Ect1),
            None,
        ] {
            count_received(&mut c, cp);
        }
        assert_eq!(c, counts(2, 1, 1));
    }
}
