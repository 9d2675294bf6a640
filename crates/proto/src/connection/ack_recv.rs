//! Processing received ACK / PATH_ACK frames: which packets are acknowledged, RTT samples per
//! path, congestion-controller feedback, and loss detection (RFC 9002 §5–7; Alibaba report §2.1).

use std::collections::BTreeMap;

use mpquic_wire::error::TransportErrorCode;
use mpquic_wire::frame::AckFrame;

use super::Connection;
use crate::cc::{AckEvent, Coupling};
use crate::crypto::Epoch;
use crate::error::TransportError;
use crate::path::{epoch_index, PathId};
use crate::recovery::{AckedOutcome, SentPacket};
use crate::space::SpaceId;
use crate::time::{Duration, Timestamp};

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
        let send_space = self.send_space(space);
        if send_space.never_sent(ack.largest) {
            // RFC 9000 §13.1: acknowledging an unsent packet is a PROTOCOL_VIOLATION.
            return Err(TransportError::for_frame(
                TransportErrorCode::PROTOCOL_VIOLATION,
                ty,
                "ACK of a packet never sent",
            ));
        }
        let mut acked = Vec::new();
        let mut spurious = Vec::new();
        for range in &ack.ranges {
            send_space.take_acked(range.clone(), &mut acked);
            send_space.take_spuriously_lost(range.clone(), &mut spurious);
        }
        send_space.on_largest_acked(ack.largest);
        for path in spurious {
            if let Some(p) = self.paths.get_mut(&path) {
                p.counters.spurious_losses += 1;
                p.cc.on_spurious_congestion_event();
            }
            self.stats.spurious_losses += 1;
        }
        if acked.is_empty() {
            return Ok(());
        }
        let ack_delay = self.decode_ack_delay(epoch, ack.ack_delay);
        // The naive RFC 9002 sample (rule off): the frame's Largest Acknowledged, credited to the
        // path the ACK arrived on.
        let naive = acked
            .iter()
            .find(|(pn, _, _)| *pn == ack.largest)
            .map(|&(_, path, seq)| (path, seq));
        let mut by_path: BTreeMap<PathId, Vec<u64>> = BTreeMap::new();
        for (_, path, seq) in acked {
            by_path.entry(path).or_default().push(seq);
        }
        let naive_time = naive.and_then(|(path, seq)| {
            let ledger = &self.paths.get(&path)?.ledgers[epoch_index(epoch)];
            ledger.get(seq).map(|p| p.time_sent)
        });
        for (path, seqs) in by_path {
            // The naive sample is taken once per frame: with the path that sent its largest packet.
            let naive_here = naive.filter(|(p, _)| *p == path).and(naive_time);
            self.on_path_acked(now, epoch, path, recv_path, &seqs, ack_delay, naive_here)?;
        }
        Ok(())
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
        if self.handshake_confirmed {
            delay.min(self.peer_max_ack_delay())
        } else {
            delay
        }
    }

    /// Packets of one path acknowledged by one frame.
    #[allow(clippy::too_many_arguments)]
    fn on_path_acked(
        &mut self,
        now: Timestamp,
        epoch: Epoch,
        path_id: PathId,
        recv_path: PathId,
        seqs: &[u64],
        ack_delay: Duration,
        naive_time: Option<Timestamp>,
    ) -> Result<(), TransportError> {
        let Some(path) = self.paths.get_mut(&path_id) else {
            return Ok(());
        };
        let mut outcome = AckedOutcome::default();
        for &seq in seqs {
            path.ledger(epoch).on_acked(seq, &mut outcome);
        }
        if outcome.packets.is_empty() {
            return Ok(());
        }
        // RFC 9002 §6.2.1: an acknowledgement resets the PTO backoff of its path.
        path.pto_count = 0;
        path.failed = false;
        for p in outcome.packets.iter().filter(|p| p.in_flight) {
            path.delivery
                .on_packet_acked(now, &p.delivery, p.size, p.time_sent);
        }
        self.take_rtt_sample(now, path_id, recv_path, &outcome, ack_delay, naive_time);
        for packet in &outcome.packets {
            self.on_frames_acked(epoch, packet);
        }
        // RFC 9002 §A.7: losses are detected and reported before the acknowledged bytes reach
        // the controller, so the rate sample of this ACK already counts them.
        self.detect_losses(now, path_id, epoch);
        self.report_acked(now, path_id, &outcome);
        Ok(())
    }

    /// RTT (Alibaba report §2.2): sample a path only when an ACK received on that path newly
    /// acknowledges its largest packet and something newly acked was ack-eliciting. A path
    /// without any sample yet accepts one from any path, so it never stays at kInitialRtt. With
    /// the rule off, the naive sample (the frame's largest packet) goes to the receiving path.
    fn take_rtt_sample(
        &mut self,
        now: Timestamp,
        path_id: PathId,
        recv_path: PathId,
        outcome: &AckedOutcome,
        ack_delay: Duration,
        naive_time: Option<Timestamp>,
    ) {
        let rule_on = self.config.rtt_sample_on_receiving_path;
        let eliciting = outcome.packets.iter().any(|p| p.ack_eliciting);
        let (target, sent) = if rule_on {
            let Some((_, sent)) = outcome.largest_newly_acked.filter(|_| eliciting) else {
                return;
            };
            (path_id, sent)
        } else {
            let Some(sent) = naive_time else { return };
            (recv_path, sent)
        };
        let Some(path) = self.paths.get_mut(&target) else {
            return;
        };
        if target == recv_path || !path.rtt.has_sample() {
            path.rtt.update(ack_delay, now - sent);
            path.counters.rtt_samples += 1;
        }
    }

    /// Give the path's controller this ACK's acknowledged in-flight bytes and rate sample.
    fn report_acked(&mut self, now: Timestamp, path_id: PathId, outcome: &AckedOutcome) {
        let coupling = self.coupling_snapshot();
        let Some(path) = self.paths.get_mut(&path_id) else {
            return;
        };
        let in_flight = outcome.packets.iter().filter(|p| p.in_flight);
        let bytes_acked: u64 = in_flight.clone().map(|p| p.size).sum();
        let largest_sent = in_flight.map(|p| p.time_sent).max().unwrap_or_default();
        let rate_sample = path.delivery.generate_sample(now, path.rtt.min());
        if bytes_acked == 0 {
            return;
        }
        let event = AckEvent {
            now,
            bytes_acked,
            largest_acked_sent_time: largest_sent,
            bytes_in_flight: path.bytes_in_flight(),
            app_limited: rate_sample.as_ref().is_some_and(|s| s.is_app_limited),
            rtt: &path.rtt,
            rate_sample,
        };
        let own = coupling.iter().position(|c| c.0 == path_id).unwrap_or(0);
        let states: Vec<_> = coupling.iter().map(|c| c.1).collect();
        path.cc.on_ack(
            &event,
            Coupling {
                paths: &states,
                own,
            },
        );
    }

    /// Release what an acknowledged packet carried.
    fn on_frames_acked(&mut self, epoch: Epoch, packet: &SentPacket) {
        for range in &packet.frames.crypto {
            self.crypto[epoch.index()]
                .send
                .on_acked(range.start, range.end - range.start);
        }
        self.streams.on_frames_acked(&packet.frames.streams);
        if let Some((space, largest)) = packet.frames.ack {
            if self.config.ack.prune_acked_ranges {
                self.record(space).on_ack_acked(largest);
            }
        }
        if let Some((space, pn)) = self.key_update_acked_pn {
            if space == packet.space && packet.pn >= pn {
                self.key_update_acked_pn = None;
            }
        }
        self.stats.bytes_acked += packet.size;
    }
}
