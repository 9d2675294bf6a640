//! Options shared by several subcommands.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use clap::Args;
use mpquic::ConfigError;
use mpquic::{CcAlgorithm, MultipathMode, TransportConfig};

use crate::exit::UsageError;

/// Transport settings: a `--transport` file and the flags that override it. Every flag sets a
/// field of `TransportConfig` (through its setter), and `TransportConfig::validate` checks the
/// result, as for a scenario file or a program using the library.
#[derive(Debug, Clone, Args)]
pub struct TransportArgs {
    /// Transport settings from a TOML file: the keys of a scenario's `[transport]` table (the
    /// core's schema: `cc = "bbr"`, `idle_timeout = "10s"`, `[ack]`, `[streams]`, ...; see
    /// docs/LAB.md). The flags below override what it sets.
    #[arg(long = "transport", value_name = "FILE")]
    pub transport_file: Option<PathBuf>,
    /// Multipath design to offer: single, spns, mpns or auto (both, MPNS preferred; the
    /// default).
    #[arg(long, value_name = "MODE", value_parser = parse_multipath)]
    pub multipath: Option<MultipathMode>,
    /// Congestion controller of every path (newreno, cubic (the default), bbr, lia, olia, ...:
    /// an unknown name lists what the core offers).
    #[arg(long, value_name = "ALGORITHM", value_parser = parse_cc)]
    pub cc: Option<CcAlgorithm>,
    /// Scheduler of new data over paths: min-rtt, round-robin, redundant, backup-aware, ecf
    /// (the default) or blest.
    #[arg(long, value_name = "NAME", value_parser = parse_scheduler)]
    pub scheduler: Option<mpquic::SchedulerKind>,
    /// Default_Limit of ranges per ACK frame (Alibaba report §2.4; 1 to 64).
    #[arg(long, value_name = "N")]
    pub ack_range_limit: Option<usize>,
    /// Write a qlog file per connection into DIR (`<odcid>_<client|server>.sqlog`, JSON-SEQ;
    /// docs/QLOG.md). Without the flag, the QLOGDIR environment variable names the directory.
    #[arg(long, value_name = "DIR")]
    pub qlog: Option<PathBuf>,
    /// Largest UDP payload path MTU discovery probes for on each path (RFC 9000 §14.3;
    /// default 1452, and 16384 on a path between two addresses of this host such as
    /// loopback, once 1452 works). Each path starts at 1200 bytes.
    #[arg(long, value_name = "BYTES")]
    pub mtu_ceiling: Option<u16>,
    /// No path MTU discovery: every packet is 1350 bytes of UDP payload.
    #[arg(long, conflicts_with = "mtu_ceiling")]
    pub no_mtu_discovery: bool,
    /// Do not mark packets ECT(0) nor react to CE marks (RFC 9000 §13.4; on by default).
    /// Received marks are still counted and reported to the peer.
    #[arg(long)]
    pub no_ecn: bool,
}

impl TransportArgs {
    /// The transport configuration: the `--transport` file (or the defaults), the flags and
    /// `idle_timeout` if given, checked by `TransportConfig::validate`. Fails with one line
    /// naming the flag (or the file and its key) when a value is out of range or the file
    /// cannot be read, or when the qlog directory cannot be created.
    pub fn transport(&self, idle_timeout: Option<Duration>) -> anyhow::Result<TransportConfig> {
        let base = match &self.transport_file {
            Some(path) => mpquic_lab::scenario::read_transport_file(path)
                .map_err(|e| UsageError::new(format!("--transport {e}")))?,
            None => TransportConfig::default(),
        };
        let mut t = self.apply(base, idle_timeout);
        t.validate()
            .map_err(|e| UsageError::new(self.flag_error(e, idle_timeout.is_some())))?;
        if let Some(dir) = mpquic::qlog::dir_from_flag_or_env(self.qlog.clone()) {
            let config = mpquic::qlog::dir_config(&dir, mpquic::qlog::QlogClock::Real)
                .with_context(|| format!("creating the qlog directory {}", dir.display()))?;
            t.qlog = Some(config);
        }
        Ok(t)
    }

    /// `c` with the settings of the flags that were given.
    fn apply(&self, mut c: TransportConfig, idle_timeout: Option<Duration>) -> TransportConfig {
        if let Some(mode) = self.multipath {
            c = c.multipath(mode);
        }
        if let Some(cc) = self.cc {
            c = c.congestion(cc);
        }
        if let Some(kind) = self.scheduler {
            c = c.scheduler(kind);
        }
        if let Some(limit) = self.ack_range_limit {
            c.ack.default_range_limit = limit;
        }
        if self.no_mtu_discovery {
            c = c.mtu_discovery(None);
        }
        if let Some(ceiling) = self.mtu_ceiling {
            let mtud = c.mtu_discovery.get_or_insert_with(Default::default);
            mtud.ceiling = ceiling;
            // The largest on every path, same-host ones included.
            mtud.same_host_ceiling = mtud.same_host_ceiling.min(ceiling);
        }
        if self.no_ecn {
            c = c.ecn(false);
        }
        if let Some(timeout) = idle_timeout {
            c = c.idle_timeout(timeout);
        }
        c
    }

    /// A refused transport setting named by the flag that set it (`--ack-range-limit: ...`),
    /// else by the file's key (`--transport FILE: streams.max_data: ...`).
    fn flag_error(&self, e: ConfigError, timeout_flag: bool) -> String {
        let flag = match e.field.as_str() {
            "idle_timeout" if timeout_flag => Some("--timeout"),
            "ack.default_range_limit" if self.ack_range_limit.is_some() => {
                Some("--ack-range-limit")
            }
            "mtu_discovery.ceiling" if self.mtu_ceiling.is_some() => Some("--mtu-ceiling"),
            _ => None,
        };
        match (flag, &self.transport_file) {
            (Some(flag), _) => format!("{flag}: {}", e.problem),
            (None, Some(path)) => format!("--transport {}: {e}", path.display()),
            (None, None) => e.to_string(),
        }
    }
}

fn parse_multipath(s: &str) -> Result<MultipathMode, String> {
    s.parse()
}

fn parse_cc(s: &str) -> Result<CcAlgorithm, String> {
    s.parse()
}

fn parse_scheduler(s: &str) -> Result<mpquic::SchedulerKind, String> {
    s.parse()
}

/// Name of a multipath mode as given on the command line.
pub fn multipath_name(mode: MultipathMode) -> &'static str {
    match mode {
        MultipathMode::Single => "single",
        MultipathMode::Spns => "spns",
        MultipathMode::Mpns => "mpns",
        MultipathMode::Auto => "auto",
    }
}

/// Name of a congestion controller as given on the command line.
pub fn cc_name(cc: CcAlgorithm) -> &'static str {
    CcAlgorithm::ALL
        .iter()
        .find(|(_, a)| *a == cc)
        .map_or("?", |(n, _)| n)
}

/// The application protocol a client speaks (its ALPN token).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AppProtocol {
    /// HTTP/3 (RFC 9114, ALPN "h3").
    #[value(name = "h3")]
    H3,
    /// HTTP/0.9 over QUIC as used by the QUIC interop runner (ALPN "hq-interop").
    #[value(name = "hq-interop")]
    HqInterop,
}

impl AppProtocol {
    /// The ALPN token.
    pub fn alpn(self) -> &'static [u8] {
        match self {
            AppProtocol::H3 => mpquic_h3::ALPN,
            AppProtocol::HqInterop => mpquic::hq::ALPN,
        }
    }

    /// The name given on the command line (and the ALPN token as text).
    pub fn name(self) -> &'static str {
        match self {
            AppProtocol::H3 => "h3",
            AppProtocol::HqInterop => "hq-interop",
        }
    }
}
