//! Frame decoding (RFC 9000 §12.4, §19; RFC 9221; RFC 10069; ack-frequency).

use super::{
    ty, AckFrame, ConnectionClose, DatagramFrame, Frame, NewConnectionId, PathStatus, QoeSignal,
    StreamFrame, MAX_PATH_ID_VALUE, MAX_STREAM_COUNT,
};
use crate::cid::{ConnectionId, ResetToken, MAX_CID_LEN};
use crate::codec::{DecodeError, Reader};
use crate::error::FrameError;
use crate::stream_id::{Dir, StreamId};
use crate::varint::{varint_size, VarInt};
use bytes::Bytes;

/// Requested Max Ack Delay must be below 2^14 ms (ack-frequency
/// §"ACK_FREQUENCY Frame", RFC 9000 §18.2), here in microseconds.
const MAX_ACK_DELAY_LIMIT_US: u64 = (1 << 14) * 1000;

/// Field reader for one frame: maps every failure to a [`FrameError`] carrying
/// the frame type, and slices data out of the payload `Bytes` zero-copy.
pub(crate) struct FrameReader<'a, 'b> {
    r: &'b mut Reader<'a>,
    buf: &'b Bytes,
    ty: u64,
}

impl FrameReader<'_, '_> {
    fn map(&self, e: DecodeError) -> FrameError {
        match e {
            DecodeError::UnexpectedEnd => FrameError::encoding(self.ty, "frame truncated"),
            DecodeError::InvalidValue(why) => FrameError::encoding(self.ty, why),
        }
    }

    /// A FRAME_ENCODING_ERROR for the current frame.
    pub(crate) fn err(&self, reason: &'static str) -> FrameError {
        FrameError::encoding(self.ty, reason)
    }

    pub(crate) fn varint(&mut self) -> Result<u64, FrameError> {
        self.r.varint().map_err(|e| self.map(e))
    }

    /// A multipath Path Identifier: values above 2^32-1 necessarily exceed any
    /// advertised maximum, a PROTOCOL_VIOLATION (RFC 10069 §"New Frames").
    pub(crate) fn path_id(&mut self) -> Result<u64, FrameError> {
        let v = self.varint()?;
        if v > MAX_PATH_ID_VALUE {
            return Err(FrameError::protocol(self.ty, "path ID above 2^32-1"));
        }
        Ok(v)
    }

    pub(crate) fn remaining(&self) -> usize {
        self.r.remaining()
    }

    fn u8(&mut self) -> Result<u8, FrameError> {
        self.r.u8().map_err(|e| self.map(e))
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], FrameError> {
        self.r.array().map_err(|e| self.map(e))
    }

    /// `n` bytes as a zero-copy slice of the payload.
    fn data(&mut self, n: u64) -> Result<Bytes, FrameError> {
        let start = self.r.position();
        self.r.bytes_u64(n).map_err(|e| self.map(e))?;
        Ok(self.buf.slice(start..self.r.position()))
    }

    /// A varint length followed by that many bytes.
    fn len_prefixed(&mut self) -> Result<Bytes, FrameError> {
        let n = self.varint()?;
        self.data(n)
    }

    fn stream_id(&mut self) -> Result<StreamId, FrameError> {
        self.varint().map(StreamId)
    }

    fn stream_count(&mut self) -> Result<u64, FrameError> {
        let v = self.varint()?;
        if v > MAX_STREAM_COUNT {
            // RFC 9000 §19.11 (MAX_STREAMS) and §19.14 (STREAMS_BLOCKED).
            return Err(self.err("stream count exceeds 2^60"));
        }
        Ok(v)
    }

    /// Checks offset + length <= 2^62-1 (RFC 9000 §19.6, §19.8).
    fn check_end(&self, offset: u64, len: usize) -> Result<(), FrameError> {
        match offset.checked_add(len as u64) {
            Some(end) if end <= VarInt::MAX_U64 => Ok(()),
            _ => Err(self.err("offset + length exceeds 2^62-1")),
        }
    }
}

/// Iterator over the frames of a packet payload; created by [`Frame::iter`].
///
/// Yields `Ok(frame)` for each frame and stops after the first `Err`.
#[derive(Debug, Clone)]
pub struct FrameIter {
    buf: Bytes,
    pos: usize,
    done: bool,
}

impl FrameIter {
    /// Creates an iterator over `payload` (a decrypted packet payload).
    pub fn new(payload: Bytes) -> FrameIter {
        FrameIter {
            buf: payload,
            pos: 0,
            done: false,
        }
    }

    /// Bytes not yet decoded.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }
}

impl Iterator for FrameIter {
    type Item = Result<Frame, FrameError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done || self.pos >= self.buf.len() {
            return None;
        }
        let mut r = Reader::new(&self.buf);
        if r.skip(self.pos).is_err() {
            self.done = true;
            return None;
        }
        let res = decode_frame(&mut r, &self.buf);
        self.pos = r.position();
        if res.is_err() {
            self.done = true;
        }
        Some(res)
    }
}

impl std::iter::FusedIterator for FrameIter {}

/// Decodes one frame at the reader's position.
fn decode_frame(r: &mut Reader<'_>, buf: &Bytes) -> Result<Frame, FrameError> {
    let (t, len) = r
        .varint_with_len()
        .map_err(|_| FrameError::encoding(0, "truncated frame type"))?;
    // RFC 9000 §12.4: a frame type MUST use the shortest possible encoding;
    // an endpoint MAY treat a longer one as a PROTOCOL_VIOLATION.
    if len != varint_size(t) {
        return Err(FrameError::protocol(t, "frame type not minimally encoded"));
    }
    if t == ty::PADDING {
        let mut n = 1usize;
        while r.peek_u8() == Some(0) {
            let _ = r.u8();
            n += 1;
        }
        return Ok(Frame::Padding(n));
    }
    let mut fr = FrameReader { r, buf, ty: t };
    decode_body(&mut fr, t)
}

/// Decodes the body of a frame of type `t`.
fn decode_body(r: &mut FrameReader<'_, '_>, t: u64) -> Result<Frame, FrameError> {
    Ok(match t {
        ty::PING => Frame::Ping,
        ty::ACK | ty::ACK_ECN | ty::PATH_ACK | ty::PATH_ACK_ECN => {
            Frame::Ack(AckFrame::decode(r, t)?)
        }
        ty::RESET_STREAM => Frame::ResetStream {
            id: r.stream_id()?,
            error_code: r.varint()?,
            final_size: r.varint()?,
        },
        ty::STOP_SENDING => Frame::StopSending {
            id: r.stream_id()?,
            error_code: r.varint()?,
        },
        ty::CRYPTO => {
            let offset = r.varint()?;
            let data = r.len_prefixed()?;
            r.check_end(offset, data.len())?;
            Frame::Crypto { offset, data }
        }
        ty::NEW_TOKEN => {
            let token = r.len_prefixed()?;
            if token.is_empty() {
                // RFC 9000 §19.7.
                return Err(r.err("empty NEW_TOKEN"));
            }
            Frame::NewToken { token }
        }
        ty::STREAM..=ty::STREAM_MAX => Frame::Stream(decode_stream(r, t)?),
        ty::MAX_DATA => Frame::MaxData(r.varint()?),
        ty::MAX_STREAM_DATA => Frame::MaxStreamData {
            id: r.stream_id()?,
            max: r.varint()?,
        },
        ty::MAX_STREAMS_BIDI | ty::MAX_STREAMS_UNI => Frame::MaxStreams {
            dir: dir_of(t, ty::MAX_STREAMS_BIDI),
            count: r.stream_count()?,
        },
        ty::DATA_BLOCKED => Frame::DataBlocked { limit: r.varint()? },
        ty::STREAM_DATA_BLOCKED => Frame::StreamDataBlocked {
            id: r.stream_id()?,
            limit: r.varint()?,
        },
        ty::STREAMS_BLOCKED_BIDI | ty::STREAMS_BLOCKED_UNI => Frame::StreamsBlocked {
            dir: dir_of(t, ty::STREAMS_BLOCKED_BIDI),
            limit: r.stream_count()?,
        },
        ty::NEW_CONNECTION_ID => Frame::NewConnectionId(decode_ncid(r, None)?),
        ty::PATH_NEW_CONNECTION_ID => {
            let path_id = r.path_id()?;
            Frame::NewConnectionId(decode_ncid(r, Some(path_id))?)
        }
        ty::RETIRE_CONNECTION_ID => Frame::RetireConnectionId {
            path_id: None,
            sequence: r.varint()?,
        },
        ty::PATH_RETIRE_CONNECTION_ID => Frame::RetireConnectionId {
            path_id: Some(r.path_id()?),
            sequence: r.varint()?,
        },
        ty::PATH_CHALLENGE => Frame::PathChallenge(r.array()?),
        ty::PATH_RESPONSE => Frame::PathResponse(r.array()?),
        ty::CONNECTION_CLOSE | ty::APPLICATION_CLOSE => {
            let error_code = r.varint()?;
            let frame_type = if t == ty::CONNECTION_CLOSE {
                Some(r.varint()?)
            } else {
                None
            };
            let reason = r.len_prefixed()?;
            Frame::ConnectionClose(ConnectionClose {
                error_code,
                frame_type,
                reason,
            })
        }
        ty::HANDSHAKE_DONE => Frame::HandshakeDone,
        ty::IMMEDIATE_ACK => Frame::ImmediateAck,
        ty::ACK_FREQUENCY => decode_ack_frequency(r)?,
        // RFC 9221 §4: with the LEN bit a Length field precedes the data; without it the
        // data extends to the end of the packet.
        ty::DATAGRAM_LEN => Frame::Datagram(DatagramFrame {
            data: r.len_prefixed()?,
        }),
        ty::DATAGRAM => Frame::Datagram(DatagramFrame {
            data: r.data(r.remaining() as u64)?,
        }),
        _ => decode_extension(r, t)?,
    })
}

/// Multipath and experimental frames.
fn decode_extension(r: &mut FrameReader<'_, '_>, t: u64) -> Result<Frame, FrameError> {
    Ok(match t {
        ty::PATH_ABANDON => Frame::PathAbandon {
            path_id: r.path_id()?,
            error_code: r.varint()?,
        },
        ty::PATH_STATUS_BACKUP | ty::PATH_STATUS_AVAILABLE => Frame::PathStatus {
            path_id: r.path_id()?,
            sequence: r.varint()?,
            status: if t == ty::PATH_STATUS_BACKUP {
                PathStatus::Backup
            } else {
                PathStatus::Available
            },
        },
        // RFC 10069 §"MAX_PATH_ID frame": > 2^32-1 is a PROTOCOL_VIOLATION.
        ty::MAX_PATH_ID => Frame::MaxPathId(r.path_id()?),
        ty::PATHS_BLOCKED => Frame::PathsBlocked(r.path_id()?),
        ty::PATH_CIDS_BLOCKED => Frame::PathCidsBlocked {
            path_id: r.path_id()?,
            next_sequence: r.varint()?,
        },
        ty::QOE_CONTROL_SIGNAL => Frame::QoeControlSignal(QoeSignal {
            sequence: r.varint()?,
            cached_bytes: r.varint()?,
            cached_frames: r.varint()?,
            play_time_left_ms: r.varint()?,
            bitrate_kbps: r.varint()?,
            frame_rate: r.varint()?,
        }),
        // RFC 9000 §12.4: unknown frame type => FRAME_ENCODING_ERROR.
        _ => return Err(r.err("unknown frame type")),
    })
}

fn dir_of(t: u64, bidi_type: u64) -> Dir {
    if t == bidi_type {
        Dir::Bi
    } else {
        Dir::Uni
    }
}

/// STREAM frame body (RFC 9000 §19.8).
fn decode_stream(r: &mut FrameReader<'_, '_>, t: u64) -> Result<StreamFrame, FrameError> {
    let id = r.stream_id()?;
    let offset = if t & ty::STREAM_OFF_BIT != 0 {
        r.varint()?
    } else {
        0
    };
    let data = if t & ty::STREAM_LEN_BIT != 0 {
        r.len_prefixed()?
    } else {
        // No Length field: the data extends to the end of the packet.
        r.data(r.remaining() as u64)?
    };
    r.check_end(offset, data.len())?;
    Ok(StreamFrame {
        id,
        offset,
        fin: t & ty::STREAM_FIN_BIT != 0,
        data,
    })
}

/// NEW_CONNECTION_ID body after the optional Path Identifier
/// (RFC 9000 §19.15, RFC 10069 §"PATH_NEW_CONNECTION_ID frame").
fn decode_ncid(
    r: &mut FrameReader<'_, '_>,
    path_id: Option<u64>,
) -> Result<NewConnectionId, FrameError> {
    let sequence = r.varint()?;
    let retire_prior_to = r.varint()?;
    if retire_prior_to > sequence {
        // RFC 9000 §19.15: Retire Prior To > Sequence Number.
        return Err(r.err("retire_prior_to greater than sequence number"));
    }
    let len = usize::from(r.u8()?);
    if len == 0 || len > MAX_CID_LEN {
        // RFC 9000 §19.15: lengths < 1 or > 20 are FRAME_ENCODING_ERROR.
        return Err(r.err("invalid connection ID length"));
    }
    let raw = r.data(len as u64)?;
    let cid = ConnectionId::new(&raw).map_err(|_| r.err("invalid connection ID length"))?;
    let reset_token = ResetToken(r.array()?);
    Ok(NewConnectionId {
        path_id,
        sequence,
        retire_prior_to,
        cid,
        reset_token,
    })
}

/// ACK_FREQUENCY body (draft-ietf-quic-ack-frequency §"ACK_FREQUENCY Frame").
fn decode_ack_frequency(r: &mut FrameReader<'_, '_>) -> Result<Frame, FrameError> {
    let sequence = r.varint()?;
    let ack_eliciting_threshold = r.varint()?;
    let request_max_ack_delay_us = r.varint()?;
    let reordering_threshold = r.varint()?;
    if request_max_ack_delay_us >= MAX_ACK_DELAY_LIMIT_US {
        // Values of 2^14 ms or more are invalid: PROTOCOL_VIOLATION.
        return Err(FrameError::protocol(
            ty::ACK_FREQUENCY,
            "requested max ack delay >= 2^14 ms",
        ));
    }
    Ok(Frame::AckFrequency {
        sequence,
        ack_eliciting_threshold,
        request_max_ack_delay_us,
        reordering_threshold,
    })
}
