//! Connection IDs (RFC 9000 §5.1) and stateless reset tokens (RFC 9000 §10.3).

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// Maximum connection ID length in QUIC v1 (RFC 9000 §17.2).
pub const MAX_CID_LEN: usize = 20;

/// Error returned when a connection ID would be longer than [`MAX_CID_LEN`].
#[derive(Debug, Copy, Clone, PartialEq, Eq, thiserror::Error)]
#[error("connection ID longer than 20 bytes ({0})")]
pub struct CidTooLong(
    /// The length that was asked for, in bytes.
    pub usize,
);

/// A connection ID of 0 to 20 bytes, stored inline (cheap to copy).
///
/// Invariant: bytes past `len` are zero, so equality, ordering and hashing
/// only ever observe [`ConnectionId::as_slice`].
#[derive(Copy, Clone, Default)]
pub struct ConnectionId {
    bytes: [u8; MAX_CID_LEN],
    len: u8,
}

impl ConnectionId {
    /// The zero-length connection ID.
    pub const EMPTY: ConnectionId = ConnectionId {
        bytes: [0; MAX_CID_LEN],
        len: 0,
    };

    /// Creates a connection ID from `bytes`, failing if longer than 20 bytes.
    pub fn new(bytes: &[u8]) -> Result<ConnectionId, CidTooLong> {
        let mut out = ConnectionId::EMPTY;
        let dst = out
            .bytes
            .get_mut(..bytes.len())
            .ok_or(CidTooLong(bytes.len()))?;
        dst.copy_from_slice(bytes);
        out.len = bytes.len() as u8;
        Ok(out)
    }

    /// The connection ID bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.bytes.get(..usize::from(self.len)).unwrap_or(&[])
    }

    /// Length in bytes (0..=20).
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether this is the zero-length connection ID.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::ops::Deref for ConnectionId {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl AsRef<[u8]> for ConnectionId {
    fn as_ref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl TryFrom<&[u8]> for ConnectionId {
    type Error = CidTooLong;
    fn try_from(b: &[u8]) -> Result<Self, CidTooLong> {
        ConnectionId::new(b)
    }
}

impl PartialEq for ConnectionId {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for ConnectionId {}

impl PartialOrd for ConnectionId {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ConnectionId {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl Hash for ConnectionId {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

fn write_hex(f: &mut fmt::Formatter<'_>, bytes: &[u8]) -> fmt::Result {
    for b in bytes {
        write!(f, "{b:02x}")?;
    }
    Ok(())
}

impl fmt::Debug for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, self.as_slice())
    }
}

impl fmt::Display for ConnectionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, self.as_slice())
    }
}

/// A 16-byte stateless reset token (RFC 9000 §10.3).
#[derive(Copy, Clone, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct ResetToken(
    /// The token's bytes, as sent in NEW_CONNECTION_ID and at the end of a stateless reset.
    pub [u8; 16],
);

impl ResetToken {
    /// Length of a stateless reset token in bytes.
    pub const LEN: usize = 16;

    /// Constant-time comparison, as recommended by RFC 9000 §10.3.1.
    pub fn ct_eq(&self, other: &ResetToken) -> bool {
        self.0
            .iter()
            .zip(other.0.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
    }
}

impl fmt::Debug for ResetToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_hex(f, &self.0)
    }
}

impl From<[u8; 16]> for ResetToken {
    fn from(b: [u8; 16]) -> Self {
        ResetToken(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn basics() {
        let c = ConnectionId::new(&[0xde, 0xad]).unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(format!("{c:?}"), "dead");
        assert!(ConnectionId::new(&[0; 21]).is_err());
        assert!(ConnectionId::new(&[0; 20]).is_ok());
        assert!(ConnectionId::EMPTY.is_empty());
        let a = ConnectionId::new(&[1]).unwrap();
        let b = ConnectionId::new(&[1, 0]).unwrap();
        assert_ne!(a, b);
        assert!(a < b);
        let set: HashSet<_> = [a, b, a].into_iter().collect();
        assert_eq!(set.len(), 2);
        assert!(ResetToken([1; 16]).ct_eq(&ResetToken([1; 16])));
        assert!(!ResetToken([1; 16]).ct_eq(&ResetToken([2; 16])));
    }
}
