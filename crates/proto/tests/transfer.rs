//! Two in-memory endpoints: handshake and byte-exact stream transfer, with and without loss,
//! reordering and duplication.

mod common;

use common::{payload, NetConfig, Pair};
use mpquic_proto::{ConnectionHandle, Duration, Event, MultipathMode, TransportConfig};

fn transport(mode: MultipathMode) -> TransportConfig {
    TransportConfig::default().multipath(mode)
}

/// Client sends `data` on a bidirectional stream; the server reads it.
fn transfer(pair: &mut Pair, data: &[u8]) -> (ConnectionHandle, ConnectionHandle, Vec<u8>) {
    pair.upload(data, Duration::from_secs(600))
}

#[test]
fn handshake_completes_and_negotiates_alpn() {
    let mut pair = Pair::new(
        1,
        transport(MultipathMode::Single),
        transport(MultipathMode::Single),
        NetConfig::default(),
    );
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established()
    });
    let conn = pair.client.connection_mut(ch).unwrap();
    assert_eq!(conn.poll_event(), Some(Event::Connected));
    assert_eq!(conn.alpn_protocol().as_deref(), Some(common::ALPN));
    let sh = pair.server.accept().expect("server accepted");
    pair.run_until(Duration::from_secs(5), |p| {
        p.server.connection(sh).unwrap().is_established()
    });
    // One RTT of 20 ms for the handshake: established well under a second of virtual time.
    assert!(
        pair.now.as_nanos() < 1_000_000_000,
        "handshake took {:?}",
        pair.now
    );
}

#[test]
fn transfers_one_megabyte_byte_exact() {
    for mode in [
        MultipathMode::Single,
        MultipathMode::Spns,
        MultipathMode::Mpns,
    ] {
        let mut pair = Pair::new(2, transport(mode), transport(mode), NetConfig::default());
        let data = payload(1_000_000, 7);
        let (_, _, received) = transfer(&mut pair, &data);
        assert!(
            received == data,
            "mode {mode:?}: {} of {} bytes, corrupted or short",
            received.len(),
            data.len()
        );
    }
}

#[test]
fn transfers_with_loss_reordering_and_duplication() {
    for seed in 10..13 {
        let net = NetConfig {
            loss: 0.03,
            duplicate: 0.02,
            jitter: Duration::from_millis(4),
            ..NetConfig::default()
        };
        let mut pair = Pair::new(
            seed,
            transport(MultipathMode::Auto),
            transport(MultipathMode::Auto),
            net,
        );
        let data = payload(300_000, seed as u8);
        let (ch, _, received) = transfer(&mut pair, &data);
        assert!(
            received == data,
            "seed {seed}: {} of {} bytes, corrupted or short",
            received.len(),
            data.len()
        );
        let stats = pair.client.connection(ch).unwrap().stats();
        assert!(
            stats.packets_lost > 0,
            "seed {seed}: the network dropped {:?} but nothing was declared lost",
            pair.dropped
        );
    }
}

/// A client's first datagram, checked to be padded to 1,200 bytes (RFC 9000 §14.1), delivered
/// to the server; the client then stays silent. Returns the pair, the datagram's size and the
/// server's connection handle.
fn silent_client_reaches_server(seed: u64) -> (Pair, usize, ConnectionHandle) {
    let mut pair = Pair::new(
        seed,
        TransportConfig::default(),
        TransportConfig::default(),
        NetConfig::default(),
    );
    let _ch = pair.connect();
    let mut buf = Vec::new();
    let first = pair
        .client
        .poll_transmit(pair.now, &mut buf)
        .expect("client Initial");
    assert!(
        first.size >= 1200,
        "client Initial datagram of {} bytes",
        first.size
    );
    let dgram = bytes::BytesMut::from(&buf[..first.size]);
    pair.server
        .handle_datagram(pair.now, pair.server_addr, pair.client_addr, dgram);
    let mut handles = Vec::new();
    pair.server.take_touched(&mut handles);
    let server = *handles.first().expect("the server made a connection");
    (pair, first.size, server)
}

#[test]
fn client_initial_is_padded_and_server_respects_amplification_limit() {
    let (mut pair, first, _) = silent_client_reaches_server(3);
    let mut buf = Vec::new();
    // The client never answers: the server may send at most 3x what it received (RFC 9000 §8.1),
    // across its first flight and every retransmission.
    let mut sent = 0;
    for _ in 0..50 {
        while let Some(t) = pair.server.poll_transmit(pair.now, &mut buf) {
            sent += t.size;
        }
        match pair.server.poll_timeout() {
            Some(t) => {
                pair.now = t;
                pair.server.handle_timeout(t);
            }
            None => break,
        }
    }
    assert!(
        sent > 0 && sent <= 3 * first,
        "server sent {sent} bytes to an unvalidated address"
    );
}

/// A server that closes while its budget for an unvalidated address is spent sends nothing more:
/// the anti-amplification limit covers CONNECTION_CLOSE too (RFC 9000 §8.1).
#[test]
fn close_on_an_unvalidated_path_respects_the_amplification_limit() {
    let (mut pair, first, server) = silent_client_reaches_server(4);
    let mut buf = Vec::new();
    // The client stays silent: first flight and retransmissions spend the budget.
    let mut sent = 0;
    for _ in 0..50 {
        while let Some(t) = pair.server.poll_transmit(pair.now, &mut buf) {
            sent += t.size;
        }
        match pair.server.poll_timeout() {
            Some(t) if 3 * first - sent >= 64 => {
                pair.now = t;
                pair.server.handle_timeout(t);
            }
            _ => break,
        }
    }
    pair.server
        .connection_mut(server)
        .expect("server connection")
        .close(pair.now, 7, bytes::Bytes::from_static(b"going away"));
    while let Some(t) = pair.server.poll_transmit(pair.now, &mut buf) {
        sent += t.size;
    }
    assert!(
        sent <= 3 * first,
        "server sent {sent} bytes for {first} received"
    );
}

/// Not a timed test: prints how fast the core moves data between two in-memory endpoints.
/// `cargo test --release -p mpquic-proto --test transfer -- --ignored --nocapture`
#[test]
#[ignore]
fn core_throughput_report() {
    let mut pair = Pair::new(
        4,
        transport(MultipathMode::Single),
        transport(MultipathMode::Single),
        NetConfig::default(),
    );
    let data = payload(50_000_000, 3);
    let start = std::time::Instant::now();
    let (ch, _, received) = transfer(&mut pair, &data);
    let wall = start.elapsed();
    assert!(received == data);
    let stats = pair.client.connection(ch).unwrap().stats();
    println!(
        "50 MB in {:.3} s wall ({:.1} MB/s), {:.3} s virtual; client sent {} packets, {} ACK frames",
        wall.as_secs_f64(),
        50.0 / wall.as_secs_f64(),
        pair.now.as_nanos() as f64 / 1e9,
        stats.packets_sent,
        stats.ack_frames_sent
    );
}
