//! One test per rule of RFC 9000 §2–4 and §19.4–19.14, asserting the error code.

use mpquic_wire::error::TransportErrorCode as Code;
use mpquic_wire::frame::Frame;
use mpquic_wire::stream_id::{Dir, Side, StreamId};

use super::{connected, control_frames, stream_frame};
use crate::error::TransportError;
use crate::streams::{
    ReadError, SentStreamFrames, StreamEvent, Streams, StreamsConfig, WriteError,
};

fn small() -> StreamsConfig {
    StreamsConfig {
        max_data: 1000,
        max_stream_data_bidi_local: 800,
        max_stream_data_bidi_remote: 800,
        max_stream_data_uni: 800,
        max_streams_bidi: 4,
        max_streams_uni: 4,
        send_buffer: 10_000,
        max_window: 1000,
    }
}

fn code(r: Result<(), TransportError>) -> Code {
    r.expect_err("expected a connection error").code
}

fn cbidi(i: u64) -> StreamId {
    StreamId::new(Side::Client, Dir::Bi, i)
}

fn events(s: &mut Streams) -> Vec<StreamEvent> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

#[test]
fn stream_frame_on_send_only_stream_is_stream_state_error() {
    // RFC 9000 §19.8: STREAM for a send-only stream.
    let (_, mut s) = connected(small(), small());
    let id = s.open(Dir::Uni).unwrap();
    assert_eq!(
        code(s.on_stream_frame(stream_frame(id, 0, b"x", false))),
        Code::STREAM_STATE_ERROR
    );
    // RFC 9000 §19.4 / §19.13: RESET_STREAM / STREAM_DATA_BLOCKED for a send-only stream.
    assert_eq!(code(s.on_reset_stream(id, 0, 0)), Code::STREAM_STATE_ERROR);
    assert_eq!(
        code(s.on_stream_data_blocked(id, 0)),
        Code::STREAM_STATE_ERROR
    );
}

#[test]
fn stream_frame_on_unopened_local_stream_is_stream_state_error() {
    // RFC 9000 §19.8: STREAM for a locally initiated stream not yet created.
    let (_, mut s) = connected(small(), small());
    let id = StreamId::new(Side::Server, Dir::Bi, 0);
    assert_eq!(
        code(s.on_stream_frame(stream_frame(id, 0, b"x", false))),
        Code::STREAM_STATE_ERROR
    );
    assert_eq!(s.open(Dir::Bi), Some(id));
    s.on_stream_frame(stream_frame(id, 0, b"x", false)).unwrap();
}

#[test]
fn send_side_frames_on_wrong_streams_are_stream_state_errors() {
    let (_, mut s) = connected(small(), small());
    // RFC 9000 §19.5 / §19.10: receive-only stream (client uni, seen by the server).
    let uni = StreamId::new(Side::Client, Dir::Uni, 0);
    assert_eq!(code(s.on_stop_sending(uni, 1)), Code::STREAM_STATE_ERROR);
    assert_eq!(code(s.on_max_stream_data(uni, 1)), Code::STREAM_STATE_ERROR);
    // RFC 9000 §19.5 / §19.10: locally initiated stream not yet created.
    let local = StreamId::new(Side::Server, Dir::Bi, 0);
    assert_eq!(code(s.on_stop_sending(local, 1)), Code::STREAM_STATE_ERROR);
    assert_eq!(
        code(s.on_max_stream_data(local, 1)),
        Code::STREAM_STATE_ERROR
    );
}

#[test]
fn stream_id_beyond_max_streams_is_stream_limit_error() {
    // RFC 9000 §4.6: limit 4 allows indices 0..=3.
    let (_, mut s) = connected(small(), small());
    assert_eq!(
        code(s.on_stream_frame(stream_frame(cbidi(4), 0, b"x", false))),
        Code::STREAM_LIMIT_ERROR
    );
    assert_eq!(
        code(s.on_max_stream_data(cbidi(4), 10)),
        Code::STREAM_LIMIT_ERROR
    );
    let uni = StreamId::new(Side::Client, Dir::Uni, 4);
    assert_eq!(code(s.on_reset_stream(uni, 0, 0)), Code::STREAM_LIMIT_ERROR);
}

#[test]
fn peer_streams_open_lower_numbered_streams_implicitly() {
    // RFC 9000 §3.2: opening stream 3 opens 0, 1 and 2 too.
    let (_, mut s) = connected(small(), small());
    s.on_stream_frame(stream_frame(cbidi(2), 0, b"x", false))
        .unwrap();
    assert_eq!(
        events(&mut s),
        vec![
            StreamEvent::Opened { dir: Dir::Bi },
            StreamEvent::Readable { id: cbidi(2) }
        ]
    );
    // MAX_STREAM_DATA also opens a peer's bidirectional stream (§3.2).
    s.on_max_stream_data(cbidi(3), 5000).unwrap();
    let accepted: Vec<_> = std::iter::from_fn(|| s.accept(Dir::Bi)).collect();
    assert_eq!(accepted, (0..4).map(cbidi).collect::<Vec<_>>());
    assert_eq!(s.read(cbidi(0), &mut [0; 8]), Err(ReadError::Blocked));
    assert_eq!(s.stats().streams_opened_remote, 4);
}

#[test]
fn data_beyond_stream_limit_is_flow_control_error() {
    // RFC 9000 §4.1, §19.10: stream window 800.
    let (_, mut s) = connected(small(), small());
    s.on_stream_frame(stream_frame(cbidi(0), 0, &[1; 800], false))
        .unwrap();
    assert_eq!(
        code(s.on_stream_frame(stream_frame(cbidi(0), 800, b"x", false))),
        Code::FLOW_CONTROL_ERROR
    );
}

#[test]
fn connection_credit_counts_highest_offset_of_each_stream() {
    // RFC 9000 §4.1, §4.5: connection limit 1000. 700 bytes on stream 0, then one
    // byte at offset 300 on stream 1: the highest offset (301) counts, 1001 > 1000.
    let (_, mut s) = connected(small(), small());
    s.on_stream_frame(stream_frame(cbidi(0), 0, &[1; 700], false))
        .unwrap();
    s.on_stream_frame(stream_frame(cbidi(1), 299, b"x", false))
        .unwrap();
    assert_eq!(
        code(s.on_stream_frame(stream_frame(cbidi(1), 300, b"x", false))),
        Code::FLOW_CONTROL_ERROR
    );
}

#[test]
fn final_size_changes_are_final_size_errors() {
    // RFC 9000 §4.5.
    let (_, mut s) = connected(small(), small());
    let id = cbidi(0);
    s.on_stream_frame(stream_frame(id, 5, b"hello", true))
        .unwrap();
    s.on_stream_frame(stream_frame(id, 5, b"hello", true))
        .unwrap(); // same final size
    assert_eq!(
        code(s.on_stream_frame(stream_frame(id, 10, b"x", false))),
        Code::FINAL_SIZE_ERROR
    );
    assert_eq!(
        code(s.on_stream_frame(stream_frame(id, 0, b"abc", true))),
        Code::FINAL_SIZE_ERROR
    );
    assert_eq!(code(s.on_reset_stream(id, 0, 11)), Code::FINAL_SIZE_ERROR);
    // A FIN below data already received.
    let id = cbidi(1);
    s.on_stream_frame(stream_frame(id, 0, &[0; 20], false))
        .unwrap();
    assert_eq!(
        code(s.on_stream_frame(stream_frame(id, 0, &[0; 10], true))),
        Code::FINAL_SIZE_ERROR
    );
    assert_eq!(code(s.on_reset_stream(id, 0, 19)), Code::FINAL_SIZE_ERROR);
}

#[test]
fn max_streams_above_2_pow_60_is_frame_encoding_error() {
    // RFC 9000 §19.11, §19.14.
    let (mut c, _) = connected(small(), small());
    c.on_max_streams(Dir::Bi, 1 << 60).unwrap();
    assert_eq!(
        code(c.on_max_streams(Dir::Uni, (1 << 60) + 1)),
        Code::FRAME_ENCODING_ERROR
    );
    assert_eq!(
        code(c.on_streams_blocked(Dir::Bi, (1 << 60) + 1)),
        Code::FRAME_ENCODING_ERROR
    );
}

#[test]
fn reset_final_size_counts_toward_connection_credit() {
    // RFC 9000 §4.5: 700 bytes declared by RESET_STREAM plus 301 on another stream
    // exceed the connection limit 1000.
    let (_, mut s) = connected(small(), small());
    s.on_reset_stream(cbidi(0), 7, 700).unwrap();
    assert_eq!(
        code(s.on_stream_frame(stream_frame(cbidi(1), 0, &[0; 301], false))),
        Code::FLOW_CONTROL_ERROR
    );
    // A reset beyond the stream limit is a FLOW_CONTROL_ERROR too.
    let (_, mut s) = connected(small(), small());
    assert_eq!(
        code(s.on_reset_stream(cbidi(0), 7, 801)),
        Code::FLOW_CONTROL_ERROR
    );
}

#[test]
fn reset_releases_connection_credit() {
    // The reset stream's bytes count as consumed: MAX_DATA grows without any read.
    let (_, mut s) = connected(small(), small());
    s.on_stream_frame(stream_frame(cbidi(0), 0, &[0; 100], false))
        .unwrap();
    s.on_reset_stream(cbidi(0), 7, 600).unwrap();
    assert_eq!(s.read(cbidi(0), &mut [0; 10]), Err(ReadError::Reset(7)));
    assert_eq!(s.read(cbidi(0), &mut [0; 10]), Err(ReadError::ClosedStream));
    let (frames, _) = control_frames(&mut s);
    assert!(frames.contains(&Frame::MaxData(600 + 1000)), "{frames:?}");
}

#[test]
fn stop_sending_is_answered_with_reset_stream_carrying_its_code() {
    // RFC 9000 §3.5: MUST send RESET_STREAM; SHOULD copy the error code.
    let (mut c, _) = connected(small(), small());
    let id = c.open(Dir::Bi).unwrap();
    assert_eq!(c.write(id, &[9; 300]), Ok(300));
    let mut out = Vec::new();
    let mut sent = SentStreamFrames::default();
    c.write_stream_frames(&mut out, 100, &mut sent);
    let sent_bytes = sent.stream.iter().map(|ch| ch.len).sum::<u64>();
    c.on_stop_sending(id, 42).unwrap();
    assert_eq!(
        events(&mut c),
        vec![StreamEvent::Stopped { id, error_code: 42 }]
    );
    assert_eq!(c.write(id, b"more"), Err(WriteError::Stopped(42)));
    let (frames, sent) = control_frames(&mut c);
    assert_eq!(
        frames,
        vec![Frame::ResetStream {
            id,
            error_code: 42,
            final_size: sent_bytes
        }]
    );
    // Lost: sent again; acknowledged: the sending part is gone.
    c.on_frames_lost(&sent);
    let (frames, sent) = control_frames(&mut c);
    assert_eq!(frames.len(), 1);
    c.on_frames_acked(&sent);
    assert_eq!(c.write(id, b"x"), Err(WriteError::ClosedStream));
    // Unsent bytes returned their connection credit.
    assert_eq!(c.send_credit().1, sent_bytes);
}

#[test]
fn frames_for_closed_streams_are_ignored() {
    let (_, mut s) = connected(small(), small());
    let id = StreamId::new(Side::Client, Dir::Uni, 0);
    s.on_stream_frame(stream_frame(id, 0, b"abc", true))
        .unwrap();
    let mut buf = [0; 8];
    assert_eq!(s.read(id, &mut buf), Ok(Some(3)));
    assert_eq!(s.read(id, &mut buf), Ok(None));
    let _ = events(&mut s);
    // Closed: retransmissions, resets and blocked frames are ignored.
    s.on_stream_frame(stream_frame(id, 0, b"abc", true))
        .unwrap();
    s.on_reset_stream(id, 1, 3).unwrap();
    s.on_stream_data_blocked(id, 3).unwrap();
    assert_eq!(events(&mut s), vec![]);
    assert_eq!(s.read(id, &mut buf), Err(ReadError::ClosedStream));
    // The peer got its stream credit back (RFC 9000 §4.6).
    let (frames, _) = control_frames(&mut s);
    assert!(
        frames.contains(&Frame::MaxStreams {
            dir: Dir::Uni,
            count: 5
        }),
        "{frames:?}"
    );
}

#[test]
fn blocked_frames_are_sent_once_per_limit() {
    // RFC 9000 §4.1, §4.6: DATA_BLOCKED, STREAM_DATA_BLOCKED, STREAMS_BLOCKED.
    let peer = StreamsConfig {
        max_streams_bidi: 1,
        ..small()
    };
    let (mut c, _) = connected(small(), peer);
    let id = c.open(Dir::Bi).unwrap();
    assert_eq!(c.open(Dir::Bi), None);
    assert_eq!(c.open(Dir::Bi), None);
    assert_eq!(c.write(id, &[0; 900]), Ok(800)); // stream credit 800
    assert_eq!(c.write(id, &[0; 10]), Err(WriteError::Blocked));
    let (frames, _) = control_frames(&mut c);
    assert_eq!(
        frames,
        vec![
            Frame::StreamDataBlocked { id, limit: 800 },
            Frame::StreamsBlocked {
                dir: Dir::Bi,
                limit: 1
            },
        ]
    );
    c.on_max_stream_data(id, 2000).unwrap();
    assert_eq!(events(&mut c), vec![StreamEvent::Writable { id }]);
    assert_eq!(c.write(id, &[0; 900]), Ok(200)); // connection credit 1000
    let (frames, _) = control_frames(&mut c);
    assert_eq!(frames, vec![Frame::DataBlocked { limit: 1000 }]);
    assert_eq!(c.write(id, &[0; 10]), Err(WriteError::Blocked));
    assert_eq!(control_frames(&mut c).0, vec![]);
    c.on_max_data(1500);
    assert_eq!(events(&mut c), vec![StreamEvent::Writable { id }]);
    c.on_max_streams(Dir::Bi, 2).unwrap();
    assert_eq!(
        events(&mut c),
        vec![StreamEvent::Available { dir: Dir::Bi }]
    );
    assert!(c.open(Dir::Bi).is_some());
}

#[test]
fn lost_max_data_is_resent_with_current_value() {
    let (_, mut s) = connected(small(), small());
    let id = cbidi(0);
    s.on_stream_frame(stream_frame(id, 0, &[0; 600], false))
        .unwrap();
    let mut buf = vec![0; 600];
    assert_eq!(s.read(id, &mut buf), Ok(Some(600)));
    let (frames, sent) = control_frames(&mut s);
    assert!(frames.contains(&Frame::MaxData(1600)), "{frames:?}");
    assert!(
        frames.contains(&Frame::MaxStreamData { id, max: 1400 }),
        "{frames:?}"
    );
    s.on_frames_lost(&sent);
    let (frames, _) = control_frames(&mut s);
    assert!(frames.contains(&Frame::MaxData(1600)), "{frames:?}");
    assert!(
        frames.contains(&Frame::MaxStreamData { id, max: 1400 }),
        "{frames:?}"
    );
    // Once the stream's final size is known, MAX_STREAM_DATA is no longer sent (§3.2).
    s.on_stream_frame(stream_frame(id, 600, b"end", true))
        .unwrap();
    s.on_frames_lost(&sent);
    let (frames, _) = control_frames(&mut s);
    assert_eq!(frames, vec![Frame::MaxData(1600)]);
}

#[test]
fn stop_sending_discards_data_and_counts_it() {
    let (_, mut s) = connected(small(), small());
    let id = cbidi(0);
    s.on_stream_frame(stream_frame(id, 0, &[0; 300], false))
        .unwrap();
    s.stop_sending(id, 5).unwrap();
    assert_eq!(s.read(id, &mut [0; 10]), Err(ReadError::ClosedStream));
    let (frames, _) = control_frames(&mut s);
    assert_eq!(frames, vec![Frame::StopSending { id, error_code: 5 }]);
    // Data after STOP_SENDING still counts toward flow control (§3.5).
    s.on_stream_frame(stream_frame(id, 300, &[0; 300], false))
        .unwrap();
    assert_eq!(
        code(s.on_stream_frame(stream_frame(cbidi(1), 0, &[0; 401], false))),
        Code::FLOW_CONTROL_ERROR
    );
}
