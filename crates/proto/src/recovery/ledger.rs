//! The sent-packet ledger of one path at one encryption level, with RFC 9002 §6.1 loss detection.

use std::collections::VecDeque;

use mpquic_wire::range_set::RangeSet;

use crate::cc::PacketDeliveryState;
use crate::recovery::reordering::LossThresholds;
use crate::recovery::rtt::RttEstimator;
use crate::sent_frames::SentFrames;
use crate::time::{Duration, Timestamp};

/// RFC 9002 §6.1.1: kPacketThreshold.
pub(crate) const PACKET_THRESHOLD: u64 = 3;

/// What a packet's distance to the largest acknowledged packet is measured in (RFC 9002
/// §6.1: a packet is a loss candidate once a packet sent after it was acknowledged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LossReference {
    /// The path's own send order: per-path sequence numbers up to the path's largest
    /// acknowledged one (Alibaba report §2.1; in MPNS this is packet-number order). The packet
    /// threshold applies to packets an ACK frame showed missing ([`Ledger::on_ack_frame`]);
    /// the others are declared lost by the time threshold extended by `grace`, the peer's
    /// max_ack_delay (their acknowledgement may be on its way in a delayed ACK on a slower
    /// path, the allowance RFC 9002 §6.2.1 makes for the PTO).
    PathSequence { grace: Duration },
    /// Packet numbers of the shared space up to the space's largest acknowledged packet,
    /// whichever path sent it: one detector over the space (the naive SPNS rule, §2.1 off).
    SpacePacketNumber(Option<u64>),
}

impl LossReference {
    /// The reference the rules select: `space_largest_acked` is the largest packet number
    /// acknowledged in the packets' space.
    pub(crate) fn for_rules(
        rules: &crate::spns_rules::SpnsRules,
        space_largest_acked: Option<u64>,
        peer_max_ack_delay: Duration,
    ) -> Self {
        if rules.per_path_loss_detection {
            LossReference::PathSequence {
                grace: peer_max_ack_delay,
            }
        } else {
            LossReference::SpacePacketNumber(space_largest_acked)
        }
    }

    /// Whether the reference is shared by every path of a space (a change of it concerns
    /// packets of paths the ACK did not acknowledge anything of).
    pub(crate) fn is_space_wide(self) -> bool {
        matches!(self, LossReference::SpacePacketNumber(_))
    }

    /// How far the largest acknowledged packet is past the packet with sequence number `seq`
    /// and packet number `pn`: `Past(n)` for a loss candidate, `Unseen` for a packet below
    /// the largest acknowledged that no ACK frame showed missing, `Beyond` once the packet
    /// (and every later one of the path) is not below the largest acknowledged.
    fn behind(self, seq: u64, pn: u64, ledger: &Ledger) -> Behind {
        let past = |d: Option<u64>| d.filter(|d| *d > 0).map_or(Behind::Beyond, Behind::Past);
        match self {
            LossReference::PathSequence { .. } => {
                match past(ledger.largest_acked_seq.and_then(|l| l.checked_sub(seq))) {
                    Behind::Past(_) if !ledger.seen_missing.contains(pn) => Behind::Unseen,
                    other => other,
                }
            }
            LossReference::SpacePacketNumber(largest) => {
                past(largest.and_then(|l| l.checked_sub(pn)))
            }
        }
    }
}

/// A packet's position relative to the largest acknowledged one ([`LossReference`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Behind {
    Past(u64),
    Unseen,
    Beyond,
}

/// One packet awaiting acknowledgement.
#[derive(Debug, Clone)]
pub(crate) struct SentPacket {
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
    /// Its stream frames were already re-injected on another path (XLINK), or it is itself a
    /// copy (re-injection, redundant scheduling): never copied (again).
    pub reinjected: bool,
    /// Sent in an ECT(0) datagram (RFC 9000 §13.4.2).
    pub ecn: bool,
    /// Sent before its path moved to another network and its controller started over (RFC
    /// 9000 §9.4; [`Ledger::leave_old_route`]): still awaited and resent if lost, but no longer
    /// in the new controller's bytes in flight, and its fate tells that controller nothing.
    pub old_route: bool,
}

/// Packets newly acknowledged on this ledger by one ACK frame.
#[derive(Debug, Default)]
pub(crate) struct AckedOutcome {
    pub packets: Vec<SentPacket>,
    /// Whether this ACK raised the ledger's largest acknowledged sequence number.
    pub largest_newly_acked: Option<(u64, Timestamp)>,
}

/// Which RFC 9002 §6.1 threshold declared a packet lost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum LossCause {
    /// kPacketThreshold packets sent after it were acknowledged (§6.1.1).
    PacketThreshold,
    /// Sent more than the loss delay before now (§6.1.2).
    TimeThreshold,
    /// Its path was abandoned or failed and its data moved to other paths.
    PathGone,
}

/// Packets declared lost by one detection run.
#[derive(Debug, Default)]
pub(crate) struct LostPackets {
    pub packets: Vec<SentPacket>,
    /// Why each packet was declared lost (same order as `packets`).
    pub causes: Vec<LossCause>,
}

/// Sent packets of one path at one encryption level.
///
/// Sequence numbers are dense and increasing, so packets live in a ring buffer indexed by
/// `seq - base`: sending, acknowledging and declaring lost are O(1) and never move the (large)
/// packet records around.
#[derive(Debug, Default)]
pub(crate) struct Ledger {
    /// Slot `i` holds the packet with sequence number `base + i`, or None once it left.
    sent: VecDeque<Option<SentPacket>>,
    /// Sequence number of `sent[0]`.
    base: u64,
    /// Number of `Some` slots.
    live: usize,
    next_seq: u64,
    largest_acked_seq: Option<u64>,
    /// Packet numbers an ACK frame showed missing while it reported a later packet of this
    /// path ([`Ledger::on_ack_frame`]).
    seen_missing: RangeSet,
    /// RFC 9002 §6.1.2 loss_time.
    loss_time: Option<Timestamp>,
    time_of_last_ack_eliciting: Option<Timestamp>,
    ack_eliciting_in_flight: u64,
    bytes_in_flight: u64,
    /// Outstanding packets that [`is_copyable`]: whether there are any is asked before every
    /// datagram sent, and a peer that acknowledges nothing makes the ledger grow by an
    /// ACK-only packet every other packet it sends, so it is counted, not searched.
    copyable: usize,
}

/// Whether re-injection may still copy `packet`: it carries stream data and is not itself a
/// copy or copied already (`connection/xlink.rs`).
pub(crate) fn is_copyable(packet: &SentPacket) -> bool {
    !packet.reinjected && !packet.frames.streams.stream.is_empty()
}

impl Ledger {
    /// A ledger with nothing sent.
    pub(crate) const EMPTY: Ledger = Ledger {
        sent: VecDeque::new(),
        base: 0,
        live: 0,
        next_seq: 0,
        largest_acked_seq: None,
        seen_missing: RangeSet::new(),
        loss_time: None,
        time_of_last_ack_eliciting: None,
        ack_eliciting_in_flight: 0,
        bytes_in_flight: 0,
        copyable: 0,
    };

    /// Record a sent packet; returns its per-path sequence number.
    pub(crate) fn on_sent(&mut self, packet: SentPacket) -> u64 {
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
        self.copyable += usize::from(is_copyable(&packet));
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
        self.copyable -= usize::from(is_copyable(&packet));
        while matches!(self.sent.front(), Some(None)) {
            self.sent.pop_front();
            self.base += 1;
        }
        if self.sent.is_empty() {
            self.base = self.next_seq;
            // Nothing outstanding: give the slots back, so that an idle path holds no ledger
            // memory (a few hundred bytes to kilobytes); the next flight allocates again.
            self.sent = VecDeque::new();
        }
        Some(packet)
    }

    /// Remove the packet with sequence number `seq` as acknowledged. Returns None if it was not
    /// outstanding (already acknowledged or declared lost).
    pub(crate) fn on_acked(&mut self, seq: u64, outcome: &mut AckedOutcome) -> Option<()> {
        let packet = self.take(seq)?;
        self.untrack(&packet);
        if self.largest_acked_seq.is_none_or(|l| seq > l) {
            self.largest_acked_seq = Some(seq);
            outcome.largest_newly_acked = Some((seq, packet.time_sent));
        }
        outcome.packets.push(packet);
        Some(())
    }

    /// An ACK frame was received whose ranges span packet numbers from `low` upwards and
    /// report `later`, the newest packet of this path among them (if any). The path's packets
    /// still outstanding with numbers in `low..later` were then missing at the receiver
    /// although a packet sent after them on the same path had arrived: the gap RFC 9002 §6.1
    /// takes as a sign of loss, here per path (Alibaba report §2.1). A frame that does not
    /// span a packet (its older ranges left out under the range limit, report §2.4) says
    /// nothing about it: with one shared space a fast path's ACK may report a slow path's
    /// newest packets but not its older ones, which the slow path's own ACK reported and is
    /// still carrying up the slow path. Returns whether the frame showed a packet missing.
    pub(crate) fn on_ack_frame(&mut self, low: u64, later: Option<u64>) -> bool {
        let Some(later) = later.filter(|l| *l > low) else {
            return false;
        };
        let (oldest, shown) = {
            let mut below = self
                .outstanding()
                .map(|(_, p)| p.pn)
                .take_while(|&pn| pn < later);
            let Some(oldest) = below.next() else {
                return false;
            };
            (oldest, oldest >= low || below.any(|pn| pn >= low))
        };
        if shown {
            self.seen_missing.insert(low..later);
        }
        // Evidence about packets no longer outstanding is not needed.
        self.seen_missing.remove(0..oldest);
        shown
    }

    /// How many packets of the path sent after the packet with sequence number `seq` have
    /// been acknowledged (the reordering it showed when it is acknowledged late).
    pub(crate) fn displacement(&self, seq: u64) -> u64 {
        self.largest_acked_seq
            .map_or(0, |largest| largest.saturating_sub(seq))
    }

    fn untrack(&mut self, packet: &SentPacket) {
        if packet.in_flight {
            if !packet.old_route {
                self.bytes_in_flight -= packet.size;
            }
            if packet.ack_eliciting {
                self.ack_eliciting_in_flight -= 1;
            }
        }
    }

    /// RFC 9002 §6.1 DetectAndRemoveLostPackets over this ledger, using this path's RTT and
    /// loss thresholds.
    ///
    /// `reference` says what "sent before the largest acknowledged packet" means: this path's
    /// own send order (Alibaba report §2.1) or the shared space's packet numbers (one detector
    /// over the space, the naive SPNS rule); see [`LossReference`].
    pub(crate) fn detect_lost(
        &mut self,
        now: Timestamp,
        rtt: &RttEstimator,
        reference: LossReference,
        thresholds: &LossThresholds,
    ) -> LostPackets {
        let mut lost = LostPackets::default();
        self.loss_time = None;
        let loss_delay = thresholds.time.loss_delay(rtt);
        let mut lost_seqs = Vec::new();
        for (i, packet) in self.sent.iter().enumerate() {
            let Some(packet) = packet else { continue };
            let seq = self.base + i as u64;
            // How many packets sent after this one the reference counts as acknowledged.
            let (behind, extra) = match reference.behind(seq, packet.pn, self) {
                Behind::Past(n) => (n, Duration::ZERO),
                Behind::Unseen => match reference {
                    LossReference::PathSequence { grace } => (0, grace),
                    LossReference::SpacePacketNumber(_) => continue,
                },
                Behind::Beyond => break,
            };
            let when = packet.time_sent + loss_delay + extra;
            if behind >= thresholds.packet.get() {
                lost_seqs.push((seq, LossCause::PacketThreshold));
            } else if when <= now {
                lost_seqs.push((seq, LossCause::TimeThreshold));
            } else {
                self.loss_time = Some(self.loss_time.map_or(when, |t| t.min(when)));
            }
        }
        for (seq, cause) in lost_seqs {
            if let Some(packet) = self.take(seq) {
                self.untrack(&packet);
                lost.packets.push(packet);
                lost.causes.push(cause);
            }
        }
        lost
    }

    /// Remove every outstanding packet (the level's keys are discarded, or the path is gone):
    /// RFC 9002 §6.4. Returned packets are neither acknowledged nor lost.
    pub(crate) fn drain(&mut self) -> Vec<SentPacket> {
        let packets: Vec<SentPacket> = std::mem::take(&mut self.sent)
            .into_iter()
            .flatten()
            .collect();
        self.base = self.next_seq;
        self.live = 0;
        self.copyable = 0;
        self.bytes_in_flight = 0;
        self.ack_eliciting_in_flight = 0;
        self.loss_time = None;
        self.time_of_last_ack_eliciting = None;
        packets
    }

    /// The path moved to another network and its controller started over (RFC 9000 §9.4):
    /// what is outstanding went by the old route. It stays outstanding (PTO and loss detection
    /// still cover it, and its frames are resent if it is lost) but leaves the bytes in flight
    /// the new controller limits; otherwise the new, small window would be full of packets the
    /// old network may have dropped, and the path would wait for their loss before sending.
    pub(crate) fn leave_old_route(&mut self) {
        for p in self.sent.iter_mut().flatten() {
            if p.in_flight && !p.old_route {
                p.old_route = true;
                self.bytes_in_flight -= p.size;
            }
        }
    }

    /// Whether no packet is outstanding.
    pub(crate) fn is_empty(&self) -> bool {
        self.live == 0
    }

    /// Outstanding packets in send order, oldest first, with their sequence numbers.
    pub(crate) fn outstanding(&self) -> impl Iterator<Item = (u64, &SentPacket)> {
        let base = self.base;
        self.sent
            .iter()
            .enumerate()
            .filter_map(move |(i, p)| p.as_ref().map(|p| (base + i as u64, p)))
    }

    /// Outstanding packets, mutable, oldest first.
    pub(crate) fn outstanding_mut(&mut self) -> impl Iterator<Item = (u64, &mut SentPacket)> {
        let base = self.base;
        self.sent
            .iter_mut()
            .enumerate()
            .filter_map(move |(i, p)| p.as_mut().map(|p| (base + i as u64, p)))
    }

    /// The most recently sent outstanding packet.
    pub(crate) fn newest(&self) -> Option<&SentPacket> {
        self.sent.iter().rev().find_map(Option::as_ref)
    }

    /// Mark the most recently sent outstanding packet as a copy, never to be copied itself.
    pub(crate) fn mark_newest_as_copy(&mut self) {
        if let Some(p) = self.sent.iter_mut().rev().find_map(Option::as_mut) {
            self.copyable -= usize::from(is_copyable(p));
            p.reinjected = true;
        }
    }

    /// `n` packets that were [`is_copyable`] were marked `reinjected` (copied).
    pub(crate) fn note_copied(&mut self, n: usize) {
        self.copyable = self.copyable.saturating_sub(n);
    }

    /// Whether some outstanding packet [`is_copyable`].
    pub(crate) fn has_copyable(&self) -> bool {
        debug_assert_eq!(
            self.copyable,
            self.outstanding().filter(|(_, p)| is_copyable(p)).count()
        );
        self.copyable > 0
    }

    pub(crate) fn loss_time(&self) -> Option<Timestamp> {
        self.loss_time
    }

    pub(crate) fn time_of_last_ack_eliciting(&self) -> Option<Timestamp> {
        self.time_of_last_ack_eliciting
    }

    pub(crate) fn ack_eliciting_in_flight(&self) -> u64 {
        self.ack_eliciting_in_flight
    }

    pub(crate) fn bytes_in_flight(&self) -> u64 {
        self.bytes_in_flight
    }
}

/// RFC 9002 §7.6.1: persistent congestion duration.
pub(crate) fn persistent_congestion_duration(
    rtt: &RttEstimator,
    max_ack_delay: Duration,
) -> Duration {
    (rtt.smoothed() + (rtt.var() * 4).max(crate::recovery::rtt::GRANULARITY) + max_ack_delay) * 3
}

/// RFC 9002 §7.6.2, simplified to one detection batch: persistent congestion when two
/// ack-eliciting lost packets span more than the duration and an RTT sample exists. (Packets
/// acknowledged between them would have been removed from the ledger before they could be
/// declared lost together, which the batch approximates.)
pub(crate) fn is_persistent_congestion(
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
            space: crate::space::SpaceId::Data(crate::path::PathId::ZERO),
            time_sent: Timestamp::from_nanos(t_ms * 1_000_000),
            size: 1200,
            ack_eliciting: true,
            in_flight: true,
            delivery: PacketDeliveryState::default(),
            frames: SentFrames::default(),
            reinjected: false,
            ecn: false,
            old_route: false,
        }
    }

    fn at(ms: u64) -> Timestamp {
        Timestamp::from_nanos(ms * 1_000_000)
    }

    fn pns(lost: &LostPackets) -> Vec<u64> {
        lost.packets.iter().map(|p| p.pn).collect()
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
        assert!(ledger.on_ack_frame(0, Some(6)), "1 and 2 missing below 6");
        let mut rtt = RttEstimator::new(Duration::from_millis(100));
        rtt.update(Duration::ZERO, Duration::from_millis(100));
        let lost = ledger.detect_lost(
            at(1),
            &rtt,
            LossReference::PathSequence {
                grace: Duration::ZERO,
            },
            &LossThresholds::default(),
        );
        assert!(lost.packets.is_empty());
        // ACK of pn 7 (seq 3): pn 1 (seq 0) is now 3 behind: lost. pn 2 (seq 1) is 2 behind: kept.
        ledger.on_acked(seqs[3], &mut outcome).unwrap();
        ledger.on_ack_frame(0, Some(7));
        let lost = ledger.detect_lost(
            at(2),
            &rtt,
            LossReference::PathSequence {
                grace: Duration::ZERO,
            },
            &LossThresholds::default(),
        );
        assert_eq!(
            lost.packets.iter().map(|p| p.pn).collect::<Vec<_>>(),
            vec![1]
        );
        // pn 2 waits for the time threshold: 9/8 * 100 ms after it was sent.
        assert_eq!(
            ledger.loss_time(),
            Some(at(112) + Duration::from_micros(500))
        );
        let lost = ledger.detect_lost(
            at(113),
            &rtt,
            LossReference::PathSequence {
                grace: Duration::ZERO,
            },
            &LossThresholds::default(),
        );
        assert_eq!(
            lost.packets.iter().map(|p| p.pn).collect::<Vec<_>>(),
            vec![2]
        );
        assert_eq!(ledger.bytes_in_flight(), 0);
    }

    /// Report §2.1 as a switch: a slow path's packets 1, 2, 6 and 7 are still in flight while
    /// a fast path's packets up to 10 were acknowledged. One detector over the shared space
    /// declares them lost by the packet threshold at once; the per-path detector waits for
    /// this path's own acknowledgements (or the time threshold).
    #[test]
    fn space_wide_reference_declares_a_slow_paths_packets_lost() {
        let mut rtt = RttEstimator::new(Duration::from_millis(100));
        rtt.update(Duration::ZERO, Duration::from_millis(100));
        let sent = || {
            let mut ledger = Ledger::default();
            for pn in [1, 2, 6, 7] {
                ledger.on_sent(packet(pn, 0));
            }
            ledger
        };
        let rules = crate::spns_rules::SpnsRules::report();
        let mut per_path = sent();
        let reference = LossReference::for_rules(&rules, Some(10), Duration::ZERO);
        assert!(
            !per_path.on_ack_frame(0, None),
            "no packet of this path reported"
        );
        assert!(per_path
            .detect_lost(at(1), &rtt, reference, &LossThresholds::default())
            .packets
            .is_empty());
        assert_eq!(
            per_path.loss_time(),
            None,
            "nothing acknowledged on the path"
        );
        let naive = crate::spns_rules::SpnsRules::naive();
        let mut shared = sent();
        let reference = LossReference::for_rules(&naive, Some(10), Duration::ZERO);
        assert_eq!(
            pns(&shared.detect_lost(at(1), &rtt, reference, &LossThresholds::default())),
            vec![1, 2, 6, 7]
        );
        // Space largest 8: 1 and 2 are 7 and 6 behind (lost); 6 and 7 are 2 and 1 behind.
        let mut shared = sent();
        let lost = shared.detect_lost(
            at(1),
            &rtt,
            LossReference::SpacePacketNumber(Some(8)),
            &LossThresholds::default(),
        );
        assert_eq!(pns(&lost), vec![1, 2]);
        assert!(
            shared.loss_time().is_some(),
            "6 and 7 wait for the time threshold"
        );
    }

    /// An ACK frame that left a slow path's older packets out (range limit) is no evidence
    /// that they are missing: the packet threshold waits until a frame that reports a later
    /// packet of the path spans them; until then only the time threshold, extended by the
    /// peer's max_ack_delay, applies.
    #[test]
    fn only_packets_an_ack_frame_showed_missing_meet_the_packet_threshold() {
        let mut rtt = RttEstimator::new(Duration::from_millis(100));
        rtt.update(Duration::ZERO, Duration::from_millis(100));
        let grace = Duration::from_millis(25);
        let per_path = LossReference::PathSequence { grace };
        let sent = || {
            let mut ledger = Ledger::default();
            let seqs: Vec<u64> = [1, 2, 6, 7, 11]
                .iter()
                .map(|&pn| ledger.on_sent(packet(pn, 0)))
                .collect();
            // A fast path's ACK reported ranges 20-11 and 9-6 only: 6, 7 and 11 acknowledged.
            let mut outcome = AckedOutcome::default();
            for &seq in &seqs[2..] {
                ledger.on_acked(seq, &mut outcome).unwrap();
            }
            assert!(!ledger.on_ack_frame(6, Some(11)));
            ledger
        };
        let mut ledger = sent();
        assert!(ledger
            .detect_lost(at(1), &rtt, per_path, &LossThresholds::default())
            .packets
            .is_empty());
        // 9/8 * 100 ms + 25 ms after they were sent.
        assert_eq!(
            ledger.loss_time(),
            Some(at(137) + Duration::from_micros(500))
        );
        assert!(ledger
            .detect_lost(at(137), &rtt, per_path, &LossThresholds::default())
            .packets
            .is_empty());
        let lost = ledger.detect_lost(at(138), &rtt, per_path, &LossThresholds::default());
        assert_eq!(pns(&lost), vec![1, 2]);
        assert_eq!(lost.causes, vec![LossCause::TimeThreshold; 2]);
        let mut ledger = sent();
        // A frame spanning 1 and 2 but reporting no later packet of this path (sent before
        // one arrived) is no evidence either.
        assert!(!ledger.on_ack_frame(0, None));
        assert!(ledger
            .detect_lost(at(2), &rtt, per_path, &LossThresholds::default())
            .packets
            .is_empty());
        // A frame that reports 6 and spans 1 and 2 without them: now they are lost.
        assert!(ledger.on_ack_frame(0, Some(6)));
        let lost = ledger.detect_lost(at(3), &rtt, per_path, &LossThresholds::default());
        assert_eq!(pns(&lost), vec![1, 2]);
        assert_eq!(lost.causes, vec![LossCause::PacketThreshold; 2]);
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
