//! `spns-vs-mpns`: the Alibaba SPNS report's Table 1 and Figs. 3–4.
//!
//! A GET of 50 MB (quick: 10 MB) over a Wi-Fi-like and an LTE-like path
//! (the project's generated traces, or with `--traces DIR` the user's
//! Mahimahi files in the paper's roles, see [`super::trace_dir`]), Cubic
//! and the min-RTT scheduler, with MPNS and SPNS, and an SPNS
//! Default_Limit sweep (SPNS report §2.3, §2.4). Each condition is run over
//! several distinct trace pairs; tables show means and count the runs that
//! completed, and [`super::spns_vs_mpns_fidelity`] adds the traces' roles,
//! queue sizes and the differences from the paper.

use std::path::Path;

use anyhow::Context;

use mpquic_proto::AckFrequencyRequest;
use mpquic_report::{Axis, Cell, Plot, PlotKind, Section, Table};

use super::common::{
    config_text, histogram_cdf, mean_of, num, rate_pct, reference_table, run_map, ReportBuilder,
    ReportOutput, RunRecord, RunSpec,
};
use super::common::{download, multipath_named};
use super::fidelity::{self, completed_of, completion_note, SPNS_REPORT};
use super::spns_vs_mpns_fidelity::{differences, traces_section};
use super::trace_dir::trace_roles;
use super::{Suite, SuiteOptions};
use crate::scenario::Scenario;
use mpquic_proto::cc::CcAlgorithm;
use mpquic_proto::MultipathMode;

/// The virtual time limit floor of a run (s); a larger transfer over a
/// slower pair gets more (see [`fidelity::time_limit_s`]).
pub const TIME_LIMIT_FLOOR_S: u64 = 120;

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

/// The ACK_FREQUENCY arm (draft-ietf-quic-ack-frequency): the data sender asks the receiver
/// for an ACK after more than this many ack-eliciting packets (RFC 9000's rate is 1).
pub const ACK_FREQUENCY_THRESHOLD: u64 = 9;

/// Suffixes of the ACK_FREQUENCY arm's run IDs (MPNS, SPNS at Default_Limit).
const AF_ARMS: [(&str, &str); 2] = [("mpns-af", "mpns"), ("spns-af", "spns")];

/// Run ID of trace pair `k` with design `mpns` or SPNS limit `l`.
pub fn run_id(k: usize, limit: Option<usize>) -> String {
    match limit {
        None => format!("t{k}-mpns"),
        Some(l) => format!("t{k}-spns-l{l:02}"),
    }
}

/// The trace pair of a run ID (`t3-mpns` is pair 3).
pub fn pair_of(id: &str) -> Option<usize> {
    id.strip_prefix('t')?.split_once('-')?.0.parse().ok()
}

/// Generator seed of the Wi-Fi trace of pair `k` (the LTE one is `+ 1`):
/// distinct for every pair, so full mode never cycles pairs.
fn wifi_seed(seed: u64, k: usize) -> u64 {
    seed.wrapping_mul(1000).wrapping_add(2 * k as u64 + 1)
}

impl SpnsVsMpns {
    /// The runs, with the two path specs of trace pair `k` from `pair_paths`.
    /// The time limit scales with the transfer and the pair's capacity.
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
            let limit_s = fidelity::time_limit_s(&paths, bytes, TIME_LIMIT_FLOOR_S);
            let limits = std::iter::once(None).chain(Self::limits(quick).into_iter().map(Some));
            for limit in limits {
                let id = run_id(k, limit);
                let spec = RunSpec {
                    name: &id,
                    seed: seed.wrapping_add(k as u64),
                    paths: &paths,
                    workload: download(bytes),
                    multipath: if limit.is_some() {
                        MultipathMode::Spns
                    } else {
                        MultipathMode::Mpns
                    },
                    cc: CcAlgorithm::Cubic,
                    ack_range_limit: limit.or(Some(DEFAULT_LIMIT)),
                    time_limit_s: limit_s,
                    time_series: k == 0 && limit.is_none_or(|l| l == DEFAULT_LIMIT),
                };
                out.push((id.clone(), spec.build()));
            }
            for (tag, design) in AF_ARMS {
                let id = format!("t{k}-{tag}");
                let spec = RunSpec {
                    name: &id,
                    seed: seed.wrapping_add(k as u64),
                    paths: &paths,
                    workload: download(bytes),
                    multipath: multipath_named(design),
                    cc: CcAlgorithm::Cubic,
                    ack_range_limit: Some(DEFAULT_LIMIT),
                    time_limit_s: limit_s,
                    time_series: false,
                };
                let mut scenario = spec.build();
                scenario.transport.config.ack.request_ack_frequency = Some(AckFrequencyRequest {
                    ack_eliciting_threshold: ACK_FREQUENCY_THRESHOLD,
                    max_ack_delay_us: 25_000,
                    reordering_threshold: 1,
                });
                out.push((id, scenario));
            }
        }
        out
    }
}

/// ACK traffic with and without ACK_FREQUENCY (the standard way to tune it, which the report
/// cites): per design, speed, ACK frames per run, mean frame size and ACK bytes per run.
pub fn ack_frequency_table(runs: &[(String, RunRecord)]) -> Table {
    let cols = [
        "",
        "speed (kB/s)",
        "ACK frames per run",
        "ACK frame size (bytes)",
        "ACK bytes per run",
        "completed",
    ];
    let mut t = Table::new(
        format!(
            "Ours: ACK traffic, RFC 9000 rate vs ACK_FREQUENCY (threshold {ACK_FREQUENCY_THRESHOLD})"
        ),
        cols.iter().map(|c| (*c).to_owned()).collect(),
    );
    let by_suffix = |suffix: &str| -> Vec<&RunRecord> {
        runs.iter()
            .filter(|(id, _)| id.ends_with(suffix))
            .map(|(_, r)| r)
            .collect()
    };
    let spns_default = format!("-spns-l{DEFAULT_LIMIT:02}");
    let arms = [
        ("MPNS", "-mpns"),
        ("MPNS + ACK_FREQUENCY", "-mpns-af"),
        ("SPNS", spns_default.as_str()),
        ("SPNS + ACK_FREQUENCY", "-spns-af"),
    ];
    for (label, suffix) in arms {
        let rs = by_suffix(suffix);
        if rs.is_empty() {
            continue;
        }
        let frames = mean_of(rs.iter().map(|r| Some(r.ack_frames_sent as f64)));
        let size = mean_of(rs.iter().map(|r| Some(r.avg_ack_frame_bytes)));
        let bytes = mean_of(
            rs.iter()
                .map(|r| Some(r.ack_frames_sent as f64 * r.avg_ack_frame_bytes)),
        );
        t.rows.push(vec![
            Cell::text(label),
            num(mean_of(rs.iter().map(|r| r.speed_kbytes_per_s())), 1),
            num(frames, 0),
            num(size, 2),
            num(bytes, 0),
            completed_of(&rs),
        ]);
    }
    t
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
            let ts = wifi_seed(seed, k);
            [
                format!("trace=gen:wifi:{ts},delay=10ms,queue=1bdp"),
                format!("trace=gen:lte:{},delay=30ms,queue=1bdp", ts + 1),
            ]
        })
    }

    fn runs_with(&self, opts: &SuiteOptions) -> anyhow::Result<Vec<(String, Scenario)>> {
        let Some(dir) = &opts.traces else {
            return Ok(self.runs(opts.quick, opts.seed));
        };
        let roles = trace_roles(dir)?;
        let (_, pairs) = self.sizes(opts.quick);
        let seed = opts.seed;
        // Resolve every pair now: a bad file or spec is one clear error
        // before anything runs (the suite's scenario builder treats an
        // invalid scenario as its own bug and panics).
        for k in 0..pairs {
            for spec in roles.pair(seed, k, wifi_seed(seed, k)) {
                mpquic_netsim::PathSpec::parse(&spec)
                    .and_then(|p| p.resolve())
                    .with_context(|| format!("trace pair {k} from {}", dir.display()))?;
            }
        }
        Ok(self.build_runs(opts.quick, seed, |k| {
            roles.pair(seed, k, wifi_seed(seed, k))
        }))
    }

    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput> {
        let mut rb = ReportBuilder::new(out_dir, &[SPNS_REPORT], runs)?;
        let mut s1 = Section::new("Table 1: transmission speed, MPNS vs SPNS");
        s1.paragraphs.push(
            "Two paths: a Wi-Fi-role path (10 ms one-way) and a cellular-role path (30 ms), \
             drop-tail queues of 1 BDP (the trace's mean rate x the path's propagation RTT), \
             Cubic, min-RTT scheduler; the traces, their roles and queue sizes per pair are \
             listed below. Speed = bytes / completion time (kB = 1000 bytes), averaged over the \
             trace pairs whose run completed; ACK frame size is the receiver's mean ACK frame \
             size. SPNS uses Default_Limit 32 (the core default). The paper (§2.3) used \
             recorded office traces, XQUIC and 50 MB."
                .to_owned(),
        );
        let t1 = table1(runs);
        rb.table(&mut s1, "table1", t1.clone())?;
        s1.reference = Some(reference_table(
            &format!("Paper ({}, Table 1)", SPNS_REPORT.short),
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
        let mut af = Section::new("ACK_FREQUENCY: fewer ACKs instead of smaller ones");
        af.paragraphs.push(format!(
            "The report shrinks ACK frames (§2.4); the IETF's way to cut ACK traffic is \
             ACK_FREQUENCY (draft-ietf-quic-ack-frequency), which the report cites. Same pairs, \
             the server asking the client for an ACK after more than {ACK_FREQUENCY_THRESHOLD} \
             ack-eliciting packets (max_ack_delay 25 ms, reordering threshold 1)."
        ));
        rb.table(&mut af, "ack_frequency", ack_frequency_table(runs))?;
        let (st, tt) = traces_section(runs);
        let mut st = st;
        rb.table(&mut st, "traces", tt)?;
        let mut s2 = Section::new("Fig. 4b: SPNS speed vs Default_Limit");
        s2.paragraphs
            .push("Paper: SPNS speed falls as Default_Limit falls; Maximum_Limit was 64.".into());
        let (t2, plot, note) = limit_sweep(runs);
        rb.table(&mut s2, "limit_sweep", t2)?;
        rb.figure(
            &mut s2,
            &plot,
            "speed_vs_limit",
            &format!("Speed vs Default_Limit ({note})"),
        )?;
        let s3 = fig3_section(&mut rb, runs)?;
        let (mut sd, td) = differences(runs);
        rb.table(&mut sd, "paper_vs_ours", td)?;
        let mut cfg = Section::new("Configuration");
        cfg.config = Some(config_text(self.name(), runs));
        rb.sections = vec![s1, af, st, s2, s3, sd, cfg];
        rb.finish(
            "spns-vs-mpns: MPNS vs SPNS (SPNS report Table 1, Figs 3-4)",
            Some(t1),
        )
    }
}

/// Fig. 3: srtt against the true RTT, and receive progress, of trace pair 0.
fn fig3_section(rb: &mut ReportBuilder, runs: &[(String, RunRecord)]) -> anyhow::Result<Section> {
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
    Ok(s3)
}

/// Runs of one design (`None` = MPNS) over all trace pairs.
pub fn design_runs(runs: &[(String, RunRecord)], limit: Option<usize>) -> Vec<&RunRecord> {
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
        "completed",
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
            completed_of(&design_runs(runs, limit)),
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

/// The sweep table, Fig. 4b and a note on how many runs each point averages.
fn limit_sweep(runs: &[(String, RunRecord)]) -> (Table, Plot, String) {
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
        "completed",
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
            completed_of(&design_runs(runs, Some(*l))),
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
    let mut groups: Vec<(String, Vec<&RunRecord>)> = limits
        .iter()
        .map(|l| (format!("limit {l}"), design_runs(runs, Some(*l))))
        .collect();
    groups.push(("MPNS".to_owned(), design_runs(runs, None)));
    (t, plot, completion_note(&groups))
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
        let name = if p.path == 0 {
            "Wi-Fi role"
        } else {
            "cellular role"
        };
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
