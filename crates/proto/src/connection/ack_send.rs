//! Writing ACK frames into outgoing packets: which spaces a packet on a path acknowledges
//! (RFC 9000 §13.2, Alibaba report §2.2, XLINK ACK path choice, picoquic's ACK on all paths).

use mpquic_wire::frame::{AckFrame, Frame};

use super::Connection;
use crate::ack::AckPolicy;
use crate::path::PathId;
use crate::sent_frames::SentFrames;
use crate::space::SpaceId;
use crate::time::Timestamp;

impl Connection {
    /// RFC 9000 §13.2 / Alibaba report §2.2: the ACKs this packet on `path` carries: the one
    /// owed for the path's own space, ACKs owed by other paths when the policy moves them here
    /// (owner cannot send, or lowest-RTT ACK path), and with "ACK on all paths" (picoquic's fix,
    /// CCR 2022) one copy of every ACK another path sent, taking the space's largest packet.
    pub(crate) fn write_ack(
        &mut self,
        now: Timestamp,
        path: PathId,
        space: SpaceId,
        packet: &mut Vec<u8>,
        limit: usize,
        sent: &mut SentFrames,
    ) {
        let mut acked_spaces: Vec<SpaceId> = Vec::new();
        for (owner, owner_space) in self.ack_owners(path, space) {
            if !acked_spaces.contains(&owner_space)
                && self.write_one_ack(now, path, owner, owner_space, packet, limit, sent)
            {
                acked_spaces.push(owner_space);
                if let Some(p) = self.paths.get_mut(&owner) {
                    p.ack_state(owner_space).on_ack_sent();
                }
                self.owe_ack_copies(path, owner_space);
            }
        }
        let copy_due = self.paths.get(&path).is_some_and(|p| p.ack_copy_pending);
        let copy_space = self.layout.space_for(path);
        if copy_due && !acked_spaces.contains(&copy_space) {
            // The copy settles nothing: it repeats what the space has received.
            if self.write_one_ack(now, path, path, copy_space, packet, limit, sent) {
                if let Some(p) = self.paths.get_mut(&path) {
                    p.ack_copy_pending = false;
                }
            }
        } else if let Some(p) = self.paths.get_mut(&path) {
            p.ack_copy_pending = false;
        }
    }

    /// Write the ACK of `owner_space`: with the owner's own largest packet when `owner` owes
    /// it (report §2.2), otherwise (a copy) with the space's largest. Returns whether written.
    #[allow(clippy::too_many_arguments)]
    fn write_one_ack(
        &mut self,
        now: Timestamp,
        path: PathId,
        owner: PathId,
        owner_space: SpaceId,
        packet: &mut Vec<u8>,
        limit: usize,
        sent: &mut SentFrames,
    ) -> bool {
        let Some(record) = self.records.get(&owner_space) else {
            return false;
        };
        let default_state = crate::ack::PathAckState::default();
        let owned = self
            .paths
            .get(&owner)
            .and_then(|p| p.acks.get(&owner_space))
            .map(Box::as_ref);
        // A copy starts, like the owner's ACK, at the largest packet received on its own
        // path (report §2.2): ranges below that path's packets then reach its oldest ones,
        // where starting at the space's largest would leave them out under the range limit
        // and make the sender declare them lost.
        let (state, override_largest) = match owned.filter(|a| a.largest().is_some()) {
            Some(state) => (state, None),
            None => (&default_state, record.largest()),
        };
        let Some(plan) = self.ack_policy().plan(record, state, override_largest, now) else {
            if override_largest.is_none() {
                // Everything this path could report has left the record (ACK-of-ACK pruning
                // or the range cap): nothing remains to acknowledge, so the path owes nothing.
                // Left owed, its ACK would stay due forever and nothing else could be sent
                // for it.
                if let Some(p) = self.paths.get_mut(&owner) {
                    p.ack_state(owner_space).on_ack_sent();
                }
            }
            return false;
        };
        let ranges = plan.ranges.len();
        let frame = Frame::Ack(AckFrame {
            path_id: self.layout.ack_path_id(owner_space),
            largest: plan.largest,
            ack_delay: plan.ack_delay,
            ranges: plan.ranges,
            // RFC 9000 §13.4.1 / RFC 10069 PATH_ACK 0x3f: the space's counts, once any packet
            // arrived marked (an ACK without ECN stays the smaller type otherwise).
            ecn: Some(record.ecn).filter(|c| *c != Default::default()),
        });
        // Measuring the frame walks every range once more (the varint lengths of up to 64
        // ranges, for every ACK frame sent): skipped when even the longest encoding fits.
        // Only a frame that fits is ever written, as before (a written and then removed one
        // would still grow the buffer, and the datagram buffers are reused).
        let start = packet.len();
        if start + ack_frame_len_bound(ranges) > limit && start + frame.encoded_len() > limit {
            return false;
        }
        frame.encode(packet);
        let len = packet.len() - start;
        if let Frame::Ack(ack) = frame {
            self.record(owner_space).on_ranges_reported(&ack.ranges);
            sent.acks.push((owner_space, ack.ranges));
        }
        self.stats.on_ack_sent(len, ranges);
        if let Some(p) = self.paths.get_mut(&path) {
            p.counters.ack_frames_sent += 1;
            p.counters.ack_frame_bytes += len as u64;
        }
        true
    }

    /// With "ACK on all paths", an ACK sent on `path` is owed once on every other path of the
    /// same space.
    fn owe_ack_copies(&mut self, path: PathId, space: SpaceId) {
        if !self.ack_policy().copies_on_other_paths(space) {
            return;
        }
        let layout = &self.layout;
        for (&id, p) in self.paths.iter_mut() {
            if id != path && p.is_usable() && layout.space_for(id) == space {
                p.ack_copy_pending = true;
            }
        }
    }

    /// (owner path, space) pairs whose owed ACK a packet on `path` settles.
    fn ack_owners(&self, path: PathId, space: SpaceId) -> Vec<(PathId, SpaceId)> {
        let owes = |id: PathId, s: SpaceId| {
            self.paths
                .get(&id)
                .and_then(|p| p.acks.get(&s))
                .is_some_and(|a| owes_ack(s, a))
        };
        let mut owners = Vec::new();
        if owes(path, space) {
            owners.push((path, space));
        }
        if matches!(space, SpaceId::Initial | SpaceId::Handshake) {
            return owners;
        }
        // ACKs of other paths' spaces counted on this path (report §2.2 off: the ACK state of
        // a space lives on the path its ACKs are sent on).
        if let Some(p) = self.paths.get(&path) {
            for (&s, a) in &p.acks {
                if s != space && matches!(s, SpaceId::Data(_)) && owes_ack(s, a) {
                    owners.push((path, s));
                }
            }
        }
        let lowest_rtt_here = self.ack_policy().on_lowest_rtt_path() && self.is_lowest_rtt(path);
        for &id in self.paths.keys() {
            let s = self.layout.space_for(id);
            if id != path && owes(id, s) && (!self.can_address(id) || lowest_rtt_here) {
                owners.push((id, s));
            }
        }
        owners
    }

    /// The ACK policy of the connection's settings and space layout (for ACKs we send; the
    /// peer's ACK_FREQUENCY request applies where received packets are counted).
    pub(crate) fn ack_policy(&self) -> AckPolicy<'_> {
        AckPolicy::new(
            &self.config.ack,
            self.layout.report_rules(),
            self.layout.gaps_signal_loss(),
        )
    }

    fn is_lowest_rtt(&self, path: PathId) -> bool {
        let Some(me) = self.paths.get(&path) else {
            return false;
        };
        self.paths
            .values()
            .filter(|p| p.is_usable())
            .all(|p| p.rtt.smoothed() >= me.rtt.smoothed())
    }
}

/// Whether a space's ACK state asks for an ACK frame in the next packet. In the application
/// space only once an ack-eliciting packet arrived: acknowledging ACK-only packets is never
/// required (RFC 9000 §13.2.1), the peer learns of them from the next ACK anyway (every
/// twentieth ACK-only packet carries a PING, `send.rs`), and in a download every data packet
/// would otherwise carry an ACK of the receiver's ACK-only packets. With one space over several
/// paths those arrive out of order and their ACK has up to 32 ranges: 40 bytes in half the
/// data packets, 1.2 % of a three-path download's goodput (issue 15). Initial and Handshake
/// packets keep acknowledging everything received (ACKs of ACK-only packets there reveal a lost
/// first flight sooner, RFC 9002 §6.1.1).
fn owes_ack(space: SpaceId, state: &crate::ack::PathAckState) -> bool {
    match space {
        SpaceId::Data(_) => state.has_unacked_eliciting(),
        _ => state.has_unacked(),
    }
}

/// An upper bound on the encoded length of an ACK or PATH_ACK frame with `ranges` ranges
/// (RFC 9000 §19.3, RFC 10069): every field a varint of at most 8 bytes (type, path ID,
/// largest, delay, range count, first range, three ECN counts), two per further range.
fn ack_frame_len_bound(ranges: usize) -> usize {
    9 * 8 + ranges * 16
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ack::{AckConfig, PathAckState};

    #[test]
    fn ack_only_packets_are_not_acknowledged_on_their_own_in_the_application_space() {
        let config = AckConfig::default();
        let arrive = |eliciting: bool| {
            let mut state = PathAckState::default();
            state.on_packet(
                7,
                Timestamp::ZERO,
                eliciting,
                false,
                &config,
                config.max_ack_delay(),
            );
            state
        };
        let ack_only = arrive(false);
        assert!(!owes_ack(SpaceId::Data(PathId::ZERO), &ack_only));
        assert!(owes_ack(SpaceId::Initial, &ack_only));
        assert!(owes_ack(SpaceId::Handshake, &ack_only));
        let eliciting = arrive(true);
        assert!(owes_ack(SpaceId::Data(PathId::ZERO), &eliciting));
        let mut acked = eliciting;
        acked.on_ack_sent();
        assert!(!owes_ack(SpaceId::Data(PathId::ZERO), &acked));
    }
}
