//! Whole Initial packets outside a connection: the endpoint's stateless answers (an Initial
//! CONNECTION_CLOSE to a refused client), checking that a client's first packet authenticates
//! before any state is made, and the tests and fuzz harnesses that forge or read Initials.
//!
//! Initial keys come from the client's first Destination Connection ID (RFC 9001 §5.2), so these
//! helpers need nothing but that CID. Connections build their Initials in `connection::send`,
//! packet by packet, with coalescing and pacing; this is the one place that seals a lone
//! Initial.

use bytes::Bytes;
use mpquic_wire::header::{decode_packet_number, read_truncated_pn, Header, PartialDecode};
use mpquic_wire::header::{PacketKind, QUIC_V1};
use mpquic_wire::ConnectionId;

use super::{open_payload, remove_header_protection, seal_packet, CryptoError, DirectionalKeys};

/// AEAD tag length of the Initial cipher, AES-128-GCM (RFC 9001 §5.3).
pub(crate) const INITIAL_TAG_LEN: usize = 16;

/// RFC 9001 §5.4.2: the header-protection sample is 16 bytes taken 4 bytes after the start of
/// the packet number, so a packet needs at least this many bytes after its packet number
/// offset (the tag included).
const SAMPLE_REACH: usize = 4 + 16;

/// An Initial packet (QUIC v1) from `scid` to `dcid`, packet number `pn`, carrying `frames`
/// (already encoded) and `token`, padded with PADDING frames (zero bytes, RFC 9000 §19.1) to
/// at least `min_len` bytes (tag included) and to a sampleable size, then sealed with `keys`.
///
/// Pass `min_len` = 1,200 for an ack-eliciting client Initial (RFC 9000 §14.1), 0 otherwise.
/// Fails only if `frames` is too long for the 2-byte Length field this uses (16,383 bytes).
pub fn seal_initial(
    keys: &DirectionalKeys,
    (dcid, scid): (ConnectionId, ConnectionId),
    token: Bytes,
    pn: u64,
    frames: &[u8],
    min_len: usize,
) -> Result<Vec<u8>, CryptoError> {
    let header = Header::Initial {
        version: QUIC_V1,
        dcid,
        scid,
        token,
    };
    let mut packet = Vec::with_capacity(min_len.max(128) + frames.len());
    let enc = header.encode(pn, None, &mut packet);
    packet.extend_from_slice(frames);
    let padded = (enc.pn_offset + SAMPLE_REACH).max(min_len) - INITIAL_TAG_LEN;
    if packet.len() < padded {
        packet.resize(padded, 0);
    }
    let length = packet.len() - enc.pn_offset + INITIAL_TAG_LEN;
    if length >= 1 << 14 {
        return Err(CryptoError::InvalidArgument(
            "Initial payload exceeds a 2-byte Length",
        ));
    }
    enc.set_length(&mut packet, length);
    seal_packet(
        keys,
        None,
        pn,
        &mut packet,
        enc.header_len,
        enc.pn_offset,
        enc.pn_len,
    )?;
    Ok(packet)
}

/// The packet number and plaintext frames of `first`, the first packet of a datagram, if it is
/// an Initial that opens under `keys` (the receiver's remote keys). Works on a copy, so `first`
/// stays protected for whoever processes it next. Nothing has been received in the space yet,
/// so the packet number expands against no largest (RFC 9000 §17.1).
pub fn open_initial(keys: &DirectionalKeys, first: &PartialDecode) -> Option<(u64, Vec<u8>)> {
    if first.kind() != PacketKind::Initial {
        return None;
    }
    let mut packet = first.packet().to_vec();
    let pn_offset = first.pn_offset();
    let (_, pn_len) =
        remove_header_protection(keys.header.as_ref(), &mut packet, pn_offset).ok()?;
    let truncated = read_truncated_pn(packet.get(pn_offset..)?, pn_len);
    let pn = decode_packet_number(truncated, pn_len, None);
    let plain = open_payload(
        keys.packet.as_ref(),
        None,
        pn,
        &mut packet,
        pn_offset + pn_len,
    )
    .ok()?;
    packet.truncate(plain.end);
    packet.drain(..plain.start);
    Some((pn, packet))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::initial_keys;
    use mpquic_wire::stream_id::Side;

    const DCID: [u8; 8] = [0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08];

    fn cids() -> (ConnectionId, ConnectionId) {
        let dcid = ConnectionId::new(&DCID).expect("cid");
        let scid = ConnectionId::new(&[7; 5]).expect("cid");
        (dcid, scid)
    }

    fn open_as_server(datagram: Vec<u8>) -> Option<(u64, Vec<u8>)> {
        let (first, _) = PartialDecode::new(datagram.as_slice().into(), 8).ok()?;
        open_initial(&initial_keys(&DCID, Side::Server).remote, &first)
    }

    #[test]
    fn sealed_initial_opens_with_its_frames_and_padding() {
        let keys = initial_keys(&DCID, Side::Client);
        let frames = [0x01, 0x06, 0x00, 0x02, b'h', b'i'];
        let packet =
            seal_initial(&keys.local, cids(), Bytes::new(), 3, &frames, 1200).expect("seal");
        assert_eq!(packet.len(), 1200);
        let (pn, plain) = open_as_server(packet).expect("opens");
        assert_eq!(pn, 3);
        assert_eq!(&plain[..frames.len()], &frames);
        assert!(plain[frames.len()..].iter().all(|&b| b == 0));
    }

    #[test]
    fn short_initial_is_padded_to_a_sampleable_size() {
        let keys = initial_keys(&DCID, Side::Client);
        let packet = seal_initial(&keys.local, cids(), Bytes::new(), 0, &[0x01], 0).expect("seal");
        assert!(packet.len() < 1200);
        assert_eq!(open_as_server(packet).expect("opens").1[0], 0x01);
    }

    #[test]
    fn tampered_or_foreign_initial_does_not_open() {
        let keys = initial_keys(&DCID, Side::Client);
        let mut packet =
            seal_initial(&keys.local, cids(), Bytes::new(), 0, &[0x01], 1200).expect("seal");
        let last = packet.len() - 1;
        packet[last] ^= 1;
        assert!(open_as_server(packet).is_none());
        let other = initial_keys(&[1; 8], Side::Client);
        let packet =
            seal_initial(&other.local, cids(), Bytes::new(), 0, &[0x01], 1200).expect("seal");
        assert!(open_as_server(packet).is_none());
    }

    #[test]
    fn oversized_payload_is_refused() {
        let keys = initial_keys(&DCID, Side::Client);
        let frames = vec![0u8; 1 << 14];
        assert!(seal_initial(&keys.local, cids(), Bytes::new(), 0, &frames, 0).is_err());
    }
}
