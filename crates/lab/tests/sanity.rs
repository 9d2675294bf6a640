//! Issue 3: sanity against theory on a single path — capacity, minimum
//! RTT, and a clean end when the only link goes down.

mod common;

use std::sync::OnceLock;

use common::{download, path, run_completed, run_ok};
use mpquic_lab::{ByteSize, RunResult, Workload};
use mpquic_proto::MultipathMode;

const SEED: u64 = 11;
const RATE_MBPS: f64 = 20.0;
const RTT_MS: f64 = 40.0;

/// 20 MB over a 20 Mbit/s, 40 ms RTT link with a BDP-sized buffer, Cubic.
fn long_transfer() -> &'static RunResult {
    static RESULT: OnceLock<RunResult> = OnceLock::new();
    RESULT.get_or_init(|| {
        let s = download(
            &["rate=20mbit,rtt=40ms,queue=1bdp"],
            20_000_000,
            MultipathMode::Single,
            SEED,
        );
        run_completed(&s)
    })
}

#[test]
fn long_cubic_transfer_reaches_90_percent_of_capacity() {
    let r = long_transfer();
    let steady = r.steady_goodput_mbps.expect("steady goodput");
    println!(
        "seed {SEED}: 20 MB at {RATE_MBPS} Mbit/s, {RTT_MS} ms RTT: {:.3} s, goodput {:.2} Mbit/s ({:.1}%), second half {steady:.2} Mbit/s ({:.1}%), {} lost",
        r.completion_time_s.unwrap_or(f64::NAN),
        r.goodput_mbps,
        100.0 * r.goodput_mbps / RATE_MBPS,
        100.0 * steady / RATE_MBPS,
        r.sender.packets_lost,
    );
    assert!(
        r.goodput_mbps >= 0.9 * RATE_MBPS,
        "seed {SEED}: goodput {:.2} Mbit/s < 90% of {RATE_MBPS}",
        r.goodput_mbps
    );
    assert!(
        steady >= 0.9 * RATE_MBPS,
        "seed {SEED}: steady {steady:.2} Mbit/s"
    );
}

#[test]
fn min_rtt_equals_configured_rtt() {
    let r = long_transfer();
    let p = path(r, 0);
    println!(
        "seed {SEED}: sender min RTT {:.3} ms (configured {RTT_MS} ms)",
        p.min_rtt_ms
    );
    assert!(
        (p.min_rtt_ms - RTT_MS).abs() <= 1.0,
        "seed {SEED}: min RTT {:.3} ms vs configured {RTT_MS} ms",
        p.min_rtt_ms
    );
    let truth = p.true_rtt_ms.expect("true RTT");
    assert!(
        truth >= RTT_MS,
        "seed {SEED}: true RTT {truth:.2} below propagation"
    );
}

#[test]
fn link_down_ends_in_idle_timeout_not_a_hang() {
    let mut s = download(
        &["rate=20mbit,rtt=40ms,queue=1bdp,down_at=2s"],
        20_000_000,
        MultipathMode::Single,
        SEED,
    );
    s.time_limit = "120s".parse().expect("duration");
    s.transport.config.idle_timeout = std::time::Duration::from_secs(10);
    let r = run_ok(&s);
    println!(
        "seed {SEED}: outcome {} ({:?}) at {:.3} s after {} bytes",
        r.outcome, r.error, r.sim_time_s, r.bytes_received
    );
    assert!(!r.completed, "seed {SEED}: completed over a dead link?");
    assert_eq!(r.outcome, "failed", "seed {SEED}: {:?}", r.error);
    let err = r.error.as_deref().unwrap_or_default();
    assert!(err.contains("idle timeout"), "seed {SEED}: {err}");
    assert!(
        r.sim_time_s > 2.0 && r.sim_time_s < 60.0,
        "seed {SEED}: ended at {:.3} s",
        r.sim_time_s
    );
    assert!(r.completion_time_s.is_none());
    let down = r
        .links
        .iter()
        .find(|l| l.name == "path0.down")
        .expect("link");
    assert!(
        down.drops.link_down.packets > 0,
        "seed {SEED}: no link-down drops"
    );
}

#[test]
fn time_limit_reported_when_too_short() {
    let mut s = download(
        &["rate=5mbit,rtt=40ms"],
        10_000_000,
        MultipathMode::Single,
        SEED,
    );
    s.time_limit = "1s".parse().expect("duration");
    let r = run_ok(&s);
    assert!(!r.completed);
    assert_eq!(r.outcome, "time_limit", "seed {SEED}: {:?}", r.error);
    assert!(
        (r.sim_time_s - 1.0).abs() < 1e-9,
        "seed {SEED}: {}",
        r.sim_time_s
    );
    assert!(r.bytes_received > 0 && r.bytes_received < 10_000_000);
}

#[test]
fn parallel_requests_complete() {
    let sizes = [10_000, 100_000, 1_000_000, 50_000, 2_000_000, 0];
    let mut s = download(
        &["rate=20mbit,rtt=30ms,queue=1bdp"],
        1,
        MultipathMode::Auto,
        SEED,
    );
    s.workload = Workload::Requests {
        sizes: sizes.iter().map(|&b| ByteSize(b)).collect(),
        protocol: Default::default(),
    };
    let r = run_completed(&s);
    assert_eq!(r.requests.len(), sizes.len());
    assert_eq!(r.bytes_received, sizes.iter().sum::<u64>());
    let total = r.completion_time_s.expect("completed");
    for (req, size) in r.requests.iter().zip(sizes) {
        assert_eq!(req.received, size, "seed {SEED}");
        let t = req.completion_time_s.expect("request completed");
        assert!(t <= total + 1e-12, "seed {SEED}: {t} > {total}");
        println!("seed {SEED}: request of {size} B done at {t:.3} s");
    }
}
