//! XLINK (SIGCOMM 2021): QoE feedback from the receiver's player and QoE-controlled
//! re-injection of stream tails on another path.
//!
//! The QOE_CONTROL_SIGNAL frame (experimental type 0x3f5153) is only sent and accepted when both
//! sides advertised the experimental `enable_qoe_feedback` transport parameter (0x3f5154), so
//! standard peers never see it.

use mpquic_wire::frame::{Frame, QoeSignal};

use super::{Connection, Transmit};
use crate::crypto::Epoch;
use crate::path::PathId;
use crate::reinjection::ReinjectionContext;
use crate::streams::SentStreamFrames;
use crate::time::{Duration, Timestamp};

/// Stream bytes below this offset count as the first frame of a video (first-frame acceleration).
pub const FIRST_FRAME_BYTES: u64 = 64 * 1024;
/// Outstanding packets examined per re-injection attempt (bounds the cost of a send call).
const REINJECTION_SCAN: usize = 64;

/// The player state a client reports (XLINK §4.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QoeReport {
    pub cached_bytes: u64,
    pub cached_frames: u64,
    pub play_time_left_ms: u64,
    pub bitrate_kbps: u64,
    pub frame_rate: u64,
}

#[derive(Debug, Default)]
pub(crate) struct QoeState {
    pub negotiated: bool,
    next_sequence: u64,
    pending: Option<QoeSignal>,
    peer: Option<QoeSignal>,
}

impl QoeState {
    pub fn on_signal(&mut self, signal: QoeSignal) {
        if self.peer.is_none_or(|p| signal.sequence > p.sequence) {
            self.peer = Some(signal);
        }
    }
}

/// Why a QoE report could not be queued.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the peer did not negotiate QoE feedback")]
pub struct QoeNotNegotiated;

impl Connection {
    /// Queue a player-state report for the peer (client side of XLINK). Only the newest report
    /// is kept if several are queued before a packet goes out.
    pub fn send_qoe_feedback(&mut self, report: QoeReport) -> Result<(), QoeNotNegotiated> {
        if !self.qoe.negotiated {
            return Err(QoeNotNegotiated);
        }
        self.qoe.next_sequence += 1;
        self.qoe.pending = Some(QoeSignal {
            sequence: self.qoe.next_sequence,
            cached_bytes: report.cached_bytes,
            cached_frames: report.cached_frames,
            play_time_left_ms: report.play_time_left_ms,
            bitrate_kbps: report.bitrate_kbps,
            frame_rate: report.frame_rate,
        });
        Ok(())
    }

    /// The newest player-state report from the peer.
    pub fn peer_qoe(&self) -> Option<QoeReport> {
        self.qoe.peer.map(|s| QoeReport {
            cached_bytes: s.cached_bytes,
            cached_frames: s.cached_frames,
            play_time_left_ms: s.play_time_left_ms,
            bitrate_kbps: s.bitrate_kbps,
            frame_rate: s.frame_rate,
        })
    }

    /// Whether QoE feedback was negotiated.
    pub fn qoe_negotiated(&self) -> bool {
        self.qoe.negotiated
    }

    pub(crate) fn has_pending_qoe(&self) -> bool {
        self.qoe.pending.is_some()
    }

    /// Write the pending QoE frame, if it fits. Returns whether one was written.
    pub(crate) fn write_qoe(&mut self, packet: &mut Vec<u8>, limit: usize) -> bool {
        let Some(signal) = self.qoe.pending else {
            return false;
        };
        let frame = Frame::QoeControlSignal(signal);
        if packet.len() + frame.encoded_len() > limit {
            return false;
        }
        frame.encode(packet);
        self.qoe.pending = None;
        true
    }

    /// XLINK re-injection: when no new data waits, send a copy of an in-flight tail packet's
    /// stream frames on another path, if the policy agrees.
    pub(crate) fn send_reinjection(
        &mut self,
        now: Timestamp,
        buf: &mut Vec<u8>,
    ) -> Option<Transmit> {
        if self.config.reinjection.is_off()
            || self.streams.has_pending_data()
            || !self.state_allows_data()
        {
            return None;
        }
        let views = self.path_views(now);
        let play_time_left = self
            .qoe
            .peer
            .map(|s| Duration::from_millis(s.play_time_left_ms));
        let sources: Vec<PathId> = self.paths.keys().copied().collect();
        for source in sources {
            let Some(target) = self.best_other_path(&views, source) else {
                continue;
            };
            let est_current = self.estimated_delivery(source);
            let est_other = self.estimated_delivery(target);
            let Some(copy) = self.pick_tail_packet(source, |stream_start| ReinjectionContext {
                play_time_left,
                est_delivery_current: est_current,
                est_delivery_other: est_other,
                stream_start,
            }) else {
                continue;
            };
            let bytes: u64 = copy.stream.iter().map(|c| c.len).sum();
            self.streams.on_frames_lost(&copy);
            let max = self.send_budget(target)?;
            let plan = super::send::PacketPlan {
                data: true,
                probe: false,
                pad_to: None,
            };
            if self
                .build_packet(now, target, Epoch::Data, buf, max, plan)
                .is_some()
            {
                self.stats.reinjected_bytes += bytes;
                return self.finish_datagram(target, buf);
            }
        }
        None
    }

    /// The oldest in-flight packet on `source` with unacknowledged stream data that the policy
    /// wants re-injected; it is marked so it is copied only once.
    fn pick_tail_packet(
        &mut self,
        source: PathId,
        context: impl Fn(bool) -> ReinjectionContext,
    ) -> Option<SentStreamFrames> {
        let path = self.paths.get_mut(&source)?;
        let ledger = &mut path.ledgers[Epoch::Data.index()];
        for (_, packet) in ledger.outstanding_mut().take(REINJECTION_SCAN) {
            if packet.reinjected || packet.frames.streams.stream.is_empty() {
                continue;
            }
            let stream_start = packet
                .frames
                .streams
                .stream
                .iter()
                .any(|c| c.offset < FIRST_FRAME_BYTES);
            if !self.reinjection.should_reinject(&context(stream_start)) {
                continue;
            }
            packet.reinjected = true;
            let copy = self.streams.retransmittable_copy(&packet.frames.streams);
            let stream_only = SentStreamFrames {
                stream: copy.stream,
                ..SentStreamFrames::default()
            };
            if !stream_only.stream.is_empty() {
                return Some(stream_only);
            }
        }
        None
    }

    /// The usable path other than `source` that can send now with the lowest estimated delivery.
    fn best_other_path(
        &self,
        views: &[crate::scheduler::PathView],
        source: PathId,
    ) -> Option<PathId> {
        views
            .iter()
            .filter(|v| v.id != source && v.usable && v.can_send)
            .min_by_key(|v| self.estimated_delivery(v.id))
            .map(|v| v.id)
    }

    /// One-way delivery estimate of new data on a path: half an RTT plus the queue ahead of it
    /// (bytes in flight drained at cwnd per RTT).
    fn estimated_delivery(&self, id: PathId) -> Duration {
        let Some(p) = self.paths.get(&id) else {
            return Duration::MAX;
        };
        let srtt = p.rtt.smoothed();
        let queue = srtt.mul_f64(p.bytes_in_flight() as f64 / p.cc.window().max(1) as f64);
        srtt / 2 + queue
    }
}
