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
use crate::recovery::ledger::is_copyable;
use crate::recovery::{Ledger, SentPacket};
use crate::reinjection::{ReinjectionContext, SourcePath, TailCutoff};
use crate::streams::SentStreamFrames;
use crate::time::{Duration, Timestamp};

/// Stream bytes below this offset count as the first frame of a video (first-frame acceleration).
pub(super) const FIRST_FRAME_BYTES: u64 = 64 * 1024;
/// Not-yet-copied packets considered per re-injection attempt (bounds the policy calls per send).
const REINJECTION_SCAN: usize = 64;

/// The player state a client reports (XLINK §4.2).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QoeReport {
    /// Bytes the player has buffered.
    pub cached_bytes: u64,
    /// Video frames the player has buffered.
    pub cached_frames: u64,
    /// Play time the buffer holds, in milliseconds (drives QoE-controlled re-injection).
    pub play_time_left_ms: u64,
    /// The stream's bitrate, in kbit/s.
    pub bitrate_kbps: u64,
    /// The video's frame rate, in frames per second.
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
    pub(crate) fn on_signal(&mut self, signal: QoeSignal) {
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
        if self.reinjection.is_off()
            || self.streams.has_pending_data()
            || self.has_pending_datagrams()
            || !self.state_allows_data()
        {
            return None;
        }
        if !self.has_reinjection_candidate() {
            // No packet to copy: of the views only their pacing wake-up matters.
            self.refresh_pacing_wakeup(now);
            if self.nothing_outstanding() {
                // Idle: no views' buffer kept either (as below).
                self.views_buf = Vec::new();
            }
            return None;
        }
        let views = self.path_views(now);
        // Nothing can happen without a path to copy to: the loop below would only compute
        // estimates (it has no side effects before it finds one).
        let no_target = !views.iter().any(|v| v.usable && v.can_send);
        if no_target {
            // Idle (nothing outstanding): the views' buffer is not kept either.
            if !self.nothing_outstanding() {
                self.views_buf = views;
            }
            return None;
        }
        let play_time_left = self
            .qoe
            .peer
            .map(|s| Duration::from_millis(s.play_time_left_ms));
        // MP-HoL blocking (XLINK §3, Fig. 6) is the tail stuck on the slowest path: its copies get
        // the other paths' window first, before the faster paths' tails are duplicated.
        let sources = slowest_first(
            self.paths
                .keys()
                .map(|&id| (self.estimated_delivery(now, id), id))
                .collect(),
        );
        let result = self.reinject_from(now, buf, &views, sources, play_time_left);
        self.views_buf = views;
        result
    }

    /// Whether some path has an in-flight packet with stream data not yet re-injected (the
    /// condition of [`tail_candidates`]).
    fn has_reinjection_candidate(&self) -> bool {
        self.paths
            .values()
            .any(|p| p.ledgers[Epoch::Data.index()].has_copyable())
    }

    /// The re-injection loop of [`Self::send_reinjection`], over `sources` slowest first.
    fn reinject_from(
        &mut self,
        now: Timestamp,
        buf: &mut Vec<u8>,
        views: &[crate::scheduler::PathView],
        sources: Vec<(Duration, PathId)>,
        play_time_left: Option<Duration>,
    ) -> Option<Transmit> {
        for (est_current, source) in sources {
            let Some((target, est_other)) = self.best_other_path(now, views, source) else {
                continue;
            };
            let Some(current_path) = self.paths.get(&source).map(|p| source_path(p, now)) else {
                continue;
            };
            let cutoff = self.reinjection.tail_cutoff(est_other, current_path);
            let copy =
                self.pick_tail_packet(now, source, cutoff, |packet, ahead| ReinjectionContext {
                    play_time_left,
                    est_delivery_current: est_current,
                    est_delivery_other: est_other,
                    stream_start: starts_stream(packet),
                    age: now.saturating_duration_since(packet.time_sent),
                    ahead,
                    current_path,
                });
            let Some(copy) = copy else {
                continue;
            };
            let bytes: u64 = copy.stream.iter().map(|c| c.len).sum();
            self.streams.on_frames_lost(&copy);
            let max = self.send_budget(target)?;
            let plan = super::send::PacketPlan {
                data: true,
                probe: false,
                pad_to: None,
                mtu_probe: false,
                lone_probe: None,
            };
            if self
                .build_packet(now, target, Epoch::Data, buf, max, plan)
                .is_some()
            {
                self.stats.reinjected_bytes += bytes;
                self.mark_newest_as_copy(target);
                return self.finish_datagram(target, buf);
            }
        }
        None
    }

    /// Record the packet just built on `path` as a copy, so that it is never re-injected in
    /// turn. Otherwise a copy could be copied back to the path its original waits on, and that
    /// copy again, for as long as each path's estimate says the other delivers first: a client
    /// sent its 8-byte request 500 times within one millisecond on two paths (2 Mbit/s 150 ms
    /// and 100 Mbit/s 40 ms with 1 ms of reordering jitter, path MTU discovery probing on the
    /// first, BBR), and the burst overtook the server's one-byte packet-number window (68
    /// packets failed authentication). Test `a_copy_is_not_copied_again` (lab `multipath.rs`).
    pub(super) fn mark_newest_as_copy(&mut self, path: PathId) {
        if let Some(p) = self.paths.get_mut(&path) {
            p.ledgers[Epoch::Data.index()].mark_newest_as_copy();
        }
    }

    /// The oldest in-flight packet on `source` with unacknowledged stream data that the policy
    /// wants re-injected; it is marked so it is copied only once. `context` builds the policy's
    /// view of a packet from it and the bytes in flight ahead of it (its own included); the
    /// policy's `cutoff`, if it has one, answers instead without that view.
    fn pick_tail_packet(
        &mut self,
        now: Timestamp,
        source: PathId,
        cutoff: Option<TailCutoff>,
        context: impl Fn(&SentPacket, u64) -> ReinjectionContext,
    ) -> Option<SentStreamFrames> {
        let path = self.paths.get_mut(&source)?;
        let ledger = &mut path.ledgers[Epoch::Data.index()];
        // The bytes ahead of any packet are at most those in flight: when the cutoff copies
        // nothing up to there, the scan (up to 64 candidates, more packets) would find nothing.
        if cutoff.is_some_and(|c| c.copies_none_within(ledger.bytes_in_flight())) {
            return None;
        }
        let (mut copied, mut found) = (0, None);
        for (ahead, packet) in tail_candidates(ledger) {
            let copies = match &cutoff {
                Some(cutoff) => {
                    let age = now.as_nanos().saturating_sub(packet.time_sent.as_nanos());
                    cutoff.copies(age, ahead)
                }
                None => self.reinjection.should_reinject(&context(packet, ahead)),
            };
            if !copies {
                continue;
            }
            packet.reinjected = true;
            copied += 1;
            let copy = self.streams.retransmittable_copy(&packet.frames.streams);
            let stream_only = SentStreamFrames {
                stream: copy.stream,
                ..SentStreamFrames::default()
            };
            if !stream_only.stream.is_empty() {
                found = Some(stream_only);
                break;
            }
        }
        ledger.note_copied(copied);
        found
    }

    /// The usable path other than `source` that can send now with the lowest estimated delivery,
    /// with that estimate.
    fn best_other_path(
        &self,
        now: Timestamp,
        views: &[crate::scheduler::PathView],
        source: PathId,
    ) -> Option<(PathId, Duration)> {
        views
            .iter()
            .filter(|v| v.id != source && v.usable && v.can_send)
            .map(|v| (v.id, self.estimated_delivery(now, v.id)))
            .min_by_key(|&(id, est)| (est, id))
    }

    /// One-way delivery estimate of data sent now on a path (see [`delivery_estimate`]).
    fn estimated_delivery(&self, now: Timestamp, id: PathId) -> Duration {
        let Some(p) = self.paths.get(&id) else {
            return Duration::MAX;
        };
        let oldest = p.ledgers[Epoch::Data.index()]
            .outstanding()
            .find(|(_, s)| s.in_flight)
            .map(|(_, s)| now.saturating_duration_since(s.time_sent));
        delivery_estimate(p.rtt.smoothed(), p.bytes_in_flight(), p.cc.window(), oldest)
    }
}

/// One-way delivery estimate of data sent now on a path: half an RTT plus the queue ahead of it
/// (`in_flight` bytes drained at `cwnd` per RTT).
///
/// A path whose capacity dropped to near zero stops producing RTT samples, so its smoothed RTT
/// stays stale while its data waits. The age of its oldest unacknowledged packet bounds the
/// delivery from below: that packet has been on its way for at least `age - srtt/2` (its ACK
/// needs about half an RTT back), and new data queues behind it. Without this bound XLINK's
/// comparison of the delivery time on the current path with the other path's (Alg. 1) never sees
/// the stall that causes the multipath head-of-line blocking it is meant to cut.
fn delivery_estimate(
    srtt: Duration,
    in_flight: u64,
    cwnd: u64,
    oldest_unacked_age: Option<Duration>,
) -> Duration {
    let queue = srtt.mul_f64(in_flight as f64 / cwnd.max(1) as f64);
    let stalled = oldest_unacked_age.map_or(Duration::ZERO, |age| age.saturating_sub(srtt / 2));
    (srtt / 2 + queue).max(stalled)
}

/// Source paths in re-injection order: slowest estimated delivery first. Multipath
/// head-of-line blocking (XLINK §3, Fig. 6) is the tail stuck on the slow path, so its copies
/// must get the faster paths' congestion window before the fast path's own tail is duplicated
/// onto the slow one (each call sends one copy, and the window room runs out).
fn slowest_first(mut paths: Vec<(Duration, PathId)>) -> Vec<(Duration, PathId)> {
    paths.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    paths
}

/// The packets of a path's ledger that may still be re-injected, oldest first: not yet copied
/// and carrying stream data, at most [`REINJECTION_SCAN`] of them, each with the bytes in flight
/// sent before it plus its own size (the path's queue ahead of it). Already-copied packets are
/// skipped *before* the limit applies, so once the oldest packets were copied the younger part
/// of a long tail is still reached.
fn tail_candidates(ledger: &mut Ledger) -> impl Iterator<Item = (u64, &mut SentPacket)> {
    let mut ahead = 0u64;
    ledger
        .outstanding_mut()
        .filter_map(move |(_, p)| {
            crate::work::count_reinjection_scan(1);
            if p.in_flight {
                ahead += p.size;
            }
            // Only stream data is copied: DATAGRAM frames (RFC 9221 §5.2) are never sent twice.
            is_copyable(p).then_some((ahead, p))
        })
        .take(REINJECTION_SCAN)
}

/// Whether a packet carries stream bytes below [`FIRST_FRAME_BYTES`] (XLINK's first frame).
fn starts_stream(packet: &SentPacket) -> bool {
    packet
        .frames
        .streams
        .stream
        .iter()
        .any(|c| c.offset < FIRST_FRAME_BYTES)
}

/// What a re-injection policy sees of the path a packet waits on.
fn source_path(p: &crate::path::Path, now: Timestamp) -> SourcePath {
    SourcePath {
        srtt: p.rtt.smoothed(),
        min_rtt: p.rtt.min(),
        delivery_rate: p.delivery_rate_estimate(now),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sent_frames::SentFrames;
    use crate::streams::StreamChunk;
    use mpquic_wire::stream_id::StreamId;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn delivery_estimate_sees_a_stalled_path() {
        // Healthy: half an RTT plus a full window queued (in flight = cwnd).
        assert_eq!(
            delivery_estimate(ms(80), 30_000, 30_000, Some(ms(70))),
            ms(120)
        );
        assert_eq!(delivery_estimate(ms(80), 0, 30_000, None), ms(40));
        // Capacity fell to near zero 900 ms ago: srtt is stale, the oldest packet is not.
        assert_eq!(
            delivery_estimate(ms(80), 30_000, 30_000, Some(ms(900))),
            ms(860)
        );
        // So a 20 ms path now beats it, where the stale srtt said otherwise.
        assert!(delivery_estimate(ms(20), 60_000, 60_000, Some(ms(20))) < ms(120));
    }

    #[test]
    fn the_slowest_source_is_rescued_first() {
        let p = PathId::new;
        let order = slowest_first(vec![(ms(30), p(0)), (ms(860), p(1)), (ms(30), p(2))]);
        let ids: Vec<PathId> = order.iter().map(|&(_, id)| id).collect();
        assert_eq!(ids, vec![p(1), p(0), p(2)]);
    }

    fn stream_packet(pn: u64, offset: u64) -> SentPacket {
        let mut frames = SentFrames::default();
        frames.streams.stream.push(StreamChunk {
            id: StreamId(1),
            offset,
            len: 1000,
            fin: false,
        });
        SentPacket {
            pn,
            space: crate::space::SpaceId::Data(PathId::ZERO),
            time_sent: Timestamp::from_nanos(pn * 1_000_000),
            size: 1100,
            ack_eliciting: true,
            in_flight: true,
            delivery: Default::default(),
            frames,
            reinjected: false,
            old_route: false,
            ecn: false,
        }
    }

    /// RFC 9221 §5.2: DATAGRAM frames are never sent twice: a packet with only datagrams is
    /// no re-injection candidate (nothing to resend when lost either), and a packet with
    /// stream data and datagrams is, but only its stream data is copied (`pick_tail_packet`
    /// copies `frames.streams.stream`).
    #[test]
    fn packets_with_only_datagrams_are_never_reinjected() {
        let mut ledger = Ledger::default();
        let only_datagrams = SentFrames {
            datagrams: 3,
            ..SentFrames::default()
        };
        assert!(
            only_datagrams.is_empty(),
            "nothing in it is resent when lost"
        );
        ledger.on_sent(SentPacket {
            frames: only_datagrams,
            ..stream_packet(0, 0)
        });
        let mut mixed = stream_packet(1, 1000);
        mixed.frames.datagrams = 1;
        ledger.on_sent(mixed);
        let pns: Vec<u64> = tail_candidates(&mut ledger).map(|(_, p)| p.pn).collect();
        assert_eq!(pns, vec![1]);
    }

    #[test]
    fn copied_packets_do_not_hide_the_rest_of_a_long_tail() {
        let mut ledger = Ledger::default();
        let n = REINJECTION_SCAN as u64 + 10;
        for pn in 0..n {
            ledger.on_sent(stream_packet(pn, pn * 1000));
        }
        // An ACK-only packet in between carries nothing to copy.
        ledger.on_sent(SentPacket {
            frames: SentFrames::default(),
            ..stream_packet(n, 0)
        });
        for (_, p) in tail_candidates(&mut ledger).take(REINJECTION_SCAN) {
            p.reinjected = true;
        }
        ledger.note_copied(REINJECTION_SCAN);
        let rest: Vec<(u64, u64)> = tail_candidates(&mut ledger)
            .map(|(ahead, p)| (ahead, p.pn))
            .collect();
        // Each with the bytes in flight up to and including it (1,100 per packet), copied
        // packets counted: they are still in flight ahead of the rest.
        let expected: Vec<(u64, u64)> = (REINJECTION_SCAN as u64..n)
            .map(|pn| ((pn + 1) * 1100, pn))
            .collect();
        assert_eq!(rest, expected);
    }
}
