//! The application's decision on client attempts (`Endpoint::set_incoming_decisions`, issue 16):
//! nothing but the verified Initial is kept until the decision, datagrams arriving meanwhile
//! for the same attempt do not make a second one, pending decisions count as handshakes, and
//! each decision (accept, refuse, retry, ignore) has its effect on the wire.

mod common;

use common::{NetConfig, Pair};
use mpquic_proto::{ConnectionError, ConnectionHandle, Duration, TransportConfig};

fn pair(seed: u64) -> Pair {
    let t = TransportConfig::default();
    let mut pair = Pair::new(seed, t.clone(), t, NetConfig::default());
    pair.server.set_incoming_decisions(true);
    pair
}

fn peer_code(pair: &Pair, ch: ConnectionHandle) -> Option<u64> {
    match pair.client.connection(ch).and_then(|c| c.error().cloned()) {
        Some(ConnectionError::PeerTransportClose { code, .. }) => Some(code),
        _ => None,
    }
}

#[test]
fn an_attempt_waits_for_the_decision_and_its_retransmissions_join_it() {
    let mut pair = pair(1);
    let ch = pair.connect();
    // Long enough for the client to retransmit its Initial (PTO), which must not become a
    // second attempt.
    pair.run_for(Duration::from_secs(3));
    let incoming = pair.server.poll_incoming().expect("an attempt");
    assert!(pair.server.poll_incoming().is_none(), "one attempt only");
    assert_eq!(pair.server.open_connections(), (0, 0), "no connection yet");
    assert_eq!(pair.server.pending_incoming(), 1);
    assert_eq!(incoming.remote_address(), pair.client_addr);
    assert!(!incoming.remote_address_validated());
    let now = pair.now;
    pair.server
        .accept_incoming(now, incoming)
        .expect("accepted");
    assert_eq!(pair.server.pending_incoming(), 0);
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established()
    });
}

#[test]
fn refused_and_retried_attempts_answer_on_the_wire() {
    let mut pair = pair(2);
    let refused = pair.connect();
    pair.run_for(Duration::from_millis(50));
    let incoming = pair.server.poll_incoming().expect("an attempt");
    pair.server.refuse_incoming(incoming);
    pair.run_until(Duration::from_secs(1), |p| {
        p.client
            .connection(refused)
            .is_none_or(|c| c.error().is_some())
    });
    assert_eq!(peer_code(&pair, refused), Some(0x02), "CONNECTION_REFUSED");
    assert_eq!(pair.server.stats().refused, 1);

    let retried = pair.connect();
    pair.run_for(Duration::from_millis(50));
    let first = pair.server.poll_incoming().expect("an attempt");
    let now = pair.now;
    pair.server.retry_incoming(now, first).expect("retry");
    pair.run_for(Duration::from_millis(50));
    let second = pair
        .server
        .poll_incoming()
        .expect("the attempt after the Retry");
    assert!(second.remote_address_validated());
    let now = pair.now;
    let second = pair
        .server
        .retry_incoming(now, second)
        .expect_err("one Retry per attempt")
        .0;
    pair.server.accept_incoming(now, *second).expect("accepted");
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(retried).unwrap().is_established()
    });
    assert_eq!(pair.server.stats().retries_sent, 1);
}

#[test]
fn pending_decisions_count_against_the_handshake_limit() {
    let mut pair = pair(3);
    let mut config = mpquic_proto::ServerConfig::clone(pair.server.server_config().unwrap());
    config.max_handshakes = 1;
    pair.server
        .set_server_config(Some(std::sync::Arc::new(config)));
    let _first = pair.connect();
    pair.run_for(Duration::from_millis(50));
    assert_eq!(pair.server.pending_incoming(), 1);
    let second = pair.connect();
    pair.run_until(Duration::from_secs(1), |p| {
        p.client
            .connection(second)
            .is_none_or(|c| c.error().is_some())
    });
    assert_eq!(peer_code(&pair, second), Some(0x02), "CONNECTION_REFUSED");
    // Ignoring the first attempt frees its place.
    let first = pair.server.poll_incoming().expect("first attempt");
    pair.server.ignore_incoming(first);
    assert_eq!(pair.server.pending_incoming(), 0);
}
