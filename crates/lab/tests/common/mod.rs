//! Helpers shared by the lab's integration tests. Every failure message
//! names the seed so a run can be replayed with `mpquic sim --seed N`.

#![allow(dead_code)]

use mpquic_lab::{run, ByteSize, PathResult, RunResult, Scenario, Workload};
use mpquic_netsim::PathSpec;
use mpquic_proto::MultipathMode;

/// CoNEXT 2017 example path A: 20 Mbit/s, 20 ms RTT, BDP buffer.
pub const CONEXT_A: &str = "rate=20mbit,rtt=20ms,queue=1bdp";
/// CoNEXT 2017 example path B: 15 Mbit/s, 40 ms RTT, BDP buffer.
pub const CONEXT_B: &str = "rate=15mbit,rtt=40ms,queue=1bdp";

/// A download scenario over `paths` with `mode`, Cubic and min-RTT.
pub fn download(paths: &[&str], bytes: u64, mode: MultipathMode, seed: u64) -> Scenario {
    let specs = paths
        .iter()
        .map(|p| PathSpec::parse(p).unwrap_or_else(|e| panic!("bad spec `{p}`: {e}")))
        .collect();
    let mut s = Scenario::new(specs, Workload::Download(ByteSize(bytes)));
    s.seed = seed;
    s.transport.config.multipath = mode;
    s
}

/// Runs a scenario that must be valid; panics with the seed otherwise.
pub fn run_ok(s: &Scenario) -> RunResult {
    run(s).unwrap_or_else(|e| panic!("seed {}: scenario rejected: {e}", s.seed))
}

/// Runs a scenario that must complete; panics with the seed and reason otherwise.
pub fn run_completed(s: &Scenario) -> RunResult {
    let r = run_ok(s);
    assert!(
        r.completed,
        "seed {}: did not complete: {} ({:?}); {} of {} bytes",
        s.seed, r.outcome, r.error, r.bytes_received, r.bytes_requested
    );
    r
}

/// The path result with QUIC path ID `id`.
pub fn path(r: &RunResult, id: u32) -> &PathResult {
    r.paths
        .iter()
        .find(|p| p.id == mpquic_proto::PathId::new(id))
        .unwrap_or_else(|| panic!("seed {}: no path {id} in {:?}", r.scenario.seed, r.paths))
}

/// One line per path: bytes, RTTs and srtt error.
pub fn describe_paths(r: &RunResult) -> String {
    r.paths
        .iter()
        .map(|p| {
            format!(
                "path {}: {:.2} MB, srtt {:.2} ms, min {:.2} ms, true {:.2} ms, MAE {:.2} ms ({:.1}%), {} RTT samples / {} packets",
                p.id,
                p.bytes_sent as f64 / 1e6,
                p.srtt_ms,
                p.min_rtt_ms,
                p.true_rtt_ms.unwrap_or(f64::NAN),
                p.srtt_mae_ms.unwrap_or(f64::NAN),
                100.0 * p.srtt_mae_ratio.unwrap_or(f64::NAN),
                p.rtt_samples,
                p.packets_sent,
            )
        })
        .collect::<Vec<_>>()
        .join("\n  ")
}
