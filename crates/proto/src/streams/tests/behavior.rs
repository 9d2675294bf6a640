//! Sending-side behaviour: re-injection copies, send-buffer back-pressure,
//! round-robin scheduling, completion and resets.

use mpquic_wire::frame::Frame;
use mpquic_wire::stream_id::Dir;

use super::{connected, control_frames, decode, dispatch};
use crate::streams::{
    ReadError, SentStreamFrames, StreamChunk, StreamEvent, Streams, StreamsConfig, WriteError,
};

fn packet(s: &mut Streams, max_len: usize) -> (Vec<Frame>, SentStreamFrames) {
    let mut out = Vec::new();
    let mut sent = SentStreamFrames::default();
    s.write_stream_frames(&mut out, max_len, &mut sent);
    assert!(out.len() <= max_len);
    (decode(out), sent)
}

fn events(s: &mut Streams) -> Vec<StreamEvent> {
    std::iter::from_fn(|| s.poll_event()).collect()
}

#[test]
fn retransmittable_copy_is_the_unacked_subset() {
    let (mut c, _) = connected(StreamsConfig::default(), StreamsConfig::default());
    let id = c.open(Dir::Uni).unwrap();
    assert_eq!(c.write(id, &[1; 3000]), Ok(3000));
    c.finish(id).unwrap();
    let (_, first) = packet(&mut c, 2000);
    let (_, second) = packet(&mut c, 2000);
    let first_len = first.stream[0].len;
    assert_eq!(
        second.stream.as_slice(),
        [StreamChunk {
            id,
            offset: first_len,
            len: 3000 - first_len,
            fin: true
        }]
    );
    // Acknowledge bytes 0..500 and the second packet.
    let partial = SentStreamFrames {
        stream: smallvec::smallvec![StreamChunk {
            id,
            offset: 0,
            len: 500,
            fin: false,
        }],
        ..Default::default()
    };
    c.on_frames_acked(&partial);
    c.on_frames_acked(&second);
    let copy = c.retransmittable_copy(&first);
    assert_eq!(
        copy.stream.as_slice(),
        [StreamChunk {
            id,
            offset: 500,
            len: first_len - 500,
            fin: false
        }]
    );
    assert!(c.retransmittable_copy(&second).is_empty());
    // Re-injecting the copy retransmits exactly that range.
    c.on_frames_lost(&copy);
    assert!(c.has_pending_data());
    let (_, again) = packet(&mut c, 5000);
    assert_eq!(again.stream, copy.stream);
    assert_eq!(c.stats().bytes_retransmitted, first_len - 500);
    // The original acknowledgement completes the stream.
    c.on_frames_acked(&first);
    assert_eq!(events(&mut c), vec![StreamEvent::Finished { id }]);
    assert_eq!(c.write(id, b"x"), Err(WriteError::ClosedStream));
}

#[test]
fn full_send_buffer_blocks_until_acknowledged() {
    let config = StreamsConfig {
        send_buffer: 1000,
        ..StreamsConfig::default()
    };
    let (mut c, _) = connected(config, StreamsConfig::default());
    let id = c.open(Dir::Bi).unwrap();
    assert_eq!(c.write(id, &[0; 1500]), Ok(1000));
    assert_eq!(c.write(id, &[0; 10]), Err(WriteError::Blocked));
    // Not a flow-control limit: no *_BLOCKED frame.
    assert_eq!(control_frames(&mut c).0, vec![]);
    let (_, sent) = packet(&mut c, 1200);
    assert_eq!(events(&mut c), vec![]);
    c.on_frames_acked(&sent);
    assert_eq!(events(&mut c), vec![StreamEvent::Writable { id }]);
    assert_eq!(c.write(id, &[0; 1500]), Ok(1000));
}

#[test]
fn streams_share_packets_round_robin() {
    let (mut c, _) = connected(StreamsConfig::default(), StreamsConfig::default());
    let a = c.open(Dir::Uni).unwrap();
    let b = c.open(Dir::Uni).unwrap();
    c.write(a, &[0; 10_000]).unwrap();
    c.write(b, &[0; 10_000]).unwrap();
    let order: Vec<_> = (0..4)
        .map(|_| packet(&mut c, 1200).1.stream[0].id)
        .collect();
    assert_eq!(order, vec![a, b, a, b]);
}

#[test]
fn lost_fin_is_resent_alone_when_data_was_acknowledged() {
    let (mut c, mut s) = connected(StreamsConfig::default(), StreamsConfig::default());
    let id = c.open(Dir::Bi).unwrap();
    c.write(id, b"hello").unwrap();
    let (frames, data) = packet(&mut c, 1200);
    c.finish(id).unwrap();
    let (_, fin) = packet(&mut c, 1200);
    assert_eq!(
        fin.stream.as_slice(),
        [StreamChunk {
            id,
            offset: 5,
            len: 0,
            fin: true
        }]
    );
    c.on_frames_acked(&data);
    c.on_frames_lost(&fin);
    let (fin_frames, fin_again) = packet(&mut c, 1200);
    assert_eq!(fin_again.stream, fin.stream);
    for f in frames.into_iter().chain(fin_frames) {
        dispatch(&mut s, f).unwrap();
    }
    let mut buf = [0; 16];
    assert_eq!(s.read(id, &mut buf), Ok(Some(5)));
    assert_eq!(s.read(id, &mut buf), Ok(None));
    c.on_frames_acked(&fin_again);
    assert_eq!(events(&mut c), vec![StreamEvent::Finished { id }]);
}

#[test]
fn application_reset_reaches_the_peer() {
    let (mut c, mut s) = connected(StreamsConfig::default(), StreamsConfig::default());
    let id = c.open(Dir::Uni).unwrap();
    c.write(id, &[3; 5000]).unwrap();
    let (frames, _) = packet(&mut c, 1200);
    c.reset(id, 99).unwrap();
    assert_eq!(c.reset(id, 99), Err(WriteError::ClosedStream));
    assert!(!c.has_pending_data());
    let (control, _) = control_frames(&mut c);
    let sent_len = match control[..] {
        [Frame::ResetStream {
            error_code: 99,
            final_size,
            ..
        }] => final_size,
        _ => panic!("{control:?}"),
    };
    assert!(sent_len > 1000 && sent_len < 1200);
    for f in frames.into_iter().chain(control) {
        dispatch(&mut s, f).unwrap();
    }
    assert_eq!(s.accept(Dir::Uni), Some(id));
    assert_eq!(s.read(id, &mut [0; 10]), Err(ReadError::Reset(99)));
    assert_eq!(s.read(id, &mut [0; 10]), Err(ReadError::ClosedStream));
}

/// A STREAM_DATA_BLOCKED or DATA_BLOCKED at our limit grows the window only when the data held
/// is packets' worth: scraps with gaps between them (RFC 9000 §21.10) grow nothing.
#[test]
fn blocked_reports_grow_windows_only_for_packet_sized_data() {
    let config = StreamsConfig {
        max_data: 1000,
        max_stream_data_bidi_remote: 1000,
        max_window: 8000,
        ..StreamsConfig::default()
    };
    let blocked_then_updates = |pieces: &[(u64, usize)]| {
        let (c, mut s) = connected(config.clone(), config.clone());
        let id = crate::streams::StreamId::new(c.side, Dir::Bi, 0);
        for &(offset, len) in pieces {
            let data = vec![7u8; len];
            dispatch(
                &mut s,
                Frame::Stream(super::stream_frame(id, offset, &data, false)),
            )
            .unwrap();
        }
        dispatch(&mut s, Frame::StreamDataBlocked { id, limit: 1000 }).unwrap();
        dispatch(&mut s, Frame::DataBlocked { limit: 1000 }).unwrap();
        control_frames(&mut s).0
    };
    // Two large pieces with a gap: both windows double and the updates go out at once.
    let grown = blocked_then_updates(&[(0, 400), (500, 400)]);
    assert!(grown.contains(&Frame::MaxData(2000)), "{grown:?}");
    assert!(grown
        .iter()
        .any(|f| matches!(f, Frame::MaxStreamData { max: 2000, .. })));
    // A hundred one-byte scraps: no update at all.
    let scraps: Vec<(u64, usize)> = (0..100).map(|i| (2 * i + 1, 1)).collect();
    assert_eq!(blocked_then_updates(&scraps), vec![]);
}

/// The connection-wide count of reassembly pieces follows inserts, reads, resets, STOP_SENDING
/// and removals exactly; scraps spread over many streams, each under the per-stream bound,
/// close the connection once the count passes the connection's bound (RFC 9000 §21.10).
#[test]
fn reassembly_pieces_are_counted_across_streams() {
    let config = StreamsConfig {
        max_streams_bidi: 100,
        ..StreamsConfig::default()
    };
    let (c, mut s) = connected(config.clone(), config);
    let id = |n| crate::streams::StreamId::new(c.side, Dir::Bi, n);
    let check = |s: &Streams| {
        let (running, counted) = s.recount_pieces();
        assert_eq!(running, counted);
        running
    };
    let scrap = |s: &mut Streams, n, offset| {
        dispatch(
            s,
            Frame::Stream(super::stream_frame(id(n), offset, b"x", false)),
        )
    };
    for n in 0..4 {
        for k in 0..10 {
            scrap(&mut s, n, 2 * k).unwrap();
        }
    }
    assert_eq!(check(&s), 40);
    // Reading stream 0 takes its first piece; a reset clears stream 1; STOP_SENDING stream 2.
    let mut buf = [0u8; 64];
    assert_eq!(s.read(id(0), &mut buf), Ok(Some(1)));
    dispatch(
        &mut s,
        Frame::ResetStream {
            id: id(1),
            error_code: 7,
            final_size: 100,
        },
    )
    .unwrap();
    s.stop_sending(id(2), 9).unwrap();
    assert_eq!(check(&s), 19);
    assert_eq!(s.read(id(1), &mut buf), Err(ReadError::Reset(7)));
    assert_eq!(check(&s), 19);
    // 1,900 scraps on each of 96 streams stay under the per-stream bound (2,048) but pass the
    // connection's (one piece per 64 bytes of the default 3 MB window: 49,152).
    let mut result = Ok(());
    'fill: for n in 4..100 {
        for k in 0..1_900 {
            result = scrap(&mut s, n, 2 * k + 1);
            if result.is_err() {
                break 'fill;
            }
        }
    }
    let error = result.expect_err("the connection-wide bound closes the connection");
    assert_eq!(
        error.code,
        mpquic_wire::error::TransportErrorCode::PROTOCOL_VIOLATION
    );
    assert_eq!(check(&s), 49_153);
}
