//! ECN on a connection (RFC 9000 §13.4, RFC 9002 §7.1): marking outgoing datagrams, counting
//! received codepoints per packet number space, validating the peer's counts per path and
//! reacting to CE. The rules live in [`crate::ecn`]; this is the glue to paths and spaces.

use mpquic_wire::frame::AckFrame;

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
    /// `space`, in that space's counts (a path's own space, or one shared by paths).
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
    /// space that raised its largest acknowledged packet (only those are used, §13.4.2.1).
    /// `outcomes` are the newly acknowledged packets per path.
    pub(crate) fn on_ack_ecn(
        &mut self,
        now: Timestamp,
        space: SpaceId,
        ack: &AckFrame,
        outcomes: &[(PathId, AckedOutcome)],
    ) {
        if !matches!(space, SpaceId::Data(_)) {
            return;
        }
        let Some(send_space) = self.send_spaces.get_mut(&space) else {
            return;
        };
        // The counts of the previous frame used covered every packet received before it was
        // sent. Between its lowest reported packet and its Largest Acknowledged, a packet it
        // did not acknowledge arrived after it, and so did a packet above it sent on the
        // largest's path (paths deliver in order). A packet below its ranges (range limit)
        // or above it on another path (a shared space whose ACKs carry their own path's
        // largest packet, report §2.2) may have been counted already: it need not raise the
        // counts again. With one path per space and few ranges, nothing is exempt.
        let prior = send_space.ecn_span;
        // (An untracked largest, an ACK-only packet, has no known path: nothing above it is
        // required.)
        let required = |p: &SentPacket, path: PathId| match prior {
            Some((low, largest, on)) => {
                p.ecn && p.pn >= low && (p.pn <= largest || on == Some(path))
            }
            None => p.ecn,
        };
        let low = ack.ranges.last().map_or(ack.largest, |r| *r.start());
        let on = send_space.acked_info(ack.largest).map(|(path, _, _)| path);
        let paths = &self.paths;
        let queueing = |id: &PathId| {
            paths.get(id).map_or(0, |p| {
                let q = p.rtt.latest().saturating_sub(p.rtt.min());
                u64::try_from(q.as_micros()).unwrap_or(u64::MAX)
            })
        };
        let shares: Vec<PathShare> = outcomes
            .iter()
            .filter_map(|(path, o)| {
                Some(PathShare {
                    queueing_us: queueing(path),
                    path: *path,
                    ect_acked: o.packets.iter().filter(|p| p.ecn).count() as u64,
                    ect_required: o.packets.iter().filter(|p| required(p, *path)).count() as u64,
                    largest_pn: o.packets.iter().map(|p| p.pn).max()?,
                })
            })
            .collect();
        let reported = ack.ecn;
        let outcome = process_ack_ecn(&mut send_space.ecn_baseline, reported, &shares);
        if outcome.used {
            // The span goes with the counts: a stale frame's does not replace it.
            send_space.ecn_span = Some((low, ack.largest, on));
        }
        for s in &shares {
            if let Some(p) = self.paths.get_mut(&s.path) {
                p.ecn.on_marked_acked(s.ect_acked);
            }
        }
        for (path, verdict) in outcome.verdicts {
            if let Some(p) = self.paths.get_mut(&path) {
                p.ecn.on_verdict(verdict);
            }
        }
        for (path, n) in outcome.ce {
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
