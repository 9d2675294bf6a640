//! The error type of the core: a QUIC transport error that closes the connection with a
//! CONNECTION_CLOSE frame carrying `code` (RFC 9000 §10.2, §20.1).

use mpquic_wire::error::{FrameError, TransportErrorCode};

/// A connection error detected locally, to be sent to the peer in CONNECTION_CLOSE (type 0x1c).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {reason}")]
pub struct TransportError {
    /// The transport error code (RFC 9000 §20.1), sent in the Error Code field.
    pub code: TransportErrorCode,
    /// The type of the frame that triggered the error, if any (RFC 9000 §19.19 Frame Type).
    pub frame_type: Option<u64>,
    /// Human-readable reason, sent as the Reason Phrase.
    pub reason: String,
}

impl TransportError {
    /// An error with no triggering frame.
    pub fn new(code: TransportErrorCode, reason: impl Into<String>) -> Self {
        Self {
            code,
            frame_type: None,
            reason: reason.into(),
        }
    }

    /// An error triggered by a frame of type `frame_type`.
    pub fn for_frame(code: TransportErrorCode, frame_type: u64, reason: impl Into<String>) -> Self {
        Self {
            code,
            frame_type: Some(frame_type),
            reason: reason.into(),
        }
    }

    /// PROTOCOL_VIOLATION (0x0a) with no triggering frame.
    pub fn protocol_violation(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::PROTOCOL_VIOLATION, reason)
    }

    /// FLOW_CONTROL_ERROR (0x03) with no triggering frame.
    pub fn flow_control(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::FLOW_CONTROL_ERROR, reason)
    }

    /// STREAM_STATE_ERROR (0x05) with no triggering frame.
    pub fn stream_state(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::STREAM_STATE_ERROR, reason)
    }

    /// INTERNAL_ERROR (0x01) with no triggering frame.
    pub fn internal(reason: impl Into<String>) -> Self {
        Self::new(TransportErrorCode::INTERNAL_ERROR, reason)
    }
}

impl From<FrameError> for TransportError {
    fn from(e: FrameError) -> Self {
        Self {
            code: e.code,
            frame_type: Some(e.frame_type),
            reason: e.reason.to_string(),
        }
    }
}
