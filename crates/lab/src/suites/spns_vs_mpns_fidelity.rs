//! The fidelity parts of the `spns-vs-mpns` report: which trace played
//! which role with which queue in every trace pair, and where Table 1
//! differs from the SPNS report's by more than the spread across pairs.

use std::collections::BTreeMap;
use std::path::Path;

use mpquic_report::{Cell, Section, Table};

use super::common::{num, rate_pct, LinkRecord, RunRecord};
use super::fidelity::{format_bytes, queue_text, Comparison, SPNS_REPORT};
use super::spns_vs_mpns::{pair_of, DEFAULT_LIMIT};

/// The paper's transfer (SPNS report §2.3).
const PAPER_BYTES: u64 = 50_000_000;

/// A trace's name for the report: a file's name, or the generator's.
pub fn trace_label(l: &LinkRecord) -> String {
    match l.trace.as_deref() {
        Some(src) if src.starts_with("gen:") => format!("{src} (generated)"),
        Some(src) => Path::new(src)
            .file_name()
            .map_or(src.to_owned(), |n| n.to_string_lossy().into_owned()),
        None => l
            .rate_mbps
            .map_or("fixed rate".to_owned(), |r| format!("fixed {r:.1} Mbit/s")),
    }
}

/// Per pair: the MPNS run (or any run of the pair) whose links describe it.
fn pair_runs(runs: &[(String, RunRecord)]) -> BTreeMap<usize, Vec<(&str, &RunRecord)>> {
    let mut m: BTreeMap<usize, Vec<(&str, &RunRecord)>> = BTreeMap::new();
    for (id, r) in runs {
        if let Some(k) = pair_of(id) {
            m.entry(k).or_default().push((id.as_str(), r));
        }
    }
    m
}

fn role_cells(r: &RunRecord, path: usize) -> Vec<Cell> {
    let Some(l) = r.link(&format!("path{path}.down")) else {
        return vec![Cell::Missing; 4];
    };
    let start = l.trace_start_ms.map(|ms| ms as f64 / 1000.0);
    vec![
        Cell::text(trace_label(l)),
        num(start, 1),
        num(l.rate_mbps, 2),
        Cell::text(queue_text(l)),
    ]
}

/// The section and table: one line per trace pair, naming the trace in
/// each role, its start point, mean rate and queue, the pair's time limit
/// and the MPNS run's utilisation of the pair's mean capacity.
pub fn traces_section(runs: &[(String, RunRecord)]) -> (Section, Table) {
    let mut s = Section::new("Traces: roles, start points and queues per trace pair");
    s.paragraphs.push(
        "The Wi-Fi role is path 0 (10 ms one-way) and the cellular role path 1 (30 ms), as in \
         the paper's Wi-Fi + cellular setup (§2.3). Wi-Fi role: a generated Wi-Fi trace unless \
         the trace directory holds a Wi-Fi-named recording; cellular role: the directory's \
         other files (or a generated LTE trace). File traces replay from a start point chosen \
         from the run seed and the pair. Each direction's drop-tail queue is 1 BDP = the \
         trace's mean rate (over its whole period) x the path's propagation RTT (the sum of \
         both one-way delays), shown for the download direction in 1500-byte packets. \
         Utilisation = MPNS goodput / the sum of both download links' mean rates."
            .to_owned(),
    );
    let cols = [
        "pair",
        "Wi-Fi role trace",
        "start (s)",
        "mean down (Mbit/s)",
        "down queue",
        "cellular role trace",
        "start (s)",
        "mean down (Mbit/s)",
        "down queue",
        "time limit",
        "MPNS utilisation (%)",
    ];
    let mut t = Table::new(
        "Trace pairs (download direction)",
        cols.iter().map(|c| (*c).to_owned()).collect(),
    );
    for (k, rs) in pair_runs(runs) {
        let mpns = rs.iter().find(|(id, _)| id.ends_with("-mpns"));
        let Some((_, r)) = mpns.or(rs.first()) else {
            continue;
        };
        let mut row = vec![Cell::num(k as f64, 0)];
        row.extend(role_cells(r, 0));
        row.extend(role_cells(r, 1));
        let limit = r.scenario["time_limit"].as_str().unwrap_or("").to_owned();
        row.push(Cell::text(limit));
        let util = mpns.and_then(|(_, m)| m.utilisation()).map(|u| 100.0 * u);
        row.push(num(util, 1));
        t.rows.push(row);
    }
    (s, t)
}

/// What the suite knows differs from the paper's setup.
fn known_causes(runs: &[(String, RunRecord)]) -> Vec<String> {
    let mut causes = Vec::new();
    let sources: Vec<&str> = runs
        .iter()
        .flat_map(|(_, r)| &r.links)
        .filter(|l| l.name.ends_with(".down"))
        .filter_map(|l| l.trace.as_deref())
        .collect();
    if sources.iter().any(|s| s.starts_with("gen:")) {
        causes.push("our traces are generated, not the paper's office recordings".to_owned());
    }
    if sources.iter().any(|s| !s.starts_with("gen:")) {
        causes.push("the replayed trace differs from the paper's recording".to_owned());
    }
    let sizes: Vec<u64> = runs.iter().map(|(_, r)| r.bytes_requested).collect();
    if let Some(b) = sizes.iter().find(|b| **b != PAPER_BYTES) {
        causes.push(format!(
            "the transfer is {}, not the paper's {}",
            format_bytes(*b),
            format_bytes(PAPER_BYTES)
        ));
    }
    let failed = runs.iter().filter(|(_, r)| !r.completed).count();
    if failed > 0 {
        causes.push(format!(
            "{failed} of {} runs did not complete within the time limit",
            runs.len()
        ));
    }
    causes
}

/// Per trace pair, `f(mpns, spns)` where both runs exist.
fn per_pair(
    runs: &[(String, RunRecord)],
    f: impl Fn(&RunRecord, &RunRecord) -> Option<f64>,
) -> Vec<f64> {
    let spns_tag = format!("-spns-l{DEFAULT_LIMIT:02}");
    pair_runs(runs)
        .values()
        .filter_map(|rs| {
            let m = rs.iter().find(|(id, _)| id.ends_with("-mpns"))?.1;
            let s = rs.iter().find(|(id, _)| id.ends_with(&spns_tag))?.1;
            f(m, s)
        })
        .collect()
}

/// Table 1's figures beside the paper's, one sample per trace pair.
pub fn comparisons(runs: &[(String, RunRecord)]) -> Vec<Comparison> {
    let causes = known_causes(runs);
    let capacity: Vec<f64> = runs
        .iter()
        .filter_map(|(_, r)| r.download_capacity_mbps())
        .collect();
    let mut speed_causes = causes.clone();
    if let Some(c) = mpquic_report::stats::mean(&capacity) {
        // The paper does not give its traces' capacity; ours bounds our speed.
        speed_causes.push(format!(
            "our pairs' mean download capacity is {:.0} kB/s",
            c * 1e6 / 8.0 / 1000.0
        ));
    }
    let mut ack_causes = causes.clone();
    ack_causes.push("the receiver's ACK policy is ours, not XQUIC's".to_owned());
    let c = |figure: &str, paper: f64, samples: Vec<f64>, causes: &[String]| Comparison {
        figure: figure.to_owned(),
        paper,
        samples,
        per: "trace pairs",
        causes: causes.to_vec(),
    };
    let speed = |r: &RunRecord| r.speed_kbytes_per_s();
    let ack = |r: &RunRecord| Some(r.avg_ack_frame_bytes);
    vec![
        c(
            "MPNS speed (kB/s)",
            7217.6,
            per_pair(runs, |m, _| speed(m)),
            &speed_causes,
        ),
        c(
            "SPNS speed (kB/s)",
            7195.6,
            per_pair(runs, |_, s| speed(s)),
            &speed_causes,
        ),
        c(
            "SPNS vs MPNS speed (%)",
            -0.30,
            per_pair(runs, |m, s| rate_pct(speed(m)?, speed(s)?)),
            &causes,
        ),
        c(
            "MPNS ACK frame size (bytes)",
            16.9,
            per_pair(runs, |m, _| ack(m)),
            &ack_causes,
        ),
        c(
            "SPNS ACK frame size (bytes)",
            38.35,
            per_pair(runs, |_, s| ack(s)),
            &ack_causes,
        ),
        c(
            "SPNS vs MPNS ACK frame size (%)",
            126.92,
            per_pair(runs, |m, s| rate_pct(ack(m)?, ack(s)?)),
            &ack_causes,
        ),
    ]
}

/// The "Differences from the paper" section and its table.
pub fn differences(runs: &[(String, RunRecord)]) -> (Section, Table) {
    super::fidelity::differences_section(&SPNS_REPORT, &comparisons(runs))
}
