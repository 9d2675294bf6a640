//! Writing stream-related frames into packets, and their acknowledgement and loss.

use mpquic_wire::frame::Frame;
use mpquic_wire::stream_id::{Dir, StreamId};

use super::send::{SendState, Written};
use super::{SentStreamFrames, StreamEvent, Streams};
use crate::time::{Duration, Timestamp};

/// Largest MAX_DATA frame: type + 8-byte varint.
const MAX_DATA_FRAME_LEN: usize = 1 + 8;
/// Largest MAX_STREAM_DATA frame: type + stream ID + limit.
const MAX_STREAM_DATA_FRAME_LEN: usize = 1 + 8 + 8;

/// Encodes `frame` into `out` if it fits below `limit` total bytes.
fn put(out: &mut Vec<u8>, limit: usize, frame: &Frame) -> bool {
    if out.len() + frame.encoded_len() > limit {
        return false;
    }
    frame.encode(out);
    true
}

impl Streams {
    /// Whether stream data (new or to retransmit) waits to be sent. Flow control never
    /// holds buffered data back: credit is reserved when the application writes.
    pub(crate) fn has_pending_data(&self) -> bool {
        let pending = |id| self.send.get(&id).is_some_and(|s| s.has_pending());
        self.retx_queue.any(pending) || self.send_queue.any(pending)
    }

    /// What the schedulers see of the send side (`scheduler::Backlog`): the bytes written and
    /// never sent on streams that may send, and how much more the peer's flow control admits
    /// for them: the smaller of the connection credit (MAX_DATA, RFC 9000 §4.1) left after the
    /// bytes sent and the sum of those streams' own credit (MAX_STREAM_DATA).
    pub(crate) fn send_backlog(&self) -> (u64, u64) {
        let mut unsent = 0u64;
        let mut stream_room = 0u64;
        self.send_queue.for_each(|id| {
            if let Some(s) = self.send.get(&id).filter(|s| s.has_pending()) {
                unsent += s.buf.unsent_len();
                stream_room += s.max_data.saturating_sub(s.buf.sent_offset());
            }
        });
        let sent = self.data_written.saturating_sub(unsent);
        let conn_room = self.peer_max_data.saturating_sub(sent);
        (unsent, stream_room.min(conn_room))
    }

    /// Whether a control frame (MAX_DATA, MAX_STREAM_DATA, MAX_STREAMS, *_BLOCKED,
    /// RESET_STREAM, STOP_SENDING) waits to be sent.
    pub(crate) fn has_pending_control(&self) -> bool {
        let send_live = |q: &std::collections::VecDeque<StreamId>,
                         f: fn(&super::send::SendStream) -> bool| {
            q.iter().any(|id| self.send.get(id).is_some_and(f))
        };
        let recv_live = |q: &std::collections::VecDeque<StreamId>,
                         f: fn(&super::recv::RecvStream) -> bool| {
            q.iter().any(|id| self.recv.get(id).is_some_and(f))
        };
        self.max_data_pending
            || self.remote.iter().any(|r| r.pending)
            || (self.data_blocked_pending && self.data_written >= self.peer_max_data)
            || self
                .local
                .iter()
                .any(|l| l.blocked_pending && l.next >= l.max)
            || send_live(&self.reset_queue, |s| s.state == SendState::ResetSent)
            || send_live(&self.blocked_queue, |s| s.is_writable() && s.credit() == 0)
            || recv_live(&self.stop_queue, |r| r.wants_stop_sending())
            || recv_live(&self.msd_queue, |r| r.wants_credit())
    }

    /// Appends pending control frames to `out` (at most `max_len` bytes) and records
    /// them in `sent`. `now` and `rtt` drive receive-window auto-tuning ([`super::flow`]).
    pub(crate) fn write_control_frames(
        &mut self,
        now: Timestamp,
        rtt: Duration,
        out: &mut Vec<u8>,
        max_len: usize,
        sent: &mut SentStreamFrames,
    ) {
        let limit = out.len() + max_len;
        self.write_resets(out, limit, sent);
        self.write_stop_sendings(out, limit, sent);
        if self.max_data_pending && out.len() + MAX_DATA_FRAME_LEN <= limit {
            let max = self.conn_window.update(now, rtt);
            Frame::MaxData(max).encode(out);
            self.max_data_pending = false;
            sent.max_data = true;
        }
        self.write_max_stream_datas(now, rtt, out, limit, sent);
        for dir in [Dir::Bi, Dir::Uni] {
            let r = &mut self.remote[dir as usize];
            if r.pending && put(out, limit, &Frame::MaxStreams { dir, count: r.max }) {
                r.pending = false;
                match dir {
                    Dir::Bi => sent.max_streams_bidi = true,
                    Dir::Uni => sent.max_streams_uni = true,
                }
            }
        }
        if self.data_blocked_pending {
            // Only while still blocked at the current limit (RFC 9000 §4.1).
            let still = self.data_written >= self.peer_max_data;
            if !still
                || put(
                    out,
                    limit,
                    &Frame::DataBlocked {
                        limit: self.peer_max_data,
                    },
                )
            {
                self.data_blocked_pending = false;
                sent.data_blocked |= still;
            }
        }
        self.write_stream_data_blocked(out, limit, sent);
        for dir in [Dir::Bi, Dir::Uni] {
            let l = &mut self.local[dir as usize];
            if l.blocked_pending {
                let still = l.next >= l.max;
                if !still || put(out, limit, &Frame::StreamsBlocked { dir, limit: l.max }) {
                    l.blocked_pending = false;
                    sent.streams_blocked[dir as usize] |= still;
                }
            }
        }
    }

    /// RESET_STREAM frames (RFC 9000 §19.4), sent until acknowledged.
    fn write_resets(&mut self, out: &mut Vec<u8>, limit: usize, sent: &mut SentStreamFrames) {
        while let Some(&id) = self.reset_queue.front() {
            let s = self.send.get_mut(&id);
            let info = s
                .as_ref()
                .filter(|s| s.state == SendState::ResetSent)
                .and_then(|s| s.reset);
            if let Some(info) = info {
                let frame = Frame::ResetStream {
                    id,
                    error_code: info.error_code,
                    final_size: info.final_size,
                };
                if !put(out, limit, &frame) {
                    return;
                }
                sent.reset_stream.push(id);
            }
            if let Some(s) = s {
                s.in_reset_queue = false;
            }
            self.reset_queue.pop_front();
        }
    }

    /// STOP_SENDING frames (RFC 9000 §19.5), while the stream is in "Recv" or "Size
    /// Known" (§3.5: unnecessary afterwards).
    fn write_stop_sendings(
        &mut self,
        out: &mut Vec<u8>,
        limit: usize,
        sent: &mut SentStreamFrames,
    ) {
        while let Some(&id) = self.stop_queue.front() {
            let r = self.recv.get_mut(&id);
            if let Some(r) = r.as_ref().filter(|r| r.wants_stop_sending()) {
                let error_code = r.stop_code.unwrap_or(0);
                if !put(out, limit, &Frame::StopSending { id, error_code }) {
                    return;
                }
                sent.stop_sending.push(id);
            }
            if let Some(r) = r {
                r.in_stop_queue = false;
            }
            self.stop_queue.pop_front();
        }
    }

    /// MAX_STREAM_DATA frames (RFC 9000 §19.10), only in "Recv" (§3.5).
    fn write_max_stream_datas(
        &mut self,
        now: Timestamp,
        rtt: Duration,
        out: &mut Vec<u8>,
        limit: usize,
        sent: &mut SentStreamFrames,
    ) {
        while let Some(&id) = self.msd_queue.front() {
            if out.len() + MAX_STREAM_DATA_FRAME_LEN > limit {
                return;
            }
            if let Some(r) = self.recv.get_mut(&id) {
                if r.wants_credit() {
                    let max = r.window.update(now, rtt);
                    Frame::MaxStreamData { id, max }.encode(out);
                    sent.max_stream_data.push(id);
                }
                r.in_msd_queue = false;
            }
            self.msd_queue.pop_front();
        }
    }

    /// STREAM_DATA_BLOCKED frames (RFC 9000 §19.13), while still blocked at that limit.
    fn write_stream_data_blocked(
        &mut self,
        out: &mut Vec<u8>,
        limit: usize,
        sent: &mut SentStreamFrames,
    ) {
        while let Some(&id) = self.blocked_queue.front() {
            if let Some(s) = self.send.get_mut(&id) {
                // RFC 9000 §3.5: STREAM_DATA_BLOCKED MUST NOT be sent after RESET_STREAM
                // (`is_writable` excludes "Reset Sent" and terminal states).
                if s.is_writable() && s.credit() == 0 {
                    let frame = Frame::StreamDataBlocked {
                        id,
                        limit: s.max_data,
                    };
                    if !put(out, limit, &frame) {
                        return;
                    }
                    // RFC 9000 §3.1: sending STREAM_DATA_BLOCKED enters "Send".
                    if s.state == SendState::Ready {
                        s.state = SendState::Send;
                    }
                    sent.stream_data_blocked.push(id);
                }
                s.in_blocked_queue = false;
            }
            self.blocked_queue.pop_front();
        }
    }

    /// Appends STREAM frames (each with a Length field) to `out`, at most `max_len`
    /// bytes: retransmissions first, then new data round-robin over streams (one
    /// stream fills as much of the packet as it can, the next packet starts with the
    /// next stream).
    pub(crate) fn write_stream_frames(
        &mut self,
        out: &mut Vec<u8>,
        max_len: usize,
        sent: &mut SentStreamFrames,
    ) {
        let limit = out.len() + max_len;
        while let Some(id) = self.retx_queue.front() {
            let Some(s) = self.send.get_mut(&id) else {
                self.retx_queue.pop_front();
                continue;
            };
            if !s.has_retransmit() {
                s.in_retx_queue = false;
                self.retx_queue.pop_front();
                continue;
            }
            let Some(w) = s.write_frame(id, true, out, limit - out.len()) else {
                return;
            };
            self.record(w, sent);
        }
        while let Some(id) = self.send_queue.pop_front() {
            let Some(s) = self.send.get_mut(&id) else {
                continue;
            };
            let mut wrote = false;
            while let Some(w) = s.write_frame(id, false, out, limit - out.len()) {
                wrote = true;
                let len = w.chunk.len;
                if w.retransmission {
                    self.stats.bytes_retransmitted += len;
                } else {
                    self.stats.bytes_sent += len;
                }
                sent.push_chunk(w.chunk);
            }
            if !s.has_pending() {
                s.in_send_queue = false;
            } else if wrote {
                self.send_queue.push_back(id, s.priority);
            } else {
                self.send_queue.push_front(id, s.priority);
                return;
            }
        }
    }

    fn record(&mut self, w: Written, sent: &mut SentStreamFrames) {
        if w.retransmission {
            self.stats.bytes_retransmitted += w.chunk.len;
        } else {
            self.stats.bytes_sent += w.chunk.len;
        }
        sent.push_chunk(w.chunk);
    }

    /// A packet carrying `sent` was acknowledged: frees acknowledged data; emits
    /// `Finished` when all data and the FIN are acknowledged ("Data Recvd", RFC 9000
    /// §3.1); an acknowledged RESET_STREAM ends the part ("Reset Recvd").
    pub(crate) fn on_frames_acked(&mut self, sent: &SentStreamFrames) {
        for c in &sent.stream {
            let Some(s) = self.send.get_mut(&c.id) else {
                continue;
            };
            if s.on_acked(c.offset, c.len, c.fin) {
                self.events.push_back(StreamEvent::Finished { id: c.id });
                self.remove_send(c.id);
            } else {
                self.notify_writable(c.id);
            }
        }
        for id in &sent.reset_stream {
            if self
                .send
                .get(id)
                .is_some_and(|s| s.state == SendState::ResetSent)
            {
                self.remove_send(*id);
            }
        }
    }

    /// A packet carrying `sent` was declared lost (or its contents are re-injected):
    /// unacknowledged stream data and FINs are queued for retransmission, and control
    /// frames that are still useful are queued again with their *current* values.
    pub(crate) fn on_frames_lost(&mut self, sent: &SentStreamFrames) {
        for c in &sent.stream {
            if let Some(s) = self.send.get_mut(&c.id) {
                s.on_lost(c.offset, c.len, c.fin);
                self.enqueue_send(c.id);
            }
        }
        self.max_data_pending |= sent.max_data;
        for id in &sent.max_stream_data {
            if let Some(r) = self.recv.get_mut(id) {
                if r.wants_credit() && !r.in_msd_queue {
                    r.in_msd_queue = true;
                    self.msd_queue.push_back(*id);
                }
            }
        }
        self.remote[Dir::Bi as usize].pending |= sent.max_streams_bidi;
        self.remote[Dir::Uni as usize].pending |= sent.max_streams_uni;
        if sent.data_blocked && self.data_written >= self.peer_max_data {
            self.data_blocked_pending = true;
        }
        for id in &sent.stream_data_blocked {
            if let Some(s) = self.send.get_mut(id) {
                if s.is_writable() && s.credit() == 0 && !s.in_blocked_queue {
                    s.in_blocked_queue = true;
                    self.blocked_queue.push_back(*id);
                }
            }
        }
        for dir in [Dir::Bi, Dir::Uni] {
            let l = &mut self.local[dir as usize];
            if sent.streams_blocked[dir as usize] && l.next >= l.max {
                l.blocked_pending = true;
            }
        }
        for id in &sent.reset_stream {
            if let Some(s) = self.send.get_mut(id) {
                if s.state == SendState::ResetSent && !s.in_reset_queue {
                    s.in_reset_queue = true;
                    self.reset_queue.push_back(*id);
                }
            }
        }
        for id in &sent.stop_sending {
            if let Some(r) = self.recv.get_mut(id) {
                if r.wants_stop_sending() && !r.in_stop_queue {
                    r.in_stop_queue = true;
                    self.stop_queue.push_back(*id);
                }
            }
        }
    }

    /// The part of `sent` still worth sending again, for re-injection on another path:
    /// unacknowledged stream ranges (and FINs) of live streams, plus the control frames
    /// (revalidated by [`Streams::on_frames_lost`]). Passing the copy to
    /// `on_frames_lost` queues it for retransmission; the original packet's
    /// acknowledgement, if it comes, still frees the data.
    pub(crate) fn retransmittable_copy(&self, sent: &SentStreamFrames) -> SentStreamFrames {
        let mut copy = SentStreamFrames {
            stream: super::StreamChunks::new(),
            ..sent.clone()
        };
        for c in &sent.stream {
            if let Some(s) = self.send.get(&c.id) {
                s.unacked_chunks(c, &mut copy.stream);
            }
        }
        copy
    }
}
