//! Copies of a redundant scheduler's packets (CoNEXT 2017, seed 004: "redundant" sends every
//! packet on every path): the stream data of each packet the scheduler places on one path is
//! queued for each other usable path, and sent there as soon as that path has room, oldest
//! first, ahead of new data.
//!
//! Each path has its own queue of copies, and a copy goes out only on its own path. Putting the
//! copy back into the shared retransmission queue for the next packet to take (what this
//! replaced) sent it on the *same* fast path again, where it was copied again: each packet's
//! data went out over and over until acknowledged; 300 KB over two 50 Mbit/s paths took 20.8 s
//! and 250 MB of datagrams, 2 MB over 10 + 20 Mbit/s 51 s (BBR) to 136 s (Cubic), where
//! min-RTT takes 0.3 s and 1.2 s. A queue holds at most [`MAX_QUEUED_COPIES`] packets' data
//! (the oldest is dropped), and copies of data acknowledged meanwhile are skipped, so a slower
//! path lags without holding the faster one back.

use std::collections::VecDeque;

use super::send::PacketPlan;
use super::{Connection, Transmit};
use crate::crypto::Epoch;
use crate::path::PathId;
use crate::streams::{SentStreamFrames, StreamChunks};
use crate::time::Timestamp;

/// Packets' worth of copies one path may have waiting; older ones are dropped first (by the
/// time a path is this far behind, the faster one has mostly delivered them).
const MAX_QUEUED_COPIES: usize = 64;

/// The copies waiting for each path other than the one their original went on.
#[derive(Debug, Default)]
pub(crate) struct PendingCopies {
    queues: Vec<(PathId, VecDeque<StreamChunks>)>,
}

impl PendingCopies {
    fn queue_mut(&mut self, id: PathId) -> &mut VecDeque<StreamChunks> {
        let i = match self.queues.iter().position(|(q, _)| *q == id) {
            Some(i) => i,
            None => {
                self.queues.push((id, VecDeque::new()));
                self.queues.len() - 1
            }
        };
        &mut self.queues[i].1
    }
}

impl Connection {
    /// After the scheduler's packet on `path`: queue a copy of its stream data for every other
    /// usable path.
    pub(super) fn queue_copies(&mut self, path: PathId) {
        let paths = &self.paths;
        let Some(stream) = paths
            .get(&path)
            .and_then(|p| p.ledgers[Epoch::Data.index()].newest())
            .map(|last| &last.frames.streams.stream)
            .filter(|stream| !stream.is_empty())
        else {
            return;
        };
        let copies = self.copies.get_or_insert_with(Box::default);
        // Queues of paths gone or unusable go; empty ones are made again when needed.
        copies
            .queues
            .retain(|(id, q)| !q.is_empty() && paths.get(id).is_some_and(|p| p.is_usable()));
        for target in paths.values().filter(|q| q.id != path && q.is_usable()) {
            let queue = copies.queue_mut(target.id);
            if queue.len() == MAX_QUEUED_COPIES {
                queue.pop_front();
            }
            queue.push_back(stream.clone());
        }
    }

    /// Send the oldest still-unacknowledged copy waiting for a path that can send now.
    pub(super) fn send_copy(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        let targets = self.copies.as_ref().map_or(0, |c| c.queues.len());
        for i in 0..targets {
            let Some(copies) = self.copies.as_deref() else {
                break;
            };
            let target = copies.queues[i].0;
            if copies.queues[i].1.is_empty() || !self.path_can_send_data(now, target) {
                continue;
            }
            let Some(max) = self.send_budget(target) else {
                continue;
            };
            // Only what is still unacknowledged: an ACK may have come in since the original left.
            let copy = loop {
                let Some(stream) = self
                    .copies
                    .as_deref_mut()
                    .and_then(|c| c.queues[i].1.pop_front())
                else {
                    break None;
                };
                let original = SentStreamFrames {
                    stream,
                    ..SentStreamFrames::default()
                };
                let copy = self.streams.retransmittable_copy(&original);
                if !copy.stream.is_empty() {
                    break Some(copy);
                }
            };
            let Some(copy) = copy else {
                continue;
            };
            self.streams.on_frames_lost(&copy);
            let plan = PacketPlan {
                data: true,
                ..PacketPlan::default()
            };
            if self
                .build_packet(now, target, Epoch::Data, buf, max, plan)
                .is_some()
            {
                self.mark_newest_as_copy(target);
                return self.finish_datagram(target, buf);
            }
        }
        None
    }
}
