//! Simulated and real runs of the same scenarios side by side.
//!
//! `mpquic lab run SUITE --real` runs a suite's scenarios on real sockets through the emulator
//! ([`crate::real`]) and stores each as `runs/ID.real.json` next to the simulated `ID.json`.
//! Whenever a run directory holds both, [`comparison`] writes `sim-vs-real/index.html` (and
//! `tables/sim_vs_real.csv`): goodput and the per-path split of the sender's bytes, simulated
//! and real, and their difference.
//!
//! The `sim-vs-real` suite holds the six scenarios of issue 14 (homogeneous, heterogeneous
//! 50/5 Mbit/s with 5/100 ms one-way, 1% loss, handover, a Mahimahi trace pair, three paths),
//! MPNS with the runtime's default scheduler (ECF) and Cubic.

use std::path::Path;

use super::common::download;
use mpquic_proto::cc::CcAlgorithm;
use mpquic_proto::scheduler::SchedulerKind;
use mpquic_proto::MultipathMode;
use mpquic_report::{Cell, Section, Table};

use super::common::{config_text, num, rate_pct, ReportBuilder, ReportOutput, RunRecord, RunSpec};
use super::Suite;
use crate::scenario::Scenario;

/// Suffix of the run IDs of real runs.
pub const REAL_SUFFIX: &str = ".real";

/// The real run ID of a simulated run ID.
pub fn real_id(id: &str) -> String {
    format!("{id}{REAL_SUFFIX}")
}

/// The `sim-vs-real` suite.
#[derive(Debug, Clone, Copy, Default)]
pub struct SimVsReal {
    /// Test hook: download size in bytes of every run.
    pub tiny: Option<u64>,
}

/// `(id, paths, download MB)` of the six scenarios.
fn cases() -> Vec<(&'static str, Vec<&'static str>, u64)> {
    vec![
        (
            "homogeneous",
            vec!["rate=20mbit,rtt=40ms", "rate=20mbit,rtt=40ms"],
            20,
        ),
        (
            "heterogeneous",
            vec!["rate=50mbit,delay=5ms", "rate=5mbit,delay=100ms"],
            30,
        ),
        (
            "loss1",
            vec![
                "rate=20mbit,rtt=40ms,loss=1%",
                "rate=20mbit,rtt=40ms,loss=1%",
            ],
            20,
        ),
        (
            "handover",
            vec!["rate=20mbit,rtt=20ms,down_at=2s", "rate=15mbit,rtt=40ms"],
            20,
        ),
        (
            "traces",
            vec![
                "trace=gen:wifi:1:60s,rtt=30ms",
                "trace=gen:lte:2:60s,rtt=50ms",
            ],
            20,
        ),
        (
            "three-paths",
            vec![
                "rate=20mbit,rtt=30ms",
                "rate=15mbit,rtt=50ms",
                "rate=10mbit,rtt=70ms",
            ],
            20,
        ),
    ]
}

impl Suite for SimVsReal {
    fn name(&self) -> &'static str {
        "sim-vs-real"
    }

    fn description(&self) -> &'static str {
        "six two/three-path downloads to run simulated and with --real (emulated), side by side"
    }

    fn runs(&self, quick: bool, seed: u64) -> Vec<(String, Scenario)> {
        cases()
            .into_iter()
            .map(|(id, paths, mb)| {
                let bytes = self
                    .tiny
                    .unwrap_or(if quick { mb * 500_000 } else { mb * 1_000_000 });
                let paths: Vec<String> = paths.iter().map(|p| (*p).to_owned()).collect();
                let spec = RunSpec {
                    name: id,
                    seed,
                    paths: &paths,
                    workload: download(bytes),
                    multipath: MultipathMode::Mpns,
                    cc: CcAlgorithm::Cubic,
                    ack_range_limit: None,
                    time_limit_s: 120,
                    time_series: false,
                };
                let mut scenario = spec.build();
                scenario.transport.config.scheduler = SchedulerKind::Ecf;
                (id.to_owned(), scenario)
            })
            .collect()
    }

    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput> {
        let mut rb = ReportBuilder::new(out_dir, &[], runs)?;
        let mut s = Section::new("Simulated runs");
        s.paragraphs.push(
            "Goodput and the sender's per-path share of stream bytes. Run the suite again with \
             --real into the same directory for the real runs; the comparison is then in \
             sim-vs-real/index.html."
                .to_owned(),
        );
        let table = runs_table(runs);
        rb.table(&mut s, "runs", table.clone())?;
        let mut cfg = Section::new("Configuration");
        cfg.config = Some(config_text(self.name(), runs));
        rb.sections = vec![s, cfg];
        rb.finish("sim-vs-real: six scenarios", Some(table))
    }
}

/// The sender's share of stream bytes per path, as `57/43`, in the order of the client's
/// interfaces (path IDs follow the order paths were opened in, which need not be the same).
pub fn split(r: &RunRecord) -> String {
    let total: u64 = r.paths.iter().map(|p| p.bytes_sent).sum();
    if total == 0 {
        return "-".to_owned();
    }
    let mut paths: Vec<_> = r.paths.iter().collect();
    paths.sort_by_key(|p| (p.interface.unwrap_or(usize::MAX), p.id));
    paths
        .iter()
        .map(|p| format!("{:.0}", p.bytes_sent as f64 * 100.0 / total as f64))
        .collect::<Vec<_>>()
        .join("/")
}

fn runs_table(runs: &[(String, RunRecord)]) -> Table {
    let mut t = Table::new(
        "Runs",
        ["run", "completed", "goodput Mbit/s", "split %"]
            .map(str::to_owned)
            .to_vec(),
    );
    for (id, r) in runs {
        t.rows.push(vec![
            Cell::text(id.clone()),
            Cell::text(if r.completed { "yes" } else { "no" }),
            Cell::num(r.goodput_mbps, 2),
            Cell::text(split(r)),
        ]);
    }
    t
}

/// One row per run present both simulated and real.
pub fn comparison_table(sim: &[(String, RunRecord)], real: &[(String, RunRecord)]) -> Table {
    let mut t = Table::new(
        "Simulated vs real (emulated) runs",
        [
            "run",
            "sim goodput Mbit/s",
            "real goodput Mbit/s",
            "real vs sim %",
            "sim split %",
            "real split %",
            "sim retx %",
            "real retx %",
            "real completed",
            "release jitter p99 us",
        ]
        .map(str::to_owned)
        .to_vec(),
    );
    for (id, s) in sim {
        let Some((_, r)) = real.iter().find(|(rid, _)| *rid == real_id(id)) else {
            continue;
        };
        let pct = |x: &RunRecord| x.retransmission_ratio() * 100.0;
        t.rows.push(vec![
            Cell::text(id.clone()),
            Cell::num(s.goodput_mbps, 2),
            Cell::num(r.goodput_mbps, 2),
            num(rate_pct(s.goodput_mbps, r.goodput_mbps), 1),
            Cell::text(split(s)),
            Cell::text(split(r)),
            Cell::num(pct(s), 2),
            Cell::num(pct(r), 2),
            Cell::text(if r.completed { "yes" } else { "no" }),
            num(r.release_jitter.map(|j| j.p99_us), 0),
        ]);
    }
    t
}

/// Writes `DIR/sim-vs-real/index.html` comparing the simulated and real runs of a directory.
pub fn comparison(
    sim: &[(String, RunRecord)],
    real: &[(String, RunRecord)],
    dir: &Path,
) -> anyhow::Result<ReportOutput> {
    let mut rb = ReportBuilder::new(&dir.join("sim-vs-real"), &[], sim)?;
    let mut s = Section::new("The same scenarios, simulated and on real sockets");
    s.paragraphs.push(
        "Real runs: the tokio runtime's client and server over loopback through the emulator, \
         whose links are the simulator's link models in real time (same specs and seed). \
         Split: the sender's share of stream bytes per path. Retransmissions: stream bytes \
         retransmitted / bytes requested."
            .to_owned(),
    );
    let table = comparison_table(sim, real);
    rb.table(&mut s, "sim_vs_real", table.clone())?;
    let all: Vec<(String, RunRecord)> = sim.iter().chain(real).cloned().collect();
    let mut cfg = Section::new("Configuration");
    cfg.config = Some(config_text("sim-vs-real", &all));
    rb.sections = vec![s, cfg];
    rb.finish("Simulated vs real runs", Some(table))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::suites::common::PathRecord;

    fn record(goodput: f64, split: &[u64], network: &str) -> RunRecord {
        RunRecord {
            completed: true,
            network: network.to_owned(),
            goodput_mbps: goodput,
            paths: split
                .iter()
                .map(|&b| PathRecord {
                    bytes_sent: b,
                    ..PathRecord::default()
                })
                .collect(),
            ..RunRecord::default()
        }
    }

    #[test]
    fn rows_pair_simulated_and_real_runs() {
        let sim = vec![
            ("a".to_owned(), record(30.0, &[60, 40], "simulated")),
            ("b".to_owned(), record(10.0, &[1], "simulated")),
        ];
        let real = vec![("a.real".to_owned(), record(27.0, &[70, 30], "emulated"))];
        let t = comparison_table(&sim, &real);
        assert_eq!(t.rows.len(), 1);
        assert_eq!(t.rows[0][3].display(), "-10.0");
        assert_eq!(t.rows[0][4].display(), "60/40");
        assert_eq!(t.rows[0][5].display(), "70/30");
    }

    #[test]
    fn the_split_follows_the_interfaces() {
        let mut r = record(1.0, &[30, 70], "emulated");
        r.paths[0].interface = Some(1);
        r.paths[1].interface = Some(0);
        assert_eq!(split(&r), "70/30");
    }

    #[test]
    fn six_valid_scenarios() {
        let runs = SimVsReal::default().runs(true, 1);
        assert_eq!(runs.len(), 6);
        for (_, s) in &runs {
            s.validate().expect("valid");
        }
    }
}
