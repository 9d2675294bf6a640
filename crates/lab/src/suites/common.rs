//! Shared pieces of the suites: the deserializable run record that reports
//! are computed from, scenario construction, and table/figure helpers.
//!
//! Reports never see a [`RunResult`](crate::RunResult) directly: the runner
//! writes each result to `runs/RUN_ID.json` and the report reads the JSON
//! back as a [`RunRecord`], so every number in a report comes from a run
//! file (and `mpquic lab report DIR` reproduces it exactly).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use mpquic_report::{Cell, Figure, Render, Section, Table};
use serde::{Deserialize, Serialize};

use mpquic_netsim::PathSpec;
use mpquic_proto::cc::CcAlgorithm;
use mpquic_proto::reinjection::ReinjectionMode;
use mpquic_proto::scheduler::SchedulerKind;
use mpquic_proto::{AckConfig, RangeOrder};
use mpquic_proto::{MultipathMode, SpnsRules};

use crate::scenario::{RecordSettings, Scenario, Workload};
use crate::units::{ByteSize, SimDuration};

/// One path's figures, as read back from a run's JSON.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct PathRecord {
    /// QUIC path ID.
    pub id: u64,
    /// Client interface (scenario path index) the path starts at.
    pub interface: Option<usize>,
    /// Stream bytes the sender sent on the path.
    pub bytes_sent: u64,
    /// Stream bytes retransmitted on the path.
    pub retransmitted_bytes: u64,
    /// Sender's smoothed RTT at the end (ms).
    pub srtt_ms: f64,
    /// Mean true RTT (ms).
    pub true_rtt_ms: Option<f64>,
    /// Mean absolute srtt error (ms).
    pub srtt_mae_ms: Option<f64>,
    /// `srtt_mae_ms / true_rtt_ms`.
    pub srtt_mae_ratio: Option<f64>,
    /// Packets the sender declared lost on the path.
    pub packets_lost: u64,
    /// Of those, acknowledged later.
    pub spurious_losses: u64,
    /// Packets the path's download link dropped (ground truth).
    pub link_drops: Option<u64>,
    /// Sender's minimum RTT (ms).
    pub min_rtt_ms: f64,
    /// RTT samples the sender took on the path.
    pub rtt_samples: u64,
    /// Of those, round trips on the path itself.
    pub own_rtt_samples: u64,
    /// Of those, borrowed from other paths' ACKs before the path had its own.
    pub borrowed_rtt_samples: u64,
    /// The smallest RTT a round trip on the path can have (ground truth, ms).
    pub min_rtt_floor_ms: Option<f64>,
    /// The receiver's minimum RTT of the path, when it had a round trip of its own on it.
    pub receiver_min_rtt_ms: Option<f64>,
}

/// One request's outcome, as read back from a run's JSON.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RequestRecord {
    /// Response size in bytes.
    pub size: u64,
    /// Bytes read.
    pub received: u64,
    /// Completion time from the start of the run (s).
    pub completion_time_s: Option<f64>,
    /// Index of the connection that carried it.
    pub connection: usize,
    /// When that connection's handshake started (s; 0 for the first).
    pub connection_start_s: f64,
}

/// One link's configuration and ground truth, as read back from a run's JSON.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct LinkRecord {
    /// `path0.up`, `path0.down`, ... (`up` = client to server).
    pub name: String,
    /// Nominal capacity (a trace's mean rate), Mbit/s.
    pub rate_mbps: Option<f64>,
    /// One-way propagation delay (ms).
    pub delay_ms: f64,
    /// The drop-tail limit as configured.
    pub queue_limit: mpquic_netsim::QueueLimit,
    /// The trace's source (file path or `gen:NAME:SEED`).
    pub trace: Option<String>,
    /// Where the trace's replay started in its period (ms).
    pub trace_start_ms: Option<u64>,
    /// Bytes that left the link.
    pub delivered_bytes: u64,
}

/// srtt samples of one path: `[time_s, srtt_ms, true_rtt_ms]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RttRecord {
    /// QUIC path ID.
    pub path: u64,
    /// `[time_s, srtt_ms, true_rtt_ms]`.
    pub points: Vec<[f64; 3]>,
}

/// Time series of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TimeSeriesRecord {
    /// srtt vs true RTT per path.
    pub rtt: Vec<RttRecord>,
    /// `[time_s, response bytes read, packets received]`.
    pub progress: Vec<[f64; 3]>,
}

/// The subset of a [`RunResult`](crate::RunResult) that reports use, read
/// back from the run's JSON file (unknown fields are ignored).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct RunRecord {
    /// `simulated`, `emulated` (a real run, `lab run --real`), or empty in records written
    /// before real runs existed (simulated).
    pub network: String,
    /// Emulated runs: the emulator's release jitter.
    pub release_jitter: Option<mpquic_emulate::JitterStats>,
    /// Every request completed.
    pub completed: bool,
    /// Outcome word (`completed`, `time_limit`, ...).
    pub outcome: String,
    /// Completion time (s).
    pub completion_time_s: Option<f64>,
    /// Handshake completion time (s).
    pub handshake_time_s: Option<f64>,
    /// Response bytes asked for.
    pub bytes_requested: u64,
    /// Response bytes read.
    pub bytes_received: u64,
    /// Goodput (Mbit/s).
    pub goodput_mbps: f64,
    /// Per-path figures.
    pub paths: Vec<PathRecord>,
    /// Per-link configuration and ground truth.
    pub links: Vec<LinkRecord>,
    /// Receiver ACK frames.
    pub ack_frames_sent: u64,
    /// Mean receiver ACK frame size (bytes).
    pub avg_ack_frame_bytes: f64,
    /// ACK frames by range count, buckets `<=1,2,4,8,16,32,64,more`.
    pub ack_range_histogram: [u64; 8],
    /// Mean ranges per ACK frame.
    pub mean_ranges_per_ack: f64,
    /// Stream bytes retransmitted.
    pub retransmitted_bytes: u64,
    /// Packets declared lost, then acknowledged.
    pub spurious_retransmissions: u64,
    /// Packets the download links dropped (ground truth).
    pub true_losses: u64,
    /// Ground-truth invariants the run broke.
    pub violations: Vec<String>,
    /// Per-request outcomes.
    pub requests: Vec<RequestRecord>,
    /// Optional time series.
    pub time_series: Option<TimeSeriesRecord>,
    /// Wall-clock time of the run (s).
    pub sim_wall_time_s: f64,
    /// The scenario, as echoed in the result.
    pub scenario: serde_json::Value,
}

impl RunRecord {
    /// Parses a run's JSON text.
    pub fn from_json(text: &str) -> serde_json::Result<RunRecord> {
        serde_json::from_str(text)
    }

    /// Download speed in kB/s (10³ bytes per second) over the completion
    /// time; `None` when the run did not complete.
    pub fn speed_kbytes_per_s(&self) -> Option<f64> {
        let t = self.completion_time_s.filter(|t| *t > 0.0)?;
        self.completed
            .then(|| self.bytes_received as f64 / t / 1000.0)
    }

    /// Retransmitted bytes / bytes requested.
    pub fn retransmission_ratio(&self) -> f64 {
        if self.bytes_requested == 0 {
            0.0
        } else {
            self.retransmitted_bytes as f64 / self.bytes_requested as f64
        }
    }

    /// The link called `name` (`path0.down`, ...).
    pub fn link(&self, name: &str) -> Option<&LinkRecord> {
        self.links.iter().find(|l| l.name == name)
    }

    /// The sum of the download links' mean capacities (Mbit/s), when known.
    pub fn download_capacity_mbps(&self) -> Option<f64> {
        let rates: Vec<f64> = self
            .links
            .iter()
            .filter(|l| l.name.starts_with("path") && l.name.ends_with(".down"))
            .map(|l| l.rate_mbps)
            .collect::<Option<Vec<f64>>>()?;
        let total: f64 = rates.iter().sum();
        (total > 0.0).then_some(total)
    }

    /// Goodput / aggregate mean download capacity (a completed run only).
    pub fn utilisation(&self) -> Option<f64> {
        let cap = self.download_capacity_mbps()?;
        self.completed.then(|| self.goodput_mbps / cap)
    }

    /// Whether the run went through the emulator on real sockets.
    pub fn is_emulated(&self) -> bool {
        self.network == "emulated"
    }

    /// The scenario's seed (0 when absent).
    pub fn seed(&self) -> u64 {
        self.scenario
            .get("seed")
            .and_then(|s| s.as_u64())
            .unwrap_or(0)
    }
}

/// Runs by ID, for look-ups in reports.
pub type RunMap<'a> = BTreeMap<&'a str, &'a RunRecord>;

/// Indexes runs by ID.
pub fn run_map(runs: &[(String, RunRecord)]) -> RunMap<'_> {
    runs.iter().map(|(id, r)| (id.as_str(), r)).collect()
}

/// Relative change `(b - a) / a` in percent (`None` if `a` is zero).
pub fn rate_pct(a: f64, b: f64) -> Option<f64> {
    (a != 0.0 && a.is_finite() && b.is_finite()).then(|| (b - a) / a * 100.0)
}

/// Mean of the `Some` values (`None` when there are none).
pub fn mean_of(values: impl IntoIterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.into_iter().flatten().collect();
    mpquic_report::stats::mean(&v)
}

/// What a suite's report produced.
#[derive(Debug, Clone, Default)]
pub struct ReportOutput {
    /// The `index.html` file.
    pub index: PathBuf,
    /// The CSV tables written.
    pub tables: Vec<PathBuf>,
    /// The headline table (also printed by `mpquic lab run`).
    pub headline: Option<Table>,
    /// Further reports built from the same runs (the simulated-vs-real comparison when the
    /// directory holds both).
    pub also: Vec<ReportOutput>,
}

/// Collects sections, tables and figures of a report under one directory.
pub struct ReportBuilder {
    dir: PathBuf,
    about: Section,
    /// Sections in order.
    pub sections: Vec<Section>,
    /// CSV files written.
    pub tables: Vec<PathBuf>,
}

impl ReportBuilder {
    /// A builder writing into `dir` (created with `tables/` and `fig/`). The
    /// report will open with the "About this report" section (the papers by
    /// title, mode, transfer size, completed runs, version, date; see
    /// [`super::fidelity::about_section`]).
    pub fn new(
        dir: &Path,
        papers: &[super::fidelity::Paper],
        runs: &[(String, RunRecord)],
    ) -> anyhow::Result<ReportBuilder> {
        for sub in ["tables", "fig"] {
            std::fs::create_dir_all(dir.join(sub))
                .with_context(|| format!("creating {}", dir.join(sub).display()))?;
        }
        Ok(ReportBuilder {
            dir: dir.to_path_buf(),
            about: super::fidelity::about_section(papers, runs, dir),
            sections: Vec::new(),
            tables: Vec::new(),
        })
    }

    /// Writes `table` to `tables/STEM.csv` and adds it to `section`.
    pub fn table(&mut self, section: &mut Section, stem: &str, table: Table) -> anyhow::Result<()> {
        let path = self.dir.join("tables").join(format!("{stem}.csv"));
        table.write_csv(&path)?;
        self.tables.push(path);
        section.tables.push(table);
        Ok(())
    }

    /// Renders `chart` to `fig/STEM.{svg,png}` and adds it to `section`.
    pub fn figure(
        &mut self,
        section: &mut Section,
        chart: &dyn Render,
        stem: &str,
        caption: &str,
    ) -> anyhow::Result<()> {
        let fig = Figure::render(chart, &self.dir, &format!("fig/{stem}"), caption)
            .with_context(|| format!("rendering figure {stem}"))?;
        section.figures.push(fig);
        Ok(())
    }

    /// Writes `index.html` with the given title.
    pub fn finish(self, title: &str, headline: Option<Table>) -> anyhow::Result<ReportOutput> {
        let mut sections = vec![self.about];
        sections.extend(self.sections);
        let report = mpquic_report::HtmlReport {
            title: title.to_owned(),
            sections,
        };
        let index = report.write(&self.dir)?;
        Ok(ReportOutput {
            index,
            tables: self.tables,
            headline,
            also: Vec::new(),
        })
    }
}

/// A reference table from the papers (text cells, quoted verbatim from
/// `reference-figures.md`).
pub fn reference_table(title: &str, columns: &[&str], rows: &[&[&str]]) -> Table {
    let mut t = Table::new(title, columns.iter().map(|c| (*c).to_owned()).collect());
    for row in rows {
        t.rows.push(row.iter().map(|c| Cell::text(*c)).collect());
    }
    t
}

/// Configuration text for a report: seed, number of runs and each run's
/// scenario as one compact JSON line.
pub fn config_text(suite: &str, runs: &[(String, RunRecord)]) -> String {
    let seed = runs.first().map_or(0, |(_, r)| r.seed());
    let mut out = format!("suite = {suite}\nseed = {seed}\nruns = {}\n\n", runs.len());
    for (id, r) in runs {
        let mut s = r.scenario.clone();
        if let Some(obj) = s.as_object_mut() {
            obj.remove("record");
        }
        out.push_str(&format!("{id}: {s}\n"));
    }
    out
}

/// A suite's scenario, validated as a file would be; a bug in the suite if it is invalid.
fn checked(scenario: Scenario) -> Scenario {
    if let Err(e) = scenario.validate() {
        let name = scenario.name.as_deref().unwrap_or("?");
        panic!("suite built an invalid scenario {name}: {e}");
    }
    scenario
}

/// A multipath design named in a suite's tables (`single`, `spns`, `mpns`, `auto`).
pub fn multipath_named(name: &str) -> MultipathMode {
    name.parse()
        .unwrap_or_else(|e| panic!("a suite table names an unknown design: {e}"))
}

/// A congestion controller named in a suite's tables (`cubic`, `bbr`, ...).
pub fn cc_named(name: &str) -> CcAlgorithm {
    name.parse()
        .unwrap_or_else(|e| panic!("a suite table names an unknown controller: {e}"))
}

/// A download of `bytes` bytes.
pub fn download(bytes: u64) -> Workload {
    Workload::Download(ByteSize(bytes))
}

/// Transport and workload settings of a suite's run ([`RunSpec::build`]).
#[derive(Debug, Clone)]
pub struct RunSpec<'a> {
    /// Scenario name (the run ID).
    pub name: &'a str,
    /// Seed.
    pub seed: u64,
    /// Path specs (the `mpquic sim --path` grammar, [`PathSpec::parse`]).
    pub paths: &'a [String],
    /// The workload.
    pub workload: Workload,
    /// Multipath design.
    pub multipath: MultipathMode,
    /// Congestion controller.
    pub cc: CcAlgorithm,
    /// Default_Limit of ACK ranges.
    pub ack_range_limit: Option<usize>,
    /// Virtual time limit in seconds.
    pub time_limit_s: u64,
    /// Record time series.
    pub time_series: bool,
}

impl RunSpec<'_> {
    /// The scenario (min-RTT scheduler, no re-injection: the settings the suites reproducing
    /// papers were documented with; `hetero` and `mp-vs-sp` switch to the defaults).
    pub fn build(&self) -> Scenario {
        self.build_with_ack_fixes(false)
    }

    /// The scenario, optionally with the two receiver fixes of CCR 2022 (picoquic): ACKs on all
    /// paths and the lowest ranges first when the range count is capped.
    pub fn build_with_ack_fixes(&self, fixes: bool) -> Scenario {
        self.build_with(fixes, None)
    }

    /// The scenario with the receiver fixes (see [`RunSpec::build_with_ack_fixes`]) and the SPNS
    /// report's rules (`transport.spns_rules`; None: the default, all on).
    pub fn build_with(&self, fixes: bool, spns_rules: Option<SpnsRules>) -> Scenario {
        let paths = self
            .paths
            .iter()
            .map(|p| {
                PathSpec::parse(p)
                    .unwrap_or_else(|e| panic!("suite built an invalid path {p:?}: {e}"))
            })
            .collect();
        let mut s = Scenario::new(paths, self.workload.clone());
        s.name = Some(self.name.to_owned());
        s.seed = self.seed;
        s.time_limit = SimDuration(mpquic_netsim::time::secs(self.time_limit_s));
        let t = &mut s.transport;
        t.config.congestion = self.cc;
        t.config.multipath = self.multipath;
        t.config.scheduler = SchedulerKind::MinRtt;
        t.config.reinjection = ReinjectionMode::Off;
        t.ack_range_limit = self.ack_range_limit;
        if let Some(rules) = spns_rules {
            t.config.spns_rules = rules;
        }
        if fixes {
            let mut ack = AckConfig::default();
            ack.ack_on_all_paths = true;
            ack.range_order = RangeOrder::LowestFirst;
            t.config.ack = ack;
        }
        if self.time_series {
            s.record = RecordSettings {
                time_series: true,
                sample_interval: SimDuration(mpquic_netsim::time::ms(20)),
            };
        }
        checked(s)
    }
}

/// Step-CDF points of the ACK range histogram (x = bucket upper bound,
/// the unbounded bucket drawn at 128).
pub fn histogram_cdf(hist: &[u64; 8]) -> Vec<(f64, f64)> {
    let total: u64 = hist.iter().sum();
    if total == 0 {
        return Vec::new();
    }
    let bounds = [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0];
    let mut acc = 0;
    let mut pts = vec![(1.0, 0.0)];
    for (b, n) in bounds.iter().zip(hist) {
        acc += n;
        pts.push((*b, acc as f64 / total as f64));
    }
    pts
}

/// A CSV-friendly percent/number cell.
pub fn num(v: Option<f64>, decimals: usize) -> Cell {
    Cell::opt(v.filter(|x| x.is_finite()), decimals)
}
