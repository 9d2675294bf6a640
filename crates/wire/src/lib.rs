//! `mpquic-wire`: every wire encoding of the mpquic stack.
//!
//! This crate is pure (no I/O, no clocks, no randomness) and **panic-free on any
//! input**: every decoder returns an error on malformed data, and values taken
//! from the wire are only combined with checked or saturating arithmetic.
//!
//! Modules:
//! - [`varint`]: variable-length integers (RFC 9000 §16).
//! - [`codec`]: a bounds-checked decoding cursor ([`codec::Reader`]).
//! - [`error`]: transport error codes (RFC 9000 §20.1, RFC 10069 §"Error Codes").
//! - [`cid`]: connection IDs and stateless reset tokens.
//! - [`stream_id`]: stream identifiers (RFC 9000 §2.1).
//! - [`range_set`]: a set of `u64` stored as disjoint ranges (ACK bookkeeping).
//! - [`frame`]: every frame of RFC 9000 §19, RFC 10069 (multipath), ack-frequency
//!   and the experimental XLINK QoE frame.
//! - [`header`]: packet headers and packet-number coding (RFC 9000 §17, App. A).
//! - [`transport_params`]: transport parameters (RFC 9000 §18).

#![forbid(unsafe_code)]
#![warn(unreachable_pub, missing_docs)]

pub mod cid;
pub mod codec;
pub mod error;
pub mod frame;
pub mod header;
pub mod range_set;
pub mod stream_id;
pub mod transport_params;
pub mod units;
pub mod varint;

pub use cid::{ConnectionId, ResetToken, MAX_CID_LEN};
pub use codec::{DecodeError, Reader};
pub use error::{FrameError, TransportErrorCode};
pub use frame::{
    allowed_in, crypto_frame_header_len, stream_frame_header_len, AckFrame, ConnectionClose,
    EcnCounts, Frame, FrameIter, NewConnectionId, PathStatus, QoeSignal, StreamFrame,
};
pub use header::{
    decode_packet_number, decode_pn_len, pn_encode_len, pn_encode_len_overtaken, read_truncated_pn,
    Header, HeaderError, PacketKind, PartialDecode, PartialEncode, QUIC_V1,
};
pub use range_set::RangeSet;
pub use stream_id::{Dir, Side, StreamId};
pub use transport_params::{PreferredAddress, TransportParamError, TransportParameters};
pub use varint::{try_write_varint, varint_size, write_varint, VarInt, VarIntBoundsExceeded};

/// Runs every decoder of this crate over `data`, discarding the results.
///
/// This is the single entry point used by the cargo-fuzz targets: it must never
/// panic, loop forever or allocate unboundedly, whatever `data` contains.
pub fn fuzz_decode_all(data: &[u8]) {
    // Varints and the cursor.
    let mut r = Reader::new(data);
    while r.varint().is_ok() {}

    // Frames: the whole input as one packet payload.
    let payload = bytes::Bytes::copy_from_slice(data);
    for f in Frame::iter(payload).flatten() {
        // Re-encoding a decoded frame must also be panic-free.
        let mut out = Vec::with_capacity(f.encoded_len());
        f.encode(&mut out);
        let _ = (f.is_ack_eliciting(), f.is_probing(), f.frame_type());
    }

    // Headers, for a few local CID lengths, walking coalesced packets.
    for cid_len in [0usize, 8, 20] {
        let mut rest = Some(bytes::BytesMut::from(data));
        while let Some(buf) = rest.take() {
            match PartialDecode::new(buf, cid_len) {
                Ok((pd, next)) => {
                    let _ = pd.to_header();
                    rest = next;
                }
                Err(_) => break,
            }
        }
    }
    if let Some(&b) = data.first() {
        let n = decode_pn_len(b);
        let t = read_truncated_pn(data.get(1..).unwrap_or(&[]), n);
        let _ = decode_packet_number(t, n, data.get(5).map(|&x| u64::from(x) << 24));
    }

    // Transport parameters from either side.
    let _ = TransportParameters::decode(data, Side::Client);
    let _ = TransportParameters::decode(data, Side::Server);
}
