//! Link behaviour: capacity, delay, queues, loss, traces, events, jitter.

mod common;

use common::{cbr_over, drain, sink, sink_rate_bps};
use mpquic_netsim::time::{ms, secs, us};
use mpquic_netsim::{
    Capacity, DropCause, LinkAction, LinkConfig, LossModel, MahimahiTrace, QueueLimit,
};

#[test]
fn fixed_rate_link_delivers_at_capacity() {
    // Offer 20 Mbit/s to a 10 Mbit/s link with an infinite queue.
    let link = LinkConfig::mbit(10.0).with_delay(ms(20));
    let (mut sim, _, rx, up) = cbr_over(1, link, 1250, us(500), 4000);
    drain(&mut sim);
    let s = sink(&sim, rx);
    assert_eq!(s.packets, 4000);
    let rate = sink_rate_bps(s);
    assert!((rate / 10e6 - 1.0).abs() < 0.01, "rate {rate}");
    let st = sim.link_stats(up).expect("link");
    assert_eq!(st.delivered.packets, 4000);
    assert_eq!(st.entered.bytes, 4000 * 1250);
}

#[test]
fn one_way_delay_is_propagation_plus_serialization_plus_queueing() {
    // 1000 B at 8 Mbit/s = 1 ms serialization; 10 ms propagation.
    let link = LinkConfig::mbit(8.0).with_delay(ms(10));
    let (mut sim, _, rx, up) = cbr_over(1, link, 1000, 0, 3);
    drain(&mut sim);
    let arrivals: Vec<u64> = sink(&sim, rx).arrivals.iter().map(|a| a.0).collect();
    // Burst of 3 at t=0: the 2nd waits 1 ms, the 3rd 2 ms in the queue.
    assert_eq!(arrivals, vec![ms(11), ms(12), ms(13)]);
    let st = sim.link_stats(up).expect("link");
    assert_eq!(st.queue_delay.min_ns, 0);
    assert_eq!(st.queue_delay.max_ns, ms(2));
    assert_eq!(st.transit_delay.max_ns, ms(13));
    let (a, b) = (common::ip(1), common::ip(2));
    assert_eq!(sim.min_one_way_delay(a, b), Some(ms(11)));
    assert_eq!(
        sim.route_stats(a, b).map(|r| r.one_way_delay.max_ns),
        Some(ms(13))
    );
}

#[test]
fn drop_tail_drops_exactly_beyond_the_limit() {
    // 10 packets at once; one goes straight onto the wire, the queue holds
    // the limit, the rest overflow.
    for (limit, delivered) in [
        (QueueLimit::Packets(3), 4),
        (QueueLimit::Bytes(2500), 3),
        (QueueLimit::Bytes(3000), 4),
        (QueueLimit::Packets(0), 1),
        (QueueLimit::Infinite, 10),
    ] {
        let link = LinkConfig::mbit(1.0).with_queue(limit);
        let (mut sim, _, rx, up) = cbr_over(1, link, 1000, 0, 10);
        drain(&mut sim);
        let st = sim.link_stats(up).expect("link");
        assert_eq!(st.delivered.packets, delivered, "{limit:?}");
        assert_eq!(
            st.dropped.queue_overflow.packets,
            10 - delivered,
            "{limit:?}"
        );
        assert_eq!(st.dropped.total().packets, 10 - delivered);
        assert_eq!(sink(&sim, rx).packets, delivered);
        match limit {
            QueueLimit::Bytes(n) => assert!(st.queue.max_bytes <= n),
            QueueLimit::Packets(n) => assert!(st.queue.max_bytes <= n * 1000),
            QueueLimit::Infinite => assert_eq!(st.queue.max_bytes, 9000),
        }
    }
}

#[test]
fn bernoulli_loss_rate_matches_p() {
    let link = LinkConfig::unlimited().with_loss(LossModel::bernoulli(0.1));
    let n = 100_000;
    let (mut sim, _, rx, up) = cbr_over(9, link, 100, us(10), n);
    drain(&mut sim);
    let st = sim.link_stats(up).expect("link");
    let lost = st.dropped.get(DropCause::RandomLoss).packets;
    let rate = lost as f64 / n as f64;
    assert!((rate - 0.1).abs() < 0.005, "loss rate {rate}");
    assert_eq!(lost + sink(&sim, rx).packets, n);
}

/// Mean length of runs of consecutive missing sequence numbers.
fn mean_loss_burst(received: &[u64], n: u64) -> f64 {
    let mut got = vec![false; n as usize];
    for &s in received {
        got[s as usize] = true;
    }
    let (mut bursts, mut lost, mut prev_lost) = (0u64, 0u64, false);
    for g in got {
        if !g {
            lost += 1;
            if !prev_lost {
                bursts += 1;
            }
        }
        prev_lost = !g;
    }
    lost as f64 / bursts.max(1) as f64
}

#[test]
fn gilbert_elliott_produces_bursts() {
    let n = 50_000;
    let ge = LossModel::gilbert_elliott(0.01, 0.2, 0.0, 1.0);
    let run = |loss: LossModel| {
        let link = LinkConfig::unlimited().with_loss(loss);
        let (mut sim, _, rx, _) = cbr_over(5, link, 100, us(10), n);
        drain(&mut sim);
        let seqs: Vec<u64> = sink(&sim, rx).arrivals.iter().map(|a| a.1).collect();
        (n - seqs.len() as u64, mean_loss_burst(&seqs, n))
    };
    let (ge_lost, ge_burst) = run(ge);
    let (b_lost, b_burst) = run(LossModel::bernoulli(ge.mean_loss()));
    let ge_rate = ge_lost as f64 / n as f64;
    assert!((ge_rate - ge.mean_loss()).abs() < 0.01, "ge rate {ge_rate}");
    assert!((b_lost as f64 / n as f64 - ge.mean_loss()).abs() < 0.01);
    // Expected burst length 1 / p_bad_to_good = 5 for GE, ~1.05 for Bernoulli.
    assert!(ge_burst > 3.5, "GE mean burst {ge_burst}");
    assert!(b_burst < 1.5, "Bernoulli mean burst {b_burst}");
}

#[test]
fn trace_of_one_is_12_mbit() {
    let trace = MahimahiTrace::parse("1\n", "one").expect("trace");
    let link = LinkConfig::trace(trace).with_delay(ms(5));
    // Offer ~24 Mbit/s of 1500-byte packets.
    let (mut sim, _, rx, _) = cbr_over(1, link, 1500, us(500), 4000);
    drain(&mut sim);
    let s = sink(&sim, rx);
    let rate = sink_rate_bps(s);
    assert!((rate / 12e6 - 1.0).abs() < 0.01, "rate {rate}");
    // One packet per millisecond opportunity, starting at 1 ms (+5 ms delay).
    assert_eq!(s.arrivals[0].0, ms(6));
    assert_eq!(s.arrivals[1].0, ms(7));
}

#[test]
fn trace_opportunity_carries_whole_packets_that_fit() {
    let run = |size: usize| {
        let link = LinkConfig::trace(MahimahiTrace::parse("1", "one").expect("trace"));
        let (mut sim, _, rx, _) = cbr_over(1, link, size, 0, 30);
        sim.advance_to(ms(10));
        sink(&sim, rx).packets
    };
    // Opportunities at 1..=10 ms: 10 of them by t = 10 ms.
    assert_eq!(run(1000), 10); // 1000 + 1000 > 1500: one per opportunity
    assert_eq!(run(500), 30); // three 500-byte packets per opportunity
    assert_eq!(run(700), 20); // two per opportunity, 100 bytes wasted
    assert_eq!(run(3000), 10); // oversized: one per fresh opportunity
}

#[test]
fn trace_repeats_with_its_period() {
    let trace = MahimahiTrace::parse("3\n3\n10\n", "rep").expect("trace");
    let link = LinkConfig::trace(trace);
    let (mut sim, _, rx, _) = cbr_over(1, link, 1500, 0, 9);
    drain(&mut sim);
    let times: Vec<u64> = sink(&sim, rx).arrivals.iter().map(|a| a.0).collect();
    let expect: Vec<u64> = [3, 3, 10, 13, 13, 20, 23, 23, 30].map(ms).to_vec();
    assert_eq!(times, expect);
}

#[test]
fn trace_link_long_run_rate_matches_mean() {
    let trace = mpquic_netsim::generate::lte_like(4, 20_000).expect("gen");
    let mean = trace.mean_rate_bps();
    let link = LinkConfig::trace(trace);
    // Saturate with 1500-byte packets at ~60 Mbit/s for one full period.
    let (mut sim, _, rx, up) = cbr_over(1, link, 1500, us(200), 100_000);
    sim.run_until(ms(20_000));
    let got = sink(&sim, rx).bytes as f64 * 8.0 / 20.0;
    assert!((got / mean - 1.0).abs() < 0.01, "got {got} mean {mean}");
    assert!(sim.link_stats(up).expect("link").queue.max_bytes > 0);
}

#[test]
fn link_down_drops_and_up_recovers() {
    // 1000 B at 100 Mbit/s = 80 us; packet k sent at k ms arrives at k + 5.08 ms.
    let link = LinkConfig::mbit(100.0)
        .with_delay(ms(5))
        .down_at(ms(30))
        .up_at(ms(60));
    let (mut sim, _, rx, up) = cbr_over(1, link, 1000, ms(1), 100);
    sim.run_until(ms(45));
    assert_eq!(sim.link_is_up(up), Some(false));
    drain(&mut sim);
    let st = sim.link_stats(up).expect("link");
    // Lost: 25..=29 while propagating, 30..=59 while down.
    assert_eq!(st.dropped.link_down.packets, 35);
    assert_eq!(st.delivered.packets, 65);
    let seqs: Vec<u64> = sink(&sim, rx).arrivals.iter().map(|a| a.1).collect();
    let expect: Vec<u64> = (0..25).chain(60..100).collect();
    assert_eq!(seqs, expect);
    assert_eq!(sim.link_is_up(up), Some(true));
}

#[test]
fn link_down_drops_queued_packets() {
    let link = LinkConfig::mbit(1.0).down_at(ms(10));
    let (mut sim, _, rx, up) = cbr_over(1, link, 1000, 0, 10);
    drain(&mut sim);
    // 8 ms per packet: #0 done at 8 ms; #1 on the wire and 8 queued at 10 ms.
    let st = sim.link_stats(up).expect("link");
    assert_eq!(st.delivered.packets, 1);
    assert_eq!(st.dropped.link_down.packets, 9);
    assert_eq!(sim.link_queue(up), Some((0, 0)));
    assert_eq!(sink(&sim, rx).packets, 1);
}

#[test]
fn reordering_only_with_jitter_and_permission() {
    let run = |link: LinkConfig| {
        let (mut sim, _, rx, _) = cbr_over(3, link, 200, us(100), 5000);
        drain(&mut sim);
        let s = sink(&sim, rx);
        assert_eq!(s.packets, 5000);
        (s.reordered, s.delay.max_ns)
    };
    let base = LinkConfig::mbit(100.0).with_delay(ms(10));
    assert_eq!(run(base.clone()).0, 0);
    let (reordered, max_delay) = run(base.clone().with_jitter(ms(5), false));
    assert_eq!(reordered, 0);
    assert!(max_delay > ms(14), "jitter applied: {max_delay}");
    let (reordered, _) = run(base.with_jitter(ms(5), true));
    assert!(reordered > 100, "reordered {reordered}");
}

#[test]
fn delay_schedule_changes_delay_without_reordering() {
    let link = LinkConfig::mbit(100.0)
        .with_delay(ms(20))
        .with_delay_schedule(&[(ms(50), ms(5)), (ms(100), ms(30))]);
    let (mut sim, _, rx, _) = cbr_over(1, link, 1000, ms(1), 150);
    drain(&mut sim);
    assert_eq!(sink(&sim, rx).reordered, 0);
    let (a, b) = (common::ip(1), common::ip(2));
    let d = |t| sim.one_way_delay_at(a, b, t).expect("sample");
    assert_eq!(d(ms(10)), ms(20) + us(80));
    assert_eq!(d(ms(80)), ms(5) + us(80));
    assert_eq!(d(ms(120)), ms(30) + us(80));
    // Right after the decrease, packets are held behind their predecessors.
    assert!(d(ms(51)) > ms(5) + us(80));
}

#[test]
fn set_rate_event_changes_throughput() {
    let link = LinkConfig::mbit(10.0).with_event(
        secs(1),
        LinkAction::SetRate {
            bits_per_sec: 20_000_000,
        },
    );
    // Offer 40 Mbit/s for 2 s with an infinite queue.
    let (mut sim, _, rx, up) = cbr_over(1, link, 1250, us(250), 8000);
    sim.run_until(secs(1));
    let first = sim.link_stats(up).expect("link").delivered.bytes;
    sim.run_until(secs(2));
    let second = sim.link_stats(up).expect("link").delivered.bytes - first;
    assert!((first as f64 * 8.0 / 10e6 - 1.0).abs() < 0.01, "{first}");
    assert!((second as f64 * 8.0 / 20e6 - 1.0).abs() < 0.01, "{second}");
    let _ = rx;
}

#[test]
fn capacity_switch_between_rate_and_trace() {
    let trace = MahimahiTrace::constant(2); // 24 Mbit/s
    let link = LinkConfig::mbit(6.0)
        .with_event(secs(1), LinkAction::SetCapacity(Capacity::Trace(trace)))
        .with_event(secs(2), LinkAction::SetCapacity(Capacity::Unlimited));
    let (mut sim, _, _, up) = cbr_over(1, link, 1500, us(250), 12_000);
    let mut delivered = Vec::new();
    for t in 1..=3 {
        // Just before each switch (the switch to unlimited dumps the backlog).
        sim.advance_to(secs(t) - 1);
        delivered.push(sim.link_stats(up).expect("link").delivered.bytes);
    }
    let mbit = |b: u64| b as f64 * 8.0 / 1e6;
    assert!((mbit(delivered[0]) - 6.0).abs() < 0.1, "{delivered:?}");
    assert!(
        (mbit(delivered[1] - delivered[0]) - 24.0).abs() < 0.2,
        "{delivered:?}"
    );
    // Unlimited: the backlog drains at once, then the 48 Mbit/s offered load.
    assert!(mbit(delivered[2] - delivered[1]) > 48.0, "{delivered:?}");
}

#[test]
fn queue_occupancy_is_recorded_and_bounded() {
    let link = LinkConfig::mbit(10.0).with_queue(QueueLimit::Bytes(50_000));
    let (mut sim, _, _, up) = cbr_over(1, link, 1000, us(400), 5000);
    drain(&mut sim);
    let st = sim.link_stats(up).expect("link");
    assert!(st.dropped.queue_overflow.packets > 0);
    assert!(st.queue.max_bytes <= 50_000 && st.queue.max_bytes >= 49_000);
    // At most one sample per millisecond of activity.
    let span = st.queue.samples.last().expect("samples").time;
    assert!(st.queue.samples.len() as u64 <= span / ms(1) + 1);
    assert!(st.queue.samples.windows(2).all(|w| w[0].time < w[1].time));
    let mean = st.queue.mean_bytes(sim.now());
    assert!(mean > 30_000.0 && mean < 50_000.0, "mean {mean}");
    let qd = st.queue_delay.mean_ns().expect("delays");
    // ~49 kB at 10 Mbit/s is ~39 ms of queueing in steady state.
    assert!(qd > ms(25) as f64 && qd < ms(41) as f64, "{qd}");
}

#[test]
fn packets_above_the_link_mtu_are_dropped_and_counted() {
    // 10 packets of 1400 bytes over a link carrying at most 1300, which rises to 1500 at 5 ms
    // (one packet per millisecond): the first five are dropped as too large.
    let link = LinkConfig::unlimited()
        .with_mtu(1300)
        .with_event(us(4500), LinkAction::SetMtu(Some(1500)));
    let (mut sim, _, rx, up) = cbr_over(1, link, 1400, ms(1), 10);
    drain(&mut sim);
    let st = sim.link_stats(up).expect("link");
    assert_eq!(st.dropped.get(DropCause::MtuExceeded).packets, 5);
    assert_eq!(st.dropped.mtu_exceeded.bytes, 5 * 1400);
    assert_eq!(st.dropped.total().packets, 5);
    assert_eq!(sink(&sim, rx).packets, 5);
    // No MTU (the default): nothing is too large.
    let (mut sim, _, rx, _) = cbr_over(1, LinkConfig::unlimited(), 9000, ms(1), 3);
    drain(&mut sim);
    assert_eq!(sink(&sim, rx).packets, 3);
}

#[test]
fn named_random_streams_replace_the_link_index() {
    // The sequence numbers that get through a 30 % loss link, by the name of its streams.
    let survivors = |streams: Option<&str>| {
        let mut link = LinkConfig::unlimited().with_loss(LossModel::bernoulli(0.3));
        link.random_streams = streams.map(str::to_owned);
        let (mut sim, _, rx, _) = cbr_over(9, link, 100, us(10), 2_000);
        drain(&mut sim);
        sink(&sim, rx)
            .arrivals
            .iter()
            .map(|a| a.1)
            .collect::<Vec<u64>>()
    };
    // The only link has index 0: its default streams are named "0".
    assert_eq!(survivors(None), survivors(Some("0")));
    assert_ne!(survivors(None), survivors(Some("path1.up")));
    assert_eq!(survivors(Some("path1.up")), survivors(Some("path1.up")));
    // A path spec's `streams=N` names both directions' streams.
    let spec =
        mpquic_netsim::PathSpec::parse("rate=10mbit,rtt=20ms,loss=1%,streams=3").expect("spec");
    let path = spec.resolve().expect("resolve");
    assert_eq!(path.up.random_streams.as_deref(), Some("path3.up"));
    assert_eq!(path.down.random_streams.as_deref(), Some("path3.down"));
    assert_eq!(spec.to_string(), "rate=10mbit,loss=0.01,rtt=20ms,streams=3");
    assert!(mpquic_netsim::PathSpec::parse("up.streams=1").is_err());
    assert!(mpquic_netsim::PathSpec::parse("rate=1mbit,streams=x").is_err());
}
