//! `spns-vs-mpns`: the Alibaba SPNS report's Table 1 and Figs. 3–4.
//!
//! A GET of 50 MB (quick: 10 MB) over a Wi-Fi-like and an LTE-like path
//! (the project's generated traces, or with `--traces DIR` the user's
//! Mahimahi files, see [`super::trace_dir`]), Cubic and the min-RTT
//! scheduler, with MPNS and SPNS, and an SPNS Default_Limit sweep. Each
//! condition is run over several trace pairs (different generator seeds,
//! or different pairings of the user's traces); tables show means.

use std::path::Path;

use anyhow::Context;

use mpquic_report::{Axis, Cell, Plot, PlotKind, Section, Table};

use super::common::{
    config_text, histogram_cdf, mean_of, num, rate_pct, reference_table, run_map, ReportBuilder,
    ReportOutput, RunRecord, RunSpec,
};
use super::trace_dir::{mahimahi_pairs, CELLULAR_DELAY, WIFI_DELAY};
use super::{Suite, SuiteOptions};
use crate::scenario::Scenario;

/// The SPNS limit that plays "SPNS" in Table 1 (the core's default).
pub const DEFAULT_LIMIT: usize = 32;

/// The `spns-vs-mpns` suite.
#[derive(Debug, Clone, Default)]
pub struct SpnsVsMpns {
    /// Test hook: download size in bytes and trace pairs, replacing the
    /// quick/full sizes (for fast end-to-end tests).
    pub tiny: Option<(u64, usize)>,
}

impl SpnsVsMpns {
    /// Limits of the SPNS Default_Limit sweep.
    pub fn limits(quick: bool) -> Vec<usize> {
        if quick {
            vec![4, 32]
        } else {
            vec![2, 4, 8, 16, 32, 64]
        }
    }

    fn sizes(&self, quick: bool) -> (u64, usize) {
        self.tiny.unwrap_or(if quick {
            (10_000_000, 3)
        } else {
            (50_000_000, 10)
        })
    }
}

/// Whether the runs replayed the generated traces (not `--traces` files):
/// the scenarios' path specs say `trace=gen:`.
fn uses_generated_traces(runs: &[(String, RunRecord)]) -> bool {
    runs.iter().all(|(_, r)| {
        r.scenario["paths"]
            .as_array()
            .is_none_or(|ps| ps.iter().all(|p| p.to_string().contains("trace=gen:")))
    })
}

/// Run ID of trace pair `k` with design `mpns` or SPNS limit `l`.
pub fn run_id(k: usize, limit: Option<usize>) -> String {
    match limit {
        None => format!("t{k}-mpns"),
        Some(l) => format!("t{k}-spns-l{l:02}"),
    }
}

impl SpnsVsMpns {
    /// The runs, with the two path specs of trace pair `k` from `pair_paths`.
    fn build_runs(
        &self,
        quick: bool,
        seed: u64,
        pair_paths: impl Fn(usize) -> [String; 2],
    ) -> Vec<(String, Scenario)> {
        let (bytes, pairs) = self.sizes(quick);
        let mut out = Vec::new();
        for k in 0..pairs {
            let paths = pair_paths(k);
            let limits = std::iter::once(None).chain(Self::limits(quick).into_iter().map(Some));
            for limit in limits {
                let id = run_id(k, limit);
                let spec = RunSpec {
                    name: &id,
                    seed: seed.wrapping_add(k as u64),
                    paths: &paths,
                    workload: format!("download = \"{bytes}B\""),
                    multipath: if limit.is_some() { "spns" } else { "mpns" },
                    cc: "cubic",
                    ack_range_limit: limit.or(Some(DEFAULT_LIMIT)),
                    time_limit_s: 120,
                    time_series: k == 0 && limit.is_none_or(|l| l == DEFAULT_LIMIT),
                };
                out.push((id.clone(), spec.build()));
            }
        }
        out
    }
}

impl Suite for SpnsVsMpns {
    fn name(&self) -> &'static str {
        "spns-vs-mpns"
    }

    fn description(&self) -> &'static str {
        "SPNS report Table 1, Figs 3-4: 50 MB GET over Wi-Fi + LTE traces, MPNS vs SPNS, Default_Limit sweep"
    }

    fn runs(&self, quick: bool, seed: u64) -> Vec<(String, Scenario)> {
        self.build_runs(quick, seed, |k| {
            let ts = seed.wrapping_mul(1000).wrapping_add(2 * k as u64);
            [
                format!("trace=gen:wifi:{},delay=10ms,queue=1bdp", ts + 1),
                format!("trace=gen:lte:{},delay=30ms,queue=1bdp", ts + 2),
            ]
        })
    }

    fn runs_with(&self, opts: &SuiteOptions) -> anyhow::Result<Vec<(String, Scenario)>> {
        let Some(dir) = &opts.traces else {
            return Ok(self.runs(opts.quick, opts.seed));
        };
        let traces = mahimahi_pairs(dir)?;
        // Load every trace once now: a bad file is one clear error before
        // anything runs (the suite's scenario builder treats an invalid
        // scenario as its own bug and panics).
        for t in &traces {
            let spec = t.path_spec(WIFI_DELAY);
            mpquic_netsim::PathSpec::parse(&spec)
                .and_then(|p| p.resolve())
                .with_context(|| format!("trace {} in {}", t.name, dir.display()))?;
        }
        let n = traces.len();
        let runs = self.build_runs(opts.quick, opts.seed, |k| {
            [
                traces[k % n].path_spec(WIFI_DELAY),
                traces[(k + 1) % n].path_spec(CELLULAR_DELAY),
            ]
        });
        Ok(runs)
    }

    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput> {
        let mut rb = ReportBuilder::new(out_dir)?;
        let mut s1 = Section::new("Table 1: transmission speed, MPNS vs SPNS");
        let traces = if uses_generated_traces(runs) {
            "generated Wi-Fi-like trace (10 ms one-way delay) and LTE-like trace (30 ms)"
        } else {
            "user-supplied Mahimahi traces (--traces; Wi-Fi role 10 ms one-way delay, cellular \
             role 30 ms; files in each run's scenario below)"
        };
        s1.paragraphs.push(format!(
            "Two paths: {traces}, drop-tail queues of 1 BDP, Cubic, min-RTT scheduler. Speed = \
             bytes / completion time (kB = 1000 bytes), averaged over the trace pairs; ACK frame \
             size is the receiver's mean ACK frame size. SPNS uses Default_Limit 32 (the core \
             default). The paper used recorded office traces, XQUIC and 50 MB."
        ));
        let t1 = table1(runs);
        rb.table(&mut s1, "table1", t1.clone())?;
        s1.reference = Some(reference_table(
            "Paper (SPNS report, seed 000, Table 1)",
            &["", "Speed (kB/s)", "ACK frame size (bytes)"],
            &[
                &["MPNS", "7217.6", "16.9"],
                &["SPNS", "7195.6", "38.35"],
                &["Rate", "-0.30%", "+126.92%"],
            ],
        ));
        rb.figure(
            &mut s1,
            &ranges_cdf(runs),
            "ack_ranges_cdf",
            "CDF of ranges per ACK frame",
        )?;
        let mut s2 = Section::new("Fig. 4b: SPNS speed vs Default_Limit");
        s2.paragraphs
            .push("Paper: SPNS speed falls as Default_Limit falls; Maximum_Limit was 64.".into());
        let (t2, plot) = limit_sweep(runs);
        rb.table(&mut s2, "limit_sweep", t2)?;
        rb.figure(&mut s2, &plot, "speed_vs_limit", "Speed vs Default_Limit")?;
        let mut s3 = Section::new("Fig. 3: srtt vs true RTT, and receive progress");
        s3.paragraphs.push(
            "Trace pair 0. Paper (Fig. 3c): at 3150 ms the largest received PN was 27086 on Wi-Fi \
             and 24774 on cellular, with 11 holes in the receive record without any loss."
                .into(),
        );
        let map = run_map(runs);
        for (id, label) in [
            (run_id(0, None), "MPNS"),
            (run_id(0, Some(DEFAULT_LIMIT)), "SPNS"),
        ] {
            if let Some(plot) = map.get(id.as_str()).and_then(|r| rtt_plot(r, label)) {
                rb.figure(
                    &mut s3,
                    &plot,
                    &format!("srtt_{id}"),
                    &format!("{label}: srtt vs true RTT"),
                )?;
            }
        }
        rb.figure(
            &mut s3,
            &progress_plot(runs),
            "progress",
            "Packets received vs time",
        )?;
        let mut cfg = Section::new("Configuration");
        cfg.config = Some(config_text(self.name(), runs));
        rb.sections = vec![s1, s2, s3, cfg];
        rb.finish(
            "spns-vs-mpns: MPNS vs SPNS (SPNS report Table 1, Figs 3-4)",
            Some(t1),
        )
    }
}

/// Runs of one design (`None` = MPNS) over all trace pairs.
fn design_runs(runs: &[(String, RunRecord)], limit: Option<usize>) -> Vec<&RunRecord> {
    let suffix = match limit {
        None => "-mpns".to_owned(),
        Some(l) => format!("-spns-l{l:02}"),
    };
    runs.iter()
        .filter(|(id, _)| id.ends_with(&suffix))
        .map(|(_, r)| r)
        .collect()
}

/// Mean speed (kB/s) and mean ACK frame size of a design's runs.
pub fn design_means(
    runs: &[(String, RunRecord)],
    limit: Option<usize>,
) -> (Option<f64>, Option<f64>, Option<f64>) {
    let rs = design_runs(runs, limit);
    (
        mean_of(rs.iter().map(|r| r.speed_kbytes_per_s())),
        mean_of(rs.iter().map(|r| Some(r.avg_ack_frame_bytes))),
        mean_of(rs.iter().map(|r| Some(r.mean_ranges_per_ack))),
    )
}

/// Table 1 (ours): MPNS, SPNS and the rate row.
pub fn table1(runs: &[(String, RunRecord)]) -> Table {
    let cols = [
        "",
        "speed (kB/s)",
        "ACK frame size (bytes)",
        "ranges per ACK",
        "runs",
    ];
    let mut t = Table::new(
        "Ours: speed and ACK frame size",
        cols.iter().map(|c| (*c).to_owned()).collect(),
    );
    let m = design_means(runs, None);
    let s = design_means(runs, Some(DEFAULT_LIMIT));
    for (label, v, limit) in [("MPNS", m, None), ("SPNS", s, Some(DEFAULT_LIMIT))] {
        t.rows.push(vec![
            Cell::text(label),
            num(v.0, 1),
            num(v.1, 2),
            num(v.2, 2),
            Cell::num(design_runs(runs, limit).len() as f64, 0),
        ]);
    }
    let rate = |a: Option<f64>, b: Option<f64>| num(a.zip(b).and_then(|(a, b)| rate_pct(a, b)), 2);
    t.rows.push(vec![
        Cell::text("Rate (%)"),
        rate(m.0, s.0),
        rate(m.1, s.1),
        rate(m.2, s.2),
        Cell::Missing,
    ]);
    t
}

fn limit_sweep(runs: &[(String, RunRecord)]) -> (Table, Plot) {
    let mut limits: Vec<usize> = runs
        .iter()
        .filter_map(|(id, _)| id.rsplit_once("-spns-l").and_then(|(_, l)| l.parse().ok()))
        .collect();
    limits.sort_unstable();
    limits.dedup();
    let cols = [
        "Default_Limit",
        "SPNS speed (kB/s)",
        "ACK frame size (bytes)",
        "ranges per ACK",
        "retransmitted / file (%)",
    ];
    let mut t = Table::new(
        "Ours: SPNS Default_Limit sweep",
        cols.iter().map(|c| (*c).to_owned()).collect(),
    );
    let mut pts = Vec::new();
    for l in &limits {
        let (speed, ack, ranges) = design_means(runs, Some(*l));
        let retx = mean_of(
            design_runs(runs, Some(*l))
                .iter()
                .map(|r| Some(100.0 * r.retransmission_ratio())),
        );
        t.rows.push(vec![
            Cell::num(*l as f64, 0),
            num(speed, 1),
            num(ack, 2),
            num(ranges, 2),
            num(retx, 2),
        ]);
        if let Some(s) = speed {
            pts.push((*l as f64, s));
        }
    }
    let mut plot = Plot::new(
        "SPNS speed vs Default_Limit",
        "Default_Limit (ranges)",
        "speed (kB/s)",
        PlotKind::Line,
    )
    .with_series("SPNS", pts);
    plot.x = Axis::log("Default_Limit (ranges)");
    if let (Some(m), Some(lo), Some(hi)) =
        (design_means(runs, None).0, limits.first(), limits.last())
    {
        plot = plot.with_series("MPNS (limit 32)", vec![(*lo as f64, m), (*hi as f64, m)]);
    }
    (t, plot)
}

fn ranges_cdf(runs: &[(String, RunRecord)]) -> Plot {
    let mut plot = Plot::new(
        "Ranges per ACK frame",
        "ranges per ACK frame (bucket upper bound; >64 drawn at 128)",
        "fraction of ACK frames",
        PlotKind::Step,
    );
    plot.x = Axis::log("ranges per ACK frame (bucket upper bound; >64 at 128)");
    plot.y = Axis::new("fraction of ACK frames").with_range(-0.02, 1.02);
    for (label, limit) in [
        ("MPNS", None),
        ("SPNS", Some(DEFAULT_LIMIT)),
        ("SPNS limit 4", Some(4)),
    ] {
        let mut hist = [0u64; 8];
        for r in design_runs(runs, limit) {
            for (h, v) in hist.iter_mut().zip(r.ack_range_histogram) {
                *h += v;
            }
        }
        let pts = histogram_cdf(&hist);
        if !pts.is_empty() {
            plot = plot.with_series(label, pts);
        }
    }
    plot
}

fn rtt_plot(r: &RunRecord, label: &str) -> Option<Plot> {
    let ts = r.time_series.as_ref()?;
    let mut plot = Plot::new(
        format!("{label}: smoothed RTT vs true RTT"),
        "time (s)",
        "RTT (ms)",
        PlotKind::Line,
    );
    for p in &ts.rtt {
        let name = if p.path == 0 { "Wi-Fi" } else { "LTE" };
        plot = plot
            .with_series(
                format!("path {} ({name}) srtt", p.path),
                p.points.iter().map(|q| (q[0], q[1])).collect(),
            )
            .with_series(
                format!("path {} ({name}) true RTT", p.path),
                p.points.iter().map(|q| (q[0], q[2])).collect(),
            );
    }
    Some(plot)
}

fn progress_plot(runs: &[(String, RunRecord)]) -> Plot {
    let map = run_map(runs);
    let mut plot = Plot::new(
        "Receive progress (trace pair 0)",
        "time (s)",
        "packets received",
        PlotKind::Line,
    );
    for (id, label) in [
        (run_id(0, None), "MPNS"),
        (run_id(0, Some(DEFAULT_LIMIT)), "SPNS"),
    ] {
        if let Some(ts) = map.get(id.as_str()).and_then(|r| r.time_series.as_ref()) {
            plot = plot.with_series(label, ts.progress.iter().map(|p| (p[0], p[2])).collect());
        }
    }
    plot
}
