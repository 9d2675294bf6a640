//! `LinkModel` (a link stepped by an external clock, for the real-time
//! emulator) is the simulator's link: fed the packets a simulated sender
//! puts on a link, at the same times and with the same seed and link index,
//! it delivers them at the same times, drops the same ones and records the
//! same ground truth.

mod common;

use common::{cbr_over, drain, sa, sink};
use mpquic_netsim::time::{ms, us};
use mpquic_netsim::{
    Capacity, Datagram, LinkAction, LinkConfig, LinkModel, LossModel, MahimahiTrace, QueueLimit,
    SimTime,
};

/// A toy data packet (the header the simulator's CBR sender writes): kind 0,
/// sequence number, send time.
fn toy_packet(seq: u64, at: SimTime, size: usize) -> Vec<u8> {
    let mut p = vec![0u8; size];
    p[1..9].copy_from_slice(&seq.to_le_bytes());
    p[9..17].copy_from_slice(&at.to_le_bytes());
    p
}

fn seq_of(p: &[u8]) -> u64 {
    u64::from_le_bytes(p[1..9].try_into().expect("header"))
}

/// Runs `link` in the simulator and in a `LinkModel` with the same CBR
/// traffic; both must agree on every arrival and on the link's counters.
fn assert_same(name: &str, link: LinkConfig, size: usize, interval: SimTime, count: u64) {
    let seed = 7;
    let (mut sim, _, rx, up) = cbr_over(seed, link.clone(), size, interval, count);
    drain(&mut sim);
    let expected = sink(&sim, rx).arrivals.clone();
    let truth = sim.link_stats(up).expect("link").clone();

    let mut model = LinkModel::new(&link, seed, up.index() as u32).expect("model");
    let mut out = Vec::new();
    for seq in 0..count {
        let at = seq * interval;
        let d = Datagram::new(sa(1, 1000), sa(2, 2000), toy_packet(seq, at, size));
        let _ = model.send(at, d, &mut out);
    }
    while let Some(t) = model.next_event_time() {
        model.advance(t, &mut out);
    }
    let got: Vec<(SimTime, u64)> = out
        .iter()
        .map(|d| (d.at, seq_of(&d.datagram.payload)))
        .collect();
    assert_eq!(got.len(), expected.len(), "{name}: delivered packets");
    assert_eq!(got, expected, "{name}: arrivals differ");
    let s = model.stats();
    assert_eq!(s.dropped, truth.dropped, "{name}: drops");
    assert_eq!(s.delivered, truth.delivered, "{name}: delivered");
    assert_eq!(
        s.queue.max_bytes, truth.queue.max_bytes,
        "{name}: queue peak"
    );
    assert_eq!(s.queue_delay, truth.queue_delay, "{name}: queue delay");
    assert_eq!(model.in_flight(), 0, "{name}: drained");
}

#[test]
fn fixed_rate_with_queue_loss_and_jitter() {
    let link = LinkConfig::mbit(10.0)
        .with_delay(ms(15))
        .with_queue(QueueLimit::Packets(30))
        .with_loss(LossModel::bernoulli(0.02))
        .with_jitter(ms(3), false);
    assert_same("fixed", link, 1200, us(700), 3000);
}

#[test]
fn reordering_jitter_and_gilbert_elliott() {
    let link = LinkConfig::mbit(50.0)
        .with_delay(ms(5))
        .with_loss(LossModel::gilbert_elliott(0.01, 0.2, 0.9, 0.001))
        .with_jitter(ms(2), true);
    assert_same("reorder", link, 1000, us(150), 3000);
}

#[test]
fn trace_capacity_and_scheduled_changes() {
    let trace = MahimahiTrace::parse("1\n1\n3\n4\n4\n4\n7\n10\n", "test").expect("trace");
    let link = LinkConfig::trace(trace)
        .with_delay(ms(8))
        .with_queue(QueueLimit::Bytes(60_000))
        .down_at(ms(300))
        .up_at(ms(450))
        .with_event(
            ms(600),
            LinkAction::SetCapacity(Capacity::Rate {
                bits_per_sec: 3_000_000,
            }),
        )
        .with_event(ms(700), LinkAction::SetDelay { delay: ms(30) });
    assert_same("trace", link, 1400, us(900), 1200);
}
