//! Processing received ACK / PATH_ACK frames: which packets are acknowledged, RTT samples per
//! path, congestion-controller feedback, and loss detection (RFC 9002 §5–7; Alibaba report §2.1).

use mpquic_wire::error::TransportErrorCode;
use mpquic_wire::frame::AckFrame;

use super::Connection;
use crate::cc::{AckEvent, Coupling};
use crate::crypto::Epoch;
use crate::error::TransportError;
use crate::path::{epoch_index, PathId};
use crate::recovery::sampling::{plan_samples_into, LargestAcked, PathAcked, SampleKind};
use crate::recovery::{AckedOutcome, LossCause, SentPacket};
use crate::space::{SpaceId, SpuriousLoss};
use crate::time::{Duration, Timestamp};

/// Packet numbers of an ACK frame searched for a path's newest reported packet (loss
/// evidence, [`Ledger::on_ack_frame`](crate::recovery::Ledger::on_ack_frame)); a path with no
/// packet among the frame's newest ones gets its evidence from other frames.
const EVIDENCE_SEARCH: usize = 512;

/// Largest packet list (in packets) kept for reuse by the next ACK frame.
const SPARE_PACKETS_CAPACITY: usize = 16;

impl Connection {
    /// RFC 9002 §A.7 OnAckReceived, split per path.
    pub(crate) fn on_ack_frame(
        &mut self,
        now: Timestamp,
        epoch: Epoch,
        recv_path: PathId,
        ack: AckFrame,
    ) -> Result<(), TransportError> {
        let ty = if ack.path_id.is_some() {
            mpquic_wire::frame::ty::PATH_ACK
        } else {
            mpquic_wire::frame::ty::ACK
        };
        let space = match epoch {
            Epoch::Initial => SpaceId::Initial,
            Epoch::Handshake => SpaceId::Handshake,
            Epoch::Data => match self.layout.space_of_ack(ack.path_id) {
                Some(space) => space,
                None => {
                    return Err(TransportError::for_frame(
                        TransportErrorCode::PROTOCOL_VIOLATION,
                        ty,
                        "ACK for an unknown space",
                    ))
                }
            },
        };
        if let SpaceId::Data(p) = space {
            // RFC 10069 §7: PATH_ACK for a path we no longer (or never) keep is ignored.
            if !self.paths.contains_key(&p) {
                return Ok(());
            }
        }
        let mut scratch = self.ack_scratch.take().unwrap_or_default();
        let send_space = self.send_space(space);
        if send_space.never_sent(ack.largest) {
            // RFC 9000 §13.1: acknowledging an unsent packet is a PROTOCOL_VIOLATION.
            return Err(TransportError::for_frame(
                TransportErrorCode::PROTOCOL_VIOLATION,
                ty,
                "ACK of a packet never sent",
            ));
        }
        let acked = &mut scratch.acked;
        for range in &ack.ranges {
            send_space.take_acked(range.clone(), acked);
        }
        send_space.take_spuriously_lost(&ack.ranges, &mut scratch.spurious);
        let prior_largest = send_space.largest_acked();
        send_space.on_largest_acked(ack.largest);
        self.on_spurious_losses(now, epoch, scratch.spurious.drain(..));
        let ack_delay = self.decode_ack_delay(epoch, ack.ack_delay);
        // Grouped by path (one ledger each), in path order; within a path in ACK order (stable).
        acked.sort_by_key(|&(_, path, _)| path);
        // RFC 9002 §A.7 order: remove acknowledged packets, update RTTs, then detect losses and
        // inform the controllers.
        let outcomes = &mut scratch.outcomes;
        let seqs = &mut scratch.seqs;
        for group in acked.chunk_by(|a, b| a.1 == b.1) {
            let path = group[0].1;
            seqs.clear();
            seqs.extend(group.iter().map(|&(_, _, seq)| seq));
            let packets = scratch.spare_packets.pop().unwrap_or_default();
            match self.remove_acked(now, epoch, space, path, seqs, packets) {
                Ok(outcome) => outcomes.push((path, outcome)),
                Err(packets) => scratch.spare_packets.push(packets),
            }
        }
        acked.clear();
        seqs.clear();
        let sampled = &mut scratch.sampled;
        sampled.clear();
        self.sample_rtts(
            now,
            space,
            recv_path,
            (ack.largest, ack_delay),
            outcomes,
            (&mut scratch.shares, &mut scratch.planned, sampled),
        );
        // RFC 9002 §B.6: ECN counts after the RTT update, before losses and the controller.
        if prior_largest.is_none_or(|p| ack.largest > p) {
            self.on_ack_ecn(now, space, &ack, outcomes);
        }
        let acked_paths = &mut scratch.acked_paths;
        acked_paths.clear();
        acked_paths.extend(outcomes.iter().map(|(p, _)| *p));
        self.report_samples_without_acks(now, sampled, outcomes);
        let unacked_paths = &mut scratch.unacked_paths;
        self.note_missing(epoch, space, &ack, acked_paths, unacked_paths);
        for (path, mut outcome) in outcomes.drain(..) {
            self.mtu_on_acked(now, path, &outcome.packets);
            for packet in &outcome.packets {
                self.on_frames_acked(now, epoch, packet);
            }
            self.detect_losses(now, path, epoch);
            let rtt_sampled = sampled.contains(&path);
            self.report_acked(now, path, &outcome, rtt_sampled, &mut scratch.coupling);
            // The packets' frames are dropped here; the list's allocation serves the next ACK
            // (unless an unusually large ACK grew it: an idle connection should not keep it).
            outcome.packets.clear();
            if outcome.packets.capacity() <= SPARE_PACKETS_CAPACITY {
                scratch.spare_packets.push(outcome.packets);
            }
        }
        for &path in unacked_paths.iter() {
            self.detect_losses(now, path, epoch);
        }
        unacked_paths.clear();
        // Nothing outstanding: no ACK scratch is kept (about 1.5 kB); the next flight's first
        // ACK allocates the buffers again.
        self.ack_scratch = (!self.nothing_outstanding()).then_some(scratch);
        Ok(())
    }

    /// Packets declared lost were acknowledged after all (spurious losses).
    fn on_spurious_losses(
        &mut self,
        now: Timestamp,
        epoch: Epoch,
        spurious: impl Iterator<Item = SpuriousLoss>,
    ) {
        let max_threshold = self.config.max_packet_threshold;
        let max_time_eighths = self.config.max_time_threshold_eighths();
        for SpuriousLoss {
            pn,
            path,
            cause,
            seq,
        } in spurious
        {
            let mut raised = false;
            if let Some(p) = self.paths.get_mut(&path) {
                p.counters.spurious_losses += 1;
                let thresholds = &mut p.loss_thresholds;
                raised = match cause {
                    LossCause::TimeThreshold => {
                        p.counters.time_threshold_spurious += 1;
                        // RFC 9002 §6.1.2: the time threshold may adapt too.
                        thresholds
                            .time
                            .on_spurious_loss(now, p.rtt.smoothed(), max_time_eighths)
                    }
                    // RFC 9002 §6.1.1: reordering beyond the threshold may raise it.
                    LossCause::PacketThreshold => {
                        let displacement = p.ledgers[epoch_index(epoch)].displacement(seq);
                        thresholds
                            .packet
                            .on_spurious_loss(displacement, max_threshold)
                    }
                    LossCause::PathGone => false,
                };
                // RFC 9438 §4.9: undo only once every loss behind the reduction was spurious.
                if p.loss_episode.on_spurious(pn) {
                    p.counters.congestion_undos += 1;
                    p.cc.on_spurious_congestion_event();
                }
            }
            if raised {
                self.qlog_loss_thresholds(now, path);
                if let Some(request) = self.config.ack.request_ack_frequency {
                    let reordering = self.reordering_to_request(request.reordering_threshold);
                    self.ack_frequency.on_reordering_threshold(reordering);
                }
            }
            self.stats.spurious_losses += 1;
        }
    }

    /// Every path of the frame's space learns which of its packets the frame showed missing
    /// (report §2.1, [`Ledger::on_ack_frame`](crate::recovery::Ledger::on_ack_frame)); with one
    /// detector over the shared space (§2.1 off) the space's largest acknowledged packet moved
    /// for every path of the space. Appends to `unacked_paths` the paths without packets in
    /// this frame (`acked_paths` had some) that may now have losses to declare.
    fn note_missing(
        &mut self,
        epoch: Epoch,
        space: SpaceId,
        ack: &AckFrame,
        acked_paths: &[PathId],
        unacked_paths: &mut Vec<PathId>,
    ) {
        let space_wide = self.loss_reference(space).is_space_wide();
        let layout = &self.layout;
        let low = ack.ranges.last().map_or(ack.largest, |r| *r.start());
        let history = self.send_spaces.get(&space);
        for (id, p) in self.paths.iter_mut() {
            if epoch == Epoch::Data && layout.space_for(*id) != space {
                continue;
            }
            let later =
                history.and_then(|h| h.largest_reported_on(&ack.ranges, *id, EVIDENCE_SEARCH));
            let evidence = p.ledger(epoch).on_ack_frame(low, later);
            if (evidence || space_wide) && !acked_paths.contains(id) {
                unacked_paths.push(*id);
            }
        }
    }

    /// The peer's ACK Delay in time units (RFC 9000 §19.3; RFC 9002 §5.3: limited to the peer's
    /// max_ack_delay once the handshake is confirmed; zero for Initial and Handshake).
    fn decode_ack_delay(&self, epoch: Epoch, raw: u64) -> Duration {
        if epoch != Epoch::Data {
            return Duration::ZERO;
        }
        let exponent = self
            .peer_params
            .as_ref()
            .map_or(3, |p| p.ack_delay_exponent)
            .min(20);
        let delay = Duration::from_micros(raw.saturating_mul(1 << exponent).min(u64::MAX >> 1));
        if self.handshake.is_confirmed() {
            delay.min(self.peer_max_ack_delay())
        } else {
            delay
        }
    }

    /// Remove the acknowledged packets from one path's ledger; remember them briefly (for RTT
    /// samples from late ACKs) and feed the delivery-rate estimator. `packets` is an empty list
    /// to collect them in; it comes back as the error when none was outstanding.
    fn remove_acked(
        &mut self,
        now: Timestamp,
        epoch: Epoch,
        space: SpaceId,
        path_id: PathId,
        seqs: &[u64],
        packets: Vec<SentPacket>,
    ) -> Result<AckedOutcome, Vec<SentPacket>> {
        let Some(path) = self.paths.get_mut(&path_id) else {
            return Err(packets);
        };
        let mut outcome = AckedOutcome {
            packets,
            largest_newly_acked: None,
        };
        for &seq in seqs {
            path.ledger(epoch).on_acked(seq, &mut outcome);
        }
        if outcome.packets.is_empty() {
            return Err(outcome.packets);
        }
        // RFC 9002 §6.2.1: an acknowledgement resets the PTO backoff of its path.
        path.on_acknowledged();
        for p in outcome
            .packets
            .iter()
            .filter(|p| p.in_flight && !p.old_route)
        {
            path.delivery
                .on_packet_acked(now, &p.delivery, p.size, p.time_sent);
        }
        let history = self.send_space(space);
        for p in &outcome.packets {
            history.remember_acked(p.pn, path_id, p.time_sent, p.ack_eliciting);
        }
        Ok(outcome)
    }

    /// RTT samples of one ACK frame received on `recv_path`: which path samples what is the
    /// recovery seam's decision under the configured rules
    /// ([`plan_samples_into`](crate::recovery::sampling::plan_samples_into), Alibaba report
    /// §2.2). Pushes the paths that took a sample onto `sampled`; `shares` and `planned` are
    /// buffers (left empty).
    fn sample_rtts(
        &mut self,
        now: Timestamp,
        space: SpaceId,
        recv_path: PathId,
        (largest, ack_delay): (u64, Duration),
        outcomes: &[(PathId, AckedOutcome)],
        (shares, planned, sampled): (
            &mut Vec<PathAcked>,
            &mut Vec<crate::recovery::sampling::PlannedSample>,
            &mut Vec<PathId>,
        ),
    ) {
        let newly = || outcomes.iter().flat_map(|(_, o)| &o.packets);
        let largest_info = self
            .send_spaces
            .get(&space)
            .and_then(|s| s.acked_info(largest))
            .map(|(sent_on, sent, ack_eliciting)| LargestAcked {
                pn: largest,
                sent_on,
                sent,
                ack_eliciting,
                newly_acked: newly().any(|p| p.pn == largest),
            });
        shares.clear();
        shares.extend(outcomes.iter().filter_map(|(id, o)| {
            let eliciting = o.packets.iter().any(|p| p.ack_eliciting);
            Some(PathAcked {
                path: *id,
                newest_sent: o.largest_newly_acked.filter(|_| eliciting).map(|(_, t)| t),
                no_own_acks_yet: self.paths.get(id)?.last_own_ack.is_none(),
            })
        }));
        let any_eliciting = newly().any(|p| p.ack_eliciting);
        planned.clear();
        plan_samples_into(
            self.layout.report_rules(),
            (recv_path, largest_info, any_eliciting),
            shares,
            planned,
        );
        shares.clear();
        for sample in planned.drain(..) {
            let Some(path) = self.paths.get_mut(&sample.path) else {
                continue;
            };
            let rtt = now - sample.sent;
            let took = match sample.kind {
                SampleKind::Own { pn } => path.on_own_rtt_sample(now, pn, rtt, ack_delay),
                SampleKind::Borrowed | SampleKind::Naive => {
                    path.rtt.update(ack_delay, rtt);
                    path.counters.rtt_samples += 1;
                    if sample.kind == SampleKind::Borrowed {
                        path.counters.borrowed_rtt_samples += 1;
                    }
                    true
                }
            };
            if took {
                sampled.push(sample.path);
            }
        }
    }

    /// Paths that took an RTT sample from this frame but have no newly acknowledged in-flight
    /// bytes in it (a shared space: another path's ACK acknowledged them first) still tell their
    /// controller, which would otherwise never see most of their samples.
    fn report_samples_without_acks(
        &mut self,
        now: Timestamp,
        sampled: &[PathId],
        outcomes: &[(PathId, AckedOutcome)],
    ) {
        for id in sampled {
            let has_acked_bytes = outcomes
                .iter()
                .any(|(p, o)| p == id && o.packets.iter().any(|p| p.in_flight));
            if has_acked_bytes {
                continue;
            }
            if let Some(path) = self.paths.get_mut(id) {
                path.cc.on_rtt_sample_without_ack(now, &path.rtt);
            }
        }
    }

    /// Give the path's controller this ACK's acknowledged in-flight bytes and rate sample.
    fn report_acked(
        &mut self,
        now: Timestamp,
        path_id: PathId,
        outcome: &AckedOutcome,
        rtt_sampled: bool,
        states: &mut Vec<crate::cc::CouplingState>,
    ) {
        let in_flight = outcome
            .packets
            .iter()
            .filter(|p| p.in_flight && !p.old_route);
        let bytes_acked: u64 = in_flight.clone().map(|p| p.size).sum();
        let largest_sent = in_flight.map(|p| p.time_sent).max().unwrap_or_default();
        if bytes_acked == 0 {
            // Only ACK-only packets: nothing for the controller (RFC 9002 §A.5, §7).
            return;
        }
        let own = self.coupling_into(path_id, states);
        let Some(path) = self.paths.get_mut(&path_id) else {
            return;
        };
        let rate_sample = path.delivery.generate_sample(now, path.rtt.min());
        if let Some(s) = &rate_sample {
            let kept = path.delivery_rate_estimate(now);
            if !s.is_app_limited || path.delivery_rate.is_none() || s.delivery_rate > kept {
                path.delivery_rate = Some((s.delivery_rate, now));
            }
        }
        let event = AckEvent {
            now,
            bytes_acked,
            largest_acked_sent_time: largest_sent,
            bytes_in_flight: path.bytes_in_flight(),
            app_limited: rate_sample.as_ref().is_some_and(|s| s.is_app_limited),
            rtt: &path.rtt,
            rtt_sampled,
            rate_sample,
        };
        path.cc.on_ack(&event, Coupling { paths: states, own });
    }

    /// Release what an acknowledged packet carried.
    fn on_frames_acked(&mut self, now: Timestamp, epoch: Epoch, packet: &SentPacket) {
        if let Some(stream) = self.crypto[epoch.index()].as_mut() {
            for range in &packet.frames.crypto {
                stream.send.on_acked(range.start, range.end - range.start);
            }
        }
        self.streams.on_frames_acked(&packet.frames.streams);
        for frame in &packet.frames.path_frames {
            if let crate::sent_frames::PathFrame::RetireCid { path, sequence } = *frame {
                if let Some(pool) = self.remote_cids.get_mut(&path) {
                    pool.on_retire_acked(sequence);
                }
            }
        }
        self.stats.datagram_frames.acked += packet.frames.datagrams;
        if self.ack_policy().prunes_acked_ranges() {
            for (space, ranges) in &packet.frames.acks {
                self.record(*space).on_ack_acked(ranges);
            }
        }
        if self.keys.update_confirmed_by(packet.space, packet.pn) {
            // RFC 10069 §"Key Phase Update Process": the next update waits three times the
            // largest PTO among all paths after this confirmation (RFC 9001 §6.5: one path).
            let at = now + self.largest_pto() * 3;
            self.keys.defer_next_update(at);
        }
        if packet.in_flight {
            self.stats.bytes_acked += packet.size;
        }
    }
}
