//! "No number in a report that is not computed from a run" for the suites
//! `rpc`, `pn-space-debate`, `mp-vs-sp` and `xlink`: each test runs a tiny
//! run set of the suite, rebuilds the report through the registry (the
//! code `mpquic lab report` uses), recomputes every cell of the report's
//! tables from the run JSON files with this file's own code, and then
//! shows that the check fails once a run file is changed.

mod table_check;

use std::path::Path;

use mpquic_lab::labcmd::{report_dir, run_suite, RunOptions};
use mpquic_lab::suites::mp_vs_sp::MpVsSp;
use mpquic_lab::suites::pn_space_debate::PnSpaceDebate;
use mpquic_lab::suites::rpc::Rpc;
use serde_json::Value;
use table_check::{
    f, label, mean, num_cell, percentile, rate, read_runs, read_table, tamper, tamper_add,
    text_cell, Check,
};

fn tiny_opts(out: &Path) -> RunOptions {
    RunOptions {
        quick: true,
        seed: 5,
        jobs: 1,
        out: out.to_path_buf(),
        shard: None,
        progress: false,
        traces: None,
        real: false,
        qlog: None,
        crypto: None,
    }
}

/// The `completed` column: `DONE of N` (runs that did not complete are
/// counted, never silently left out of a mean).
fn completed_text(rs: &[&Value]) -> String {
    let done = rs
        .iter()
        .filter(|r| r["completed"].as_bool() == Some(true))
        .count();
    format!("{done} of {}", rs.len())
}

/// Runs of `runs` whose ID ends with `-TAG`.
fn tagged<'a>(runs: &'a [(String, Value)], tag: &str) -> Vec<&'a Value> {
    let suffix = format!("-{tag}");
    runs.iter()
        .filter(|(id, _)| id.ends_with(&suffix))
        .map(|(_, v)| v)
        .collect()
}

// ---------------------------------------------------------------- rpc

/// Per completed request of the runs: `(size, network time s)`, network
/// time counted from the start of its connection's handshake; plus the
/// number of requests.
fn rpc_requests(runs: &[&Value]) -> (Vec<(f64, f64)>, usize) {
    let mut done = Vec::new();
    let mut all = 0;
    for r in runs {
        for q in r["requests"].as_array().expect("requests") {
            all += 1;
            let (size, got) = (f(q, "size"), f(q, "received"));
            if let Some(t) = q["completion_time_s"].as_f64().filter(|_| got >= size) {
                done.push((size, t - f(q, "connection_start_s")));
            }
        }
    }
    (done, all)
}

/// `[network ms, one-second completion %, ACK frame bytes]` of a design.
fn rpc_design(runs: &[(String, Value)], tag: &str) -> [Option<f64>; 3] {
    let rs = tagged(runs, tag);
    let (done, all) = rpc_requests(&rs);
    let times: Vec<f64> = done.iter().map(|d| d.1 * 1000.0).collect();
    let within = done.iter().filter(|d| d.1 <= 1.0).count();
    let acks: Vec<f64> = rs.iter().map(|r| f(r, "avg_ack_frame_bytes")).collect();
    [
        mean(&times),
        (all > 0).then(|| 100.0 * within as f64 / all as f64),
        mean(&acks),
    ]
}

fn check_rpc_comparison(dir: &Path, stem: &str, a: &str, b: &str) -> Check {
    check_rpc_pairs(dir, stem, &[(a, b)])
}

/// Table `stem` holds, for each pair `(a, b)` in order, three rows: design `a`, design `b`,
/// the rates.
fn check_rpc_pairs(dir: &Path, stem: &str, pairs: &[(&str, &str)]) -> Check {
    let runs = read_runs(dir);
    let t = read_table(dir, stem)?;
    if t.rows.len() != 3 * pairs.len() {
        return Err(format!("{stem}: {} rows", t.rows.len()));
    }
    for (rows, &(a, b)) in t.rows.chunks(3).zip(pairs) {
        check_rpc_rows(stem, rows, rpc_design(&runs, a), rpc_design(&runs, b))?;
    }
    Ok(())
}

fn check_rpc_rows(
    stem: &str,
    rows: &[Vec<mpquic_report::Cell>],
    x: [Option<f64>; 3],
    y: [Option<f64>; 3],
) -> Check {
    for (row, fig) in rows.iter().zip([x, y]) {
        for (i, e) in fig.iter().enumerate() {
            num_cell(
                &row[i + 1],
                *e,
                &format!("{stem} {:?} col {}", row[0], i + 1),
            )?;
        }
    }
    let diff = x[1].zip(y[1]).map(|(p, q)| q - p);
    num_cell(&rows[2][1], rate(x[0], y[0]), &format!("{stem} rate time"))?;
    num_cell(&rows[2][2], diff, &format!("{stem} completion diff"))?;
    num_cell(&rows[2][3], rate(x[2], y[2]), &format!("{stem} rate ack"))
}

/// Lower bounds of the Fig. 5a size bins in KB (the last is open).
const FIG5A_BINS_KB: [f64; 10] = [2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0];

fn check_rpc_speed_by_bin(dir: &Path) -> Check {
    let runs = read_runs(dir);
    let t = read_table(dir, "speed_by_bin")?;
    if t.rows.len() != FIG5A_BINS_KB.len() {
        return Err(format!("speed_by_bin: {} rows", t.rows.len()));
    }
    for (d, tag) in ["mpns", "spns", "spns-l04", "mpns-h3", "spns-h3"]
        .iter()
        .enumerate()
    {
        let (done, _) = rpc_requests(&tagged(&runs, tag));
        for (b, lo) in FIG5A_BINS_KB.iter().enumerate() {
            let hi = FIG5A_BINS_KB.get(b + 1).copied().unwrap_or(f64::INFINITY);
            let speeds: Vec<f64> = done
                .iter()
                .filter(|(size, t)| *size >= lo * 1024.0 && *size < hi * 1024.0 && *t > 0.0)
                .map(|(size, t)| size / t / 1000.0)
                .collect();
            let what = format!("speed_by_bin bin {b} design {tag}");
            num_cell(&t.rows[b][d + 1], mean(&speeds), &what)?;
        }
    }
    Ok(())
}

/// The last column of every row of table `stem`.
fn protocol_column(dir: &Path, stem: &str) -> Result<Vec<String>, String> {
    let t = read_table(dir, stem)?;
    Ok(t.rows
        .iter()
        .map(|row| match row.last() {
            Some(mpquic_report::Cell::Text(s)) => s.clone(),
            other => format!("{other:?}"),
        })
        .collect())
}

fn check_rpc(dir: &Path) -> Check {
    check_rpc_comparison(dir, "table2", "mpns", "spns")?;
    check_rpc_comparison(dir, "table3", "mpns", "spns-l04")?;
    check_rpc_comparison(dir, "table2_h3", "mpns-h3", "spns-h3")?;
    check_rpc_pairs(
        dir,
        "zero_rtt",
        &[("mpns", "mpns-0rtt"), ("spns", "spns-0rtt")],
    )?;
    // Every row says which protocol it ran over.
    let expect = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let want = [
        ("table2", expect(&["custom", "custom", "custom"])),
        ("table2_h3", expect(&["HTTP/3", "HTTP/3", "HTTP/3"])),
        ("zero_rtt", expect(&["custom"; 6])),
        (
            "custom_vs_h3",
            expect(&[
                "custom",
                "HTTP/3",
                "custom vs HTTP/3",
                "custom",
                "HTTP/3",
                "custom vs HTTP/3",
            ]),
        ),
    ];
    for (stem, w) in want {
        let got = protocol_column(dir, stem)?;
        if got != w {
            return Err(format!("{stem}: protocol column {got:?}"));
        }
    }
    check_rpc_speed_by_bin(dir)
}

#[test]
fn rpc_tables_match_runs_of_successive_connections() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("rpc");
    run_suite(&Rpc { tiny: Some(2) }, &tiny_opts(&out)).expect("run");
    let runs = read_runs(&out);
    assert_eq!(runs.len(), 14, "two conditions x seven designs");
    for (id, r) in &runs {
        assert_eq!(r["completed"].as_bool(), Some(true), "{id}: {}", r["error"]);
        let conns = r["connections"].as_array().expect("connections");
        assert_eq!(conns.len(), 4, "{id}: four successive short connections");
        for w in conns.windows(2) {
            // Connection k+1 opens only once connection k was closed.
            assert!(f(&w[1], "opened_s") >= f(&w[0], "closed_s"), "{id}");
        }
        let used: std::collections::BTreeSet<u64> = r["requests"]
            .as_array()
            .expect("requests")
            .iter()
            .map(|q| q["connection"].as_u64().expect("connection"))
            .collect();
        assert_eq!(used.len(), 4, "{id}: every connection carries requests");
        // The 0-RTT arms resume and send requests in 0-RTT on connections 2-4; the other
        // arms record nothing about 0-RTT.
        if id.ends_with("-0rtt") {
            for c in &conns[1..] {
                assert!(c["zero_rtt_packets_sent"].as_u64() > Some(0), "{id}: {c}");
                assert_eq!(c["zero_rtt_accepted"], true, "{id}: {c}");
            }
        } else {
            assert!(!r.to_string().contains("zero_rtt"), "{id}");
        }
    }
    report_dir(&out).expect("report");
    check_rpc(&out).unwrap_or_else(|e| panic!("{e}"));
    tamper(&out, "c00-spns", "/avg_ack_frame_bytes", 3.0);
    assert!(
        check_rpc(&out).is_err(),
        "a changed run must fail the check"
    );
}

// ---------------------------------------------------- pn-space-debate

/// Runs of `space` (ID `SPACE` + point number + `-TAG`) for a tag.
fn space_runs<'a>(runs: &'a [(String, Value)], space: &str, tag: &str) -> Vec<&'a Value> {
    let suffix = format!("-{tag}");
    runs.iter()
        .filter(|(id, _)| {
            id.strip_prefix(space)
                .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
                && id.ends_with(&suffix)
        })
        .map(|(_, v)| v)
        .collect()
}

/// `[median time, median ranges per ACK, median retx %, max retx %]`.
fn space_figures(rs: &[&Value]) -> [Option<f64>; 4] {
    let completed: Vec<&&Value> = rs
        .iter()
        .filter(|r| r["completed"].as_bool() == Some(true))
        .collect();
    let times: Vec<f64> = completed
        .iter()
        .filter_map(|r| r["completion_time_s"].as_f64())
        .collect();
    let ranges: Vec<f64> = rs.iter().map(|r| f(r, "mean_ranges_per_ack")).collect();
    let retx: Vec<f64> = rs
        .iter()
        .map(|r| {
            let asked = f(r, "bytes_requested");
            if asked == 0.0 {
                0.0
            } else {
                100.0 * f(r, "retransmitted_bytes") / asked
            }
        })
        .collect();
    [
        percentile(&times, 50.0),
        percentile(&ranges, 50.0),
        percentile(&retx, 50.0),
        retx.iter().copied().reduce(f64::max),
    ]
}

fn check_space_row(row: &[mpquic_report::Cell], rs: &[&Value], what: &str) -> Check {
    text_cell(&row[1], &completed_text(rs), what)?;
    for (i, e) in space_figures(rs).iter().enumerate() {
        num_cell(&row[i + 2], *e, &format!("{what} col {}", i + 2))?;
    }
    Ok(())
}

/// Declared losses (sum over paths), true losses and spurious retransmissions of runs.
fn loss_sums(rs: &[&Value]) -> [f64; 3] {
    let declared: f64 = rs
        .iter()
        .flat_map(|r| r["paths"].as_array().expect("paths"))
        .map(|p| f(p, "packets_lost"))
        .sum();
    let truth: f64 = rs.iter().map(|r| f(r, "true_losses")).sum();
    let spurious: f64 = rs.iter().map(|r| f(r, "spurious_retransmissions")).sum();
    [declared, truth, spurious]
}

/// The heterogeneous naive-vs-report table: the space row check plus the loss sums.
fn check_pn_headline(dir: &Path, runs: &[(String, Value)]) -> Check {
    let t = read_table(dir, "hetero_naive_vs_report")?;
    let tags = ["spns-cubic-l04-naive", "spns-cubic-l04", "mpns-cubic-l04"];
    if t.rows.len() != tags.len() {
        return Err(format!("hetero_naive_vs_report: {} rows", t.rows.len()));
    }
    for (row, tag) in t.rows.iter().zip(tags) {
        text_cell(&row[0], tag, "hetero_naive_vs_report")?;
        let rs = space_runs(runs, "hetero", tag);
        text_cell(&row[1], &completed_text(&rs), tag)?;
        let [time, _, median_retx, max_retx] = space_figures(&rs);
        let [declared, truth, spurious] = loss_sums(&rs);
        let expected = [
            time,
            median_retx,
            max_retx,
            Some(declared),
            Some(truth),
            Some(spurious),
        ];
        for (i, e) in expected.iter().enumerate() {
            num_cell(&row[i + 2], *e, &format!("headline {tag} col {}", i + 2))?;
        }
    }
    Ok(())
}

fn check_pn_space_debate(dir: &Path) -> Check {
    let runs = read_runs(dir);
    check_pn_headline(dir, &runs)?;
    for space in ["homo", "hetero", "tri"] {
        let t = read_table(dir, &format!("{space}_summary"))?;
        let mut covered = 0;
        for row in &t.rows {
            let tag = label(&row[0]);
            let rs = space_runs(&runs, space, &tag);
            covered += rs.len();
            check_space_row(row, &rs, &format!("{space} {tag}"))?;
        }
        let all = runs.iter().filter(|(id, _)| id.starts_with(space)).count();
        if covered != all || t.rows.len() != 11 {
            return Err(format!(
                "{space}: {} rows cover {covered} of {all} runs",
                t.rows.len()
            ));
        }
    }
    Ok(())
}

#[test]
fn pn_space_debate_tables_match_runs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("pn");
    let suite = PnSpaceDebate {
        tiny: Some((1, 1_000_000)),
    };
    run_suite(&suite, &tiny_opts(&out)).expect("run");
    let runs = read_runs(&out);
    assert_eq!(
        runs.len(),
        33,
        "three spaces x one point x eleven configurations"
    );
    report_dir(&out).expect("report");
    check_pn_space_debate(&out).unwrap_or_else(|e| panic!("{e}"));
    let id = runs
        .iter()
        .find(|(id, _)| id.starts_with("hetero") && id.ends_with("-spns-cubic-l32"))
        .map(|(id, _)| id.clone())
        .expect("hetero run");
    tamper(&out, &id, "/mean_ranges_per_ack", 5.0);
    assert!(check_pn_space_debate(&out).is_err());
    // The naive-vs-report table reads the loss figures.
    report_dir(&out).expect("report");
    check_pn_space_debate(&out).unwrap_or_else(|e| panic!("rebuilt report: {e}"));
    let naive = runs
        .iter()
        .find(|(id, _)| id.starts_with("hetero") && id.ends_with("-spns-cubic-l04-naive"))
        .map(|(id, _)| id.clone())
        .expect("naive hetero run");
    tamper_add(&out, &naive, "/true_losses", 7.0);
    assert!(check_pn_space_debate(&out).is_err());
}

// ---------------------------------------------------------- spns-rules

/// Runs of an ablation arm: IDs `CONDITION-ARM`, the condition without a dash.
fn arm_runs<'a>(runs: &'a [(String, Value)], arm: &str) -> Vec<&'a Value> {
    let suffix = format!("-{arm}");
    runs.iter()
        .filter(|(id, _)| {
            id.strip_suffix(&suffix)
                .is_some_and(|c| !c.is_empty() && !c.contains('-'))
        })
        .map(|(_, v)| v)
        .collect()
}

/// Mean speed in kB/s over the completed runs.
fn mean_speed(rs: &[&Value]) -> Option<f64> {
    let speeds: Vec<f64> = rs
        .iter()
        .filter(|r| r["completed"].as_bool() == Some(true))
        .filter_map(|r| {
            let t = r["completion_time_s"].as_f64().filter(|t| *t > 0.0)?;
            Some(f(r, "bytes_received") / t / 1000.0)
        })
        .collect();
    mean(&speeds)
}

/// Whether a run's sender or receiver minimum RTT of a path is below the path's floor (the
/// sender's unless it only has fallback samples from other paths' ACKs).
fn below_floor(r: &Value) -> bool {
    r["paths"].as_array().expect("paths").iter().any(|p| {
        let Some(floor) = p["min_rtt_floor_ms"].as_f64() else {
            return false;
        };
        let fallback_only = f(p, "own_rtt_samples") == 0.0 && f(p, "borrowed_rtt_samples") > 0.0;
        let server =
            f(p, "rtt_samples") > 0.0 && !fallback_only && f(p, "min_rtt_ms") < floor - 1e-6;
        let client = p["receiver_min_rtt_ms"]
            .as_f64()
            .is_some_and(|m| m < floor - 1e-6);
        server || client
    })
}

fn check_spns_rules(dir: &Path) -> Check {
    let runs = read_runs(dir);
    let t = read_table(dir, "ablation")?;
    let base = mean_speed(&arm_runs(&runs, "spns-report"));
    let mut covered = 0;
    for row in &t.rows {
        let arm = label(&row[0]);
        let rs = arm_runs(&runs, &arm);
        covered += rs.len();
        let speed = mean_speed(&rs);
        let [declared, truth, spurious] = loss_sums(&rs);
        let retx: Vec<f64> = rs
            .iter()
            .map(|r| 100.0 * f(r, "retransmitted_bytes") / f(r, "bytes_requested"))
            .collect();
        let srtt: Vec<f64> = rs
            .iter()
            .flat_map(|r| r["paths"].as_array().expect("paths"))
            .filter_map(|p| p["srtt_mae_ratio"].as_f64())
            .map(|x| 100.0 * x)
            .collect();
        text_cell(&row[1], &completed_text(&rs), &arm)?;
        let expected = [
            speed,
            rate(base, speed),
            Some(declared),
            Some(truth),
            (truth > 0.0).then(|| declared / truth),
            Some(spurious),
            mean(&retx),
            mean(&srtt),
            Some(rs.iter().filter(|r| below_floor(r)).count() as f64),
        ];
        for (i, e) in expected.iter().enumerate() {
            num_cell(&row[i + 2], *e, &format!("ablation {arm} col {}", i + 2))?;
        }
    }
    if covered != runs.len() {
        return Err(format!(
            "ablation rows cover {covered} of {} runs",
            runs.len()
        ));
    }
    Ok(())
}

#[test]
fn spns_rules_tables_match_runs() {
    use mpquic_lab::suites::spns_rules::SpnsRulesSuite;
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("rules");
    let suite = SpnsRulesSuite {
        tiny: Some((1, 2_000_000)),
    };
    run_suite(&suite, &tiny_opts(&out)).expect("run");
    let runs = read_runs(&out);
    assert_eq!(runs.len(), 10, "one condition x ten arms");
    for (id, r) in &runs {
        assert_eq!(r["completed"].as_bool(), Some(true), "{id}: {}", r["error"]);
        // Ground truth: every run of the report's rules keeps its RTT samples on their path.
        let rules = r["scenario"]["transport"]["spns_rules"]
            .as_str()
            .expect("rules");
        if !rules.contains("no-per-path-rtt-samples") && !rules.starts_with("naive") {
            assert_eq!(r["violations"], serde_json::json!([]), "{id}");
        }
    }
    report_dir(&out).expect("report");
    check_spns_rules(&out).unwrap_or_else(|e| panic!("{e}"));
    tamper_add(&out, "fixed-spns-naive", "/spurious_retransmissions", 5.0);
    assert!(
        check_spns_rules(&out).is_err(),
        "a changed run must fail the check"
    );
}

// ------------------------------------------------------------ mp-vs-sp

fn completed_time(r: Option<&Value>) -> Option<f64> {
    let r = r.filter(|r| r["completed"].as_bool() == Some(true))?;
    r["completion_time_s"].as_f64()
}

fn check_mp_vs_sp(dir: &Path) -> Check {
    let runs = read_runs(dir);
    let by_id: std::collections::BTreeMap<&str, &Value> =
        runs.iter().map(|(id, v)| (id.as_str(), v)).collect();
    let schedulers = [
        ("mp", "min-rtt", false),
        ("mp-ecf", "ecf", false),
        ("mp-blest", "blest", false),
        ("mp-race", "min-rtt", true),
        ("mp-ecf-race", "ecf", true),
        ("mp-blest-race", "blest", true),
    ];
    for (prefix, stem) in [('f', "ratio_loss_free"), ('p', "ratio_lossy")] {
        let t = read_table(dir, stem)?;
        if t.rows.len() != schedulers.len() {
            return Err(format!("{stem}: {} rows", t.rows.len()));
        }
        for (row, (tag, name, race)) in t.rows.iter().zip(schedulers) {
            let label = if race {
                format!("{name} + race")
            } else {
                name.to_owned()
            };
            text_cell(&row[0], &label, tag)?;
            // Point -> its seeds' run-ID stems (`p003`, `p003s1`, ...), in run order.
            let mut points: Vec<(String, Vec<String>)> = Vec::new();
            for (id, mp) in &runs {
                let Some(stem_id) = id
                    .strip_suffix(&format!("-{tag}"))
                    .filter(|p| p.starts_with(prefix) && !p.contains('-'))
                else {
                    continue;
                };
                if mp["scenario"]["transport"]["scheduler"].as_str() != Some(name) {
                    return Err(format!("{id}: not scheduler {name}"));
                }
                let raced = mp["scenario"]["transport"]["race_paths"].as_bool() == Some(true);
                if raced != race {
                    return Err(format!("{id}: race_paths is {raced}"));
                }
                let lossy = mp["scenario"]["paths"]
                    .as_array()
                    .expect("paths")
                    .iter()
                    .any(|p| !p.as_str().expect("spec").contains("loss=none"));
                if prefix == 'f' && lossy {
                    return Err(format!("{id}: random loss in the loss-free set"));
                }
                // Common random numbers: path i draws from the streams named after it, in the
                // multipath runs and in its single-path run alike.
                for (i, p) in mp["scenario"]["paths"]
                    .as_array()
                    .expect("paths")
                    .iter()
                    .enumerate()
                {
                    let single =
                        &by_id[format!("{stem_id}-sp{i}").as_str()]["scenario"]["paths"][0];
                    let streams = format!("streams={i}");
                    if !p.as_str().expect("spec").ends_with(&streams) || single != p {
                        return Err(format!(
                            "{id}: path {i} is {p}, its single-path run's {single}"
                        ));
                    }
                }
                // Other seeds of a point are `p003s1`, `p003s2`, ...
                let base = match stem_id[1..].find('s') {
                    Some(k) => stem_id[..=k].to_owned(),
                    None => stem_id.to_owned(),
                };
                match points.iter_mut().find(|(b, _)| *b == base) {
                    Some((_, seeds)) => seeds.push(stem_id.to_owned()),
                    None => points.push((base, vec![stem_id.to_owned()])),
                }
            }
            if prefix == 'p' && points.iter().any(|(_, seeds)| seeds.len() < 2) {
                return Err(format!("{stem}: a lossy point ran with one seed"));
            }
            let mut ratios = Vec::new();
            for (_, seeds) in &points {
                // Mean completion time over the point's seeds; None if one did not finish.
                let mean_time = |k: &str| {
                    let times: Option<Vec<f64>> = seeds
                        .iter()
                        .map(|p| completed_time(by_id.get(format!("{p}-{k}").as_str()).copied()))
                        .collect();
                    times.and_then(|t| mean(&t))
                };
                let best = mean_time("sp0")
                    .unwrap_or(f64::INFINITY)
                    .min(mean_time("sp1").unwrap_or(f64::INFINITY));
                ratios.push(mean_time(tag).filter(|t| *t > 0.0).map(|t| best / t));
            }
            let values: Vec<f64> = ratios.iter().flatten().copied().collect();
            let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
            let share =
                |n: usize| (!ratios.is_empty()).then(|| 100.0 * n as f64 / ratios.len() as f64);
            let worst = values.iter().copied().reduce(f64::min);
            let expected = [
                Some(ratios.len() as f64),
                Some(ratios.iter().filter(|r| r.is_none()).count() as f64),
                percentile(&finite, 50.0),
                mean(&finite),
                percentile(&finite, 10.0),
                percentile(&finite, 90.0),
                worst.filter(|w| w.is_finite()),
                share(values.iter().filter(|v| **v > 1.0).count()),
                share(values.iter().filter(|v| **v * 1.05 >= 1.0).count()),
            ];
            for (i, e) in expected.iter().enumerate() {
                num_cell(&row[i + 1], *e, &format!("{stem} {name} col {}", i + 1))?;
            }
        }
    }
    let h = read_table(dir, "handover")?;
    let handover: Vec<&(String, Value)> = runs
        .iter()
        .filter(|(id, _)| id.starts_with("handover-"))
        .collect();
    if h.rows.len() != handover.len() {
        return Err(format!("handover: {} rows", h.rows.len()));
    }
    for (row, (id, r)) in h.rows.iter().zip(handover) {
        let done = r["completed"].as_bool() == Some(true);
        text_cell(&row[1], if done { "yes" } else { "no" }, id)?;
        num_cell(&row[2], completed_time(Some(r)), id)?;
        num_cell(&row[3], Some(f(r, "goodput_mbps")), id)?;
    }
    Ok(())
}

#[test]
fn mp_vs_sp_tables_match_runs() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("mpsp");
    let suite = MpVsSp {
        tiny: Some((3, 1_000_000)),
    };
    run_suite(&suite, &tiny_opts(&out)).expect("run");
    let runs = read_runs(&out);
    assert!(runs.len() >= 15, "{} runs", runs.len());
    report_dir(&out).expect("report");
    check_mp_vs_sp(&out).unwrap_or_else(|e| panic!("{e}"));
    tamper(&out, "handover-mp", "/goodput_mbps", 2.0);
    assert!(check_mp_vs_sp(&out).is_err());
    report_dir(&out).expect("report");
    check_mp_vs_sp(&out).unwrap_or_else(|e| panic!("{e}"));
    tamper(&out, "p000-mp-ecf", "/completion_time_s", 1e-3);
    assert!(check_mp_vs_sp(&out).is_err(), "a changed ECF run must show");
    report_dir(&out).expect("report");
    check_mp_vs_sp(&out).unwrap_or_else(|e| panic!("{e}"));
    tamper(&out, "f001-mp-blest", "/completion_time_s", 1e-3);
    assert!(
        check_mp_vs_sp(&out).is_err(),
        "a changed loss-free run must show"
    );
    report_dir(&out).expect("report");
    check_mp_vs_sp(&out).unwrap_or_else(|e| panic!("{e}"));
    tamper(&out, "p001s1-mp-ecf-race", "/completion_time_s", 1e-3);
    assert!(
        check_mp_vs_sp(&out).is_err(),
        "a changed run of a lossy point's second seed must show"
    );
}

// ---------------------------------------------------------------- xlink

/// Per configuration label (`single`, `vanilla`, `qoe-95-80`, ...), the
/// `video` sections of its runs (run IDs are `tTRACE-LABEL`).
fn xlink_groups(runs: &[(String, Value)]) -> std::collections::BTreeMap<String, Vec<&Value>> {
    let mut m: std::collections::BTreeMap<String, Vec<&Value>> = Default::default();
    for (id, r) in runs {
        let (_, label) = id.split_once('-').expect("tTRACE-LABEL");
        m.entry(label.to_owned()).or_default().push(&r["video"]);
    }
    m
}

/// `(samples below 50 ms, samples, re-injected bytes, stream bytes sent)`.
fn xlink_low_and_cost(vids: &[&Value]) -> (usize, usize, f64, f64) {
    let mut out = (0, 0, 0.0, 0.0);
    for v in vids {
        let buffer = v["buffer"].as_array().expect("buffer");
        out.0 += buffer
            .iter()
            .filter(|p| p[1].as_f64().expect("level") < 50.0)
            .count();
        out.1 += buffer.len();
        out.2 += f(v, "reinjected_bytes");
        out.3 += f(v, "stream_bytes_sent");
    }
    out
}

fn check_xlink_summary(
    dir: &Path,
    groups: &std::collections::BTreeMap<String, Vec<&Value>>,
    completed: &std::collections::BTreeMap<String, usize>,
) -> Check {
    let t = read_table(dir, "summary")?;
    if t.rows.len() != groups.len() {
        return Err(format!(
            "summary: {} rows for {} configurations",
            t.rows.len(),
            groups.len()
        ));
    }
    for row in &t.rows {
        let name = label(&row[0]);
        let vids = groups
            .get(&name)
            .ok_or(format!("summary: unknown row {name}"))?;
        let rebuffer: Vec<f64> = vids.iter().map(|v| f(v, "rebuffer_rate")).collect();
        let first: Vec<f64> = vids
            .iter()
            .filter_map(|v| v["first_frame_s"].as_f64())
            .map(|s| s * 1000.0)
            .collect();
        let chunks: Vec<f64> = vids
            .iter()
            .flat_map(|v| v["chunk_completion_ms"].as_array().expect("chunks").iter())
            .map(|c| c.as_f64().expect("ms"))
            .collect();
        let (_, _, reinjected, sent) = xlink_low_and_cost(vids);
        let done = completed.get(&name).copied().unwrap_or(0);
        text_cell(&row[1], &format!("{done} of {}", vids.len()), &name)?;
        let expected = [
            None,
            mean(&rebuffer).map(|r| r * 100.0),
            mean(&first),
            percentile(&chunks, 50.0),
            percentile(&chunks, 95.0),
            percentile(&chunks, 99.0),
            Some(100.0 * reinjected / sent.max(1.0)),
        ];
        for (i, e) in expected.iter().enumerate().skip(1) {
            num_cell(&row[i + 1], *e, &format!("summary {name} col {}", i + 1))?;
        }
    }
    Ok(())
}

fn check_xlink(dir: &Path) -> Check {
    let runs = read_runs(dir);
    let groups = xlink_groups(&runs);
    let mut completed = std::collections::BTreeMap::new();
    for (id, r) in &runs {
        let (_, label) = id.split_once('-').expect("tTRACE-LABEL");
        *completed.entry(label.to_owned()).or_insert(0) +=
            usize::from(r["completed"].as_bool() == Some(true));
    }
    check_xlink_summary(dir, &groups, &completed)?;
    let t = read_table(dir, "table2")?;
    let low_share = |vids: &[&Value]| {
        let (low, n, _, _) = xlink_low_and_cost(vids);
        low as f64 / n.max(1) as f64
    };
    let base = groups.get("vanilla").map(|v| low_share(v));
    if t.rows.len() != groups.len() {
        return Err(format!("table2: {} rows", t.rows.len()));
    }
    for row in &t.rows {
        let name = label(&row[0]);
        let vids = groups
            .get(&name)
            .ok_or(format!("table2: unknown row {name}"))?;
        let share = low_share(vids);
        let (_, _, reinjected, sent) = xlink_low_and_cost(vids);
        let reduction = base.filter(|b| *b > 0.0).map(|b| (b - share) / b * 100.0);
        num_cell(&row[1], Some(share * 100.0), &format!("table2 {name} low"))?;
        num_cell(&row[2], reduction, &format!("table2 {name} reduction"))?;
        num_cell(
            &row[3],
            Some(100.0 * reinjected / sent.max(1.0)),
            &format!("table2 {name} cost"),
        )?;
    }
    Ok(())
}

/// The xlink suite's own run list simulates its vanilla runs first to set
/// the QoE thresholds (minutes even in quick mode), so this test builds a
/// tiny run set with the same scenario builder: one trace, four chunks,
/// single path, vanilla, re-injection always, QoE (95, 80) — and has the
/// registry's xlink report read it, as `mpquic lab report` would.
#[test]
fn xlink_tables_match_runs() {
    use mpquic_lab::video::{xlink_scenario, XlinkScheme};
    let tmp = tempfile::tempdir().expect("tempdir");
    let out = tmp.path().join("xlink");
    std::fs::create_dir_all(out.join("runs")).expect("runs dir");
    let (trace, chunks) = (101, 4);
    let vanilla =
        mpquic_lab::run(&xlink_scenario(trace, chunks, XlinkScheme::Vanilla)).expect("run");
    let ptl: Vec<f64> = vanilla
        .video
        .as_ref()
        .expect("video")
        .play_time_left_ms()
        .collect();
    let mut results = vec![("vanilla".to_owned(), vanilla)];
    for (label, scheme) in [
        ("single", XlinkScheme::SinglePath),
        ("always", XlinkScheme::Always),
        ("qoe-95-80", XlinkScheme::qoe_at(95.0, 80.0, &ptl)),
    ] {
        let r = mpquic_lab::run(&xlink_scenario(trace, chunks, scheme)).expect("run");
        results.push((label.to_owned(), r));
    }
    for (label, r) in &results {
        let path = out.join("runs").join(format!("t{trace}-{label}.json"));
        std::fs::write(path, serde_json::to_string_pretty(r).expect("json")).expect("write");
    }
    let meta = serde_json::json!({"suite": "xlink", "quick": true, "seed": 1});
    std::fs::write(out.join("suite.json"), meta.to_string()).expect("suite.json");
    report_dir(&out).expect("report");
    check_xlink(&out).unwrap_or_else(|e| panic!("{e}"));
    tamper(
        &out,
        &format!("t{trace}-vanilla"),
        "/video/first_frame_s",
        2.0,
    );
    assert!(check_xlink(&out).is_err());
}
