//! `mpquic lab`: list, run, report and merge experiment suites.
//!
//! ```text
//! mpquic lab list
//! mpquic lab run SUITE [--quick|--full] [--seed N] [--jobs N] [--out DIR] [--shard I/N] [--traces DIR]
//!                      [--real] [--qlog DIR] [--crypto real|sim]
//! mpquic lab report DIR
//! mpquic lab merge OUT DIR1 DIR2 ...
//! ```
//!
//! `run` executes the suite's scenarios on `--jobs` threads (default: all
//! cores), saves each result as `DIR/runs/RUN_ID.json`, records the suite
//! in `DIR/suite.json`, then builds the report from the JSON files only.
//! With `--shard I/N` only the runs whose index `% N == I` are executed
//! (for Slurm arrays or Kubernetes indexed Jobs); `merge` copies the shards'
//! run files into one directory and builds the report. `--traces DIR`
//! (spns-vs-mpns) replays Mahimahi files from DIR instead of the generated
//! Wi-Fi and LTE traces. `--real` runs the scenarios on real sockets through the emulator
//! ([`crate::real`]), one at a time, as `runs/ID.real.json` beside the simulated runs; a
//! directory holding both also gets `sim-vs-real/index.html`. See `docs/LAB.md`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::{bail, Context};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::scenario::Scenario;
use crate::suites::sim_vs_real::{self, real_id, REAL_SUFFIX};
use crate::suites::{self, ReportOutput, RunRecord, Suite, SuiteOptions};

/// Arguments of `mpquic lab`.
#[derive(Debug, Clone, clap::Args)]
pub struct LabArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: LabCommand,
}

/// `mpquic lab` subcommands.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum LabCommand {
    /// List the suites.
    List,
    /// Run a suite and build its report.
    Run(RunArgs),
    /// Rebuild the report of DIR from DIR/runs/*.json.
    Report {
        /// Output directory of an earlier `lab run`.
        dir: PathBuf,
    },
    /// Copy the runs of several shard directories into OUT and build the report.
    Merge {
        /// Merged output directory.
        out: PathBuf,
        /// Shard output directories.
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
    },
}

/// Arguments of `mpquic lab run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// Suite name (see `mpquic lab list`).
    pub suite: String,
    /// The quick variant (minutes on 2 cores).
    #[arg(long)]
    pub quick: bool,
    /// The full variant (the default; the paper's sizes and more trace
    /// pairs or points).
    #[arg(long, conflicts_with = "quick")]
    pub full: bool,
    /// Master seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Parallel runs (default: available cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// Output directory (default lab-out/SUITE).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run only runs with index % N == I, written `I/N`.
    #[arg(long, value_parser = parse_shard)]
    pub shard: Option<(usize, usize)>,
    /// spns-vs-mpns only: replay the Mahimahi traces in DIR (each as
    /// NAME.up and NAME.down) in the paper's roles: names containing "wifi"
    /// play the Wi-Fi path (else a generated Wi-Fi trace does), the others
    /// the cellular path, each from a seed-chosen start point.
    #[arg(long, value_name = "DIR")]
    pub traces: Option<PathBuf>,
    /// Run on real sockets: the tokio runtime's client and server over loopback through the
    /// emulator (one run at a time; runs are stored as ID.real.json next to the simulated
    /// ones, and sim-vs-real/index.html compares both).
    #[arg(long)]
    pub real: bool,
    /// Write the qlog files of every run into DIR/RUN_ID/ (`<odcid>_<client|server>.sqlog`,
    /// virtual time; docs/QLOG.md). Not with --real.
    #[arg(long, value_name = "DIR", conflicts_with = "real")]
    pub qlog: Option<PathBuf>,
    /// 1-RTT packet protection of every run: real (default) or sim, the simulator's NOT secure
    /// stand-in (plaintext payload, checksum tag of the same size: the same results, faster).
    /// Recorded in each run's JSON (`scenario.transport.crypto`). Not with --real.
    #[arg(long, value_name = "MODE", conflicts_with = "real")]
    pub crypto: Option<crate::scenario::CryptoMode>,
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (i, n) = s.split_once('/').ok_or("expected I/N, e.g. 0/4")?;
    let i: usize = i
        .trim()
        .parse()
        .map_err(|_| format!("bad shard index `{i}`"))?;
    let n: usize = n
        .trim()
        .parse()
        .map_err(|_| format!("bad shard count `{n}`"))?;
    if n == 0 || i >= n {
        return Err(format!("shard {i}/{n}: need N >= 1 and I < N"));
    }
    Ok((i, n))
}

/// What `suite.json` records about a run directory.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuiteMeta {
    /// Suite name.
    pub suite: String,
    /// Quick variant.
    pub quick: bool,
    /// Master seed.
    pub seed: u64,
    /// Trace directory given with `--traces`, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traces: Option<PathBuf>,
    /// UTC date the runs were made (`YYYY-MM-DD`), shown in the report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// `--crypto`, when given (each run's JSON records its own setting anyway).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crypto: Option<crate::scenario::CryptoMode>,
}

/// Options of [`run_suite`].
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Quick variant.
    pub quick: bool,
    /// Master seed.
    pub seed: u64,
    /// Worker threads.
    pub jobs: usize,
    /// Output directory.
    pub out: PathBuf,
    /// `(I, N)`: only runs with index % N == I.
    pub shard: Option<(usize, usize)>,
    /// Show a progress bar (only drawn on a terminal).
    pub progress: bool,
    /// Mahimahi trace directory replacing the generated traces
    /// (suites that support it, see [`Suite::runs_with`]).
    pub traces: Option<PathBuf>,
    /// Run on real sockets through the emulator instead of in the simulator.
    pub real: bool,
    /// Write each run's qlog files into `DIR/RUN_ID/` (simulated runs only).
    pub qlog: Option<PathBuf>,
    /// Override every scenario's `transport.crypto` (simulated runs only).
    pub crypto: Option<crate::scenario::CryptoMode>,
}

/// Entry point of `mpquic lab`.
pub fn lab_command(args: LabArgs) -> anyhow::Result<()> {
    match args.command {
        LabCommand::List => {
            for s in suites::all() {
                println!("{:<18} {}", s.name(), s.description());
            }
            Ok(())
        }
        LabCommand::Run(a) => {
            let suite = suites::find(&a.suite)
                .with_context(|| format!("unknown suite `{}` (see `mpquic lab list`)", a.suite))?;
            let opts = RunOptions {
                quick: a.quick,
                seed: a.seed,
                jobs: a.jobs.unwrap_or_else(default_jobs).max(1),
                out: a.out.unwrap_or_else(|| Path::new("lab-out").join(&a.suite)),
                shard: a.shard,
                progress: true,
                traces: a.traces,
                real: a.real,
                qlog: a.qlog,
                crypto: a.crypto,
            };
            let start = Instant::now();
            let out = run_suite(suite.as_ref(), &opts)?;
            print_output(&out);
            println!("total wall time: {:.1} s", start.elapsed().as_secs_f64());
            Ok(())
        }
        LabCommand::Report { dir } => {
            print_output(&report_dir(&dir)?);
            Ok(())
        }
        LabCommand::Merge { out, dirs } => {
            print_output(&merge(&out, &dirs)?);
            Ok(())
        }
    }
}

fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

fn print_output(out: &ReportOutput) {
    if let Some(t) = &out.headline {
        println!("{}\n{}", t.title, t.to_csv());
    }
    println!("report: {}", out.index.display());
    out.also.iter().for_each(print_output);
}

/// Runs a suite's scenarios (those of the shard) in parallel, writes the
/// run files and `suite.json`, and builds the report from the run files.
pub fn run_suite(suite: &dyn Suite, opts: &RunOptions) -> anyhow::Result<ReportOutput> {
    let all = suite.runs_with(&SuiteOptions {
        quick: opts.quick,
        seed: opts.seed,
        traces: opts.traces.clone(),
    })?;
    let runs_dir = opts.out.join("runs");
    std::fs::create_dir_all(&runs_dir)
        .with_context(|| format!("creating {}", runs_dir.display()))?;
    let meta = SuiteMeta {
        suite: suite.name().to_owned(),
        quick: opts.quick,
        seed: opts.seed,
        traces: opts.traces.clone(),
        date: Some(crate::suites::fidelity::utc_date()),
        crypto: opts.crypto,
    };
    std::fs::write(
        opts.out.join("suite.json"),
        serde_json::to_string_pretty(&meta)?,
    )?;
    let selected: Vec<(String, Scenario)> = all
        .into_iter()
        .enumerate()
        .filter(|(i, _)| opts.shard.is_none_or(|(k, n)| i % n == k))
        .map(|(_, (id, mut s))| {
            if let Some(crypto) = opts.crypto {
                s.transport.crypto = crypto;
            }
            (if opts.real { real_id(&id) } else { id }, s)
        })
        .collect();
    execute(&selected, opts, &runs_dir)?;
    report_dir(&opts.out)
}

/// Executes the runs on a pool of `--jobs` worker threads; each finished run is written to
/// `runs_dir/ID.json` as soon as it ends. A run that fails is reported and skipped; a result
/// that cannot be written stops the suite.
fn execute(runs: &[(String, Scenario)], opts: &RunOptions, runs_dir: &Path) -> anyhow::Result<()> {
    let bar = progress_bar(runs.len() as u64, opts.progress);
    // Real runs share the machine's clock and CPU with their own timing: one at a time.
    let jobs = if opts.real { 1 } else { opts.jobs };
    let runner = |id: &str, scenario: &Scenario| -> anyhow::Result<crate::RunResult> {
        if opts.real {
            return Ok(crate::real::run(scenario)?);
        }
        let qlog = match &opts.qlog {
            Some(dir) => Some(crate::runner::qlog_dir(&dir.join(id))?),
            None => None,
        };
        Ok(crate::runner::run_with_qlog(scenario, qlog)?)
    };
    let run_one = |(id, scenario): &(String, Scenario)| -> anyhow::Result<Option<String>> {
        let result = runner(id, scenario)
            .map_err(|e| e.to_string())
            .and_then(|r| serde_json::to_string_pretty(&r).map_err(|e| e.to_string()));
        bar.inc(1);
        match result {
            Ok(json) => {
                let path = runs_dir.join(format!("{id}.json"));
                std::fs::write(&path, json)
                    .with_context(|| format!("writing {}", path.display()))?;
                Ok(None)
            }
            Err(e) => Ok(Some(format!("{id}: {e}"))),
        }
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .context("starting the worker threads")?;
    let failures = pool.install(|| {
        runs.par_iter()
            .map(run_one)
            .filter_map(Result::transpose)
            .collect::<anyhow::Result<Vec<String>>>()
    })?;
    bar.finish_and_clear();
    for f in &failures {
        eprintln!("warning: run failed: {f}");
    }
    Ok(())
}

fn progress_bar(len: u64, enabled: bool) -> indicatif::ProgressBar {
    if !enabled || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{elapsed_precise} [{bar:40}] {pos}/{len} runs, ETA {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Reads `DIR/runs/*.json`, sorted by run ID.
pub fn load_runs(dir: &Path) -> anyhow::Result<Vec<(String, RunRecord)>> {
    let runs_dir = dir.join("runs");
    let mut runs = Vec::new();
    for entry in
        std::fs::read_dir(&runs_dir).with_context(|| format!("reading {}", runs_dir.display()))?
    {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Some(id) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        let rec =
            RunRecord::from_json(&text).with_context(|| format!("parsing {}", path.display()))?;
        runs.push((id.to_owned(), rec));
    }
    runs.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(runs)
}

fn read_meta(dir: &Path) -> anyhow::Result<SuiteMeta> {
    let path = dir.join("suite.json");
    let text = std::fs::read_to_string(&path).with_context(|| {
        format!(
            "reading {} (is this a lab output directory?)",
            path.display()
        )
    })?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Rebuilds the report of a lab output directory from its run files.
pub fn report_dir(dir: &Path) -> anyhow::Result<ReportOutput> {
    let meta = read_meta(dir)?;
    let suite = suites::find(&meta.suite)
        .with_context(|| format!("{}: unknown suite `{}`", dir.display(), meta.suite))?;
    let runs = load_runs(dir)?;
    if runs.is_empty() {
        bail!("{}: no run files in runs/", dir.display());
    }
    let (real, sim): (Vec<_>, Vec<_>) = runs
        .into_iter()
        .partition(|(id, _)| id.ends_with(REAL_SUFFIX));
    if sim.is_empty() {
        // Only real runs: the suite's own report, from them.
        let as_sim: Vec<_> = real
            .into_iter()
            .map(|(id, r)| (id.trim_end_matches(REAL_SUFFIX).to_owned(), r))
            .collect();
        return suite.report(&as_sim, dir);
    }
    let mut out = suite.report(&sim, dir)?;
    if !real.is_empty() {
        out.also.push(sim_vs_real::comparison(&sim, &real, dir)?);
    }
    Ok(out)
}

/// Copies the run files of `dirs` into `out/runs` and builds the report.
pub fn merge(out: &Path, dirs: &[PathBuf]) -> anyhow::Result<ReportOutput> {
    let first = read_meta(&dirs[0])?;
    let runs_out = out.join("runs");
    std::fs::create_dir_all(&runs_out)?;
    for dir in dirs {
        let meta = read_meta(dir)?;
        if meta.suite != first.suite
            || meta.seed != first.seed
            || meta.quick != first.quick
            || meta.traces != first.traces
        {
            bail!(
                "{}: suite/seed/quick/traces differ from {}",
                dir.display(),
                dirs[0].display()
            );
        }
        for entry in std::fs::read_dir(dir.join("runs"))? {
            let path = entry?.path();
            if let Some(name) = path.file_name() {
                std::fs::copy(&path, runs_out.join(name))
                    .with_context(|| format!("copying {}", path.display()))?;
            }
        }
    }
    std::fs::write(
        out.join("suite.json"),
        serde_json::to_string_pretty(&first)?,
    )?;
    report_dir(out)
}
