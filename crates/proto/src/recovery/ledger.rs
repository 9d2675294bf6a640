//! The sent-packet ledger of one path at one encryption level, with RFC 9002 §6.1 loss detection.

use std::collections::VecDeque;

use crate::cc::PacketDeliveryState;
use crate::recovery::rtt::RttEstimator;
use crate::sent_frames::SentFrames;
use crate::time::{Duration, Timestamp};

/// RFC 9002 §6.1.1: kPacketThreshold.
pub const PACKET_THRESHOLD: u64 = 3;

/// One packet awaiting acknowledgement.
#[derive(Debug, Clone)]
pub struct SentPacket {
    /// Packet number in its packet number space.
    pub pn: u64,
    /// The packet number space.
    pub space: crate::space::SpaceId,
    pub time_sent: Timestamp,
    /// Bytes of the datagram share this packet used (counted in flight when `in_flight`).
    pub size: u64,
    pub ack_eliciting: bool,
    pub in_flight: bool,
    /// Delivery-rate snapshot at send time.
    pub delivery: PacketDeliveryState,
    pub frames: SentFrames,
    /// Its stream frames were already re-injected on another path (XLINK).
    pub reinjected: bool,
}

/// Packets newly acknowledged on this ledger by one ACK frame.
#[derive(Debug, Default)]
pub struct AckedOutcome {
    pub packets: Vec<SentPacket>,
    /// Whether this ACK raised the ledger's largest acknowledged sequence number.
    pub largest_newly_acked: Option<(u64, Timestamp)>,
}

/// Packets declared lost by one detection run.
#[derive(Debug, Default)]
pub struct LostPackets {
    pub packets: Vec<SentPacket>,
}

/// Sent packets of one path at one encryption level.
///
/// Sequence numbers are dense and increasing, so packets live in a ring buffer indexed by
/// `seq - base`: sending, acknowledging and declaring lost are O(1) and never move the (large)
/// packet records around.
#[derive(Debug, Default)]
pub struct Ledger {
    /// Slot `i` holds the packet with sequence number `base + i`, or None once it left.
    sent: VecDeque<Option<SentPacket>>,
    /// Sequence number of `sent[0]`.
    base: u64,
    /// Number of `Some` slots.
    live: usize,
    next_seq: u64,
    largest_acked_seq: Option<u64>,
    /// RFC 9002 §6.1.2 loss_time.
    loss_time: Option<Timestamp>,
    time_of_last_ack_eliciting: Option<Timestamp>,
    ack_eliciting_in_flight: u64,
    bytes_in_flight: u64,
}

impl Ledger {
    /// Record a sent packet; returns its per-path sequence number.
    pub fn on_sent(&mut self, packet: SentPacket) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        if packet.in_flight {
            self.bytes_in_flight += packet.size;
            if packet.ack_eliciting {
                self.time_of_last_ack_eliciting = Some(packet.time_sent);
                self.ack_eliciting_in_flight += 1;
            }
        }
        if self.sent.is_empty() {
            self.base = seq;
        }
        self.sent.push_back(Some(packet));
        self.live += 1;
        seq
    }

    fn slot(&mut self, seq: u64) -> Option<&mut Option<SentPacket>> {
        let index = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        self.sent.get_mut(index)
    }

    /// Take the packet `seq` out of its slot and trim empty slots at the front.
    fn take(&mut self, seq: u64) -> Option<SentPacket> {
        let packet = self.slot(seq)?.take()?;
        self.live -= 1;
        while matches!(self.sent.front(), Some(None)) {
            self.sent.pop_front();
            self.base += 1;
        }
        if self.sent.is_empty() {
            self.base = self.next_seq;
        }
        Some(packet)
    }

    /// Remove the packet with sequence number `seq` as acknowledged. Returns None if it was not
    /// outstanding (already acknowledged or declared lost).
    pub fn on_acked(&mut self, seq: u64, outcome: &mut AckedOutcome) -> Option<()> {
        let packet = self.take(seq)?;
        self.untrack(&packet);
        if self.largest_acked_seq.is_none_or(|l| seq > l) {
            self.largest_acked_seq = Some(seq);
            outcome.largest_newly_acked = Some((seq, packet.time_sent));
        }
        outcome.packets.push(packet);
        Some(())
    }

    fn untrack(&mut self, packet: &SentPacket) {
        if packet.in_flight {
            self.bytes_in_flight -= packet.size;
            if packet.ack_eliciting {
                self.ack_eliciting_in_flight -= 1;
            }
        }
    }

    /// RFC 9002 §6.1 DetectAndRemoveLostPackets over this ledger, using this path's RTT.
    pub fn detect_lost(&mut self, now: Timestamp, rtt: &RttEstimator) -> LostPackets {
        let mut lost = LostPackets::default();
        self.loss_time = None;
        let Some(largest) = self.largest_acked_seq else {
            return lost;
        };
        let loss_delay = rtt.loss_delay();
        // Packets sent at or before this time are lost by the time threshold; before the epoch
        // plus one loss delay, none can be.
        let lost_send_time = (now - Timestamp::ZERO)
            .checked_sub(loss_delay)
            .map(|d| Timestamp::ZERO + d);
        let below_largest = usize::try_from(largest.saturating_sub(self.base))
            .unwrap_or(usize::MAX)
            .min(self.sent.len());
        let mut lost_seqs = Vec::new();
        for (i, packet) in self.sent.iter().take(below_largest).enumerate() {
            let Some(packet) = packet else { continue };
            let seq = self.base + i as u64;
            if lost_send_time.is_some_and(|t| packet.time_sent <= t)
                || largest >= seq + PACKET_THRESHOLD
            {
                lost_seqs.push(seq);
            } else {
                let when = packet.time_sent + loss_delay;
                self.loss_time = Some(self.loss_time.map_or(when, |t| t.min(when)));
            }
        }
        for seq in lost_seqs {
            if let Some(packet) = self.take(seq) {
                self.untrack(&packet);
                lost.packets.push(packet);
            }
        }
        lost
    }

    /// Remove every outstanding packet (the level's keys are discarded, or the path is gone):
    /// RFC 9002 §6.4. Returned packets are neither acknowledged nor lost.
    pub fn drain(&mut self) -> Vec<SentPacket> {
        let packets: Vec<SentPacket> = std::mem::take(&mut self.sent)
            .into_iter()
            .flatten()
            .collect();
        self.base = self.next_seq;
        self.live = 0;
        self.bytes_in_flight = 0;
        self.ack_eliciting_in_flight = 0;
        self.loss_time = None;
        self.time_of_last_ack_eliciting = None;
        packets
    }

    /// Outstanding packets in send order, oldest first, with their sequence numbers.
    pub fn outstanding(&self) -> impl Iterator<Item = (u64, &SentPacket)> {
        let base = self.base;
        self.sent
            .iter()
            .enumerate()
            .filter_map(move |(i, p)| p.as_ref().map(|p| (base + i as u64, p)))
    }

    /// Outstanding packets, mutable, oldest first.
    pub fn outstanding_mut(&mut self) -> impl Iterator<Item = (u64, &mut SentPacket)> {
        let base = self.base;
        self.sent
            .iter_mut()
            .enumerate()
            .filter_map(move |(i, p)| p.as_mut().map(|p| (base + i as u64, p)))
    }

    /// The most recently sent outstanding packet.
    pub fn newest(&self) -> Option<&SentPacket> {
        self.sent.iter().rev().find_map(Option::as_ref)
    }

    /// An outstanding packet.
    pub fn get(&self, seq: u64) -> Option<&SentPacket> {
        let index = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        self.sent.get(index)?.as_ref()
    }

    /// Mutable access to an outstanding packet (e.g. to mark frames re-injected).
    pub fn get_mut(&mut self, seq: u64) -> Option<&mut SentPacket> {
        self.slot(seq)?.as_mut()
    }

    pub fn loss_time(&self) -> Option<Timestamp> {
        self.loss_time
    }

    pub fn time_of_last_ack_eliciting(&self) -> Option<Timestamp> {
        self.time_of_last_ack_eliciting
    }

    pub fn ack_eliciting_in_flight(&self) -> u64 {
        self.ack_eliciting_in_flight
    }

    pub fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }

    pub fn largest_acked_seq(&self) -> Option<u64> {
        self.largest_acked_seq
    }

    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
}

/// RFC 9002 §7.6.1: persistent congestion duration.
pub fn persistent_congestion_duration(rtt: &RttEstimator, max_ack_delay: Duration) -> Duration {
    (rtt.smoothed() + (rtt.var() * 4).max(crate::recovery::rtt::GRANULARITY) + max_ack_delay) * 3
}

/// RFC 9002 §7.6.2, simplified to one detection batch: persistent congestion when two
/// ack-eliciting lost packets span more than the duration and an RTT sample exists. (Packets
/// acknowledged between them would have been removed from the ledger before they could be
/// declared lost together, which the batch approximates.)
pub fn is_persistent_congestion(
    lost: &[SentPacket],
    rtt: &RttEstimator,
    max_ack_delay: Duration,
) -> bool {
    if !rtt.has_sample() {
        return false;
    }
    let mut eliciting = lost.iter().filter(|p| p.ack_eliciting).map(|p| p.time_sent);
    let Some(first) = eliciting.next() else {
        return false;
    };
    let (min, max) = eliciting.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t)));
    max - min > persistent_congestion_duration(rtt, max_ack_delay)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn packet(pn: u64, t_ms: u64) -> SentPacket {
        SentPacket {
            pn,
            space: crate::space::SpaceId::Data(0),
            time_sent: Timestamp::from_nanos(t_ms * 1_000_000),
            size: 1200,
            ack_eliciting: true,
            in_flight: true,
            delivery: PacketDeliveryState::default(),
            frames: SentFrames::default(),
            reinjected: false,
        }
    }

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn packet_threshold_counts_per_path_sequence() {
        // SPNS: this path sent packet numbers 1, 2, 6, 7 (others went on another path).
        let mut ledger = Ledger::default();
        let seqs: Vec<u64> = [1, 2, 6, 7]
            .iter()
            .map(|&pn| ledger.on_sent(packet(pn, 0)))
            .collect();
        assert_eq!(ledger.bytes_in_flight(), 4 * 1200);
        let mut outcome = AckedOutcome::default();
        // ACK of pn 6 only (seq 2): pn 1 is 2 packets behind on this path: not yet lost by count.
        ledger.on_acked(seqs[2], &mut outcome).unwrap();
        let mut rtt = RttEstimator::new(Duration::from_millis(100));
        rtt.update(Duration::ZERO, Duration::from_millis(100));
        let lost = ledger.detect_lost(at(1), &rtt);
        assert!(lost.packets.is_empty());
        // ACK of pn 7 (seq 3): pn 1 (seq 0) is now 3 behind: lost. pn 2 (seq 1) is 2 behind: kept.
        ledger.on_acked(seqs[3], &mut outcome).unwrap();
        let lost = ledger.detect_lost(at(2), &rtt);
        assert_eq!(
            lost.packets.iter().map(|p| p.pn).collect::<Vec<_>>(),
            vec![1]
        );
        // pn 2 waits for the time threshold: 9/8 * 100 ms after it was sent.
        assert_eq!(
            ledger.loss_time(),
            Some(at(112) + Duration::from_micros(500))
        );
        let lost = ledger.detect_lost(at(113), &rtt);
        assert_eq!(
            lost.packets.iter().map(|p| p.pn).collect::<Vec<_>>(),
            vec![2]
        );
        assert_eq!(ledger.bytes_in_flight(), 0);
    }

    #[test]
    fn duplicate_ack_is_ignored() {
        let mut ledger = Ledger::default();
        let seq = ledger.on_sent(packet(0, 0));
        let mut outcome = AckedOutcome::default();
        assert!(ledger.on_acked(seq, &mut outcome).is_some());
        assert!(ledger.on_acked(seq, &mut outcome).is_none());
        assert_eq!(outcome.packets.len(), 1);
        assert_eq!(outcome.largest_newly_acked.map(|(s, _)| s), Some(seq));
    }

    #[test]
    fn persistent_congestion_needs_a_long_span() {
        let mut rtt = RttEstimator::new(Duration::from_millis(100));
        rtt.update(Duration::ZERO, Duration::from_millis(10));
        let short = vec![packet(0, 0), packet(1, 10)];
        assert!(!is_persistent_congestion(
            &short,
            &rtt,
            Duration::from_millis(25)
        ));
        let long = vec![packet(0, 0), packet(5, 500)];
        assert!(is_persistent_congestion(
            &long,
            &rtt,
            Duration::from_millis(25)
        ));
    }
}
