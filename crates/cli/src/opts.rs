//! Options shared by several subcommands.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;

use clap::Args;
use mpquic::{CcAlgorithm, MultipathMode, TransportConfig};

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
    /// Default_Limit of ranges per ACK frame (Alibaba report §2.4; never above 64).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
    pub ack_range_limit: Option<u16>,
    /// Write a qlog file per connection into DIR (`<odcid>_<client|server>.sqlog`, JSON-SEQ;
    /// docs/QLOG.md). Without the flag, the QLOGDIR environment variable names the directory.
    #[arg(long, value_name = "DIR")]
    pub qlog: Option<PathBuf>,
    /// Largest UDP payload path MTU discovery probes for on each path (RFC 9000 §14.3;
    /// default 1452). Each path starts at 1200 bytes.
    #[arg(long, value_name = "BYTES", value_parser = clap::value_parser!(u16).range(1200..=65527))]
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
    /// The transport configuration, with `idle_timeout` if given; fails when the qlog
    /// directory cannot be created.
    pub fn transport(&self, idle_timeout: Option<Duration>) -> anyhow::Result<TransportConfig> {
        let mut t = TransportConfig {
            multipath: self.multipath,
            congestion: self.cc,
            scheduler: self.scheduler,
            ecn: !self.no_ecn,
            ..TransportConfig::default()
        };
        if self.no_mtu_discovery {
            t.mtu_discovery = None;
        } else if let (Some(ceiling), Some(d)) = (self.mtu_ceiling, t.mtu_discovery.as_mut()) {
            d.ceiling = ceiling;
        }
        if let Some(limit) = self.ack_range_limit {
            t.ack.default_range_limit = usize::from(limit);
        }
        if let Some(idle) = idle_timeout {
            t.idle_timeout = idle;
        }
        if let Some(dir) = mpquic::qlog::dir_from_flag_or_env(self.qlog.clone()) {
            let config = mpquic::qlog::dir_config(&dir, mpquic::qlog::QlogClock::Real)
                .with_context(|| format!("creating the qlog directory {}", dir.display()))?;
            t.qlog = Some(config);
        }
        Ok(t)
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
