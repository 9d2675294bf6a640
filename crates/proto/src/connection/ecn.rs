//! ECN on a connection (RFC 9000 §13.4, RFC 9002 §7.1): marking outgoing datagrams, counting
//! received codepoints per packet number space, validating the peer's counts per path and
//! reacting to CE. The rules live in [`crate::ecn`]; this is the glue to paths and spaces.

use mpquic_wire::frame::EcnCounts;

use super::Connection;
use crate::cc::{Coupling, LossEvent};
use crate::ecn::{process_ack_ecn, EcnCodepoint, PathShare};
use crate::path::PathId;
use crate::recovery::{AckedOutcome, SentPacket};
use crate::space::SpaceId;
use crate::time::Timestamp;

impl Connection {
    /// Codepoint of the datagram about to leave on `path`: ECT(0) while the path's validation
    /// is testing or capable (RFC 9000 §13.4.2). The packets it holds were recorded with the
    /// same decision (validation only changes while ACKs and losses are processed).
    pub(crate) fn ecn_codepoint(&self, path: PathId) -> Option<EcnCodepoint> {
        let marking = self.config.ecn && self.paths.get(&path)?.ecn.is_marking();
        marking.then_some(EcnCodepoint::Ect0)
    }

    /// RFC 9000 §13.4.1: count the codepoint of the datagram that carried a packet of
    /// `space`, in the space's counts (one per path in MPNS, the shared one in SPNS).
    pub(crate) fn count_received_ecn(&mut self, space: SpaceId, path: PathId) {
        let codepoint = self.rx_ecn;
        if codepoint.is_none() {
            return;
        }
        crate::ecn::count_received(&mut self.record(space).ecn, codepoint);
        if let Some(p) = self.paths.get_mut(&path) {
            p.ecn.on_received(codepoint);
        }
    }

    /// RFC 9000 §13.4.2.1 and RFC 9002 §B.6 ProcessECN for an ACK frame of an application
    /// space; `new_largest` when it raised the space's largest acknowledged packet (only those
    /// are used). `outcomes` are the newly acknowledged packets per path.
    pub(crate) fn on_ack_ecn(
        &mut self,
        now: Timestamp,
        space: SpaceId,
        new_largest: bool,
        reported: Option<EcnCounts>,
        outcomes: &[(PathId, AckedOutcome)],
    ) {
        if !new_largest || !matches!(space, SpaceId::Data(_)) {
            return;
        }
        let shares: Vec<PathShare> = outcomes
            .iter()
            .filter_map(|(path, o)| {
                Some(PathShare {
                    path: *path,
                    ect_acked: o.packets.iter().filter(|p| p.ecn).count() as u64,
                    largest_pn: o.packets.iter().map(|p| p.pn).max()?,
                })
            })
            .collect();
        let baseline = &mut self.send_space(space).ecn_baseline;
        let outcome = process_ack_ecn(baseline, reported, &shares);
        for (path, verdict) in outcome.verdicts {
            let acked = shares.iter().find(|s| s.path == path).map_or(0, |s| s.ect_acked);
            if let Some(p) = self.paths.get_mut(&path) {
                p.ecn.on_verdict(verdict, acked);
            }
        }
        if let Some((path, n)) = outcome.ce {
            // §B.6: the congestion event takes the send time of the largest acknowledged
            // packet (here: the path's largest newly acknowledged one).
            let sent = outcomes
                .iter()
                .filter(|(p, _)| *p == path)
                .flat_map(|(_, o)| &o.packets)
                .max_by_key(|p| p.pn)
                .map(|p| p.time_sent);
            if let Some(sent) = sent {
                self.on_ecn_ce(now, path, n, sent);
            }
        }
    }

    /// RFC 9002 §7.1: an increase in the CE count is a congestion event (at most one per
    /// recovery period, RFC 9002 §7.3.2, which the controller enforces), not a loss: nothing
    /// is retransmitted and no loss is counted.
    fn on_ecn_ce(&mut self, now: Timestamp, path_id: PathId, n: u64, sent: Timestamp) {
        let (states, own) = self.coupling_for(path_id);
        let Some(path) = self.paths.get_mut(&path_id) else {
            return;
        };
        let before = path.cc.stats().congestion_events;
        let event = LossEvent {
            now,
            lost_bytes: 0,
            largest_lost_sent_time: sent,
            persistent_congestion: false,
            bytes_in_flight: path.bytes_in_flight(),
            rtt: &path.rtt,
            ecn_ce: true,
        };
        path.cc.on_congestion_event(
            &event,
            Coupling {
                paths: &states,
                own,
            },
        );
        let after = path.cc.stats().congestion_events;
        path.loss_episode.on_ecn_congestion(after);
        path.ecn.on_ce(n, after > before);
    }

    /// Marked 1-RTT packets of `path` were declared lost (ECN validation, RFC 9000 §13.4.2.2).
    pub(crate) fn on_marked_lost(&mut self, path: PathId, packets: &[SentPacket]) {
        let n = packets
            .iter()
            .filter(|p| p.ecn && matches!(p.space, SpaceId::Data(_)))
            .count() as u64;
        if let Some(p) = self.paths.get_mut(&path).filter(|_| n > 0) {
            p.ecn.on_marked_lost(n);
        }
    }
}
