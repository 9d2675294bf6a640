//! Packet headers (RFC 9000 §17) and packet-number coding (RFC 9000 §17.1,
//! Appendix A.2/A.3).
//!
//! Encoding: [`Header::encode`] appends a header (with a truncated packet
//! number and, for long headers, a 2-byte Length placeholder) and returns a
//! [`PartialEncode`] describing where things are.
//!
//! Decoding is two-phase, because header protection (RFC 9001 §5.4) must be
//! removed between the phases by the crypto layer:
//! 1. [`PartialDecode::new`] parses the unprotected part of the header, splits
//!    one packet off a (possibly coalesced) datagram and hands back the rest.
//! 2. After unprotecting the first byte and packet-number bytes in place
//!    ([`PartialDecode::packet_mut`]), the core calls [`decode_pn_len`],
//!    [`read_truncated_pn`] and [`decode_packet_number`].

mod decode;
mod pn;
#[cfg(test)]
mod tests;

pub use decode::{HeaderError, PartialDecode};
pub use pn::{
    decode_packet_number, decode_pn_len, pn_encode_len, pn_encode_len_overtaken, read_truncated_pn,
};

use crate::cid::ConnectionId;
use crate::varint::write_varint;
use bytes::{BufMut, Bytes};

/// QUIC version 1 (RFC 9000 §15).
pub const QUIC_V1: u32 = 0x0000_0001;

/// Versions this crate can decode long headers for.
pub const SUPPORTED_VERSIONS: &[u32] = &[QUIC_V1];

/// Length of the Retry Integrity Tag (RFC 9001 §5.8).
pub const RETRY_INTEGRITY_TAG_LEN: usize = 16;

/// Header-protection sample length (RFC 9001 §5.4.2).
pub const HP_SAMPLE_LEN: usize = 16;

/// Header form bit: set for long headers (RFC 9000 §17.2).
pub const LONG_HEADER_BIT: u8 = 0x80;
/// Fixed bit, must be 1 in v1 packets other than Version Negotiation.
pub const FIXED_BIT: u8 = 0x40;
/// Short-header spin bit (RFC 9000 §17.3.1).
pub const SPIN_BIT: u8 = 0x20;
/// Short-header key phase bit (RFC 9000 §17.3.1), header-protected.
pub const KEY_PHASE_BIT: u8 = 0x04;

/// The kind of a packet, by header type.
#[derive(Debug, Copy, Clone, PartialEq, Eq, Hash)]
pub enum PacketKind {
    /// Initial (long header type 0x0, RFC 9000 §17.2.2).
    Initial,
    /// 0-RTT (long header type 0x1, RFC 9000 §17.2.3).
    ZeroRtt,
    /// Handshake (long header type 0x2, RFC 9000 §17.2.4).
    Handshake,
    /// Retry (long header type 0x3, RFC 9000 §17.2.5).
    Retry,
    /// Version Negotiation (version 0, RFC 9000 §17.2.1).
    VersionNegotiation,
    /// 1-RTT short header (RFC 9000 §17.3.1).
    Short,
}

impl PacketKind {
    /// Whether packets of this kind use the long header form.
    pub fn is_long(self) -> bool {
        self != PacketKind::Short
    }

    /// Whether packets of this kind carry a (protected) packet number.
    pub fn has_packet_number(self) -> bool {
        !matches!(self, PacketKind::Retry | PacketKind::VersionNegotiation)
    }

    /// The 2-bit long packet type in v1 (RFC 9000 §17.2, Table 5).
    fn long_type_bits(self) -> u8 {
        match self {
            PacketKind::Initial => 0,
            PacketKind::ZeroRtt => 1,
            PacketKind::Retry => 3,
            _ => 2,
        }
    }
}

/// A packet header, as encoded by [`Header::encode`] or recovered by
/// [`PartialDecode::to_header`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Header {
    /// Initial packet header (RFC 9000 §17.2.2).
    Initial {
        /// Version (normally [`QUIC_V1`]).
        version: u32,
        /// Destination connection ID.
        dcid: ConnectionId,
        /// Source connection ID.
        scid: ConnectionId,
        /// Address-validation token (empty if none).
        token: Bytes,
    },
    /// 0-RTT or Handshake packet header (RFC 9000 §17.2.3, §17.2.4).
    Long {
        /// [`PacketKind::ZeroRtt`] or [`PacketKind::Handshake`].
        kind: PacketKind,
        /// Version.
        version: u32,
        /// Destination connection ID.
        dcid: ConnectionId,
        /// Source connection ID.
        scid: ConnectionId,
    },
    /// Retry packet header (RFC 9000 §17.2.5), without the integrity tag.
    Retry {
        /// Version.
        version: u32,
        /// Destination connection ID (the client's SCID).
        dcid: ConnectionId,
        /// Source connection ID (the server's new CID).
        scid: ConnectionId,
        /// Retry token; excludes the 16-byte Retry Integrity Tag.
        token: Bytes,
    },
    /// 1-RTT short header (RFC 9000 §17.3.1).
    Short {
        /// Latency spin bit.
        spin: bool,
        /// Key phase bit.
        key_phase: bool,
        /// Destination connection ID.
        dcid: ConnectionId,
    },
    /// Version Negotiation packet (RFC 9000 §17.2.1).
    VersionNegotiation {
        /// Destination connection ID (the client's SCID).
        dcid: ConnectionId,
        /// Source connection ID (the client's DCID).
        scid: ConnectionId,
        /// Supported versions.
        versions: Vec<u32>,
    },
}

/// Where [`Header::encode`] put things.
///
/// All offsets are **absolute indices into the `out` buffer** passed to
/// [`Header::encode`] (so they stay valid when several packets are coalesced
/// into one buffer); `start` is where this header begins and `header_len`
/// counts bytes from `start` up to and including the packet number.
#[derive(Debug, Copy, Clone, PartialEq, Eq)]
pub struct PartialEncode {
    /// Bytes of header from `start`, including the packet number.
    pub header_len: usize,
    /// Absolute offset of the first packet-number byte (header end for
    /// Retry / Version Negotiation, which have none).
    pub pn_offset: usize,
    /// Packet number length in bytes (0 for Retry / Version Negotiation).
    pub pn_len: usize,
    /// Absolute offset of the 2-byte Length field (long headers with a packet
    /// number only).
    pub length_offset: Option<usize>,
    /// Absolute offset of the first header byte.
    pub start: usize,
}

impl PartialEncode {
    /// Fills in the long-header Length field: the packet number plus payload
    /// plus AEAD tag length, i.e. everything after the Length field.
    ///
    /// Precondition: `payload_len_including_pn_and_tag < 2^14` (the field is a
    /// fixed 2-byte varint). Violations trip a `debug_assert!` and leave the
    /// field unchanged in release builds; so does an out-of-range `buf`.
    /// No-op for short headers.
    pub fn set_length(&self, buf: &mut [u8], payload_len_including_pn_and_tag: usize) {
        let Some(off) = self.length_offset else {
            return;
        };
        let len = payload_len_including_pn_and_tag;
        debug_assert!(len < (1 << 14), "long header length {len} >= 2^14");
        if len >= (1 << 14) {
            return;
        }
        if let Some(dst) = off.checked_add(2).and_then(|end| buf.get_mut(off..end)) {
            dst.copy_from_slice(&(0x4000 | len as u16).to_be_bytes());
        }
    }

    /// Absolute offset of the first byte after the header (payload start).
    pub fn payload_offset(&self) -> usize {
        self.start + self.header_len
    }
}

impl Header {
    /// The packet kind of this header.
    pub fn kind(&self) -> PacketKind {
        match self {
            Header::Initial { .. } => PacketKind::Initial,
            Header::Long { kind, .. } => *kind,
            Header::Retry { .. } => PacketKind::Retry,
            Header::Short { .. } => PacketKind::Short,
            Header::VersionNegotiation { .. } => PacketKind::VersionNegotiation,
        }
    }

    /// The destination connection ID.
    pub fn dcid(&self) -> &ConnectionId {
        match self {
            Header::Initial { dcid, .. }
            | Header::Long { dcid, .. }
            | Header::Retry { dcid, .. }
            | Header::Short { dcid, .. }
            | Header::VersionNegotiation { dcid, .. } => dcid,
        }
    }

    /// The source connection ID (long headers only).
    pub fn scid(&self) -> Option<&ConnectionId> {
        match self {
            Header::Initial { scid, .. }
            | Header::Long { scid, .. }
            | Header::Retry { scid, .. }
            | Header::VersionNegotiation { scid, .. } => Some(scid),
            Header::Short { .. } => None,
        }
    }

    /// Appends this header to `out` with packet number `pn`, truncated to
    /// [`pn_encode_len`]`(pn, largest_acked)` bytes (RFC 9000 §17.1). Reserved
    /// bits are zero and the fixed bit is set. Long headers with a packet
    /// number get a 2-byte Length placeholder to fill in with
    /// [`PartialEncode::set_length`]. `pn` / `largest_acked` are ignored for
    /// Retry (tag not written: the crypto layer appends it, RFC 9001 §5.8) and
    /// Version Negotiation.
    ///
    /// A `Header::Long` whose kind is not ZeroRtt/Handshake is encoded as
    /// Handshake (or as an Initial with an empty token for `Initial`).
    pub fn encode(&self, pn: u64, largest_acked: Option<u64>, out: &mut Vec<u8>) -> PartialEncode {
        self.encode_with_pn_len(pn, pn_encode_len(pn, largest_acked), out)
    }

    /// Like [`Header::encode`], with the packet number truncated to `pn_len` bytes (clamped to
    /// 1..=4) chosen by the caller, e.g. with [`pn_encode_len_overtaken`] when packets of one
    /// space travel paths of different delays.
    pub fn encode_with_pn_len(&self, pn: u64, pn_len: usize, out: &mut Vec<u8>) -> PartialEncode {
        let start = out.len();
        let pn_len = pn_len.clamp(1, 4);
        let pn_bits = (pn_len as u8).wrapping_sub(1) & 0x03;
        let long = |out: &mut Vec<u8>, kind, version, dcid, scid| {
            put_long_prefix(out, kind, version, dcid, scid, pn_bits)
        };
        let (kind, token) = match self {
            Header::Initial {
                version,
                dcid,
                scid,
                token,
            } => {
                long(out, PacketKind::Initial, *version, dcid, scid);
                (PacketKind::Initial, Some(token.as_ref()))
            }
            Header::Long {
                kind,
                version,
                dcid,
                scid,
            } => {
                let kind = match kind {
                    PacketKind::ZeroRtt | PacketKind::Initial => *kind,
                    _ => PacketKind::Handshake,
                };
                long(out, kind, *version, dcid, scid);
                (kind, (kind == PacketKind::Initial).then_some(&[][..]))
            }
            Header::Retry {
                version,
                dcid,
                scid,
                token,
            } => {
                long(out, PacketKind::Retry, *version, dcid, scid);
                out.put_slice(token);
                return PartialEncode::no_pn(start, out.len());
            }
            Header::VersionNegotiation {
                dcid,
                scid,
                versions,
            } => {
                out.put_u8(LONG_HEADER_BIT | FIXED_BIT);
                out.put_u32(0);
                put_cid(out, dcid);
                put_cid(out, scid);
                versions.iter().for_each(|&v| out.put_u32(v));
                return PartialEncode::no_pn(start, out.len());
            }
            Header::Short {
                spin,
                key_phase,
                dcid,
            } => {
                let mut b = FIXED_BIT | pn_bits;
                if *spin {
                    b |= SPIN_BIT;
                }
                if *key_phase {
                    b |= KEY_PHASE_BIT;
                }
                out.put_u8(b);
                out.put_slice(dcid.as_slice());
                (PacketKind::Short, None)
            }
        };
        if let Some(token) = token {
            write_varint(out, token.len() as u64);
            out.put_slice(token);
        }
        finish_pn(out, start, kind.is_long(), pn, pn_len)
    }
}

/// Writes a long header up to and including the SCID (RFC 9000 §17.2).
fn put_long_prefix(
    out: &mut Vec<u8>,
    kind: PacketKind,
    version: u32,
    dcid: &ConnectionId,
    scid: &ConnectionId,
    pn_bits: u8,
) {
    let mut first = LONG_HEADER_BIT | FIXED_BIT | (kind.long_type_bits() << 4);
    if kind.has_packet_number() {
        first |= pn_bits;
    }
    out.put_u8(first);
    out.put_u32(version);
    put_cid(out, dcid);
    put_cid(out, scid);
}

/// Writes the Length placeholder (long headers) and the truncated packet number.
fn finish_pn(out: &mut Vec<u8>, start: usize, long: bool, pn: u64, pn_len: usize) -> PartialEncode {
    let length_offset = long.then(|| {
        let off = out.len();
        out.put_u16(0x4000);
        off
    });
    let pn_offset = out.len();
    let bytes = pn.to_be_bytes();
    out.put_slice(bytes.get(8usize.saturating_sub(pn_len)..).unwrap_or(&[]));
    PartialEncode {
        header_len: out.len() - start,
        pn_offset,
        pn_len,
        length_offset,
        start,
    }
}

impl PartialEncode {
    fn no_pn(start: usize, end: usize) -> PartialEncode {
        PartialEncode {
            header_len: end - start,
            pn_offset: end,
            pn_len: 0,
            length_offset: None,
            start,
        }
    }
}

fn put_cid(out: &mut Vec<u8>, cid: &ConnectionId) {
    out.put_u8(cid.len() as u8);
    out.put_slice(cid.as_slice());
}

/// The last 16 bytes of a datagram, the candidate Stateless Reset Token
/// (RFC 9000 §10.3.1). `None` for datagrams shorter than 21 bytes, which cannot
/// be stateless resets (RFC 9000 §10.3). The core should check this both when
/// a short-header packet fails to decrypt and when [`PartialDecode::new`]
/// rejects a datagram whose first byte has the short-header form.
pub fn trailing_reset_token(datagram: &[u8]) -> Option<crate::cid::ResetToken> {
    if datagram.len() < 21 {
        return None;
    }
    let tail = datagram.get(datagram.len() - 16..)?;
    tail.try_into().ok().map(crate::cid::ResetToken)
}

/// Whether the reserved bits of an **unprotected** first byte are zero
/// (long header: 0x0c, RFC 9000 §17.2; short header: 0x18, §17.3.1). A
/// non-zero value after successful decryption is a PROTOCOL_VIOLATION.
pub fn reserved_bits_zero(first_byte: u8) -> bool {
    let mask = if first_byte & LONG_HEADER_BIT != 0 {
        0x0c
    } else {
        0x18
    };
    first_byte & mask == 0
}
