//! Re-injection (XLINK, SIGCOMM 2021 §4): when all of the application's data has been sent and
//! only the unacknowledged tail is in flight, copies of in-flight packets' stream frames are sent
//! again on another path, so a slow or lossy path cannot stall the end of a transfer. Whichever
//! copy is acknowledged first frees the data; the receiver's reassembly drops the duplicate.
//!
//! *Whether* to re-inject is a policy ([`ReinjectionPolicy`]); the connection supplies the
//! context and does the sending. Policies are made by a [`ReinjectionFactory`]; the built-in
//! ones are registered by name in [`registry`]; [`ReinjectionMode`] names them in configuration
//! files.

mod qoe;
pub mod registry;
mod tail;

pub use qoe::QoeControlled;
pub use registry::ReinjectionFactory;
pub use tail::{StrandedTail, TailCutoff};

use crate::time::Duration;

/// What a policy may know when the connection considers re-injecting one in-flight packet.
#[derive(Debug, Clone, Copy)]
pub struct ReinjectionContext {
    /// The receiver's latest reported play-time left (QoE feedback), if any.
    pub play_time_left: Option<Duration>,
    /// Estimated time for the packet's data to arrive on the path it was sent on.
    pub est_delivery_current: Duration,
    /// Estimated delivery time on the best other path.
    pub est_delivery_other: Duration,
    /// The packet carries stream bytes from the start of a stream (the first video frame).
    pub stream_start: bool,
    /// How long ago the packet was sent.
    pub age: Duration,
    /// Bytes in flight on the packet's path that were sent before it, plus its own size: what
    /// the path must deliver before the packet (one queue per path, first in first out).
    pub ahead: u64,
    /// The estimates of the path the packet was sent on.
    pub current_path: SourcePath,
}

/// What a policy knows of the path a packet waits on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourcePath {
    /// RFC 9002 §5: smoothed and minimum RTT.
    pub srtt: Duration,
    /// Minimum RTT of the path (RFC 9002 §5.2).
    pub min_rtt: Duration,
    /// Bytes per second the path delivers: its latest delivery-rate sample, or cwnd / srtt
    /// before the first one.
    pub delivery_rate: u64,
}

/// Decides whether a tail packet is re-injected on another path.
pub trait ReinjectionPolicy: std::fmt::Debug + Send {
    /// Whether the packet described by `ctx` is copied onto another path.
    fn should_reinject(&self, ctx: &ReinjectionContext) -> bool;
    /// Whether the policy never re-injects anything, so the connection can skip preparing the
    /// context altogether. Default: no.
    fn is_off(&self) -> bool {
        false
    }
    /// The policy's registered name.
    fn name(&self) -> &'static str;
    /// A cheaper form of [`Self::should_reinject`] for one scan of a path's tail: when `Some`,
    /// the connection asks the cutoff instead, which must answer as `should_reinject` would
    /// for every packet on a path with estimates `path` and a best other path at `other`,
    /// whatever the packet's age and the bytes ahead of it. The scan looks at up to 64 packets
    /// per poll, so this saves the per-packet context and arithmetic. Default: none.
    fn tail_cutoff(&self, _other: Duration, _path: SourcePath) -> Option<TailCutoff> {
        None
    }
}

/// Never re-inject (plain multipath).
#[derive(Debug, Default)]
pub struct Never;

impl ReinjectionPolicy for Never {
    fn should_reinject(&self, _ctx: &ReinjectionContext) -> bool {
        false
    }
    fn is_off(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "off"
    }
}

/// Always re-inject the tail ("re-injection without QoE control" of XLINK's evaluation).
#[derive(Debug, Default)]
pub struct Always;

impl ReinjectionPolicy for Always {
    fn should_reinject(&self, _ctx: &ReinjectionContext) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "always"
    }
}

/// Re-injection settings of a connection (the sender's side).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum ReinjectionMode {
    /// Never re-inject.
    Off,
    /// Re-inject every tail packet (XLINK's "without QoE control").
    Always,
    /// Copy a tail packet only when it would arrive later on its path than a copy on another
    /// path ([`StrandedTail`]): the tail of a transfer does not wait on a slow path. The
    /// default since issue 15 (docs/MULTIPATH.md, "Scheduler").
    #[default]
    Tail,
    /// XLINK Alg. 1 with play-time-left thresholds in milliseconds (lower < upper).
    Qoe {
        /// Below this play time left (ms) re-injection is always on.
        lower_ms: u64,
        /// Above this play time left (ms) re-injection is off; in between it follows XLINK Alg. 1.
        upper_ms: u64,
    },
}

impl ReinjectionMode {
    /// The policy's registered name.
    pub fn name(self) -> &'static str {
        match self {
            ReinjectionMode::Off => "off",
            ReinjectionMode::Always => "always",
            ReinjectionMode::Tail => "tail",
            ReinjectionMode::Qoe { .. } => "qoe",
        }
    }

    /// The factory of this policy: the registered one, or the QoE policy with these thresholds.
    pub fn factory(self) -> std::sync::Arc<dyn ReinjectionFactory> {
        match self {
            ReinjectionMode::Qoe { lower_ms, upper_ms } => std::sync::Arc::new(QoeControlled::new(
                Duration::from_millis(lower_ms),
                Duration::from_millis(upper_ms),
            )),
            other => registry::lookup(other.name()).expect("every ReinjectionMode is registered"),
        }
    }

    /// A fresh policy of this mode.
    pub fn build(self) -> Box<dyn ReinjectionPolicy> {
        self.factory().build()
    }

    /// Whether this mode never re-injects anything.
    pub fn is_off(self) -> bool {
        self == ReinjectionMode::Off
    }
}
