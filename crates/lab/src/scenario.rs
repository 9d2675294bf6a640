//! The scenario model: network paths, workload and transport settings of
//! one simulated run, read from TOML.
//!
//! ```toml
//! seed = 7
//! time_limit = "60s"
//! paths = [
//!     "rate=20mbit,rtt=20ms,queue=1bdp",
//!     { rate = "15mbit", rtt = "40ms", queue = "1bdp" },
//! ]
//!
//! [workload]
//! download = "20MB"            # or: requests = { sizes = ["10KB", "1MB"] }
//!                              # or: requests = { sizes = [...], connections = 4 }
//!                              #     (successive short connections, see Workload)
//!                              # either with protocol = "h3": the requests over HTTP/3
//!                              #     (crate::h3sim; default "custom")
//!                              # or: video = { bitrate_kbps = 8000, chunks = 30 } (crate::video)
//!
//! [transport]                  # mpquic_proto::TransportConfig's schema: any of its keys
//! cc = "cubic"                 # CcAlgorithm::from_str (also `congestion`)
//! multipath = "mpns"           # single | spns | mpns | auto
//! scheduler = "min-rtt"        # SchedulerKind::from_str
//! ack_range_limit = 32         # -> ack.default_range_limit (older name, kept)
//! spns_rules = "report"        # or "naive", "report,no-two-range-limits", or a table
//!                              # { per_path_loss_detection = false, ... } (SpnsRules)
//! initial_rtt_ms = 333         # or initial_rtt = "333ms"
//! pacing = true
//! qoe_feedback = true          # XLINK QoE feedback extension
//! reinjection = { mode = "qoe", lower_ms = 500, upper_ms = 2000 }   # tail (default) | off
//!                              # | always | qoe
//! idle_timeout = "30s"
//! mtu_discovery = true         # off by default in the lab; or a table { ceiling = 1500 }
//! crypto = "sim"               # the lab's own keys: crypto, zero_rtt, ecn, race_paths,
//!                              # migrate_at, cert_compression, cert_extra_names
//! race_paths = true            # race the handshake over every interface (crate::race)
//! migrate_at = "500ms"         # the client moves path 0 to its second interface (RFC 9000 §9)
//! cert_compression = true      # RFC 8879 certificate compression (off by default in the lab)
//! cert_extra_names = 150       # a large certificate: 150 more subject alternative names
//! [transport.ack]              # any mpquic_proto::AckConfig field
//! ack_eliciting_threshold = 2
//! [transport.streams]          # any mpquic_proto::StreamsConfig field
//! max_streams_bidi = 100
//!
//! [record]
//! time_series = false          # include srtt/true-RTT and progress series in the result
//! sample_interval = "10ms"     # srtt sampling period
//! ```
//!
//! Each entry of `paths` is a [`PathSpec`] written as a string or a table
//! (see [`mpquic_netsim::spec`]); `up` is the client-to-server direction,
//! `down` the server-to-client (download) direction. Path `i` connects the
//! client's interface `i` to the server. `shared_bottleneck` (optional) is
//! a path spec of which only the `down` direction is used: a link every
//! path's download traffic crosses before its own `down` link.
//!
//! Unknown keys, bad units and unreadable traces are errors naming the key.

use std::fmt;
use std::path::{Path, PathBuf};

use mpquic_netsim::{LinkConfig, PathSpec, ResolvedPath};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

use crate::error::LabError;
use crate::h3sim::Protocol;
use crate::units::{ByteSize, SimDuration};
use crate::video::VideoSpec;

mod checks;
mod transport;

pub use mpquic_proto::MAX_ACK_RANGES;
pub use transport::{read_transport_file, CryptoMode, TransportSettings};

/// Most paths a scenario may have (path IDs 0..=7 with the default
/// `max_path_id` of 7).
pub const MAX_PATHS: usize = 8;

/// Most requests in a [`Workload::Requests`] workload.
pub const MAX_REQUESTS: usize = 10_000;

/// Most successive connections of a [`Workload::ShortConnections`]
/// workload (the server keeps at most 64 connections that have not
/// drained; a closed one drains within a few RTTs).
pub const MAX_CONNECTIONS: usize = 32;

/// One path specification, written in a scenario as a spec string
/// (`"rate=20mbit,rtt=40ms"`) or as a table with the same keys. Serialized
/// as the canonical string.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PathItem(
    /// The parsed path.
    pub PathSpec,
);

impl Serialize for PathItem {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0.to_string())
    }
}

struct PathItemVisitor;

impl<'de> de::Visitor<'de> for PathItemVisitor {
    type Value = PathItem;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a path spec string such as \"rate=20mbit,rtt=40ms\" or a table of spec keys")
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<PathItem, E> {
        PathSpec::parse(v).map(PathItem).map_err(E::custom)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<PathItem, A::Error> {
        PathSpec::deserialize(de::value::MapAccessDeserializer::new(map)).map(PathItem)
    }
}

impl<'de> Deserialize<'de> for PathItem {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(PathItemVisitor)
    }
}

/// What the application does over the connection. In TOML, a table with
/// exactly one of `download = SIZE` or `requests = { sizes = [SIZE, ...] }`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", try_from = "WorkloadToml")]
pub enum Workload {
    /// Bulk download of this many bytes over one bidirectional stream: the
    /// client sends a small request, the server answers with the bytes and
    /// FIN. Complete when the client has read the FIN.
    Download(ByteSize),
    /// Parallel requests, all issued as soon as the connection is
    /// established, one bidirectional stream each; `sizes` are the
    /// response sizes.
    Requests {
        /// Response size of each request.
        sizes: Vec<ByteSize>,
        /// The application protocol (`custom` unless `protocol = "h3"`).
        #[serde(default, skip_serializing_if = "Protocol::is_custom")]
        protocol: Protocol,
    },
    /// Successive short connections (the SPNS report's A/B test measured
    /// short connections, seed 000): `sizes` are split in order into
    /// `connections` batches of near-equal count (batch `k` is
    /// `sizes[k*n/c .. (k+1)*n/c]`); batch `k` is requested in parallel
    /// over connection `k`, which the client closes once its last response
    /// was read, and only then opens connection `k + 1`. Written in TOML
    /// as `requests = { sizes = [...], connections = N }` with `N >= 2`.
    #[serde(rename = "requests")]
    ShortConnections {
        /// Response size of each request.
        sizes: Vec<ByteSize>,
        /// Number of successive connections.
        connections: usize,
        /// The application protocol (`custom` unless `protocol = "h3"`).
        #[serde(default, skip_serializing_if = "Protocol::is_custom")]
        protocol: Protocol,
    },
    /// Chunked video streaming (XLINK): the client is a player fetching
    /// chunks one stream each while its buffer is below a target; see
    /// [`crate::video`].
    Video(VideoSpec),
}

/// The parallel-requests workload as written in TOML.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct RequestsToml {
    sizes: Vec<ByteSize>,
    connections: Option<usize>,
    #[serde(default)]
    protocol: Protocol,
}

/// The `[workload]` table as written (gives precise errors).
#[derive(Debug, Clone, Default)]
struct WorkloadToml {
    download: Option<ByteSize>,
    requests: Option<RequestsToml>,
    video: Option<VideoSpec>,
}

/// Keys named in "unknown field" errors (`video` is accepted too, but the
/// classic message is kept).
const WORKLOAD_KEYS: &[&str] = &["download", "requests"];

struct WorkloadTomlVisitor;

impl<'de> de::Visitor<'de> for WorkloadTomlVisitor {
    type Value = WorkloadToml;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a workload table")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<WorkloadToml, A::Error> {
        let mut w = WorkloadToml::default();
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "download" if w.download.is_none() => w.download = Some(map.next_value()?),
                "requests" if w.requests.is_none() => w.requests = Some(map.next_value()?),
                "video" if w.video.is_none() => w.video = Some(map.next_value()?),
                "download" | "requests" | "video" => {
                    return Err(de::Error::custom(format!("duplicate field `{key}`")))
                }
                other => return Err(de::Error::unknown_field(other, WORKLOAD_KEYS)),
            }
        }
        Ok(w)
    }
}

impl<'de> Deserialize<'de> for WorkloadToml {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(WorkloadTomlVisitor)
    }
}

impl TryFrom<WorkloadToml> for Workload {
    type Error = String;

    fn try_from(w: WorkloadToml) -> Result<Self, String> {
        match (w.download, w.requests, w.video) {
            (Some(n), None, None) => Ok(Workload::Download(n)),
            (None, Some(r), None) => Ok(match r.connections {
                None | Some(1) => Workload::Requests {
                    sizes: r.sizes,
                    protocol: r.protocol,
                },
                Some(connections) => Workload::ShortConnections {
                    sizes: r.sizes,
                    connections,
                    protocol: r.protocol,
                },
            }),
            (None, None, Some(v)) => Ok(Workload::Video(v)),
            _ => Err(
                "the workload needs exactly one of `download` or `requests` (or `video`)"
                    .to_owned(),
            ),
        }
    }
}

impl Workload {
    /// Response sizes in bytes, one per stream.
    pub fn response_sizes(&self) -> Vec<u64> {
        match self {
            Workload::Download(n) => vec![n.bytes()],
            Workload::Requests { sizes, .. } | Workload::ShortConnections { sizes, .. } => {
                sizes.iter().map(|s| s.bytes()).collect()
            }
            Workload::Video(v) => vec![v.chunk_bytes(); v.chunks as usize],
        }
    }

    /// The application protocol of the requests (`custom` for downloads and video).
    pub fn protocol(&self) -> Protocol {
        match self {
            Workload::Requests { protocol, .. } | Workload::ShortConnections { protocol, .. } => {
                *protocol
            }
            Workload::Download(_) | Workload::Video(_) => Protocol::Custom,
        }
    }

    /// For successive connections, the end (exclusive request index) of
    /// every batch but the last; empty for one connection.
    pub fn batch_ends(&self) -> Vec<usize> {
        match self {
            Workload::ShortConnections {
                sizes, connections, ..
            } if *connections > 1 => {
                let n = sizes.len();
                (1..*connections).map(|k| k * n / connections).collect()
            }
            _ => Vec::new(),
        }
    }

    /// Total bytes the client downloads.
    pub fn total_bytes(&self) -> u64 {
        self.response_sizes().iter().sum()
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Workload::Download(n) => return write!(f, "download {n}"),
            Workload::Requests { sizes, .. } => write!(
                f,
                "{} requests, {} in total",
                sizes.len(),
                ByteSize(self.total_bytes())
            )?,
            Workload::ShortConnections {
                sizes, connections, ..
            } => write!(
                f,
                "{} requests over {connections} successive connections, {} in total",
                sizes.len(),
                ByteSize(self.total_bytes())
            )?,
            Workload::Video(v) => return write!(f, "{v}"),
        }
        if self.protocol() == Protocol::H3 {
            f.write_str(" over HTTP/3")?;
        }
        Ok(())
    }
}

/// What the runner records besides the summary figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecordSettings {
    /// Include time series (srtt vs true RTT per path, receive progress).
    pub time_series: bool,
    /// Period of srtt / progress sampling (default 10 ms).
    pub sample_interval: SimDuration,
}

impl Default for RecordSettings {
    fn default() -> Self {
        Self {
            time_series: false,
            sample_interval: SimDuration(mpquic_netsim::time::ms(10)),
        }
    }
}

fn default_time_limit() -> SimDuration {
    SimDuration(mpquic_netsim::time::secs(60))
}

/// A complete simulated experiment.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Optional label.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Master seed of the simulator (all randomness derives from it).
    #[serde(default)]
    pub seed: u64,
    /// Virtual time after which the run stops (default 60 s).
    #[serde(default = "default_time_limit")]
    pub time_limit: SimDuration,
    /// The paths; path `i` starts at the client's interface `i`.
    pub paths: Vec<PathItem>,
    /// Optional link shared by all paths in the download direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_bottleneck: Option<PathItem>,
    /// The application workload.
    pub workload: Workload,
    /// Transport settings of both endpoints.
    #[serde(default)]
    pub transport: TransportSettings,
    /// Recording options.
    #[serde(default)]
    pub record: RecordSettings,
    /// Directory relative trace paths are resolved against (the scenario
    /// file's directory; the current directory when `None`).
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
}

/// The links of a scenario, with traces loaded.
#[derive(Debug, Clone)]
pub struct Network {
    /// Both directions of each path.
    pub paths: Vec<ResolvedPath>,
    /// The shared download bottleneck, if any.
    pub bottleneck: Option<LinkConfig>,
}

impl Scenario {
    /// A scenario with the given paths and workload and default settings.
    pub fn new(paths: Vec<PathSpec>, workload: Workload) -> Self {
        Self {
            name: None,
            seed: 0,
            time_limit: default_time_limit(),
            paths: paths.into_iter().map(PathItem).collect(),
            shared_bottleneck: None,
            workload,
            transport: TransportSettings::default(),
            record: RecordSettings::default(),
            base_dir: None,
        }
    }

    /// Parses and validates a scenario from TOML text; `origin` names the
    /// source in messages. Relative trace paths resolve against the
    /// current directory.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Self, LabError> {
        let scenario: Scenario =
            toml::from_str(text).map_err(|e| checks::toml_error(origin, text, &e))?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Reads, parses and validates a scenario file. Relative trace paths
    /// resolve against the file's directory.
    pub fn from_file(path: &Path) -> Result<Self, LabError> {
        let text = std::fs::read_to_string(path).map_err(|error| LabError::Io {
            path: path.to_owned(),
            error,
        })?;
        let mut scenario: Scenario = toml::from_str(&text)
            .map_err(|e| checks::toml_error(&path.display().to_string(), &text, &e))?;
        scenario.base_dir = path.parent().map(Path::to_owned);
        scenario.validate()?;
        Ok(scenario)
    }

    /// Serializes the scenario back to TOML.
    pub fn to_toml(&self) -> Result<String, LabError> {
        toml::to_string(self).map_err(|e| LabError::invalid("scenario", e.to_string()))
    }

    /// Checks ranges and consistency and loads every trace once.
    pub fn validate(&self) -> Result<(), LabError> {
        if self.paths.is_empty() {
            return Err(LabError::invalid("paths", "at least one path is required"));
        }
        if self.paths.len() > MAX_PATHS {
            return Err(LabError::invalid(
                "paths",
                format!(
                    "{} paths given; at most {MAX_PATHS} are supported",
                    self.paths.len()
                ),
            ));
        }
        if self.time_limit.nanos() == 0 {
            return Err(LabError::invalid("time_limit", "must be positive"));
        }
        if self.transport.race_paths() && self.workload.protocol() == Protocol::H3 {
            return Err(LabError::invalid(
                "transport.race_paths",
                "handshake racing runs the custom request protocol only, not HTTP/3",
            ));
        }
        if self.transport.migrate_at.is_some() && self.transport.race_paths() {
            return Err(LabError::invalid(
                "transport.migrate_at",
                "not with race_paths: the raced handshake picks path 0's interface",
            ));
        }
        if self.transport.migrate_at.is_some()
            && self.transport.config.multipath != mpquic_proto::MultipathMode::Single
        {
            return Err(LabError::invalid(
                "transport.migrate_at",
                "moves the one path of a connection without multipath: set multipath = \"single\" \
                 (with multipath the second interface carries a path of its own)",
            ));
        }
        if self.transport.migrate_at.is_some() && self.paths.len() < 2 {
            return Err(LabError::invalid(
                "transport.migrate_at",
                "the client migrates to its second interface: give two paths or more",
            ));
        }
        if self.record.sample_interval.nanos() < mpquic_netsim::time::MICROSECOND {
            return Err(LabError::invalid(
                "record.sample_interval",
                "must be at least 1us",
            ));
        }
        if let Workload::ShortConnections {
            sizes, connections, ..
        } = &self.workload
        {
            let most = sizes.len().min(MAX_CONNECTIONS);
            if *connections < 2 || *connections > most {
                return Err(LabError::invalid(
                    "workload.requests.connections",
                    format!(
                        "{connections} connections for {} requests; expected 2..={most} \
                         (at most one connection per request and {MAX_CONNECTIONS} in all)",
                        sizes.len()
                    ),
                ));
            }
        }
        if let Workload::Requests { sizes, .. } | Workload::ShortConnections { sizes, .. } =
            &self.workload
        {
            if sizes.is_empty() || sizes.len() > MAX_REQUESTS {
                return Err(LabError::invalid(
                    "workload.requests.sizes",
                    format!(
                        "{} requests given; expected 1..={MAX_REQUESTS}",
                        sizes.len()
                    ),
                ));
            }
        }
        if let Workload::Video(v) = &self.workload {
            v.validate()?;
        }
        self.transport.to_config()?;
        self.network()?;
        Ok(())
    }

    fn resolve_spec(&self, key: &str, spec: &PathSpec) -> Result<ResolvedPath, LabError> {
        let resolved = match &self.base_dir {
            Some(dir) => spec.resolve_relative_to(dir),
            None => spec.resolve(),
        };
        resolved.map_err(|error| LabError::Spec {
            key: key.to_owned(),
            error,
        })
    }

    /// Resolves the path specs into link configurations (loading traces).
    pub fn network(&self) -> Result<Network, LabError> {
        let paths = self
            .paths
            .iter()
            .enumerate()
            .map(|(i, p)| self.resolve_spec(&format!("paths[{i}]"), &p.0))
            .collect::<Result<Vec<_>, _>>()?;
        let bottleneck = match &self.shared_bottleneck {
            Some(b) => Some(self.resolve_spec("shared_bottleneck", &b.0)?.down),
            None => None,
        };
        Ok(Network { paths, bottleneck })
    }
}
