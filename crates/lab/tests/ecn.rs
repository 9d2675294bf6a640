//! ECN per path (RFC 9000 §13.4, RFC 9002 §7.1) in the simulator: a CE-marking bottleneck
//! (`ecn=` step marking) keeps the queue near its threshold without loss where the same
//! drop-tail queue without marking overflows; a bleaching link (`ecn_bleach=true`) fails ECN
//! validation on its path only (MPNS; in SPNS the per-space counts hide it, see
//! `mpquic_proto::ecn`). One path, and two paths in both multipath designs.

mod common;

use common::{download, run_completed};
use mpquic_lab::{LinkResult, RunResult};
use mpquic_proto::{EcnState, MultipathMode, PathId};

const SEED: u64 = 3;
const BYTES: u64 = 10_000_000;

/// 20 Mbit/s, 40 ms, a 2-BDP (200 kB) drop-tail queue.
const ONE: &str = "rate=20mbit,rtt=40ms,queue=2bdp";
/// The CoNEXT 2017 pair with 2-BDP queues.
const A: &str = "rate=20mbit,rtt=20ms,queue=2bdp";
const B: &str = "rate=15mbit,rtt=40ms,queue=2bdp";
/// Marking threshold: 20 kB, 8 ms at 20 Mbit/s, 10.7 ms at 15 Mbit/s.
const MARK: &str = ",ecn=20kb";

fn downlinks(r: &RunResult) -> Vec<&LinkResult> {
    r.links
        .iter()
        .filter(|l| l.name.ends_with(".down"))
        .collect()
}

fn drops(r: &RunResult) -> u64 {
    downlinks(r)
        .iter()
        .map(|l| l.drops.queue_overflow.packets)
        .sum()
}

fn describe(r: &RunResult) -> String {
    let links: Vec<String> = downlinks(r)
        .iter()
        .map(|l| {
            format!(
                "{}: {} drops, {} CE, queue delay mean {:.2} ms max {:.2} ms, max queue {} B",
                l.name,
                l.drops.queue_overflow.packets,
                l.ce_marked,
                l.mean_queue_delay_ms.unwrap_or(f64::NAN),
                l.max_queue_delay_ms,
                l.max_queue_bytes
            )
        })
        .collect();
    let paths: Vec<String> = r
        .paths
        .iter()
        .map(|p| format!("path {}: {:?}", p.id, p.ecn))
        .collect();
    format!(
        "seed {SEED}: {:.2} Mbit/s, {} lost\n  {}\n  {}",
        r.goodput_mbps,
        r.sender.packets_lost,
        links.join("\n  "),
        paths.join("\n  ")
    )
}

/// The scenario over `paths`, with and without CE marking on every path.
fn pair(paths: &[&str], mode: MultipathMode) -> (RunResult, RunResult) {
    let marked: Vec<String> = paths.iter().map(|p| format!("{p}{MARK}")).collect();
    let marked: Vec<&str> = marked.iter().map(String::as_str).collect();
    let with = run_completed(&download(&marked, BYTES, mode, SEED));
    // The same endpoints (ECN on, as the marking links turn it on by default); only the
    // links differ.
    let mut plain = download(paths, BYTES, mode, SEED);
    plain.transport.ecn = Some(true);
    let without = run_completed(&plain);
    println!(
        "with marking: {}\nwithout: {}",
        describe(&with),
        describe(&without)
    );
    (with, without)
}

/// In SPNS the counts are per space: a CE increase goes to the path with the largest
/// queueing delay estimate among those whose packets were newly acknowledged (see
/// `mpquic_proto::ecn`), and each path still keeps its own queue near the threshold.
fn check_marking_bottleneck(paths: &[&str], mode: MultipathMode) {
    let (with, without) = pair(paths, mode);
    assert!(drops(&without) > 0, "{}", describe(&without));
    assert_eq!(drops(&with), 0, "{}", describe(&with));
    assert_eq!(with.sender.packets_lost, 0, "{}", describe(&with));
    for (l, plain) in downlinks(&with).iter().zip(downlinks(&without)) {
        let rate = l.rate_mbps.expect("fixed rate");
        // The threshold in time at the link's rate; the queue stays near it.
        let threshold_ms = 20_000.0 * 8.0 / (rate * 1e6) * 1e3;
        let mean = l.mean_queue_delay_ms.expect("delivered");
        assert!(l.ce_marked > 0, "{}", describe(&with));
        assert!(mean < threshold_ms, "{}", describe(&with));
        assert!(
            mean * 4.0 < plain.mean_queue_delay_ms.expect("delivered"),
            "{}",
            describe(&without)
        );
    }
    for p in &with.paths {
        assert_eq!(p.ecn.state, EcnState::Capable, "{}", describe(&with));
        assert!(p.ecn.ce_congestion_events > 0, "{}", describe(&with));
    }
    for p in &without.paths {
        assert_eq!(p.ecn.state, EcnState::Capable, "{}", describe(&without));
        assert_eq!(p.ecn.ce_reported, 0, "{}", describe(&without));
    }
}

#[test]
fn ce_marking_bottleneck_one_path_keeps_the_queue_short_without_loss() {
    check_marking_bottleneck(&[ONE], MultipathMode::Auto);
}

#[test]
fn ce_marking_bottlenecks_two_paths_mpns() {
    check_marking_bottleneck(&[A, B], MultipathMode::Mpns);
}

#[test]
fn ce_marking_bottlenecks_two_paths_spns() {
    check_marking_bottleneck(&[A, B], MultipathMode::Spns);
}

fn check_bleaching(mode: MultipathMode) {
    let bleached = format!("{B},ecn_bleach=true");
    let r = run_completed(&download(&[A, &bleached], BYTES, mode, SEED));
    println!("{}", describe(&r));
    let p0 = r
        .paths
        .iter()
        .find(|p| p.id == PathId::ZERO)
        .expect("path 0");
    let p1 = r
        .paths
        .iter()
        .find(|p| p.id == PathId::new(1))
        .expect("path 1");
    assert_eq!(p1.ecn.state, EcnState::Failed, "{}", describe(&r));
    assert_eq!(p0.ecn.state, EcnState::Capable, "{}", describe(&r));
    // Path 0 kept marking until the end: nearly all its packets were acknowledged as ECT.
    assert!(
        p0.ecn.marked_acked * 10 > p0.packets_sent * 9,
        "{}",
        describe(&r)
    );
    // Path 1 stopped marking early.
    assert!(
        p1.ecn.marked_acked * 10 < p1.packets_sent,
        "{}",
        describe(&r)
    );
}

#[test]
fn bleaching_path_fails_validation_alone_mpns() {
    check_bleaching(MultipathMode::Mpns);
}

#[test]
fn the_lab_turns_ecn_on_only_where_a_link_marks() {
    let plain = run_completed(&download(&[ONE], BYTES, MultipathMode::Auto, SEED));
    let ecn = &plain.paths[0].ecn;
    assert_eq!(ecn.state, EcnState::Disabled, "{}", describe(&plain));
    assert_eq!(
        ecn.marked_acked + ecn.marked_lost,
        0,
        "{}",
        describe(&plain)
    );
    let marked = run_completed(&download(
        &[&format!("{ONE}{MARK}")],
        BYTES,
        MultipathMode::Auto,
        SEED,
    ));
    assert_eq!(
        marked.paths[0].ecn.state,
        EcnState::Capable,
        "{}",
        describe(&marked)
    );
}

#[test]
fn ecn_switched_off_marks_nothing() {
    let mut s = download(&[&format!("{ONE}{MARK}")], BYTES, MultipathMode::Auto, SEED);
    s.transport.ecn = Some(false);
    let r = run_completed(&s);
    assert!(drops(&r) > 0, "{}", describe(&r));
    assert!(downlinks(&r).iter().all(|l| l.ce_marked == 0));
    assert_eq!(r.paths[0].ecn.marked_acked, 0, "{}", describe(&r));
}
