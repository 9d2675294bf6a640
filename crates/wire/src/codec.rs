//! A bounds-checked decoding cursor.
//!
//! [`Reader`] never panics: every read that would run past the end of the
//! input returns [`DecodeError::UnexpectedEnd`] and leaves the cursor where it
//! was.

/// Error produced when decoding fails.
#[derive(Debug, Copy, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The input ended before the value was complete.
    #[error("unexpected end of input")]
    UnexpectedEnd,
    /// The input was complete but held a value that is not allowed.
    #[error("invalid value: {0}")]
    InvalidValue(&'static str),
}

/// A forward-only cursor over a byte slice.
#[derive(Debug, Clone)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    /// Creates a reader positioned at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf, pos: 0 }
    }

    /// Number of bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.buf.len().saturating_sub(self.pos)
    }

    /// Whether all bytes have been consumed.
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// Number of bytes consumed so far (offset into the original slice).
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Returns the next byte without consuming it.
    pub fn peek_u8(&self) -> Option<u8> {
        self.buf.get(self.pos).copied()
    }

    /// Reads one byte.
    pub fn u8(&mut self) -> Result<u8, DecodeError> {
        let [b] = self.array::<1>()?;
        Ok(b)
    }

    /// Reads a big-endian `u16`.
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        self.array().map(u16::from_be_bytes)
    }

    /// Reads a big-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        self.array().map(u32::from_be_bytes)
    }

    /// Reads a big-endian `u64`.
    pub fn u64(&mut self) -> Result<u64, DecodeError> {
        self.array().map(u64::from_be_bytes)
    }

    /// Reads a QUIC variable-length integer (RFC 9000 §16). Non-minimal
    /// encodings are accepted (RFC 9000 §16 allows them except for frame
    /// types, see [`Reader::varint_with_len`]).
    pub fn varint(&mut self) -> Result<u64, DecodeError> {
        self.varint_with_len().map(|(v, _)| v)
    }

    /// Reads a varint and also returns the number of bytes its encoding used.
    pub fn varint_with_len(&mut self) -> Result<(u64, usize), DecodeError> {
        let first = self.peek_u8().ok_or(DecodeError::UnexpectedEnd)?;
        let len = 1usize << (first >> 6);
        let raw = self.bytes(len)?;
        let mut v = u64::from(first & 0x3f);
        for &b in raw.iter().skip(1) {
            v = (v << 8) | u64::from(b);
        }
        Ok((v, len))
    }

    /// Consumes and returns the next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(n).ok_or(DecodeError::UnexpectedEnd)?;
        let out = self
            .buf
            .get(self.pos..end)
            .ok_or(DecodeError::UnexpectedEnd)?;
        self.pos = end;
        Ok(out)
    }

    /// Consumes `n` bytes given as a `u64` (e.g. a length read from the wire).
    pub fn bytes_u64(&mut self, n: u64) -> Result<&'a [u8], DecodeError> {
        let n = usize::try_from(n).map_err(|_| DecodeError::UnexpectedEnd)?;
        self.bytes(n)
    }

    /// Skips `n` bytes.
    pub fn skip(&mut self, n: usize) -> Result<(), DecodeError> {
        self.bytes(n).map(|_| ())
    }

    /// Consumes and returns everything that is left.
    pub fn rest(&mut self) -> &'a [u8] {
        let out = self.buf.get(self.pos..).unwrap_or(&[]);
        self.pos = self.buf.len();
        out
    }

    /// Returns everything that is left without consuming it.
    pub fn peek_rest(&self) -> &'a [u8] {
        self.buf.get(self.pos..).unwrap_or(&[])
    }

    /// Consumes the next `N` bytes as an array.
    pub fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.bytes(N)?);
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_bounds() {
        let data = [1u8, 0, 2, 0, 0, 0, 3, 0x40, 0x25, 9];
        let mut r = Reader::new(&data);
        assert_eq!(r.u8(), Ok(1));
        assert_eq!(r.u16(), Ok(2));
        assert_eq!(r.u32(), Ok(3));
        assert_eq!(r.varint_with_len(), Ok((37, 2)));
        assert_eq!(r.position(), 9);
        assert_eq!(r.remaining(), 1);
        assert_eq!(r.u16(), Err(DecodeError::UnexpectedEnd));
        assert_eq!(r.position(), 9, "failed read must not consume");
        assert_eq!(r.rest(), &[9]);
        assert!(r.is_empty());
        assert_eq!(r.u8(), Err(DecodeError::UnexpectedEnd));
        assert_eq!(r.bytes(usize::MAX), Err(DecodeError::UnexpectedEnd));
        assert_eq!(r.array::<0>(), Ok([]));
    }

    #[test]
    fn truncated_varint() {
        let mut r = Reader::new(&[0xc0, 0, 0]);
        assert_eq!(r.varint(), Err(DecodeError::UnexpectedEnd));
        assert_eq!(Reader::new(&[]).varint(), Err(DecodeError::UnexpectedEnd));
    }
}
