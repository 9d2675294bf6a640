//! Packet protection and the TLS handshake through rustls' QUIC module (RFC 9001).
//!
//! Everything cryptographic comes from rustls' `quic` module with the `ring` provider (AEAD,
//! header protection, HKDF, the TLS 1.3 handshake), and from `ring` directly for the one primitive
//! rustls has no API for (the Retry integrity tag, RFC 9001 §5.8). Nothing here reads a clock or a
//! global RNG; TLS randomness comes from the rustls provider.
//!
//! - `keys`: encryption levels (`Epoch`), key pairs, Initial keys (RFC 9001 §5.2), the Retry
//!   integrity tag (RFC 9001 §5.8).
//! - `protect`: sealing and opening one packet (RFC 9001 §5.3, §5.4), with the RFC 10069
//!   path-ID nonce when a path ID is given.
//! - `one_rtt`: 1-RTT keys with key update (RFC 9001 §6), AEAD limits (RFC 9001 §6.6).
//! - `tls`: the TLS session carried in CRYPTO frames (RFC 9001 §4).
//! - [`resumption`]: rustls settings for session resumption and 0-RTT (RFC 9001 §4.6).
//! - `sim`: the simulator's **not secure** stand-in for 1-RTT packet protection (same sizes,
//!   checksum tags), enabled only through [`crate::Endpoint::new_for_simulation`].
//! - [`identity`]: a fixed self-signed Ed25519 identity and ready-made rustls configs for the
//!   simulator, tests and examples.
//! - `testing` (feature `testing`): packet helpers and a counting session store for tests.
//!
//! Public: [`PacketProtection`], [`identity`], [`resumption`]; the rest is the core's own.

pub mod cert_compression;
pub mod identity;
// `pub` items: `crypto::testing` re-exports them when the `testing` feature is on.
#[cfg_attr(not(any(test, feature = "testing")), allow(unreachable_pub))]
pub(crate) mod initial;
// `pub` items: `crypto::testing` re-exports them when the `testing` feature is on.
#[cfg_attr(not(any(test, feature = "testing")), allow(unreachable_pub))]
pub(crate) mod keys;
pub(crate) mod one_rtt;
// `pub` items: `crypto::testing` re-exports them when the `testing` feature is on.
#[cfg_attr(not(any(test, feature = "testing")), allow(unreachable_pub))]
pub(crate) mod protect;
pub mod resumption;
pub(crate) mod sim;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub(crate) mod ticket_limits;
pub(crate) mod tls;

#[cfg(test)]
mod rfc9001_vectors;
#[cfg(test)]
mod test_vectors;

pub(crate) use initial::{open_initial, seal_initial};
pub(crate) use keys::{
    initial_keys, retry_integrity_tag, verify_retry_integrity, DirectionalKeys, Epoch, KeyPair,
};
pub(crate) use mpquic_wire::stream_id::Side;
pub(crate) use one_rtt::{KeyUpdateOutcome, OneRttKeys};
pub(crate) use protect::{open_payload, remove_header_protection, seal_packet};
pub use sim::PacketProtection;
pub(crate) use tls::{HandshakeOutput, TlsSession};

use mpquic_wire::error::TransportErrorCode;

/// A packet-protection or key-management failure.
///
/// Most variants mean "drop this packet" (RFC 9001 §5.5: a packet that fails to unprotect is
/// discarded); [`CryptoError::transport_error_code`] says which ones must close the connection.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CryptoError {
    /// The buffer is too short for what was asked (e.g. no complete header-protection sample,
    /// RFC 9001 §5.4.2: "An endpoint MUST discard packets that are not long enough to contain a
    /// complete sample").
    #[error("packet too short: need {needed} bytes, have {have}")]
    PacketTooShort {
        /// Bytes required.
        needed: usize,
        /// Bytes available.
        have: usize,
    },
    /// Offsets or lengths passed by the caller are inconsistent (a caller bug, not peer input).
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// Header protection could not be applied or removed.
    #[error("header protection failed")]
    HeaderProtection,
    /// The AEAD refused to encrypt (payload longer than the AEAD allows).
    #[error("packet encryption failed")]
    Encrypt,
    /// The packet failed authentication (RFC 9001 §5.5: discard it).
    #[error("packet authentication failed")]
    Decrypt,
    /// No key is available for this packet (e.g. the previous 1-RTT key was discarded).
    #[error("no key available for this packet")]
    KeyUnavailable,
    /// Sending one more packet with the current 1-RTT key would exceed the AEAD confidentiality
    /// limit (RFC 9001 §6.6: "the endpoint MUST stop using those keys").
    #[error("AEAD confidentiality limit reached")]
    ConfidentialityLimitReached,
    /// More packets failed authentication than the AEAD integrity limit allows
    /// (RFC 9001 §6.6: close with AEAD_LIMIT_REACHED).
    #[error("AEAD integrity limit reached")]
    IntegrityLimitReached,
    /// The peer broke the key-update rules (RFC 9001 §6.4: KEY_UPDATE_ERROR).
    #[error("key update error: {0}")]
    KeyUpdate(&'static str),
    /// A local key update was requested when RFC 9001 §6.1 does not allow one.
    #[error("key update not allowed now")]
    KeyUpdateNotAllowed,
    /// The server name is not a valid DNS name or IP address.
    #[error("invalid server name: {0}")]
    InvalidServerName(String),
    /// The rustls configuration cannot be used for QUIC.
    #[error("invalid TLS configuration: {0}")]
    InvalidConfig(&'static str),
    /// rustls refused to create the session.
    #[error("TLS: {0}")]
    Tls(#[from] rustls::Error),
}

impl CryptoError {
    /// The transport error to close the connection with, if this error is fatal; `None` means
    /// the packet is just dropped (or, for configuration errors, the connection never started).
    pub fn transport_error_code(&self) -> Option<TransportErrorCode> {
        match self {
            Self::ConfidentialityLimitReached | Self::IntegrityLimitReached => {
                Some(TransportErrorCode::AEAD_LIMIT_REACHED)
            }
            Self::KeyUpdate(_) => Some(TransportErrorCode::KEY_UPDATE_ERROR),
            _ => None,
        }
    }
}
