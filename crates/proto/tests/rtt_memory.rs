//! RTT remembered across connections (RFC 9002 §6.2.2, `ClientConfig::with_rtt_memory`): a
//! second connection over the same addresses whose first Initial is lost sends it again after
//! about three of the first connection's RTTs, not after the 1 s a 333 ms initial RTT gives.

mod common;

use std::cell::Cell;
use std::rc::Rc;

use bytes::Bytes;
use common::{NetConfig, Pair};
use mpquic_proto::{Duration, Timestamp, TransportConfig};

/// Runs a first connection to completion (closed and drained), then a second one whose first
/// datagram to the server is dropped; returns how long the second took to be established.
fn second_handshake_after_a_lost_initial(remember: bool) -> Duration {
    let transport = || TransportConfig::default();
    let mut pair = Pair::new(21, transport(), transport(), NetConfig::default());
    if remember {
        pair.client_config = pair.client_config.clone().with_rtt_memory();
    }
    let first = pair.connect();
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(first).unwrap().is_established()
    });
    pair.run_for(Duration::from_millis(100));
    let now = pair.now;
    pair.client
        .connection_mut(first)
        .unwrap()
        .close(now, 0, Bytes::new());
    pair.client.after_connection_call(first);
    pair.run_until(Duration::from_secs(10), |p| {
        p.client.connection(first).unwrap().is_drained()
    });
    // The next datagram towards the server (the second connection's first Initial) is lost.
    let drop_next = Rc::new(Cell::new(true));
    let drop = drop_next.clone();
    pair.tap = Some(Box::new(move |_, to_server, _| {
        !(to_server && drop.replace(false))
    }));
    let started: Timestamp = pair.now;
    let second = pair.connect();
    pair.run_until(Duration::from_secs(10), |p| {
        p.client.connection(second).unwrap().is_established()
    });
    assert!(!drop_next.get(), "the first Initial was dropped");
    pair.now.saturating_duration_since(started)
}

#[test]
fn a_remembered_rtt_resends_a_lost_first_initial_within_a_few_rtts() {
    // 20 ms round trips: with the first connection's RTT the lost Initial goes again after
    // about 60 ms (PTO: srtt + 4 rttvar from a first sample of 20 ms, RFC 9002 §6.2.1).
    let with = second_handshake_after_a_lost_initial(true);
    assert!(
        with < Duration::from_millis(200),
        "{with:?} with the RTT remembered"
    );
}

#[test]
fn without_rtt_memory_a_lost_first_initial_waits_a_second() {
    // The control: 333 ms initial RTT, PTO about 1 s (RFC 9002 §6.2.2).
    let without = second_handshake_after_a_lost_initial(false);
    assert!(
        without > Duration::from_millis(900),
        "{without:?} without memory"
    );
}
