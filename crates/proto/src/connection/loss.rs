//! Loss handling: declaring packets lost per path, re-queueing what they carried, congestion
//! events, and moving a failed path's data to the other paths (handover).

use super::Connection;
use crate::cc::{CouplingState, LossEvent};
use crate::crypto::Epoch;
use crate::path::{epoch_index, PathId};
use crate::recovery::ledger::is_persistent_congestion;
use crate::recovery::{LossCause, LossReference, LostPackets};
use crate::sent_frames::{PathFrame, SentFrames};
use crate::space::SpaceId;
use crate::time::{Duration, Timestamp};

impl Connection {
    /// RFC 9002 §6.1 on one path's ledger at one level.
    pub(crate) fn detect_losses(&mut self, now: Timestamp, path_id: PathId, epoch: Epoch) {
        let space = match epoch {
            Epoch::Initial => SpaceId::Initial,
            Epoch::Handshake => SpaceId::Handshake,
            Epoch::Data => self.layout.space_for(path_id),
        };
        let reference = self.loss_reference(space);
        let Some(path) = self.paths.get_mut(&path_id) else {
            return;
        };
        let lost = path.ledgers[epoch_index(epoch)].detect_lost(
            now,
            &path.rtt,
            reference,
            &path.loss_thresholds,
        );
        self.on_packets_lost(now, path_id, epoch, lost, true);
    }

    /// What loss detection in `space` measures distances in, under the configured rules
    /// (report §2.1).
    pub(crate) fn loss_reference(&self, space: SpaceId) -> LossReference {
        let largest = self.send_spaces.get(&space).and_then(|s| s.largest_acked());
        let grace = if matches!(space, SpaceId::Data(_)) {
            self.peer_max_ack_delay()
        } else {
            Duration::ZERO
        };
        LossReference::for_rules(self.layout.report_rules(), largest, grace)
    }

    /// Packets of `path_id` are lost: requeue their frames and, if `congestion`, tell the
    /// path's controller (RFC 9002 §7.3.2).
    pub(crate) fn on_packets_lost(
        &mut self,
        now: Timestamp,
        path_id: PathId,
        epoch: Epoch,
        lost: LostPackets,
        congestion: bool,
    ) {
        let LostPackets { packets, causes } = lost;
        if packets.is_empty() {
            return;
        }
        let mut lost_bytes = 0;
        let mut largest_lost_sent = Timestamp::ZERO;
        // RFC 9221 §5.2: a lost DATAGRAM frame is not retransmitted, only counted.
        let lost_datagrams = packets.iter().map(|p| p.frames.datagrams).sum();
        self.on_datagrams_lost(path_id, lost_datagrams);
        let by_time = causes
            .iter()
            .filter(|c| **c == LossCause::TimeThreshold)
            .count() as u64;
        for (p, cause) in packets.iter().zip(causes) {
            self.qlog_packet_lost(now, path_id, p.space, p.pn, Some(cause));
            if p.in_flight {
                self.send_space(p.space).on_lost(p.pn, now, cause);
            } else {
                // An ACK-only packet (RFC 9002 §A.5): nothing to resend, and a late ACK of it
                // must not count as a spurious loss undoing a congestion event it never caused.
                self.send_space(p.space).forget(p.pn);
            }
            self.requeue_frames(epoch, &p.frames);
            // RFC 9000 §14.4: a lost path MTU probe is no congestion signal.
            // Nor is the loss of a packet that went by a route the path has left.
            if p.in_flight && !p.frames.mtu_probe && !p.old_route {
                lost_bytes += p.size;
                largest_lost_sent = largest_lost_sent.max(p.time_sent);
            }
        }
        self.stats.packets_lost += packets.len() as u64;
        self.mtu_on_lost(now, path_id, &packets);
        self.on_marked_lost(path_id, &packets);
        let max_ack_delay = self.peer_max_ack_delay();
        let (states, own) = self.coupling_for(path_id);
        let Some(path) = self.paths.get_mut(&path_id) else {
            return;
        };
        path.counters.packets_lost += packets.len() as u64;
        path.counters.time_threshold_losses += by_time;
        path.counters.bytes_lost += lost_bytes;
        path.delivery.on_packets_lost(lost_bytes);
        if !congestion || lost_bytes == 0 {
            return;
        }
        let persistent = if packets.iter().any(|p| p.frames.mtu_probe) {
            let data: Vec<_> = packets
                .iter()
                .filter(|p| !p.frames.mtu_probe)
                .cloned()
                .collect();
            is_persistent_congestion(&data, &path.rtt, max_ack_delay)
        } else {
            is_persistent_congestion(&packets, &path.rtt, max_ack_delay)
        };
        let event = LossEvent {
            now,
            lost_bytes,
            largest_lost_sent_time: largest_lost_sent,
            persistent_congestion: persistent,
            ecn_ce: false,
            bytes_in_flight: path.bytes_in_flight(),
            rtt: &path.rtt,
        };
        path.cc.on_congestion_event(
            &event,
            crate::cc::Coupling {
                paths: &states,
                own,
            },
        );
        // RFC 9438 §4.9: remember which losses the controller's reduction answered.
        let reductions = path.cc.stats().congestion_events;
        let lost_pns = packets
            .iter()
            .filter(|p| p.in_flight && !p.frames.mtu_probe && !p.old_route)
            .map(|p| p.pn);
        path.loss_episode.on_congestion_event(lost_pns, reductions);
    }

    /// RFC 9000 §13.3: resend information, not packets.
    pub(crate) fn requeue_frames(&mut self, epoch: Epoch, frames: &SentFrames) {
        if let Some(stream) = self.crypto[epoch.index()].as_mut() {
            for range in &frames.crypto {
                stream.send.on_lost(range.start, range.end - range.start);
            }
        }
        self.streams.on_frames_lost(&frames.streams);
        // Only the server sends HANDSHAKE_DONE; a lost one is sent again (RFC 9000 §13.3).
        if frames.handshake_done {
            self.handshake.queue_handshake_done();
        }
        if frames.new_token {
            self.handshake.requeue_new_token();
        }
        // draft-ietf-quic-ack-frequency: resend a lost request unless a newer one went out.
        if let Some(sequence) = frames.ack_frequency {
            self.ack_frequency.on_lost(sequence);
        }
        for frame in &frames.path_frames {
            match *frame {
                PathFrame::NewCid { path, sequence } => {
                    if let Some(pool) = self.local_cids.get_mut(&path) {
                        pool.requeue(sequence);
                    }
                }
                PathFrame::RetireCid { path, sequence } => {
                    if let Some(pool) = self.remote_cids.get_mut(&path) {
                        pool.requeue_retire(sequence);
                    }
                }
                PathFrame::Status(path) => {
                    if let Some(p) = self.paths.get_mut(&path) {
                        p.requeue_status();
                    }
                }
                PathFrame::Abandon(path) => {
                    if let Some(p) = self.paths.get_mut(&path) {
                        p.requeue_abandon(mpquic_wire::error::path_error::APPLICATION_ABANDON_PATH);
                    }
                }
                PathFrame::MaxPathId => self.path_ids.queue_grant(),
            }
        }
    }

    /// Handover (issue 4): a path that stopped delivering gives all its in-flight data to the
    /// other paths; its packets are dropped from its ledger without a congestion signal to the
    /// other paths' controllers.
    pub(crate) fn fail_path(&mut self, now: Timestamp, path_id: PathId) {
        let Some(path) = self.paths.get_mut(&path_id) else {
            return;
        };
        let first_failure = path.mark_failed();
        // Probes keep the path's liveness check going; anything still outstanding moves.
        let packets = path.ledger(Epoch::Data).drain();
        // A probe that went with the path's packets is lost for the MTU search too (only probes
        // are reported: these losses are no black-hole evidence).
        for p in packets.iter().filter(|p| p.frames.mtu_probe) {
            path.mtu
                .on_probe_lost(now, u16::try_from(p.size).unwrap_or(u16::MAX));
        }
        let lost_datagrams = packets.iter().map(|p| p.frames.datagrams).sum();
        self.on_datagrams_lost(path_id, lost_datagrams);
        for p in &packets {
            self.send_space(p.space)
                .on_lost(p.pn, now, LossCause::PathGone);
            self.qlog_packet_lost(now, path_id, p.space, p.pn, None);
            self.requeue_frames(Epoch::Data, &p.frames);
        }
        if first_failure {
            self.stats.handovers += 1;
            self.push_path_event(super::PathEvent::Failed { id: path_id });
        }
    }

    /// The coupling state of every path (in path-ID order) and the index of `path_id`'s own,
    /// for coupled congestion controllers.
    pub(crate) fn coupling_for(&self, path_id: PathId) -> (Vec<CouplingState>, usize) {
        let mut states = Vec::new();
        let own = self.coupling_into(path_id, &mut states);
        (states, own)
    }

    /// [`Self::coupling_for`] into a reused buffer (cleared first); returns `own`.
    pub(crate) fn coupling_into(&self, path_id: PathId, states: &mut Vec<CouplingState>) -> usize {
        states.clear();
        states.extend(self.paths.values().map(|p| {
            let mut state = p.cc.coupling_state();
            state.srtt = p.rtt.smoothed();
            state.active = p.is_usable() && !p.is_backup();
            state
        }));
        self.paths.keys().position(|&id| id == path_id).unwrap_or(0)
    }

    /// The largest PTO among active paths without exponential backoff (idle timeout floor).
    pub(crate) fn largest_base_pto(&self) -> Duration {
        Duration::from_nanos(self.largest_base_pto_nanos())
    }

    /// [`Self::largest_base_pto`] in nanoseconds (saturating).
    pub(crate) fn largest_base_pto_nanos(&self) -> u64 {
        let max_ack_delay = crate::time::duration_nanos(self.peer_max_ack_delay());
        self.paths
            .values()
            .filter(|p| p.is_active())
            .map(|p| p.rtt.pto_base_nanos().saturating_add(max_ack_delay))
            .max()
            .unwrap_or(1_000_000_000)
    }

    /// The PTO whose triple an old 1-RTT read key is kept after a key update (RFC 9001 §6.5):
    /// the largest among our paths, and with multipath at least the PTO of a path without an
    /// RTT sample (RFC 9002 §6.2.2, from the initial RTT), since the peer may be opening a path
    /// we have not received on yet, with packets in flight under the old keys (RFC 10069
    /// §"Key Phase Update Process": the largest PTO among all the paths).
    pub(crate) fn key_retention_pto(&self) -> Duration {
        let known = self.largest_base_pto();
        if !self.layout.is_multipath() {
            return known;
        }
        let unsampled = crate::recovery::rtt::RttEstimator::new(self.config.initial_rtt).pto_base()
            + self.peer_max_ack_delay();
        known.max(unsampled)
    }

    /// The largest PTO among active paths (RFC 10069 §"Connection Closure" and key update).
    pub(crate) fn largest_pto(&self) -> Duration {
        let max_ack_delay = self.peer_max_ack_delay();
        self.paths
            .values()
            .filter(|p| p.is_active())
            .map(|p| p.pto(max_ack_delay, true))
            .max()
            .unwrap_or(Duration::from_secs(1))
    }
}
