//! Protecting and unprotecting one QUIC packet (RFC 9001 §5.3 AEAD usage, §5.4 header
//! protection), with the multipath nonce of RFC 10069 §"Nonce Calculation" when a path ID is
//! given.
//!
//! Send side: build the header (with the truncated packet number as its last field) and the
//! plaintext payload in one `Vec`, then call [`seal_packet`], which appends the AEAD tag and
//! applies header protection.
//!
//! Receive side: [`remove_header_protection`] (needs the packet number offset, known from the
//! header form and connection ID lengths, RFC 9001 §5.4.2), decode the packet number (RFC 9000
//! §17.1), then [`open_payload`].

use std::ops::Range;

use rustls::quic::{HeaderProtectionKey, PacketKey};

use super::{CryptoError, DirectionalKeys};

/// RFC 9001 §5.4.2: the sample starts 4 bytes after the start of the Packet Number field.
const SAMPLE_OFFSET: usize = 4;
/// RFC 9000 §17.1: packet numbers are encoded in 1 to 4 bytes.
const MAX_PN_LEN: usize = 4;

/// Encrypts the payload of `packet` in place, appends the AEAD tag and applies header protection.
///
/// On entry `packet` holds exactly one packet: `header_len` header bytes, ending with the
/// `pn_len`-byte truncated packet number at `pn_offset`, followed by the plaintext payload. On
/// success the tag (`keys.packet.tag_len()` = 16 bytes) has been appended, so a long header's
/// Length field must already count it (RFC 9000 §17.2). On error the packet must be discarded
/// (it may be partly encrypted).
///
/// The nonce is the RFC 9001 §5.3 one (IV xor packet number) when `path_id` is `None`, and the
/// RFC 10069 one (IV xor path ID ‖ packet number) when it is `Some`; for path 0 both are the same.
///
/// Errors: [`CryptoError::InvalidArgument`] if the offsets disagree with each other or with the
/// Packet Number Length bits of the first byte; [`CryptoError::PacketTooShort`] if the packet
/// cannot hold a header-protection sample (RFC 9001 §5.4.2: the packet number plus payload must
/// be at least 4 bytes longer than the sample, i.e. pad with PADDING frames first).
pub fn seal_packet(
    keys: &DirectionalKeys,
    path_id: Option<u32>,
    pn: u64,
    packet: &mut Vec<u8>,
    header_len: usize,
    pn_offset: usize,
    pn_len: usize,
) -> Result<(), CryptoError> {
    let layout = Layout {
        header_len,
        pn_offset,
        pn_len,
    };
    seal_with(
        keys.header.as_ref(),
        keys.packet.as_ref(),
        path_id,
        pn,
        packet,
        layout,
    )
}

/// Where the packet number sits in a packet being sealed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Layout {
    pub(crate) header_len: usize,
    pub(crate) pn_offset: usize,
    pub(crate) pn_len: usize,
}

/// [`seal_packet`] with the two keys passed separately.
pub(crate) fn seal_with(
    hp: &dyn HeaderProtectionKey,
    key: &dyn PacketKey,
    path_id: Option<u32>,
    pn: u64,
    packet: &mut Vec<u8>,
    layout: Layout,
) -> Result<(), CryptoError> {
    let Layout {
        header_len,
        pn_offset,
        pn_len,
    } = layout;
    check_header_layout(packet, header_len, pn_offset, pn_len)?;
    let needed = pn_offset + SAMPLE_OFFSET + hp.sample_len();
    let have = packet.len() + key.tag_len();
    if have < needed {
        return Err(CryptoError::PacketTooShort { needed, have });
    }
    let (header, payload) = packet.split_at_mut(header_len);
    let tag = match path_id {
        Some(id) => key.encrypt_in_place_for_path(id, pn, header, payload),
        None => key.encrypt_in_place(pn, header, payload),
    }
    .map_err(|_| CryptoError::Encrypt)?;
    packet.extend_from_slice(tag.as_ref());
    apply_header_protection(hp, packet, pn_offset, pn_len)
}

/// Validates the caller's view of the header: RFC 9000 §17 puts the Packet Number last in both
/// header forms, and its length is the Packet Number Length bits + 1 (RFC 9000 §17.2, §17.3.1).
fn check_header_layout(
    packet: &[u8],
    header_len: usize,
    pn_offset: usize,
    pn_len: usize,
) -> Result<(), CryptoError> {
    if !(1..=MAX_PN_LEN).contains(&pn_len) {
        return Err(CryptoError::InvalidArgument(
            "packet number length must be 1..=4",
        ));
    }
    if pn_offset == 0 || pn_offset.checked_add(pn_len) != Some(header_len) {
        return Err(CryptoError::InvalidArgument(
            "packet number must end the header",
        ));
    }
    if header_len > packet.len() {
        return Err(CryptoError::PacketTooShort {
            needed: header_len,
            have: packet.len(),
        });
    }
    if usize::from(packet[0] & 0x03) + 1 != pn_len {
        return Err(CryptoError::InvalidArgument(
            "first byte disagrees with pn_len",
        ));
    }
    Ok(())
}

/// Splits `packet` into (first byte, packet number field of `pn_field_len` bytes, sample) for
/// header protection (RFC 9001 §5.4.1, §5.4.2). The caller has checked the length.
fn hp_parts(
    packet: &mut [u8],
    pn_offset: usize,
    pn_field_len: usize,
    sample_len: usize,
) -> (&mut u8, &mut [u8], &[u8]) {
    let (head, tail) = packet.split_at_mut(pn_offset + SAMPLE_OFFSET);
    let (first, rest) = head.split_at_mut(1);
    let pn = &mut rest[pn_offset - 1..pn_offset - 1 + pn_field_len];
    (&mut first[0], pn, &tail[..sample_len])
}

/// Applies header protection (RFC 9001 §5.4.1) to a packet whose payload is already encrypted.
fn apply_header_protection(
    hp: &dyn HeaderProtectionKey,
    packet: &mut [u8],
    pn_offset: usize,
    pn_len: usize,
) -> Result<(), CryptoError> {
    let sample_len = hp.sample_len();
    let (first, pn, sample) = hp_parts(packet, pn_offset, pn_len, sample_len);
    hp.encrypt_in_place(sample, first, pn)
        .map_err(|_| CryptoError::HeaderProtection)
}

/// Removes header protection in place (RFC 9001 §5.4.1) and returns `(first_byte, pn_len)`: the
/// unprotected first byte (reserved bits, Key Phase for short headers, Packet Number Length) and
/// the packet number length in bytes (1..=4). The truncated packet number is then at
/// `packet[pn_offset..pn_offset + pn_len]` and the header ends at `pn_offset + pn_len`.
///
/// `packet` must be exactly one packet (for a long header, cut at its Length field). RFC 9001
/// §5.4.2: "An endpoint MUST discard packets that are not long enough to contain a complete
/// sample": if `pn_offset + 4 + 16 > packet.len()` this returns
/// [`CryptoError::PacketTooShort`] without modifying anything.
///
/// The reserved bits are returned unchecked: RFC 9000 §17.2/§17.3.1 requires a PROTOCOL_VIOLATION
/// only if they are non-zero *after* the packet was successfully decrypted.
pub fn remove_header_protection(
    hp: &dyn HeaderProtectionKey,
    packet: &mut [u8],
    pn_offset: usize,
) -> Result<(u8, usize), CryptoError> {
    if pn_offset == 0 {
        return Err(CryptoError::InvalidArgument(
            "packet number cannot start the packet",
        ));
    }
    let sample_len = hp.sample_len();
    let needed = pn_offset
        .saturating_add(SAMPLE_OFFSET)
        .saturating_add(sample_len);
    if packet.len() < needed {
        return Err(CryptoError::PacketTooShort {
            needed,
            have: packet.len(),
        });
    }
    // The receiver does not know pn_len yet: pass the maximal 4-byte field; rustls masks only
    // the pn_len bytes given by the unmasked first byte (RFC 9001 §5.4.1).
    let (first, pn, sample) = hp_parts(packet, pn_offset, MAX_PN_LEN, sample_len);
    hp.decrypt_in_place(sample, first, pn)
        .map_err(|_| CryptoError::HeaderProtection)?;
    let first = packet[0];
    Ok((first, usize::from(first & 0x03) + 1))
}

/// Decrypts the payload of a packet whose header protection was removed, in place (RFC 9001
/// §5.3). `packet[..header_len]` is the header (the AEAD associated data), the rest is ciphertext
/// plus tag. `pn` is the full (decoded, RFC 9000 §17.1) packet number; `path_id` selects the
/// nonce as in [`seal_packet`]. Returns the range of the plaintext within `packet`.
///
/// [`CryptoError::Decrypt`] means the packet failed authentication and MUST be discarded
/// (RFC 9001 §5.5); count it against the integrity limit (RFC 9001 §6.6).
pub fn open_payload(
    key: &dyn PacketKey,
    path_id: Option<u32>,
    pn: u64,
    packet: &mut [u8],
    header_len: usize,
) -> Result<Range<usize>, CryptoError> {
    let needed = header_len.saturating_add(key.tag_len());
    if packet.len() < needed {
        return Err(CryptoError::PacketTooShort {
            needed,
            have: packet.len(),
        });
    }
    let (header, payload) = packet.split_at_mut(header_len);
    let plain = match path_id {
        Some(id) => key.decrypt_in_place_for_path(id, pn, header, payload),
        None => key.decrypt_in_place(pn, header, payload),
    }
    .map_err(|_| CryptoError::Decrypt)?;
    Ok(header_len..header_len + plain.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::{initial_keys, KeyPair, Side};

    const CID: [u8; 8] = [0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08];

    /// A short-header packet (RFC 9000 §17.3.1): 0x40 | key phase | pn_len-1, an 8-byte DCID,
    /// then a `pn_len`-byte packet number.
    pub(crate) fn short_packet(pn: u64, pn_len: usize, payload: &[u8]) -> (Vec<u8>, usize, usize) {
        let mut p = vec![0x40 | (pn_len as u8 - 1)];
        p.extend_from_slice(&CID);
        let pn_offset = p.len();
        p.extend_from_slice(&pn.to_be_bytes()[8 - pn_len..]);
        let header_len = p.len();
        p.extend_from_slice(payload);
        (p, header_len, pn_offset)
    }

    fn pair() -> (KeyPair, KeyPair) {
        (
            initial_keys(&CID, Side::Client),
            initial_keys(&CID, Side::Server),
        )
    }

    /// Receiver-side unprotect with a known packet number length and full packet number.
    fn unprotect(
        keys: &DirectionalKeys,
        path_id: Option<u32>,
        pn: u64,
        packet: &mut [u8],
        pn_offset: usize,
    ) -> Result<Vec<u8>, CryptoError> {
        let (_, pn_len) = remove_header_protection(keys.header.as_ref(), packet, pn_offset)?;
        let truncated = packet[pn_offset..pn_offset + pn_len]
            .iter()
            .fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        let mask = (1u64 << (8 * pn_len)) - 1;
        if truncated != pn & mask {
            return Err(CryptoError::Decrypt);
        }
        let range = open_payload(
            keys.packet.as_ref(),
            path_id,
            pn,
            packet,
            pn_offset + pn_len,
        )?;
        Ok(packet[range].to_vec())
    }

    #[test]
    fn round_trip_with_and_without_path_id() {
        let (client, server) = pair();
        for path_id in [None, Some(0), Some(1), Some(7), Some(u32::MAX)] {
            for pn_len in 1..=4 {
                let pn = 0x1234_5678u64 & ((1 << (8 * pn_len)) - 1);
                let (mut p, header_len, pn_offset) = short_packet(pn, pn_len, b"round trip!");
                seal_packet(
                    &client.local,
                    path_id,
                    pn,
                    &mut p,
                    header_len,
                    pn_offset,
                    pn_len,
                )
                .unwrap();
                assert_eq!(p.len(), header_len + 11 + 16);
                let plain = unprotect(&server.remote, path_id, pn, &mut p, pn_offset).unwrap();
                assert_eq!(plain, b"round trip!");
            }
        }
    }

    #[test]
    fn path_zero_nonce_equals_rfc9001_nonce() {
        // RFC 10069 §"Nonce Calculation": PPN = path ID (32) ‖ 0b00 ‖ pn (62); for path 0 that is
        // the RFC 9001 §5.3 nonce.
        let (client, _) = pair();
        let (mut a, hl, po) = short_packet(42, 2, b"same nonce payload");
        let mut b = a.clone();
        seal_packet(&client.local, None, 42, &mut a, hl, po, 2).unwrap();
        seal_packet(&client.local, Some(0), 42, &mut b, hl, po, 2).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn different_paths_differ_and_do_not_cross_decrypt() {
        let (client, server) = pair();
        let (plain, hl, po) = short_packet(9, 1, b"multipath payload");
        let mut on_1 = plain.clone();
        let mut on_2 = plain.clone();
        seal_packet(&client.local, Some(1), 9, &mut on_1, hl, po, 1).unwrap();
        seal_packet(&client.local, Some(2), 9, &mut on_2, hl, po, 1).unwrap();
        assert_ne!(on_1[hl..], on_2[hl..]);
        assert!(matches!(
            unprotect(&server.remote, Some(2), 9, &mut on_1.clone(), po),
            Err(CryptoError::Decrypt)
        ));
        assert!(unprotect(&server.remote, None, 9, &mut on_2.clone(), po).is_err());
        assert!(unprotect(&server.remote, Some(1), 9, &mut on_1, po).is_ok());
        assert!(unprotect(&server.remote, Some(2), 9, &mut on_2, po).is_ok());
    }

    #[test]
    fn tampering_any_byte_fails() {
        let (client, server) = pair();
        let (mut p, hl, po) = short_packet(300, 2, &[0x01; 24]);
        seal_packet(&client.local, Some(3), 300, &mut p, hl, po, 2).unwrap();
        for i in 0..p.len() {
            for bit in [0x01u8, 0x80] {
                let mut t = p.clone();
                t[i] ^= bit;
                assert!(
                    unprotect(&server.remote, Some(3), 300, &mut t, po).is_err(),
                    "byte {i}"
                );
            }
        }
        assert!(unprotect(&server.remote, Some(3), 300, &mut p, po).is_ok());
    }

    #[test]
    fn wrong_direction_fails() {
        let (client, _) = pair();
        let (mut p, hl, po) = short_packet(1, 1, &[0u8; 20]);
        seal_packet(&client.local, None, 1, &mut p, hl, po, 1).unwrap();
        assert!(unprotect(&client.remote, None, 1, &mut p, po).is_err());
    }

    #[test]
    fn short_packets_are_errors() {
        let (client, server) = pair();
        // pn (1) + payload (2) + tag (16) = 19 < 4 + 16: RFC 9001 §5.4.2 needs padding.
        let (mut p, hl, po) = short_packet(1, 1, &[1, 2]);
        let before = p.clone();
        assert!(matches!(
            seal_packet(&client.local, None, 1, &mut p, hl, po, 1),
            Err(CryptoError::PacketTooShort { .. })
        ));
        assert_eq!(p, before, "a rejected packet is left untouched");
        let (mut p, hl, po) = short_packet(1, 1, &[1, 2, 3]);
        seal_packet(&client.local, None, 1, &mut p, hl, po, 1).unwrap();
        for len in 0..p.len() {
            let mut t = p[..len].to_vec();
            assert!(
                unprotect(&server.remote, None, 1, &mut t, po).is_err(),
                "len {len}"
            );
        }
        assert!(
            remove_header_protection(server.remote.header.as_ref(), &mut [0u8; 64], 0).is_err()
        );
        assert!(open_payload(server.remote.packet.as_ref(), None, 1, &mut [0u8; 20], 9).is_err());
        assert!(open_payload(server.remote.packet.as_ref(), None, 1, &mut [0u8; 5], 9).is_err());
    }

    #[test]
    fn inconsistent_layout_is_rejected() {
        let (client, _) = pair();
        let (p, hl, po) = short_packet(1, 2, &[0u8; 20]);
        for (hl, po, pl) in [
            (hl, po, 1),
            (hl, po, 5),
            (hl, po, 0),
            (hl + 1, po, 2),
            (2, 0, 2),
        ] {
            let mut t = p.clone();
            assert!(seal_packet(&client.local, None, 1, &mut t, hl, po, pl).is_err());
        }
        let mut t = p.clone();
        assert!(seal_packet(&client.local, None, 1, &mut t, 100, 98, 2).is_err());
    }

    proptest::proptest! {
        #[test]
        fn unprotect_never_panics(mut data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..80),
                                  pn_offset in 0usize..40, header_len in 0usize..60, pn in 0u64..1 << 62) {
            let (_, server) = pair();
            let _ = remove_header_protection(server.remote.header.as_ref(), &mut data, pn_offset);
            let _ = open_payload(server.remote.packet.as_ref(), Some(1), pn, &mut data, header_len);
        }
    }
}
