//! Transport error codes (RFC 9000 §20.1) and multipath path-abandon codes
//! (RFC 10069 §"Error Codes").

use std::fmt;

/// A QUIC transport error code, as carried in CONNECTION_CLOSE (type 0x1c)
/// frames (RFC 9000 §20.1).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct TransportErrorCode(
    /// The code as carried on the wire (a varint).
    pub u64,
);

impl TransportErrorCode {
    /// An endpoint uses this with CONNECTION_CLOSE to signal that the
    /// connection is being closed abruptly in the absence of any error.
    pub const NO_ERROR: Self = Self(0x00);
    /// The endpoint encountered an internal error and cannot continue.
    pub const INTERNAL_ERROR: Self = Self(0x01);
    /// The server refused to accept a new connection.
    pub const CONNECTION_REFUSED: Self = Self(0x02);
    /// Received more data than permitted in advertised data limits.
    pub const FLOW_CONTROL_ERROR: Self = Self(0x03);
    /// Received a frame for a stream identifier that exceeded the advertised limit.
    pub const STREAM_LIMIT_ERROR: Self = Self(0x04);
    /// Received a frame for a stream that was not in a state that permitted it.
    pub const STREAM_STATE_ERROR: Self = Self(0x05);
    /// Received a STREAM / RESET_STREAM frame violating the final size.
    pub const FINAL_SIZE_ERROR: Self = Self(0x06);
    /// Received a frame that was badly formatted.
    pub const FRAME_ENCODING_ERROR: Self = Self(0x07);
    /// Received transport parameters that were badly formatted or invalid.
    pub const TRANSPORT_PARAMETER_ERROR: Self = Self(0x08);
    /// The number of connection IDs provided by the peer exceeds
    /// active_connection_id_limit.
    pub const CONNECTION_ID_LIMIT_ERROR: Self = Self(0x09);
    /// Detected an error with protocol compliance not covered by a more
    /// specific code.
    pub const PROTOCOL_VIOLATION: Self = Self(0x0a);
    /// A server received a client Initial that contained an invalid Token field.
    pub const INVALID_TOKEN: Self = Self(0x0b);
    /// The application or application protocol caused the connection to be closed.
    pub const APPLICATION_ERROR: Self = Self(0x0c);
    /// Received more data in CRYPTO frames than can be buffered.
    pub const CRYPTO_BUFFER_EXCEEDED: Self = Self(0x0d);
    /// Detected errors in performing key updates.
    pub const KEY_UPDATE_ERROR: Self = Self(0x0e);
    /// The endpoint reached the confidentiality or integrity limit for the AEAD.
    pub const AEAD_LIMIT_REACHED: Self = Self(0x0f);
    /// No viable network path exists (RFC 9000 §20.1).
    pub const NO_VIABLE_PATH: Self = Self(0x10);
    /// RFC 10069 path-abandon code, see [`path_error::APPLICATION_ABANDON_PATH`].
    pub const APPLICATION_ABANDON_PATH: Self = Self(path_error::APPLICATION_ABANDON_PATH);
    /// RFC 10069 path-abandon code, see [`path_error::PATH_RESOURCE_LIMIT_REACHED`].
    pub const PATH_RESOURCE_LIMIT_REACHED: Self = Self(path_error::PATH_RESOURCE_LIMIT_REACHED);
    /// RFC 10069 path-abandon code, see [`path_error::PATH_UNSTABLE_OR_POOR`].
    pub const PATH_UNSTABLE_OR_POOR: Self = Self(path_error::PATH_UNSTABLE_OR_POOR);
    /// RFC 10069 path-abandon code, see [`path_error::NO_CID_AVAILABLE_FOR_PATH`].
    pub const NO_CID_AVAILABLE_FOR_PATH: Self = Self(path_error::NO_CID_AVAILABLE_FOR_PATH);

    /// A TLS alert mapped into the CRYPTO_ERROR range 0x0100-0x01ff
    /// (RFC 9000 §20.1, RFC 9001 §4.8).
    pub const fn crypto(alert: u8) -> Self {
        Self(0x100 + alert as u64)
    }

    /// Returns the TLS alert if this is a CRYPTO_ERROR code.
    pub const fn crypto_alert(self) -> Option<u8> {
        if self.0 >= 0x100 && self.0 <= 0x1ff {
            Some((self.0 - 0x100) as u8)
        } else {
            None
        }
    }

    /// The registered name of this code, if it is one of the RFC 9000 codes.
    pub const fn name(self) -> Option<&'static str> {
        Some(match self.0 {
            0x00 => "NO_ERROR",
            0x01 => "INTERNAL_ERROR",
            0x02 => "CONNECTION_REFUSED",
            0x03 => "FLOW_CONTROL_ERROR",
            0x04 => "STREAM_LIMIT_ERROR",
            0x05 => "STREAM_STATE_ERROR",
            0x06 => "FINAL_SIZE_ERROR",
            0x07 => "FRAME_ENCODING_ERROR",
            0x08 => "TRANSPORT_PARAMETER_ERROR",
            0x09 => "CONNECTION_ID_LIMIT_ERROR",
            0x0a => "PROTOCOL_VIOLATION",
            0x0b => "INVALID_TOKEN",
            0x0c => "APPLICATION_ERROR",
            0x0d => "CRYPTO_BUFFER_EXCEEDED",
            0x0e => "KEY_UPDATE_ERROR",
            0x0f => "AEAD_LIMIT_REACHED",
            0x10 => "NO_VIABLE_PATH",
            _ => return path_error::name(self.0),
        })
    }
}

impl fmt::Display for TransportErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = self.name() {
            f.write_str(name)
        } else if let Some(alert) = self.crypto_alert() {
            write!(f, "CRYPTO_ERROR(alert {alert})")
        } else {
            write!(f, "UNKNOWN_ERROR({:#x})", self.0)
        }
    }
}

impl fmt::Debug for TransportErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl From<TransportErrorCode> for u64 {
    fn from(c: TransportErrorCode) -> u64 {
        c.0
    }
}

/// Error codes for the PATH_ABANDON frame (RFC 10069 §"Error Codes"; the
/// "suggested" codepoints, as used by the noq crate). NO_ERROR (0) is also valid.
pub mod path_error {
    /// The endpoint is abandoning the path at the request of the application.
    pub const APPLICATION_ABANDON_PATH: u64 = 0x3e;
    /// The endpoint cannot allocate sufficient resources to maintain the path.
    pub const PATH_RESOURCE_LIMIT_REACHED: u64 = 0x3e75;
    /// The interface is unstable or the path performs poorly.
    pub const PATH_UNSTABLE_OR_POOR: u64 = 0x3e76;
    /// No connection ID is available for the path.
    pub const NO_CID_AVAILABLE_FOR_PATH: u64 = 0x3e77;

    /// Name of a path-abandon error code, if registered.
    pub const fn name(code: u64) -> Option<&'static str> {
        match code {
            APPLICATION_ABANDON_PATH => Some("APPLICATION_ABANDON_PATH"),
            PATH_RESOURCE_LIMIT_REACHED => Some("PATH_RESOURCE_LIMIT_REACHED"),
            PATH_UNSTABLE_OR_POOR => Some("PATH_UNSTABLE_OR_POOR"),
            NO_CID_AVAILABLE_FOR_PATH => Some("NO_CID_AVAILABLE_FOR_PATH"),
            _ => None,
        }
    }
}

/// A frame-level error that the core turns into a CONNECTION_CLOSE (type 0x1c)
/// carrying `code` and `frame_type` (RFC 9000 §19.19).
#[derive(Debug, Copy, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code} in frame type {frame_type:#x}: {reason}")]
pub struct FrameError {
    /// The transport error code to close the connection with.
    pub code: TransportErrorCode,
    /// The type of the frame that triggered the error (0 if unknown).
    pub frame_type: u64,
    /// A static human-readable reason (usable as the close reason phrase).
    pub reason: &'static str,
}

impl FrameError {
    /// A FRAME_ENCODING_ERROR for `frame_type`.
    pub const fn encoding(frame_type: u64, reason: &'static str) -> Self {
        FrameError {
            code: TransportErrorCode::FRAME_ENCODING_ERROR,
            frame_type,
            reason,
        }
    }

    /// A PROTOCOL_VIOLATION for `frame_type`.
    pub const fn protocol(frame_type: u64, reason: &'static str) -> Self {
        FrameError {
            code: TransportErrorCode::PROTOCOL_VIOLATION,
            frame_type,
            reason,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display() {
        assert_eq!(
            TransportErrorCode::NO_VIABLE_PATH.to_string(),
            "NO_VIABLE_PATH"
        );
        assert_eq!(TransportErrorCode::crypto(0x2a).0, 0x12a);
        assert_eq!(
            TransportErrorCode::crypto(0x2a).to_string(),
            "CRYPTO_ERROR(alert 42)"
        );
        assert_eq!(
            TransportErrorCode(0x3e75).to_string(),
            "PATH_RESOURCE_LIMIT_REACHED"
        );
        assert_eq!(
            TransportErrorCode(0x9999).to_string(),
            "UNKNOWN_ERROR(0x9999)"
        );
        let e = FrameError::encoding(0x18, "bad length");
        assert!(e.to_string().contains("FRAME_ENCODING_ERROR"));
    }
}
