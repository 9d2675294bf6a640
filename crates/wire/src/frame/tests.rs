//! Frame codec tests: property round trips, truncation, no-panic and
//! specific error codes.

use super::*;
use crate::error::TransportErrorCode as Code;
use crate::range_set::RangeSet;
use crate::varint::VarInt;
use proptest::prelude::*;

fn varint() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..64,
        0u64..16384,
        0u64..(1 << 30),
        0u64..=VarInt::MAX_U64
    ]
}

fn path_id() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..4, 0u64..=MAX_PATH_ID_VALUE]
}

fn bytes(max: usize) -> impl Strategy<Value = Bytes> {
    proptest::collection::vec(any::<u8>(), 0..max).prop_map(Bytes::from)
}

fn stream_id() -> impl Strategy<Value = StreamId> {
    varint().prop_map(StreamId)
}

fn ack() -> impl Strategy<Value = AckFrame> {
    (
        proptest::option::of(path_id()),
        0u64..(1 << 40),
        proptest::collection::vec(0u64..300, 1..40),
        varint(),
        proptest::option::of((varint(), varint(), varint())),
    )
        .prop_map(|(path_id, base, pns, delay, ecn)| {
            let mut set = RangeSet::new();
            for pn in pns {
                set.insert_one(base + pn);
            }
            let ecn = ecn.map(|(ect0, ect1, ce)| EcnCounts { ect0, ect1, ce });
            AckFrame::from_range_set(path_id, &set, delay, ecn, usize::MAX).unwrap()
        })
}

fn ncid() -> impl Strategy<Value = NewConnectionId> {
    (
        proptest::option::of(path_id()),
        varint(),
        any::<u64>(),
        proptest::collection::vec(any::<u8>(), 1..=20),
        any::<[u8; 16]>(),
    )
        .prop_map(|(path_id, sequence, rpt, cid, tok)| NewConnectionId {
            path_id,
            sequence,
            retire_prior_to: rpt % (sequence + 1),
            cid: ConnectionId::new(&cid).unwrap(),
            reset_token: ResetToken(tok),
        })
}

fn dir() -> impl Strategy<Value = Dir> {
    prop_oneof![Just(Dir::Bi), Just(Dir::Uni)]
}

fn rfc9000_frame() -> BoxedStrategy<Frame> {
    let data_off = 0u64..=VarInt::MAX_U64 - 64;
    prop_oneof![
        (1usize..100).prop_map(Frame::Padding),
        Just(Frame::Ping),
        ack().prop_map(Frame::Ack),
        (stream_id(), varint(), varint()).prop_map(|(id, error_code, final_size)| {
            Frame::ResetStream {
                id,
                error_code,
                final_size,
            }
        }),
        (stream_id(), varint()).prop_map(|(id, error_code)| Frame::StopSending { id, error_code }),
        (data_off.clone(), bytes(64)).prop_map(|(offset, data)| Frame::Crypto { offset, data }),
        proptest::collection::vec(any::<u8>(), 1..64)
            .prop_map(|t| Frame::NewToken { token: t.into() }),
        (
            stream_id(),
            prop_oneof![Just(0u64), data_off],
            any::<bool>(),
            bytes(64)
        )
            .prop_map(|(id, offset, fin, data)| Frame::Stream(StreamFrame {
                id,
                offset,
                fin,
                data
            })),
        varint().prop_map(Frame::MaxData),
        (stream_id(), varint()).prop_map(|(id, max)| Frame::MaxStreamData { id, max }),
    ]
    .boxed()
}

fn rfc9000_frame2() -> BoxedStrategy<Frame> {
    prop_oneof![
        (dir(), 0u64..=MAX_STREAM_COUNT).prop_map(|(dir, count)| Frame::MaxStreams { dir, count }),
        varint().prop_map(|limit| Frame::DataBlocked { limit }),
        (stream_id(), varint()).prop_map(|(id, limit)| Frame::StreamDataBlocked { id, limit }),
        (dir(), 0u64..=MAX_STREAM_COUNT)
            .prop_map(|(dir, limit)| Frame::StreamsBlocked { dir, limit }),
        ncid().prop_map(Frame::NewConnectionId),
        (proptest::option::of(path_id()), varint())
            .prop_map(|(path_id, sequence)| Frame::RetireConnectionId { path_id, sequence }),
        any::<[u8; 8]>().prop_map(Frame::PathChallenge),
        any::<[u8; 8]>().prop_map(Frame::PathResponse),
        (varint(), proptest::option::of(varint()), bytes(40)).prop_map(
            |(error_code, frame_type, reason)| Frame::ConnectionClose(ConnectionClose {
                error_code,
                frame_type,
                reason
            })
        ),
        Just(Frame::HandshakeDone),
    ]
    .boxed()
}

fn extension_frame() -> BoxedStrategy<Frame> {
    let status = prop_oneof![Just(PathStatus::Available), Just(PathStatus::Backup)];
    prop_oneof![
        (path_id(), varint()).prop_map(|(path_id, error_code)| Frame::PathAbandon {
            path_id,
            error_code
        }),
        (path_id(), varint(), status).prop_map(|(path_id, sequence, status)| {
            Frame::PathStatus {
                path_id,
                sequence,
                status,
            }
        }),
        path_id().prop_map(Frame::MaxPathId),
        path_id().prop_map(Frame::PathsBlocked),
        (path_id(), varint()).prop_map(|(path_id, next_sequence)| Frame::PathCidsBlocked {
            path_id,
            next_sequence
        }),
        (varint(), varint(), 0u64..(1 << 14) * 1000, varint()).prop_map(|(a, b, c, d)| {
            Frame::AckFrequency {
                sequence: a,
                ack_eliciting_threshold: b,
                request_max_ack_delay_us: c,
                reordering_threshold: d,
            }
        }),
        Just(Frame::ImmediateAck),
        bytes(64).prop_map(|data| Frame::Datagram(DatagramFrame { data })),
        proptest::array::uniform6(varint()).prop_map(|v| Frame::QoeControlSignal(QoeSignal {
            sequence: v[0],
            cached_bytes: v[1],
            cached_frames: v[2],
            play_time_left_ms: v[3],
            bitrate_kbps: v[4],
            frame_rate: v[5],
        })),
    ]
    .boxed()
}

fn frame() -> impl Strategy<Value = Frame> {
    prop_oneof![rfc9000_frame(), rfc9000_frame2(), extension_frame()]
}

fn decode_all(buf: &[u8]) -> Result<Vec<Frame>, FrameError> {
    Frame::iter(Bytes::copy_from_slice(buf)).collect()
}

fn decode_one(buf: &[u8]) -> Result<Frame, FrameError> {
    let mut frames = decode_all(buf)?;
    assert_eq!(frames.len(), 1, "expected exactly one frame in {buf:02x?}");
    Ok(frames.remove(0))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    #[test]
    fn round_trip(f in frame()) {
        let mut buf = Vec::new();
        f.encode(&mut buf);
        prop_assert_eq!(buf.len(), f.encoded_len());
        let t = f.frame_type();
        let decoded = decode_one(&buf).unwrap();
        prop_assert_eq!(&decoded, &f);
        prop_assert_eq!(decoded.frame_type(), t);
        if let Frame::Ack(a) = &f {
            prop_assert_eq!(a.encoded_len(), buf.len());
            prop_assert!(a.iter_acked().next().unwrap().contains(&a.largest));
        }
    }

    #[test]
    fn round_trip_sequence(frames in proptest::collection::vec(frame(), 0..8)) {
        let frames: Vec<Frame> =
            frames.into_iter().filter(|f| !matches!(f, Frame::Padding(_))).collect();
        let mut buf = Vec::new();
        for f in &frames {
            f.encode(&mut buf);
        }
        prop_assert_eq!(decode_all(&buf).unwrap(), frames);
    }

    #[test]
    fn truncated_encodings_error(f in frame()) {
        prop_assume!(!matches!(f, Frame::Padding(_)));
        let mut buf = Vec::new();
        f.encode(&mut buf);
        for cut in 1..buf.len() {
            let res = decode_all(&buf[..cut]);
            prop_assert!(res.is_err(), "prefix {} of {:?} decoded: {:?}", cut, f, res);
        }
    }

    #[test]
    fn stream_without_len_round_trip(
        id in stream_id(), offset in 0u64..1 << 40, fin in any::<bool>(), data in bytes(64)
    ) {
        let sf = StreamFrame { id, offset, fin, data };
        let mut buf = Vec::new();
        sf.encode_with_len(&mut buf, false);
        prop_assert_eq!(buf.len(), sf.encoded_len(false));
        prop_assert_eq!(
            buf.len(),
            stream_frame_header_len(id, offset, sf.data.len(), false) + sf.data.len()
        );
        prop_assert_eq!(
            sf.encoded_len(true),
            stream_frame_header_len(id, offset, sf.data.len(), true) + sf.data.len()
        );
        prop_assert_eq!(decode_one(&buf).unwrap(), Frame::Stream(sf));
    }

    #[test]
    fn datagram_both_encodings_round_trip(data in bytes(300), include_len in any::<bool>()) {
        let df = DatagramFrame { data };
        let mut buf = Vec::new();
        df.encode_with_len(&mut buf, include_len);
        prop_assert_eq!(buf.len(), df.encoded_len(include_len));
        prop_assert_eq!(
            buf.len(),
            datagram_frame_header_len(df.data.len(), include_len) + df.data.len()
        );
        prop_assert_eq!(buf[0] as u64, DatagramFrame::frame_type(include_len));
        prop_assert_eq!(decode_one(&buf).unwrap(), Frame::Datagram(df.clone()));
        // With a Length field another frame may follow; without one it must be last.
        buf.push(0x01);
        let frames = decode_all(&buf).unwrap();
        if include_len {
            prop_assert_eq!(frames, vec![Frame::Datagram(df), Frame::Ping]);
        } else {
            let mut with_ping = df.data.to_vec();
            with_ping.push(0x01);
            prop_assert_eq!(
                frames,
                vec![Frame::Datagram(DatagramFrame { data: with_ping.into() })]
            );
        }
    }

    #[test]
    fn max_datagram_payload_is_the_largest_that_fits(room in 0usize..70_000) {
        match max_datagram_payload(room) {
            None => prop_assert!(room < 2),
            Some(n) => {
                prop_assert!(datagram_frame_header_len(n, true) + n <= room);
                let more = n + 1;
                prop_assert!(datagram_frame_header_len(more, true) + more > room);
            }
        }
    }

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..512)) {
        let mut n_err = 0;
        for res in Frame::iter(Bytes::from(data.clone())) {
            if let Ok(f) = res {
                let mut out = Vec::new();
                f.encode(&mut out);
                prop_assert_eq!(out.len(), f.encoded_len());
            } else {
                n_err += 1;
            }
        }
        prop_assert!(n_err <= 1);
        crate::fuzz_decode_all(&data);
    }

    #[test]
    fn random_frame_like_bytes_never_panic(
        t in prop_oneof![
            0u64..0x20, Just(0xaf), 0x3e75u64..0x3e7d, Just(0x3e), Just(0x3f), 0x30u64..0x32
        ],
        body in proptest::collection::vec(any::<u8>(), 0..64),
    ) {
        let mut buf = Vec::new();
        crate::varint::write_varint(&mut buf, t);
        buf.extend_from_slice(&body);
        for res in Frame::iter(Bytes::from(buf)) {
            if let Err(e) = res {
                prop_assert!(e.code == Code::FRAME_ENCODING_ERROR || e.code == Code::PROTOCOL_VIOLATION);
            }
        }
    }
}

fn err_of(buf: &[u8]) -> FrameError {
    decode_all(buf).unwrap_err()
}

#[test]
fn unknown_frame_type() {
    let e = err_of(&[0x21]);
    assert_eq!((e.code, e.frame_type), (Code::FRAME_ENCODING_ERROR, 0x21));
    let e = err_of(&[0x01, 0x80, 0x3f, 0x51, 0x54]);
    assert_eq!(
        (e.code, e.frame_type),
        (Code::FRAME_ENCODING_ERROR, 0x3f5154)
    );
}

#[test]
fn non_minimal_frame_type_is_protocol_violation() {
    let e = err_of(&[0x40, 0x01]);
    assert_eq!((e.code, e.frame_type), (Code::PROTOCOL_VIOLATION, 0x01));
    let e = err_of(&[0x40, 0x00]);
    assert_eq!(e.code, Code::PROTOCOL_VIOLATION);
}

#[test]
fn new_connection_id_length() {
    let mut buf = vec![0x18, 0x01, 0x00, 0x00];
    buf.extend_from_slice(&[0u8; 16]);
    let e = err_of(&buf);
    assert_eq!((e.code, e.frame_type), (Code::FRAME_ENCODING_ERROR, 0x18));
    let mut buf = vec![0x18, 0x01, 0x00, 21];
    buf.extend_from_slice(&[0u8; 21 + 16]);
    assert_eq!(err_of(&buf).code, Code::FRAME_ENCODING_ERROR);
    // retire_prior_to > sequence (RFC 9000 §19.15).
    let mut buf = vec![0x18, 0x01, 0x02, 4, 1, 2, 3, 4];
    buf.extend_from_slice(&[0u8; 16]);
    assert_eq!(err_of(&buf).code, Code::FRAME_ENCODING_ERROR);
    // Valid.
    let mut buf = vec![0x18, 0x02, 0x01, 4, 1, 2, 3, 4];
    buf.extend_from_slice(&[7u8; 16]);
    assert!(decode_one(&buf).is_ok());
}

#[test]
fn max_streams_limit() {
    let mut buf = vec![0x12];
    crate::varint::write_varint(&mut buf, (1 << 60) + 1);
    let e = err_of(&buf);
    assert_eq!((e.code, e.frame_type), (Code::FRAME_ENCODING_ERROR, 0x12));
    let mut buf = vec![0x17];
    crate::varint::write_varint(&mut buf, 1 << 60);
    assert_eq!(
        decode_one(&buf).unwrap(),
        Frame::StreamsBlocked {
            dir: Dir::Uni,
            limit: 1 << 60
        }
    );
}

#[test]
fn ack_wire_format_and_underflow() {
    // Largest 10, ranges 8..=10 and 3..=5: gap = 8 - 5 - 2 = 1, len = 2.
    let a = AckFrame {
        path_id: None,
        largest: 10,
        ack_delay: 0,
        ranges: vec![8..=10, 3..=5],
        ecn: None,
    };
    let mut buf = Vec::new();
    a.encode(&mut buf);
    assert_eq!(buf, [0x02, 10, 0, 1, 2, 1, 2]);
    assert_eq!(decode_one(&buf).unwrap(), Frame::Ack(a));
    // First ACK range larger than Largest Acknowledged.
    let e = err_of(&[0x02, 5, 0, 0, 6]);
    assert_eq!((e.code, e.frame_type), (Code::FRAME_ENCODING_ERROR, 0x02));
    // Gap underflow: smallest 3, gap 2 => 3 - 2 - 2 < 0.
    assert_eq!(
        err_of(&[0x02, 5, 0, 1, 2, 2, 0]).code,
        Code::FRAME_ENCODING_ERROR
    );
    // Range length underflow: smallest 5, gap 0 => largest 3, len 4 => < 0.
    assert_eq!(
        err_of(&[0x03, 5, 0, 1, 0, 0, 4, 0, 0, 0]).code,
        Code::FRAME_ENCODING_ERROR
    );
    // Huge range count with no data must fail fast, not allocate.
    let e = err_of(&[
        0x02, 5, 0, 0xbf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0,
    ]);
    assert_eq!(e.code, Code::FRAME_ENCODING_ERROR);
    // PATH_ACK with ECN.
    let p = AckFrame {
        path_id: Some(3),
        ecn: Some(EcnCounts {
            ect0: 1,
            ect1: 2,
            ce: 3,
        }),
        ..AckFrame {
            path_id: None,
            largest: 0,
            ack_delay: 9,
            ranges: vec![0..=0],
            ecn: None,
        }
    };
    let f = Frame::Ack(p);
    assert_eq!(f.frame_type(), ty::PATH_ACK_ECN);
    let mut buf = Vec::new();
    f.encode(&mut buf);
    assert_eq!(buf, [0x3f, 3, 0, 9, 0, 0, 1, 2, 3]);
}

#[test]
fn ack_from_range_set_limits() {
    let mut set = RangeSet::new();
    for pn in [1, 2, 3, 7, 9, 10] {
        set.insert_one(pn);
    }
    let a = AckFrame::from_range_set(None, &set, 0, None, 2).unwrap();
    assert_eq!(a.largest, 10);
    assert_eq!(a.ranges, vec![9..=10, 7..=7]);
    assert!(a.contains(7) && !a.contains(8));
    assert!(AckFrame::from_range_set(None, &RangeSet::new(), 0, None, 9).is_none());
}

#[test]
fn stream_and_crypto_limits() {
    let mut buf = vec![0x0e]; // OFF | LEN
    crate::varint::write_varint(&mut buf, 4);
    crate::varint::write_varint(&mut buf, VarInt::MAX_U64);
    buf.extend_from_slice(&[0x01, 0xaa]);
    let e = err_of(&buf);
    assert_eq!((e.code, e.frame_type), (Code::FRAME_ENCODING_ERROR, 0x0e));
    let mut buf = vec![0x06];
    crate::varint::write_varint(&mut buf, VarInt::MAX_U64);
    buf.extend_from_slice(&[0x01, 0xaa]);
    assert_eq!(err_of(&buf).code, Code::FRAME_ENCODING_ERROR);
    // Offset exactly at the limit with no data is fine.
    let mut buf = vec![0x0c];
    crate::varint::write_varint(&mut buf, 4);
    crate::varint::write_varint(&mut buf, VarInt::MAX_U64);
    assert!(decode_one(&buf).is_ok());
    assert_eq!(crypto_frame_header_len(0, 10), 3);
}

#[test]
fn other_value_checks() {
    assert_eq!(err_of(&[0x07, 0x00]).code, Code::FRAME_ENCODING_ERROR); // empty NEW_TOKEN
    let mut buf = vec![0x80, 0x00, 0x3e, 0x7a];
    crate::varint::write_varint(&mut buf, 1 << 32);
    let e = err_of(&buf);
    assert_eq!(
        (e.code, e.frame_type),
        (Code::PROTOCOL_VIOLATION, ty::MAX_PATH_ID)
    );
    let mut buf = vec![0x40, 0xaf, 0, 0];
    crate::varint::write_varint(&mut buf, (1 << 14) * 1000);
    buf.push(0);
    assert_eq!(err_of(&buf).code, Code::PROTOCOL_VIOLATION);
}

#[test]
fn padding_is_coalesced_and_iter_stops_after_error() {
    let frames = decode_all(&[0, 0, 0, 1, 0]).unwrap();
    assert_eq!(
        frames,
        vec![Frame::Padding(3), Frame::Ping, Frame::Padding(1)]
    );
    let mut it = Frame::iter(Bytes::from_static(&[0x01, 0x21, 0x01]));
    assert_eq!(it.next(), Some(Ok(Frame::Ping)));
    assert!(matches!(it.next(), Some(Err(_))));
    assert_eq!(it.next(), None);
}

#[test]
fn zero_copy_slices() {
    let f = Frame::Stream(StreamFrame {
        id: StreamId(4),
        offset: 0,
        fin: true,
        data: Bytes::from_static(b"hello"),
    });
    let mut buf = Vec::new();
    f.encode(&mut buf);
    let payload = Bytes::from(buf);
    let Some(Ok(Frame::Stream(s))) = Frame::iter(payload.clone()).next() else {
        panic!("expected stream frame");
    };
    let range = payload.as_ptr_range();
    assert!(range.contains(&s.data.as_ptr()));
}

#[test]
fn classification() {
    assert!(Frame::Ping.is_ack_eliciting());
    assert!(!Frame::Padding(1).is_ack_eliciting());
    let close = Frame::ConnectionClose(ConnectionClose {
        error_code: 0,
        frame_type: None,
        reason: Bytes::new(),
    });
    assert!(!close.is_ack_eliciting());
    assert!(Frame::PathChallenge([0; 8]).is_probing());
    assert!(Frame::Padding(1).is_probing());
    assert!(!Frame::Ping.is_probing());
    let n = NewConnectionId {
        path_id: None,
        sequence: 1,
        retire_prior_to: 0,
        cid: ConnectionId::new(&[1]).unwrap(),
        reset_token: ResetToken([0; 16]),
    };
    assert!(Frame::NewConnectionId(n.clone()).is_probing());
    let pn = Frame::NewConnectionId(NewConnectionId {
        path_id: Some(1),
        ..n
    });
    assert!(!pn.is_probing());
    assert!(pn.is_multipath());
}

#[test]
fn packet_type_legality() {
    use PacketKind::*;
    for k in [Initial, Handshake] {
        assert!(allowed_in(ty::CRYPTO, k));
        assert!(allowed_in(ty::ACK, k));
        assert!(allowed_in(ty::CONNECTION_CLOSE, k));
        assert!(!allowed_in(ty::APPLICATION_CLOSE, k));
        assert!(!allowed_in(0x08, k));
        assert!(!allowed_in(ty::PATH_ACK, k));
    }
    assert!(allowed_in(0x0f, ZeroRtt));
    assert!(allowed_in(ty::APPLICATION_CLOSE, ZeroRtt));
    for t in [
        ty::ACK,
        ty::CRYPTO,
        ty::NEW_TOKEN,
        ty::PATH_RESPONSE,
        ty::HANDSHAKE_DONE,
    ] {
        assert!(!allowed_in(t, ZeroRtt), "{t:#x}");
    }
    assert!(!allowed_in(ty::PATH_ABANDON, ZeroRtt));
    assert!(!allowed_in(ty::ACK_FREQUENCY, ZeroRtt));
    for t in (0..=0x1f).chain([0xaf, 0x3e, 0x3f, 0x3e75, 0x3e7c, ty::QOE_CONTROL_SIGNAL]) {
        assert!(allowed_in(t, Short), "{t:#x}");
    }
    assert!(!allowed_in(0x20, Short));
    assert!(!allowed_in(ty::PING, Retry));
    assert_eq!(frame_type_name(0x3e78), "PATH_NEW_CONNECTION_ID");
    // RFC 9221 §4: DATAGRAM only under 0-RTT or 1-RTT keys.
    for t in [ty::DATAGRAM, ty::DATAGRAM_LEN] {
        assert!(allowed_in(t, Short) && allowed_in(t, ZeroRtt), "{t:#x}");
        assert!(
            !allowed_in(t, Initial) && !allowed_in(t, Handshake),
            "{t:#x}"
        );
        assert_eq!(frame_type_name(t), "DATAGRAM");
    }
    assert!(!allowed_in(0x32, Short));
}

#[test]
fn datagram_wire_format() {
    let f = Frame::Datagram(DatagramFrame {
        data: Bytes::from_static(b"abc"),
    });
    assert_eq!(f.frame_type(), ty::DATAGRAM_LEN);
    assert!(f.is_ack_eliciting() && !f.is_probing() && !f.is_multipath());
    let mut buf = Vec::new();
    f.encode(&mut buf);
    assert_eq!(buf, [0x31, 3, b'a', b'b', b'c']);
    assert_eq!(
        decode_one(&[0x30, b'x', b'y']).unwrap(),
        Frame::Datagram(DatagramFrame {
            data: Bytes::from_static(b"xy"),
        })
    );
    // An empty datagram is valid in both forms.
    assert_eq!(
        decode_one(&[0x30]).unwrap(),
        Frame::Datagram(DatagramFrame { data: Bytes::new() })
    );
    assert_eq!(
        decode_one(&[0x31, 0]).unwrap(),
        Frame::Datagram(DatagramFrame { data: Bytes::new() })
    );
    // A Length beyond the packet is a FRAME_ENCODING_ERROR.
    let e = err_of(&[0x31, 5, 1, 2]);
    assert_eq!((e.code, e.frame_type), (Code::FRAME_ENCODING_ERROR, 0x31));
    assert_eq!(max_datagram_payload(65535), Some(65530));
    assert_eq!(max_datagram_payload(64), Some(62));
    assert_eq!(max_datagram_payload(65), Some(63));
    assert_eq!(max_datagram_payload(66), Some(63));
    assert_eq!(max_datagram_payload(1), None);
}
