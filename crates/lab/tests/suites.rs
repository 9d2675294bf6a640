//! Tests of the lab suites: valid scenarios, an end-to-end tiny run of
//! `spns-vs-mpns`, and "no number in a report that is not computed from a
//! run": the report's CSV tables are checked against the run JSON files.

use std::path::Path;

use mpquic_lab::labcmd::{load_runs, merge, report_dir, run_suite, RunOptions};
use mpquic_lab::suites;
use mpquic_lab::suites::spns_vs_mpns::{SpnsVsMpns, DEFAULT_LIMIT};
use mpquic_lab::suites::{Suite, SuiteOptions};
use mpquic_report::{Cell, Table};
use serde_json::Value;

#[test]
fn every_suite_lists_valid_unique_runs() {
    for suite in suites::all() {
        for quick in [true, false] {
            let runs = suite.runs(quick, 1);
            assert!(!runs.is_empty(), "{}", suite.name());
            let mut ids: Vec<&str> = runs.iter().map(|(id, _)| id.as_str()).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), runs.len(), "{}: duplicate run IDs", suite.name());
            for (id, s) in &runs {
                assert!(
                    id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
                    "{id}"
                );
                s.validate()
                    .unwrap_or_else(|e| panic!("{} {id}: {e}", suite.name()));
            }
        }
        assert!(suites::find(suite.name()).is_some());
    }
}

fn tiny_opts(out: &Path) -> RunOptions {
    RunOptions {
        quick: true,
        seed: 3,
        jobs: 2,
        out: out.to_path_buf(),
        shard: None,
        progress: false,
        traces: None,
        real: false,
        qlog: None,
        crypto: None,
    }
}

fn read_table(path: &Path) -> Table {
    Table::from_csv(&std::fs::read_to_string(path).expect("csv")).expect("parse csv")
}

fn close(cell: &Cell, expected: Option<f64>, what: &str) {
    match (cell, expected) {
        (Cell::Num(v, d), Some(e)) => {
            let tol = 0.5 * 10f64.powi(-(*d as i32)) + 1e-9 * e.abs();
            assert!((v - e).abs() <= tol, "{what}: table {v} vs runs {e}");
        }
        (Cell::Missing, None) => {}
        other => panic!("{what}: {other:?}"),
    }
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Table 1 recomputed from the raw JSON (independently of the suite code).
fn check_table1(dir: &Path) {
    let table = read_table(&dir.join("tables/table1.csv"));
    let mut figures = Vec::new();
    for suffix in ["-mpns".to_owned(), format!("-spns-l{DEFAULT_LIMIT:02}")] {
        let (mut speed, mut ack, mut ranges) = (vec![], vec![], vec![]);
        for entry in std::fs::read_dir(dir.join("runs")).expect("runs") {
            let path = entry.expect("entry").path();
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .expect("stem")
                .to_owned();
            if !stem.ends_with(&suffix) {
                continue;
            }
            let v: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).expect("json")).expect("json");
            if v["completed"].as_bool() == Some(true) {
                let t = v["completion_time_s"].as_f64().expect("time");
                speed.push(v["bytes_received"].as_f64().expect("bytes") / t / 1000.0);
            }
            ack.push(v["avg_ack_frame_bytes"].as_f64().expect("ack"));
            ranges.push(v["mean_ranges_per_ack"].as_f64().expect("ranges"));
        }
        figures.push([mean(&speed), mean(&ack), mean(&ranges)]);
    }
    assert_eq!(table.rows.len(), 3);
    for (row, f) in table.rows.iter().zip(&figures) {
        for (i, e) in f.iter().enumerate() {
            close(
                &row[i + 1],
                *e,
                &format!("table1 {:?} col {}", row[0], i + 1),
            );
        }
    }
    for (i, (m, s)) in figures[0].iter().zip(&figures[1]).enumerate() {
        let rate = m.zip(*s).map(|(a, b)| (b - a) / a * 100.0);
        close(
            &table.rows[2][i + 1],
            rate,
            &format!("table1 rate col {}", i + 1),
        );
    }
}

#[test]
fn tiny_spns_vs_mpns_end_to_end_and_tables_match_runs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("svm");
    let suite = SpnsVsMpns {
        tiny: Some((1_000_000, 1)),
    };
    // The tiny variant is not in the registry: run it, then rebuild the
    // report through the registry's spns-vs-mpns (same report code).
    let result = run_suite(&suite, &tiny_opts(&out)).expect("run");
    assert!(result.index.is_file());
    for f in [
        "tables/table1.csv",
        "tables/limit_sweep.csv",
        "fig/ack_ranges_cdf.svg",
        "fig/ack_ranges_cdf.png",
        "fig/progress.svg",
        "fig/speed_vs_limit.png",
    ] {
        assert!(out.join(f).is_file(), "{f} missing");
    }
    let html = std::fs::read_to_string(&result.index).expect("html");
    assert!(html.contains("7217.6"), "paper reference table missing");
    let runs = load_runs(&out).expect("runs");
    // MPNS, SPNS at the limits of the sweep, and the two ACK_FREQUENCY arms.
    assert_eq!(runs.len(), 5);
    assert!(
        runs.iter().all(|(_, r)| r.completed),
        "tiny runs must complete"
    );
    check_table1(&out);
    // `lab report` regenerates the same table from the JSON files.
    let before = std::fs::read_to_string(out.join("tables/table1.csv")).expect("csv");
    report_dir(&out).expect("report");
    assert_eq!(
        before,
        std::fs::read_to_string(out.join("tables/table1.csv")).expect("csv")
    );
    // The check can fail: a changed run file no longer matches the table.
    let path = out
        .join("runs")
        .join(format!("t0-spns-l{DEFAULT_LIMIT:02}.json"));
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("run")).expect("json");
    let ack = v["avg_ack_frame_bytes"].as_f64().expect("ack");
    v["avg_ack_frame_bytes"] = serde_json::json!(ack * 3.0);
    std::fs::write(&path, v.to_string()).expect("write");
    assert!(std::panic::catch_unwind(|| check_table1(&out)).is_err());
    // A run that did not complete is counted in Table 1, not dropped.
    let path = out.join("runs").join("t0-mpns.json");
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("run")).expect("json");
    v["completed"] = serde_json::json!(false);
    std::fs::write(&path, v.to_string()).expect("write");
    report_dir(&out).expect("report");
    let t = read_table(&out.join("tables/table1.csv"));
    assert_eq!(t.rows[0][4], Cell::text("0 of 1"), "{:?}", t.rows[0]);
    assert_eq!(t.rows[1][4], Cell::text("1 of 1"));
    let html = std::fs::read_to_string(out.join("index.html")).expect("html");
    assert!(html.contains("Runs: 4 completed of 5"), "about section");
    assert!(
        html.contains("Differences from the paper"),
        "discussion section"
    );
}

#[test]
fn shards_merge_into_the_full_report() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let suite = SpnsVsMpns {
        tiny: Some((300_000, 1)),
    };
    let mut dirs = Vec::new();
    for i in 0..2 {
        let dir = tmp.path().join(format!("shard{i}"));
        let mut o = tiny_opts(&dir);
        o.shard = Some((i, 2));
        run_suite(&suite, &o).expect("shard run");
        dirs.push(dir);
    }
    let n0 = load_runs(&dirs[0]).expect("runs").len();
    let n1 = load_runs(&dirs[1]).expect("runs").len();
    assert_eq!((n0, n1), (3, 2));
    let merged = tmp.path().join("merged");
    merge(&merged, &dirs).expect("merge");
    assert_eq!(load_runs(&merged).expect("runs").len(), 5);
    check_table1(&merged);
}

/// The Mahimahi traces shipped beside the repository (`../shared/traces`). None (the test
/// skips, saying so) when they are absent, except under CI (`CI=true`), which has them.
fn shared_traces() -> Option<std::path::PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    if dir.is_dir() {
        return Some(dir);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{} missing: CI runs with the reference material beside the repository",
        dir.display()
    );
    println!("skipping: {} is not beside the repository", dir.display());
    None
}

#[test]
fn spns_vs_mpns_replays_mahimahi_files_on_request() {
    let Some(traces) = shared_traces() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("svm-traces");
    let suite = SpnsVsMpns {
        tiny: Some((300_000, 2)),
    };
    let mut opts = tiny_opts(&out);
    opts.traces = Some(traces.clone());
    run_suite(&suite, &opts).expect("run with traces");
    let runs = load_runs(&out).expect("runs");
    assert_eq!(runs.len(), 10);
    let canonical = traces.canonicalize().expect("canonical");
    for (id, r) in &runs {
        assert!(r.completed, "{id}: {:?}", r.outcome);
        // The paper's roles: no name contains "wifi", so the Wi-Fi path
        // replays a generated Wi-Fi trace and the cellular path the files,
        // in name order, each from a seed-chosen start point.
        let cellular = if id.starts_with("t0-") {
            "ATT-LTE-driving"
        } else {
            "TMobile-LTE-short"
        };
        let p = r.scenario["paths"].as_array().expect("paths");
        let wifi = p[0].as_str().expect("spec");
        assert!(wifi.contains("trace=gen:wifi:"), "{id}: {wifi}");
        let cell = p[1].as_str().expect("spec");
        let file = canonical.join(format!("{cellular}.down"));
        assert!(cell.contains(&file.display().to_string()), "{id}: {cell}");
        assert!(cell.contains("trace_start="), "{id}: {cell}");
        let down = r.link("path1.down").expect("cellular link");
        assert!(down.trace_start_ms.is_some_and(|s| s > 0), "{id}");
    }
    check_table1(&out);
    let html = std::fs::read_to_string(out.join("index.html")).expect("html");
    for needle in [
        "Wi-Fi role trace",
        "ATT-LTE-driving.down",
        "TMobile-LTE-short.down",
        "(generated)",
        "Mode: quick",
        "Implementation of Single Packet Number Space in Multi-Path QUIC",
    ] {
        assert!(html.contains(needle), "report lacks {needle:?}");
    }
    let roles = read_table(&out.join("tables/traces.csv"));
    assert_eq!(roles.rows.len(), 2, "one line per trace pair");
    let meta = std::fs::read_to_string(out.join("suite.json")).expect("meta");
    assert!(meta.contains("traces"), "{meta}");
}

/// Full mode plays distinct trace pairs, and another seed other stretches
/// of the same recordings.
#[test]
fn full_mode_trace_pairs_are_distinct_and_seeded() {
    let svm = SpnsVsMpns::default();
    let pairs = |seed: u64, traces: Option<std::path::PathBuf>| -> Vec<String> {
        let opts = SuiteOptions {
            quick: false,
            seed,
            traces,
        };
        let mut v: Vec<String> = svm
            .runs_with(&opts)
            .expect("runs")
            .iter()
            .filter(|(id, _)| id.ends_with("-mpns"))
            .map(|(_, s)| format!("{:?}", s.paths))
            .collect();
        v.sort();
        v
    };
    // The shared recordings when they are beside the repository (skipped otherwise).
    for traces in [None, shared_traces()] {
        let a = pairs(1, traces.clone());
        assert_eq!(a.len(), 10);
        let mut d = a.clone();
        d.dedup();
        assert_eq!(d.len(), 10, "pairs repeat: {a:?}");
        let b = pairs(2, traces);
        assert!(
            a.iter().all(|p| !b.contains(p)),
            "seed 2 replays seed 1's pairs"
        );
    }
}

fn traces_error(suite: &dyn suites::Suite, dir: &Path) -> String {
    let opts = SuiteOptions {
        quick: true,
        seed: 1,
        traces: Some(dir.to_path_buf()),
    };
    match suite.runs_with(&opts) {
        Ok(runs) => panic!("accepted {} runs", runs.len()),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn bad_trace_directories_are_clear_errors() {
    let svm = SpnsVsMpns::default();
    let tmp = tempfile::tempdir().expect("tempdir");
    let e = traces_error(&svm, &tmp.path().join("nope"));
    assert!(e.contains("nope"), "{e}");
    std::fs::write(tmp.path().join("a-wifi.up"), "1\n2\n").expect("write");
    std::fs::write(tmp.path().join("a-wifi.down"), "1\n2\n").expect("write");
    std::fs::write(tmp.path().join("b.down"), "1\n2\n").expect("write");
    let e = traces_error(&svm, tmp.path());
    assert!(
        e.contains("expected at least one cellular Mahimahi trace") && e.contains("a-wifi"),
        "{e}"
    );
    assert!(!e.contains('\n'), "one line: {e}");
    std::fs::write(tmp.path().join("b.up"), "not a trace\n").expect("write");
    let e = traces_error(&svm, tmp.path());
    assert!(e.contains("b.up"), "{e}");
    let e = traces_error(&suites::rpc::Rpc::default(), tmp.path());
    assert!(e.contains("does not replay trace files"), "{e}");
}
