//! First-phase header decoding (RFC 9000 §17, RFC 9001 §5.4.2).

use super::{
    Header, PacketKind, FIXED_BIT, HP_SAMPLE_LEN, KEY_PHASE_BIT, LONG_HEADER_BIT,
    RETRY_INTEGRITY_TAG_LEN, SPIN_BIT, SUPPORTED_VERSIONS,
};
use crate::cid::{ConnectionId, MAX_CID_LEN};
use crate::codec::{DecodeError, Reader};
use bytes::{Bytes, BytesMut};
use std::ops::Range;

/// Why a datagram could not be parsed as a packet. All of these mean "drop
/// the packet" except [`HeaderError::UnsupportedVersion`], to which a server
/// may reply with Version Negotiation (RFC 9000 §6.1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderError {
    /// The datagram ends inside the header, or the packet is too short to
    /// contain a header-protection sample (RFC 9001 §5.4.2).
    #[error("packet too short")]
    TooShort,
    /// The fixed bit is 0 (RFC 9000 §17.2, §17.3.1).
    #[error("fixed bit is zero")]
    FixedBitZero,
    /// A connection ID is longer than 20 bytes (RFC 9000 §17.2).
    #[error("connection ID too long ({0} bytes)")]
    CidTooLong(usize),
    /// The Length field runs past the end of the datagram (RFC 9000 §17.2).
    #[error("length field exceeds datagram")]
    InvalidLength,
    /// A long header with a version this endpoint does not support (not
    /// [`super::SUPPORTED_VERSIONS`]). Checked before the fixed bit, so it is
    /// reported whatever the version-specific bits hold, but only when both
    /// connection IDs fit in 20 bytes (otherwise [`HeaderError::CidTooLong`]).
    #[error("unsupported version {version:#010x}")]
    UnsupportedVersion {
        /// The version the peer used.
        version: u32,
        /// Destination connection ID (to echo as VN source CID).
        dcid: ConnectionId,
        /// Source connection ID (to echo as VN destination CID).
        scid: ConnectionId,
    },
    /// A Version Negotiation packet whose version list is not a multiple of
    /// 4 bytes.
    #[error("malformed version negotiation packet")]
    InvalidVersionNegotiation,
    /// A Retry packet too short to hold the Retry Integrity Tag.
    #[error("retry packet shorter than the integrity tag")]
    InvalidRetry,
}

impl From<DecodeError> for HeaderError {
    fn from(_: DecodeError) -> Self {
        HeaderError::TooShort
    }
}

/// A packet whose header has been parsed up to (not including) the
/// protected packet number.
///
/// **Buffer ownership:** `PartialDecode` owns a `BytesMut` holding exactly
/// this packet (split off the datagram zero-copy; the rest of a coalesced
/// datagram is returned separately by [`PartialDecode::new`]). The core
/// removes header protection in place through [`PartialDecode::packet_mut`]
/// (first byte and the packet-number bytes at [`PartialDecode::pn_offset`]),
/// then takes the buffer with [`PartialDecode::into_packet`] to decrypt the
/// payload in place. Parsed fields (CIDs, version, token range) are captured
/// at construction and are unaffected by in-place modification.
#[derive(Debug)]
pub struct PartialDecode {
    buf: BytesMut,
    kind: PacketKind,
    version: Option<u32>,
    dcid: ConnectionId,
    scid: Option<ConnectionId>,
    token: Range<usize>,
    pn_offset: usize,
    versions: Vec<u32>,
}

/// Fields of a long header common to all long packet types.
/// A parsed packet (with an empty buffer) and its length in the datagram.
type Parsed = Result<(PartialDecode, usize), HeaderError>;

struct LongCommon {
    first: u8,
    version: u32,
    dcid: ConnectionId,
    scid: ConnectionId,
}

impl PartialDecode {
    /// Parses the first packet of `datagram`. `local_cid_len` is the length of
    /// the connection IDs this endpoint issues (used for short headers, whose
    /// DCID carries no length, RFC 9000 §17.3.1).
    ///
    /// Returns the packet and, for coalesced datagrams (RFC 9000 §12.2), the
    /// remaining bytes (`None` if nothing is left). Never panics.
    pub fn new(
        mut datagram: BytesMut,
        local_cid_len: usize,
    ) -> Result<(PartialDecode, Option<BytesMut>), HeaderError> {
        let first = *datagram.first().ok_or(HeaderError::TooShort)?;
        let (mut pd, packet_len) = if first & LONG_HEADER_BIT == 0 {
            Self::parse_short(&datagram, local_cid_len)?
        } else {
            Self::parse_long(&datagram)?
        };
        if packet_len > datagram.len() {
            return Err(HeaderError::InvalidLength);
        }
        let rest = datagram.split_off(packet_len);
        pd.buf = datagram;
        Ok((pd, (!rest.is_empty()).then_some(rest)))
    }

    /// Short header (RFC 9000 §17.3.1).
    fn parse_short(dgram: &[u8], local_cid_len: usize) -> Parsed {
        let mut r = Reader::new(dgram);
        let first = r.u8()?;
        if first & FIXED_BIT == 0 {
            return Err(HeaderError::FixedBitZero);
        }
        if local_cid_len > MAX_CID_LEN {
            return Err(HeaderError::CidTooLong(local_cid_len));
        }
        let dcid = cid(r.bytes(local_cid_len)?)?;
        let pn_offset = r.position();
        check_sample(pn_offset, dgram.len())?;
        let pd = PartialDecode {
            buf: BytesMut::new(),
            kind: PacketKind::Short,
            version: None,
            dcid,
            scid: None,
            token: 0..0,
            pn_offset,
            versions: Vec::new(),
        };
        Ok((pd, dgram.len()))
    }

    /// Long header (RFC 9000 §17.2).
    fn parse_long(dgram: &[u8]) -> Parsed {
        let mut r = Reader::new(dgram);
        let first = r.u8()?;
        let version = r.u32()?;
        // Long-header CID lengths are version-independent (up to 255, RFC
        // 8999 §5.1); v1 caps them at 20, and so does `ConnectionId`.
        let dcid_len = r.u8()?;
        let dcid = cid(r.bytes(usize::from(dcid_len))?)?;
        let scid_len = r.u8()?;
        let scid = cid(r.bytes(usize::from(scid_len))?)?;
        let c = LongCommon {
            first,
            version,
            dcid,
            scid,
        };
        if version == 0 {
            return Self::parse_vn(c, r.rest(), dgram.len());
        }
        if !SUPPORTED_VERSIONS.contains(&version) {
            return Err(HeaderError::UnsupportedVersion {
                version,
                dcid,
                scid,
            });
        }
        if first & FIXED_BIT == 0 {
            return Err(HeaderError::FixedBitZero);
        }
        let kind = match (first >> 4) & 0x03 {
            0 => PacketKind::Initial,
            1 => PacketKind::ZeroRtt,
            2 => PacketKind::Handshake,
            _ => return Self::parse_retry(c, r.position(), dgram.len()),
        };
        let mut token = 0..0;
        if kind == PacketKind::Initial {
            let len = r.varint()?;
            let start = r.position();
            r.bytes_u64(len)?;
            token = start..r.position();
        }
        let length = r.varint()?;
        let pn_offset = r.position();
        let packet_len = usize::try_from(length)
            .ok()
            .and_then(|l| l.checked_add(pn_offset))
            .filter(|&l| l <= dgram.len())
            .ok_or(HeaderError::InvalidLength)?;
        check_sample(pn_offset, packet_len)?;
        Ok((
            PartialDecode {
                buf: BytesMut::new(),
                kind,
                version: Some(version),
                dcid: c.dcid,
                scid: Some(c.scid),
                token,
                pn_offset,
                versions: Vec::new(),
            },
            packet_len,
        ))
    }

    /// Version Negotiation (RFC 9000 §17.2.1): the rest is a version list.
    fn parse_vn(c: LongCommon, rest: &[u8], len: usize) -> Parsed {
        let _ = c.first; // the remaining first-byte bits are unused
        if rest.len() & 3 != 0 {
            return Err(HeaderError::InvalidVersionNegotiation);
        }
        let versions = rest
            .chunks_exact(4)
            .map(|ch| ch.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)))
            .collect();
        Ok((
            PartialDecode {
                buf: BytesMut::new(),
                kind: PacketKind::VersionNegotiation,
                version: Some(0),
                dcid: c.dcid,
                scid: Some(c.scid),
                token: 0..0,
                pn_offset: len,
                versions,
            },
            len,
        ))
    }

    /// Retry (RFC 9000 §17.2.5): token then 16-byte integrity tag, to the end
    /// of the datagram.
    fn parse_retry(c: LongCommon, pos: usize, len: usize) -> Parsed {
        let tag_start = len
            .checked_sub(RETRY_INTEGRITY_TAG_LEN)
            .filter(|&t| t >= pos)
            .ok_or(HeaderError::InvalidRetry)?;
        Ok((
            PartialDecode {
                buf: BytesMut::new(),
                kind: PacketKind::Retry,
                version: Some(c.version),
                dcid: c.dcid,
                scid: Some(c.scid),
                token: pos..tag_start,
                pn_offset: len,
                versions: Vec::new(),
            },
            len,
        ))
    }
}

fn cid(b: &[u8]) -> Result<ConnectionId, HeaderError> {
    ConnectionId::new(b).map_err(|e| HeaderError::CidTooLong(e.0))
}

/// The packet must hold 4 bytes past `pn_offset` plus a 16-byte sample
/// (RFC 9001 §5.4.2).
fn check_sample(pn_offset: usize, packet_len: usize) -> Result<(), HeaderError> {
    match pn_offset.checked_add(4 + HP_SAMPLE_LEN) {
        Some(need) if need <= packet_len => Ok(()),
        _ => Err(HeaderError::TooShort),
    }
}

impl PartialDecode {
    /// The packet kind.
    pub fn kind(&self) -> PacketKind {
        self.kind
    }

    /// The version (`None` for short headers, `Some(0)` for Version Negotiation).
    pub fn version(&self) -> Option<u32> {
        self.version
    }

    /// Destination connection ID.
    pub fn dcid(&self) -> ConnectionId {
        self.dcid
    }

    /// Source connection ID (long headers only).
    pub fn scid(&self) -> Option<ConnectionId> {
        self.scid
    }

    /// Token of an Initial or Retry packet (Retry: without the integrity
    /// tag); empty otherwise.
    pub fn token(&self) -> &[u8] {
        self.buf.get(self.token.clone()).unwrap_or(&[])
    }

    /// Offset of the packet number within [`PartialDecode::packet`]; the
    /// header-protection sample starts at `pn_offset() + 4` (RFC 9001 §5.4.2).
    /// For Retry / Version Negotiation this is the packet length.
    pub fn pn_offset(&self) -> usize {
        self.pn_offset
    }

    /// Offset of the header-protection sample (RFC 9001 §5.4.2).
    pub fn sample_offset(&self) -> usize {
        self.pn_offset + 4
    }

    /// Length of this packet within the datagram (long: header up to Length
    /// plus Length; short, Retry, VN: the rest of the datagram).
    pub fn packet_len(&self) -> usize {
        self.buf.len()
    }

    /// Whether this packet has a long header.
    pub fn is_long(&self) -> bool {
        self.kind.is_long()
    }

    /// Whether this packet carries a packet number (not Retry / VN).
    pub fn has_packet_number(&self) -> bool {
        self.kind.has_packet_number()
    }

    /// Versions listed in a Version Negotiation packet (empty otherwise).
    pub fn versions(&self) -> &[u32] {
        &self.versions
    }

    /// The Retry Integrity Tag (Retry packets only).
    pub fn retry_integrity_tag(&self) -> Option<[u8; RETRY_INTEGRITY_TAG_LEN]> {
        if self.kind != PacketKind::Retry {
            return None;
        }
        let start = self.buf.len().checked_sub(RETRY_INTEGRITY_TAG_LEN)?;
        self.buf.get(start..)?.try_into().ok()
    }

    /// The current first byte of the packet (protected until the core
    /// unprotects it in place).
    pub fn first_byte(&self) -> u8 {
        self.buf.first().copied().unwrap_or(0)
    }

    /// The raw bytes of this packet.
    pub fn packet(&self) -> &[u8] {
        &self.buf
    }

    /// Mutable access to the packet bytes, to remove header protection in place.
    pub fn packet_mut(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    /// Takes the packet buffer (header + payload, as modified in place).
    pub fn into_packet(self) -> BytesMut {
        self.buf
    }

    /// Builds a [`Header`] from the parsed fields. For short headers the spin
    /// and key-phase bits come from the *current* first byte, so call this
    /// after header protection has been removed.
    pub fn to_header(&self) -> Header {
        let version = self.version.unwrap_or(0);
        let scid = self.scid.unwrap_or_default();
        let token = || Bytes::copy_from_slice(self.token());
        match self.kind {
            PacketKind::Initial => Header::Initial {
                version,
                dcid: self.dcid,
                scid,
                token: token(),
            },
            PacketKind::Retry => Header::Retry {
                version,
                dcid: self.dcid,
                scid,
                token: token(),
            },
            PacketKind::VersionNegotiation => Header::VersionNegotiation {
                dcid: self.dcid,
                scid,
                versions: self.versions.clone(),
            },
            PacketKind::Short => Header::Short {
                spin: self.first_byte() & SPIN_BIT != 0,
                key_phase: self.first_byte() & KEY_PHASE_BIT != 0,
                dcid: self.dcid,
            },
            kind => Header::Long {
                kind,
                version,
                dcid: self.dcid,
                scid,
            },
        }
    }
}
