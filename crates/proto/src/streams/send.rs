//! The sending part of a stream (RFC 9000 §3.1).

use mpquic_wire::frame::{stream_frame_header_len, StreamFrame};
use mpquic_wire::stream_id::StreamId;

use super::send_buffer::SendBuffer;
use super::StreamChunk;

/// States of the sending part of a stream (RFC 9000 §3.1, Figure 2).
///
/// "Reset Recvd" and "Data Recvd" are terminal: the part is then removed from the
/// connection's tables, so they have no variant here except transiently.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SendState {
    /// Created; nothing sent yet.
    Ready,
    /// Sending data (first STREAM or STREAM_DATA_BLOCKED sent).
    Send,
    /// FIN sent; only retransmissions remain.
    DataSent,
    /// Everything including FIN acknowledged (terminal).
    DataRecvd,
    /// RESET_STREAM sent, not yet acknowledged.
    ResetSent,
}

/// A RESET_STREAM we have to send (and retransmit until acknowledged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ResetInfo {
    pub error_code: u64,
    pub final_size: u64,
}

/// The sending part of a stream.
#[derive(Debug)]
pub(super) struct SendStream {
    pub state: SendState,
    pub buf: SendBuffer,
    /// The peer's limit on this stream (MAX_STREAM_DATA or the initial parameter).
    pub max_data: u64,
    /// The application called `finish`.
    pub finished: bool,
    /// A FIN must be (re)sent.
    pub fin_pending: bool,
    /// The FIN has been acknowledged.
    pub fin_acked: bool,
    /// Set once the part is reset (by us or in answer to STOP_SENDING).
    pub reset: Option<ResetInfo>,
    /// Error code of a STOP_SENDING received from the peer.
    pub stop_code: Option<u64>,
    /// The application saw a short or refused write: emit `Writable` on new room.
    pub write_blocked: bool,
    /// The stream limit a STREAM_DATA_BLOCKED was already queued for.
    pub blocked_reported: Option<u64>,
    /// Send priority set by the application: higher goes first (`PendingStreams`).
    pub priority: i32,
    // Membership flags of the connection's queues (avoid duplicates).
    pub in_send_queue: bool,
    pub in_retx_queue: bool,
    pub in_blocked_queue: bool,
    pub in_reset_queue: bool,
    pub in_conn_blocked: bool,
}

/// A STREAM frame written by [`SendStream::write_frame`].
pub(super) struct Written {
    pub chunk: StreamChunk,
    /// Whether the data was a retransmission.
    pub retransmission: bool,
}

impl SendStream {
    pub(super) fn new(max_data: u64) -> Self {
        Self {
            state: SendState::Ready,
            buf: SendBuffer::new(),
            max_data,
            finished: false,
            fin_pending: false,
            fin_acked: false,
            reset: None,
            stop_code: None,
            write_blocked: false,
            blocked_reported: None,
            priority: 0,
            in_send_queue: false,
            in_retx_queue: false,
            in_blocked_queue: false,
            in_reset_queue: false,
            in_conn_blocked: false,
        }
    }

    /// Whether the application may still write or finish ("Ready" or "Send" and no
    /// FIN requested).
    pub(super) fn is_writable(&self) -> bool {
        matches!(self.state, SendState::Ready | SendState::Send) && !self.finished
    }

    /// Whether the part can still be reset by the application or by STOP_SENDING
    /// (RFC 9000 §3.1: from "Ready", "Send" or "Data Sent").
    pub(super) fn is_resettable(&self) -> bool {
        matches!(
            self.state,
            SendState::Ready | SendState::Send | SendState::DataSent
        )
    }

    /// Whether STREAM frames may be sent: RFC 9000 §3.5, a sender MUST NOT send STREAM
    /// frames after RESET_STREAM or from a terminal state.
    fn may_send_stream(&self) -> bool {
        self.is_resettable()
    }

    /// Whether stream data (retransmission, new data or a bare FIN) is waiting.
    pub(super) fn has_pending(&self) -> bool {
        self.may_send_stream() && (self.buf.has_pending() || self.fin_pending)
    }

    /// Whether lost data waits for retransmission.
    pub(super) fn has_retransmit(&self) -> bool {
        self.may_send_stream() && self.buf.has_retransmit()
    }

    /// Stream credit left for new writes.
    pub(super) fn credit(&self) -> u64 {
        self.max_data.saturating_sub(self.buf.end())
    }

    /// Resets the part (RFC 9000 §3.1: "Send RESET_STREAM" to "Reset Sent"): drops the
    /// buffered data and returns the number of written-but-never-sent bytes, whose
    /// connection credit is released (the final size is the highest offset sent,
    /// RFC 9000 §4.5).
    pub(super) fn reset(&mut self, error_code: u64) -> u64 {
        let final_size = self.buf.sent_offset();
        let released = self.buf.end() - final_size;
        self.reset = Some(ResetInfo {
            error_code,
            final_size,
        });
        self.state = SendState::ResetSent;
        self.fin_pending = false;
        self.buf.clear();
        released
    }

    /// Processes the acknowledgement of a sent chunk. Returns true when the part just
    /// reached "Data Recvd" (all data and the FIN acknowledged, RFC 9000 §3.1).
    pub(super) fn on_acked(&mut self, offset: u64, len: u64, fin: bool) -> bool {
        if self.reset.is_some() {
            return false;
        }
        self.buf.on_acked(offset, len);
        if fin {
            self.fin_acked = true;
            self.fin_pending = false;
        }
        if self.state == SendState::DataSent && self.fin_acked && self.buf.is_fully_acked() {
            self.state = SendState::DataRecvd;
            return true;
        }
        false
    }

    /// Processes the loss of a sent chunk: unacknowledged data is queued for
    /// retransmission, and the FIN too if it was carried and not acknowledged.
    pub(super) fn on_lost(&mut self, offset: u64, len: u64, fin: bool) {
        if self.reset.is_some() {
            return;
        }
        self.buf.on_lost(offset, len);
        if fin && !self.fin_acked {
            self.fin_pending = true;
        }
    }

    /// The still-unacknowledged parts of a sent chunk, as chunks (for re-injection).
    pub(super) fn unacked_chunks(&self, c: &StreamChunk, out: &mut super::StreamChunks) {
        if self.reset.is_some() || self.state == SendState::DataRecvd {
            return;
        }
        let end = c.offset + c.len;
        let mut fin_done = !c.fin || self.fin_acked;
        for r in self.buf.unacked_in(c.offset, c.len) {
            let fin = !fin_done && r.end == end;
            fin_done |= fin;
            out.push(StreamChunk {
                id: c.id,
                offset: r.start,
                len: r.end - r.start,
                fin,
            });
        }
        if !fin_done {
            out.push(StreamChunk {
                id: c.id,
                offset: end,
                len: 0,
                fin: true,
            });
        }
    }

    /// Writes one STREAM frame (always with a Length field) of at most `room` bytes:
    /// a retransmission if any (or only those if `retransmit_only`), else new data,
    /// else a bare FIN. Returns `None` when nothing fits or nothing is pending.
    pub(super) fn write_frame(
        &mut self,
        id: StreamId,
        retransmit_only: bool,
        out: &mut Vec<u8>,
        room: usize,
    ) -> Option<Written> {
        if !self.may_send_stream() {
            return None;
        }
        let (retransmission, offset) = match self.buf.retransmit_offset() {
            Some(o) => (true, o),
            None if retransmit_only => return None,
            None if self.buf.has_unsent() => (false, self.buf.sent_offset()),
            None if self.fin_pending => (false, self.buf.end()),
            None => return None,
        };
        let header = stream_frame_header_len(id, offset, room, true);
        let max_data = room.checked_sub(header)?;
        let bare_fin = !retransmission && !self.buf.has_unsent();
        let range = if bare_fin {
            offset..offset
        } else if retransmission {
            self.buf.take_retransmit(max_data)?
        } else {
            self.buf.take_unsent(max_data)?
        };
        let len = range.end - range.start;
        debug_assert!(
            offset + len <= self.max_data,
            "stream flow control violated"
        );
        // The FIN rides on the frame that reaches the end of the stream.
        let fin = self.fin_pending && offset + len == self.buf.end();
        // One frame even when the range spans several stored segments: the
        // data is copied once, straight from the buffer into the packet.
        StreamFrame::encode_header(id, offset, len as usize, fin, out);
        self.buf.copy_range_into(range, out);
        if self.state == SendState::Ready {
            self.state = SendState::Send;
        }
        if fin {
            self.fin_pending = false;
            self.state = SendState::DataSent;
        }
        Some(Written {
            chunk: StreamChunk {
                id,
                offset,
                len,
                fin,
            },
            retransmission,
        })
    }
}
