//! CPU work per packet against a hostile but authenticated peer: one that follows the wire
//! format yet chooses what it sends so that each of its packets costs us work that grows with
//! the connection's history. The figures are in `examples/hostile_cpu.rs`; these tests may not
//! time anything (two noisy cores), so each asserts on a structural count instead: the steps of
//! a loop (`mpquic_proto::testing` counters), the size of a structure, or how the connection
//! closes.

mod common;

use std::sync::Arc;

use common::{NetConfig, Pair};
use mpquic_proto::cc::{
    AckEvent, CcConfig, CcStats, CongestionController, ControllerFactory, Coupling, LossEvent,
};
use mpquic_proto::testing::reinjection_scan_steps;
use mpquic_proto::wire::frame::Frame;
use mpquic_proto::{ConnectionHandle, Duration, Timestamp, TransportConfig};

/// A congestion window that never closes: a hostile client keeps sending whether or not its
/// packets are acknowledged.
#[derive(Debug)]
struct Unlimited;

impl CongestionController for Unlimited {
    fn on_packet_sent(&mut self, _: Timestamp, _: u64, _: u64) {}
    fn on_ack(&mut self, _: &AckEvent<'_>, _: Coupling<'_>) {}
    fn on_congestion_event(&mut self, _: &LossEvent<'_>, _: Coupling<'_>) {}
    fn window(&self) -> u64 {
        1 << 40
    }
    fn name(&self) -> &'static str {
        "unlimited"
    }
    fn stats(&self) -> CcStats {
        CcStats::default()
    }
}

impl ControllerFactory for Unlimited {
    fn name(&self) -> &str {
        "unlimited"
    }
    fn build(&self, _: CcConfig) -> Box<dyn CongestionController> {
        Box::new(Unlimited)
    }
}

fn unacked_client() -> TransportConfig {
    TransportConfig::default()
        .with_congestion_controller_factory(Arc::new(Unlimited))
        .pacing(false)
}

fn encode(frames: &[Frame]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in frames {
        f.encode(&mut out);
    }
    out
}

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
