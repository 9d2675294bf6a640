//! CPU work per packet against a hostile but authenticated peer: one that follows the wire
//! format yet chooses what it sends so that each of its packets costs us work that grows with
//! the connection's history. The figures are in `examples/hostile_cpu.rs`; these tests may not
//! time anything (two noisy cores), so each asserts on a structural count instead: the steps of
//! a loop (`mpquic_proto::testing` counters), the size of a structure, or how the connection
//! closes.

mod common;

use bytes::BytesMut;

use common::{encode, unacked_client, NetConfig, Pair};
use mpquic_proto::testing::{
    ack_range_scan_steps, received_range_walk_steps, reinjection_scan_steps,
};
use mpquic_proto::wire::frame::Frame;
use mpquic_proto::{ConnectionHandle, Duration, TransportConfig};

/// The client sends `bytes` as the frames of its next 1-RTT packet; step until it left.
fn send_raw(pair: &mut Pair, ch: ConnectionHandle, bytes: Vec<u8>) {
    let before = pair.client.connection(ch).unwrap().stats().packets_sent;
    pair.client
        .connection_mut(ch)
        .unwrap()
        .inject_raw_frame(bytes);
    pair.client.after_connection_call(ch);
    let deadline = pair.now + Duration::from_secs(2);
    while pair.client.connection(ch).unwrap().stats().packets_sent == before {
        assert!(pair.now < deadline, "the injected frames were never sent");
        assert!(
            pair.step(),
            "nothing left to do, the frames were never sent"
        );
    }
}

/// The client sends `bytes` as the frames of its next 1-RTT packet, `n` times, 10 µs apart,
/// each straight to the server (unless `lost(i)`), and hears the server's replies at once: a
/// fast sender on a short path, whose packets arrive faster than any timer runs.
fn burst(pair: &mut Pair, ch: ConnectionHandle, n: u64, bytes: &[u8], lost: impl Fn(u64) -> bool) {
    let mut buf = Vec::with_capacity(1500);
    let mut sent = 0;
    for _ in 0..n {
        pair.now += Duration::from_micros(10);
        let now = pair.now;
        pair.client.handle_timeout(now);
        pair.server.handle_timeout(now);
        pair.client
            .connection_mut(ch)
            .unwrap()
            .inject_raw_frame(bytes.to_vec());
        pair.client.after_connection_call(ch);
        while let Some(t) = pair.client.poll_transmit(now, &mut buf) {
            sent += 1;
            if !lost(sent) {
                let data = BytesMut::from(&buf[..t.size]);
                pair.server.handle_datagram(now, t.remote, t.local, data);
            }
        }
        while let Some(t) = pair.server.poll_transmit(now, &mut buf) {
            let data = BytesMut::from(&buf[..t.size]);
            pair.client.handle_datagram(now, t.remote, t.local, data);
        }
    }
}

fn assert_open(pair: &Pair, sh: ConnectionHandle) {
    let s = pair.server.connection(sh).unwrap();
    assert!(!s.is_closed(), "server closed: {:?}", s.error());
}

/// A client that hears nothing from the server (so acknowledges none of its packets) and keeps
/// sending PINGs: the server answers with ACK-only packets, which stay outstanding (nothing
/// acknowledges them or shows them lost, RFC 9002 §6.1), one more every other PING. Whether a
/// packet may be re-injected was decided by searching every outstanding packet before each
/// datagram sent: work per packet growing with the connection's history (~24 µs per packet
/// after 10,000 PINGs from a new address each, against ~2.5 µs at first). The ledger now counts
/// the packets that may be copied (`recovery/ledger.rs` has_copyable), and the search walks
/// none of them here.
#[test]
fn an_unacknowledging_peer_does_not_make_the_reinjection_check_walk_the_ledger() {
    let (mut pair, ch, sh) = Pair::established(
        13,
        unacked_client(),
        TransportConfig::default(),
        NetConfig::default(),
    );
    pair.run_for(Duration::from_millis(200));
    pair.tap = Some(Box::new(|_, to_server, _| to_server));
    let base = reinjection_scan_steps();
    const PINGS: u64 = 2000;
    for _ in 0..PINGS {
        send_raw(&mut pair, ch, encode(&[Frame::Ping]));
    }
    pair.run_for(Duration::from_millis(100));
    assert_open(&pair, sh);
    let steps = reinjection_scan_steps() - base;
    eprintln!("{PINGS} PINGs unanswered: {steps} sent packets examined for re-injection");
    assert!(
        steps < PINGS,
        "{steps} sent packets examined for re-injection over {PINGS} PINGs"
    );
}

/// A client that asked for no ACK before 2^62 ack-eliciting packets or 16 s, whatever the
/// reordering (ACK_FREQUENCY, draft-ietf-quic-ack-frequency: valid, if extreme), then leaves a
/// gap after every packet: once the ranges still to acknowledge reach their cap
/// (`space/record.rs` MAX_TO_ACK_RANGES, 1024), each packet dropped the oldest range that holds
/// no packet received since the last ACK, searching every range when all of them hold one (none
/// was sent): ~9 µs per packet after 10,000 packets against 0.6 µs at first. The search now
/// starts above the ranges a previous search found all holding new packets.
#[test]
fn ack_range_eviction_does_not_search_every_range_per_packet() {
    let mut server = TransportConfig::default();
    server.ack.min_ack_delay_us = Some(1000);
    let (mut pair, ch, sh) = Pair::established(13, unacked_client(), server, NetConfig::default());
    pair.run_for(Duration::from_millis(200));
    let extreme = Frame::AckFrequency {
        sequence: 1,
        ack_eliciting_threshold: (1 << 62) - 1,
        request_max_ack_delay_us: (1 << 14) * 1000 - 1,
        reordering_threshold: (1 << 62) - 1,
    };
    send_raw(&mut pair, ch, encode(&[extreme]));
    pair.run_for(Duration::from_millis(100));
    let base = ack_range_scan_steps();
    const PACKETS: u64 = 6000;
    // Every other datagram from the client is lost: a gap after every packet number.
    burst(&mut pair, ch, PACKETS, &encode(&[Frame::Ping]), |i| {
        i % 2 == 0
    });
    assert_open(&pair, sh);
    let steps = ack_range_scan_steps() - base;
    eprintln!("{PACKETS} packets, a gap after each: {steps} ranges examined for eviction");
    // Past the cap (after ~2048 packets) each packet drops one range: a few steps each
    // (2,025,400 without the fix).
    assert!(
        steps < 4 * PACKETS,
        "{steps} ranges examined for eviction over {PACKETS} packets"
    );
}

/// A client that asked for an ACK whenever a packet is missing 3 packets below the largest
/// received (ACK_FREQUENCY Reordering Threshold 3: an ordinary value) and leaves a gap after
/// every packet: each packet asked for the first missing packet above Largest Acked - 3, and the
/// search walked every received range from the lowest (up to 1024 on one path, 8192 in a shared
/// space whose other path went silent: 1.7 -> 11.2 us per packet over 30,000 packets). It now
/// starts at the range holding its starting point.
#[test]
fn the_reordering_window_check_does_not_walk_every_received_range() {
    let mut server = TransportConfig::default();
    server.ack.min_ack_delay_us = Some(1000);
    let (mut pair, ch, sh) = Pair::established(13, unacked_client(), server, NetConfig::default());
    pair.run_for(Duration::from_millis(200));
    let request = Frame::AckFrequency {
        sequence: 1,
        ack_eliciting_threshold: 10,
        request_max_ack_delay_us: 25_000,
        reordering_threshold: 3,
    };
    send_raw(&mut pair, ch, encode(&[request]));
    pair.run_for(Duration::from_millis(100));
    let base = received_range_walk_steps();
    const PACKETS: u64 = 6000;
    burst(&mut pair, ch, PACKETS, &encode(&[Frame::Ping]), |i| {
        i % 2 == 0
    });
    assert_open(&pair, sh);
    let steps = received_range_walk_steps() - base;
    eprintln!("{PACKETS} packets, a gap after each: {steps} received ranges walked");
    assert!(
        steps < 4 * PACKETS,
        "{steps} received ranges walked over {PACKETS} packets"
    );
}
