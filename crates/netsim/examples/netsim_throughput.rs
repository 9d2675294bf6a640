//! Simulator speed benchmark (no criterion): pushes ~35k 1400-byte packets
//! (~49 MB) through a 100 Mbit/s, 40 ms RTT path with a toy window sender
//! and reports simulated seconds and events per wall-clock second.
//!
//! Run with `cargo run --release -p mpquic-netsim --example netsim_throughput`.
//! (The wall clock is read here only, never inside the simulator.)

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::Instant;

use mpquic_netsim::time::{as_secs_f64, ms, secs};
use mpquic_netsim::toy::{ToyNode, WindowReceiver, WindowSender};
use mpquic_netsim::{LinkConfig, QueueLimit, Simulator, StopReason};

const PACKETS: u64 = 35_000;
const SIZE: usize = 1400;
const RATE_BPS: u64 = 100_000_000;

fn main() {
    let a = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
    let b = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
    let rtt = ms(40);
    let mut sim: Simulator<ToyNode> = Simulator::new(1);
    // Window slightly above the BDP (~357 packets) keeps the pipe full.
    let window = 400;
    let tx = WindowSender::new(
        SocketAddr::new(a, 4433),
        SocketAddr::new(b, 4433),
        SIZE,
        PACKETS,
        window,
        ms(500),
    );
    let tx = sim.add_node(ToyNode::Window(tx), [a]).expect("add sender");
    sim.add_background_node(ToyNode::Receiver(WindowReceiver::new(40)), [b])
        .expect("add receiver");
    let queue = QueueLimit::bdp_multiple(RATE_BPS, rtt, 1.0);
    let up = LinkConfig::rate(RATE_BPS)
        .with_delay(rtt / 2)
        .with_queue(queue);
    let down = LinkConfig::rate(RATE_BPS).with_delay(rtt / 2);
    sim.add_path(a, b, up, down).expect("add path");

    let wall = Instant::now();
    let out = sim.run_until(secs(600));
    let wall_s = wall.elapsed().as_secs_f64();

    let truth = sim.ground_truth();
    let sim_s = as_secs_f64(out.now);
    let data = &truth.links[0];
    let goodput = data.delivered.bytes as f64 * 8.0 / sim_s / 1e6;
    let retx = match sim.node(tx) {
        Some(ToyNode::Window(w)) => w.retransmissions,
        _ => 0,
    };
    assert_eq!(out.reason, StopReason::AllDone, "transfer did not finish");
    println!("transfer: {PACKETS} x {SIZE} B over 100 Mbit/s, RTT 40 ms, window {window}");
    println!(
        "packets: data {} delivered / {} dropped, acks {} delivered, {} retransmissions",
        data.delivered.packets,
        data.dropped.total().packets,
        truth.links[1].delivered.packets,
        retx
    );
    println!("simulated time: {sim_s:.3} s (goodput {goodput:.1} Mbit/s)");
    println!("events: {}", out.events);
    println!("wall time: {:.1} ms", wall_s * 1e3);
    println!("simulated seconds per wall second: {:.1}", sim_s / wall_s);
    println!("events per wall second: {:.0}", out.events as f64 / wall_s);
}
