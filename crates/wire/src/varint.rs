//! QUIC variable-length integers (RFC 9000 §16).
//!
//! The two most significant bits of the first byte encode the length
//! (1, 2, 4 or 8 bytes); the remaining bits hold the value in network byte
//! order, so the largest representable value is 2^62-1.

use bytes::BufMut;
use std::fmt;

/// An integer known to fit in a QUIC variable-length encoding (`<= 2^62-1`).
#[derive(Debug, Default, Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct VarInt(u64);

/// Error returned when a value exceeds [`VarInt::MAX`].
#[derive(Debug, Copy, Clone, PartialEq, Eq, thiserror::Error)]
#[error("value exceeds the varint maximum 2^62-1")]
pub struct VarIntBoundsExceeded;

impl VarInt {
    /// The largest encodable value, 2^62-1 (RFC 9000 §16).
    pub const MAX: VarInt = VarInt((1 << 62) - 1);
    /// The largest encodable value as a plain `u64`.
    pub const MAX_U64: u64 = (1 << 62) - 1;

    /// Creates a `VarInt` from a `u32`, which always fits.
    pub const fn from_u32(v: u32) -> VarInt {
        VarInt(v as u64)
    }

    /// Creates a `VarInt`, failing if `v > 2^62-1`.
    pub const fn from_u64(v: u64) -> Result<VarInt, VarIntBoundsExceeded> {
        if v <= Self::MAX_U64 {
            Ok(VarInt(v))
        } else {
            Err(VarIntBoundsExceeded)
        }
    }

    /// Returns the wrapped value.
    pub const fn into_inner(self) -> u64 {
        self.0
    }

    /// Number of bytes of the minimal encoding of this value (1, 2, 4 or 8).
    pub const fn size(self) -> usize {
        varint_size(self.0)
    }

    /// Appends the minimal encoding of this value to `out`.
    pub fn encode(self, out: &mut impl BufMut) {
        write_varint(out, self.0)
    }
}

impl fmt::Display for VarInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl From<u8> for VarInt {
    fn from(v: u8) -> Self {
        VarInt(u64::from(v))
    }
}

impl From<u16> for VarInt {
    fn from(v: u16) -> Self {
        VarInt(u64::from(v))
    }
}

impl From<u32> for VarInt {
    fn from(v: u32) -> Self {
        VarInt::from_u32(v)
    }
}

impl TryFrom<u64> for VarInt {
    type Error = VarIntBoundsExceeded;
    fn try_from(v: u64) -> Result<Self, Self::Error> {
        VarInt::from_u64(v)
    }
}

impl From<VarInt> for u64 {
    fn from(v: VarInt) -> u64 {
        v.0
    }
}

/// Number of bytes of the minimal varint encoding of `v` (RFC 9000 §16, Table 4).
///
/// Values above 2^62-1 are reported as 8 bytes (they cannot be encoded at all;
/// see [`write_varint`]).
pub const fn varint_size(v: u64) -> usize {
    if v < (1 << 6) {
        1
    } else if v < (1 << 14) {
        2
    } else if v < (1 << 30) {
        4
    } else {
        8
    }
}

/// Appends the minimal varint encoding of `v` to `out` (RFC 9000 §16).
///
/// **Precondition:** `v <= 2^62-1` ([`VarInt::MAX`]). Passing a larger value is
/// a caller bug: it trips a `debug_assert!`, and in release builds only the low
/// 62 bits are written (the value is *not* clamped). Use [`try_write_varint`]
/// when the value is not known to be in range.
pub fn write_varint(out: &mut impl BufMut, v: u64) {
    debug_assert!(v <= VarInt::MAX_U64, "varint out of range: {v}");
    let v = v & VarInt::MAX_U64;
    match varint_size(v) {
        1 => out.put_u8(v as u8),
        2 => out.put_u16(0x4000 | v as u16),
        4 => out.put_u32(0x8000_0000 | v as u32),
        _ => out.put_u64(0xc000_0000_0000_0000 | v),
    }
}

/// Checked variant of [`write_varint`]: writes nothing and errors if `v > 2^62-1`.
pub fn try_write_varint(out: &mut impl BufMut, v: u64) -> Result<(), VarIntBoundsExceeded> {
    VarInt::from_u64(v)?;
    write_varint(out, v);
    Ok(())
}

/// Writes `v` as a varint of exactly `len` bytes (1, 2, 4 or 8), possibly
/// non-minimal. Returns an error if `v` does not fit in that length or `len`
/// is not a valid varint length.
pub fn write_varint_with_len(
    out: &mut impl BufMut,
    v: u64,
    len: usize,
) -> Result<(), VarIntBoundsExceeded> {
    match len {
        1 if v < (1 << 6) => out.put_u8(v as u8),
        2 if v < (1 << 14) => out.put_u16(0x4000 | v as u16),
        4 if v < (1 << 30) => out.put_u32(0x8000_0000 | v as u32),
        8 if v <= VarInt::MAX_U64 => out.put_u64(0xc000_0000_0000_0000 | v),
        _ => return Err(VarIntBoundsExceeded),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Reader;
    use proptest::prelude::*;

    fn decode(b: &[u8]) -> u64 {
        let mut r = Reader::new(b);
        let v = r.varint().unwrap();
        assert!(r.is_empty());
        v
    }

    /// RFC 9000 Appendix A.1 sample decodings.
    #[test]
    fn rfc9000_appendix_a1_examples() {
        assert_eq!(
            decode(&[0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c]),
            151_288_809_941_952_652
        );
        assert_eq!(decode(&[0x9d, 0x7f, 0x3e, 0x7d]), 494_878_333);
        assert_eq!(decode(&[0x7b, 0xbd]), 15_293);
        assert_eq!(decode(&[0x25]), 37);
        // The same value with a longer encoding (RFC 9000 §A.1).
        assert_eq!(decode(&[0x40, 0x25]), 37);

        let mut out = Vec::new();
        write_varint(&mut out, 151_288_809_941_952_652);
        assert_eq!(out, [0xc2, 0x19, 0x7c, 0x5e, 0xff, 0x14, 0xe8, 0x8c]);
        out.clear();
        write_varint(&mut out, 494_878_333);
        assert_eq!(out, [0x9d, 0x7f, 0x3e, 0x7d]);
        out.clear();
        write_varint(&mut out, 15_293);
        assert_eq!(out, [0x7b, 0xbd]);
        out.clear();
        write_varint(&mut out, 37);
        assert_eq!(out, [0x25]);
    }

    #[test]
    fn bounds() {
        assert!(VarInt::from_u64(VarInt::MAX_U64).is_ok());
        assert!(VarInt::from_u64(VarInt::MAX_U64 + 1).is_err());
        let mut out = Vec::new();
        assert!(try_write_varint(&mut out, u64::MAX).is_err());
        assert!(out.is_empty());
        assert_eq!(VarInt::from_u32(u32::MAX).size(), 8);
        assert_eq!(varint_size(63), 1);
        assert_eq!(varint_size(64), 2);
        assert_eq!(varint_size(16383), 2);
        assert_eq!(varint_size(16384), 4);
        assert_eq!(varint_size((1 << 30) - 1), 4);
        assert_eq!(varint_size(1 << 30), 8);
    }

    #[test]
    fn explicit_len() {
        let mut out = Vec::new();
        write_varint_with_len(&mut out, 1, 2).unwrap();
        assert_eq!(out, [0x40, 0x01]);
        assert!(write_varint_with_len(&mut out, 64, 1).is_err());
        assert!(write_varint_with_len(&mut out, 1, 3).is_err());
    }

    proptest! {
        #[test]
        fn round_trip(v in 0..=VarInt::MAX_U64) {
            let mut out = Vec::new();
            write_varint(&mut out, v);
            prop_assert_eq!(out.len(), varint_size(v));
            prop_assert_eq!(decode(&out), v);
        }
    }
}
