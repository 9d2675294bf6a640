//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use mpquic_netsim::toy::{CbrSender, Sink, ToyNode};
use mpquic_netsim::{LinkConfig, LinkId, NodeId, SimTime, Simulator};

/// `10.0.0.n`.
pub fn ip(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, n))
}

/// `10.0.0.n:port`.
pub fn sa(n: u8, port: u16) -> SocketAddr {
    SocketAddr::new(ip(n), port)
}

/// A CBR sender at 10.0.0.1 sending to a recording sink at 10.0.0.2 over
/// `link` (reverse direction unlimited). Returns `(sim, sender, sink, link)`.
pub fn cbr_over(
    seed: u64,
    link: LinkConfig,
    size: usize,
    interval: SimTime,
    count: u64,
) -> (Simulator<ToyNode>, NodeId, NodeId, LinkId) {
    let mut sim = Simulator::new(seed);
    let tx = CbrSender::new(sa(1, 1000), sa(2, 2000), size, interval, count);
    let tx = sim.add_node(ToyNode::Cbr(tx), [ip(1)]).expect("add sender");
    let rx = sim
        .add_background_node(ToyNode::Sink(Sink::recording()), [ip(2)])
        .expect("add sink");
    let (up, _) = sim
        .add_path(ip(1), ip(2), link, LinkConfig::unlimited())
        .expect("add path");
    (sim, tx, rx, up)
}

/// The sink node's state.
pub fn sink(sim: &Simulator<ToyNode>, id: NodeId) -> &Sink {
    match sim.node(id) {
        Some(ToyNode::Sink(s)) => s,
        other => panic!("node {id:?} is not a sink: {other:?}"),
    }
}

/// Runs until the network has drained completely (or 1000 s).
pub fn drain(sim: &mut Simulator<ToyNode>) {
    let out = sim.run_until(mpquic_netsim::time::secs(1000));
    assert_ne!(out.reason, mpquic_netsim::StopReason::TimeLimit);
    // Background nodes keep nothing scheduled, so this runs until idle.
    while sim.step().is_some() {}
}

/// Throughput in bit/s between first and last arrival of a sink,
/// counting the bytes after the first packet.
pub fn sink_rate_bps(s: &Sink) -> f64 {
    let (Some(first), Some(last)) = (s.first_arrival, s.last_arrival) else {
        return 0.0;
    };
    let per_packet = s.bytes as f64 / s.packets as f64;
    let bits = (s.packets - 1) as f64 * per_packet * 8.0;
    bits / ((last - first) as f64 / 1e9)
}
