//! Frame encoding. Every encoder is written once against the [`Sink`]
//! abstraction, so [`Frame::encoded_len`] is exact by construction: it runs the
//! same code with a byte counter instead of a buffer.

use super::{ty, ConnectionClose, DatagramFrame, Frame, NewConnectionId, PathStatus, StreamFrame};
use crate::stream_id::StreamId;
use crate::varint::{varint_size, write_varint};
use bytes::BufMut;

/// Destination of an encoder: either a real buffer or a length counter.
pub(crate) trait Sink {
    fn varint(&mut self, v: u64);
    fn bytes(&mut self, b: &[u8]);
    fn byte(&mut self, b: u8);
    fn zeros(&mut self, n: usize);
}

/// Counts the bytes that would be written.
#[derive(Default)]
pub(crate) struct Counter(pub usize);

impl Sink for Counter {
    fn varint(&mut self, v: u64) {
        self.0 = self.0.saturating_add(varint_size(v));
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0 = self.0.saturating_add(b.len());
    }
    fn byte(&mut self, _: u8) {
        self.0 = self.0.saturating_add(1);
    }
    fn zeros(&mut self, n: usize) {
        self.0 = self.0.saturating_add(n);
    }
}

/// Writes into a [`BufMut`].
pub(crate) struct Out<'a, B: BufMut>(pub &'a mut B);

impl<B: BufMut> Sink for Out<'_, B> {
    fn varint(&mut self, v: u64) {
        write_varint(self.0, v)
    }
    fn bytes(&mut self, b: &[u8]) {
        self.0.put_slice(b)
    }
    fn byte(&mut self, b: u8) {
        self.0.put_u8(b)
    }
    fn zeros(&mut self, n: usize) {
        self.0.put_bytes(0, n)
    }
}

impl Frame {
    /// Appends the wire encoding of this frame to `out`.
    ///
    /// STREAM frames are written with an explicit Length field; use
    /// [`StreamFrame::encode_with_len`] to omit it for the last frame of a
    /// packet. `Padding(n)` writes `n` zero bytes. Field values must be
    /// `<= 2^62-1` (see [`crate::varint::write_varint`]); decoded frames
    /// always satisfy this.
    pub fn encode(&self, out: &mut impl BufMut) {
        self.write(&mut Out(out))
    }

    /// Exact number of bytes [`Frame::encode`] writes.
    pub fn encoded_len(&self) -> usize {
        let mut c = Counter::default();
        self.write(&mut c);
        c.0
    }

    fn write<S: Sink>(&self, s: &mut S) {
        use Frame::*;
        let t = self.frame_type();
        match self {
            Padding(n) => s.zeros(*n),
            Stream(f) => f.write(s, true),
            Datagram(d) => d.write(s, true),
            Ack(a) => a.write(s),
            NewConnectionId(n) => n.write(s),
            ConnectionClose(c) => c.write(s),
            _ => {
                s.varint(t);
                self.write_simple_body(s);
            }
        }
    }

    /// Bodies of the frames made only of varints / fixed arrays.
    fn write_simple_body<S: Sink>(&self, s: &mut S) {
        use Frame::*;
        match self {
            ResetStream {
                id,
                error_code,
                final_size,
            } => [id.0, *error_code, *final_size]
                .iter()
                .for_each(|&v| s.varint(v)),
            StopSending { id, error_code } => [id.0, *error_code].iter().for_each(|&v| s.varint(v)),
            Crypto { offset, data } => {
                s.varint(*offset);
                s.varint(data.len() as u64);
                s.bytes(data);
            }
            NewToken { token } => {
                s.varint(token.len() as u64);
                s.bytes(token);
            }
            MaxData(v) | MaxPathId(v) | PathsBlocked(v) => s.varint(*v),
            MaxStreamData { id, max: v } | StreamDataBlocked { id, limit: v } => {
                s.varint(id.0);
                s.varint(*v);
            }
            MaxStreams { count: v, .. } | StreamsBlocked { limit: v, .. } => s.varint(*v),
            DataBlocked { limit } => s.varint(*limit),
            RetireConnectionId { path_id, sequence } => {
                if let Some(p) = path_id {
                    s.varint(*p);
                }
                s.varint(*sequence);
            }
            PathChallenge(d) | PathResponse(d) => s.bytes(d),
            PathAbandon {
                path_id: a,
                error_code: b,
            }
            | PathStatus {
                path_id: a,
                sequence: b,
                ..
            }
            | PathCidsBlocked {
                path_id: a,
                next_sequence: b,
            } => {
                s.varint(*a);
                s.varint(*b);
            }
            AckFrequency {
                sequence,
                ack_eliciting_threshold,
                request_max_ack_delay_us,
                reordering_threshold,
            } => [
                *sequence,
                *ack_eliciting_threshold,
                *request_max_ack_delay_us,
                *reordering_threshold,
            ]
            .iter()
            .for_each(|&v| s.varint(v)),
            QoeControlSignal(q) => [
                q.sequence,
                q.cached_bytes,
                q.cached_frames,
                q.play_time_left_ms,
                q.bitrate_kbps,
                q.frame_rate,
            ]
            .iter()
            .for_each(|&v| s.varint(v)),
            Ping | HandshakeDone | ImmediateAck => {}
            Padding(_) | Stream(_) | Datagram(_) | Ack(_) | NewConnectionId(_)
            | ConnectionClose(_) => {}
        }
    }
}

impl StreamFrame {
    /// The STREAM frame type (0x08..=0x0f) for this frame: OFF bit when
    /// `offset != 0`, LEN bit when `include_len`, FIN bit when `fin`
    /// (RFC 9000 §19.8).
    pub fn frame_type(&self, include_len: bool) -> u64 {
        stream_frame_type(self.offset, self.fin, include_len)
    }

    /// Appends this frame, with or without the Length field. Without it the
    /// data extends to the end of the packet, so it must be the last frame.
    pub fn encode_with_len(&self, out: &mut impl BufMut, include_len: bool) {
        self.write(&mut Out(out), include_len)
    }

    /// Exact encoded length with or without the Length field.
    pub fn encoded_len(&self, include_len: bool) -> usize {
        let mut c = Counter::default();
        self.write(&mut c, include_len);
        c.0
    }

    /// Appends only the header (type, stream ID, Offset, Length) of a STREAM
    /// frame that carries `len` bytes; the caller appends exactly `len` data
    /// bytes right after it. This lets a sender copy data that is stored in
    /// several buffers into one frame without assembling it first.
    pub fn encode_header(id: StreamId, offset: u64, len: usize, fin: bool, out: &mut impl BufMut) {
        write_stream_header(&mut Out(out), id, offset, len, fin, true);
    }

    fn write<S: Sink>(&self, s: &mut S, include_len: bool) {
        write_stream_header(
            s,
            self.id,
            self.offset,
            self.data.len(),
            self.fin,
            include_len,
        );
        s.bytes(&self.data);
    }
}

fn stream_frame_type(offset: u64, fin: bool, include_len: bool) -> u64 {
    let mut t = ty::STREAM;
    if offset != 0 {
        t |= ty::STREAM_OFF_BIT;
    }
    if include_len {
        t |= ty::STREAM_LEN_BIT;
    }
    if fin {
        t |= ty::STREAM_FIN_BIT;
    }
    t
}

fn write_stream_header<S: Sink>(
    s: &mut S,
    id: StreamId,
    offset: u64,
    len: usize,
    fin: bool,
    include_len: bool,
) {
    s.varint(stream_frame_type(offset, fin, include_len));
    s.varint(id.0);
    if offset != 0 {
        s.varint(offset);
    }
    if include_len {
        s.varint(len as u64);
    }
}

impl DatagramFrame {
    /// The DATAGRAM frame type: 0x31 with a Length field, 0x30 without (RFC 9221 §4).
    pub fn frame_type(include_len: bool) -> u64 {
        if include_len {
            ty::DATAGRAM_LEN
        } else {
            ty::DATAGRAM
        }
    }

    /// Appends this frame, with or without the Length field. Without it the data extends to
    /// the end of the packet, so it must be the last frame.
    pub fn encode_with_len(&self, out: &mut impl BufMut, include_len: bool) {
        self.write(&mut Out(out), include_len)
    }

    /// Exact encoded length with or without the Length field.
    pub fn encoded_len(&self, include_len: bool) -> usize {
        super::datagram_frame_header_len(self.data.len(), include_len) + self.data.len()
    }

    fn write<S: Sink>(&self, s: &mut S, include_len: bool) {
        s.varint(Self::frame_type(include_len));
        if include_len {
            s.varint(self.data.len() as u64);
        }
        s.bytes(&self.data);
    }
}

impl NewConnectionId {
    pub(crate) fn write<S: Sink>(&self, s: &mut S) {
        match self.path_id {
            Some(p) => {
                s.varint(ty::PATH_NEW_CONNECTION_ID);
                s.varint(p);
            }
            None => s.varint(ty::NEW_CONNECTION_ID),
        }
        s.varint(self.sequence);
        s.varint(self.retire_prior_to);
        s.byte(self.cid.len() as u8);
        s.bytes(self.cid.as_slice());
        s.bytes(&self.reset_token.0);
    }
}

impl ConnectionClose {
    pub(crate) fn write<S: Sink>(&self, s: &mut S) {
        match self.frame_type {
            Some(ft) => {
                s.varint(ty::CONNECTION_CLOSE);
                s.varint(self.error_code);
                s.varint(ft);
            }
            None => {
                s.varint(ty::APPLICATION_CLOSE);
                s.varint(self.error_code);
            }
        }
        s.varint(self.reason.len() as u64);
        s.bytes(&self.reason);
    }

    /// Exact encoded length of this frame.
    pub fn encoded_len(&self) -> usize {
        let mut c = Counter::default();
        self.write(&mut c);
        c.0
    }
}

impl PathStatus {
    /// The frame type carrying this status (RFC 10069).
    pub fn frame_type(self) -> u64 {
        match self {
            PathStatus::Available => ty::PATH_STATUS_AVAILABLE,
            PathStatus::Backup => ty::PATH_STATUS_BACKUP,
        }
    }
}
