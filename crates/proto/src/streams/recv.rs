//! The receiving part of a stream (RFC 9000 §3.2).

use bytes::Bytes;
use mpquic_wire::error::TransportErrorCode;

use super::assembler::Assembler;
use super::flow::RecvWindow;
use crate::error::TransportError;

/// Pieces of out-of-order stream data a stream may hold before their mean size is checked
/// ([`RecvStream::is_shredded`]).
const FRAGMENTS_CHECKED: usize = 2048;
/// Smallest mean size of the pieces beyond [`FRAGMENTS_CHECKED`] of them.
const MIN_MEAN_FRAGMENT: usize = 32;
/// Mean piece size that counts as packets' worth of data (a full packet carries over 1,100
/// bytes of one stream; half of that leaves room for packets shared with other frames).
const PACKET_SIZED_PIECE: usize = 512;
/// Pieces that count as few whatever their size.
const FEW_PIECES: usize = 16;

/// States of the receiving part of a stream (RFC 9000 §3.2, Figure 3).
///
/// The terminal states "Data Read" and "Reset Read" are represented by removing the
/// part from the connection's tables once the application has seen the end of the
/// stream or the reset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RecvState {
    /// Receiving; the final size is unknown.
    Recv,
    /// A FIN was received: the final size is known, data may be missing.
    SizeKnown,
    /// All data up to the final size was received.
    DataRecvd,
    /// RESET_STREAM received (delivery interrupted, RFC 9000 §3.2 "MAY interrupt").
    ResetRecvd { error_code: u64 },
}

/// The receiving part of a stream.
#[derive(Debug)]
pub(super) struct RecvStream {
    pub state: RecvState,
    pub assembler: Assembler,
    /// Stream-level receive window (MAX_STREAM_DATA).
    pub window: RecvWindow,
    pub final_size: Option<u64>,
    /// Highest offset received (RFC 9000 §4.5: counts toward connection credit).
    pub max_received: u64,
    /// Error code of the STOP_SENDING the application asked for: data is discarded.
    pub stop_code: Option<u64>,
    /// Bytes reported as consumed to the connection window.
    pub conn_consumed: u64,
    /// A `Readable` event was emitted and the application has not read since.
    pub readable_signaled: bool,
    pub in_msd_queue: bool,
    pub in_stop_queue: bool,
}

impl RecvStream {
    pub(super) fn new(window: u64, max_window: u64) -> Self {
        Self {
            state: RecvState::Recv,
            assembler: Assembler::new(),
            window: RecvWindow::new(window, max_window),
            final_size: None,
            max_received: 0,
            stop_code: None,
            conn_consumed: 0,
            readable_signaled: false,
            in_msd_queue: false,
            in_stop_queue: false,
        }
    }

    /// Checks a STREAM frame covering `offset..end` against the final size and the
    /// stream limit; returns by how much it raises the highest received offset (the
    /// connection-level flow-control consumption, RFC 9000 §4.1).
    pub(super) fn validate_data(
        &self,
        end: u64,
        fin: bool,
        frame_type: u64,
    ) -> Result<u64, TransportError> {
        self.check_final_size(end, fin, frame_type)?;
        // RFC 9000 §4.1, §19.10: data beyond the advertised stream limit MUST be
        // answered with FLOW_CONTROL_ERROR.
        if end > self.window.limit() {
            return Err(TransportError::for_frame(
                TransportErrorCode::FLOW_CONTROL_ERROR,
                frame_type,
                "stream data beyond MAX_STREAM_DATA",
            ));
        }
        Ok(end.saturating_sub(self.max_received))
    }

    /// RFC 9000 §4.5: once known, the final size cannot change, and data at or beyond
    /// it is a FINAL_SIZE_ERROR; a final size below data already received is too.
    pub(super) fn check_final_size(
        &self,
        end: u64,
        fin: bool,
        frame_type: u64,
    ) -> Result<(), TransportError> {
        let bad = match self.final_size {
            Some(size) => end > size || (fin && end != size),
            None => fin && end < self.max_received,
        };
        if bad {
            return Err(TransportError::for_frame(
                TransportErrorCode::FINAL_SIZE_ERROR,
                frame_type,
                "final size changed or exceeded",
            ));
        }
        Ok(())
    }

    /// Stores validated STREAM frame data. Returns the number of newly buffered bytes.
    pub(super) fn on_data(&mut self, offset: u64, data: Bytes, fin: bool) -> usize {
        let end = offset + data.len() as u64;
        self.max_received = self.max_received.max(end);
        if fin && self.final_size.is_none() {
            self.final_size = Some(end);
            if self.state == RecvState::Recv {
                // RFC 9000 §3.2: "Recv STREAM + FIN" -> "Size Known".
                self.state = RecvState::SizeKnown;
            }
        }
        if !matches!(self.state, RecvState::Recv | RecvState::SizeKnown) || self.stop_code.is_some()
        {
            // After all data or a reset was received, or after STOP_SENDING, frames are
            // discarded (RFC 9000 §3.2, §3.5), but were counted for flow control.
            return 0;
        }
        // Validated: `end` is within the stream limit, hence below 2^62.
        let added = self.assembler.insert(offset, data).unwrap_or(0);
        self.check_all_received();
        added
    }

    /// Whether the data held is in many small pieces, as a sender leaving gaps on purpose
    /// would send it (RFC 9000 §21.10): more than [`FRAGMENTS_CHECKED`] pieces averaging
    /// under [`MIN_MEAN_FRAGMENT`] bytes. Each piece costs about 80 bytes of bookkeeping,
    /// so such data would cost the receiver many times the flow-control window it fits
    /// in. Legitimate reordering leaves packet-sized pieces (about a kilobyte).
    pub(super) fn is_shredded(&self) -> bool {
        let pieces = self.assembler.chunk_count();
        pieces > FRAGMENTS_CHECKED && self.assembler.bytes_buffered() < pieces * MIN_MEAN_FRAGMENT
    }

    /// Whether the data held arrived in pieces large enough to be packets' worth: the
    /// evidence a STREAM_DATA_BLOCKED needs to grow the window (`flow.rs`), so that a peer
    /// cannot report itself blocked to make us buffer up to `max_window` of gapped scraps.
    /// A few pieces of any size are no such scraps.
    pub(super) fn holds_packet_sized_pieces(&self) -> bool {
        let pieces = self.assembler.chunk_count();
        pieces <= FEW_PIECES || self.assembler.bytes_buffered() >= pieces * PACKET_SIZED_PIECE
    }

    /// RFC 9000 §3.2: "Size Known" -> "Data Recvd" once all data up to the final size
    /// has been received.
    fn check_all_received(&mut self) {
        if self.state == RecvState::SizeKnown {
            let have = self.assembler.read_offset() + self.assembler.bytes_buffered() as u64;
            if Some(have) == self.final_size {
                self.state = RecvState::DataRecvd;
            }
        }
    }

    /// Processes a validated RESET_STREAM. Returns whether the application must be told
    /// (the reset interrupts delivery in "Recv" / "Size Known"; once all data is
    /// received it is suppressed, RFC 9000 §3.2).
    pub(super) fn on_reset(&mut self, error_code: u64, final_size: u64) -> bool {
        self.max_received = final_size;
        self.final_size = Some(final_size);
        if matches!(self.state, RecvState::Recv | RecvState::SizeKnown) {
            self.state = RecvState::ResetRecvd { error_code };
            self.assembler.clear();
            return true;
        }
        false
    }

    /// Whether the application has something to learn from `read`: data, the end of
    /// the stream or a reset.
    pub(super) fn is_readable(&self) -> bool {
        self.stop_code.is_none()
            && (self.assembler.is_readable()
                || self.is_finished()
                || matches!(self.state, RecvState::ResetRecvd { .. }))
    }

    /// Whether all data up to the final size has been read.
    pub(super) fn is_finished(&self) -> bool {
        self.final_size == Some(self.assembler.read_offset())
    }

    /// Bytes that count as consumed for connection-level flow control: what the
    /// application read, or everything up to the final size (or highest offset) once
    /// the data is discarded after a reset or STOP_SENDING (RFC 9000 §4.5: the receiver
    /// MUST use the final size to account for all bytes in connection flow control).
    pub(super) fn consumed_target(&self) -> u64 {
        let discarding =
            self.stop_code.is_some() || matches!(self.state, RecvState::ResetRecvd { .. });
        if discarding {
            self.final_size.unwrap_or(self.max_received)
        } else {
            self.assembler.read_offset()
        }
    }

    /// Whether a MAX_STREAM_DATA may be sent: only in "Recv" (RFC 9000 §3.5) and while
    /// the application still reads.
    pub(super) fn wants_credit(&self) -> bool {
        self.state == RecvState::Recv && self.stop_code.is_none()
    }

    /// Whether a STOP_SENDING is still useful: requested, and the stream is in "Recv"
    /// or "Size Known" (RFC 9000 §3.5).
    pub(super) fn wants_stop_sending(&self) -> bool {
        self.stop_code.is_some() && matches!(self.state, RecvState::Recv | RecvState::SizeKnown)
    }
}
