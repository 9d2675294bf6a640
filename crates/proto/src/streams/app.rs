//! The application side of [`Streams`]: opening, accepting, writing, reading,
//! finishing, resetting and stopping streams (RFC 9000 §2.4), and events.

use bytes::Bytes;
use mpquic_wire::stream_id::{Dir, StreamId};

use super::assembler::Assembler;
use super::recv::RecvState;
use super::{ReadError, StreamEvent, Streams, WriteError};

impl Streams {
    /// Opens a new stream. Returns `None` if the peer's MAX_STREAMS limit is reached
    /// (RFC 9000 §4.6: endpoints MUST NOT exceed it); a STREAMS_BLOCKED frame is then
    /// queued (once per limit value) and an `Available` event follows the next
    /// increase.
    pub(crate) fn open(&mut self, dir: Dir) -> Option<StreamId> {
        let l = &mut self.local[dir as usize];
        if l.next >= l.max {
            l.open_blocked = true;
            // RFC 9000 §4.6: SHOULD send STREAMS_BLOCKED when unable to open.
            if l.blocked_reported != Some(l.max) {
                l.blocked_reported = Some(l.max);
                l.blocked_pending = true;
            }
            return None;
        }
        // RFC 9000 §2.1: stream IDs MUST NOT be reused; they are handed out in order.
        let id = StreamId::new(self.side, dir, l.next);
        l.next += 1;
        self.create_stream(id);
        self.stats.streams_opened_local += 1;
        Some(id)
    }

    /// The next stream opened by the peer and not yet accepted, in stream ID order.
    pub(crate) fn accept(&mut self, dir: Dir) -> Option<StreamId> {
        let r = &mut self.remote[dir as usize];
        if r.accepted >= r.next {
            return None;
        }
        let id = StreamId::new(self.side.peer(), dir, r.accepted);
        r.accepted += 1;
        Some(id)
    }

    /// Copies up to `min(send buffer room, stream credit, connection credit)` bytes of
    /// `data` into the stream. `Err(Blocked)` if nothing could be accepted.
    pub(crate) fn write(&mut self, id: StreamId, data: &[u8]) -> Result<usize, WriteError> {
        let n = self.write_room(id, data.len())?;
        let s = self.send.get_mut(&id).expect("checked by write_room");
        s.buf.write(&data[..n]);
        self.on_written(id, n);
        Ok(n)
    }

    /// Like [`Streams::write`] without copying: takes a prefix of `data` by reference.
    pub(crate) fn write_bytes(&mut self, id: StreamId, data: Bytes) -> Result<usize, WriteError> {
        let n = self.write_room(id, data.len())?;
        let s = self.send.get_mut(&id).expect("checked by write_room");
        s.buf.write_bytes(data.slice(..n));
        self.on_written(id, n);
        Ok(n)
    }

    /// Sets the send priority of `id` (higher first; streams of one priority take turns).
    /// Data already queued moves to the new level at once; retransmissions still go before
    /// new data. Errors as for a write on a stream without a live sending part.
    pub(crate) fn set_priority(&mut self, id: StreamId, priority: i32) -> Result<(), WriteError> {
        let Some(s) = self.send.get_mut(&id) else {
            return Err(self.missing_send(id));
        };
        if s.priority == priority {
            return Ok(());
        }
        s.priority = priority;
        let (in_retx, in_send) = (s.in_retx_queue, s.in_send_queue);
        if in_retx {
            self.retx_queue.remove(id);
            self.retx_queue.push_back(id, priority);
        }
        if in_send {
            self.send_queue.remove(id);
            self.send_queue.push_back(id, priority);
        }
        Ok(())
    }

    /// The send priority of `id` (0 unless set).
    pub(crate) fn priority(&self, id: StreamId) -> Result<i32, WriteError> {
        match self.send.get(&id) {
            Some(s) => Ok(s.priority),
            None => Err(self.missing_send(id)),
        }
    }

    /// Ends the stream cleanly: a FIN follows the written data (RFC 9000 §3.1).
    pub(crate) fn finish(&mut self, id: StreamId) -> Result<(), WriteError> {
        let Some(s) = self.send.get_mut(&id) else {
            return Err(self.missing_send(id));
        };
        if let Some(code) = s.stop_code {
            return Err(WriteError::Stopped(code));
        }
        if !s.is_writable() {
            return Err(WriteError::ClosedStream);
        }
        s.finished = true;
        s.fin_pending = true;
        self.enqueue_send(id);
        Ok(())
    }

    /// Abandons sending: a RESET_STREAM with `error_code` is sent (RFC 9000 §3.1, from
    /// "Ready", "Send" or "Data Sent").
    pub(crate) fn reset(&mut self, id: StreamId, error_code: u64) -> Result<(), WriteError> {
        let Some(s) = self.send.get(&id) else {
            return Err(self.missing_send(id));
        };
        if let Some(code) = s.stop_code {
            return Err(WriteError::Stopped(code));
        }
        if !s.is_resettable() {
            return Err(WriteError::ClosedStream);
        }
        self.reset_send(id, error_code);
        Ok(())
    }

    /// Reads in-order data into `buf`: `Ok(Some(n))` with `n > 0` bytes (or 0 if `buf`
    /// is empty), `Ok(None)` at the end of the stream, `Err(Blocked)` if nothing has
    /// arrived yet, `Err(Reset(code))` if the peer reset the stream.
    pub(crate) fn read(
        &mut self,
        id: StreamId,
        buf: &mut [u8],
    ) -> Result<Option<usize>, ReadError> {
        if buf.is_empty() {
            return self
                .recv
                .get(&id)
                .map(|_| Some(0))
                .ok_or_else(|| self.missing_recv(id));
        }
        self.read_with(id, |a| {
            let n = a.read(buf);
            (n > 0).then_some((n, n))
        })
    }

    /// Like [`Streams::read`] without copying: the next in-order chunk of at most
    /// `max` bytes (`max > 0`).
    pub(crate) fn read_chunk(
        &mut self,
        id: StreamId,
        max: usize,
    ) -> Result<Option<Bytes>, ReadError> {
        self.read_with(id, |a| a.read_chunk(max).map(|c| (c.len(), c)))
    }

    /// Abandons reading: buffered and future data is discarded and, if the peer may
    /// still be sending, a STOP_SENDING with `error_code` is sent (RFC 9000 §3.5).
    pub(crate) fn stop_sending(&mut self, id: StreamId, error_code: u64) -> Result<(), ReadError> {
        let Some(r) = self.recv.get_mut(&id) else {
            return Err(self.missing_recv(id));
        };
        if r.stop_code.is_some() {
            return Err(ReadError::ClosedStream);
        }
        r.stop_code = Some(error_code);
        let before = r.assembler.chunk_count();
        r.assembler.clear();
        self.on_pieces_changed(before, 0);
        let r = self.recv.get_mut(&id).expect("still held");
        // RFC 9000 §3.5: STOP_SENDING is useful in "Recv"; in "Size Known" the peer has
        // sent everything and its retransmissions are acknowledged at packet level, and
        // in other states there is nothing left to stop: the part can go.
        let keep = r.state == RecvState::Recv;
        if keep && !r.in_stop_queue {
            r.in_stop_queue = true;
            self.stop_queue.push_back(id);
        }
        self.sync_conn_credit(id);
        if !keep {
            self.remove_recv(id);
        }
        Ok(())
    }

    /// The next event for the application.
    pub(crate) fn poll_event(&mut self) -> Option<StreamEvent> {
        self.events.pop_front()
    }

    /// Validates a write of `len` bytes on `id`, queues *_BLOCKED frames if flow
    /// control limits it, and returns how many bytes may be written.
    fn write_room(&mut self, id: StreamId, len: usize) -> Result<usize, WriteError> {
        let send_buffer = self.config.send_buffer;
        let conn_credit = self.peer_max_data.saturating_sub(self.data_written);
        let Some(s) = self.send.get_mut(&id) else {
            return Err(self.missing_send(id));
        };
        if let Some(code) = s.stop_code {
            return Err(WriteError::Stopped(code));
        }
        if !s.is_writable() {
            return Err(WriteError::ClosedStream);
        }
        if len == 0 {
            return Ok(0);
        }
        let room = send_buffer.saturating_sub(s.buf.buffered());
        let stream_credit = s.credit();
        let want = len as u64;
        let n = want.min(room).min(stream_credit).min(conn_credit);
        if n < want {
            s.write_blocked = true;
            // RFC 9000 §4.1: a sender SHOULD send STREAM_DATA_BLOCKED / DATA_BLOCKED when
            // flow control stops it; once per limit value.
            if stream_credit < want && s.blocked_reported != Some(s.max_data) {
                s.blocked_reported = Some(s.max_data);
                if !s.in_blocked_queue {
                    s.in_blocked_queue = true;
                    self.blocked_queue.push_back(id);
                }
            }
            if conn_credit < want {
                if !s.in_conn_blocked {
                    s.in_conn_blocked = true;
                    self.conn_blocked.push(id);
                }
                if self.data_blocked_reported != Some(self.peer_max_data) {
                    self.data_blocked_reported = Some(self.peer_max_data);
                    self.data_blocked_pending = true;
                }
            }
        }
        if n == 0 {
            return Err(WriteError::Blocked);
        }
        Ok(n as usize)
    }

    /// Accounts `n` bytes just appended to the send buffer of `id`.
    fn on_written(&mut self, id: StreamId, n: usize) {
        self.data_written += n as u64;
        self.stats.bytes_written += n as u64;
        self.enqueue_send(id);
    }

    /// Shared body of `read` and `read_chunk`: `f` extracts data and its length.
    fn read_with<T>(
        &mut self,
        id: StreamId,
        f: impl FnOnce(&mut Assembler) -> Option<(usize, T)>,
    ) -> Result<Option<T>, ReadError> {
        let Some(r) = self.recv.get_mut(&id) else {
            return Err(self.missing_recv(id));
        };
        if r.stop_code.is_some() {
            return Err(ReadError::ClosedStream);
        }
        r.readable_signaled = false;
        if let RecvState::ResetRecvd { error_code } = r.state {
            // RFC 9000 §3.2: "App Read Reset" -> "Reset Read" (terminal).
            self.remove_recv(id);
            return Err(ReadError::Reset(error_code));
        }
        let before = r.assembler.chunk_count();
        let read = f(&mut r.assembler);
        let after = r.assembler.chunk_count();
        self.on_pieces_changed(before, after);
        let r = self.recv.get_mut(&id).expect("still held");
        if let Some((n, out)) = read {
            self.stats.bytes_read += n as u64;
            // Half the stream window consumed: MAX_STREAM_DATA (only in "Recv").
            if r.window.consume(n as u64) && r.wants_credit() && !r.in_msd_queue {
                r.in_msd_queue = true;
                self.msd_queue.push_back(id);
            }
            self.sync_conn_credit(id);
            return Ok(Some(out));
        }
        if r.is_finished() {
            // RFC 9000 §3.2: "App Read All Data" -> "Data Read" (terminal).
            self.remove_recv(id);
            return Ok(None);
        }
        Err(ReadError::Blocked)
    }

    /// Reports newly consumed bytes of `id` to the connection window; queues MAX_DATA
    /// when half of it is consumed.
    pub(super) fn sync_conn_credit(&mut self, id: StreamId) {
        let Some(r) = self.recv.get_mut(&id) else {
            return;
        };
        let target = r.consumed_target();
        let delta = target.saturating_sub(r.conn_consumed);
        r.conn_consumed = r.conn_consumed.max(target);
        if delta > 0 && self.conn_window.consume(delta) {
            self.max_data_pending = true;
        }
    }

    /// Resets the sending part of `id` and queues the RESET_STREAM.
    pub(super) fn reset_send(&mut self, id: StreamId, error_code: u64) {
        let Some(s) = self.send.get_mut(&id) else {
            return;
        };
        let released = s.reset(error_code);
        s.in_send_queue = false;
        s.in_retx_queue = false;
        if !s.in_reset_queue {
            s.in_reset_queue = true;
            self.reset_queue.push_back(id);
        }
        self.send_queue.remove(id);
        self.retx_queue.remove(id);
        if released > 0 {
            self.data_written -= released;
            self.on_conn_credit();
        }
    }

    /// Puts `id` in the send queues it belongs to (retransmission and/or round-robin).
    pub(super) fn enqueue_send(&mut self, id: StreamId) {
        let Some(s) = self.send.get_mut(&id) else {
            return;
        };
        if s.has_retransmit() && !s.in_retx_queue {
            s.in_retx_queue = true;
            self.retx_queue.push_back(id, s.priority);
        }
        if s.has_pending() && !s.in_send_queue {
            s.in_send_queue = true;
            self.send_queue.push_back(id, s.priority);
        }
    }

    /// Connection credit grew: streams whose writes it limited become writable.
    pub(super) fn on_conn_credit(&mut self) {
        if self.peer_max_data <= self.data_written {
            return;
        }
        for id in std::mem::take(&mut self.conn_blocked) {
            if let Some(s) = self.send.get_mut(&id) {
                s.in_conn_blocked = false;
            }
            self.notify_writable(id);
        }
    }

    /// Emits `Writable` for `id` if a write was refused or short and there is room.
    pub(super) fn notify_writable(&mut self, id: StreamId) {
        let conn_credit = self.peer_max_data.saturating_sub(self.data_written);
        let Some(s) = self.send.get_mut(&id) else {
            return;
        };
        let room = self.config.send_buffer.saturating_sub(s.buf.buffered());
        if s.write_blocked && s.is_writable() && room.min(s.credit()).min(conn_credit) > 0 {
            s.write_blocked = false;
            self.events.push_back(StreamEvent::Writable { id });
        }
    }

    /// Error for a write-side operation on a stream without a live sending part.
    fn missing_send(&self, id: StreamId) -> WriteError {
        let sendable = id.initiator() == self.side || id.dir() == Dir::Bi;
        if sendable && self.was_created(id) {
            WriteError::ClosedStream
        } else {
            WriteError::UnknownStream
        }
    }

    /// Error for a read-side operation on a stream without a live receiving part.
    fn missing_recv(&self, id: StreamId) -> ReadError {
        let receivable = id.initiator() != self.side || id.dir() == Dir::Bi;
        if receivable && self.was_created(id) {
            ReadError::ClosedStream
        } else {
            ReadError::UnknownStream
        }
    }
}
