//! Issue 4: MPNS over the CoNEXT 2017 example paths (aggregation, beating
//! the best single path), handover when a path goes down, three paths.

mod common;

use common::{describe_paths, download, path, run_completed, CONEXT_A, CONEXT_B};
use mpquic_proto::MultipathMode;

const SEED: u64 = 5;
const MB20: u64 = 20_000_000;

#[test]
fn conext_paths_aggregate_and_beat_the_best_single_path() {
    let both = run_completed(&download(
        &[CONEXT_A, CONEXT_B],
        MB20,
        MultipathMode::Mpns,
        SEED,
    ));
    let a = run_completed(&download(&[CONEXT_A], MB20, MultipathMode::Single, SEED));
    let b = run_completed(&download(&[CONEXT_B], MB20, MultipathMode::Single, SEED));
    let steady = both.steady_goodput_mbps.expect("steady goodput");
    let capacity = 35.0;
    println!(
        "seed {SEED}: MPNS 20 MB: {:.3} s, goodput {:.2} Mbit/s, second half {steady:.2} Mbit/s ({:.1}% of {capacity}); single A {:.2}, single B {:.2} Mbit/s\n  {}",
        both.completion_time_s.unwrap_or(f64::NAN),
        both.goodput_mbps,
        100.0 * steady / capacity,
        a.goodput_mbps,
        b.goodput_mbps,
        describe_paths(&both),
    );
    assert_eq!(both.design, Some(mpquic_proto::Design::Mpns), "seed {SEED}");
    assert!(
        steady >= 0.9 * capacity,
        "seed {SEED}: steady goodput {steady:.2} < 90% of {capacity} Mbit/s"
    );
    let best_single = a.goodput_mbps.max(b.goodput_mbps);
    assert!(
        both.goodput_mbps > best_single,
        "seed {SEED}: multipath {:.2} <= best single path {best_single:.2}",
        both.goodput_mbps
    );
    let total: u64 = both.paths.iter().map(|p| p.bytes_sent).sum();
    for p in &both.paths {
        let share = p.bytes_sent as f64 / total as f64;
        assert!(
            share >= 0.1,
            "seed {SEED}: path {} carried {:.1}%",
            p.id,
            share * 100.0
        );
    }
}

#[test]
fn handover_when_path_0_goes_down_at_2s() {
    for mode in [MultipathMode::Mpns, MultipathMode::Spns] {
        let dead = format!("{CONEXT_A},down_at=2s");
        let s = download(&[&dead, CONEXT_B], MB20, mode, SEED);
        // run_completed checks the client read exactly 20 MB, all matching the pattern.
        let r = run_completed(&s);
        let p0 = path(&r, 0);
        let p1 = path(&r, 1);
        println!(
            "seed {SEED} {mode:?}: completed at {:.3} s; path 0 {:.2} MB, path 1 {:.2} MB, {} handovers, {} B retransmitted; log {:?}",
            r.completion_time_s.unwrap_or(f64::NAN),
            p0.bytes_sent as f64 / 1e6,
            p1.bytes_sent as f64 / 1e6,
            r.sender.handovers,
            r.retransmitted_bytes,
            r.log.iter().map(|e| format!("{:.3} {} {}", e.event.time_s, e.side, e.event.what)).collect::<Vec<_>>(),
        );
        assert_eq!(r.bytes_received, MB20, "seed {SEED} {mode:?}");
        let link = r
            .links
            .iter()
            .find(|l| l.name == "path0.down")
            .expect("link");
        assert!(
            link.drops.link_down.packets > 0,
            "seed {SEED} {mode:?}: path 0 never lost packets"
        );
        assert!(
            r.completion_time_s.unwrap_or(0.0) > 2.0,
            "seed {SEED} {mode:?}: finished before the failure"
        );
        assert!(
            p1.bytes_sent as f64 > 0.5 * MB20 as f64,
            "seed {SEED} {mode:?}: path 1 carried only {} B",
            p1.bytes_sent
        );
        assert!(
            r.sender.handovers >= 1 || p0.abandoned,
            "seed {SEED} {mode:?}: no handover recorded"
        );
    }
}

#[test]
fn three_paths() {
    let c = "rate=10mbit,rtt=30ms,queue=1bdp";
    let r = run_completed(&download(
        &[CONEXT_A, CONEXT_B, c],
        MB20,
        MultipathMode::Mpns,
        SEED,
    ));
    let steady = r.steady_goodput_mbps.expect("steady goodput");
    println!(
        "seed {SEED}: 3 paths, 20 MB: {:.3} s, goodput {:.2} Mbit/s, second half {steady:.2} Mbit/s (capacity 45)\n  {}",
        r.completion_time_s.unwrap_or(f64::NAN),
        r.goodput_mbps,
        describe_paths(&r),
    );
    assert_eq!(r.paths.len(), 3, "seed {SEED}");
    let total: u64 = r.paths.iter().map(|p| p.bytes_sent).sum();
    for p in &r.paths {
        assert!(
            p.bytes_sent as f64 >= 0.1 * total as f64,
            "seed {SEED}: path {} carried {} of {total} B",
            p.id,
            p.bytes_sent
        );
    }
    assert!(
        steady > 20.0,
        "seed {SEED}: no better than the fastest path: {steady:.2}"
    );
}

#[test]
fn shared_bottleneck_caps_the_aggregate() {
    let mut s = download(&[CONEXT_A, CONEXT_B], 10_000_000, MultipathMode::Mpns, SEED);
    let bottleneck =
        mpquic_netsim::PathSpec::parse("rate=20mbit,delay=0,queue=100pkt").expect("spec");
    s.shared_bottleneck = Some(mpquic_lab::PathItem(bottleneck));
    let r = run_completed(&s);
    let steady = r.steady_goodput_mbps.expect("steady goodput");
    println!(
        "seed {SEED}: two paths behind a shared 20 Mbit/s bottleneck: goodput {:.2}, second half {steady:.2} Mbit/s\n  {}",
        r.goodput_mbps,
        describe_paths(&r)
    );
    let link = r
        .links
        .iter()
        .find(|l| l.name == "bottleneck")
        .expect("bottleneck link");
    assert!(
        link.delivered_bytes >= 10_000_000,
        "seed {SEED}: all data crosses the bottleneck"
    );
    assert!(
        steady <= 20.0,
        "seed {SEED}: {steady:.2} Mbit/s through a 20 Mbit/s bottleneck"
    );
    assert!(
        steady >= 15.0,
        "seed {SEED}: bottleneck badly underused: {steady:.2} Mbit/s"
    );
}

/// Per-path retransmitted stream bytes add up to the connection's (they were never counted per
/// path before), in both designs, on lossy paths.
#[test]
fn retransmitted_bytes_are_counted_per_path() {
    for mode in [MultipathMode::Spns, MultipathMode::Mpns] {
        let s = download(
            &[
                "rate=20mbit,delay=10ms,queue=1bdp,loss=1%",
                "rate=10mbit,delay=20ms,queue=1bdp,loss=1%",
            ],
            5_000_000,
            mode,
            7,
        );
        let r = run_completed(&s);
        let per_path: u64 = r.paths.iter().map(|p| p.retransmitted_bytes).sum();
        assert!(
            r.retransmitted_bytes > 0,
            "{mode:?}: 1% loss, nothing retransmitted"
        );
        assert_eq!(per_path, r.retransmitted_bytes, "{mode:?}");
    }
}

/// Found by `mp-vs-sp` (lossy point p203, seed 204): path 1's first PATH_CHALLENGE is lost,
/// its PTO probes bring the server's own challenge, and the server's PATH_RESPONSE to the
/// client's second challenge is lost too. The validation must go on to a third challenge:
/// the path's probe timeouts are not challenges (RFC 9000 §8.2.4). Counting them together
/// failed the path after two challenges, and the 20 MB then crawled over the 561 kbit/s path
/// (241 s instead of under 5 s).
#[test]
fn a_lost_path_response_does_not_fail_the_validation() {
    let slow = "rate=561kbit,queue=5425b,loss=1.826%,rtt=39441us,streams=0";
    let fast = "rate=50603kbit,queue=12888b,loss=1.754%,rtt=1213us,streams=1";
    let mut s = download(&[slow, fast], MB20, MultipathMode::Mpns, 204);
    s.transport.config.scheduler = mpquic_proto::scheduler::SchedulerKind::Ecf;
    let r = run_completed(&s);
    let events: Vec<String> = r
        .log
        .iter()
        .map(|e| format!("{:.3} {} {}", e.event.time_s, e.side, e.event.what))
        .collect();
    assert!(
        events
            .iter()
            .any(|e| e.ends_with("client path 1 validated")),
        "{events:?}"
    );
    assert!(!events.iter().any(|e| e.contains("failed")), "{events:?}");
    let t = r.completion_time_s.expect("time");
    assert!(t < 10.0, "completed at {t} s: {events:?}");
}

/// Found by the `migration` suite: an SPNS path's first RTT samples are borrowed from ACKs that
/// return on the faster path (RFC 10069 §5.4, report §2.2), so its HyStart++ rounds began at
/// about half its own RTT; when its own samples arrived the jump looked like a delay increase,
/// slow start ended at about 50 kB on a 2.2 MB path, and a handover after the fast path died
/// took 11.8 s where MPNS took 3.0 s. Its controller now starts its rounds over with the
/// path's own RTT estimate (`CongestionController::on_rtt_restart`).
#[test]
fn spns_handover_onto_a_long_path_is_as_fast_as_mpns() {
    let fast = "rate=45769kbit,rtt=16ms,queue=1bdp,down_at=1s";
    let long = "rate=92963kbit,rtt=191ms,queue=1bdp";
    let time = |mode| {
        // The suites' settings: min-RTT keeps the long path nearly idle until the fast one dies.
        let mut s = download(&[fast, long], MB20, mode, 2);
        s.transport.config.scheduler = mpquic_proto::scheduler::SchedulerKind::MinRtt;
        s.transport.config.reinjection = mpquic_proto::reinjection::ReinjectionMode::Off;
        let r = run_completed(&s);
        r.completion_time_s.unwrap_or(f64::NAN)
    };
    let (spns, mpns) = (time(MultipathMode::Spns), time(MultipathMode::Mpns));
    println!("SPNS {spns:.3} s, MPNS {mpns:.3} s");
    assert!(spns < 1.2 * mpns, "SPNS {spns:.3} s, MPNS {mpns:.3} s");
}

/// Every scheduler in both designs finishes no later than the best of its paths alone would,
/// over pairs of paths that differ by up to 20x in rate and 25x in RTT (the handshake raced
/// over both, so the comparison does not hinge on which path it took). Found by a randomized
/// campaign: the redundant scheduler put each copy back into the shared retransmission queue,
/// where the next packet took it on the *same* path and copied it again: 2 MB over the first
/// pair took 51 s (BBR) and 136 s (Cubic) instead of 1.2 s (`connection/redundant.rs`).
#[test]
fn no_scheduler_is_slower_than_its_best_path() {
    use mpquic_proto::scheduler::SchedulerKind;
    const MB3: u64 = 3_000_000;
    let pairs = [
        [
            "rate=10mbit,rtt=40ms,queue=2bdp",
            "rate=20mbit,rtt=150ms,queue=1bdp,loss=0.5%",
        ],
        [
            "rate=50mbit,rtt=40ms,queue=2bdp",
            "rate=50mbit,rtt=60ms,queue=1bdp",
        ],
        [
            "rate=5mbit,rtt=250ms,queue=1bdp",
            "rate=100mbit,rtt=10ms,queue=1bdp",
        ],
        [
            "rate=20mbit,rtt=80ms,queue=1bdp,loss=1%",
            "rate=2mbit,rtt=20ms,queue=1bdp",
        ],
    ];
    let time = |r: &mpquic_lab::RunResult| r.completion_time_s.unwrap_or(f64::NAN);
    for (i, pair) in pairs.iter().enumerate() {
        let seed = 7 + i as u64;
        let best = pair
            .iter()
            .map(|p| {
                time(&run_completed(&download(
                    &[p],
                    MB3,
                    MultipathMode::Single,
                    seed,
                )))
            })
            .fold(f64::INFINITY, f64::min);
        for mode in [MultipathMode::Mpns, MultipathMode::Spns] {
            for &(name, kind) in SchedulerKind::ALL {
                let mut s = download(pair, MB3, mode, seed);
                s.transport.config.scheduler = kind;
                s.transport.race_paths = Some(true);
                let t = time(&run_completed(&s));
                println!("pair {i} {mode:?} {name}: {t:.3} s, best path alone {best:.3} s");
                assert!(
                    t <= 1.1 * best,
                    "pair {i} {pair:?} {mode:?} {name}: {t:.3} s, best path alone {best:.3} s"
                );
            }
        }
    }
}

/// A copy made by re-injection is not itself re-injected. The client's 8-byte request used to
/// go back and forth between its two paths, each copy copied again, about 500 times within a
/// millisecond; the burst, reordered by the fast path's jitter, overtook the server's
/// packet-number window (68 packets failed authentication) and the download took 2.000 s
/// instead of 1.351 s. Found by a randomized campaign (`connection/xlink.rs`,
/// `mark_newest_as_copy`).
#[test]
fn a_copy_is_not_copied_again() {
    let paths = [
        "rate=2mbit,rtt=150ms,queue=20pkt",
        "rate=100mbit,rtt=40ms,queue=1bdp,jitter=1ms,reorder=true",
    ];
    let mut s = download(&paths, 8_000_000, MultipathMode::Mpns, 620);
    s.transport.config.congestion = mpquic_proto::cc::CcAlgorithm::Bbr;
    s.transport.config.mtu_discovery = Some(Default::default());
    let r = run_completed(&s);
    println!(
        "{:.3} s; client retransmitted {} B, {} packets sent; auth failures {} / {}",
        r.completion_time_s.unwrap_or(f64::NAN),
        r.receiver.retransmitted_bytes,
        r.receiver.packets_sent,
        r.sender.auth_failures,
        r.receiver.auth_failures
    );
    // The request is 8 bytes: a copy or two, not hundreds.
    assert!(
        r.receiver.retransmitted_bytes <= 32,
        "the client re-sent {} B of its 8-byte request",
        r.receiver.retransmitted_bytes
    );
    assert_eq!((r.sender.auth_failures, r.receiver.auth_failures), (0, 0));
}

/// The client abandons two paths the server has not seen yet (its handshake completed 6.6 s
/// after the client's over a lossy 300 ms path, so the paths' first packets waited in its
/// buffer of early 1-RTT datagrams). When the server opens them and sends on them, the client
/// must not answer with a stateless reset, which would close the whole connection: it keeps
/// the CIDs it issued for an abandoned path until the peer's PATH_ABANDON (plus 3 PTOs), or an
/// idle timeout. Found by a randomized campaign (`close_abandoned_path` in the core's timers).
#[test]
fn an_abandoned_path_the_peer_opens_late_does_not_reset_the_connection() {
    use mpquic_lab::h3sim::Protocol;
    use mpquic_lab::{ByteSize, Workload};
    let paths = [
        "rate=2mbit,rtt=300ms,queue=2bdp,loss=ge:1%,20%,rate_at=2900ms:1mbit",
        "rate=100mbit,rtt=300ms,queue=20pkt,down_at=1900ms",
        "rate=20mbit,rtt=5ms,queue=1bdp,rate_at=2900ms:5mbit",
    ];
    let mut s = download(&paths, 1, MultipathMode::Mpns, 856);
    let kb = |n: u64| ByteSize(n * 1000);
    s.workload = Workload::Requests {
        sizes: vec![kb(10), kb(10), kb(100), kb(1000), kb(10)],
        protocol: Protocol::default(),
    };
    s.transport.config.scheduler = mpquic_proto::scheduler::SchedulerKind::BackupAware;
    s.transport.config.congestion = mpquic_proto::cc::CcAlgorithm::Bbr;
    s.time_limit = mpquic_lab::units::SimDuration(600_000_000_000);
    let r = run_completed(&s);
    let log: Vec<String> = r
        .log
        .iter()
        .map(|e| format!("{:.3} {} {}", e.event.time_s, e.side, e.event.what))
        .collect();
    println!("{:.3} s; {log:#?}", r.completion_time_s.unwrap_or(f64::NAN));
    // The situation the test is about: the server learns of the paths after the client
    // abandoned them.
    let at = |side: &str, what: &str| {
        r.log
            .iter()
            .find(|e| e.side == side && e.event.what.starts_with(what))
            .map(|e| e.event.time_s)
    };
    let abandoned = at("client", "path 1 abandoned").expect("client abandons path 1");
    let opened = at("server", "path 1 opened").expect("server opens path 1");
    assert!(opened > abandoned, "{log:#?}");
}
