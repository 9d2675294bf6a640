//! `hetero`: two paths that differ in rate and delay, swept over a grid.
//!
//! The fast path is 50 Mbit/s with 5 ms one-way delay; the slow path has `1 / ratio` of its rate
//! and `gap` more one-way delay (ratios 1–50x, gaps 0–200 ms; both queues one BDP, no random
//! loss). Each point runs SPNS and MPNS over both paths with the default scheduler and
//! re-injection, and single path QUIC on the fast path — by construction the best single path,
//! since it is at least as fast and as short as the other. Two questions, one grid:
//! - does a single packet number space keep up with multiple spaces when the paths differ
//!   (issue 13, the Alibaba report's claim, seed 000 Table 1: within 0.3%)?
//! - is multipath ever slower than its best path (issue 15, the CoNEXT 2017 promise, seed 004)?

use std::path::Path;

use mpquic_proto::reinjection::ReinjectionMode;
use mpquic_proto::scheduler::SchedulerKind;
use mpquic_report::{Cell, Section, Table};

use super::common::{config_text, num, run_map, ReportBuilder, ReportOutput, RunRecord, RunSpec};
use super::common::{download, multipath_named};
use super::fidelity::{time_limit_s, CONEXT_2017, SPNS_REPORT};
use super::Suite;
use crate::scenario::Scenario;
use mpquic_proto::cc::CcAlgorithm;

/// Rate of the fast path (Mbit/s).
const FAST_MBIT: f64 = 50.0;
/// One-way delay of the fast path (ms).
const FAST_DELAY_MS: f64 = 5.0;
/// Below this SPNS / MPNS goodput ratio a point fails issue 13's bar.
pub const SPNS_BAR: f64 = 0.97;
/// Below this best-single / multipath time ratio, multipath was slower than its best path.
pub const SINGLE_BAR: f64 = 1.0;

/// The `hetero` suite.
#[derive(Debug, Clone, Default)]
pub struct Hetero {
    /// Test hook: (rate ratios, delay gaps in ms, download bytes), replacing the quick/full grid.
    pub tiny: Option<(Vec<f64>, Vec<f64>, u64)>,
}

/// One point of the grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Fast path rate / slow path rate.
    pub ratio: f64,
    /// Slow path one-way delay minus the fast path's (ms).
    pub gap_ms: f64,
}

impl Point {
    /// Run-ID prefix, e.g. `r05-g100`.
    pub fn id(&self) -> String {
        format!("r{:02}-g{:03}", self.ratio.round(), self.gap_ms.round())
    }

    /// Path specs: the fast path first (the handshake path), then the slow one.
    pub fn paths(&self) -> [String; 2] {
        let slow_kbit = (FAST_MBIT * 1000.0 / self.ratio).round();
        [
            format!("rate={FAST_MBIT}mbit,delay={FAST_DELAY_MS}ms,queue=1bdp"),
            format!(
                "rate={slow_kbit}kbit,delay={}ms,queue=1bdp",
                FAST_DELAY_MS + self.gap_ms
            ),
        ]
    }
}

/// The grid (ratios × gaps) and download size of a mode.
pub fn grid(quick: bool) -> (Vec<f64>, Vec<f64>, u64) {
    if quick {
        (vec![1.0, 5.0, 20.0], vec![0.0, 50.0, 200.0], 5_000_000)
    } else {
        (
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0],
            vec![0.0, 10.0, 25.0, 50.0, 100.0, 200.0],
            20_000_000,
        )
    }
}

/// The arms of a point: run-ID suffix, multipath mode, whether both paths are used.
const ARMS: [(&str, &str, bool); 3] = [
    ("spns", "spns", true),
    ("mpns", "mpns", true),
    ("sp", "single", false),
];

impl Hetero {
    fn points_and_size(&self, quick: bool) -> (Vec<Point>, u64) {
        let (ratios, gaps, bytes) = self.tiny.clone().unwrap_or_else(|| grid(quick));
        let points = ratios
            .iter()
            .flat_map(|&ratio| gaps.iter().map(move |&gap_ms| Point { ratio, gap_ms }))
            .collect();
        (points, bytes)
    }
}

impl Suite for Hetero {
    fn name(&self) -> &'static str {
        "hetero"
    }

    fn description(&self) -> &'static str {
        "Two heterogeneous paths, rate ratio 1-50x x delay gap 0-200 ms: SPNS vs MPNS, and multipath vs the best single path (default scheduler)"
    }

    fn runs(&self, quick: bool, seed: u64) -> Vec<(String, Scenario)> {
        let (points, bytes) = self.points_and_size(quick);
        let mut out = Vec::new();
        for (i, point) in points.iter().enumerate() {
            let paths = point.paths();
            // Scaled with size and capacity like every suite's (the fast path alone suffices).
            let limit_s = time_limit_s(&paths[..1], bytes, 60);
            for (tag, mode, both) in ARMS {
                let id = format!("{}-{tag}", point.id());
                let spec = RunSpec {
                    name: &id,
                    seed: seed.wrapping_add(i as u64),
                    paths: if both { &paths[..] } else { &paths[..1] },
                    workload: download(bytes),
                    multipath: multipath_named(mode),
                    cc: CcAlgorithm::Cubic,
                    ack_range_limit: None,
                    time_limit_s: limit_s,
                    time_series: false,
                };
                let mut scenario = spec.build();
                scenario.transport.config.scheduler = SchedulerKind::default();
                scenario.transport.config.reinjection = ReinjectionMode::default();
                out.push((id, scenario));
            }
        }
        out
    }

    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput> {
        let mut rb = ReportBuilder::new(out_dir, &[SPNS_REPORT, CONEXT_2017], runs)?;
        let results = point_results(runs);
        let mut s = Section::new("Two heterogeneous paths");
        s.paragraphs.push(format!(
            "Fast path {FAST_MBIT} Mbit/s, {FAST_DELAY_MS} ms one-way; the slow path has 1/ratio \
             of its rate and gap ms more one-way delay; queues of one BDP, no random loss, Cubic, \
             scheduler {}, re-injection {}. Best single path = the fast path alone. A run that \
             did not complete counts as a failed point (shown, never left out).",
            super::mp_vs_sp::name(SchedulerKind::default()),
            ReinjectionMode::default().build().name()
        ));
        let headline = summary_table(&results);
        rb.table(&mut s, "summary", headline.clone())?;
        let spns = matrix(&results, "SPNS / MPNS goodput", |r| r.spns_over_mpns);
        rb.table(&mut s, "spns_over_mpns", spns)?;
        for (label, stem, pick) in [
            (
                "MPNS",
                "mpns_vs_single",
                PointResult::mpns_vs_single as fn(&_) -> _,
            ),
            ("SPNS", "spns_vs_single", PointResult::spns_vs_single),
        ] {
            let title = format!("Best single-path time / {label} time (> 1: multipath faster)");
            rb.table(&mut s, stem, matrix(&results, &title, pick))?;
        }
        rb.table(&mut s, "slow_path_share", slow_share_table(&results))?;
        let mut cfg = Section::new("Configuration");
        cfg.config = Some(config_text(self.name(), runs));
        rb.sections = vec![s, cfg];
        rb.finish("hetero: two heterogeneous paths", Some(headline))
    }
}

/// The figures of one point; `None` where a run is missing or did not complete.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// The point.
    pub point: Point,
    /// SPNS goodput / MPNS goodput.
    pub spns_over_mpns: Option<f64>,
    /// Single-path time / MPNS time.
    pub mpns_over_single: Option<f64>,
    /// Single-path time / SPNS time.
    pub spns_over_single: Option<f64>,
    /// Share of stream bytes the slow path carried, MPNS and SPNS.
    pub slow_share: [Option<f64>; 2],
    /// Runs of the point that completed, of the runs present.
    pub completed: (usize, usize),
}

impl PointResult {
    fn mpns_vs_single(&self) -> Option<f64> {
        self.mpns_over_single
    }

    fn spns_vs_single(&self) -> Option<f64> {
        self.spns_over_single
    }
}

/// Parses a run-ID prefix `rRR-gGGG` back into its point.
fn parse_point(prefix: &str) -> Option<Point> {
    let (r, g) = prefix.strip_prefix('r')?.split_once("-g")?;
    Some(Point {
        ratio: r.parse().ok()?,
        gap_ms: g.parse().ok()?,
    })
}

/// The figures of every point found in `runs`, in grid order (ratio, then gap).
pub fn point_results(runs: &[(String, RunRecord)]) -> Vec<PointResult> {
    let map = run_map(runs);
    let mut prefixes: Vec<&str> = runs
        .iter()
        .filter_map(|(id, _)| id.rsplit_once('-').map(|(p, _)| p))
        .filter(|p| parse_point(p).is_some())
        .collect();
    prefixes.sort_by(|a, b| {
        let (pa, pb) = (parse_point(a), parse_point(b));
        let key = |p: Option<Point>| p.map_or((0.0, 0.0), |p| (p.ratio, p.gap_ms));
        key(pa)
            .partial_cmp(&key(pb))
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    prefixes.dedup();
    let mut out = Vec::new();
    for prefix in prefixes {
        let Some(point) = parse_point(prefix) else {
            continue;
        };
        let get = |tag: &str| map.get(format!("{prefix}-{tag}").as_str()).copied();
        let [spns, mpns, sp] = [get("spns"), get("mpns"), get("sp")];
        let time = |r: Option<&RunRecord>| done(r).and_then(|r| r.completion_time_s);
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let present = [spns, mpns, sp].iter().flatten().count();
        let completed = [spns, mpns, sp]
            .iter()
            .filter(|r| done(**r).is_some())
            .count();
        out.push(PointResult {
            point,
            spns_over_mpns: ratio(
                done(spns).map(|r| r.goodput_mbps),
                done(mpns).map(|r| r.goodput_mbps),
            ),
            mpns_over_single: ratio(time(sp), time(mpns)),
            spns_over_single: ratio(time(sp), time(spns)),
            slow_share: [
                done(mpns).and_then(slow_share),
                done(spns).and_then(slow_share),
            ],
            completed: (completed, present),
        });
    }
    out
}

/// The run, if it completed.
fn done(r: Option<&RunRecord>) -> Option<&RunRecord> {
    r.filter(|r| r.completed)
}

/// The share of stream bytes sent on the second path.
fn slow_share(r: &RunRecord) -> Option<f64> {
    let total: u64 = r.paths.iter().map(|p| p.bytes_sent).sum();
    let slow = r.paths.iter().find(|p| p.id == 1)?.bytes_sent;
    (total > 0).then(|| slow as f64 / total as f64)
}

/// One figure of a point.
type Pick = fn(&PointResult) -> Option<f64>;

/// The headline: per comparison, the worst point and how many points miss the bar.
fn summary_table(results: &[PointResult]) -> Table {
    let cols = [
        "comparison",
        "points",
        "runs completed",
        "minimum",
        "median",
        "below bar",
        "bar",
    ];
    let mut t = Table::new(
        "Ours: worst point and points below the bar",
        cols.iter().map(|c| (*c).to_owned()).collect(),
    );
    let completed: usize = results.iter().map(|r| r.completed.0).sum();
    let present: usize = results.iter().map(|r| r.completed.1).sum();
    let rows: [(&str, Pick, f64); 3] = [
        ("SPNS / MPNS goodput", |r| r.spns_over_mpns, SPNS_BAR),
        (
            "best single / MPNS time",
            |r| r.mpns_over_single,
            SINGLE_BAR,
        ),
        (
            "best single / SPNS time",
            |r| r.spns_over_single,
            SINGLE_BAR,
        ),
    ];
    for (label, pick, bar) in rows {
        let values: Vec<Option<f64>> = results.iter().map(pick).collect();
        let known: Vec<f64> = values.iter().flatten().copied().collect();
        // A point without a value (a run failed) counts as below the bar.
        let below = values.iter().filter(|v| v.is_none_or(|v| v < bar)).count();
        t.rows.push(vec![
            Cell::text(label),
            Cell::num(results.len() as f64, 0),
            Cell::text(format!("{completed} of {present}")),
            num(known.iter().copied().reduce(f64::min), 3),
            num(mpquic_report::stats::median(&known), 3),
            Cell::num(below as f64, 0),
            Cell::num(bar, 2),
        ]);
    }
    t
}

/// A ratio × gap matrix of one figure.
fn matrix(results: &[PointResult], title: &str, pick: Pick) -> Table {
    let mut gaps: Vec<f64> = results.iter().map(|r| r.point.gap_ms).collect();
    gaps.sort_by(f64::total_cmp);
    gaps.dedup();
    let mut ratios: Vec<f64> = results.iter().map(|r| r.point.ratio).collect();
    ratios.sort_by(f64::total_cmp);
    ratios.dedup();
    let mut cols = vec!["rate ratio \\ delay gap (ms)".to_owned()];
    cols.extend(gaps.iter().map(|g| format!("{g:.0}")));
    let mut t = Table::new(format!("Ours: {title}"), cols);
    for ratio in ratios {
        let mut row = vec![Cell::text(format!("{ratio:.0}x"))];
        for gap in &gaps {
            let r = results
                .iter()
                .find(|r| r.point.ratio == ratio && r.point.gap_ms == *gap);
            row.push(match r {
                Some(r) => num(pick(r), 3),
                None => Cell::text("-"),
            });
        }
        t.rows.push(row);
    }
    t
}

/// Per point: the slow path's share of the bytes in each design.
fn slow_share_table(results: &[PointResult]) -> Table {
    let cols = [
        "rate ratio",
        "delay gap (ms)",
        "slow path share MPNS (%)",
        "SPNS (%)",
    ];
    let mut t = Table::new(
        "Ours: share of stream bytes on the slow path",
        cols.iter().map(|c| (*c).to_owned()).collect(),
    );
    for r in results {
        let pct = |v: Option<f64>| num(v.map(|v| 100.0 * v), 1);
        t.rows.push(vec![
            Cell::num(r.point.ratio, 0),
            Cell::num(r.point.gap_ms, 0),
            pct(r.slow_share[0]),
            pct(r.slow_share[1]),
        ]);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_ids_round_trip_and_paths_follow_the_point() {
        let p = Point {
            ratio: 20.0,
            gap_ms: 100.0,
        };
        assert_eq!(p.id(), "r20-g100");
        assert_eq!(parse_point("r20-g100"), Some(p));
        let [fast, slow] = p.paths();
        assert_eq!(fast, "rate=50mbit,delay=5ms,queue=1bdp");
        assert_eq!(slow, "rate=2500kbit,delay=105ms,queue=1bdp");
    }

    #[test]
    fn every_point_has_three_valid_runs() {
        let suite = Hetero::default();
        let runs = suite.runs(true, 1);
        let (ratios, gaps, _) = grid(true);
        assert_eq!(runs.len(), ratios.len() * gaps.len() * ARMS.len());
        let (full_ratios, full_gaps, _) = grid(false);
        assert_eq!(full_ratios.first(), Some(&1.0));
        assert_eq!(full_ratios.last(), Some(&50.0));
        assert_eq!(full_gaps.last(), Some(&200.0));
    }

    fn record(completed: bool, time: f64, goodput: f64) -> RunRecord {
        RunRecord {
            completed,
            completion_time_s: Some(time),
            goodput_mbps: goodput,
            ..RunRecord::default()
        }
    }

    #[test]
    fn a_failed_run_is_counted_below_the_bar() {
        let runs = vec![
            ("r05-g050-spns".to_owned(), record(true, 2.0, 40.0)),
            ("r05-g050-mpns".to_owned(), record(false, 9.0, 10.0)),
            ("r05-g050-sp".to_owned(), record(true, 2.2, 36.0)),
        ];
        let results = point_results(&runs);
        assert_eq!(results.len(), 1);
        let r = &results[0];
        assert_eq!(r.completed, (2, 3));
        assert_eq!(r.spns_over_mpns, None);
        assert!((r.spns_over_single.expect("ratio") - 1.1).abs() < 1e-9);
        let t = summary_table(&results);
        assert_eq!(t.rows[0][2].display(), "2 of 3");
        assert_eq!(t.rows[0][5].display(), "1", "the SPNS / MPNS point failed");
        assert_eq!(t.rows[2][5].display(), "0", "SPNS beat the single path");
    }
}
