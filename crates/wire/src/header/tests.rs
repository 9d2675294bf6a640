//! Header and packet-number tests.

use super::*;
use proptest::prelude::*;

fn cid(b: &[u8]) -> ConnectionId {
    ConnectionId::new(b).unwrap()
}

/// Encodes `h` with `pn` and a `payload_len`-byte payload (incl. tag), filling
/// in the Length field.
fn build(
    h: &Header,
    pn: u64,
    largest_acked: Option<u64>,
    payload_len: usize,
) -> (Vec<u8>, PartialEncode) {
    let mut out = Vec::new();
    let pe = h.encode(pn, largest_acked, &mut out);
    out.resize(out.len() + payload_len, 0xee);
    pe.set_length(&mut out, pe.pn_len + payload_len);
    (out, pe)
}

fn parse(buf: &[u8], cid_len: usize) -> Result<(PartialDecode, Option<BytesMut>), HeaderError> {
    PartialDecode::new(BytesMut::from(buf), cid_len)
}

fn check_round_trip(h: Header, pn: u64, largest: Option<u64>) {
    let (buf, pe) = build(&h, pn, largest, 40);
    assert_eq!(pe.start, 0);
    let (pd, rest) = parse(&buf, h.dcid().len()).unwrap();
    assert!(rest.is_none());
    assert_eq!(pd.kind(), h.kind());
    assert_eq!(pd.packet_len(), buf.len());
    assert_eq!(pd.pn_offset(), pe.pn_offset);
    assert_eq!(pd.to_header(), h);
    let first = pd.packet()[0];
    assert!(reserved_bits_zero(first));
    let n = decode_pn_len(first);
    assert_eq!(n, pe.pn_len);
    assert_eq!(pe.header_len, pe.pn_offset + n);
    let t = read_truncated_pn(&pd.packet()[pd.pn_offset()..], n);
    assert_eq!(decode_packet_number(t, n, largest), pn);
}

use bytes::BytesMut;

#[test]
fn round_trip_each_kind() {
    let (d, s) = (cid(&[1, 2, 3, 4, 5, 6, 7, 8]), cid(&[9; 5]));
    check_round_trip(
        Header::Initial {
            version: QUIC_V1,
            dcid: d,
            scid: s,
            token: Bytes::from_static(b"tok"),
        },
        0,
        None,
    );
    check_round_trip(
        Header::Initial {
            version: QUIC_V1,
            dcid: d,
            scid: ConnectionId::EMPTY,
            token: Bytes::new(),
        },
        70_000,
        Some(10),
    );
    for kind in [PacketKind::ZeroRtt, PacketKind::Handshake] {
        check_round_trip(
            Header::Long {
                kind,
                version: QUIC_V1,
                dcid: d,
                scid: s,
            },
            1234,
            Some(1200),
        );
    }
    for (spin, key_phase) in [(false, false), (true, false), (false, true), (true, true)] {
        check_round_trip(
            Header::Short {
                spin,
                key_phase,
                dcid: d,
            },
            0xa82f9b32,
            Some(0xa82f30ea),
        );
    }
    check_round_trip(
        Header::Short {
            spin: false,
            key_phase: false,
            dcid: ConnectionId::EMPTY,
        },
        5,
        None,
    );
}

#[test]
fn version_negotiation_and_retry() {
    let (d, s) = (cid(&[1; 8]), cid(&[2; 20]));
    let vn = Header::VersionNegotiation {
        dcid: d,
        scid: s,
        versions: vec![QUIC_V1, 0x1a2a3a4a],
    };
    let mut out = vec![0xaa]; // something already in the buffer
    let pe = vn.encode(0, None, &mut out);
    assert_eq!((pe.start, pe.pn_len, pe.length_offset), (1, 0, None));
    let (pd, rest) = parse(&out[1..], 0).unwrap();
    assert!(rest.is_none());
    assert_eq!(pd.kind(), PacketKind::VersionNegotiation);
    assert_eq!(pd.versions(), &[QUIC_V1, 0x1a2a3a4a]);
    assert_eq!(pd.to_header(), vn);

    let retry = Header::Retry {
        version: QUIC_V1,
        dcid: d,
        scid: s,
        token: Bytes::from_static(b"retry-token"),
    };
    let mut out = Vec::new();
    retry.encode(0, None, &mut out);
    out.extend_from_slice(&[0x77; 16]);
    let (pd, _) = parse(&out, 0).unwrap();
    assert_eq!(pd.kind(), PacketKind::Retry);
    assert_eq!(pd.token(), b"retry-token");
    assert_eq!(pd.retry_integrity_tag(), Some([0x77; 16]));
    assert_eq!(pd.to_header(), retry);
    // Too short for the tag.
    assert_eq!(
        parse(&out[..out.len() - 17], 0).unwrap_err(),
        HeaderError::InvalidRetry
    );
}

#[test]
fn coalesced_datagram() {
    let (d, s) = (cid(&[1; 8]), cid(&[2; 8]));
    let mut dgram = Vec::new();
    let init = Header::Initial {
        version: QUIC_V1,
        dcid: d,
        scid: s,
        token: Bytes::new(),
    };
    let hs = Header::Long {
        kind: PacketKind::Handshake,
        version: QUIC_V1,
        dcid: d,
        scid: s,
    };
    let short = Header::Short {
        spin: false,
        key_phase: false,
        dcid: d,
    };
    for (h, payload) in [(&init, 30usize), (&hs, 25), (&short, 21)] {
        let pe = h.encode(1, None, &mut dgram);
        dgram.resize(dgram.len() + payload, 0);
        pe.set_length(&mut dgram, pe.pn_len + payload);
    }
    let (p1, rest) = parse(&dgram, 8).unwrap();
    assert_eq!(p1.kind(), PacketKind::Initial);
    let (p2, rest) = PartialDecode::new(rest.unwrap(), 8).unwrap();
    assert_eq!(p2.kind(), PacketKind::Handshake);
    let (p3, rest) = PartialDecode::new(rest.unwrap(), 8).unwrap();
    assert_eq!(p3.kind(), PacketKind::Short);
    assert!(rest.is_none());
    assert_eq!(
        p1.packet_len() + p2.packet_len() + p3.packet_len(),
        dgram.len()
    );
    // In-place modification through packet_mut is visible in into_packet.
    let mut p3 = p3;
    p3.packet_mut()[0] |= 0x04;
    assert_eq!(
        p3.to_header(),
        Header::Short {
            spin: false,
            key_phase: true,
            dcid: d
        }
    );
    assert_eq!(p3.into_packet()[0] & 0x04, 0x04);
}

#[test]
fn header_errors() {
    assert_eq!(parse(&[], 0).unwrap_err(), HeaderError::TooShort);
    // Short header with the fixed bit cleared.
    assert_eq!(
        parse(&[0x00; 40], 0).unwrap_err(),
        HeaderError::FixedBitZero
    );
    // Short header too short for the HP sample.
    assert_eq!(parse(&[0x40; 24], 8).unwrap_err(), HeaderError::TooShort);
    assert!(parse(&[0x40; 29], 8).is_ok());
    // Long header, v1, DCID of 21 bytes.
    let mut b = vec![0xc0, 0, 0, 0, 1, 21];
    b.extend_from_slice(&[0; 60]);
    assert_eq!(parse(&b, 0).unwrap_err(), HeaderError::CidTooLong(21));
    // Long header fixed bit zero.
    let (mut buf, _) = build(
        &Header::Long {
            kind: PacketKind::Handshake,
            version: QUIC_V1,
            dcid: cid(&[1]),
            scid: cid(&[2]),
        },
        0,
        None,
        30,
    );
    buf[0] &= !0x40;
    assert_eq!(parse(&buf, 0).unwrap_err(), HeaderError::FixedBitZero);
    buf[0] |= 0x40;
    // Length longer than the datagram.
    assert_eq!(
        parse(&buf[..buf.len() - 1], 0).unwrap_err(),
        HeaderError::InvalidLength
    );
    // Unsupported version carries what a Version Negotiation reply needs.
    buf[1..5].copy_from_slice(&0xff00_001du32.to_be_bytes());
    assert_eq!(
        parse(&buf, 0).unwrap_err(),
        HeaderError::UnsupportedVersion {
            version: 0xff00_001d,
            dcid: cid(&[1]),
            scid: cid(&[2])
        }
    );
    // Version Negotiation with a ragged version list.
    let b = [0x80, 0, 0, 0, 0, 0, 0, 1, 2, 3];
    assert_eq!(
        parse(&b, 0).unwrap_err(),
        HeaderError::InvalidVersionNegotiation
    );
    // Initial whose token length runs past the end.
    let b = [0xc0, 0, 0, 0, 1, 0, 0, 0x44, 0x00, 1, 2];
    assert_eq!(parse(&b, 0).unwrap_err(), HeaderError::TooShort);
}

#[test]
fn reset_token_tail() {
    assert_eq!(trailing_reset_token(&[0; 20]), None);
    let mut d = vec![0x40; 5];
    d.extend_from_slice(&[3; 16]);
    assert_eq!(
        trailing_reset_token(&d),
        Some(crate::cid::ResetToken([3; 16]))
    );
}

/// RFC 9000 Appendix A.2 and A.3 examples.
#[test]
fn rfc9000_pn_examples() {
    assert_eq!(pn_encode_len(0xac5c02, Some(0xabe8b3)), 2);
    assert_eq!(pn_encode_len(0xace8fe, Some(0xabe8b3)), 3);
    assert_eq!(
        decode_packet_number(0x9b32, 2, Some(0xa82f30ea)),
        0xa82f9b32
    );
    assert_eq!(pn_encode_len(0, None), 1);
    assert_eq!(pn_encode_len(u64::MAX, None), 4);
    assert_eq!(decode_pn_len(0xc3), 4);
    assert_eq!(read_truncated_pn(&[0x9b, 0x32, 0xff], 2), 0x9b32);
    assert_eq!(read_truncated_pn(&[0x9b], 4), 0x9b);
    // Window edges never overflow.
    assert_eq!(
        decode_packet_number(0xff, 1, Some((1 << 62) - 2)),
        (1 << 62) - 1
    );
    let _ = decode_packet_number(0, 1, Some(u64::MAX));
}

/// Issue 13: in one packet number space shared by a 5 ms and a 100 ms path, a slow-path packet
/// arrives after ~430 later fast-path packets. The RFC 9000 Appendix A.2 length, computed from
/// the largest acknowledged packet alone, is one byte and decodes to the wrong number; covering
/// the overtaking packets takes two.
#[test]
fn overtaken_packet_needs_a_longer_encoding() {
    let (la, pn, overtaking) = (10_000u64, 10_060u64, 430u64);
    let receiver_largest = Some(pn + overtaking);
    let short = pn_encode_len(pn, Some(la));
    assert_eq!(short, 1);
    let t = pn & 0xff;
    assert_ne!(decode_packet_number(t, short, receiver_largest), pn);
    let len = pn_encode_len_overtaken(pn, Some(la), overtaking);
    assert_eq!(len, 2);
    let t = pn & 0xffff;
    assert_eq!(decode_packet_number(t, len, receiver_largest), pn);
    // Edges: hwin must be at least overtaking + 2.
    assert_eq!(pn_encode_len_overtaken(pn, Some(pn - 1), 126), 1);
    assert_eq!(pn_encode_len_overtaken(pn, Some(pn - 1), 127), 2);
    assert_eq!(pn_encode_len_overtaken(pn, Some(pn - 1), (1 << 15) - 2), 2);
    assert_eq!(pn_encode_len_overtaken(pn, Some(pn - 1), (1 << 15) - 1), 3);
    assert_eq!(pn_encode_len_overtaken(pn, Some(pn - 1), u64::MAX), 4);
    // Never shorter than Appendix A.2 requires.
    assert_eq!(pn_encode_len_overtaken(0xace8fe, Some(0xabe8b3), 0), 3);
}

/// Decodes `pn` sent with `len` bytes at a receiver whose largest is `largest`.
fn decodes(pn: u64, len: usize, largest: Option<u64>) -> bool {
    let truncated = pn & ((1u64 << (8 * len)) - 1);
    decode_packet_number(truncated, len, largest) == pn
}

proptest! {
    /// The length from [`pn_encode_len_overtaken`] decodes whatever the receiver's largest is
    /// between the largest acknowledged packet and `pn + overtaking`, up to the 2^62 limit
    /// (RFC 9000 §12.3), and is the shortest that does so beyond Appendix A.2's length.
    #[test]
    fn overtaken_pn_round_trip(
        la in prop_oneof![0u64..1 << 20, 0u64..(1 << 62) - 1],
        ahead_bits in 0u32..31,
        ahead_frac in 0.0f64..1.0,
        overtaking_bits in 0u32..32,
        overtaking_frac in 0.0f64..1.0,
        recv_frac in 0.0f64..1.0,
        no_ack in any::<bool>(),
    ) {
        const MAX_PN: u64 = (1 << 62) - 1;
        let ahead = 1 + ((1u64 << ahead_bits) as f64 * ahead_frac) as u64;
        let overtaking = ((1u64 << overtaking_bits) as f64 * overtaking_frac) as u64;
        let (largest_acked, pn) = if no_ack {
            (None, ahead - 1)
        } else {
            (Some(la.min(MAX_PN - ahead)), la.min(MAX_PN - ahead) + ahead)
        };
        let len = pn_encode_len_overtaken(pn, largest_acked, overtaking);
        // The receiver's largest: none yet, anything from the largest acknowledged to
        // pn + overtaking, or one of the two extremes.
        let lo = largest_acked.unwrap_or(0);
        let hi = pn.saturating_add(overtaking).min(MAX_PN);
        let mid = lo + ((hi - lo) as f64 * recv_frac) as u64;
        for received in [Some(lo), Some(mid), Some(hi)] {
            prop_assert!(decodes(pn, len, received), "pn {pn} len {len} received {received:?}");
        }
        if no_ack {
            prop_assert!(decodes(pn, len, None));
        }
        // (Near 2^62 the decoder may not add a window and can recover pn by luck.)
        let far_from_limit = hi == pn + overtaking && hi < MAX_PN - (1 << 32);
        if len > pn_encode_len(pn, largest_acked) && far_from_limit {
            prop_assert!(!decodes(pn, len - 1, Some(hi)), "len {len} is not the shortest");
        }
    }

    #[test]
    fn pn_round_trip(
        la in 0u64..(1 << 62) - (1 << 32),
        ahead in 1u64..(1 << 30),
        recv_frac in 0.0f64..1.0,
        no_ack in any::<bool>(),
    ) {
        let (largest_acked, pn) = if no_ack { (None, ahead - 1) } else { (Some(la), la + ahead) };
        let len = pn_encode_len(pn, largest_acked);
        let truncated = pn & ((1u64 << (8 * len)) - 1);
        // The receiver has seen anything between largest_acked and pn - 1.
        let lo = largest_acked.unwrap_or(0);
        let received = match largest_acked {
            None if pn == 0 => None,
            _ => Some(lo + ((pn - 1 - lo.min(pn - 1)) as f64 * recv_frac) as u64),
        };
        prop_assert_eq!(decode_packet_number(truncated, len, received.or(largest_acked)), pn);
    }

    #[test]
    fn random_datagrams_never_panic(
        data in proptest::collection::vec(any::<u8>(), 0..200),
        cid_len in 0usize..24,
    ) {
        let mut rest = Some(BytesMut::from(&data[..]));
        let mut total = 0;
        while let Some(buf) = rest.take() {
            let Ok((pd, next)) = PartialDecode::new(buf, cid_len) else { break };
            total += pd.packet_len();
            if pd.has_packet_number() {
                prop_assert!(pd.sample_offset() + HP_SAMPLE_LEN <= pd.packet_len());
            }
            let _ = pd.to_header();
            rest = next;
        }
        prop_assert!(total <= data.len());
    }

    #[test]
    fn random_long_headers_never_panic(
        first in 0x80u8..=0xff,
        tail in proptest::collection::vec(any::<u8>(), 0..120),
    ) {
        let mut data = vec![first, 0, 0, 0, 1];
        data.extend_from_slice(&tail);
        let _ = parse(&data, 8);
    }
}
