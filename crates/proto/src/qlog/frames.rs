//! Frames as qlog sees them (draft-ietf-quic-qlog-quic-events §"QUIC Frames"), including the
//! RFC 10069 multipath frames and draft-ietf-quic-ack-frequency's, which the qlog draft does
//! not define: they follow its style (`frame_type` = the frame's name in snake case, fields
//! named after the frame's fields). The experimental XLINK QoE frame is logged as
//! §"UnknownFrame" with its type in `frame_type_bytes`.

use mpquic_wire::frame::{ConnectionClose, Frame, PathStatus};
use mpquic_wire::stream_id::Dir;
use serde::Serialize;

use super::events::{hex, RawInfo};

/// One frame of a logged packet. Serialized with `frame_type` as the tag.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "frame_type", rename_all = "snake_case")]
pub enum QlogFrame {
    /// §"PaddingFrame": one entry for a run of PADDING bytes (`raw.payload_length`).
    Padding {
        /// The run's size in `raw.payload_length`, bytes.
        raw: RawInfo,
    },
    /// §"PingFrame".
    Ping,
    /// §"AckFrame"; ack_delay in milliseconds, acked_ranges ascending `[from, to]` or `[pn]`.
    Ack(AckInfo),
    /// §"ResetStreamFrame".
    ResetStream {
        /// The stream being reset (`stream_id`).
        stream_id: u64,
        /// Always "unknown": mpquic's applications define no error names (`error`).
        error: &'static str,
        /// The application error code (`error_code`).
        error_code: u64,
        /// The stream's final size, in bytes (`final_size`).
        final_size: u64,
    },
    /// §"StopSendingFrame".
    StopSending {
        /// The stream the receiver stops reading (`stream_id`).
        stream_id: u64,
        /// Always "unknown": mpquic's applications define no error names (`error`).
        error: &'static str,
        /// The application error code (`error_code`).
        error_code: u64,
    },
    /// §"CryptoFrame": the length goes in `raw.length`.
    Crypto {
        /// The stream offset of the crypto data, in bytes (`offset`).
        offset: u64,
        /// The crypto data's size in `raw.length`, bytes.
        raw: RawInfo,
    },
    /// §"NewTokenFrame".
    NewToken {
        /// The token (`token`); only its length is logged.
        token: Token,
    },
    /// §"StreamFrame".
    Stream {
        /// The stream (`stream_id`).
        stream_id: u64,
        /// The stream offset of the frame's data, in bytes (`offset`).
        offset: u64,
        /// Whether the FIN bit is set (`fin`).
        fin: bool,
        /// The data's size in `raw.length`, bytes.
        raw: RawInfo,
    },
    /// §"MaxDataFrame".
    MaxData {
        /// The connection-level flow control limit, in bytes (`maximum`).
        maximum: u64,
    },
    /// §"MaxStreamDataFrame".
    MaxStreamData {
        /// The stream (`stream_id`).
        stream_id: u64,
        /// The stream's flow control limit, in bytes (`maximum`).
        maximum: u64,
    },
    /// §"MaxStreamsFrame".
    MaxStreams {
        /// bidirectional or unidirectional (`stream_type`).
        stream_type: &'static str,
        /// The cumulative number of streams of that type the peer may open (`maximum`).
        maximum: u64,
    },
    /// §"DataBlockedFrame".
    DataBlocked {
        /// The connection-level limit the sender is blocked at, in bytes (`limit`).
        limit: u64,
    },
    /// §"StreamDataBlockedFrame".
    StreamDataBlocked {
        /// The blocked stream (`stream_id`).
        stream_id: u64,
        /// The stream limit the sender is blocked at, in bytes (`limit`).
        limit: u64,
    },
    /// §"StreamsBlockedFrame".
    StreamsBlocked {
        /// bidirectional or unidirectional (`stream_type`).
        stream_type: &'static str,
        /// The stream count limit the sender is blocked at (`limit`).
        limit: u64,
    },
    /// §"NewConnectionIDFrame".
    NewConnectionId(NewCidInfo),
    /// §"RetireConnectionIDFrame".
    RetireConnectionId {
        /// The sequence number of the retired connection ID (`sequence_number`).
        sequence_number: u64,
    },
    /// §"PathChallengeFrame".
    PathChallenge {
        /// The 8-byte challenge, hex (`data`).
        data: String,
    },
    /// §"PathResponseFrame".
    PathResponse {
        /// The 8 bytes echoed from the PATH_CHALLENGE, hex (`data`).
        data: String,
    },
    /// §"ConnectionCloseFrame" (transport 0x1c or application 0x1d).
    ConnectionClose(CloseInfo),
    /// §"HandshakeDoneFrame".
    HandshakeDone,
    /// RFC 10069 PATH_ACK: an ACK of one path's packet number space.
    PathAck(AckInfo),
    /// RFC 10069 PATH_ABANDON.
    PathAbandon {
        /// The abandoned path.
        path_id: u64,
        /// The multipath error code (RFC 10069 Error Code field).
        error_code: u64,
    },
    /// RFC 10069 PATH_STATUS_AVAILABLE.
    PathStatusAvailable {
        /// The path whose status is set.
        path_id: u64,
        /// The Path Status Sequence Number: orders the status frames of one path.
        path_status_sequence_number: u64,
    },
    /// RFC 10069 PATH_STATUS_BACKUP.
    PathStatusBackup {
        /// The path whose status is set.
        path_id: u64,
        /// The Path Status Sequence Number: orders the status frames of one path.
        path_status_sequence_number: u64,
    },
    /// RFC 10069 PATH_NEW_CONNECTION_ID.
    PathNewConnectionId(NewCidInfo),
    /// RFC 10069 PATH_RETIRE_CONNECTION_ID.
    PathRetireConnectionId {
        /// The path the connection ID belongs to.
        path_id: u64,
        /// The sequence number of the retired connection ID.
        sequence_number: u64,
    },
    /// RFC 10069 MAX_PATH_ID.
    MaxPathId {
        /// The largest path ID the sender allows the peer to use.
        maximum_path_id: u64,
    },
    /// RFC 10069 PATHS_BLOCKED.
    PathsBlocked {
        /// The path ID limit the sender is blocked at.
        maximum_path_id: u64,
    },
    /// RFC 10069 PATH_CIDS_BLOCKED.
    PathCidsBlocked {
        /// The path that has run out of connection IDs.
        path_id: u64,
        /// The next sequence number the sender expects for that path.
        next_sequence_number: u64,
    },
    /// draft-ietf-quic-ack-frequency ACK_FREQUENCY; request_max_ack_delay in milliseconds.
    AckFrequency {
        /// The frame's sequence number; the receiver ignores frames older than the latest.
        sequence_number: u64,
        /// Ack-eliciting packets the receiver may get without acknowledging.
        ack_eliciting_threshold: u64,
        /// The requested max_ack_delay, in milliseconds.
        request_max_ack_delay: f64,
        /// Reordering the receiver tolerates before acknowledging at once (0: never at once).
        reordering_threshold: u64,
    },
    /// draft-ietf-quic-ack-frequency IMMEDIATE_ACK.
    ImmediateAck,
    /// §"DatagramFrame" (RFC 9221): the payload's size in `raw.payload_length`.
    Datagram {
        /// The payload's size in `raw.payload_length`, bytes.
        raw: RawInfo,
    },
    /// §"UnknownFrame": a frame qlog has no definition for.
    Unknown {
        /// The frame's type, as on the wire (`frame_type_bytes`).
        frame_type_bytes: u64,
    },
}

/// The fields of §"AckFrame" (and PATH_ACK, which adds `path_id`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AckInfo {
    /// Multipath extension: the acknowledged path's packet number space (PATH_ACK only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_id: Option<u64>,
    /// The ACK Delay, decoded with the sender's ack_delay_exponent, in milliseconds (`ack_delay`).
    pub ack_delay: f64,
    /// The acknowledged packet numbers (`acked_ranges`): `[from, to]` or `[pn]`, ascending.
    pub acked_ranges: Vec<Vec<u64>>,
    /// ECT(1) count (`ect1`); ACK_ECN frames only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ect1: Option<u64>,
    /// ECT(0) count (`ect0`); ACK_ECN frames only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ect0: Option<u64>,
    /// ECN-CE count (`ce`); ACK_ECN frames only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ce: Option<u64>,
}

/// §"NewConnectionIDFrame" (and PATH_NEW_CONNECTION_ID, which adds `path_id`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NewCidInfo {
    /// Multipath extension: the path the connection ID is for (PATH_NEW_CONNECTION_ID only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_id: Option<u64>,
    /// The connection ID's sequence number (`sequence_number`).
    pub sequence_number: u64,
    /// Connection IDs below this sequence number are to be retired (`retire_prior_to`).
    pub retire_prior_to: u64,
    /// The connection ID's length, in bytes (`connection_id_length`).
    pub connection_id_length: u8,
    /// The connection ID, hex (`connection_id`).
    pub connection_id: String,
    /// The 16-byte stateless reset token, hex (`stateless_reset_token`).
    pub stateless_reset_token: String,
}

/// §"ConnectionCloseFrame".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CloseInfo {
    /// transport or application.
    pub error_space: &'static str,
    /// A `$TransportError` name or `crypto_error_0x1XX` (`error`); "unknown" for application
    /// closes and unnamed codes.
    pub error: String,
    /// The raw code, when `error` is "unknown" (`error_code`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<u64>,
    /// The reason phrase, lossily decoded as UTF-8 (`reason`).
    pub reason: String,
    /// The type of the frame that triggered the close (`trigger_frame_type`); transport closes
    /// only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_frame_type: Option<u64>,
}

/// §"Token": only its length is logged.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Token {
    /// The token's size in `raw.length`, bytes.
    pub raw: RawInfo,
}

/// A `$TransportError` name (§"TransportError") or `crypto_error_0x1XX` (§"CryptoError"), and
/// the raw code when the name is "unknown".
pub fn transport_error_name(code: u64) -> (String, Option<u64>) {
    if (0x100..=0x1ff).contains(&code) {
        return (format!("crypto_error_{code:#x}"), None);
    }
    match mpquic_wire::error::TransportErrorCode(code).name() {
        Some(name) if code <= 0x10 => (name.to_ascii_lowercase(), None),
        _ => ("unknown".to_owned(), Some(code)),
    }
}

fn stream_type(dir: Dir) -> &'static str {
    match dir {
        Dir::Bi => "bidirectional",
        Dir::Uni => "unidirectional",
    }
}

impl QlogFrame {
    /// The qlog form of `frame`. `ack_delay_exponent` is the one of the frame's sender (RFC 9000
    /// §19.3: the ACK Delay field is scaled by 2^ack_delay_exponent microseconds).
    pub fn from_frame(frame: &Frame, ack_delay_exponent: u64) -> QlogFrame {
        match frame {
            Frame::Padding(n) => QlogFrame::Padding {
                raw: RawInfo {
                    length: None,
                    payload_length: Some(*n as u64),
                },
            },
            Frame::Ping => QlogFrame::Ping,
            Frame::Ack(a) => {
                let info = ack_info(a, ack_delay_exponent);
                if a.path_id.is_some() {
                    QlogFrame::PathAck(info)
                } else {
                    QlogFrame::Ack(info)
                }
            }
            Frame::Crypto { offset, data } => QlogFrame::Crypto {
                offset: *offset,
                raw: RawInfo::length(data.len() as u64),
            },
            Frame::NewToken { token } => QlogFrame::NewToken {
                token: Token {
                    raw: RawInfo::length(token.len() as u64),
                },
            },
            Frame::Stream(s) => QlogFrame::Stream {
                stream_id: s.id.0,
                offset: s.offset,
                fin: s.fin,
                raw: RawInfo::length(s.data.len() as u64),
            },
            Frame::NewConnectionId(n) => {
                let info = NewCidInfo {
                    path_id: n.path_id,
                    sequence_number: n.sequence,
                    retire_prior_to: n.retire_prior_to,
                    connection_id_length: n.cid.len() as u8,
                    connection_id: hex(n.cid.as_slice()),
                    stateless_reset_token: hex(&n.reset_token.0),
                };
                if n.path_id.is_some() {
                    QlogFrame::PathNewConnectionId(info)
                } else {
                    QlogFrame::NewConnectionId(info)
                }
            }
            Frame::ConnectionClose(c) => QlogFrame::ConnectionClose(close_info(c)),
            other => Self::from_control_frame(other),
        }
    }

    /// Frames without payload data: flow control, stream control, path management.
    fn from_control_frame(frame: &Frame) -> QlogFrame {
        match *frame {
            Frame::ResetStream {
                id,
                error_code,
                final_size,
            } => QlogFrame::ResetStream {
                stream_id: id.0,
                error: "unknown",
                error_code,
                final_size,
            },
            Frame::StopSending { id, error_code } => QlogFrame::StopSending {
                stream_id: id.0,
                error: "unknown",
                error_code,
            },
            Frame::MaxData(maximum) => QlogFrame::MaxData { maximum },
            Frame::MaxStreamData { id, max } => QlogFrame::MaxStreamData {
                stream_id: id.0,
                maximum: max,
            },
            Frame::MaxStreams { dir, count } => QlogFrame::MaxStreams {
                stream_type: stream_type(dir),
                maximum: count,
            },
            Frame::DataBlocked { limit } => QlogFrame::DataBlocked { limit },
            Frame::StreamDataBlocked { id, limit } => QlogFrame::StreamDataBlocked {
                stream_id: id.0,
                limit,
            },
            Frame::StreamsBlocked { dir, limit } => QlogFrame::StreamsBlocked {
                stream_type: stream_type(dir),
                limit,
            },
            Frame::RetireConnectionId {
                path_id: None,
                sequence,
            } => QlogFrame::RetireConnectionId {
                sequence_number: sequence,
            },
            Frame::RetireConnectionId {
                path_id: Some(path_id),
                sequence,
            } => QlogFrame::PathRetireConnectionId {
                path_id,
                sequence_number: sequence,
            },
            Frame::PathChallenge(data) => QlogFrame::PathChallenge { data: hex(&data) },
            Frame::PathResponse(data) => QlogFrame::PathResponse { data: hex(&data) },
            Frame::HandshakeDone => QlogFrame::HandshakeDone,
            _ => Self::from_extension_frame(frame),
        }
    }

    /// RFC 10069, ack-frequency and experimental frames.
    fn from_extension_frame(frame: &Frame) -> QlogFrame {
        match *frame {
            Frame::PathAbandon {
                path_id,
                error_code,
            } => QlogFrame::PathAbandon {
                path_id,
                error_code,
            },
            Frame::PathStatus {
                path_id,
                sequence,
                status: PathStatus::Available,
            } => QlogFrame::PathStatusAvailable {
                path_id,
                path_status_sequence_number: sequence,
            },
            Frame::PathStatus {
                path_id,
                sequence,
                status: PathStatus::Backup,
            } => QlogFrame::PathStatusBackup {
                path_id,
                path_status_sequence_number: sequence,
            },
            Frame::MaxPathId(maximum_path_id) => QlogFrame::MaxPathId { maximum_path_id },
            Frame::PathsBlocked(maximum_path_id) => QlogFrame::PathsBlocked { maximum_path_id },
            Frame::PathCidsBlocked {
                path_id,
                next_sequence,
            } => QlogFrame::PathCidsBlocked {
                path_id,
                next_sequence_number: next_sequence,
            },
            Frame::AckFrequency {
                sequence,
                ack_eliciting_threshold,
                request_max_ack_delay_us,
                reordering_threshold,
            } => QlogFrame::AckFrequency {
                sequence_number: sequence,
                ack_eliciting_threshold,
                request_max_ack_delay: request_max_ack_delay_us as f64 / 1000.0,
                reordering_threshold,
            },
            Frame::ImmediateAck => QlogFrame::ImmediateAck,
            Frame::Datagram(ref d) => QlogFrame::Datagram {
                raw: RawInfo {
                    length: None,
                    payload_length: Some(d.data.len() as u64),
                },
            },
            _ => QlogFrame::Unknown {
                frame_type_bytes: frame.frame_type(),
            },
        }
    }

    /// Every frame of a plaintext packet payload; a payload that fails to parse yields the
    /// frames before the error.
    pub fn parse_payload(payload: bytes::Bytes, ack_delay_exponent: u64) -> Vec<QlogFrame> {
        Frame::iter(payload)
            .map_while(Result::ok)
            .map(|f| QlogFrame::from_frame(&f, ack_delay_exponent))
            .collect()
    }
}

fn ack_info(a: &mpquic_wire::frame::AckFrame, exponent: u64) -> AckInfo {
    let micros = a.ack_delay.saturating_mul(1u64 << exponent.min(20));
    // §"AckFrame": ranges `[from, to]`, a single packet as `[pn]`; ascending order.
    let acked_ranges = a
        .iter_acked()
        .rev()
        .map(|r| {
            if r.start() == r.end() {
                vec![*r.start()]
            } else {
                vec![*r.start(), *r.end()]
            }
        })
        .collect();
    AckInfo {
        path_id: a.path_id,
        ack_delay: micros as f64 / 1000.0,
        acked_ranges,
        ect1: a.ecn.map(|e| e.ect1),
        ect0: a.ecn.map(|e| e.ect0),
        ce: a.ecn.map(|e| e.ce),
    }
}

fn close_info(c: &ConnectionClose) -> CloseInfo {
    let reason = String::from_utf8_lossy(&c.reason).into_owned();
    match c.frame_type {
        Some(trigger) => {
            let (error, error_code) = transport_error_name(c.error_code);
            CloseInfo {
                error_space: "transport",
                error,
                error_code,
                reason,
                trigger_frame_type: Some(trigger),
            }
        }
        None => CloseInfo {
            error_space: "application",
            error: "unknown".to_owned(),
            error_code: Some(c.error_code),
            reason,
            trigger_frame_type: None,
        },
    }
}

#[cfg(test)]
#[path = "frames_tests.rs"]
mod tests;
