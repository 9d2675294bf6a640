//! Which path an ACK frame gives an RTT sample to (RFC 9002 §5.1; Alibaba report §2.2).
//!
//! With the report's rule ([`SpnsRules::per_path_rtt_samples`]) a path samples only its own
//! round trips: an ACK received on path P whose Largest Acknowledged was sent on P. The
//! sample then measures P's downlink, the peer's ACK delay and P's uplink, never another
//! path's, so P's minimum RTT cannot fall below P's propagation RTT. A path whose own ACKs
//! never came back (a peer that returns every acknowledgement on one path, as RFC 10069 §5.4
//! allows; noq does this) samples the packets other paths' ACKs acknowledge, until its first
//! own sample restarts its estimator.
//!
//! Rule off (naive SPNS): the ACK frame's newly acknowledged Largest Acknowledged gives the
//! *receiving* path a sample, whichever path sent that packet.

use crate::path::PathId;
use crate::spns_rules::SpnsRules;
use crate::time::Timestamp;

/// The Largest Acknowledged packet of a received ACK frame, as the sender remembers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LargestAcked {
    pub pn: u64,
    /// The path it was sent on, and when.
    pub sent_on: PathId,
    pub sent: Timestamp,
    pub ack_eliciting: bool,
    /// Acknowledged for the first time by this frame.
    pub newly_acked: bool,
}

/// One path's share of the packets an ACK frame newly acknowledged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PathAcked {
    pub path: PathId,
    /// Send time of the path's newest packet this frame acknowledged, if an ack-eliciting
    /// packet of the path is among the newly acknowledged ones.
    pub newest_sent: Option<Timestamp>,
    /// The path never received an acknowledgement of its own packets on itself.
    pub no_own_acks_yet: bool,
}

/// The kind of a planned sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SampleKind {
    /// A round trip on the path itself (report §2.2); `pn` moves forward only.
    Own { pn: u64 },
    /// From another path's ACK, for a path without own ACKs (RFC 10069 §5.4).
    Borrowed,
    /// The naive rule: the receiving path takes the frame's Largest Acknowledged.
    Naive,
}

/// An RTT sample to feed: `now - sent` goes to `path`'s estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PlannedSample {
    pub path: PathId,
    pub sent: Timestamp,
    pub kind: SampleKind,
}

/// [`plan_samples_into`] into a new vector.
#[cfg(test)]
pub(crate) fn plan_samples(
    rules: &SpnsRules,
    recv_path: PathId,
    largest: Option<LargestAcked>,
    any_newly_eliciting: bool,
    paths: &[PathAcked],
) -> Vec<PlannedSample> {
    let mut out = Vec::new();
    plan_samples_into(
        rules,
        (recv_path, largest, any_newly_eliciting),
        paths,
        &mut out,
    );
    out
}

/// Appends to `out` the samples one ACK frame received on `recv_path` gives. `largest` is the
/// frame's Largest Acknowledged (None if the sender no longer remembers it),
/// `any_newly_eliciting` whether an ack-eliciting packet is among the newly acknowledged ones,
/// `paths` each path's share. (An output buffer: the connection reuses one for every frame.)
pub(crate) fn plan_samples_into(
    rules: &SpnsRules,
    (recv_path, largest, any_newly_eliciting): (PathId, Option<LargestAcked>, bool),
    paths: &[PathAcked],
    out: &mut Vec<PlannedSample>,
) {
    if !rules.per_path_rtt_samples {
        // RFC 9002 §5.1 applied to the frame, credited to the path it arrived on.
        if let Some(l) = largest.filter(|l| l.newly_acked && any_newly_eliciting) {
            out.push(PlannedSample {
                path: recv_path,
                sent: l.sent,
                kind: SampleKind::Naive,
            });
        }
        return;
    }
    // Report §2.2: the Largest Acknowledged may have been acknowledged first by another
    // path's ACK (one shared space): the receiving path still samples it when it was sent on
    // that path, since this is the path's own round trip.
    if let Some(l) = largest.filter(|l| l.sent_on == recv_path && l.ack_eliciting) {
        out.push(PlannedSample {
            path: recv_path,
            sent: l.sent,
            kind: SampleKind::Own { pn: l.pn },
        });
    }
    for p in paths {
        if p.path == recv_path || !p.no_own_acks_yet {
            continue;
        }
        if let Some(sent) = p.newest_sent {
            out.push(PlannedSample {
                path: p.path,
                sent,
                kind: SampleKind::Borrowed,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_nanos(ms * 1_000_000)
    }

    /// An ACK received on the fast path 0 whose Largest Acknowledged went on path 0, and which
    /// also acknowledges packets of the slow path 1.
    fn largest_on(path: u32) -> Option<LargestAcked> {
        Some(LargestAcked {
            pn: 100,
            sent_on: PathId::new(path),
            sent: at(50),
            ack_eliciting: true,
            newly_acked: true,
        })
    }

    fn slow_path(no_own_acks_yet: bool) -> PathAcked {
        PathAcked {
            path: PathId::new(1),
            newest_sent: Some(at(10)),
            no_own_acks_yet,
        }
    }

    #[test]
    fn report_rule_samples_own_round_trips_only() {
        let rules = SpnsRules::report();
        let own = plan_samples(
            &rules,
            PathId::new(0),
            largest_on(0),
            true,
            &[slow_path(false)],
        );
        assert_eq!(
            own,
            vec![PlannedSample {
                path: PathId::new(0),
                sent: at(50),
                kind: SampleKind::Own { pn: 100 }
            }],
            "path 1 already has its own ACKs: no sample from path 0's ACK"
        );
        // The frame arrived on path 1 but its largest went on path 0: nobody samples it.
        assert!(plan_samples(&rules, PathId::new(1), largest_on(0), true, &[]).is_empty());
        // A path that never had its own ACK borrows (RFC 10069 §5.4).
        let borrowed = plan_samples(
            &rules,
            PathId::new(0),
            largest_on(0),
            true,
            &[slow_path(true)],
        );
        assert_eq!(borrowed[1].path, PathId::new(1));
        assert_eq!(borrowed[1].kind, SampleKind::Borrowed);
    }

    #[test]
    fn naive_rule_credits_the_receiving_path() {
        let rules = SpnsRules::naive();
        // The ACK came on path 1 and its largest went on path 0: path 1 gets path 0's time.
        let s = plan_samples(
            &rules,
            PathId::new(1),
            largest_on(0),
            true,
            &[slow_path(false)],
        );
        assert_eq!(
            s,
            vec![PlannedSample {
                path: PathId::new(1),
                sent: at(50),
                kind: SampleKind::Naive
            }]
        );
        // RFC 9002 §5.1: only a newly acknowledged largest, and only with an eliciting packet.
        let mut old = largest_on(0);
        if let Some(l) = old.as_mut() {
            l.newly_acked = false;
        }
        assert!(plan_samples(&rules, PathId::new(1), old, true, &[]).is_empty());
        assert!(plan_samples(&rules, PathId::new(1), largest_on(0), false, &[]).is_empty());
    }
}
