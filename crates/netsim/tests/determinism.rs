//! Same configuration + seed => identical ground truth.

mod common;

use common::{ip, sa};
use mpquic_netsim::time::{ms, secs};
use mpquic_netsim::toy::{CbrSender, Sink, ToyNode, WindowReceiver, WindowSender};
use mpquic_netsim::{GroundTruth, LinkConfig, LossModel, QueueLimit, Simulator};

/// A busy scenario exercising every source of randomness: a reliable
/// window flow and CBR cross traffic share a lossy, jittery bottleneck; the
/// reverse path is a generated trace with Gilbert–Elliott loss.
fn scenario(seed: u64, extra_link: bool) -> (GroundTruth, Vec<(u64, u64)>, String) {
    let mut sim: Simulator<ToyNode> = Simulator::new(seed);
    let tx = WindowSender::new(sa(1, 1), sa(2, 1), 1200, 2000, 30, ms(150));
    sim.add_node(ToyNode::Window(tx), [ip(1)]).expect("add");
    sim.add_background_node(ToyNode::Receiver(WindowReceiver::new(48)), [ip(2)])
        .expect("add");
    let cross = CbrSender::new(sa(3, 1), sa(4, 1), 1000, ms(2), 1500);
    sim.add_background_node(ToyNode::Cbr(cross), [ip(3)])
        .expect("add");
    let sink = sim
        .add_background_node(ToyNode::Sink(Sink::recording()), [ip(4)])
        .expect("add");
    let neck = LinkConfig::mbit(12.0)
        .with_delay(ms(15))
        .with_queue(QueueLimit::bdp_multiple(12_000_000, ms(40), 1.0))
        .with_loss(LossModel::bernoulli(0.01))
        .with_jitter(ms(2), true);
    let neck = sim.add_link(neck).expect("link");
    let trace = mpquic_netsim::generate::wifi_like(seed, 10_000).expect("gen");
    let back = LinkConfig::trace(trace)
        .with_delay(ms(20))
        .with_loss(LossModel::gilbert_elliott(0.02, 0.3, 0.0, 0.8));
    let back = sim.add_link(back).expect("link");
    let access = sim.add_link(LinkConfig::mbit(100.0)).expect("link");
    sim.add_route(ip(1), ip(2), &[neck]).expect("route");
    sim.add_route(ip(2), ip(1), &[back]).expect("route");
    sim.add_route(ip(3), ip(4), &[access, neck]).expect("route");
    if extra_link {
        let l = LinkConfig::mbit(1.0).with_loss(LossModel::bernoulli(0.5));
        let extra = sim.add_link(l).expect("link");
        sim.add_route(ip(4), ip(3), &[extra]).expect("route");
    }
    sim.run_until(secs(30));
    let arrivals = match sim.node(sink) {
        Some(ToyNode::Sink(s)) => s.arrivals.clone(),
        _ => Vec::new(),
    };
    let truth = sim.ground_truth();
    let json = serde_json::to_string(&truth).expect("json");
    (truth, arrivals, json)
}

#[test]
fn same_seed_gives_identical_results() {
    let (a, arr_a, json_a) = scenario(7, false);
    let (b, arr_b, json_b) = scenario(7, false);
    assert_eq!(a, b);
    assert_eq!(arr_a, arr_b);
    assert_eq!(json_a, json_b);
    assert!(a.links[0].dropped.random_loss.packets > 0);
    // The window flow (2000 packets) and the cross traffic both got through.
    assert!(a.links[0].delivered.packets > 3000, "{:?}", a.links[0]);
    assert!(a.links[1].delivered.packets > 1900, "{:?}", a.links[1]);
    assert_eq!(a.routes.len(), 3);
    assert!(a.links[1].dropped.random_loss.packets > 0);
}

#[test]
fn different_seeds_differ() {
    let (a, arr_a, _) = scenario(7, false);
    let (b, arr_b, _) = scenario(8, false);
    assert_ne!(a, b);
    assert_ne!(arr_a, arr_b);
}

#[test]
fn adding_a_link_does_not_perturb_other_links() {
    let (a, arr_a, _) = scenario(7, false);
    let (b, arr_b, _) = scenario(7, true);
    assert_eq!(a.links[..3], b.links[..3]);
    assert_eq!(arr_a, arr_b);
    assert_eq!(b.links.len(), 4);
}

#[test]
fn ground_truth_serializes() {
    let (a, _, json) = scenario(1, false);
    let back: GroundTruth = serde_json::from_str(&json).expect("parse");
    assert_eq!(a, back);
}
