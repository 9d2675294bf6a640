//! Frame-to-qlog mapping: each frame kind becomes the draft's (or the multipath extension's)
//! `frame_type` with its fields.

use bytes::Bytes;
use mpquic_wire::cid::{ConnectionId, ResetToken};
use mpquic_wire::frame::{
    AckFrame, ConnectionClose, EcnCounts, Frame, NewConnectionId, PathStatus, QoeSignal,
    StreamFrame,
};
use mpquic_wire::stream_id::{Dir, StreamId};
use serde_json::{json, Value};

use super::*;

fn qlog(frame: &Frame) -> Value {
    serde_json::to_value(QlogFrame::from_frame(frame, 3)).unwrap()
}

fn ack(path_id: Option<u64>, ecn: Option<EcnCounts>) -> Frame {
    Frame::Ack(AckFrame {
        path_id,
        largest: 10,
        ack_delay: 125,
        ranges: vec![8..=10, 5..=5, 1..=3],
        ecn,
    })
}

#[test]
fn ack_has_ascending_ranges_and_delay_in_ms() {
    // 125 << 3 = 1000 µs = 1 ms (RFC 9000 §19.3 ack_delay_exponent scaling).
    assert_eq!(
        qlog(&ack(None, None)),
        json!({"frame_type": "ack", "ack_delay": 1.0, "acked_ranges": [[1, 3], [5], [8, 10]]})
    );
}

#[test]
fn path_ack_carries_path_id_and_ecn() {
    let ecn = EcnCounts {
        ect0: 4,
        ect1: 5,
        ce: 6,
    };
    let v = qlog(&ack(Some(2), Some(ecn)));
    assert_eq!(v["frame_type"], "path_ack");
    assert_eq!(v["path_id"], 2);
    assert_eq!(
        (v["ect0"].clone(), v["ect1"].clone(), v["ce"].clone()),
        (json!(4), json!(5), json!(6))
    );
}

#[test]
fn stream_and_crypto_log_lengths_not_data() {
    let stream = Frame::Stream(StreamFrame {
        id: StreamId(4),
        offset: 100,
        fin: true,
        data: Bytes::from_static(b"hello"),
    });
    assert_eq!(
        qlog(&stream),
        json!({"frame_type": "stream", "stream_id": 4, "offset": 100, "fin": true, "raw": {"length": 5}})
    );
    let crypto = Frame::Crypto {
        offset: 7,
        data: Bytes::from_static(b"abc"),
    };
    assert_eq!(
        qlog(&crypto),
        json!({"frame_type": "crypto", "offset": 7, "raw": {"length": 3}})
    );
    assert_eq!(
        qlog(&Frame::Padding(42)),
        json!({"frame_type": "padding", "raw": {"payload_length": 42}})
    );
}

fn new_cid(path_id: Option<u64>) -> Frame {
    Frame::NewConnectionId(NewConnectionId {
        path_id,
        sequence: 3,
        retire_prior_to: 1,
        cid: ConnectionId::new(&[0xab, 0xcd]).unwrap(),
        reset_token: ResetToken([0x11; 16]),
    })
}

#[test]
fn new_connection_id_and_its_multipath_variant() {
    let v = qlog(&new_cid(None));
    assert_eq!(v["frame_type"], "new_connection_id");
    assert_eq!(v["connection_id"], "abcd");
    assert_eq!(v["connection_id_length"], 2);
    assert_eq!(v["sequence_number"], 3);
    assert!(v.get("path_id").is_none());
    let v = qlog(&new_cid(Some(1)));
    assert_eq!(v["frame_type"], "path_new_connection_id");
    assert_eq!(v["path_id"], 1);
    let retire = Frame::RetireConnectionId {
        path_id: Some(2),
        sequence: 9,
    };
    assert_eq!(
        qlog(&retire),
        json!({"frame_type": "path_retire_connection_id", "path_id": 2, "sequence_number": 9})
    );
}

#[test]
fn multipath_path_management_frames() {
    let cases = [
        (
            Frame::PathAbandon {
                path_id: 1,
                error_code: 0x3e,
            },
            json!({"frame_type": "path_abandon", "path_id": 1, "error_code": 0x3e}),
        ),
        (
            Frame::PathStatus {
                path_id: 2,
                sequence: 5,
                status: PathStatus::Backup,
            },
            json!({"frame_type": "path_status_backup", "path_id": 2, "path_status_sequence_number": 5}),
        ),
        (
            Frame::PathStatus {
                path_id: 2,
                sequence: 6,
                status: PathStatus::Available,
            },
            json!({"frame_type": "path_status_available", "path_id": 2, "path_status_sequence_number": 6}),
        ),
        (
            Frame::MaxPathId(7),
            json!({"frame_type": "max_path_id", "maximum_path_id": 7}),
        ),
        (
            Frame::PathsBlocked(3),
            json!({"frame_type": "paths_blocked", "maximum_path_id": 3}),
        ),
        (
            Frame::PathCidsBlocked {
                path_id: 4,
                next_sequence: 2,
            },
            json!({"frame_type": "path_cids_blocked", "path_id": 4, "next_sequence_number": 2}),
        ),
    ];
    for (frame, expected) in cases {
        assert_eq!(qlog(&frame), expected, "{frame:?}");
    }
}

#[test]
fn connection_close_names_transport_errors() {
    let transport = Frame::ConnectionClose(ConnectionClose {
        error_code: 0x0a,
        frame_type: Some(0x08),
        reason: Bytes::from_static(b"bad"),
    });
    assert_eq!(
        qlog(&transport),
        json!({"frame_type": "connection_close", "error_space": "transport",
               "error": "protocol_violation", "reason": "bad", "trigger_frame_type": 8})
    );
    let crypto = Frame::ConnectionClose(ConnectionClose {
        error_code: 0x128,
        frame_type: Some(0),
        reason: Bytes::new(),
    });
    assert_eq!(qlog(&crypto)["error"], "crypto_error_0x128");
    let app = Frame::ConnectionClose(ConnectionClose {
        error_code: 77,
        frame_type: None,
        reason: Bytes::new(),
    });
    let v = qlog(&app);
    assert_eq!(v["error_space"], "application");
    assert_eq!(v["error"], "unknown");
    assert_eq!(v["error_code"], 77);
}

#[test]
fn flow_control_and_stream_control_frames() {
    let cases = [
        (
            Frame::MaxData(9),
            json!({"frame_type": "max_data", "maximum": 9}),
        ),
        (
            Frame::MaxStreams {
                dir: Dir::Uni,
                count: 3,
            },
            json!({"frame_type": "max_streams", "stream_type": "unidirectional", "maximum": 3}),
        ),
        (
            Frame::StreamsBlocked {
                dir: Dir::Bi,
                limit: 2,
            },
            json!({"frame_type": "streams_blocked", "stream_type": "bidirectional", "limit": 2}),
        ),
        (
            Frame::ResetStream {
                id: StreamId(8),
                error_code: 5,
                final_size: 10,
            },
            json!({"frame_type": "reset_stream", "stream_id": 8, "error": "unknown",
                   "error_code": 5, "final_size": 10}),
        ),
        (
            Frame::PathChallenge([1, 2, 3, 4, 5, 6, 7, 8]),
            json!({"frame_type": "path_challenge", "data": "0102030405060708"}),
        ),
        (
            Frame::HandshakeDone,
            json!({"frame_type": "handshake_done"}),
        ),
        (Frame::ImmediateAck, json!({"frame_type": "immediate_ack"})),
        (
            Frame::Datagram(mpquic_wire::frame::DatagramFrame {
                data: Bytes::from_static(b"hello"),
            }),
            json!({"frame_type": "datagram", "raw": {"payload_length": 5}}),
        ),
    ];
    for (frame, expected) in cases {
        assert_eq!(qlog(&frame), expected, "{frame:?}");
    }
}

#[test]
fn unusual_frames_are_unknown_with_their_type() {
    let qoe = Frame::QoeControlSignal(QoeSignal::default());
    assert_eq!(
        qlog(&qoe),
        json!({"frame_type": "unknown", "frame_type_bytes": 0x3f5153})
    );
}

#[test]
fn payload_parsing_stops_at_the_first_bad_frame() {
    let mut payload = Vec::new();
    Frame::Ping.encode(&mut payload);
    Frame::MaxData(5).encode(&mut payload);
    payload.push(0x40); // a truncated varint frame type
    let frames = QlogFrame::parse_payload(Bytes::from(payload), 3);
    assert_eq!(
        frames,
        vec![QlogFrame::Ping, QlogFrame::MaxData { maximum: 5 }]
    );
}
