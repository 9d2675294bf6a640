//! Resource exhaustion by a hostile but authenticated peer: one that follows the wire format
//! yet, over many packets, tries to make our connection hold unbounded memory or owe unbounded
//! replies. Each test drives one class of input for N and then for many more packets and checks
//! that the heap (counted by a wrapping allocator) stays bounded.
//!
//! The allocator counts the whole test binary, so the tests run one at a time (`serial`).

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::{Mutex, MutexGuard};

use bytes::Bytes;
use common::{
    addr, client_bidi, encode, padded, stream_control_flood, unacked_client, NetConfig, Pair, ROOM,
};
use mpquic_proto::wire::cid::{ConnectionId, ResetToken};
use mpquic_proto::wire::error::TransportErrorCode as Code;
use mpquic_proto::wire::frame::{DatagramFrame, Frame, NewConnectionId, PathStatus, StreamFrame};
use mpquic_proto::wire::stream_id::{Dir, StreamId};
use mpquic_proto::{ConnectionError, ConnectionHandle, Duration, TransportConfig};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Live heap bytes of the whole test binary.
fn heap() -> isize {
    LIVE.load(Ordering::Relaxed)
}

static SERIAL: Mutex<()> = Mutex::new(());

/// Tests hold this while they run: the heap counter is global.
fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn established(
    client: TransportConfig,
    server: TransportConfig,
) -> (Pair, ConnectionHandle, ConnectionHandle) {
    Pair::established(13, client, server, NetConfig::default())
}

/// Make the client (`to_server`) or the server send `bytes` as the frames of its next 1-RTT
/// packet, and step until that packet left.
fn send_raw(pair: &mut Pair, to_server: bool, h: ConnectionHandle, bytes: Vec<u8>) {
    let ep = if to_server {
        &mut pair.client
    } else {
        &mut pair.server
    };
    let before = ep.connection(h).unwrap().stats().packets_sent;
    ep.connection_mut(h).unwrap().inject_raw_frame(bytes);
    ep.after_connection_call(h);
    let deadline = pair.now + Duration::from_secs(2);
    loop {
        let ep = if to_server {
            &pair.client
        } else {
            &pair.server
        };
        if ep.connection(h).unwrap().stats().packets_sent > before {
            return;
        }
        assert!(pair.now < deadline, "the injected frames were never sent");
        if !pair.step() {
            let ep = if to_server {
                &pair.client
            } else {
                &pair.server
            };
            let error = ep.connection(h).unwrap().error();
            panic!("nothing left to do, the frames were never sent: {error:?}");
        }
    }
}

/// Let everything in flight arrive and be answered.
fn settle(pair: &mut Pair) {
    pair.run_for(Duration::from_millis(200));
}

fn assert_open(pair: &Pair, sh: ConnectionHandle) {
    let s = pair.server.connection(sh).unwrap();
    assert!(!s.is_closed(), "server closed: {:?}", s.error());
}

fn server_error(pair: &Pair, sh: ConnectionHandle) -> Option<u64> {
    match pair.server.connection(sh).unwrap().error() {
        Some(ConnectionError::TransportError(e)) => Some(e.code.0),
        _ => None,
    }
}

/// Runs `round` (one hostile packet) `n` times to warm up, `n` times more, then `9 * n` more
/// times; returns the heap growth over the second `n` and over the last `10 * n` (relative to
/// the end of the warm-up), settling after each.
fn growth(pair: &mut Pair, n: usize, mut round: impl FnMut(&mut Pair, usize)) -> (isize, isize) {
    for i in 0..n {
        round(pair, i);
    }
    settle(pair);
    let base = heap();
    for i in n..2 * n {
        round(pair, i);
    }
    settle(pair);
    let first = heap() - base;
    for i in 2 * n..11 * n {
        round(pair, i);
    }
    settle(pair);
    (first, heap() - base)
}

/// The connection is still open and the heap grew by less than [`NOISE`] between the end of the
/// first and of the last rounds of [`growth`] (`first`, `total`); prints the figures.
fn assert_flat(
    pair: &Pair,
    sh: ConnectionHandle,
    what: &str,
    (first, total): (isize, isize),
    (short, long): (&str, &str),
) {
    eprintln!("{what}: heap +{first} after {short}, +{total} after {long}");
    assert_open(pair, sh);
    assert!(
        total - first < NOISE,
        "{what}: grew by {} bytes",
        total - first
    );
}

/// Bytes of heap that may come and go for reasons other than the hostile input: buffers that
/// reach their working size only after a few thousand packets (measured with plain PINGs: up to
/// ~180 KB over the first 5000, then flat over the next 50000), the test harness.
const NOISE: isize = 256 * 1024;

fn stream(id: StreamId, offset: u64, data: &'static [u8]) -> Frame {
    Frame::Stream(StreamFrame {
        id,
        offset,
        fin: false,
        data: Bytes::from_static(data),
    })
}

fn crypto(offset: u64, data: &'static [u8]) -> Frame {
    Frame::Crypto {
        offset,
        data: Bytes::from_static(data),
    }
}

/// Class 1 for one kind of reassembly buffer: `frame(offset)` carries `piece` bytes at
/// `offset`. First one frame per full-size datagram (each piece must not keep its datagram
/// alive), then as many frames per packet as fit, a one-byte gap after each piece, up to
/// `window`; one piece beyond `window` must close the connection with `over`.
fn gapped_flood(
    label: &str,
    server: TransportConfig,
    (frame, piece): (fn(u64) -> Frame, u64),
    window: u64,
    over: Code,
) {
    let stride = piece + 1;
    let (mut pair, ch, sh) = established(TransportConfig::default(), server);
    settle(&mut pair);
    let base = heap();
    const SPARSE: u64 = 2000;
    for i in 0..SPARSE {
        send_raw(&mut pair, true, ch, padded(&[frame(stride * i + 1)]));
    }
    settle(&mut pair);
    assert_open(&pair, sh);
    let sparse = heap() - base;
    eprintln!("{label}: {SPARSE} {piece}-byte frames in full datagrams: {sparse} heap bytes");
    // RFC 9000 §21.10: memory committed per buffered piece, not per datagram that carried it.
    assert!(
        sparse < 256 * SPARSE as isize,
        "{label}: {sparse} heap bytes for {SPARSE} buffered pieces"
    );
    let mut offset = stride * SPARSE + 1;
    while offset + piece <= window {
        let mut frames = Vec::new();
        while offset + piece <= window && encode(&frames).len() + 16 + (piece as usize) < ROOM {
            frames.push(frame(offset));
            offset += stride;
        }
        send_raw(&mut pair, true, ch, encode(&frames));
    }
    settle(&mut pair);
    assert_open(&pair, sh);
    let full = heap() - base;
    let buffered = (window / stride * piece) as isize;
    eprintln!(
        "{label}: {buffered} bytes in {piece}-byte pieces up to the window: {full} heap bytes"
    );
    assert!(
        full < 256 * buffered,
        "{label}: {full} heap bytes for {buffered} bytes"
    );
    send_raw(&mut pair, true, ch, encode(&[frame(window)]));
    settle(&mut pair);
    assert_eq!(
        server_error(&pair, sh),
        Some(over.0),
        "{label}: beyond the window"
    );
}

fn stream_byte(offset: u64) -> Frame {
    stream(client_bidi(0), offset, b"s")
}

/// 32 bytes: pieces of this mean size are not the scraps that close the connection at once
/// (`streams/recv.rs` MIN_MEAN_FRAGMENT), so the window bounds them.
fn stream_piece(offset: u64) -> Frame {
    stream(client_bidi(0), offset, &[b's'; 32])
}

fn crypto_byte(offset: u64) -> Frame {
    crypto(offset, b"c")
}

/// Class 1: STREAM frames with gaps, up to the stream's flow-control window.
#[test]
fn gapped_stream_data_is_bounded_by_the_window() {
    let _serial = serial();
    const WINDOW: u64 = 256 * 1024;
    let mut server = TransportConfig::default();
    server.streams.max_stream_data_bidi_remote = WINDOW;
    gapped_flood(
        "STREAM",
        server,
        (stream_piece, 32),
        WINDOW,
        Code::FLOW_CONTROL_ERROR,
    );
}

/// Class 1, one-byte scraps: a stream holding thousands of gapped pieces averaging under
/// 32 bytes closes the connection (RFC 9000 §21.10, `streams/recv.rs` is_shredded) long before
/// the window (default 1.5 MB) is reached, and the STREAM_DATA_BLOCKED reports a peer may send
/// meanwhile do not grow the window.
#[test]
fn scraps_of_stream_data_close_the_connection_and_grow_no_window() {
    let _serial = serial();
    let (mut pair, ch, sh) = established(TransportConfig::default(), TransportConfig::default());
    settle(&mut pair);
    let base = heap();
    let id = client_bidi(0);
    let mut offset = 1;
    let mut packets = 0;
    while server_error(&pair, sh).is_none() && packets < 100 {
        let mut frames = Vec::new();
        while encode(&frames).len() + 32 < ROOM {
            frames.push(stream_byte(offset));
            offset += 2;
        }
        // "Blocked" at the limit it has not reached: no window growth may follow.
        frames.push(Frame::StreamDataBlocked {
            id,
            limit: 1_536 * 1024,
        });
        send_raw(&mut pair, true, ch, encode(&frames));
        settle(&mut pair);
        packets += 1;
    }
    let held = heap() - base;
    eprintln!(
        "scraps: closed after {packets} packets, {} pieces sent, heap +{held}",
        offset / 2
    );
    assert_eq!(server_error(&pair, sh), Some(Code::PROTOCOL_VIOLATION.0));
    assert!(offset / 2 < 4096, "{} pieces before the close", offset / 2);
    assert!(held < NOISE + 1024 * 1024, "heap +{held}");
}

/// Class 1: CRYPTO frames with gaps in the 1-RTT space, up to the CRYPTO buffer (RFC 9000 §7.5:
/// CRYPTO_BUFFER_EXCEEDED beyond it). The limit is `handshake.rs` CRYPTO_BUFFER_LIMIT, 64 KiB.
#[test]
fn gapped_crypto_data_is_bounded_by_the_crypto_buffer() {
    let _serial = serial();
    gapped_flood(
        "CRYPTO",
        TransportConfig::default(),
        (crypto_byte, 1),
        64 * 1024,
        Code::CRYPTO_BUFFER_EXCEEDED,
    );
}

static CHUNK: [u8; 400] = [7; 400];

/// Class 2: the same and overlapping STREAM and CRYPTO data, again and again, buffers nothing
/// more once its range is held.
#[test]
fn repeated_and_overlapping_data_does_not_grow() {
    let _serial = serial();
    let (mut pair, ch, sh) = established(TransportConfig::default(), TransportConfig::default());
    let (first, total) = growth(&mut pair, 100, |p, i| {
        let offset = (i as u64 * 37) % 2000 + 1;
        let frames = [
            stream(client_bidi(0), offset, &CHUNK),
            crypto(offset, &CHUNK),
        ];
        send_raw(p, true, ch, padded(&frames));
    });
    assert_flat(
        &pair,
        sh,
        "overlap",
        (first, total),
        ("100 packets", "1000"),
    );
}

/// Class 3: many PATH_CHALLENGEs per packet, many packets: the PATH_RESPONSEs owed are bounded
/// (`paths.rs` on_path_challenge, MAX_PENDING_RESPONSES).
#[test]
fn path_challenge_floods_owe_bounded_responses() {
    let _serial = serial();
    let (mut pair, ch, sh) = established(TransportConfig::default(), TransportConfig::default());
    let (first, total) = growth(&mut pair, 100, |p, i| {
        let frames: Vec<Frame> = (0..100u64)
            .map(|j| Frame::PathChallenge((i as u64 * 100 + j).to_be_bytes()))
            .collect();
        send_raw(p, true, ch, encode(&frames));
    });
    assert_flat(
        &pair,
        sh,
        "PATH_CHALLENGE",
        (first, total),
        ("100 packets", "1000"),
    );
}

fn cid(n: u64) -> ConnectionId {
    ConnectionId::new(&n.to_be_bytes()).unwrap()
}

fn new_cid(path_id: Option<u64>, sequence: u64, retire_prior_to: u64) -> Frame {
    Frame::NewConnectionId(NewConnectionId {
        path_id,
        sequence,
        retire_prior_to,
        cid: cid(sequence * 16 + path_id.unwrap_or(0) + 1),
        reset_token: ResetToken([sequence as u8; 16]),
    })
}

/// Class 4: (PATH_)RETIRE_CONNECTION_ID churn, each making us issue a replacement CID (a
/// NEW_CONNECTION_ID frame and an endpoint route): what we hold stays at the CIDs we keep
/// issued. (NEW_CONNECTION_ID churn, whose retirements we owe, is bounded by
/// `retirements_owed_are_bounded`.)
#[test]
fn connection_id_churn_does_not_grow() {
    let _serial = serial();
    // The server's replacements would overflow the client stack's CID pool: it hears nothing
    // and keeps sending.
    let (mut pair, ch, sh) = established(unacked_client(), TransportConfig::default());
    pair.tap = Some(Box::new(|_, to_server, _| to_server));
    // Small: the client's own unacknowledged packets count in the heap too.
    let (first, total) = growth(&mut pair, 10, |p, i| {
        let frames = [
            // The client sends to the server's CID of sequence 0 on path 0: retire the others.
            Frame::RetireConnectionId {
                path_id: None,
                sequence: i as u64 + 1,
            },
            Frame::RetireConnectionId {
                path_id: Some(2),
                sequence: i as u64,
            },
        ];
        send_raw(p, true, ch, encode(&frames));
    });
    assert_flat(
        &pair,
        sh,
        "CID churn",
        (first, total),
        ("10 packets", "100"),
    );
}

/// Class 4: a NEW_CONNECTION_ID whose Retire Prior To jumps far ahead, then CIDs below it, which
/// must each be retired (RFC 9000 §19.15), while the peer acknowledges none of our packets.
/// RFC 9000 §5.1.2: we bound the retirements not yet acknowledged and close with
/// CONNECTION_ID_LIMIT_ERROR beyond the bound.
#[test]
fn retirements_owed_are_bounded() {
    let _serial = serial();
    let (mut pair, ch, sh) = established(unacked_client(), TransportConfig::default());
    // Retiring every CID the client gave leaves the server sending to an unknown CID: the client
    // hears nothing, so none of the server's RETIRE_CONNECTION_ID frames is acknowledged.
    send_raw(
        &mut pair,
        true,
        ch,
        encode(&[new_cid(None, 1 << 40, 1 << 40)]),
    );
    settle(&mut pair);
    assert_open(&pair, sh);
    let base = heap();
    let mut seq = 1000;
    for _ in 0..300 {
        let frames: Vec<Frame> = (0..30)
            .map(|_| {
                seq += 1;
                new_cid(None, seq, 0)
            })
            .collect();
        send_raw(&mut pair, true, ch, encode(&frames));
        if pair.server.connection(sh).unwrap().is_closed() {
            break;
        }
    }
    settle(&mut pair);
    eprintln!(
        "retirements: {} CIDs below Retire Prior To: heap +{}",
        seq - 1000,
        heap() - base
    );
    assert_eq!(
        server_error(&pair, sh),
        Some(Code::CONNECTION_ID_LIMIT_ERROR.0),
        "{} retirements owed",
        seq - 1000
    );
}

/// Drop every event the application was told about (an application that keeps up).
fn drain_events(pair: &mut Pair, ch: ConnectionHandle, sh: ConnectionHandle) {
    while pair
        .client
        .connection_mut(ch)
        .unwrap()
        .poll_event()
        .is_some()
    {}
    while pair
        .server
        .connection_mut(sh)
        .unwrap()
        .poll_event()
        .is_some()
    {}
}

/// Class 5: a client that opens a path, lets it validate and abandons it, in a loop: each
/// closed path ID is replaced by a new one (`path_ids.rs`), and the server's per-path state
/// goes with each path.
#[test]
fn paths_opened_and_abandoned_in_a_loop_do_not_grow() {
    let _serial = serial();
    let (mut pair, ch, sh) = established(TransportConfig::default(), TransportConfig::default());
    let (first, total) = growth(&mut pair, 10, |p, i| {
        let local = addr(&format!("10.0.2.{}:4433", i % 200 + 1));
        let deadline = p.now + Duration::from_secs(5);
        let id = loop {
            let (now, remote) = (p.now, p.server_addr);
            match p
                .client
                .connection_mut(ch)
                .unwrap()
                .open_path(now, local, remote)
            {
                Ok(id) => break id,
                Err(e) => {
                    assert!(p.now < deadline, "cycle {i}: no path: {e:?}");
                    p.run_for(Duration::from_millis(10));
                }
            }
        };
        p.client.after_connection_call(ch);
        p.run_for(Duration::from_millis(100));
        let now = p.now;
        p.client
            .connection_mut(ch)
            .unwrap()
            .close_path(now, id, 0)
            .unwrap();
        p.client.after_connection_call(ch);
        p.run_for(Duration::from_millis(500));
        drain_events(p, ch, sh);
    });
    eprintln!("path churn: heap +{first} after 10 paths, +{total} after 100");
    assert_open(&pair, sh);
    let paths = pair.server.connection(sh).unwrap().path_stats().len();
    assert!(paths <= 2, "the server keeps {paths} paths");
    assert!(total - first < NOISE, "grew by {} bytes", total - first);
}

/// Class 5: PATH_STATUS floods (alternating, with rising sequence numbers, and for unused path
/// IDs) and MAX_PATH_ID floods.
#[test]
fn path_status_and_max_path_id_floods_do_not_grow() {
    let _serial = serial();
    let (mut pair, ch, sh) = established(TransportConfig::default(), TransportConfig::default());
    let (first, total) = growth(&mut pair, 100, |p, i| {
        let mut frames = Vec::new();
        for j in 0..20u64 {
            let seq = i as u64 * 20 + j;
            let status = if seq % 2 == 0 {
                PathStatus::Backup
            } else {
                PathStatus::Available
            };
            frames.push(Frame::PathStatus {
                path_id: j % 3,
                sequence: seq,
                status,
            });
            frames.push(Frame::MaxPathId(1000 + seq * 1000));
        }
        send_raw(p, true, ch, encode(&frames));
        drain_events(p, ch, sh);
    });
    assert_flat(
        &pair,
        sh,
        "PATH_STATUS / MAX_PATH_ID",
        (first, total),
        ("100 packets", "1000"),
    );
}

/// Class 5: the client's address changes on every packet (a NAT rebinding each time): the server
/// follows and validates each new address, keeping one address to go back to (`migration.rs`
/// follow_peer).
#[test]
fn an_address_change_on_every_packet_does_not_grow() {
    let _serial = serial();
    let (mut pair, ch, sh) = established(TransportConfig::default(), TransportConfig::default());
    let inside = pair.client_addr;
    let (first, total) = growth(&mut pair, 100, |p, i| {
        let outside = addr(&format!(
            "10.{}.{}.{}:{}",
            20 + i / 60000,
            (i / 250) % 240,
            i % 250 + 1,
            1024 + i % 60000
        ));
        p.nat = Some((inside, outside));
        send_raw(p, true, ch, encode(&[Frame::Ping]));
        drain_events(p, ch, sh);
    });
    assert_flat(
        &pair,
        sh,
        "rebinding",
        (first, total),
        ("100 addresses", "1000"),
    );
}

/// Class 6: RESET_STREAM, STOP_SENDING, MAX_STREAM_DATA and STREAM_DATA_BLOCKED for the same
/// streams again and again: what we owe in reply (one RESET_STREAM per stream, MAX_STREAM_DATA
/// while the window may grow) is bounded by the streams the peer may open.
#[test]
fn stream_control_floods_owe_bounded_replies() {
    let _serial = serial();
    let (mut pair, ch, sh) = established(TransportConfig::default(), TransportConfig::default());
    // Streams the client opened (but never wrote to): our RESET_STREAMs are for streams it knows.
    for _ in 0..36 {
        pair.client.connection_mut(ch).unwrap().open_bi().unwrap();
    }
    let (first, total) = growth(&mut pair, 100, |p, i| {
        let frames = stream_control_flood(i);
        send_raw(p, true, ch, encode(&frames));
    });
    assert_flat(
        &pair,
        sh,
        "stream control",
        (first, total),
        ("100 packets", "1000"),
    );
}

static DATAGRAM_PAYLOAD: [u8; 1] = [9];

/// Class 7: DATAGRAM frames the application never reads: the receive queue is bounded in bytes
/// of heap, also for empty datagrams and for tiny ones in full-size packets (`datagrams.rs`
/// on_datagram_frame).
#[test]
fn unread_datagrams_are_bounded() {
    let _serial = serial();
    let (mut pair, ch, sh) = established(TransportConfig::default(), TransportConfig::default());
    let empty = Frame::Datagram(DatagramFrame { data: Bytes::new() });
    let (first, total) = growth(&mut pair, 100, |p, _| {
        send_raw(p, true, ch, encode(&vec![empty.clone(); 450]));
    });
    assert_flat(
        &pair,
        sh,
        "empty DATAGRAMs",
        (first, total),
        ("100 packets", "1000"),
    );
    let tiny = Frame::Datagram(DatagramFrame {
        data: Bytes::from_static(&DATAGRAM_PAYLOAD),
    });
    let base = heap();
    const N: isize = 2000;
    for _ in 0..N {
        send_raw(&mut pair, true, ch, padded(std::slice::from_ref(&tiny)));
    }
    settle(&mut pair);
    let held = heap() - base;
    eprintln!("1-byte DATAGRAMs in full datagrams: heap +{held} after {N}");
    assert!(
        held < 256 * N,
        "{held} heap bytes for {N} one-byte datagrams"
    );
}

/// Class 7: a server handing the client NEW_TOKEN after NEW_TOKEN: the client's token store
/// keeps a bounded number (`config.rs` TokenMemoryStore, TOKEN_STORE_CAPACITY).
#[test]
fn new_token_floods_are_bounded() {
    let _serial = serial();
    let (mut pair, _ch, sh) = established(TransportConfig::default(), TransportConfig::default());
    static TOKEN: [u8; 900] = [5; 900];
    let (first, total) = growth(&mut pair, 600, |p, _| {
        let frame = Frame::NewToken {
            token: Bytes::from_static(&TOKEN),
        };
        send_raw(p, false, sh, encode(&[frame]));
    });
    eprintln!("NEW_TOKEN: heap +{first} after 600 tokens, +{total} after 6000");
    assert!(total - first < NOISE, "grew by {} bytes", total - first);
}

/// Class 7 and 8: ACK_FREQUENCY with extreme (valid) values, then packets with a packet-number
/// gap after each: the received-range tracking is capped (`space/record.rs` MAX_RECEIVED_RANGES,
/// MAX_TO_ACK_RANGES), and the connection keeps working.
#[test]
fn packet_number_gaps_and_extreme_ack_frequency_are_bounded() {
    let _serial = serial();
    let (mut pair, ch, sh) = established(TransportConfig::default(), TransportConfig::default());
    let extreme = Frame::AckFrequency {
        sequence: 1,
        ack_eliciting_threshold: (1 << 62) - 1,
        request_max_ack_delay_us: (1 << 14) * 1000 - 1,
        reordering_threshold: (1 << 62) - 1,
    };
    send_raw(&mut pair, true, ch, encode(&[extreme]));
    settle(&mut pair);
    assert_open(&pair, sh);
    // Every other datagram from the client is lost: a gap after every packet number.
    let mut odd = false;
    pair.tap = Some(Box::new(move |_, to_server, _| {
        odd = !odd;
        !to_server || odd
    }));
    let (first, total) = growth(&mut pair, 600, |p, _| {
        send_raw(p, true, ch, encode(&[Frame::Ping]));
    });
    eprintln!("PN gaps: heap +{first} after 600 packets, +{total} after 6000");
    assert_open(&pair, sh);
    // 3000 gaps would take well over 256 KiB in three range sets; the caps hold 1024 each.
    assert!(total - first < 4 * NOISE, "grew by {} bytes", total - first);
    pair.tap = None;
    let sid = pair.client.connection_mut(ch).unwrap().open_bi().unwrap();
    pair.client
        .connection_mut(ch)
        .unwrap()
        .write(sid, b"still there")
        .unwrap();
    pair.client.connection_mut(ch).unwrap().finish(sid).unwrap();
    pair.run_until(Duration::from_secs(60), |p| {
        p.server
            .connection_mut(sh)
            .unwrap()
            .accept(Dir::Bi)
            .is_some()
    });
}
