//! Writing ACK frames into outgoing packets: which spaces a packet on a path acknowledges
//! (RFC 9000 §13.2, Alibaba report §2.2, XLINK ACK path choice, picoquic's ACK on all paths).

use mpquic_wire::frame::{AckFrame, Frame};

use super::Connection;
use crate::ack::{plan_ack, AckPathChoice};
use crate::path::PathId;
use crate::sent_frames::SentFrames;
use crate::space::SpaceId;
use crate::time::Timestamp;

impl Connection {
    /// RFC 9000 §13.2 / Alibaba report §2.2: the ACKs this packet on `path` carries: the one
    /// owed for the path's own space, plus ACKs owed by other paths when the policy moves them
    /// here (abandoned owner, lowest-RTT ACK path, or ACK on all paths).
    pub(crate) fn write_ack(
        &mut self,
        now: Timestamp,
        path: PathId,
        space: SpaceId,
        packet: &mut Vec<u8>,
        limit: usize,
        sent: &mut SentFrames,
    ) {
        let config = self.config.clone();
        let mut acked_spaces: Vec<SpaceId> = Vec::new();
        for (owner, owner_space, mark) in self.ack_owners(path, space) {
            if acked_spaces.contains(&owner_space) {
                continue;
            }
            let Some(record) = self.records.get(&owner_space) else {
                continue;
            };
            let Some(state) = self
                .paths
                .get(&owner)
                .and_then(|p| p.acks.get(&owner_space))
            else {
                continue;
            };
            // Marking owners take their own largest (report §2.2); others the space's largest.
            let override_largest = if mark { None } else { record.largest() };
            let Some(plan) = plan_ack(record, state, override_largest, now, &config.ack) else {
                continue;
            };
            let frame = Frame::Ack(AckFrame {
                path_id: self.layout.ack_path_id(owner_space),
                largest: plan.largest,
                ack_delay: plan.ack_delay,
                ranges: plan.ranges,
                ecn: None,
            });
            let len = frame.encoded_len();
            if packet.len() + len > limit {
                continue;
            }
            frame.encode(packet);
            acked_spaces.push(owner_space);
            sent.ack = Some((owner_space, plan.largest));
            let ranges = if let Frame::Ack(a) = &frame {
                a.ranges.len()
            } else {
                0
            };
            self.stats.on_ack_sent(len, ranges);
            if let Some(p) = self.paths.get_mut(&path) {
                p.counters.ack_frames_sent += 1;
                p.counters.ack_frame_bytes += len as u64;
            }
            if mark {
                if let Some(p) = self.paths.get_mut(&owner) {
                    p.ack_state(owner_space).on_ack_sent();
                }
                self.record(owner_space).on_ack_sent();
            }
        }
    }

    /// (owner path, space, whether sending settles the owner's ACK state) for a packet on `path`.
    fn ack_owners(&self, path: PathId, space: SpaceId) -> Vec<(PathId, SpaceId, bool)> {
        let owes = |id: PathId, s: SpaceId| {
            self.paths
                .get(&id)
                .and_then(|p| p.acks.get(&s))
                .is_some_and(|a| a.has_unacked())
        };
        let mut owners = Vec::new();
        if owes(path, space) {
            owners.push((path, space, true));
        }
        if matches!(space, SpaceId::Initial | SpaceId::Handshake) {
            return owners;
        }
        let ack_config = &self.config.ack;
        let lowest_rtt_here =
            ack_config.ack_path == AckPathChoice::LowestRtt && self.is_lowest_rtt(path);
        for &id in self.paths.keys() {
            let s = self.layout.space_for(id);
            if id == path || !owes(id, s) {
                continue;
            }
            if !self.can_address(id) || lowest_rtt_here {
                owners.push((id, s, true));
            } else if ack_config.ack_on_all_paths {
                owners.push((id, s, false));
            }
        }
        owners
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
