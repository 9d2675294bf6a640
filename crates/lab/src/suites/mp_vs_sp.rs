//! `mp-vs-sp`: the CoNEXT 2017 multipath QUIC evaluation (seed 004).
//!
//! Scenario points are chosen by WSP over, per path, capacity
//! 0.1–100 Mbit/s (log scale), RTT 0–50 ms, queuing delay 0–100 ms (the
//! drop-tail queue holds rate × queuing delay) and random loss 0–2.5 %.
//! Each point is run twice: in the loss-free set (the paper's headline: its
//! loss coordinates set to 0) and in the lossy set (as drawn). Each run is
//! single-path QUIC on each path and MPNS multipath over both, once per
//! variant of [`SCHEDULERS`] (each scheduler with the handshake on path 0, and
//! with the handshake raced over both interfaces; the same points, seeds and
//! paths); the figure of merit is best single-path time / multipath time, on
//! the lossy set over [`LOSSY_SEEDS`] seeds per point. Plus the handover
//! scenario (path 0 goes down at 2 s, min-RTT). The heterogeneity sweep
//! (rate ratio 1–50x, delay gap 0–200 ms) is the `hetero` suite.

use std::path::Path;

use mpquic_report::{stats, Cell, Plot, Section, Table};

use super::common::{
    config_text, num, reference_table, run_map, ReportBuilder, ReportOutput, RunRecord, RunSpec,
};
use super::common::{download, multipath_named};
use super::fidelity::CONEXT_2017;
use super::wsp;
use super::Suite;
use crate::scenario::Scenario;
use mpquic_proto::cc::CcAlgorithm;
use mpquic_proto::reinjection::ReinjectionMode;
use mpquic_proto::scheduler::SchedulerKind;

/// Multipath variants compared on every point: run id suffix, scheduler, and whether the
/// client races its handshake over both interfaces (`transport.race_paths`, see
/// [`crate::race`]; without it the handshake runs on path 0 of the point). Min-RTT without
/// racing keeps the suffix `mp` (the run ids of earlier reports).
pub const SCHEDULERS: [(&str, SchedulerKind, bool); 6] = [
    ("mp", SchedulerKind::MinRtt, false),
    ("mp-ecf", SchedulerKind::Ecf, false),
    ("mp-blest", SchedulerKind::Blest, false),
    ("mp-race", SchedulerKind::MinRtt, true),
    ("mp-ecf-race", SchedulerKind::Ecf, true),
    ("mp-blest-race", SchedulerKind::Blest, true),
];

/// The point sets: run-ID prefix of the points, name, whether the WSP loss coordinates are kept
/// (the loss-free set sets them to 0; prefix `p` keeps the run IDs of earlier reports).
pub const SETS: [(char, &str, bool); 2] = [('f', "loss-free", false), ('p', "lossy", true)];

/// Seeds per point of the lossy set (the full and quick variants; the `tiny` test hook runs
/// two). One 20 MB transfer under 1-2.5 % random loss varies by about ±5 % between seeds (the
/// loss draws): point p107's single path took 45.4-49.7 s over five seeds. Every run of a
/// lossy point is repeated with this many seeds and the ratio compares mean completion times,
/// so that it measures the design rather than one draw. The first seed is the one a single
/// run used before (run IDs `p007-...`); the others are `p007s1-...`, `p007s2-...`.
pub const LOSSY_SEEDS: usize = 5;

/// Multipath within this factor of the best single path's time counts as "not worse" (issue 15).
pub const TOLERANCE: f64 = 1.05;

/// The `mp-vs-sp` suite.
#[derive(Debug, Clone, Copy, Default)]
pub struct MpVsSp {
    /// Test hook: WSP points and download size in bytes (also of the
    /// handover runs), replacing the quick/full values (for fast
    /// end-to-end tests).
    pub tiny: Option<(usize, u64)>,
}

/// Handover download size (bytes).
const HANDOVER_BYTES: u64 = 20_000_000;

/// A path spec of the CoNEXT 2017 design space from four unit coordinates; without `lossy` the
/// random loss is 0 whatever the fourth coordinate. `index` is the path's place in the point
/// (0 or 1): its links draw their random losses from the streams named after it
/// (`streams=INDEX`), so that the single-path run over a path and the multipath runs over both
/// see the same loss draws on it, packet for packet (common random numbers: the comparison
/// measures the designs, not two independent draws of the loss process).
pub fn path_spec(u: &[f64], lossy: bool, index: usize) -> String {
    let rate_mbit = wsp::log(u[0], 0.1, 100.0);
    let rtt_us = wsp::lin(u[1], 0.0, 50.0) * 1000.0;
    let qdelay_s = wsp::lin(u[2], 0.0, 100.0) / 1000.0;
    let loss_pct = if lossy { wsp::lin(u[3], 0.0, 2.5) } else { 0.0 };
    let queue = ((rate_mbit * 1e6 / 8.0 * qdelay_s) as u64).max(1500);
    format!(
        "rate={:.0}kbit,rtt={:.0}us,queue={queue}b,loss={loss_pct:.3}%,streams={index}",
        rate_mbit * 1000.0,
        rtt_us.round()
    )
}

/// The runs of one point: single path on each path, then multipath once per scheduler, all
/// with the default re-injection.
fn point_runs(
    point: &str,
    paths: &[String; 2],
    bytes: u64,
    seed: u64,
    limit_s: u64,
) -> Vec<(String, Scenario)> {
    let mut cases = vec![
        ("sp0", &paths[0..1], "single", SchedulerKind::MinRtt, false),
        ("sp1", &paths[1..2], "single", SchedulerKind::MinRtt, false),
    ];
    cases.extend(
        SCHEDULERS
            .iter()
            .map(|&(tag, k, race)| (tag, &paths[..], "mpns", k, race)),
    );
    cases
        .into_iter()
        .map(|(tag, p, mode, scheduler, race)| {
            let id = format!("{point}-{tag}");
            let spec = RunSpec {
                name: &id,
                seed,
                paths: p,
                workload: download(bytes),
                multipath: multipath_named(mode),
                cc: CcAlgorithm::Cubic,
                ack_range_limit: None,
                time_limit_s: limit_s,
                time_series: false,
            };
            let mut scenario = spec.build();
            scenario.transport.config.scheduler = scheduler;
            scenario.transport.config.reinjection = ReinjectionMode::default();
            scenario.transport.race_paths = race.then_some(true);
            (id, scenario)
        })
        .collect()
}

impl Suite for MpVsSp {
    fn name(&self) -> &'static str {
        "mp-vs-sp"
    }

    fn description(&self) -> &'static str {
        "CoNEXT 2017: WSP over capacity/RTT/queuing/loss, loss-free and lossy sets, single-path vs MPNS per scheduler (20 MB), plus handover"
    }

    fn runs(&self, quick: bool, seed: u64) -> Vec<(String, Scenario)> {
        let (n, bytes, limit_s) = match self.tiny {
            Some((n, bytes)) => (n, bytes, 600),
            None if quick => (16, 2_000_000, 600),
            None => (253, 20_000_000, 3600),
        };
        let handover_bytes = self.tiny.map_or(HANDOVER_BYTES, |t| t.1);
        let lossy_seeds = if self.tiny.is_some() { 2 } else { LOSSY_SEEDS };
        let mut out = Vec::new();
        for (i, u) in wsp::design(n, 8, seed).iter().enumerate() {
            for (prefix, _, lossy) in SETS {
                let paths = [path_spec(&u[0..4], lossy, 0), path_spec(&u[4..8], lossy, 1)];
                for k in 0..if lossy { lossy_seeds } else { 1 } {
                    let (point, k) = match k {
                        0 => (format!("{prefix}{i:03}"), 0),
                        k => (format!("{prefix}{i:03}s{k}"), k as u64),
                    };
                    let run_seed = seed.wrapping_add(i as u64).wrapping_add(k << 32);
                    out.extend(point_runs(&point, &paths, bytes, run_seed, limit_s));
                }
            }
        }
        let hpaths = [
            "rate=20mbit,rtt=20ms,queue=1bdp,down_at=2s".to_owned(),
            "rate=15mbit,rtt=40ms,queue=1bdp".to_owned(),
        ];
        for (tag, p, mode) in [
            ("mp", &hpaths[..], "mpns"),
            ("sp0", &hpaths[0..1], "single"),
            ("sp1", &hpaths[1..2], "single"),
        ] {
            let id = format!("handover-{tag}");
            let spec = RunSpec {
                name: &id,
                seed,
                paths: p,
                workload: download(handover_bytes),
                multipath: multipath_named(mode),
                cc: CcAlgorithm::Cubic,
                ack_range_limit: None,
                time_limit_s: 60,
                time_series: false,
            };
            out.push((id.clone(), spec.build()));
        }
        out
    }

    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput> {
        let mut rb = ReportBuilder::new(out_dir, &[CONEXT_2017], runs)?;
        let mut headline = summary_table("Ours: best single-path time / multipath time", true);
        let mut sections = Vec::new();
        for (prefix, set, _) in SETS {
            let mut s = Section::new(format!("Single-path vs multipath, {set} set (CoNEXT 2017)"));
            s.paragraphs.push(format!(
                "Ratio = best single-path completion time / MPNS completion time (> 1: multipath \
                 is faster), one row per scheduler on the same points; {}. A single path that \
                 did not finish counts as infinitely slow; a point where multipath did not \
                 finish counts as failed, and as neither faster nor within {TOLERANCE}x. The \
                 paper compared quic-go MPQUIC with MPTCP in Mininet (OLIA); here Cubic, our \
                 stack, the simulator. The heterogeneity sweep (rate ratio 1-50x, delay gap \
                 0-200 ms, loss-free) is the hetero suite (`mpquic lab run hetero`).",
                if prefix == 'f' {
                    "the WSP points with their random loss set to 0, the paper's headline set"
                } else {
                    "the WSP points with random loss 0-2.5 % per path as drawn, each run with \
                     several seeds (the loss draws), comparing mean completion times"
                }
            ));
            let mut t = summary_table(&format!("Ours, {set} set"), false);
            let mut series = Vec::new();
            for (tag, kind, race) in SCHEDULERS {
                let ratios = ratios(runs, prefix, tag);
                if ratios.is_empty() {
                    continue;
                }
                let values: Vec<f64> = ratios.iter().filter_map(|(_, r)| *r).collect();
                let label = variant_label(kind, race);
                let row = summary_row(&label, &ratios, &values);
                headline
                    .rows
                    .push([vec![Cell::text(set)], row.clone()].concat());
                t.rows.push(row);
                series.push((format!("MPNS {label} vs best single path"), values));
            }
            let stem = set.replace('-', "_");
            rb.table(&mut s, &format!("ratio_{stem}"), t)?;
            if prefix == 'f' {
                s.reference = Some(design_space_reference());
            }
            let plot = Plot::cdf(
                format!("Best single-path time / multipath time, {set} set"),
                "time ratio (> 1: multipath faster)",
                series,
            );
            rb.figure(
                &mut s,
                &plot,
                &format!("ratio_cdf_{stem}"),
                &format!("CDF of best single-path time / multipath time, {set} set"),
            )?;
            sections.push(s);
        }
        let mut s2 = Section::new("Handover: path 0 down at 2 s");
        s2.paragraphs
            .push("20 MB; path 0: 20 Mbit/s, 20 ms; path 1: 15 Mbit/s, 40 ms.".into());
        rb.table(&mut s2, "handover", handover_table(runs))?;
        let mut cfg = Section::new("Configuration");
        cfg.config = Some(config_text(self.name(), runs));
        sections.extend([s2, cfg]);
        rb.sections = sections;
        rb.finish(
            "mp-vs-sp: single-path vs multipath (CoNEXT 2017)",
            Some(headline),
        )
    }
}

/// The paper's design space, beside our loss-free table.
fn design_space_reference() -> Table {
    reference_table(
        "Paper (CoNEXT 2017, seed 004): design space",
        &["factor", "minimum", "maximum"],
        &[
            &["capacity (Mbit/s)", "0.1", "100"],
            &["round-trip time (ms)", "0", "50"],
            &["queuing delay (ms)", "0", "100"],
            &["random loss (%)", "0", "2.5"],
            &[
                "result",
                "MPQUIC better in most loss-free large downloads",
                "",
            ],
        ],
    )
}

/// The columns of a ratio summary, with a leading `set` column for the headline.
fn summary_table(title: &str, with_set: bool) -> Table {
    let cols = [
        "scheduler",
        "points",
        "multipath failed",
        "median ratio",
        "mean ratio",
        "10th pct",
        "90th pct",
        "worst ratio",
        "multipath faster (%)",
        "within 1.05x (%)",
    ];
    let set = with_set.then_some("set");
    Table::new(
        title,
        set.into_iter()
            .chain(cols)
            .map(|c| (*c).to_owned())
            .collect(),
    )
}

/// Scheduler name as in scenario files (`min-rtt`, `ecf`, ...).
pub fn name(kind: SchedulerKind) -> String {
    serde_json::to_value(kind)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_else(|| format!("{kind:?}"))
}

/// A variant's name in tables and figures: the scheduler, `+ race` with handshake racing.
pub fn variant_label(kind: SchedulerKind, race: bool) -> String {
    if race {
        format!("{} + race", name(kind))
    } else {
        name(kind)
    }
}

/// One row of the ratio summary: the variant, then the statistics of its points. The shares
/// are of all points (a failed multipath run is neither faster nor within [`TOLERANCE`]).
fn summary_row(label: &str, ratios: &[(String, Option<f64>)], values: &[f64]) -> Vec<Cell> {
    let share = |pred: &dyn Fn(f64) -> bool| {
        (!ratios.is_empty()).then(|| {
            100.0 * values.iter().filter(|r| pred(**r)).count() as f64 / ratios.len() as f64
        })
    };
    let worst = values
        .iter()
        .copied()
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.min(v))));
    vec![
        Cell::text(label),
        Cell::num(ratios.len() as f64, 0),
        Cell::num(ratios.iter().filter(|(_, r)| r.is_none()).count() as f64, 0),
        num(stats::median(values), 3),
        num(stats::mean(values), 3),
        num(stats::percentile(values, 10.0), 3),
        num(stats::percentile(values, 90.0), 3),
        num(worst, 3),
        num(share(&|r| r > 1.0), 1),
        num(share(&|r| r * TOLERANCE >= 1.0), 1),
    ]
}

/// Per point of the set with run-ID prefix `prefix` (see [`SETS`]): `Some(best single /
/// multipath)` or `None` if multipath failed, for the multipath runs whose id ends in `-{tag}`
/// (see [`SCHEDULERS`]). A point run with several seeds (IDs `POINT`, `POINTs1`, ...; see
/// [`LOSSY_SEEDS`]) compares mean completion times: the best single path is the one whose mean
/// is lower (a path with an unfinished run counts as infinitely slow), and multipath failed if
/// any of its runs did.
pub fn ratios(runs: &[(String, RunRecord)], prefix: char, tag: &str) -> Vec<(String, Option<f64>)> {
    let map = run_map(runs);
    let suffix = format!("-{tag}");
    let mut points: Vec<(&str, Vec<&str>)> = Vec::new();
    for (id, _) in runs {
        let Some(replica) = id
            .strip_suffix(suffix.as_str())
            .filter(|p| p.starts_with(prefix) && !p.contains('-'))
        else {
            continue;
        };
        let base = point_of(replica);
        match points.iter_mut().find(|(b, _)| *b == base) {
            Some((_, replicas)) => replicas.push(replica),
            None => points.push((base, vec![replica])),
        }
    }
    let mean_time = |replicas: &[&str], tag: &str| -> Option<f64> {
        let times: Option<Vec<f64>> = replicas
            .iter()
            .map(|p| {
                let r = map.get(format!("{p}-{tag}").as_str())?;
                r.completion_time_s.filter(|_| r.completed)
            })
            .collect();
        times.and_then(|t| stats::mean(&t))
    };
    points
        .into_iter()
        .map(|(base, replicas)| {
            let best = ["sp0", "sp1"]
                .iter()
                .map(|k| mean_time(&replicas, k).unwrap_or(f64::INFINITY))
                .fold(f64::INFINITY, f64::min);
            let ratio = mean_time(&replicas, tag)
                .filter(|t| *t > 0.0)
                .map(|t| best / t);
            (base.to_owned(), ratio)
        })
        .collect()
}

/// The point of a run-ID stem: `p007` for `p007` and for its other seeds' `p007s1`, `p007s2`.
pub fn point_of(stem: &str) -> &str {
    match stem.get(1..).and_then(|rest| rest.find('s')) {
        Some(k) => &stem[..=k],
        None => stem,
    }
}

fn handover_table(runs: &[(String, RunRecord)]) -> Table {
    let cols = [
        "run",
        "completed",
        "completion time (s)",
        "goodput (Mbit/s)",
    ];
    let mut t = Table::new(
        "Ours: handover",
        cols.iter().map(|c| (*c).to_owned()).collect(),
    );
    for (id, r) in runs.iter().filter(|(id, _)| id.starts_with("handover-")) {
        let label = match id.as_str() {
            "handover-mp" => "MPNS (both paths)",
            "handover-sp0" => "single path 0 (goes down)",
            _ => "single path 1",
        };
        t.rows.push(vec![
            Cell::text(label),
            Cell::text(if r.completed { "yes" } else { "no" }),
            num(r.completion_time_s.filter(|_| r.completed), 3),
            Cell::num(r.goodput_mbps, 2),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_of_a_point_share_its_name() {
        assert_eq!(point_of("p007"), "p007");
        assert_eq!(point_of("p007s1"), "p007");
        assert_eq!(point_of("f250s12"), "f250");
        assert_eq!(point_of(""), "");
    }

    #[test]
    fn lossy_points_run_every_seed_and_name_their_streams() {
        let runs = MpVsSp::default().runs(true, 1);
        let lossy = runs.iter().filter(|(id, _)| id.starts_with("p000")).count();
        let loss_free = runs.iter().filter(|(id, _)| id.starts_with("f000")).count();
        let per_point = 2 + SCHEDULERS.len();
        assert_eq!(loss_free, per_point);
        assert_eq!(lossy, per_point * LOSSY_SEEDS);
        let specs: Vec<String> = runs
            .iter()
            .find(|(id, _)| id == "p000s3-mp-ecf-race")
            .map(|(_, s)| s.paths.iter().map(|p| p.0.to_string()).collect())
            .expect("run");
        assert!(
            specs[0].ends_with("streams=0") && specs[1].ends_with("streams=1"),
            "{specs:?}"
        );
    }
}
