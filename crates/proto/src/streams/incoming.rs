//! Stream-related frames received from the peer (RFC 9000 §19.4–19.14). Every
//! error returned is a connection error (RFC 9000 §11.1).

use mpquic_wire::error::TransportErrorCode;
use mpquic_wire::frame::{ty, StreamFrame};
use mpquic_wire::stream_id::{Dir, StreamId};

use super::assembler::MAX_STREAM_OFFSET;
use super::{StreamEvent, Streams, MAX_STREAM_COUNT};
use crate::error::TransportError;

/// Pieces of out-of-order data all streams of a connection may hold together: at least this
/// many, or one per [`CONN_WINDOW_BYTES_PER_PIECE`] bytes of the connection window. Data that
/// arrives in packets' worth stays far below (16 MB of window out of order is ~14,000 pieces);
/// scraps spread over many streams, each below the per-stream bound, reach it.
const CONN_PIECES_FLOOR: usize = 16_384;
const CONN_WINDOW_BYTES_PER_PIECE: u64 = 64;

impl Streams {
    /// A STREAM frame (RFC 9000 §19.8).
    pub(crate) fn on_stream_frame(&mut self, frame: StreamFrame) -> Result<(), TransportError> {
        let frame_type = frame.frame_type(true);
        let StreamFrame {
            id,
            offset,
            fin,
            data,
        } = frame;
        // RFC 9000 §19.8: offset + length MUST NOT exceed 2^62-1 (FRAME_ENCODING_ERROR
        // or FLOW_CONTROL_ERROR; the wire decoder normally catches it first).
        let end = offset
            .checked_add(data.len() as u64)
            .filter(|&e| e <= MAX_STREAM_OFFSET)
            .ok_or_else(|| {
                TransportError::for_frame(
                    TransportErrorCode::FRAME_ENCODING_ERROR,
                    frame_type,
                    "stream offset beyond 2^62-1",
                )
            })?;
        if !self.check_recv_id(id, frame_type)? {
            return Ok(()); // closed stream: ignored
        }
        let delta = self.recv[&id].validate_data(end, fin, frame_type)?;
        self.charge_conn(delta, frame_type)?;
        let r = self.recv.get_mut(&id).expect("checked");
        let before = r.assembler.chunk_count();
        let added = r.on_data(offset, data, fin);
        let (after, shredded) = (r.assembler.chunk_count(), r.is_shredded());
        self.on_pieces_changed(before, after);
        if shredded || self.is_shredded() {
            // RFC 9000 §21.10: "limiting the size of tracking data structures".
            return Err(TransportError::for_frame(
                TransportErrorCode::PROTOCOL_VIOLATION,
                frame_type,
                "stream data in thousands of gapped scraps (RFC 9000 §21.10)",
            ));
        }
        self.stats.bytes_received += added as u64;
        self.after_recv_update(id);
        Ok(())
    }

    /// Whether the connection's streams hold more out-of-order pieces than its window justifies
    /// (RFC 9000 §21.10), see [`CONN_PIECES_FLOOR`].
    fn is_shredded(&self) -> bool {
        let per_window = self.conn_window.window() / CONN_WINDOW_BYTES_PER_PIECE;
        let limit = usize::try_from(per_window)
            .unwrap_or(usize::MAX)
            .max(CONN_PIECES_FLOOR);
        self.reassembly_pieces > limit
    }

    /// A RESET_STREAM frame (RFC 9000 §19.4).
    pub(crate) fn on_reset_stream(
        &mut self,
        id: StreamId,
        error_code: u64,
        final_size: u64,
    ) -> Result<(), TransportError> {
        let frame_type = ty::RESET_STREAM;
        // RFC 9000 §19.4: RESET_STREAM for a send-only stream MUST be a
        // STREAM_STATE_ERROR (checked by check_recv_id).
        if !self.check_recv_id(id, frame_type)? {
            return Ok(());
        }
        // RFC 9000 §4.5: the final size cannot change, nor be below received data, and
        // it counts toward the stream and connection limits.
        let delta = self.recv[&id].validate_data(final_size, true, frame_type)?;
        self.charge_conn(delta, frame_type)?;
        let r = self.recv.get_mut(&id).expect("checked");
        let before = r.assembler.chunk_count();
        r.on_reset(error_code, final_size);
        let after = r.assembler.chunk_count();
        self.on_pieces_changed(before, after);
        self.after_recv_update(id);
        Ok(())
    }

    /// A STOP_SENDING frame (RFC 9000 §19.5): the sending part is reset with the
    /// peer's error code.
    pub(crate) fn on_stop_sending(
        &mut self,
        id: StreamId,
        error_code: u64,
    ) -> Result<(), TransportError> {
        if !self.check_send_id(id, ty::STOP_SENDING)? {
            return Ok(());
        }
        let s = self.send.get_mut(&id).expect("checked");
        // RFC 9000 §3.5: an endpoint that receives STOP_SENDING MUST send RESET_STREAM in
        // "Ready" or "Send" (MAY defer in "Data Sent": we do not) and SHOULD copy the
        // error code.
        if s.is_resettable() && s.stop_code.is_none() {
            s.stop_code = Some(error_code);
            self.reset_send(id, error_code);
            self.events
                .push_back(StreamEvent::Stopped { id, error_code });
        }
        Ok(())
    }

    /// A MAX_DATA frame (RFC 9000 §19.9). RFC 9000 §4.1: frames that do not increase
    /// the limit MUST be ignored.
    pub(crate) fn on_max_data(&mut self, max: u64) {
        if max > self.peer_max_data {
            self.peer_max_data = max;
            self.on_conn_credit();
        }
    }

    /// A MAX_STREAM_DATA frame (RFC 9000 §19.10).
    pub(crate) fn on_max_stream_data(
        &mut self,
        id: StreamId,
        max: u64,
    ) -> Result<(), TransportError> {
        if self.check_send_id(id, ty::MAX_STREAM_DATA)? {
            self.raise_stream_credit(id, max);
        }
        Ok(())
    }

    /// A MAX_STREAMS frame (RFC 9000 §19.11).
    pub(crate) fn on_max_streams(&mut self, dir: Dir, count: u64) -> Result<(), TransportError> {
        // RFC 9000 §19.11: a count above 2^60 MUST be a FRAME_ENCODING_ERROR.
        if count > MAX_STREAM_COUNT {
            let frame_type = match dir {
                Dir::Bi => ty::MAX_STREAMS_BIDI,
                Dir::Uni => ty::MAX_STREAMS_UNI,
            };
            return Err(TransportError::for_frame(
                TransportErrorCode::FRAME_ENCODING_ERROR,
                frame_type,
                "MAX_STREAMS above 2^60",
            ));
        }
        self.raise_stream_limit(dir, count);
        Ok(())
    }

    /// A DATA_BLOCKED frame (RFC 9000 §19.12): at our current limit it grows the connection
    /// window (`flow.rs`). Our MAX_DATA updates never wait for it (RFC 9000 §4.2 MUST NOT
    /// wait).
    pub(crate) fn on_data_blocked(&mut self, limit: u64) {
        tracing::trace!(limit, "peer blocked by connection flow control");
        // Each limit is judged once: the check below walks every stream, and a peer repeating
        // the report must not make us walk them per frame.
        if self
            .data_blocked_judged
            .is_some_and(|judged| limit <= judged)
        {
            return;
        }
        self.data_blocked_judged = Some(limit);
        // Growth needs the data held to be packets' worth (see `on_stream_data_blocked`).
        let scraps = self.recv.values().any(|r| !r.holds_packet_sized_pieces());
        if !scraps && self.conn_window.on_peer_blocked(limit) {
            self.max_data_pending = true;
        }
    }

    /// A STREAM_DATA_BLOCKED frame (RFC 9000 §19.13): opens the stream if needed; at our
    /// current limit it grows the stream's window (`flow.rs`).
    pub(crate) fn on_stream_data_blocked(
        &mut self,
        id: StreamId,
        limit: u64,
    ) -> Result<(), TransportError> {
        // RFC 9000 §19.13: for a send-only stream MUST be a STREAM_STATE_ERROR.
        self.check_recv_id(id, ty::STREAM_DATA_BLOCKED)?;
        tracing::trace!(%id, limit, "peer blocked by stream flow control");
        if let Some(r) = self.recv.get_mut(&id) {
            // A report is evidence that the window held the sender back only if what it sent
            // is packets' worth of data, not scraps with gaps between them (RFC 9000 §21.10).
            let grows = r.holds_packet_sized_pieces() && r.window.on_peer_blocked(limit);
            if grows && r.wants_credit() && !r.in_msd_queue {
                r.in_msd_queue = true;
                self.msd_queue.push_back(id);
            }
        }
        Ok(())
    }

    /// A STREAMS_BLOCKED frame (RFC 9000 §19.14): informational only.
    pub(crate) fn on_streams_blocked(
        &mut self,
        dir: Dir,
        limit: u64,
    ) -> Result<(), TransportError> {
        // RFC 9000 §19.14: a limit above 2^60 MUST be a STREAM_LIMIT_ERROR or
        // FRAME_ENCODING_ERROR.
        if limit > MAX_STREAM_COUNT {
            let frame_type = match dir {
                Dir::Bi => ty::STREAMS_BLOCKED_BIDI,
                Dir::Uni => ty::STREAMS_BLOCKED_UNI,
            };
            return Err(TransportError::for_frame(
                TransportErrorCode::FRAME_ENCODING_ERROR,
                frame_type,
                "STREAMS_BLOCKED above 2^60",
            ));
        }
        tracing::trace!(?dir, limit, "peer blocked by stream limit");
        Ok(())
    }

    /// Raises the send credit of `id` (MAX_STREAM_DATA or transport parameters);
    /// RFC 9000 §4.1: values that do not increase the limit MUST be ignored.
    pub(super) fn raise_stream_credit(&mut self, id: StreamId, max: u64) {
        let Some(s) = self.send.get_mut(&id) else {
            return;
        };
        if max > s.max_data {
            s.max_data = max;
            self.notify_writable(id);
        }
    }

    /// Raises how many streams of `dir` we may open; RFC 9000 §4.6: MAX_STREAMS that do
    /// not increase the limit MUST be ignored.
    pub(super) fn raise_stream_limit(&mut self, dir: Dir, count: u64) {
        let l = &mut self.local[dir as usize];
        if count > l.max {
            l.max = count;
            if l.open_blocked {
                l.open_blocked = false;
                self.events.push_back(StreamEvent::Available { dir });
            }
        }
    }

    /// Charges `delta` newly received bytes to connection flow control.
    fn charge_conn(&mut self, delta: u64, frame_type: u64) -> Result<(), TransportError> {
        let total = self.data_recvd + delta;
        // RFC 9000 §4.1, §19.9: exceeding MAX_DATA MUST be a FLOW_CONTROL_ERROR; the sum
        // counts the highest received offset of every stream (§4.5).
        if total > self.conn_window.limit() {
            return Err(TransportError::for_frame(
                TransportErrorCode::FLOW_CONTROL_ERROR,
                frame_type,
                "connection data beyond MAX_DATA",
            ));
        }
        self.data_recvd = total;
        Ok(())
    }

    /// After data or a reset arrived on `id`: connection credit, events, removal.
    fn after_recv_update(&mut self, id: StreamId) {
        self.sync_conn_credit(id);
        let Some(r) = self.recv.get_mut(&id) else {
            return;
        };
        if r.stop_code.is_some() {
            // Reading was stopped: once the final size is known, the flow-control
            // accounting is complete and the part can go (the peer's retransmissions
            // are then ignored as frames for a closed stream).
            if r.final_size.is_some() {
                self.remove_recv(id);
            }
            return;
        }
        if r.is_readable() && !r.readable_signaled {
            r.readable_signaled = true;
            self.events.push_back(StreamEvent::Readable { id });
        }
    }

    /// Validates the stream ID of a frame about data the peer sends us (STREAM,
    /// RESET_STREAM, STREAM_DATA_BLOCKED), opening peer streams implicitly. Returns
    /// whether the receiving part is live (false: closed, the frame is ignored).
    fn check_recv_id(&mut self, id: StreamId, frame_type: u64) -> Result<bool, TransportError> {
        if id.initiator() == self.side {
            // RFC 9000 §19.8 (STREAM), §19.4 (RESET_STREAM), §19.13
            // (STREAM_DATA_BLOCKED): a send-only stream MUST be a STREAM_STATE_ERROR;
            // §19.8: so MUST a locally initiated stream not yet created.
            if id.dir() == Dir::Uni {
                return Err(state_error(frame_type, "frame for a send-only stream"));
            }
            if !self.was_created(id) {
                return Err(state_error(
                    frame_type,
                    "frame for an unopened local stream",
                ));
            }
        } else {
            self.open_remote(id, frame_type)?;
        }
        Ok(self.recv.contains_key(&id))
    }

    /// Validates the stream ID of a frame about data we send (MAX_STREAM_DATA,
    /// STOP_SENDING). Returns whether the sending part is live.
    fn check_send_id(&mut self, id: StreamId, frame_type: u64) -> Result<bool, TransportError> {
        if id.initiator() == self.side {
            // RFC 9000 §19.5, §19.10: a locally initiated stream that has not yet been
            // created MUST be a STREAM_STATE_ERROR.
            if !self.was_created(id) {
                return Err(state_error(
                    frame_type,
                    "frame for an unopened local stream",
                ));
            }
        } else if id.dir() == Dir::Uni {
            // RFC 9000 §19.5, §19.10: a receive-only stream MUST be a STREAM_STATE_ERROR.
            return Err(state_error(frame_type, "frame for a receive-only stream"));
        } else {
            // RFC 9000 §3.2: MAX_STREAM_DATA / STOP_SENDING open a peer's bidi stream.
            self.open_remote(id, frame_type)?;
        }
        Ok(self.send.contains_key(&id))
    }

    /// Opens peer stream `id` and, implicitly, every lower-numbered stream of its
    /// type (RFC 9000 §2.1, §3.2 MUST).
    fn open_remote(&mut self, id: StreamId, frame_type: u64) -> Result<(), TransportError> {
        let dir = id.dir();
        let r = &self.remote[dir as usize];
        // RFC 9000 §4.6: a stream ID beyond the limit we sent MUST be a
        // STREAM_LIMIT_ERROR.
        if id.index() >= r.max {
            return Err(TransportError::for_frame(
                TransportErrorCode::STREAM_LIMIT_ERROR,
                frame_type,
                "stream ID beyond MAX_STREAMS",
            ));
        }
        let first = r.next;
        if id.index() < first {
            return Ok(());
        }
        for index in first..=id.index() {
            self.create_stream(StreamId::new(id.initiator(), dir, index));
        }
        self.remote[dir as usize].next = id.index() + 1;
        self.stats.streams_opened_remote += id.index() + 1 - first;
        self.events.push_back(StreamEvent::Opened { dir });
        Ok(())
    }
}

fn state_error(frame_type: u64, reason: &str) -> TransportError {
    TransportError::for_frame(TransportErrorCode::STREAM_STATE_ERROR, frame_type, reason)
}
