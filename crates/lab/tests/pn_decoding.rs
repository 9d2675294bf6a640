//! Issue 13: packet numbers are decoded correctly when packets of one space travel paths of
//! different delays (SPNS), in MPNS, and across key updates (RFC 9000 §17.1, Appendix A;
//! RFC 9001 §6). A packet whose number is decoded wrongly fails authentication, so "no packet
//! mis-decoded" is "no authentication failure" at either end.

mod common;

use common::{download, path, run_completed, run_ok};
use mpquic_lab::RunResult;
use mpquic_proto::scheduler::SchedulerKind;
use mpquic_proto::{Design, MultipathMode};
use proptest::prelude::*;

/// Asserts that neither end saw a packet fail authentication.
fn assert_no_auth_failures(r: &RunResult, label: &str) {
    let seed = r.scenario.seed;
    assert_eq!(
        (r.sender.auth_failures, r.receiver.auth_failures),
        (0, 0),
        "seed {seed}, {label}: packets failed authentication (sender, receiver)"
    );
}

/// Issue 13, first case: 50 Mbit/s 5 ms + 5 Mbit/s 100 ms one way. The slow path's packets
/// arrive after hundreds of fast-path packets; before the fix they decoded to the wrong number,
/// so the slow path never validated in SPNS.
#[test]
fn slow_second_path_validates_and_carries_data_in_spns() {
    let paths = [
        "rate=50mbit,delay=5ms,queue=1bdp",
        "rate=5mbit,delay=100ms,queue=1bdp",
    ];
    for mode in [MultipathMode::Spns, MultipathMode::Mpns] {
        // Min-RTT puts data on the slow path whenever the fast one is blocked, which is what
        // this test needs; ECF (the default) rightly keeps an 8 MB tail off a 100 ms path.
        let mut s = download(&paths, 8_000_000, mode, 13);
        s.transport.config.scheduler = SchedulerKind::MinRtt;
        let r = run_completed(&s);
        let slow = path(&r, 1);
        println!(
            "{mode:?}: {:.2} Mbit/s; slow path {} B, {} packets, {} lost; auth failures {} / {}",
            r.goodput_mbps,
            slow.bytes_sent,
            slow.packets_sent,
            slow.packets_lost,
            r.sender.auth_failures,
            r.receiver.auth_failures,
        );
        assert_no_auth_failures(&r, &format!("{mode:?}"));
        assert!(slow.validated, "{mode:?}: the slow path never validated");
        assert!(
            slow.bytes_sent > 100_000,
            "{mode:?}: the slow path carried only {} B",
            slow.bytes_sent
        );
    }
}

/// Issue 13, second case: 50 Mbit/s 5 ms + 15 Mbit/s 40 ms one way. Before the fix SPNS was
/// 32% below the fast path alone.
#[test]
fn spns_goodput_not_below_the_fast_path_alone() {
    let fast = "rate=50mbit,delay=5ms,queue=1bdp";
    let slow = "rate=15mbit,delay=40ms,queue=1bdp";
    let bytes = 15_000_000;
    let single = run_completed(&download(&[fast], bytes, MultipathMode::Single, 13));
    let spns = run_completed(&download(&[fast, slow], bytes, MultipathMode::Spns, 13));
    println!(
        "single {:.2} Mbit/s, SPNS {:.2} Mbit/s (path 1: {} B); auth failures {} / {}",
        single.goodput_mbps,
        spns.goodput_mbps,
        path(&spns, 1).bytes_sent,
        spns.sender.auth_failures,
        spns.receiver.auth_failures,
    );
    assert_eq!(spns.design, Some(Design::Spns));
    assert_no_auth_failures(&spns, "SPNS");
    assert!(
        spns.goodput_mbps >= single.goodput_mbps,
        "SPNS {:.2} Mbit/s below the fast path alone {:.2} Mbit/s",
        spns.goodput_mbps,
        single.goodput_mbps
    );
}

/// One random network: per path (one-way delay ms, rate Mbit/s, loss %).
#[derive(Debug, Clone)]
struct Net {
    paths: Vec<(u32, u32, f64)>,
    mode: MultipathMode,
    scheduler: SchedulerKind,
    key_update_interval: Option<u64>,
    seed: u64,
}

fn net() -> impl Strategy<Value = Net> {
    let path = (1u32..=200, 1u32..=100, prop_oneof![Just(0.0), 0.0f64..2.0]);
    (
        prop::collection::vec(path, 2..=3),
        prop_oneof![Just(MultipathMode::Spns), Just(MultipathMode::Mpns)],
        prop_oneof![Just(SchedulerKind::MinRtt), Just(SchedulerKind::RoundRobin)],
        prop_oneof![Just(None), (50u64..400).prop_map(Some)],
        any::<u64>(),
    )
        .prop_map(|(paths, mode, scheduler, key_update_interval, seed)| Net {
            paths,
            mode,
            scheduler,
            key_update_interval,
            seed,
        })
}

/// The sum of the paths' rates in bit/s.
fn capacity(n: &Net) -> f64 {
    n.paths
        .iter()
        .map(|&(_, rate, _)| f64::from(rate) * 1e6)
        .sum()
}

/// Runs the network; returns the result and the key-update interval used.
fn run_net(n: &Net) -> (RunResult, Option<u64>) {
    let specs: Vec<String> = n
        .paths
        .iter()
        .map(|(delay, rate, loss)| {
            format!("rate={rate}mbit,delay={delay}ms,queue=1bdp,loss={loss:.3}%")
        })
        .collect();
    let specs: Vec<&str> = specs.iter().map(String::as_str).collect();
    // Stop after 2 s plus eight times the largest one-way delay (the slowest path has
    // validated long before); ask for as much as the paths could carry in that time.
    let max_delay_ms = n
        .paths
        .iter()
        .map(|&(d, _, _)| u64::from(d))
        .max()
        .unwrap_or(0);
    let limit_ms = 2_000 + 8 * max_delay_ms;
    let bytes = ((capacity(n) / 8.0 * limit_ms as f64 / 1e3) as u64).clamp(1_000_000, 40_000_000);
    let mut s = download(&specs, bytes, n.mode, n.seed);
    s.time_limit = mpquic_lab::SimDuration(limit_ms * 1_000_000);
    s.transport.config.scheduler = n.scheduler;
    s.transport.config.key_update_interval = n.key_update_interval;
    (run_ok(&s), s.transport.config.key_update_interval)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        max_shrink_iters: 16,
        failure_persistence: None,
        // Fixed, so that runs are reproducible; change it to explore other networks.
        rng_seed: proptest::test_runner::RngSeed::Fixed(13),
        ..ProptestConfig::default()
    })]

    /// Random delays (1–200 ms one way), rates (1–100 Mbit/s) and loss on two or three paths,
    /// SPNS or MPNS, with or without frequent key updates: no packet fails authentication,
    /// every path validates, and under round-robin every path carries data.
    #[test]
    fn no_packet_is_misdecoded(n in net()) {
        let (r, key_update_interval) = run_net(&n);
        let label = format!("{n:?}");
        prop_assert!(
            r.completed || r.outcome == "time_limit",
            "{}: {} ({:?})",
            label,
            r.outcome,
            r.error
        );
        prop_assert_eq!(
            (r.sender.auth_failures, r.receiver.auth_failures),
            (0, 0),
            "{}: packets failed authentication (sender, receiver)",
            label
        );
        prop_assert_eq!(r.paths.len(), n.paths.len(), "{}", label);
        for p in &r.paths {
            prop_assert!(p.validated, "{}: path {} never validated", label, p.id);
            if n.scheduler == SchedulerKind::RoundRobin {
                prop_assert!(p.bytes_sent > 0, "{}: path {} carried no data", label, p.id);
            }
        }
        if let Some(k) = key_update_interval.filter(|&k| r.sender.packets_sent > 3 * k) {
            prop_assert!(r.sender.key_updates > 0, "{}: no key update every {} packets", label, k);
        }
    }
}

/// Key updates every 111 packets on a 1 ms path while the client opens a 169 ms path: the
/// server retires old keys three PTOs after an update, counting only the paths it has received
/// on, so the first packets on the new path, sent under the old keys, would arrive after their
/// keys were gone. The initiator holds updates while a path is being validated and waits three
/// times the largest PTO after each confirmed update (RFC 10069 §"Key Phase Update Process").
#[test]
fn key_updates_faster_than_a_new_slow_path_is_seen() {
    let paths = [
        "rate=15mbit,delay=1ms,queue=1bdp",
        "rate=36mbit,delay=169ms,queue=1bdp",
    ];
    let mut s = download(&paths, 12_000_000, MultipathMode::Mpns, 2159593591389646167);
    s.transport.config.scheduler = SchedulerKind::RoundRobin;
    s.transport.config.key_update_interval = Some(111);
    let r = run_completed(&s);
    assert_no_auth_failures(&r, "MPNS, key update every 111 packets");
    assert!(path(&r, 1).validated, "the slow path never validated");
}

/// The handshake path is slow and a much faster path opens: packets the server numbered with
/// one byte while it had one path (the space was not shared yet) were still queued on the slow
/// path when the fast one overtook them by more than 127 packets, and decoded wrongly (five
/// and four authentication failures at the client in these two runs; one at the server, an
/// ACK-only packet). Found by a randomized campaign. A space SPNS paths may share now always
/// takes two bytes or more (`connection/pn_len.rs`).
#[test]
fn spns_packets_sent_before_a_second_path_opens_decode() {
    let nets: [&[&str]; 2] = [
        &[
            "rate=1mbit,rtt=10ms,queue=20pkt",
            "rate=50mbit,rtt=20ms,queue=0.5bdp",
            "rate=100mbit,rtt=10ms,queue=20pkt",
        ],
        &[
            "rate=2mbit,rtt=150ms,queue=1bdp",
            "rate=100mbit,rtt=5ms,queue=2bdp",
        ],
    ];
    for (paths, seed) in nets.into_iter().zip([777, 678]) {
        let r = run_completed(&download(paths, 3_000_000, MultipathMode::Spns, seed));
        assert_no_auth_failures(&r, &format!("{paths:?}"));
    }
}

/// Reordering inside one path: 20 ms of jitter on a 100 Mbit/s, 20 ms path lets ~185 packets
/// overtake one, more than a one-byte packet number decodes (126). Appendix A.2's length
/// counts only the packets after the largest acknowledged one; once spurious losses measured
/// the reordering (`recovery::reordering`), the sender's numbers cover it. Before, the client
/// failed to authenticate 9 and 4 of the server's packets in these runs (found by a randomized
/// campaign, 7 in a three-path MPNS run). The client's own ACK-only packets are not covered
/// (nothing tells the client how its packets are reordered), so only the receiver is checked.
#[test]
fn packet_numbers_cover_the_reordering_a_path_showed() {
    for seed in [1, 2] {
        let s = download(
            &["rate=100mbit,rtt=20ms,queue=0.5bdp,jitter=20ms,reorder=true"],
            8_000_000,
            MultipathMode::Single,
            seed,
        );
        let r = run_completed(&s);
        assert_eq!(
            r.receiver.auth_failures, 0,
            "seed {seed}: the client failed to authenticate server packets"
        );
    }
}
