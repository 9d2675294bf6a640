//! `rpc`: the SPNS report's A/B test (Tables 2–3, Fig. 5) on the simulator.
//!
//! Requests with response sizes spread over the log bins of Fig. 5a
//! (2 KB … ≥1 MB) over a population of two-path conditions chosen by WSP,
//! with MPNS, SPNS, and SPNS with an ACK-range limit of 4. The paper's A/B
//! test measured short connections in production, so each run is a
//! sequence of [`CONNECTIONS`] short connections (a new one, with its own
//! handshake, after the previous one closed), each carrying a batch of
//! parallel requests that mixes small and large sizes.
//!
//! The requests use the lab's custom stream protocol ([`crate::workload`]); each
//! condition also runs once with MPNS and once with SPNS over HTTP/3 ([`H3_DESIGNS`],
//! `protocol = "h3"`: the same requests as parallel `GET`s through the h3 crate), and
//! every table row says which protocol it ran over. The MPNS and SPNS designs also run with
//! session resumption and 0-RTT ([`ZERO_RTT_DESIGNS`], `transport.zero_rtt = true`):
//! connections 2-4 resume and send their requests in 0-RTT packets.

use std::path::Path;

use mpquic_report::{BarChart, Cell, Plot, Section, Table};

use super::common::multipath_named;
use super::common::{
    config_text, mean_of, num, rate_pct, reference_table, ReportBuilder, ReportOutput, RunRecord,
    RunSpec,
};
use super::fidelity::{
    completed_of, completion_note, differences_section, time_limit_s, Comparison, SPNS_REPORT,
};
use super::wsp;
use super::Suite;
use crate::h3sim::Protocol;
use crate::scenario::Scenario;
use crate::scenario::Workload;
use crate::units::ByteSize;
use mpquic_proto::cc::CcAlgorithm;

/// The `rpc` suite.
#[derive(Debug, Clone, Copy, Default)]
pub struct Rpc {
    /// Test hook: number of two-path conditions, replacing the quick/full
    /// counts (for fast end-to-end tests).
    pub tiny: Option<usize>,
}

/// The virtual time limit floor of a run (s); see [`time_limit_s`].
pub const TIME_LIMIT_FLOOR_S: u64 = 120;

/// Successive short connections per run.
pub const CONNECTIONS: usize = 4;

/// Designs: run-ID tag, multipath mode, ACK-range limit, label.
pub const DESIGNS: [(&str, &str, usize, &str); 3] = [
    ("mpns", "mpns", 32, "MPNS"),
    ("spns", "spns", 32, "SPNS"),
    ("spns-l04", "spns", 4, "SPNS limit 4"),
];

/// The HTTP/3 arms: run-ID tag, multipath mode, ACK-range limit, label. Their runs
/// carry the same requests as the custom-protocol designs of the same mode.
pub const H3_DESIGNS: [(&str, &str, usize, &str); 2] = [
    ("mpns-h3", "mpns", 32, "MPNS"),
    ("spns-h3", "spns", 32, "SPNS"),
];

/// The 0-RTT arms: run-ID tag, multipath mode, ACK-range limit, label. The same runs as
/// the custom-protocol design of the same mode with `transport.zero_rtt = true`: every
/// connection after the first resumes the previous session and sends its requests in 0-RTT.
pub const ZERO_RTT_DESIGNS: [(&str, &str, usize, &str); 2] = [
    ("mpns-0rtt", "mpns", 32, "MPNS"),
    ("spns-0rtt", "spns", 32, "SPNS"),
];

/// The protocol of a design tag's runs, as the report names it.
pub fn protocol_of(tag: &str) -> &'static str {
    if tag.ends_with("-h3") {
        "HTTP/3"
    } else {
        "custom"
    }
}

/// Every design: the custom-protocol ones, then the HTTP/3 ones.
fn all_designs() -> impl Iterator<Item = (&'static str, &'static str, usize, &'static str)> {
    DESIGNS.into_iter().chain(H3_DESIGNS)
}

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
        "SPNS report Tables 2-3, Fig 5: short connections, parallel requests 2 KB..>1 MB, MPNS vs SPNS vs SPNS limit 4 (custom protocol), MPNS and SPNS over HTTP/3, MPNS and SPNS with 0-RTT"
    }

    fn runs(&self, quick: bool, seed: u64) -> Vec<(String, Scenario)> {
        let n = self.tiny.unwrap_or(if quick { 12 } else { 60 });
        let total: u64 = sizes().iter().sum();
        let workload = |protocol| Workload::ShortConnections {
            sizes: sizes().into_iter().map(ByteSize).collect(),
            connections: CONNECTIONS,
            protocol,
        };
        let mut out = Vec::new();
        let arms = || all_designs().chain(ZERO_RTT_DESIGNS);
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
            let limit_s = time_limit_s(&paths, total, TIME_LIMIT_FLOOR_S);
            for (tag, mode, limit, _) in arms() {
                let id = format!("c{i:02}-{tag}");
                // The custom protocol is the default: its scenarios (and results) stay
                // as they were before the HTTP/3 arms existed.
                let protocol = if tag.ends_with("-h3") {
                    Protocol::H3
                } else {
                    Protocol::Custom
                };
                let spec = RunSpec {
                    name: &id,
                    seed: seed.wrapping_add(i as u64),
                    paths: &paths,
                    workload: workload(protocol),
                    multipath: multipath_named(mode),
                    cc: CcAlgorithm::Cubic,
                    ack_range_limit: Some(limit),
                    time_limit_s: limit_s,
                    time_series: false,
                };
                let mut scenario = spec.build();
                if tag.ends_with("-0rtt") {
                    scenario.transport.zero_rtt = Some(true);
                }
                out.push((id.clone(), scenario));
            }
        }
        out
    }

    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput> {
        let mut rb = ReportBuilder::new(out_dir, &[SPNS_REPORT], runs)?;
        let m: Vec<_> = DESIGNS.iter().map(|d| design_figures(runs, d.0)).collect();
        let mut s =
            Section::new("Tables 2-3: network time, 1-second completion rate, ACK frame size");
        s.paragraphs.push(
            "Network time = request completion time - start of the handshake of the connection \
             that carried it (handshake included), averaged over every request of every run. \
             The paper's A/B test measured short connections in production (1.5 M samples on \
             Taobao); here each run is 4 successive short connections over one WSP-chosen \
             two-path condition, each carrying 5 parallel requests that span the size bins \
             (20 per run); the ACK frame size is the client's mean over all its connections. \
             The protocol column says what carried the requests: the lab's custom stream \
             protocol (size request, pattern bytes) or HTTP/3 (the same requests as parallel \
             GETs on each connection, through the h3 crate; QPACK, control streams and DATA \
             frames included)."
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
        let (t2_h3, protocols) = h3_tables(runs, &m);
        rb.table(&mut s, "table2_h3", t2_h3)?;
        rb.table(&mut s, "custom_vs_h3", protocols)?;
        s.paragraphs.push(
            "Resumption and 0-RTT: the 0-RTT arms (run IDs cNN-mpns-0rtt, cNN-spns-0rtt) are \
             the custom-protocol MPNS and SPNS runs with `transport.zero_rtt = true`: the \
             server issues session tickets and accepts early data, the client keeps its \
             tickets across its 4 connections, so connections 2-4 resume the previous session \
             and send their requests in 0-RTT packets (the server answers in 0.5-RTT data). \
             Network time counts from the start of each connection's handshake, as above."
                .into(),
        );
        rb.table(&mut s, "zero_rtt", zero_rtt_table(runs, &m))?;
        s.reference = Some(reference_table(
            &format!("Paper ({}, Tables 2-3)", SPNS_REPORT.short),
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
        let groups: Vec<(String, Vec<&RunRecord>)> = DESIGNS
            .iter()
            .map(|d| (d.3.to_owned(), design_runs(runs, d.0)))
            .collect();
        rb.figure(
            &mut s,
            &bar,
            "speed_by_bin",
            &format!(
                "Fig. 5a: mean speed by response size bin (completed requests; {})",
                completion_note(&groups)
            ),
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
        let (mut diff, dt) = differences_section(&SPNS_REPORT, &comparisons(runs));
        rb.table(&mut diff, "paper_vs_ours", dt)?;
        let mut cfg = Section::new("Configuration");
        cfg.config = Some(config_text(self.name(), runs));
        rb.sections = vec![s, diff, cfg];
        rb.finish(
            "rpc: short connections with parallel requests (SPNS report Tables 2-3, Fig. 5)",
            Some(t2),
        )
    }
}

/// The HTTP/3 tables: Table 2 over HTTP/3, and each design over both protocols
/// (`custom` = the figures of [`DESIGNS`]).
fn h3_tables(runs: &[(String, RunRecord)], custom: &[DesignFigures]) -> (Table, Table) {
    let h: Vec<_> = H3_DESIGNS
        .iter()
        .map(|d| design_figures(runs, d.0))
        .collect();
    let t2 = compare("Ours: Table 2 over HTTP/3 (MPNS vs SPNS)", &h[0], &h[1]);
    let mut protocols = compare(
        "Ours: custom protocol vs HTTP/3 (same conditions)",
        &custom[0],
        &h[0],
    );
    protocols.rows.extend(compare("", &custom[1], &h[1]).rows);
    (t2, protocols)
}

/// Each design with and without resumption/0-RTT (`custom` = the figures of [`DESIGNS`]).
fn zero_rtt_table(runs: &[(String, RunRecord)], custom: &[DesignFigures]) -> Table {
    let arm = |d: &DesignFigures, on: bool| DesignFigures {
        label: format!(
            "{} ({})",
            d.label,
            if on { "0-RTT on" } else { "0-RTT off" }
        ),
        completed: d.completed.clone(),
        ..*d
    };
    let mut t = Table::new(
        "Ours: network time with and without resumption/0-RTT (custom protocol)",
        Vec::new(),
    );
    for (i, d) in ZERO_RTT_DESIGNS.iter().enumerate() {
        let on = design_figures(runs, d.0);
        let pair = compare("", &arm(&custom[i], false), &arm(&on, true));
        t.columns = pair.columns;
        t.rows.extend(pair.rows);
    }
    t
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

/// Label, protocol, mean network time (ms), 1-s completion rate (%), mean ACK frame
/// size.
pub struct DesignFigures {
    label: String,
    protocol: &'static str,
    completed: Cell,
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
        label: all_designs()
            .chain(ZERO_RTT_DESIGNS)
            .find(|d| d.0 == tag)
            .map_or(tag, |d| d.3)
            .to_owned(),
        protocol: protocol_of(tag),
        completed: completed_of(&rs),
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
        "runs completed",
        "protocol",
    ];
    let mut t = Table::new(title, cols.iter().map(|c| (*c).to_owned()).collect());
    for d in [a, b] {
        t.rows.push(vec![
            Cell::text(&d.label),
            num(d.network_ms, 2),
            num(d.one_second, 1),
            num(d.ack_bytes, 2),
            d.completed.clone(),
            Cell::text(d.protocol),
        ]);
    }
    let protocols = if a.protocol == b.protocol {
        a.protocol.to_owned()
    } else {
        format!("{} vs {}", a.protocol, b.protocol)
    };
    let rate = |x: Option<f64>, y: Option<f64>| num(x.zip(y).and_then(|(x, y)| rate_pct(x, y)), 2);
    let diff = num(a.one_second.zip(b.one_second).map(|(x, y)| y - x), 1);
    t.rows.push(vec![
        Cell::text("Rate (%; completion: difference)"),
        rate(a.network_ms, b.network_ms),
        diff,
        rate(a.ack_bytes, b.ack_bytes),
        Cell::Missing,
        Cell::text(protocols),
    ]);
    t
}

/// Per condition (`cNN`), `f(figures of design a, figures of design b)`.
fn per_condition(
    runs: &[(String, RunRecord)],
    (a, b): (&str, &str),
    f: impl Fn(&DesignFigures, &DesignFigures) -> Option<f64>,
) -> Vec<f64> {
    let mut conds: Vec<&str> = runs
        .iter()
        .filter_map(|(id, _)| id.split_once('-').map(|(c, _)| c))
        .collect();
    conds.dedup();
    conds
        .iter()
        .filter_map(|c| {
            let of = |tag: &str| -> Vec<(String, RunRecord)> {
                runs.iter()
                    .filter(|(id, _)| *id == format!("{c}-{tag}"))
                    .cloned()
                    .collect()
            };
            f(&design_figures(&of(a), a), &design_figures(&of(b), b))
        })
        .collect()
}

/// Tables 2-3's rates beside the paper's, one sample per two-path condition.
pub fn comparisons(runs: &[(String, RunRecord)]) -> Vec<Comparison> {
    let failed = runs.iter().filter(|(_, r)| !r.completed).count();
    let mut causes = vec![
        "our conditions are simulated WSP points, not Taobao's 1.5 M production requests"
            .to_owned(),
        "each run has 4 short connections of 5 parallel requests, not the app's traffic mix"
            .to_owned(),
    ];
    if failed > 0 {
        causes.push(format!("{failed} of {} runs did not complete", runs.len()));
    }
    let time = |x: &DesignFigures, y: &DesignFigures| rate_pct(x.network_ms?, y.network_ms?);
    let ack = |x: &DesignFigures, y: &DesignFigures| rate_pct(x.ack_bytes?, y.ack_bytes?);
    let c = |figure: &str, paper: f64, samples: Vec<f64>| Comparison {
        figure: figure.to_owned(),
        paper,
        samples,
        per: "conditions",
        causes: causes.clone(),
    };
    vec![
        c(
            "Table 2: SPNS vs MPNS network time (%)",
            0.80,
            per_condition(runs, ("mpns", "spns"), time),
        ),
        c(
            "Table 2: SPNS vs MPNS ACK frame size (%)",
            33.67,
            per_condition(runs, ("mpns", "spns"), ack),
        ),
        c(
            "Table 3: SPNS limit 4 vs MPNS network time (%)",
            2.65,
            per_condition(runs, ("mpns", "spns-l04"), time),
        ),
        c(
            "Table 3: SPNS limit 4 vs MPNS ACK frame size (%)",
            -21.63,
            per_condition(runs, ("mpns", "spns-l04"), ack),
        ),
    ]
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
    cols.extend(all_designs().map(|d| format!("{} ({}) speed (kB/s)", d.3, protocol_of(d.0))));
    let mut t = Table::new("Ours: mean speed by size bin", cols);
    let mut bar = BarChart::new("Speed by response size", "speed (kB/s)", cats.clone());
    let mut per_design = Vec::new();
    for d in all_designs() {
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
    for (d, v) in all_designs().zip(&per_design) {
        let name = format!("{} ({})", d.3, protocol_of(d.0));
        bar = bar.with_group(&name, v.iter().map(|x| x.unwrap_or(f64::NAN)).collect());
    }
    (t, bar)
}
