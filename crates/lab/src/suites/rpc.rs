//! `rpc`: the SPNS report's A/B test (Tables 2–3, Fig. 5) on the simulator.
//!
//! Requests with response sizes spread over the log bins of Fig. 5a
//! (2 KB … ≥1 MB) over a population of two-path conditions chosen by WSP,
//! with MPNS, SPNS, and SPNS with an ACK-range limit of 4. The paper's A/B
//! test measured short connections in production, so each run is a
//! sequence of [`CONNECTIONS`] short connections (a new one, with its own
//! handshake, after the previous one closed), each carrying a batch of
//! parallel requests that mixes small and large sizes.

use std::path::Path;

use mpquic_report::{BarChart, Cell, Plot, Section, Table};

use super::common::{
    config_text, mean_of, num, rate_pct, reference_table, ReportBuilder, ReportOutput, RunRecord,
    RunSpec,
};
use super::wsp;
use super::Suite;
use crate::scenario::Scenario;

/// The `rpc` suite.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rpc {
    /// Test hook: number of two-path conditions, replacing the quick/full
    /// counts (for fast end-to-end tests).
    pub tiny: Option<usize>,
}

/// Successive short connections per run.
pub const CONNECTIONS: usize = 4;

/// Designs: run-ID tag, multipath mode, ACK-range limit, label.
pub const DESIGNS: [(&str, &str, usize, &str); 3] = [
    ("mpns", "mpns", 32, "MPNS"),
    ("spns", "spns", 32, "SPNS"),
    ("spns-l04", "spns", 4, "SPNS limit 4"),
];

/// Lower bounds (KB) of the Fig. 5a size bins; the last is open-ended.
pub const BINS_KB: [u64; 10] = [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];

/// Response sizes of one run: two per bin (at 1.0× and 1.5× its lower
/// bound), ordered so that each of the [`CONNECTIONS`] consecutive batches
/// takes every `CONNECTIONS`-th size and thus spans the bins.
pub fn sizes() -> Vec<u64> {
    let ascending: Vec<u64> = BINS_KB
        .iter()
        .flat_map(|kb| [kb * 1024, kb * 1536])
        .collect();
    (0..CONNECTIONS)
        .flat_map(|k| ascending.iter().skip(k).step_by(CONNECTIONS).copied())
        .collect()
}

/// Bin index of a size in bytes.
pub fn bin_of(size: u64) -> usize {
    BINS_KB
        .iter()
        .rposition(|kb| size >= kb * 1024)
        .unwrap_or(0)
}

impl Suite for Rpc {
    fn name(&self) -> &'static str {
        "rpc"
    }

    fn description(&self) -> &'static str {
        "SPNS report Tables 2-3, Fig 5: short connections, parallel requests 2 KB..>1 MB, MPNS vs SPNS vs SPNS limit 4"
    }

    fn runs(&self, quick: bool, seed: u64) -> Vec<(String, Scenario)> {
        let n = self.tiny.unwrap_or(if quick { 12 } else { 60 });
        let sizes: Vec<String> = sizes().iter().map(|s| format!("\"{s}B\"")).collect();
        let workload = format!(
            "requests = {{ sizes = [{}], connections = {CONNECTIONS} }}",
            sizes.join(", ")
        );
        let mut out = Vec::new();
        for (i, u) in wsp::design(n, 5, seed).iter().enumerate() {
            let loss = wsp::lin(u[4], 0.0, 1.0);
            let paths = [
                format!(
                    "rate={:.0}kbit,rtt={:.0}ms,queue=1bdp,loss={loss:.3}%",
                    wsp::log(u[0], 1.0, 50.0) * 1000.0,
                    wsp::lin(u[2], 10.0, 150.0)
                ),
                format!(
                    "rate={:.0}kbit,rtt={:.0}ms,queue=1bdp,loss={loss:.3}%",
                    wsp::log(u[1], 1.0, 50.0) * 1000.0,
                    wsp::lin(u[3], 10.0, 150.0)
                ),
            ];
            for (tag, mode, limit, _) in DESIGNS {
                let id = format!("c{i:02}-{tag}");
                let spec = RunSpec {
                    name: &id,
                    seed: seed.wrapping_add(i as u64),
                    paths: &paths,
                    workload: workload.clone(),
                    multipath: mode,
                    cc: "cubic",
                    ack_range_limit: Some(limit),
                    time_limit_s: 120,
                    time_series: false,
                };
                out.push((id.clone(), spec.build()));
            }
        }
        out
    }

    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput> {
        let mut rb = ReportBuilder::new(out_dir, &[super::fidelity::SPNS_REPORT], runs)?;
        let m: Vec<_> = DESIGNS.iter().map(|d| design_figures(runs, d.0)).collect();
        let mut s =
            Section::new("Tables 2-3: network time, 1-second completion rate, ACK frame size");
        s.paragraphs.push(
            "Network time = request completion time - start of the handshake of the connection \
             that carried it (handshake included), averaged over every request of every run. \
             The paper's A/B test measured short connections in production (1.5 M samples on \
             Taobao); here each run is 4 successive short connections over one WSP-chosen \
             two-path condition, each carrying 5 parallel requests that span the size bins \
             (20 per run); the ACK frame size is the client's mean over all its connections."
                .into(),
        );
        let t2 = compare("Ours: Table 2 (MPNS vs SPNS)", &m[0], &m[1]);
        let t3 = compare(
            "Ours: Table 3 (MPNS vs SPNS with ACK-range limit 4)",
            &m[0],
            &m[2],
        );
        rb.table(&mut s, "table2", t2.clone())?;
        rb.table(&mut s, "table3", t3)?;
        s.reference = Some(reference_table(
            "Paper (SPNS report, seed 000, Tables 2-3)",
            &[
                "",
                "Network time (ms)",
                "1-second completion rate",
                "ACK frame size (bytes)",
            ],
            &[
                &["T2 MPNS", "98.74", "99.1%", "8.97"],
                &["T2 SPNS", "99.53", "99.1%", "11.99"],
                &["T2 Rate", "+0.80%", "0", "+33.67%"],
                &["T3 MPNS", "104.90", "99.1%", "8.69"],
                &["T3 SPNS (limit 4)", "107.68", "99.0%", "6.81"],
                &["T3 Rate", "+2.65%", "-0.10%", "-21.63%"],
            ],
        ));
        let (tb, bar) = speed_by_bin(runs);
        rb.table(&mut s, "speed_by_bin", tb)?;
        rb.figure(
            &mut s,
            &bar,
            "speed_by_bin",
            "Fig. 5a: mean speed by response size bin",
        )?;
        let series = DESIGNS
            .iter()
            .map(|d| {
                (
                    d.3.to_owned(),
                    design_runs(runs, d.0)
                        .iter()
                        .map(|r| r.avg_ack_frame_bytes)
                        .collect(),
                )
            })
            .collect();
        let cdf = Plot::cdf(
            "Mean ACK frame size per connection",
            "mean ACK frame size (bytes)",
            series,
        );
        rb.figure(
            &mut s,
            &cdf,
            "ack_size_cdf",
            "CDF of per-connection mean ACK frame size",
        )?;
        let mut cfg = Section::new("Configuration");
        cfg.config = Some(config_text(self.name(), runs));
        rb.sections = vec![s, cfg];
        rb.finish(
            "rpc: short connections with parallel requests (SPNS report Tables 2-3, Fig. 5)",
            Some(t2),
        )
    }
}

fn design_runs<'a>(runs: &'a [(String, RunRecord)], tag: &str) -> Vec<&'a RunRecord> {
    let suffix = format!("-{tag}");
    runs.iter()
        .filter(|(id, _)| id.ends_with(&suffix))
        .map(|(_, r)| r)
        .collect()
}

/// Per-request network times (s) of a run, from the start of the
/// handshake of the request's connection (the paper's "network time" of a
/// short connection); `None` for unfinished requests.
pub fn network_times(r: &RunRecord) -> Vec<(u64, Option<f64>)> {
    r.requests
        .iter()
        .map(|q| {
            (
                q.size,
                q.completion_time_s
                    .filter(|_| q.received >= q.size)
                    .map(|t| t - q.connection_start_s),
            )
        })
        .collect()
}

/// Label, mean network time (ms), 1-s completion rate (%), mean ACK frame size.
pub struct DesignFigures {
    label: String,
    network_ms: Option<f64>,
    one_second: Option<f64>,
    ack_bytes: Option<f64>,
}

/// The Table 2/3 figures of one design.
pub fn design_figures(runs: &[(String, RunRecord)], tag: &str) -> DesignFigures {
    let rs = design_runs(runs, tag);
    let times: Vec<Option<f64>> = rs
        .iter()
        .flat_map(|r| network_times(r))
        .map(|(_, t)| t)
        .collect();
    let ok = times.iter().filter(|t| t.is_some_and(|t| t <= 1.0)).count();
    DesignFigures {
        label: DESIGNS
            .iter()
            .find(|d| d.0 == tag)
            .map_or(tag, |d| d.3)
            .to_owned(),
        network_ms: mean_of(times.iter().map(|t| t.map(|t| t * 1000.0))),
        one_second: (!times.is_empty()).then(|| 100.0 * ok as f64 / times.len() as f64),
        ack_bytes: mean_of(rs.iter().map(|r| Some(r.avg_ack_frame_bytes))),
    }
}

fn compare(title: &str, a: &DesignFigures, b: &DesignFigures) -> Table {
    let cols = [
        "",
        "network time (ms)",
        "1-second completion rate (%)",
        "ACK frame size (bytes)",
    ];
    let mut t = Table::new(title, cols.iter().map(|c| (*c).to_owned()).collect());
    for d in [a, b] {
        t.rows.push(vec![
            Cell::text(&d.label),
            num(d.network_ms, 2),
            num(d.one_second, 1),
            num(d.ack_bytes, 2),
        ]);
    }
    let rate = |x: Option<f64>, y: Option<f64>| num(x.zip(y).and_then(|(x, y)| rate_pct(x, y)), 2);
    let diff = num(a.one_second.zip(b.one_second).map(|(x, y)| y - x), 1);
    t.rows.push(vec![
        Cell::text("Rate (%; completion: difference)"),
        rate(a.network_ms, b.network_ms),
        diff,
        rate(a.ack_bytes, b.ack_bytes),
    ]);
    t
}

fn speed_by_bin(runs: &[(String, RunRecord)]) -> (Table, BarChart) {
    let cats: Vec<String> = BINS_KB
        .iter()
        .enumerate()
        .map(|(i, kb)| {
            BINS_KB
                .get(i + 1)
                .map_or(format!("[{kb},inf)"), |hi| format!("[{kb},{hi})"))
        })
        .collect();
    let mut cols = vec!["size bin (KB)".to_owned()];
    cols.extend(DESIGNS.iter().map(|d| format!("{} speed (kB/s)", d.3)));
    let mut t = Table::new("Ours: mean speed by size bin", cols);
    let mut bar = BarChart::new("Speed by response size", "speed (kB/s)", cats.clone());
    let mut per_design = Vec::new();
    for d in DESIGNS {
        let mut v = vec![Vec::new(); BINS_KB.len()];
        for r in design_runs(runs, d.0) {
            for (size, t) in network_times(r) {
                if let Some(t) = t.filter(|t| *t > 0.0) {
                    v[bin_of(size)].push(size as f64 / t / 1000.0);
                }
            }
        }
        per_design.push(
            v.iter()
                .map(|x| mpquic_report::stats::mean(x))
                .collect::<Vec<_>>(),
        );
    }
    for (i, c) in cats.iter().enumerate() {
        let mut row = vec![Cell::text(c)];
        row.extend(per_design.iter().map(|v| num(v[i], 1)));
        t.rows.push(row);
    }
    for (d, v) in DESIGNS.iter().zip(&per_design) {
        bar = bar.with_group(d.3, v.iter().map(|x| x.unwrap_or(f64::NAN)).collect());
    }
    (t, bar)
}
