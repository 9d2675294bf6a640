//! Initial packets around fuzzed frame bytes. RFC 9001 §5.2 derives the Initial keys from the
//! client's first Destination Connection ID, which anyone on the path sees, so these packets
//! are what an off-path attacker can make a peer decrypt and parse: the harnesses seal the
//! fuzzer's bytes so that they reach frame processing instead of failing authentication.

use bytes::Bytes;
use mpquic_proto::crypto::testing::{initial_keys, seal_initial};
use mpquic_proto::wire::header::PartialDecode;
use mpquic_proto::wire::stream_id::Side;
use mpquic_proto::wire::ConnectionId;

/// RFC 9000 §14.1: Initial datagrams are at least this large.
pub(crate) const MIN_INITIAL: usize = 1200;
/// Frame bytes that fit one sealed Initial: the Length field is a 2-byte varint (< 2^14) and
/// a datagram stays within a common path MTU.
pub(crate) const MAX_FRAMES: usize = 1400;

/// The Destination Connection ID of the harnesses' forged client Initials.
pub(crate) const CLIENT_DCID: [u8; 8] = [0x8a, 0x39, 0x5e, 0x1d, 0xc0, 0x44, 0x07, 0xf2];
/// The Source Connection ID of the harnesses' forged client Initials (the transport parameter
/// initial_source_connection_id of a seed ClientHello must name it, RFC 9000 §7.3).
pub(crate) const CLIENT_SCID: [u8; 8] = [0x51, 0x0c, 0x7e, 0x22, 0x93, 0xab, 0x6d, 0x10];
/// The Source Connection ID of the harnesses' forged server Initials.
pub(crate) const SERVER_SCID: [u8; 8] = [0x2f, 0x60, 0x18, 0xd4, 0x77, 0x05, 0xe9, 0x3b];

/// An Initial from `scid` to `dcid` carrying `frames` (at most [`MAX_FRAMES`] of them), padded
/// to [`MIN_INITIAL`] bytes and sealed with the Initial keys that `key_dcid` (the client's
/// original DCID) gives the sender `side`.
pub(crate) fn sealed_initial(
    side: Side,
    key_dcid: &[u8],
    dcid: &[u8],
    scid: &[u8],
    pn: u64,
    frames: &[u8],
) -> Option<Vec<u8>> {
    let cids = (ConnectionId::new(dcid).ok()?, ConnectionId::new(scid).ok()?);
    let frames = &frames[..frames.len().min(MAX_FRAMES)];
    let keys = initial_keys(key_dcid, side);
    seal_initial(&keys.local, cids, Bytes::new(), pn, frames, MIN_INITIAL).ok()
}

/// The plaintext frames of the first packet of `datagram`, an Initial that `sender` sealed with
/// the keys of `key_dcid`. For building seeds from real handshakes.
pub(crate) fn open_initial(sender: Side, key_dcid: &[u8], datagram: &[u8]) -> Option<Vec<u8>> {
    let (first, _) = PartialDecode::new(datagram.into(), 8).ok()?;
    // We open as the receiver, whose remote keys are the sender's local ones.
    let receiver = match sender {
        Side::Client => Side::Server,
        Side::Server => Side::Client,
    };
    let keys = initial_keys(key_dcid, receiver);
    mpquic_proto::crypto::testing::open_initial_packet(&keys.remote, &first)
        .map(|(_, frames)| frames)
}
