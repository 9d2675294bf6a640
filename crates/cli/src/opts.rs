//! Options shared by several subcommands.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use clap::Args;
use mpquic::ConfigError;
use mpquic::{CcAlgorithm, MultipathMode, TransportConfig};
use mpquic_lab::units::SimDuration;
use mpquic_lab::TransportSettings;

use crate::exit::UsageError;

/// Transport settings: multipath design and congestion controller.
#[derive(Debug, Clone, Args)]
pub struct TransportArgs {
    /// Multipath design to offer: single, spns, mpns or auto (both, MPNS preferred).
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = parse_multipath)]
    pub multipath: MultipathMode,
    /// Congestion controller of every path (newreno, cubic, bbr, lia, olia, ...: an unknown
    /// name lists what the core offers).
    #[arg(long, value_name = "ALGORITHM", default_value = "cubic", value_parser = parse_cc)]
    pub cc: CcAlgorithm,
    /// Scheduler of new data over paths: min-rtt, round-robin, redundant, backup-aware, ecf or
    /// blest.
    #[arg(long, value_name = "NAME", default_value = "ecf", value_parser = parse_scheduler)]
    pub scheduler: mpquic::SchedulerKind,
    /// Default_Limit of ranges per ACK frame (Alibaba report §2.4; 1 to 64).
    #[arg(long, value_name = "N")]
    pub ack_range_limit: Option<usize>,
    /// Write a qlog file per connection into DIR (`<odcid>_<client|server>.sqlog`, JSON-SEQ;
    /// docs/QLOG.md). Without the flag, the QLOGDIR environment variable names the directory.
    #[arg(long, value_name = "DIR")]
    pub qlog: Option<PathBuf>,
    /// Largest UDP payload path MTU discovery probes for on each path (RFC 9000 §14.3;
    /// default 1452). Each path starts at 1200 bytes.
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
    /// The transport configuration, with `idle_timeout` if given: the flags mapped onto the
    /// scenario files' `[transport]` schema ([`TransportSettings`], one schema for both) and
    /// checked by `TransportConfig::validate`. Fails with one line naming the flag when a value
    /// is out of range, or when the qlog directory cannot be created.
    pub fn transport(&self, idle_timeout: Option<Duration>) -> anyhow::Result<TransportConfig> {
        let mut t = self
            .settings(idle_timeout)
            .to_config()
            .map_err(|e| UsageError::new(flag_error(e)))?;
        if let Some(dir) = mpquic::qlog::dir_from_flag_or_env(self.qlog.clone()) {
            let config = mpquic::qlog::dir_config(&dir, mpquic::qlog::QlogClock::Real)
                .with_context(|| format!("creating the qlog directory {}", dir.display()))?;
            t.qlog = Some(config);
        }
        Ok(t)
    }

    /// The flags as a scenario's `[transport]` table. Unlike the lab, a real endpoint has
    /// path MTU discovery and ECN on unless the flags turn them off.
    fn settings(&self, idle_timeout: Option<Duration>) -> TransportSettings {
        TransportSettings {
            cc: self.cc,
            multipath: self.multipath,
            scheduler: self.scheduler,
            ack_range_limit: self.ack_range_limit,
            mtu_discovery: Some(!self.no_mtu_discovery),
            mtu_ceiling: self.mtu_ceiling,
            ecn: Some(!self.no_ecn),
            idle_timeout: idle_timeout
                .map(|d| SimDuration(d.as_nanos().min(u128::from(u64::MAX)) as u64)),
            ..TransportSettings::default()
        }
    }
}

/// A refused transport setting named by its flag (`--ack-range-limit: ...`).
fn flag_error(e: ConfigError) -> String {
    let flag = match e.field.as_str() {
        "idle_timeout" => "--timeout".to_owned(),
        field => format!("--{}", field.replace('_', "-")),
    };
    format!("{flag}: {}", e.problem)
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
