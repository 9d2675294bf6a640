//! Simulator API: routing, stopping, stepping, timers, shared bottlenecks.

mod common;

use common::{cbr_over, drain, ip, sa, sink};
use mpquic_netsim::time::{ms, secs, us};
use mpquic_netsim::toy::{CbrSender, Sink, ToyNode, WindowReceiver, WindowSender};
use mpquic_netsim::{
    Datagram, LinkConfig, LossModel, Node, QueueLimit, SimError, SimTime, Simulator, StopReason,
};

#[test]
fn stop_reasons() {
    // Workload done.
    let (mut sim, ..) = cbr_over(1, LinkConfig::mbit(10.0), 100, ms(1), 10);
    let out = sim.run_until(secs(10));
    assert_eq!(out.reason, StopReason::AllDone);
    assert_eq!(out.now, ms(9));
    // Time limit: virtual time is set to the limit.
    let (mut sim, ..) = cbr_over(1, LinkConfig::mbit(10.0), 100, ms(1), 1000);
    let out = sim.run_until(ms(100));
    assert_eq!(out.reason, StopReason::TimeLimit);
    assert_eq!(sim.now(), ms(100));
    assert!(out.events > 0);
    // Idle: only background nodes, nothing left to do.
    let mut sim: Simulator<ToyNode> = Simulator::new(1);
    let tx = CbrSender::new(sa(1, 1), sa(2, 2), 100, ms(1), 5);
    sim.add_background_node(ToyNode::Cbr(tx), [ip(1)])
        .expect("add");
    let rx = sim
        .add_background_node(ToyNode::Sink(Sink::default()), [ip(2)])
        .expect("add");
    sim.add_path(ip(1), ip(2), LinkConfig::mbit(1.0), LinkConfig::mbit(1.0))
        .expect("path");
    let out = sim.run_until(secs(10));
    assert_eq!(out.reason, StopReason::Idle);
    assert_eq!(sink(&sim, rx).packets, 5);
    assert_eq!(sim.packets_in_flight(), 0);
}

#[test]
fn stepping_and_run_for() {
    let link = LinkConfig::mbit(1.0).with_delay(ms(10));
    let (mut sim, _, rx, up) = cbr_over(1, link, 1000, ms(2), 100);
    let out = sim.run_for(ms(50));
    assert_eq!(out.reason, StopReason::TimeLimit);
    assert_eq!(sim.now(), ms(50));
    // 1 Mbit/s drains 1000 B in 8 ms but 4 ms worth are offered: queue builds.
    let (bytes, packets) = sim.link_queue(up).expect("link");
    assert!(packets > 0 && bytes == packets as u64 * 1000);
    let before = sink(&sim, rx).packets;
    let t = sim.step().expect("more events");
    assert!(t >= ms(50));
    sim.run_for(ms(50));
    assert_eq!(sim.now(), t + ms(50));
    assert!(sink(&sim, rx).packets > before);
    assert!(sim.next_event_time().is_some());
}

#[test]
fn unroutable_packets_are_counted() {
    let mut sim: Simulator<ToyNode> = Simulator::new(1);
    // 10.0.0.3 has no route; 10.0.0.2 has a route but no node.
    let a = CbrSender::new(sa(1, 1), sa(3, 1), 100, ms(1), 4);
    let b = CbrSender::new(sa(4, 1), sa(2, 1), 50, ms(1), 3);
    sim.add_node(ToyNode::Cbr(a), [ip(1)]).expect("add");
    sim.add_node(ToyNode::Cbr(b), [ip(4)]).expect("add");
    let l = sim.add_link(LinkConfig::mbit(1.0)).expect("link");
    sim.add_route(ip(4), ip(2), &[l]).expect("route");
    let out = sim.run_until(secs(1));
    assert_eq!(out.reason, StopReason::AllDone);
    assert_eq!(sim.unroutable().packets, 7);
    assert_eq!(sim.unroutable().bytes, 4 * 100 + 3 * 50);
    assert_eq!(sim.ground_truth().unroutable.packets, 7);
    assert_eq!(sim.link_stats(l).expect("link").entered.packets, 0);
}

#[test]
fn configuration_errors() {
    let mut sim: Simulator<ToyNode> = Simulator::new(1);
    sim.add_node(ToyNode::Sink(Sink::default()), [ip(1)])
        .expect("add");
    let dup = sim.add_node(ToyNode::Sink(Sink::default()), [ip(2), ip(1)]);
    assert_eq!(dup.err(), Some(SimError::AddressInUse(ip(1))));
    assert!(matches!(
        sim.add_link(LinkConfig::rate(0)),
        Err(SimError::InvalidLink(_))
    ));
    assert!(sim
        .add_link(LinkConfig::mbit(1.0).with_loss(LossModel::bernoulli(2.0)))
        .is_err());
    assert!(matches!(
        sim.add_route(ip(1), ip(2), &[]),
        Err(SimError::EmptyRoute { .. })
    ));
    let l = sim.add_link(LinkConfig::mbit(1.0)).expect("link");
    let other = {
        let mut s2: Simulator<ToyNode> = Simulator::new(1);
        s2.add_link(LinkConfig::mbit(1.0)).expect("l");
        s2.add_link(LinkConfig::mbit(1.0)).expect("l")
    };
    assert_eq!(
        sim.add_route(ip(1), ip(2), &[l, other]),
        Err(SimError::UnknownLink(other))
    );
    assert!(sim
        .schedule_link_action(other, 0, mpquic_netsim::LinkAction::Down)
        .is_err());
    // Nothing was left half-registered by the failed calls.
    assert_eq!(sim.link_count(), 1);
    assert_eq!(sim.node_by_addr(ip(2)), None);
}

#[test]
fn shared_bottleneck_routes() {
    // Two senders, each with its own access link, share one bottleneck.
    let mut sim: Simulator<ToyNode> = Simulator::new(1);
    for n in [1u8, 2] {
        // 8 Mbit/s each: 1000 B every 1 ms.
        let tx = CbrSender::new(sa(n, 1), sa(9, 1), 1000, ms(1), 1000);
        sim.add_node(ToyNode::Cbr(tx), [ip(n)]).expect("add");
    }
    let rx = sim
        .add_background_node(ToyNode::Sink(Sink::default()), [ip(9)])
        .expect("add");
    let acc1 = sim
        .add_link(LinkConfig::mbit(100.0).with_delay(ms(1)))
        .expect("l");
    let acc2 = sim
        .add_link(LinkConfig::mbit(100.0).with_delay(ms(3)))
        .expect("l");
    let neck = sim
        .add_link(
            LinkConfig::mbit(10.0)
                .with_delay(ms(10))
                .with_queue(QueueLimit::Bytes(20_000)),
        )
        .expect("l");
    sim.add_route(ip(1), ip(9), &[acc1, neck]).expect("r");
    sim.add_route(ip(2), ip(9), &[acc2, neck]).expect("r");
    drain(&mut sim);
    let neck_stats = sim.link_stats(neck).expect("neck");
    assert_eq!(neck_stats.entered.packets, 2000);
    assert!(neck_stats.dropped.queue_overflow.packets > 600);
    let delivered = neck_stats.delivered.packets;
    assert_eq!(sink(&sim, rx).packets, delivered);
    let r1 = sim.route_stats(ip(1), ip(9)).expect("route");
    let r2 = sim.route_stats(ip(2), ip(9)).expect("route");
    assert_eq!(r1.delivered.packets + r2.delivered.packets, delivered);
    // Base one-way delay: access delay + ser (80 us) + 10 ms + ser (800 us).
    assert_eq!(r1.one_way_delay.min_ns, ms(11) + us(880));
    assert_eq!(r2.one_way_delay.min_ns, ms(13) + us(880));
    // Queueing at the bottleneck is bounded by 20 kB / 10 Mbit/s = 16 ms.
    assert!(r1.one_way_delay.max_ns <= ms(11) + us(880) + ms(16));
}

#[test]
fn rtt_at_combines_both_directions() {
    let mut sim: Simulator<ToyNode> = Simulator::new(1);
    let tx = WindowSender::new(sa(1, 1), sa(2, 1), 1000, 200, 4, ms(500));
    sim.add_node(ToyNode::Window(tx), [ip(1)]).expect("add");
    sim.add_background_node(ToyNode::Receiver(WindowReceiver::new(40)), [ip(2)])
        .expect("add");
    let up = LinkConfig::mbit(80.0).with_delay(ms(10)); // 1000 B: 100 us
    let down = LinkConfig::mbit(32.0).with_delay(ms(15)); // 40 B: 10 us
    sim.add_path(ip(1), ip(2), up, down).expect("path");
    assert_eq!(sim.run_until(secs(5)).reason, StopReason::AllDone);
    let rtt = sim.rtt_at(ip(1), ip(2), 0).expect("rtt");
    assert_eq!(rtt, ms(25) + us(110));
    assert_eq!(sim.min_one_way_delay(ip(2), ip(1)), Some(ms(15) + us(10)));
    assert!(!sim.route_delay_series(ip(1), ip(2)).is_empty());
    assert!(sim.route_delay_series(ip(1), ip(7)).is_empty());
    let sender = match sim.node(mpquic_netsim::NodeId::clone(
        &sim.node_by_addr(ip(1)).expect("node"),
    )) {
        Some(ToyNode::Window(w)) => w.clone(),
        _ => panic!("not a window sender"),
    };
    assert_eq!(sender.rtt.min_ns, rtt);
}

#[test]
fn window_sender_is_reliable_under_loss() {
    let mut sim: Simulator<ToyNode> = Simulator::new(11);
    let tx = WindowSender::new(sa(1, 1), sa(2, 1), 1200, 3000, 40, ms(100));
    let tx = sim.add_node(ToyNode::Window(tx), [ip(1)]).expect("add");
    let rx = sim
        .add_background_node(ToyNode::Receiver(WindowReceiver::new(40)), [ip(2)])
        .expect("add");
    let up = LinkConfig::mbit(20.0)
        .with_delay(ms(10))
        .with_loss(LossModel::bernoulli(0.02))
        .with_queue(QueueLimit::Packets(30));
    let down = LinkConfig::mbit(20.0)
        .with_delay(ms(10))
        .with_loss(LossModel::bernoulli(0.02));
    sim.add_path(ip(1), ip(2), up, down).expect("path");
    let out = sim.run_until(secs(60));
    assert_eq!(out.reason, StopReason::AllDone);
    let Some(ToyNode::Window(s)) = sim.node(tx) else {
        panic!("sender")
    };
    assert!(s.retransmissions > 20, "{}", s.retransmissions);
    assert!(s.completed_at.is_some());
    let Some(ToyNode::Receiver(r)) = sim.node(rx) else {
        panic!("receiver")
    };
    assert_eq!(r.unique, 3000);
}

/// A node whose timers are scripted: records when `handle_timeout` runs.
#[derive(Default)]
struct TimerNode {
    deadline: Option<SimTime>,
    fired: Vec<SimTime>,
    script: Vec<(SimTime, Option<SimTime>)>,
}

impl Node for TimerNode {
    fn handle_datagram(&mut self, _now: SimTime, _d: Datagram) {}
    fn poll_transmit(&mut self, _now: SimTime) -> Option<Datagram> {
        None
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        self.deadline
    }
    fn handle_timeout(&mut self, now: SimTime) {
        assert!(self.deadline.is_some_and(|d| d <= now), "fired early");
        self.fired.push(now);
        // Next deadline from the script: (fire time, next deadline).
        self.deadline = self
            .script
            .iter()
            .find(|(t, _)| *t == now)
            .and_then(|(_, d)| *d);
    }
    fn is_done(&self) -> bool {
        self.deadline.is_none()
    }
}

#[test]
fn node_timers_fire_exactly_and_stale_ones_are_ignored() {
    let mut sim: Simulator<TimerNode> = Simulator::new(1);
    let node = TimerNode {
        deadline: Some(ms(10)),
        fired: Vec::new(),
        script: vec![(ms(10), Some(ms(30))), (ms(30), Some(ms(5))), (ms(5), None)],
    };
    let id = sim.add_node(node, [ip(1)]).expect("add");
    sim.run_until(ms(20));
    // Push the pending deadline later, then earlier, via node_mut + wake.
    sim.node_mut(id).expect("node").deadline = Some(ms(40));
    sim.wake(id).expect("wake");
    sim.run_until(ms(35));
    assert_eq!(sim.node(id).expect("node").fired, vec![ms(10)]);
    sim.node_mut(id).expect("node").deadline = Some(ms(38));
    sim.node_mut(id).expect("node").script.push((ms(38), None));
    sim.wake(id).expect("wake");
    let out = sim.run_until(secs(1));
    assert_eq!(out.reason, StopReason::AllDone);
    assert_eq!(sim.node(id).expect("node").fired, vec![ms(10), ms(38)]);
    assert_eq!(sim.now(), ms(38));
    // A past deadline fires immediately.
    sim.node_mut(id).expect("node").deadline = Some(ms(1));
    sim.node_mut(id).expect("node").script.push((ms(38), None));
    sim.wake(id).expect("wake");
    sim.run_until(secs(1));
    assert_eq!(sim.node(id).expect("node").fired.last(), Some(&ms(38)));
    assert!(sim.wake(mpquic_netsim::NodeId::clone(&id)).is_ok());
}

#[test]
fn boxed_heterogeneous_nodes_and_into_nodes() {
    let mut sim: Simulator = Simulator::new(3);
    let tx = CbrSender::new(sa(1, 1), sa(2, 1), 300, ms(1), 20);
    sim.add_node(Box::new(tx), [ip(1)]).expect("add");
    sim.add_node(Box::new(Sink::default().expecting(20)), [ip(2)])
        .expect("add");
    sim.add_path(ip(1), ip(2), LinkConfig::mbit(5.0), LinkConfig::mbit(5.0))
        .expect("path");
    let out = sim.run_until(secs(1));
    assert_eq!(out.reason, StopReason::AllDone);
    let nodes = sim.into_nodes();
    assert_eq!(nodes.len(), 2);
    assert!(nodes.iter().all(|n| n.is_done()));
}

#[test]
fn derived_seeds_are_deterministic_and_distinct() {
    let a: Simulator<ToyNode> = Simulator::new(42);
    let b: Simulator<ToyNode> = Simulator::new(42);
    let c: Simulator<ToyNode> = Simulator::new(43);
    assert_eq!(a.derive_seed("client"), b.derive_seed("client"));
    assert_ne!(a.derive_seed("client"), a.derive_seed("server"));
    assert_ne!(a.derive_seed("client"), c.derive_seed("client"));
    assert_eq!(a.seed(), 42);
}

/// A node that reports a deadline its `handle_timeout` never consumes (found in the lab: a
/// client workload whose scheduled move was due but not attempted before the handshake
/// completed) stops the run as `Stuck` instead of spinning at one instant for ever.
#[test]
fn a_timer_that_never_moves_on_stops_the_run() {
    struct Stuck {
        fired: u32,
    }
    impl Node for Stuck {
        fn handle_datagram(&mut self, _: SimTime, _: Datagram) {}
        fn poll_transmit(&mut self, _: SimTime) -> Option<Datagram> {
            None
        }
        fn poll_timeout(&mut self) -> Option<SimTime> {
            Some(ms(5))
        }
        fn handle_timeout(&mut self, _: SimTime) {
            self.fired += 1;
        }
        fn is_done(&self) -> bool {
            false
        }
    }
    let mut sim: Simulator<Stuck> = Simulator::new(1);
    let node = sim.add_node(Stuck { fired: 0 }, [ip(1)]).expect("add");
    let out = sim.run_until(secs(10));
    assert_eq!(out.reason, StopReason::Stuck);
    assert_eq!(sim.now(), ms(5));
    let fired = sim.node(node).expect("node").fired;
    assert_eq!(fired, mpquic_netsim::MAX_TIMER_FIRES_PER_MS + 1);
}
