//! qlog: structured event logs of a connection (draft-ietf-quic-qlog-main-schema,
//! draft-ietf-quic-qlog-quic-events), sans-IO.
//!
//! The connection builds typed [`QlogEvent`]s and hands them, with the [`Timestamp`] its caller
//! gave it, to a [`QlogSink`] the caller provides: per connection through
//! [`QlogConfig`] in [`TransportConfig::qlog`](crate::TransportConfig::qlog) (a factory called
//! when the connection is created), or with [`Connection::set_qlog`](crate::Connection::set_qlog).
//! Without a sink nothing is built: each hook first checks an `Option`.
//!
//! [`QlogWriter`] serializes events as JSON-SEQ onto any [`std::io::Write`]; the runtime and the
//! lab open the files. Path-level events (packets, losses, recovery metrics, congestion state)
//! carry a `path_id` field in their data, in both multipath designs.

pub mod events;
pub mod frames;
mod hooks;
pub mod writer;

use std::collections::BTreeMap;
use std::sync::Arc;

use mpquic_wire::cid::ConnectionId;
use mpquic_wire::stream_id::Side;

pub use events::QlogEvent;
pub use frames::QlogFrame;
pub(crate) use hooks::PacketMeta;
pub use writer::{split_records, QlogHeader, QlogWriter, SharedBuffer, RS};

use crate::path::PathId;
use crate::time::Timestamp;

/// Receives a connection's qlog events. Implementations must not block for long: they run
/// inside the connection's calls.
pub trait QlogSink: Send {
    /// One event, at `time` (the timestamp of the connection call that produced it).
    fn emit(&mut self, time: Timestamp, event: QlogEvent);
}

/// What a [`QlogConfig`] factory knows of the connection it makes a sink for.
#[derive(Debug, Clone)]
pub struct QlogContext {
    /// Client or server: the trace's vantage point.
    pub side: Side,
    /// The client's original destination connection ID, which names the trace
    /// (draft-ietf-quic-qlog-quic-events §"Use of group IDs").
    pub odcid: ConnectionId,
    /// When the connection was created: the trace's time origin.
    pub start: Timestamp,
}

type Factory = dyn Fn(&QlogContext) -> Option<Box<dyn QlogSink>> + Send + Sync;

/// Makes a sink for each new connection (None: this connection is not logged).
#[derive(Clone)]
pub struct QlogConfig {
    factory: Arc<Factory>,
}

impl QlogConfig {
    /// A configuration calling `factory` for every connection.
    pub fn new(
        factory: impl Fn(&QlogContext) -> Option<Box<dyn QlogSink>> + Send + Sync + 'static,
    ) -> Self {
        QlogConfig {
            factory: Arc::new(factory),
        }
    }

    /// The sink for one connection.
    pub fn make(&self, context: &QlogContext) -> Option<Box<dyn QlogSink>> {
        (self.factory)(context)
    }
}

impl std::fmt::Debug for QlogConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("QlogConfig(..)")
    }
}

/// The recovery metrics last reported for a path (§"recovery_metrics_updated": only changes).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct MetricValues {
    /// None before the path's first RTT sample (the smoothed RTT is the initial RTT then).
    pub min_rtt_ns: Option<u64>,
    pub smoothed_rtt_ns: u64,
    pub latest_rtt_ns: Option<u64>,
    pub rtt_variance_ns: u64,
    pub pto_count: u16,
    pub congestion_window: u64,
    pub bytes_in_flight: u64,
    pub ssthresh: Option<u64>,
    pub pacing_rate: u64,
}

/// What was last reported of one path.
#[derive(Debug, Default)]
pub(crate) struct PathSnapshot {
    /// None before the first report: every metric is new then.
    pub metrics: Option<MetricValues>,
    pub congestion_state: Option<&'static str>,
}

/// A connection's qlog state: the sink and what it was last told.
pub(crate) struct Qlog {
    sink: Box<dyn QlogSink>,
    /// Time of the latest connection call (for events of calls that take no time, like writes).
    pub last_time: Timestamp,
    /// Connection state last reported (§"connection_state_updated").
    pub state: Option<&'static str>,
    pub closed_logged: bool,
    /// Whether Initial, Handshake and 1-RTT keys were installed at the last report.
    pub keys: [bool; 3],
    pub paths: BTreeMap<PathId, PathSnapshot>,
}

impl Qlog {
    pub(crate) fn new(sink: Box<dyn QlogSink>, now: Timestamp) -> Self {
        Qlog {
            sink,
            last_time: now,
            state: None,
            closed_logged: false,
            keys: [false; 3],
            paths: BTreeMap::new(),
        }
    }

    pub(crate) fn emit(&mut self, now: Timestamp, event: QlogEvent) {
        self.last_time = self.last_time.max(now);
        self.sink.emit(now, event);
    }
}
