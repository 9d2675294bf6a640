//! Admission of new connections under hostile input and load (issue 12): no state before a
//! client Initial authenticates, limits refused with CONNECTION_REFUSED, Retry and NEW_TOKEN
//! address validation (RFC 9000 §8.1), and stateless resets from a restarted server (§10.3).

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::BytesMut;
use common::{addr, payload, NetConfig, Pair};
use mpquic_proto::{
    ConnectionError, ConnectionHandle, Duration, Endpoint, MultipathMode, RetryPolicy,
    ServerConfig, Timestamp, TransportConfig,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

const MODES: [MultipathMode; 3] = [
    MultipathMode::Single,
    MultipathMode::Spns,
    MultipathMode::Mpns,
];

fn pair(seed: u64, mode: MultipathMode) -> Pair {
    let t = TransportConfig::default().multipath(mode);
    Pair::new(seed, t.clone(), t, NetConfig::default())
}

/// Change the server's configuration in place.
fn configure_server(pair: &mut Pair, change: impl FnOnce(&mut ServerConfig)) {
    let mut config = ServerConfig::clone(pair.server.server_config().expect("server"));
    change(&mut config);
    pair.server.set_server_config(Some(Arc::new(config)));
}

/// Connect and upload `len` bytes on one stream; returns the client handle and what the
/// server read.
fn connect_and_upload(pair: &mut Pair, len: usize) -> (ConnectionHandle, Vec<u8>) {
    let (ch, _, received) = pair.upload(&payload(len, 7), Duration::from_secs(60));
    (ch, received)
}

/// A datagram that looks like a client Initial (long header, v1, 8-byte CIDs, 1200 bytes) but
/// whose protection is random bytes.
fn garbage_initial(rng: &mut ChaCha20Rng) -> BytesMut {
    let mut d = vec![0u8; 1200];
    rng.fill(&mut d[..]);
    d[0] = 0xc0 | (d[0] & 0x0f);
    d[1..5].copy_from_slice(&1u32.to_be_bytes());
    d[5] = 8;
    d[14] = 8;
    d[23] = 0; // token length
    d[24] = 0x44; // 2-byte packet length: 0x4000 | 1100
    d[25] = 0x4c;
    BytesMut::from(&d[..])
}

#[test]
fn garbage_initials_leave_no_state_and_a_client_connects_in_one_round_trip() {
    let mut pair = pair(1, MultipathMode::Auto);
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let server_addr = pair.server_addr;
    for i in 0..20_000u32 {
        let from = SocketAddr::from(([10, 9, (i >> 8) as u8, i as u8], 1000));
        pair.server
            .handle_datagram(pair.now, server_addr, from, garbage_initial(&mut rng));
    }
    assert_eq!(pair.server.open_connections(), (0, 0));
    assert_eq!(pair.server.stats().unauthenticated_initials, 20_000);
    let mut buf = Vec::new();
    assert!(
        pair.server.poll_transmit(pair.now, &mut buf).is_none(),
        "nothing is sent in answer to unauthenticated Initials"
    );
    let start = pair.now;
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(1), |p| {
        p.client.connection(ch).is_some_and(|c| c.is_established())
    });
    // One round trip of 2 x 10 ms, plus processing (no PTO, no retry).
    let took = pair.now.saturating_duration_since(start);
    assert!(took <= Duration::from_millis(25), "handshake took {took:?}");
    let (_, received) = connect_and_upload(&mut pair, 100_000);
    assert_eq!(received, payload(100_000, 7));
}

#[test]
fn retry_always_validates_the_client_and_the_connection_works_in_every_design() {
    for mode in MODES {
        let mut pair = pair(2, mode);
        configure_server(&mut pair, |c| c.retry = RetryPolicy::Always);
        let (ch, received) = connect_and_upload(&mut pair, 300_000);
        assert_eq!(received, payload(300_000, 7), "{mode:?}");
        assert_eq!(pair.server.stats().retries_sent, 1, "{mode:?}");
        let client = pair.client.connection(ch).expect("client");
        assert!(client.is_established(), "{mode:?}");
    }
}

#[test]
fn a_new_token_lets_the_next_connection_skip_the_retry() {
    let mut pair = pair(3, MultipathMode::Auto);
    configure_server(&mut pair, |c| c.retry = RetryPolicy::Always);
    let (first, _) = connect_and_upload(&mut pair, 10_000);
    // The NEW_TOKEN frame follows the handshake; let it arrive.
    pair.run_for(Duration::from_millis(100));
    assert_eq!(pair.server.stats().retries_sent, 1);
    let store = pair.client_config.token_store.clone().expect("store");
    let token = store
        .take("localhost")
        .expect("a NEW_TOKEN token was stored");
    store.insert("localhost", token);
    pair.client.connection_mut(first).expect("client").close(
        pair.now,
        0,
        bytes::Bytes::from_static(b"done"),
    );
    let (_, received) = connect_and_upload(&mut pair, 10_000);
    assert_eq!(received.len(), 10_000);
    assert_eq!(
        pair.server.stats().retries_sent,
        1,
        "the token validated the second connection's address"
    );
    pair.run_for(Duration::from_millis(100));
    assert!(
        store.take("localhost").is_some(),
        "a fresh token replaced it"
    );
}

/// Run until the client connection ends; returns its error and how long that took.
fn run_until_lost(pair: &mut Pair, ch: ConnectionHandle) -> (ConnectionError, Duration) {
    let start = pair.now;
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).is_none_or(|c| c.error().is_some())
    });
    let error = pair
        .client
        .connection(ch)
        .and_then(|c| c.error().cloned())
        .expect("connection error");
    (error, pair.now.saturating_duration_since(start))
}

fn peer_code(error: &ConnectionError) -> Option<u64> {
    match error {
        ConnectionError::PeerTransportClose { code, .. } => Some(*code),
        _ => None,
    }
}

#[test]
fn limits_are_refused_with_connection_refused_within_a_round_trip() {
    let mut pair = pair(4, MultipathMode::Auto);
    configure_server(&mut pair, |c| c.max_handshakes = 0);
    let ch = pair.connect();
    let (error, took) = run_until_lost(&mut pair, ch);
    assert_eq!(peer_code(&error), Some(0x02), "{error:?}");
    assert!(took <= Duration::from_millis(25), "refusal took {took:?}");
    assert_eq!(pair.server.open_connections(), (0, 0));

    let mut pair = pair_with_limit(1);
    let (_, received) = connect_and_upload(&mut pair, 1000);
    assert_eq!(received.len(), 1000);
    let second = pair.connect();
    let (error, _) = run_until_lost(&mut pair, second);
    assert_eq!(peer_code(&error), Some(0x02), "{error:?}");
    assert_eq!(pair.server.stats().refused, 1);
}

fn pair_with_limit(max_connections: usize) -> Pair {
    let mut pair = pair(5, MultipathMode::Auto);
    configure_server(&mut pair, |c| c.max_connections = max_connections);
    pair
}

#[test]
fn invalid_retry_tokens_are_refused_and_unknown_tokens_ignored() {
    let mut pair = pair(6, MultipathMode::Auto);
    let store = pair.client_config.token_store.clone().expect("store");
    // Looks like one of our Retry tokens (kind 1) but was never sealed by the server.
    store.insert("localhost", bytes::Bytes::from(vec![1u8; 60]));
    let ch = pair.connect();
    let (error, _) = run_until_lost(&mut pair, ch);
    assert_eq!(peer_code(&error), Some(0x0b), "{error:?}");
    // A forged NEW_TOKEN-style token counts as no token (RFC 9000 §8.1.3).
    store.insert("localhost", bytes::Bytes::from(vec![2u8; 60]));
    let (_, received) = connect_and_upload(&mut pair, 1000);
    assert_eq!(received.len(), 1000);
    assert_eq!(pair.server.stats().invalid_tokens, 2);
}

/// Drive two endpoints by hand: deliver every datagram `from` sends to `to`.
fn deliver(now: Timestamp, from: &mut Endpoint, to: &mut Endpoint) -> usize {
    let mut buf = Vec::new();
    let mut n = 0;
    while let Some(t) = from.poll_transmit(now, &mut buf) {
        to.handle_datagram(now, t.remote, t.local, BytesMut::from(&buf[..t.size]));
        n += 1;
    }
    n
}

#[test]
fn under_load_policy_retries_only_past_the_threshold() {
    let mut pair = pair(7, MultipathMode::Auto);
    configure_server(&mut pair, |c| {
        c.retry = RetryPolicy::UnderLoad { handshakes: 1 }
    });
    let now = pair.now;
    let config = pair.client_config.clone();
    let mut clients: Vec<Endpoint> = (0..2u8)
        .map(|i| {
            let ep_config = Arc::new(mpquic_proto::EndpointConfig::new(&mut rand::thread_rng()));
            Endpoint::new(ep_config, None, [i + 1; 32])
        })
        .collect();
    for (i, client) in clients.iter_mut().enumerate() {
        let local = addr(&format!("10.0.0.{}:4433", i + 2));
        client
            .connect(now, &config, local, pair.server_addr, "localhost")
            .expect("connect");
        deliver(now, client, &mut pair.server);
    }
    // The first client's handshake is in progress; the second was asked to Retry.
    assert_eq!(pair.server.open_connections(), (1, 1));
    assert_eq!(pair.server.stats().retries_sent, 1);
}

#[test]
fn a_restarted_server_with_the_same_reset_key_resets_old_connections() {
    let mut pair = pair(8, MultipathMode::Auto);
    let (ch, _) = connect_and_upload(&mut pair, 1000);
    let server_config = pair.server.server_config().cloned();
    let endpoint_config = pair.server.config().clone();
    pair.server = Endpoint::new(endpoint_config, server_config, [42; 32]);
    let conn = pair.client.connection_mut(ch).expect("client");
    let sid = conn.open_uni().expect("stream");
    conn.write(sid, b"anyone there?").expect("write");
    let (error, took) = run_until_lost(&mut pair, ch);
    assert_eq!(error, ConnectionError::Reset);
    assert!(took < Duration::from_millis(100), "reset took {took:?}");
}
