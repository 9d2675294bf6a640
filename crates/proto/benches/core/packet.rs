//! Packet build and parse: a full-size 1-RTT packet (short header, an ACK frame with four
//! ranges, a STREAM frame filling the rest of a 1350-byte datagram), first as wire encoding and
//! decoding alone, then with packet protection (AEAD and header protection, RFC 9001 §5.3–5.4)
//! as the connection applies it. The keys are Initial keys (RFC 9001 §5.2): AES-128-GCM, the
//! same AEAD as 1-RTT under TLS_AES_128_GCM_SHA256, which our rustls configurations prefer.

use bytes::{Bytes, BytesMut};
use criterion::{black_box, Criterion, Throughput};
use mpquic_proto::crypto::testing::{
    initial_keys, open_payload, remove_header_protection, seal_packet, KeyPair, Side,
};
use mpquic_proto::wire::frame::AckFrame;
use mpquic_proto::wire::{
    decode_packet_number, read_truncated_pn, ConnectionId, Frame, Header, PartialDecode,
    StreamFrame, StreamId,
};

/// UDP payload of the packet (the default `max_datagram_size`).
const DATAGRAM: usize = 1350;
/// AEAD tag (RFC 9001 §5.3, AES-GCM).
const TAG: usize = 16;
const CID: [u8; 8] = [0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08];
/// A packet number well into a connection (3-byte encoding against the largest acked).
const PN: u64 = 1_000_123;
const LARGEST_ACKED: u64 = 990_000;

fn ack_frame() -> AckFrame {
    AckFrame {
        path_id: None,
        largest: 500_400,
        ack_delay: 40,
        ranges: vec![
            500_350..=500_400,
            500_200..=500_348,
            500_100..=500_190,
            500_000..=500_098,
        ],
        ecn: None,
    }
}

/// Appends the header and plaintext payload of the packet to `out` (cleared first); returns
/// (header length, packet number offset, packet number length).
fn build(out: &mut Vec<u8>, ack: &AckFrame, data: &Bytes) -> (usize, usize, usize) {
    out.clear();
    let header = Header::Short {
        spin: false,
        key_phase: false,
        dcid: ConnectionId::new(&CID).expect("cid"),
    };
    let enc = header.encode(PN, Some(LARGEST_ACKED), out);
    Frame::Ack(ack.clone()).encode(out);
    let room = DATAGRAM - out.len() - TAG;
    let id = StreamId(4);
    let offset = 7_000_000;
    // The last frame of the packet omits its Length (RFC 9000 §19.8).
    let header_len = mpquic_proto::wire::stream_frame_header_len(id, offset, room, false);
    let frame = StreamFrame {
        id,
        offset,
        fin: false,
        data: data.slice(..room - header_len),
    };
    frame.encode_with_len(out, false);
    (enc.header_len, enc.pn_offset, enc.pn_len)
}

/// Parses a decrypted payload: counts the stream bytes (so nothing is optimized away).
fn parse_frames(payload: Bytes) -> usize {
    let mut stream_bytes = 0;
    for frame in Frame::iter(payload) {
        match frame.expect("frame") {
            Frame::Stream(s) => stream_bytes += s.data.len(),
            Frame::Ack(a) => stream_bytes += a.ranges.len(),
            _ => {}
        }
    }
    stream_bytes
}

/// Receive side: header parse, header protection removal, packet number decoding, AEAD open,
/// frame parse.
fn open_and_parse(keys: &KeyPair, datagram: BytesMut) -> usize {
    let (mut partial, _) = PartialDecode::new(datagram, CID.len()).expect("header");
    let pn_offset = partial.pn_offset();
    let (_, pn_len) =
        remove_header_protection(keys.remote.header.as_ref(), partial.packet_mut(), pn_offset)
            .expect("header protection");
    let mut packet = partial.into_packet();
    let truncated = read_truncated_pn(&packet[pn_offset..], pn_len);
    let pn = decode_packet_number(truncated, pn_len, Some(PN - 1));
    let header_len = pn_offset + pn_len;
    let plain = open_payload(
        keys.remote.packet.as_ref(),
        None,
        pn,
        &mut packet,
        header_len,
    )
    .expect("open");
    parse_frames(packet.freeze().slice(plain))
}

pub fn bench(c: &mut Criterion) {
    let sender = initial_keys(&CID, Side::Client);
    let receiver = initial_keys(&CID, Side::Server);
    let ack = ack_frame();
    let data = Bytes::from(vec![0x5a; DATAGRAM]);
    let mut buf = Vec::with_capacity(DATAGRAM);

    // The plaintext and the protected packet, built once for the parse benchmarks.
    let (header_len, pn_offset, pn_len) = build(&mut buf, &ack, &data);
    let plain = buf.clone();
    seal_packet(
        &sender.local,
        None,
        PN,
        &mut buf,
        header_len,
        pn_offset,
        pn_len,
    )
    .expect("seal");
    assert_eq!(buf.len(), DATAGRAM);
    let sealed = buf.clone();
    let stream_bytes = open_and_parse(&receiver, BytesMut::from(&sealed[..]));
    assert!(stream_bytes > 1200, "{stream_bytes} stream bytes");

    let mut group = c.benchmark_group("packet_1350B");
    group.throughput(Throughput::Bytes(DATAGRAM as u64));
    group.bench_function("wire_build", |b| {
        b.iter(|| black_box(build(&mut buf, &ack, &data)))
    });
    group.bench_function("wire_parse", |b| {
        b.iter(|| {
            let (partial, _) =
                PartialDecode::new(BytesMut::from(&plain[..]), CID.len()).expect("header");
            let payload = partial.into_packet().freeze().slice(header_len..);
            black_box(parse_frames(payload))
        })
    });
    group.bench_function("build_and_seal", |b| {
        b.iter(|| {
            let (hl, po, pl) = build(&mut buf, &ack, &data);
            seal_packet(&sender.local, None, PN, &mut buf, hl, po, pl).expect("seal");
            black_box(buf.len())
        })
    });
    group.bench_function("open_and_parse", |b| {
        b.iter(|| black_box(open_and_parse(&receiver, BytesMut::from(&sealed[..]))))
    });
    group.finish();
}
