//! Frames: RFC 9000 §19, RFC 9221 (DATAGRAM 0x30/0x31), RFC 10069 (multipath,
//! "suggested" codepoints 0x3e..0x3e7c as used by the noq crate),
//! draft-ietf-quic-ack-frequency (ACK_FREQUENCY 0xaf, IMMEDIATE_ACK 0x1f) and
//! the experimental XLINK QoE control-signal frame (0x3f5153).
//!
//! Encoding: [`Frame::encode`] / [`Frame::encoded_len`] (exact). Decoding:
//! [`Frame::iter`] returns a [`FrameIter`] over a packet payload yielding
//! `Result<Frame, FrameError>`; it stops after the first error. Payload-carrying
//! frames (STREAM, CRYPTO, NEW_TOKEN, DATAGRAM, CONNECTION_CLOSE reason) are
//! zero-copy slices of the payload `Bytes`.

mod ack;
mod decode;
mod encode;
#[cfg(test)]
mod tests;

/// Re-exported for convenience: the error every frame decoder returns.
pub use crate::error::FrameError;
pub use ack::{AckFrame, EcnCounts};
pub use decode::FrameIter;

use crate::cid::{ConnectionId, ResetToken};
use crate::header::PacketKind;
use crate::stream_id::{Dir, StreamId};
use crate::varint::varint_size;
use bytes::Bytes;

/// Frame type codepoints.
pub mod ty {
    /// PADDING (RFC 9000 §19.1).
    pub const PADDING: u64 = 0x00;
    /// PING (RFC 9000 §19.2).
    pub const PING: u64 = 0x01;
    /// ACK without ECN counts (RFC 9000 §19.3).
    pub const ACK: u64 = 0x02;
    /// ACK with ECN counts (RFC 9000 §19.3).
    pub const ACK_ECN: u64 = 0x03;
    /// RESET_STREAM (RFC 9000 §19.4).
    pub const RESET_STREAM: u64 = 0x04;
    /// STOP_SENDING (RFC 9000 §19.5).
    pub const STOP_SENDING: u64 = 0x05;
    /// CRYPTO (RFC 9000 §19.6).
    pub const CRYPTO: u64 = 0x06;
    /// NEW_TOKEN (RFC 9000 §19.7).
    pub const NEW_TOKEN: u64 = 0x07;
    /// First STREAM type (RFC 9000 §19.8); 0x08..=0x0f with OFF/LEN/FIN bits.
    pub const STREAM: u64 = 0x08;
    /// Last STREAM type.
    pub const STREAM_MAX: u64 = 0x0f;
    /// STREAM type bit: Offset field present.
    pub const STREAM_OFF_BIT: u64 = 0x04;
    /// STREAM type bit: Length field present.
    pub const STREAM_LEN_BIT: u64 = 0x02;
    /// STREAM type bit: FIN.
    pub const STREAM_FIN_BIT: u64 = 0x01;
    /// MAX_DATA (RFC 9000 §19.9).
    pub const MAX_DATA: u64 = 0x10;
    /// MAX_STREAM_DATA (RFC 9000 §19.10).
    pub const MAX_STREAM_DATA: u64 = 0x11;
    /// MAX_STREAMS for bidirectional streams (RFC 9000 §19.11).
    pub const MAX_STREAMS_BIDI: u64 = 0x12;
    /// MAX_STREAMS for unidirectional streams (RFC 9000 §19.11).
    pub const MAX_STREAMS_UNI: u64 = 0x13;
    /// DATA_BLOCKED (RFC 9000 §19.12).
    pub const DATA_BLOCKED: u64 = 0x14;
    /// STREAM_DATA_BLOCKED (RFC 9000 §19.13).
    pub const STREAM_DATA_BLOCKED: u64 = 0x15;
    /// STREAMS_BLOCKED for bidirectional streams (RFC 9000 §19.14).
    pub const STREAMS_BLOCKED_BIDI: u64 = 0x16;
    /// STREAMS_BLOCKED for unidirectional streams (RFC 9000 §19.14).
    pub const STREAMS_BLOCKED_UNI: u64 = 0x17;
    /// NEW_CONNECTION_ID (RFC 9000 §19.15).
    pub const NEW_CONNECTION_ID: u64 = 0x18;
    /// RETIRE_CONNECTION_ID (RFC 9000 §19.16).
    pub const RETIRE_CONNECTION_ID: u64 = 0x19;
    /// PATH_CHALLENGE (RFC 9000 §19.17).
    pub const PATH_CHALLENGE: u64 = 0x1a;
    /// PATH_RESPONSE (RFC 9000 §19.18).
    pub const PATH_RESPONSE: u64 = 0x1b;
    /// CONNECTION_CLOSE, transport variant (RFC 9000 §19.19).
    pub const CONNECTION_CLOSE: u64 = 0x1c;
    /// CONNECTION_CLOSE, application variant (RFC 9000 §19.19).
    pub const APPLICATION_CLOSE: u64 = 0x1d;
    /// HANDSHAKE_DONE (RFC 9000 §19.20).
    pub const HANDSHAKE_DONE: u64 = 0x1e;
    /// IMMEDIATE_ACK (ack-frequency §"IMMEDIATE_ACK Frame").
    pub const IMMEDIATE_ACK: u64 = 0x1f;
    /// DATAGRAM without a Length field (RFC 9221 §4): the data extends to the
    /// end of the packet.
    pub const DATAGRAM: u64 = 0x30;
    /// DATAGRAM with a Length field (RFC 9221 §4: the LEN bit, 0x01).
    pub const DATAGRAM_LEN: u64 = 0x31;
    /// ACK_FREQUENCY (ack-frequency §"ACK_FREQUENCY Frame").
    pub const ACK_FREQUENCY: u64 = 0xaf;
    /// PATH_ACK without ECN (RFC 10069 §"PATH_ACK Frame").
    pub const PATH_ACK: u64 = 0x3e;
    /// PATH_ACK with ECN (RFC 10069 §"PATH_ACK Frame").
    pub const PATH_ACK_ECN: u64 = 0x3f;
    /// PATH_ABANDON (RFC 10069 §"PATH_ABANDON Frame").
    pub const PATH_ABANDON: u64 = 0x3e75;
    /// PATH_STATUS_BACKUP (RFC 10069 §"PATH_STATUS_AVAILABLE and PATH_STATUS_BACKUP").
    pub const PATH_STATUS_BACKUP: u64 = 0x3e76;
    /// PATH_STATUS_AVAILABLE (RFC 10069 §"PATH_STATUS_AVAILABLE and PATH_STATUS_BACKUP").
    pub const PATH_STATUS_AVAILABLE: u64 = 0x3e77;
    /// PATH_NEW_CONNECTION_ID (RFC 10069 §"PATH_NEW_CONNECTION_ID frame").
    pub const PATH_NEW_CONNECTION_ID: u64 = 0x3e78;
    /// PATH_RETIRE_CONNECTION_ID (RFC 10069 §"PATH_RETIRE_CONNECTION_ID frame").
    pub const PATH_RETIRE_CONNECTION_ID: u64 = 0x3e79;
    /// MAX_PATH_ID (RFC 10069 §"MAX_PATH_ID frame").
    pub const MAX_PATH_ID: u64 = 0x3e7a;
    /// PATHS_BLOCKED (RFC 10069 §"PATHS_BLOCKED and PATH_CIDS_BLOCKED frames").
    pub const PATHS_BLOCKED: u64 = 0x3e7b;
    /// PATH_CIDS_BLOCKED (RFC 10069 §"PATHS_BLOCKED and PATH_CIDS_BLOCKED frames").
    pub const PATH_CIDS_BLOCKED: u64 = 0x3e7c;
    /// Experimental XLINK QoE control signal ("?QS"); not IANA registered.
    pub const QOE_CONTROL_SIGNAL: u64 = 0x3f5153;
}

/// Largest path ID allowed by RFC 10069 §"initial_max_path_id" (2^32-1).
pub const MAX_PATH_ID_VALUE: u64 = u32::MAX as u64;

/// Largest stream count in MAX_STREAMS / STREAMS_BLOCKED (RFC 9000 §19.11, §19.14).
pub const MAX_STREAM_COUNT: u64 = 1 << 60;

/// A decoded or to-be-encoded QUIC frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame {
    /// A run of PADDING (0x00) bytes, coalesced into one frame (RFC 9000 §19.1).
    Padding(usize),
    /// PING (RFC 9000 §19.2).
    Ping,
    /// ACK 0x02/0x03 (`path_id == None`) or PATH_ACK 0x3e/0x3f (`Some`).
    Ack(AckFrame),
    /// RESET_STREAM (RFC 9000 §19.4).
    ResetStream {
        /// Stream being reset.
        id: StreamId,
        /// Application protocol error code.
        error_code: u64,
        /// Final size of the stream in bytes.
        final_size: u64,
    },
    /// STOP_SENDING (RFC 9000 §19.5).
    StopSending {
        /// Stream whose sending part should stop.
        id: StreamId,
        /// Application protocol error code.
        error_code: u64,
    },
    /// CRYPTO (RFC 9000 §19.6).
    Crypto {
        /// Byte offset in the crypto stream.
        offset: u64,
        /// Crypto data.
        data: Bytes,
    },
    /// NEW_TOKEN (RFC 9000 §19.7). The token is never empty when decoded.
    NewToken {
        /// Opaque address-validation token.
        token: Bytes,
    },
    /// STREAM (RFC 9000 §19.8).
    Stream(StreamFrame),
    /// MAX_DATA (RFC 9000 §19.9).
    MaxData(u64),
    /// MAX_STREAM_DATA (RFC 9000 §19.10).
    MaxStreamData {
        /// Stream the limit applies to.
        id: StreamId,
        /// Maximum amount of data that can be sent on the stream.
        max: u64,
    },
    /// MAX_STREAMS (RFC 9000 §19.11); `count <= 2^60`.
    MaxStreams {
        /// Stream direction the limit applies to.
        dir: Dir,
        /// Cumulative maximum stream count.
        count: u64,
    },
    /// DATA_BLOCKED (RFC 9000 §19.12).
    DataBlocked {
        /// Connection-level limit at which blocking occurred.
        limit: u64,
    },
    /// STREAM_DATA_BLOCKED (RFC 9000 §19.13).
    StreamDataBlocked {
        /// Blocked stream.
        id: StreamId,
        /// Stream-level limit at which blocking occurred.
        limit: u64,
    },
    /// STREAMS_BLOCKED (RFC 9000 §19.14); `limit <= 2^60`.
    StreamsBlocked {
        /// Stream direction that is blocked.
        dir: Dir,
        /// Stream limit at the time the frame was sent.
        limit: u64,
    },
    /// NEW_CONNECTION_ID 0x18 (`path_id == None`) or PATH_NEW_CONNECTION_ID 0x3e78.
    NewConnectionId(NewConnectionId),
    /// RETIRE_CONNECTION_ID 0x19 (`path_id == None`) or PATH_RETIRE_CONNECTION_ID 0x3e79.
    RetireConnectionId {
        /// Path ID for the multipath variant.
        path_id: Option<u64>,
        /// Sequence number of the connection ID being retired.
        sequence: u64,
    },
    /// PATH_CHALLENGE (RFC 9000 §19.17).
    PathChallenge([u8; 8]),
    /// PATH_RESPONSE (RFC 9000 §19.18).
    PathResponse([u8; 8]),
    /// CONNECTION_CLOSE 0x1c / 0x1d (RFC 9000 §19.19).
    ConnectionClose(ConnectionClose),
    /// HANDSHAKE_DONE (RFC 9000 §19.20).
    HandshakeDone,
    /// PATH_ABANDON 0x3e75 (RFC 10069). See [`crate::error::path_error`].
    PathAbandon {
        /// Path to abandon.
        path_id: u64,
        /// Reason, e.g. a [`crate::error::path_error`] code or NO_ERROR.
        error_code: u64,
    },
    /// PATH_STATUS_BACKUP 0x3e76 / PATH_STATUS_AVAILABLE 0x3e77 (RFC 10069).
    PathStatus {
        /// Path the status applies to.
        path_id: u64,
        /// Per-path status sequence number.
        sequence: u64,
        /// The advertised status.
        status: PathStatus,
    },
    /// MAX_PATH_ID 0x3e7a (RFC 10069); at most 2^32-1.
    MaxPathId(u64),
    /// PATHS_BLOCKED 0x3e7b (RFC 10069): the maximum path ID in effect.
    PathsBlocked(u64),
    /// PATH_CIDS_BLOCKED 0x3e7c (RFC 10069).
    PathCidsBlocked {
        /// Path lacking connection IDs.
        path_id: u64,
        /// Next sequence number expected to be issued for this path.
        next_sequence: u64,
    },
    /// ACK_FREQUENCY 0xaf (draft-ietf-quic-ack-frequency).
    AckFrequency {
        /// Sequence number, to ignore obsolete frames.
        sequence: u64,
        /// Ack-eliciting packets to receive before an ACK must be sent.
        ack_eliciting_threshold: u64,
        /// Requested max_ack_delay in microseconds (`< 2^14 ms`).
        request_max_ack_delay_us: u64,
        /// Reordering tolerated before an immediate ACK (0 = never).
        reordering_threshold: u64,
    },
    /// IMMEDIATE_ACK 0x1f (draft-ietf-quic-ack-frequency).
    ImmediateAck,
    /// DATAGRAM 0x30 / 0x31 (RFC 9221 §4): unreliable application data.
    Datagram(DatagramFrame),
    /// Experimental XLINK QoE feedback frame (type 0x3f5153, six varints).
    QoeControlSignal(QoeSignal),
}

/// A STREAM frame (RFC 9000 §19.8).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamFrame {
    /// Stream the data belongs to.
    pub id: StreamId,
    /// Byte offset of `data` in the stream (Offset field omitted when 0).
    pub offset: u64,
    /// Whether this frame carries the end of the stream.
    pub fin: bool,
    /// Stream data.
    pub data: Bytes,
}

/// A DATAGRAM frame (RFC 9221 §4). [`Frame::encode`] writes type 0x31 (with
/// Length); [`DatagramFrame::encode_with_len`] can omit it for the last frame
/// of a packet (type 0x30). Decoding accepts both.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatagramFrame {
    /// Application data (may be empty).
    pub data: Bytes,
}

/// NEW_CONNECTION_ID / PATH_NEW_CONNECTION_ID contents (RFC 9000 §19.15, RFC 10069).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewConnectionId {
    /// `None` for NEW_CONNECTION_ID (0x18), `Some` for PATH_NEW_CONNECTION_ID (0x3e78).
    pub path_id: Option<u64>,
    /// Sequence number (per path for the multipath variant).
    pub sequence: u64,
    /// Connection IDs with lower sequence numbers should be retired.
    pub retire_prior_to: u64,
    /// The new connection ID (1..=20 bytes on the wire).
    pub cid: ConnectionId,
    /// Stateless reset token for `cid`.
    pub reset_token: ResetToken,
}

/// CONNECTION_CLOSE contents (RFC 9000 §19.19).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectionClose {
    /// Transport error code (0x1c) or application error code (0x1d).
    pub error_code: u64,
    /// `Some(type)` => transport close 0x1c; `None` => application close 0x1d.
    pub frame_type: Option<u64>,
    /// UTF-8 reason phrase (not validated).
    pub reason: Bytes,
}

/// Path status advertised by PATH_STATUS_* frames (RFC 10069).
#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash)]
pub enum PathStatus {
    /// PATH_STATUS_AVAILABLE (0x3e77): the path may be used for sending.
    Available,
    /// PATH_STATUS_BACKUP (0x3e76): prefer not to use the path for sending.
    Backup,
}

/// Experimental XLINK QoE control signal (frame type 0x3f5153, "?QS"): the
/// client reports its player state so the server scheduler can react. All
/// fields are varints, in the order declared here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QoeSignal {
    /// Monotonic sequence number of the report.
    pub sequence: u64,
    /// Bytes buffered at the player.
    pub cached_bytes: u64,
    /// Frames buffered at the player.
    pub cached_frames: u64,
    /// Remaining play time of the buffer, in milliseconds.
    pub play_time_left_ms: u64,
    /// Current bitrate in kbit/s.
    pub bitrate_kbps: u64,
    /// Current frame rate in frames per second.
    pub frame_rate: u64,
}

impl Frame {
    /// Creates a decoding iterator over a packet payload.
    pub fn iter(payload: Bytes) -> FrameIter {
        FrameIter::new(payload)
    }

    /// The frame type this frame is encoded with by [`Frame::encode`]
    /// (for STREAM: including the OFF, LEN (always set) and FIN bits).
    pub fn frame_type(&self) -> u64 {
        use Frame::*;
        match self {
            Padding(_) => ty::PADDING,
            Ping => ty::PING,
            Ack(a) => a.frame_type(),
            ResetStream { .. } => ty::RESET_STREAM,
            StopSending { .. } => ty::STOP_SENDING,
            Crypto { .. } => ty::CRYPTO,
            NewToken { .. } => ty::NEW_TOKEN,
            Stream(s) => s.frame_type(true),
            MaxData(_) => ty::MAX_DATA,
            MaxStreamData { .. } => ty::MAX_STREAM_DATA,
            MaxStreams { dir: Dir::Bi, .. } => ty::MAX_STREAMS_BIDI,
            MaxStreams { dir: Dir::Uni, .. } => ty::MAX_STREAMS_UNI,
            DataBlocked { .. } => ty::DATA_BLOCKED,
            StreamDataBlocked { .. } => ty::STREAM_DATA_BLOCKED,
            StreamsBlocked { dir: Dir::Bi, .. } => ty::STREAMS_BLOCKED_BIDI,
            StreamsBlocked { dir: Dir::Uni, .. } => ty::STREAMS_BLOCKED_UNI,
            NewConnectionId(n) if n.path_id.is_some() => ty::PATH_NEW_CONNECTION_ID,
            NewConnectionId(_) => ty::NEW_CONNECTION_ID,
            RetireConnectionId {
                path_id: Some(_), ..
            } => ty::PATH_RETIRE_CONNECTION_ID,
            RetireConnectionId { path_id: None, .. } => ty::RETIRE_CONNECTION_ID,
            PathChallenge(_) => ty::PATH_CHALLENGE,
            PathResponse(_) => ty::PATH_RESPONSE,
            ConnectionClose(c) if c.frame_type.is_some() => ty::CONNECTION_CLOSE,
            ConnectionClose(_) => ty::APPLICATION_CLOSE,
            HandshakeDone => ty::HANDSHAKE_DONE,
            PathAbandon { .. } => ty::PATH_ABANDON,
            PathStatus {
                status: self::PathStatus::Available,
                ..
            } => ty::PATH_STATUS_AVAILABLE,
            PathStatus {
                status: self::PathStatus::Backup,
                ..
            } => ty::PATH_STATUS_BACKUP,
            MaxPathId(_) => ty::MAX_PATH_ID,
            PathsBlocked(_) => ty::PATHS_BLOCKED,
            PathCidsBlocked { .. } => ty::PATH_CIDS_BLOCKED,
            AckFrequency { .. } => ty::ACK_FREQUENCY,
            ImmediateAck => ty::IMMEDIATE_ACK,
            Datagram(_) => ty::DATAGRAM_LEN,
            QoeControlSignal(_) => ty::QOE_CONTROL_SIGNAL,
        }
    }

    /// Whether this frame makes its packet ack-eliciting: every frame except
    /// ACK/PATH_ACK, PADDING and CONNECTION_CLOSE (RFC 9002 §2, RFC 9000 §13.2).
    pub fn is_ack_eliciting(&self) -> bool {
        !matches!(
            self,
            Frame::Ack(_) | Frame::Padding(_) | Frame::ConnectionClose(_)
        )
    }

    /// Whether this is a probing frame (RFC 9000 §9.1): PATH_CHALLENGE,
    /// PATH_RESPONSE, NEW_CONNECTION_ID and PADDING.
    ///
    /// PATH_NEW_CONNECTION_ID is **not** probing: RFC 10069 §"Relation to
    /// Probing and Migration" does not extend the §9.1 list (with multipath,
    /// any frame may be sent on a new path ID anyway).
    pub fn is_probing(&self) -> bool {
        match self {
            Frame::PathChallenge(_) | Frame::PathResponse(_) | Frame::Padding(_) => true,
            Frame::NewConnectionId(n) => n.path_id.is_none(),
            _ => false,
        }
    }

    /// Whether this is one of the RFC 10069 multipath frames.
    pub fn is_multipath(&self) -> bool {
        is_multipath_type(self.frame_type())
    }
}

/// Whether `frame_type` is one of the RFC 10069 multipath frame types.
pub fn is_multipath_type(frame_type: u64) -> bool {
    matches!(
        frame_type,
        ty::PATH_ACK | ty::PATH_ACK_ECN | ty::PATH_ABANDON..=ty::PATH_CIDS_BLOCKED
    )
}

/// Whether `frame_type` is DATAGRAM, with or without Length (RFC 9221 §4).
pub fn is_datagram_type(frame_type: u64) -> bool {
    matches!(frame_type, ty::DATAGRAM | ty::DATAGRAM_LEN)
}

/// Whether `frame_type` is a frame type this crate knows.
pub fn is_known_type(frame_type: u64) -> bool {
    frame_type <= ty::IMMEDIATE_ACK
        || is_datagram_type(frame_type)
        || frame_type == ty::ACK_FREQUENCY
        || frame_type == ty::QOE_CONTROL_SIGNAL
        || is_multipath_type(frame_type)
}

/// Whether a frame of `frame_type` may appear in a packet of kind `packet`
/// (RFC 9000 §12.4 Table 3, §12.5). Unknown frame types are never allowed.
///
/// - Initial/Handshake: PADDING, PING, ACK, CRYPTO, CONNECTION_CLOSE 0x1c only.
/// - 0-RTT: everything in RFC 9000 marked "0" — not ACK, CRYPTO, NEW_TOKEN,
///   PATH_RESPONSE, HANDSHAKE_DONE; ACK_FREQUENCY/IMMEDIATE_ACK are also
///   excluded (ack-frequency §"min_ack_delay": they cannot be sent in 0-RTT),
///   as are all multipath frames (RFC 10069 §"New Frames": 1-RTT only) and the
///   XLINK frame (negotiated by a non-remembered transport parameter).
///   DATAGRAM is allowed (RFC 9221 §4: "protected with either 0-RTT or 1-RTT
///   keys"), so it is excluded from Initial and Handshake packets.
/// - 1-RTT (short header): every known frame.
/// - Retry / Version Negotiation: none (they carry no frames).
///
/// Violations are connection errors of type PROTOCOL_VIOLATION.
pub fn allowed_in(frame_type: u64, packet: PacketKind) -> bool {
    if !is_known_type(frame_type) {
        return false;
    }
    match packet {
        PacketKind::Initial | PacketKind::Handshake => matches!(
            frame_type,
            ty::PADDING | ty::PING | ty::ACK | ty::ACK_ECN | ty::CRYPTO | ty::CONNECTION_CLOSE
        ),
        PacketKind::ZeroRtt => {
            !matches!(
                frame_type,
                ty::ACK
                    | ty::ACK_ECN
                    | ty::CRYPTO
                    | ty::NEW_TOKEN
                    | ty::PATH_RESPONSE
                    | ty::HANDSHAKE_DONE
                    | ty::IMMEDIATE_ACK
                    | ty::ACK_FREQUENCY
                    | ty::QOE_CONTROL_SIGNAL
            ) && !is_multipath_type(frame_type)
        }
        PacketKind::Short => true,
        PacketKind::Retry | PacketKind::VersionNegotiation => false,
    }
}

/// Bytes taken by a STREAM frame's header (type, stream ID, optional Offset,
/// optional Length) for `data_len` bytes of data (RFC 9000 §19.8). The Offset
/// field is omitted when `offset == 0`.
pub fn stream_frame_header_len(
    id: StreamId,
    offset: u64,
    data_len: usize,
    include_len: bool,
) -> usize {
    let mut n = 1 + varint_size(id.0);
    if offset != 0 {
        n += varint_size(offset);
    }
    if include_len {
        n += varint_size(data_len as u64);
    }
    n
}

/// Bytes taken by a DATAGRAM frame's header (type, optional Length) for
/// `data_len` bytes of data (RFC 9221 §4).
pub fn datagram_frame_header_len(data_len: usize, include_len: bool) -> usize {
    if include_len {
        1 + varint_size(data_len as u64)
    } else {
        1
    }
}

/// The largest DATAGRAM payload whose frame, with its Length field, takes at
/// most `frame_room` bytes (RFC 9221 §3: max_datagram_frame_size counts the
/// type, the length and the payload). None if not even an empty one fits.
pub fn max_datagram_payload(frame_room: usize) -> Option<usize> {
    let mut n = frame_room.checked_sub(2)?;
    while n > 0 && datagram_frame_header_len(n, true) + n > frame_room {
        n -= 1;
    }
    Some(n)
}

/// Bytes taken by a CRYPTO frame's header (type, Offset, Length) for `len`
/// bytes of data (RFC 9000 §19.6).
pub fn crypto_frame_header_len(offset: u64, len: usize) -> usize {
    1 + varint_size(offset) + varint_size(len as u64)
}

/// Human-readable name of a frame type (for logs / qlog).
pub fn frame_type_name(frame_type: u64) -> &'static str {
    match frame_type {
        ty::PADDING => "PADDING",
        ty::PING => "PING",
        ty::ACK | ty::ACK_ECN => "ACK",
        ty::RESET_STREAM => "RESET_STREAM",
        ty::STOP_SENDING => "STOP_SENDING",
        ty::CRYPTO => "CRYPTO",
        ty::NEW_TOKEN => "NEW_TOKEN",
        ty::STREAM..=ty::STREAM_MAX => "STREAM",
        ty::MAX_DATA => "MAX_DATA",
        ty::MAX_STREAM_DATA => "MAX_STREAM_DATA",
        ty::MAX_STREAMS_BIDI | ty::MAX_STREAMS_UNI => "MAX_STREAMS",
        ty::DATA_BLOCKED => "DATA_BLOCKED",
        ty::STREAM_DATA_BLOCKED => "STREAM_DATA_BLOCKED",
        ty::STREAMS_BLOCKED_BIDI | ty::STREAMS_BLOCKED_UNI => "STREAMS_BLOCKED",
        ty::NEW_CONNECTION_ID => "NEW_CONNECTION_ID",
        ty::RETIRE_CONNECTION_ID => "RETIRE_CONNECTION_ID",
        ty::PATH_CHALLENGE => "PATH_CHALLENGE",
        ty::PATH_RESPONSE => "PATH_RESPONSE",
        ty::CONNECTION_CLOSE | ty::APPLICATION_CLOSE => "CONNECTION_CLOSE",
        ty::HANDSHAKE_DONE => "HANDSHAKE_DONE",
        ty::IMMEDIATE_ACK => "IMMEDIATE_ACK",
        ty::ACK_FREQUENCY => "ACK_FREQUENCY",
        ty::DATAGRAM | ty::DATAGRAM_LEN => "DATAGRAM",
        ty::PATH_ACK | ty::PATH_ACK_ECN => "PATH_ACK",
        ty::PATH_ABANDON => "PATH_ABANDON",
        ty::PATH_STATUS_BACKUP => "PATH_STATUS_BACKUP",
        ty::PATH_STATUS_AVAILABLE => "PATH_STATUS_AVAILABLE",
        ty::PATH_NEW_CONNECTION_ID => "PATH_NEW_CONNECTION_ID",
        ty::PATH_RETIRE_CONNECTION_ID => "PATH_RETIRE_CONNECTION_ID",
        ty::MAX_PATH_ID => "MAX_PATH_ID",
        ty::PATHS_BLOCKED => "PATHS_BLOCKED",
        ty::PATH_CIDS_BLOCKED => "PATH_CIDS_BLOCKED",
        ty::QOE_CONTROL_SIGNAL => "QOE_CONTROL_SIGNAL",
        _ => "UNKNOWN",
    }
}
