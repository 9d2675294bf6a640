//! Tests of the lab suites: valid scenarios, an end-to-end tiny run of
//! `spns-vs-mpns`, and "no number in a report that is not computed from a
//! run": the report's CSV tables are checked against the run JSON files.

use std::path::Path;

use mpquic_lab::labcmd::{load_runs, merge, report_dir, run_suite, RunOptions};
use mpquic_lab::suites;
use mpquic_lab::suites::spns_vs_mpns::{SpnsVsMpns, DEFAULT_LIMIT};
use mpquic_lab::suites::SuiteOptions;
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
    assert_eq!(runs.len(), 3);
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
    assert_eq!((n0, n1), (2, 1));
    let merged = tmp.path().join("merged");
    merge(&merged, &dirs).expect("merge");
    assert_eq!(load_runs(&merged).expect("runs").len(), 3);
    check_table1(&merged);
}

/// The Mahimahi traces shipped beside the repository (`../shared/traces`).
fn shared_traces() -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
    assert!(
        dir.is_dir(),
        "{} missing: the Mahimahi test traces live beside the repository",
        dir.display()
    );
    dir
}

#[test]
fn spns_vs_mpns_replays_mahimahi_files_on_request() {
    let traces = shared_traces();
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("svm-traces");
    let suite = SpnsVsMpns {
        tiny: Some((300_000, 2)),
    };
    let mut opts = tiny_opts(&out);
    opts.traces = Some(traces.clone());
    run_suite(&suite, &opts).expect("run with traces");
    let runs = load_runs(&out).expect("runs");
    assert_eq!(runs.len(), 6);
    let canonical = traces.canonicalize().expect("canonical");
    for (id, r) in &runs {
        assert!(r.completed, "{id}: {:?}", r.outcome);
        let paths = r.scenario["paths"].to_string();
        assert!(!paths.contains("gen:"), "{id}: generated trace in {paths}");
        // Pair k plays trace k on the Wi-Fi-role path and trace k+1 on the
        // cellular-role path, in name order (no name contains "wifi").
        let (first, second) = if id.starts_with("t0-") {
            ("ATT-LTE-driving", "TMobile-LTE-short")
        } else {
            ("TMobile-LTE-short", "Verizon-LTE-short")
        };
        let p = r.scenario["paths"].as_array().expect("paths");
        for (spec, name) in p.iter().zip([first, second]) {
            let spec = spec.as_str().expect("spec");
            let file = canonical.join(format!("{name}.down"));
            assert!(spec.contains(&file.display().to_string()), "{id}: {spec}");
        }
    }
    check_table1(&out);
    let html = std::fs::read_to_string(out.join("index.html")).expect("html");
    assert!(html.contains("user-supplied Mahimahi traces"));
    let meta = std::fs::read_to_string(out.join("suite.json")).expect("meta");
    assert!(meta.contains("traces"), "{meta}");
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
    std::fs::write(tmp.path().join("a.up"), "1\n2\n").expect("write");
    std::fs::write(tmp.path().join("a.down"), "1\n2\n").expect("write");
    std::fs::write(tmp.path().join("b.down"), "1\n2\n").expect("write");
    let e = traces_error(&svm, tmp.path());
    assert!(
        e.contains("expected at least two Mahimahi traces") && e.contains("found 1"),
        "{e}"
    );
    std::fs::write(tmp.path().join("b.up"), "not a trace\n").expect("write");
    let e = traces_error(&svm, tmp.path());
    assert!(e.contains("b.up"), "{e}");
    let e = traces_error(&suites::rpc::Rpc::default(), &shared_traces());
    assert!(e.contains("does not replay trace files"), "{e}");
}
