//! The path identifier of the multipath extension (RFC 10069 = draft-ietf-quic-multipath-21).

use std::fmt;

/// A path identifier (RFC 10069 §1 "Introduction" and §2.1 "initial_max_path_id"): the same ID
/// names a path in both directions, starting with 0 for the initial (handshake) path; IDs
/// increase and are never reused. On the wire it is a variable-length integer, but its value
/// must not exceed 2^32-1 because it is mixed into the AEAD nonce as 32 bits (§2.4 "Nonce
/// Calculation"), so it is kept as a `u32`.
///
/// Serialized (serde) and displayed as the plain number, so JSON results, qlog and logs read
/// exactly as the number.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct PathId(u32);

impl PathId {
    /// The initial path, on which the handshake runs (path ID 0).
    pub const ZERO: PathId = PathId(0);
    /// The largest path ID the extension allows, 2^32-1 (RFC 10069 §2.1).
    pub const MAX: PathId = PathId(u32::MAX);

    /// The path ID `id`.
    pub const fn new(id: u32) -> Self {
        PathId(id)
    }

    /// The ID as a number.
    pub const fn as_u32(self) -> u32 {
        self.0
    }

    /// The ID as a wire value (a variable-length integer).
    pub const fn as_u64(self) -> u64 {
        self.0 as u64
    }

    /// The path ID a wire value names, or None above 2^32-1 (which connection code answers
    /// with the connection error the frame or transport parameter calls for).
    pub const fn from_wire(value: u64) -> Option<Self> {
        if value > u32::MAX as u64 {
            return None;
        }
        Some(PathId(value as u32))
    }

    /// The path ID a wire value names, [`PathId::MAX`] above 2^32-1: for values the frame
    /// decoder or a limit check has already bounded.
    pub(crate) const fn from_wire_saturating(value: u64) -> Self {
        match PathId::from_wire(value) {
            Some(id) => id,
            None => PathId::MAX,
        }
    }

    /// The next path ID, or None after [`PathId::MAX`].
    pub const fn next(self) -> Option<Self> {
        self.checked_add(1)
    }

    /// The path ID `n` above this one, or None beyond [`PathId::MAX`].
    pub const fn checked_add(self, n: u32) -> Option<Self> {
        match self.0.checked_add(n) {
            Some(id) => Some(PathId(id)),
            None => None,
        }
    }

    /// The path ID `n` above this one, at most [`PathId::MAX`].
    pub const fn saturating_add(self, n: u32) -> Self {
        PathId(self.0.saturating_add(n))
    }
}

impl fmt::Display for PathId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

/// The decimal number, as [`Display`](fmt::Display) writes it (command lines, file keys).
impl std::str::FromStr for PathId {
    type Err = std::num::ParseIntError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(PathId)
    }
}

impl From<u32> for PathId {
    fn from(id: u32) -> Self {
        PathId(id)
    }
}

impl From<PathId> for u32 {
    fn from(id: PathId) -> Self {
        id.0
    }
}

impl From<PathId> for u64 {
    fn from(id: PathId) -> Self {
        u64::from(id.0)
    }
}

/// A wire value above 2^32-1 where a path ID was expected (RFC 10069 §2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("path ID {0} above 2^32-1")]
pub struct PathIdOutOfRange(
    /// The value that was read.
    pub u64,
);

impl TryFrom<u64> for PathId {
    type Error = PathIdOutOfRange;

    fn try_from(value: u64) -> Result<Self, Self::Error> {
        PathId::from_wire(value).ok_or(PathIdOutOfRange(value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_values_above_u32_are_rejected() {
        assert_eq!(PathId::from_wire(0), Some(PathId::ZERO));
        assert_eq!(PathId::from_wire(7), Some(PathId::new(7)));
        assert_eq!(PathId::from_wire(u64::from(u32::MAX)), Some(PathId::MAX));
        assert_eq!(PathId::from_wire(u64::from(u32::MAX) + 1), None);
        assert_eq!(PathId::try_from(1u64 << 40), Err(PathIdOutOfRange(1 << 40)));
        assert_eq!(PathId::try_from(3u64), Ok(PathId::new(3)));
        assert_eq!(PathId::from_wire_saturating(1 << 33), PathId::MAX);
        assert_eq!(PathId::from_wire_saturating(9), PathId::new(9));
        assert_eq!(
            PathIdOutOfRange(1 << 32).to_string(),
            "path ID 4294967296 above 2^32-1"
        );
    }

    #[test]
    fn conversions_round_trip() {
        let id = PathId::from(41u32);
        assert_eq!(id.as_u32(), 41);
        assert_eq!(u32::from(id), 41);
        assert_eq!(u64::from(id), 41);
        assert_eq!(id.as_u64(), 41);
        assert_eq!(PathId::MAX.as_u64(), u64::from(u32::MAX));
        assert!(PathId::ZERO < id && id < PathId::MAX);
    }

    #[test]
    fn next_stops_at_max() {
        assert_eq!(PathId::ZERO.next(), Some(PathId::new(1)));
        assert_eq!(PathId::new(u32::MAX - 1).next(), Some(PathId::MAX));
        assert_eq!(PathId::MAX.next(), None);
        assert_eq!(PathId::new(5).checked_add(u32::MAX), None);
        assert_eq!(PathId::new(5).checked_add(2), Some(PathId::new(7)));
        assert_eq!(PathId::new(5).saturating_add(u32::MAX), PathId::MAX);
    }

    #[test]
    fn displays_and_serializes_as_the_number() {
        assert_eq!(PathId::new(3).to_string(), "3");
        assert_eq!(format!("{:>3}", PathId::new(3)), "  3");
        assert_eq!(serde_json::to_string(&PathId::new(3)).unwrap(), "3");
        assert_eq!(
            serde_json::from_str::<PathId>("4294967295").unwrap(),
            PathId::MAX
        );
        assert!(serde_json::from_str::<PathId>("4294967296").is_err());
        let map = std::collections::BTreeMap::from([(PathId::new(1), "x")]);
        assert_eq!(serde_json::to_string(&map).unwrap(), r#"{"1":"x"}"#);
    }
}
