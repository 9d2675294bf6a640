//! Issue 5: SPNS against MPNS on the same scenario and seed — two
//! heterogeneous paths, Cubic + min-RTT: completion, goodput, ACK frame
//! sizes, the ACK range limit, and how well each path's smoothed RTT tracks
//! the true RTT with and without the per-path RTT sampling rule.

mod common;

use std::sync::OnceLock;

use common::{describe_paths, download, run_completed, CONEXT_A, CONEXT_B};
use mpquic_lab::RunResult;
use mpquic_proto::MultipathMode;

const SEED: u64 = 7;

/// The runs compared for one transfer size.
struct Comparison {
    spns: RunResult,
    mpns: RunResult,
    spns_limit4: RunResult,
}

fn scenario(bytes: u64, mode: MultipathMode) -> mpquic_lab::Scenario {
    download(&[CONEXT_A, CONEXT_B], bytes, mode, SEED)
}

fn compare(bytes: u64) -> Comparison {
    let spns = run_completed(&scenario(bytes, MultipathMode::Spns));
    let mpns = run_completed(&scenario(bytes, MultipathMode::Mpns));
    let mut limited = scenario(bytes, MultipathMode::Spns);
    limited.transport.ack_range_limit = Some(4);
    let spns_limit4 = run_completed(&limited);
    Comparison {
        spns,
        mpns,
        spns_limit4,
    }
}

fn small() -> &'static Comparison {
    static RUNS: OnceLock<Comparison> = OnceLock::new();
    RUNS.get_or_init(|| compare(10_000_000))
}

fn large() -> &'static Comparison {
    static RUNS: OnceLock<Comparison> = OnceLock::new();
    RUNS.get_or_init(|| compare(50_000_000))
}

fn line(name: &str, r: &RunResult) -> String {
    format!(
        "{name:<12} {:>7.3} s {:>6.2} Mbit/s (2nd half {:>6.2}), ACK frames {:>6}, mean {:>5.2} B, {:>5.2} ranges, {} spurious, {} B retransmitted",
        r.completion_time_s.unwrap_or(f64::NAN),
        r.goodput_mbps,
        r.steady_goodput_mbps.unwrap_or(f64::NAN),
        r.ack_frames_sent,
        r.avg_ack_frame_bytes,
        r.mean_ranges_per_ack,
        r.spurious_retransmissions,
        r.retransmitted_bytes,
    )
}

fn check(c: &Comparison, label: &str) {
    println!(
        "seed {SEED}, {label}:\n  {}\n  {}\n  {}",
        line("SPNS", &c.spns),
        line("MPNS", &c.mpns),
        line("SPNS limit4", &c.spns_limit4)
    );
    assert_eq!(
        c.spns.design,
        Some(mpquic_proto::Design::Spns),
        "seed {SEED}"
    );
    assert_eq!(
        c.mpns.design,
        Some(mpquic_proto::Design::Mpns),
        "seed {SEED}"
    );
    for r in [&c.spns, &c.mpns] {
        assert_eq!(r.paths.len(), 2, "seed {SEED}: both paths used");
    }
    let ratio = c.spns.goodput_mbps / c.mpns.goodput_mbps;
    println!(
        "  SPNS/MPNS goodput {:.3}, ACK frame size {:+.0}%",
        ratio,
        100.0 * (c.spns.avg_ack_frame_bytes / c.mpns.avg_ack_frame_bytes - 1.0)
    );
    assert!(
        (ratio - 1.0).abs() <= 0.03,
        "seed {SEED}, {label}: SPNS goodput {:.2} not within 3% of MPNS {:.2}",
        c.spns.goodput_mbps,
        c.mpns.goodput_mbps
    );
    assert!(
        c.spns.avg_ack_frame_bytes > c.mpns.avg_ack_frame_bytes,
        "seed {SEED}, {label}: SPNS mean ACK {:.2} B <= MPNS {:.2} B",
        c.spns.avg_ack_frame_bytes,
        c.mpns.avg_ack_frame_bytes
    );
    assert!(
        c.spns_limit4.avg_ack_frame_bytes < c.spns.avg_ack_frame_bytes,
        "seed {SEED}, {label}: limit 4 did not shrink SPNS ACKs ({:.2} vs {:.2} B)",
        c.spns_limit4.avg_ack_frame_bytes,
        c.spns.avg_ack_frame_bytes
    );
    // Default_Limit may be exceeded to cover a newly received packet, but
    // never Maximum_Limit (64): the last histogram bucket counts > 64.
    for r in [&c.spns, &c.mpns, &c.spns_limit4] {
        assert_eq!(
            r.ack_range_histogram[7], 0,
            "seed {SEED}, {label}: ACK frames with more than 64 ranges"
        );
    }
}

#[test]
fn spns_and_mpns_10mb() {
    check(small(), "10 MB");
}

#[test]
fn spns_and_mpns_50mb() {
    check(large(), "50 MB");
}

/// Asserts that every path's srtt MAE is below 10% of its true RTT.
fn assert_srtt_tracks(r: &RunResult, label: &str) {
    println!("seed {SEED}, {label}, rule on:\n  {}", describe_paths(r));
    for p in &r.paths {
        let ratio = p.srtt_mae_ratio.expect("srtt samples");
        assert!(
            ratio < 0.10,
            "seed {SEED}, {label}: path {} srtt MAE {:.2} ms = {:.1}% of true RTT {:.2} ms",
            p.id,
            p.srtt_mae_ms.unwrap_or(f64::NAN),
            100.0 * ratio,
            p.true_rtt_ms.unwrap_or(f64::NAN)
        );
    }
}

#[test]
fn mpns_srtt_tracks_true_rtt() {
    assert_srtt_tracks(&large().mpns, "MPNS 50 MB");
}

#[test]
fn spns_srtt_tracks_true_rtt() {
    assert_srtt_tracks(&large().spns, "SPNS 50 MB");
}

#[test]
fn srtt_error_with_the_rule_off() {
    for (mode, on) in [
        (MultipathMode::Spns, &large().spns),
        (MultipathMode::Mpns, &large().mpns),
    ] {
        let mut s = scenario(50_000_000, mode);
        s.transport.rtt_sample_on_receiving_path = Some(false);
        let off = run_completed(&s);
        println!(
            "seed {SEED}, {mode:?} 50 MB\n rule on:\n  {}\n rule off (RTT samples mixing paths):\n  {}",
            describe_paths(on),
            describe_paths(&off)
        );
    }
}
