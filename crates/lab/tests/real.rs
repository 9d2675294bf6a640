//! Scenarios on real sockets (`mpquic sim --real`, `mpquic lab run SUITE --real`): the tokio
//! runtime's client and server over loopback through the in-process emulator give results of
//! the simulator's form, and a run directory holding simulated and real runs gets the
//! side-by-side comparison. Small sizes: these check the plumbing, not performance.

use mpquic_lab::labcmd::{report_dir, run_suite, RunOptions};
use mpquic_lab::suites::sim_vs_real::SimVsReal;
use mpquic_lab::{real, Scenario};

#[test]
fn a_real_run_has_the_form_of_a_simulated_one() {
    let scenario = Scenario::from_toml_str(
        r#"
        seed = 4
        paths = ["rate=20mbit,delay=5ms", "rate=10mbit,delay=15ms,down.loss=1%"]
        [workload]
        requests = { sizes = ["1MB", "500KB"] }
        [transport]
        multipath = "mpns"
        "#,
        "<test>",
    )
    .expect("scenario");
    let r = real::run(&scenario).expect("real run");
    assert!(r.completed, "{:?} {:?}", r.outcome, r.error);
    assert_eq!(r.network, "emulated");
    assert_eq!(r.bytes_received, 1_500_000);
    assert_eq!(r.requests.len(), 2);
    assert!(r.requests.iter().all(|q| q.completion_time_s.is_some()));
    assert_eq!(r.links.len(), 4);
    assert_eq!(r.links[1].name, "path0.down");
    assert!(r.links[1].delivered_packets > 500, "{:?}", r.links[1]);
    assert_eq!(r.paths.len(), 2, "{:?}", r.paths);
    let ifaces: Vec<_> = r.paths.iter().map(|p| p.interface).collect();
    assert_eq!(ifaces, [Some(0), Some(1)]);
    // A round trip on a path can never beat its links' propagation delays.
    for p in &r.paths {
        let floor = p.min_rtt_floor_ms.expect("floor");
        assert!(floor >= 10.0, "{p:?}");
    }
    assert!(r.release_jitter.is_some());
    assert!(r.violations.is_empty(), "{:?}", r.violations);
    let json = serde_json::to_value(&r).expect("json");
    assert_eq!(json["network"], "emulated");
}

#[test]
fn unsupported_scenarios_are_refused() {
    let scenario = Scenario::from_toml_str(
        r#"
        paths = ["rate=20mbit,delay=5ms"]
        shared_bottleneck = "rate=10mbit"
        [workload]
        download = "1MB"
        "#,
        "<test>",
    )
    .expect("scenario");
    let e = real::run(&scenario).unwrap_err().to_string();
    assert!(e.contains("shared bottleneck"), "{e}");
}

#[test]
fn simulated_and_real_runs_sit_in_one_report() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("svr");
    let suite = SimVsReal {
        tiny: Some(400_000),
    };
    let mut opts = RunOptions {
        quick: true,
        seed: 1,
        jobs: 2,
        out: out.clone(),
        shard: None,
        progress: false,
        traces: None,
        real: false,
        qlog: None,
        crypto: None,
    };
    run_suite(&suite, &opts).expect("simulated runs");
    opts.real = true;
    let report = run_suite(&suite, &opts).expect("real runs");
    let comparison = report.also.first().expect("comparison report");
    assert!(comparison.index.ends_with("sim-vs-real/index.html"));
    let table = comparison.headline.as_ref().expect("table");
    assert_eq!(table.rows.len(), 6, "{}", table.to_csv());
    assert!(out.join("runs/homogeneous.real.json").exists());
    // Rebuilt from the files alone.
    let again = report_dir(&out).expect("report");
    assert_eq!(
        again.also[0].headline.as_ref().map(|t| t.to_csv()),
        Some(table.to_csv())
    );
}
