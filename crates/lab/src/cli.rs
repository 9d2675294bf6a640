//! `mpquic sim`: run a scenario from a TOML file and/or command-line
//! options, print a summary table, optionally write the JSON result.
//!
//! ```text
//! mpquic sim [SCENARIO.toml] [--path SPEC ...] [--download 50MB] [--cc cubic]
//!            [--multipath mpns] [--scheduler min-rtt] [--ack-range-limit N]
//!            [--spns-rules report|naive|report,no-RULE]
//!            [--seed N] [--time-limit 60s] [--json FILE] [--real] [--qlog DIR]
//!            [--crypto real|sim] [--mtu-discovery BOOL] [--mtu-ceiling BYTES] [--race]
//!            [--migrate-at DURATION]
//! ```
//!
//! Options override the file's settings; `--path` (repeated, one per path)
//! replaces the file's paths. Without a file at least one `--path` is
//! needed, and the workload defaults to a 10 MB download.

use std::path::PathBuf;

use anyhow::Context;
use mpquic_netsim::PathSpec;
use mpquic_proto::cc::CcAlgorithm;
use mpquic_proto::scheduler::SchedulerKind;
use mpquic_proto::MultipathMode;

use crate::error::LabError;
use crate::scenario::{PathItem, Scenario, Workload};
use crate::units::{ByteSize, SimDuration};

/// Download size used when neither the file nor the options give a workload.
pub const DEFAULT_DOWNLOAD: ByteSize = ByteSize(10_000_000);

/// Arguments of `mpquic sim`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct SimArgs {
    /// Scenario file (TOML); the options below override its settings.
    #[arg(value_name = "SCENARIO.toml")]
    pub scenario: Option<PathBuf>,
    /// A path, e.g. "rate=20mbit,rtt=40ms,queue=1bdp"; repeat once per path
    /// (replaces the scenario's paths).
    #[arg(long = "path", value_name = "SPEC")]
    pub paths: Vec<String>,
    /// Bulk download of this many bytes (e.g. 50MB, 512KiB).
    #[arg(long, value_name = "SIZE", conflicts_with = "requests")]
    pub download: Option<ByteSize>,
    /// Parallel requests with these response sizes (comma-separated).
    #[arg(long, value_name = "SIZES", value_delimiter = ',')]
    pub requests: Vec<ByteSize>,
    /// Congestion controller (newreno, cubic, ...).
    #[arg(long, value_name = "ALGORITHM")]
    pub cc: Option<CcAlgorithm>,
    /// Multipath design: single, spns, mpns or auto.
    #[arg(long, value_name = "MODE")]
    pub multipath: Option<MultipathMode>,
    /// Path scheduler: min-rtt, round-robin, redundant, backup-aware, ecf, blest.
    #[arg(long, value_name = "NAME")]
    pub scheduler: Option<SchedulerKind>,
    /// Default_Limit of ranges per ACK frame.
    #[arg(long, value_name = "N")]
    pub ack_range_limit: Option<usize>,
    /// Take a path's RTT samples only from ACKs received on it (true/false); the same as
    /// `--spns-rules report,no-per-path-rtt-samples` when false.
    #[arg(long, value_name = "BOOL")]
    pub rtt_sample_on_receiving_path: Option<bool>,
    /// The SPNS report's rules: report (default), naive (all off), or a preset followed by
    /// ,RULE / ,no-RULE (rules: per-path-loss-detection, per-path-rtt-samples,
    /// ack-on-receiving-path, ack-from-path-largest, two-range-limits,
    /// ack-threshold-despite-gaps).
    #[arg(long, value_name = "RULES")]
    pub spns_rules: Option<mpquic_proto::SpnsRules>,
    /// Master seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Virtual time limit (e.g. 60s).
    #[arg(long, value_name = "DURATION")]
    pub time_limit: Option<SimDuration>,
    /// Write the JSON result to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Include time series (srtt vs true RTT, progress) in the JSON.
    #[arg(long)]
    pub time_series: bool,
    /// Do not print the summary table.
    #[arg(long)]
    pub quiet: bool,
    /// Run on real sockets instead: the tokio runtime's client and server over loopback
    /// (client interfaces 127.0.0.2, 127.0.0.3, ...) through the emulator, whose paths are the
    /// same link models in real time. The time limit is then wall-clock time.
    #[arg(long)]
    pub real: bool,
    /// Write the qlog of the client's and the server's connections into DIR
    /// (`<odcid>_<client|server>.sqlog`), stamped with virtual time: the same scenario and
    /// seed give the same files (docs/QLOG.md). Not with --real.
    #[arg(long, value_name = "DIR", conflicts_with = "real")]
    pub qlog: Option<PathBuf>,
    /// 1-RTT packet protection: real (the negotiated AEAD) or sim, the simulator's NOT secure
    /// stand-in (plaintext payload, checksum tag of the same size: same results, faster).
    /// Overrides the scenario's `transport.crypto`. Not with --real.
    #[arg(long, value_name = "MODE", conflicts_with = "real")]
    pub crypto: Option<crate::scenario::CryptoMode>,
    /// Path MTU discovery (RFC 9000 §14.3) on or off (true/false); overrides the scenario's
    /// `transport.mtu_discovery` (off by default in the lab).
    #[arg(long, value_name = "BOOL")]
    pub mtu_discovery: Option<bool>,
    /// Largest UDP payload probed by path MTU discovery (default 1452).
    #[arg(long, value_name = "BYTES")]
    pub mtu_ceiling: Option<u16>,
    /// Do not mark ECT(0) nor react to CE (RFC 9000 §13.4); sets `transport.ecn = false`.
    #[arg(long)]
    pub no_ecn: bool,
    /// Race the handshake over every path's interface and keep the first connection to
    /// complete it (sets `transport.race_paths = true`; docs/MULTIPATH.md). Not with --real.
    #[arg(long, conflicts_with = "real")]
    pub race: bool,
    /// At this time move the client's path 0 to its second interface (the second --path),
    /// client-initiated migration (RFC 9000 §9); sets `transport.migrate_at`. Not with --real.
    #[arg(long, value_name = "DURATION", conflicts_with_all = ["real", "race"])]
    pub migrate_at: Option<crate::units::SimDuration>,
    /// Certificate compression (RFC 8879) on or off (true/false); overrides the scenario's
    /// `transport.cert_compression` (off by default in the lab).
    #[arg(long, value_name = "BOOL")]
    pub cert_compression: Option<bool>,
    /// Subject alternative names the server's certificate carries besides "localhost" (a large
    /// certificate; `transport.cert_extra_names`, at most 1000).
    #[arg(long, value_name = "N")]
    pub cert_extra_names: Option<usize>,
}

/// Parses the `--path` options.
fn parse_paths(specs: &[String]) -> Result<Vec<PathItem>, LabError> {
    specs
        .iter()
        .enumerate()
        .map(|(i, s)| {
            PathSpec::parse(s)
                .map(PathItem)
                .map_err(|error| LabError::Spec {
                    key: format!("--path #{} `{s}`", i + 1),
                    error,
                })
        })
        .collect()
}

/// The scenario described by the arguments (file plus overrides), validated.
pub fn build_scenario(args: &SimArgs) -> Result<Scenario, LabError> {
    let paths = parse_paths(&args.paths)?;
    let mut scenario = match &args.scenario {
        Some(file) => Scenario::from_file(file)?,
        None => {
            if paths.is_empty() {
                return Err(LabError::invalid(
                    "--path",
                    "give a scenario file or at least one --path SPEC",
                ));
            }
            Scenario::new(Vec::new(), Workload::Download(DEFAULT_DOWNLOAD))
        }
    };
    if !paths.is_empty() {
        scenario.paths = paths;
    }
    if let Some(n) = args.download {
        scenario.workload = Workload::Download(n);
    }
    if !args.requests.is_empty() {
        // The file's protocol stays (`requests = { ..., protocol = "h3" }`).
        scenario.workload = Workload::Requests {
            sizes: args.requests.clone(),
            protocol: scenario.workload.protocol(),
        };
    }
    let t = &mut scenario.transport;
    if let Some(cc) = args.cc {
        t.config.congestion = cc;
    }
    if let Some(m) = args.multipath {
        t.config.multipath = m;
    }
    if let Some(s) = args.scheduler {
        t.config.scheduler = s;
    }
    if let Some(n) = args.ack_range_limit {
        t.ack_range_limit = Some(n);
    }
    if let Some(rules) = args.spns_rules {
        t.config.spns_rules = rules;
        t.rtt_sample_on_receiving_path = None;
    }
    if let Some(b) = args.rtt_sample_on_receiving_path {
        t.rtt_sample_on_receiving_path = Some(b);
    }
    if let Some(crypto) = args.crypto {
        t.crypto = crypto;
    }
    match args.mtu_discovery {
        // On: the file's discovery settings, if it has any.
        Some(true) => {
            t.config.mtu_discovery.get_or_insert_with(Default::default);
        }
        Some(false) => t.config.mtu_discovery = None,
        None => {}
    }
    if let Some(ceiling) = args.mtu_ceiling {
        t.mtu_ceiling = Some(ceiling);
    }
    if args.no_ecn {
        t.ecn = Some(false);
    }
    if args.race {
        t.race_paths = Some(true);
    }
    if let Some(at) = args.migrate_at {
        t.migrate_at = Some(at);
    }
    if let Some(on) = args.cert_compression {
        t.cert_compression = Some(on);
    }
    if let Some(n) = args.cert_extra_names {
        t.cert_extra_names = Some(n);
    }
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    if let Some(limit) = args.time_limit {
        scenario.time_limit = limit;
    }
    if args.time_series {
        scenario.record.time_series = true;
    }
    scenario.validate()?;
    Ok(scenario)
}

/// A simulated run that did not complete: `mpquic sim` exits non-zero.
#[derive(Debug, thiserror::Error)]
#[error("the run did not complete ({outcome}): {why}")]
pub struct RunFailed {
    /// `failed`, `time_limit`, `idle` or `stuck` (see [`crate::RunResult::outcome`]).
    pub outcome: String,
    /// Why.
    pub why: String,
}

/// Runs `mpquic sim`: builds the scenario, checks the output path, runs it, prints the summary
/// and writes the JSON result if asked. A run that did not complete is an error (after its
/// summary and JSON, which say why).
pub fn sim_command(args: SimArgs) -> anyhow::Result<()> {
    let scenario = build_scenario(&args)?;
    if let Some(path) = &args.json {
        crate::output::check_writable("--json", path)?;
    }
    let result = if args.real {
        crate::real::run(&scenario)?
    } else {
        let qlog = match &args.qlog {
            Some(dir) => Some(crate::runner::qlog_dir(dir)?),
            None => None,
        };
        crate::runner::run_with_qlog(&scenario, qlog)?
    };
    if !args.quiet {
        print!("{}", crate::summary::render(&result));
    }
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&result).context("serializing the result")?;
        if path.as_os_str() == "-" {
            println!("{json}");
        } else {
            std::fs::write(path, json + "\n")
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    if !result.completed {
        return Err(RunFailed {
            outcome: result.outcome.clone(),
            why: result
                .error
                .clone()
                .unwrap_or_else(|| "unknown reason".to_owned()),
        }
        .into());
    }
    Ok(())
}
