//! Link configuration: capacity, propagation delay, queue, loss, jitter and
//! scheduled changes.
//!
//! A link is one-way. A packet entering a link goes through these stages:
//!
//! 1. **Down check** — if the link is down the packet is dropped
//!    ([`DropCause::LinkDown`](crate::stats::DropCause::LinkDown)).
//! 2. **MTU** — a packet larger than the link's [`LinkConfig::mtu`] is dropped
//!    ([`DropCause::MtuExceeded`](crate::stats::DropCause::MtuExceeded)). The
//!    simulator's packets are UDP payloads, so the link MTU here is the largest
//!    UDP payload the link carries (a 1500-byte IPv4 Ethernet MTU is 1472).
//!    No limit by default.
//! 3. **Random loss** — the [`LossModel`] is applied at *entry*, before the
//!    queue ([`DropCause::RandomLoss`](crate::stats::DropCause::RandomLoss)).
//! 4. **Drop-tail queue** — dropped if it would exceed the [`QueueLimit`]
//!    ([`DropCause::QueueOverflow`](crate::stats::DropCause::QueueOverflow)).
//! 5. **Transmission** — FIFO. A [`Capacity::Rate`] link serializes one
//!    packet at a time (`bytes * 8 / rate`); a [`Capacity::Trace`] link
//!    drains the queue at Mahimahi delivery opportunities (each carries whole
//!    packets totalling at most 1500 bytes; unused budget is lost; a packet
//!    larger than 1500 bytes uses one whole fresh opportunity); a
//!    [`Capacity::Unlimited`] link forwards instantly.
//! 6. **Propagation** — the current delay plus optional uniform jitter in
//!    `[0, max]`. Unless reordering is allowed, a packet never leaves the
//!    propagation stage before its predecessor.
//!
//! When a link goes down, queued, in-transmission *and propagating* packets
//! are all lost (counted as `LinkDown`).

pub(crate) mod engine;
mod model;

pub use model::{Delivery, LinkModel};

use serde::{Deserialize, Serialize};

use crate::loss::LossModel;
use crate::queue::QueueLimit;
use crate::time::SimTime;
use crate::trace::MahimahiTrace;

/// Identifies a link inside one [`crate::Simulator`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct LinkId(pub(crate) u32);

impl LinkId {
    /// Zero-based index of the link (in creation order).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How fast a link drains its queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Capacity {
    /// Fixed rate.
    Rate {
        /// Bits per second (must be positive).
        bits_per_sec: u64,
    },
    /// Time-varying capacity from a Mahimahi trace aligned to time 0.
    Trace(MahimahiTrace),
    /// Infinite capacity: no serialization delay, the queue never builds.
    Unlimited,
}

impl Capacity {
    /// Nominal rate in bit/s (a trace's mean rate; `None` if unlimited).
    pub fn nominal_rate_bps(&self) -> Option<f64> {
        match self {
            Capacity::Rate { bits_per_sec } => Some(*bits_per_sec as f64),
            Capacity::Trace(t) => Some(t.mean_rate_bps()),
            Capacity::Unlimited => None,
        }
    }

    fn validate(&self) -> Result<(), String> {
        match self {
            Capacity::Rate { bits_per_sec: 0 } => Err("link rate must be positive".to_owned()),
            _ => Ok(()),
        }
    }
}

/// Optional random extra delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct Jitter {
    /// Maximum extra delay; each packet gets a uniform value in `[0, max]`.
    pub max: SimTime,
    /// If false, delivery times are clamped so packets stay in FIFO order.
    #[serde(default)]
    pub allow_reordering: bool,
}

/// A change applied to a running link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LinkAction {
    /// Take the link down: arriving packets are dropped, and everything in
    /// the link (queued, transmitting, propagating) is lost.
    Down,
    /// Bring the link back up.
    Up,
    /// Switch to a fixed rate (a packet being serialized finishes at the old rate).
    SetRate {
        /// New rate in bit/s (must be positive).
        bits_per_sec: u64,
    },
    /// Replace the capacity model (fixed rate, trace or unlimited).
    SetCapacity(Capacity),
    /// Change the propagation delay for packets leaving the transmitter from now on.
    SetDelay {
        /// New one-way propagation delay.
        delay: SimTime,
    },
    /// Replace the loss model (Gilbert–Elliott restarts in the Good state).
    SetLoss(LossModel),
    /// Change the queue limit (already queued packets are kept).
    SetQueue(QueueLimit),
    /// Change the jitter settings.
    SetJitter(Jitter),
    /// Change the largest packet (UDP payload bytes) the link carries; None: no limit.
    SetMtu(Option<u64>),
}

impl LinkAction {
    pub(crate) fn validate(&self) -> Result<(), String> {
        match self {
            LinkAction::SetRate { bits_per_sec: 0 } => {
                Err("SetRate: rate must be positive".to_owned())
            }
            LinkAction::SetCapacity(c) => c.validate(),
            LinkAction::SetLoss(l) => l.validate(),
            _ => Ok(()),
        }
    }
}

/// A [`LinkAction`] at an absolute virtual time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ScheduledAction {
    /// When the action takes effect.
    pub at: SimTime,
    /// What happens.
    pub action: LinkAction,
}

/// Configuration of a one-way link. Build it with the constructors and
/// `with_*` methods (it is `#[non_exhaustive]`, so new link properties are not breaking
/// changes; its fields stay public to read and adjust):
///
/// ```
/// use mpquic_netsim::{LinkConfig, LossModel, QueueLimit, time::ms};
/// let link = LinkConfig::mbit(20.0)
///     .with_delay(ms(10))
///     .with_queue(QueueLimit::bdp_multiple(20_000_000, ms(20), 1.5))
///     .with_loss(LossModel::bernoulli(0.01))
///     .down_at(ms(2000))
///     .up_at(ms(5000));
/// assert!(link.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct LinkConfig {
    /// Transmission capacity.
    pub capacity: Capacity,
    /// Initial one-way propagation delay.
    #[serde(default)]
    pub delay: SimTime,
    /// Drop-tail queue limit.
    #[serde(default)]
    pub queue: QueueLimit,
    /// Random loss model (applied at link entry).
    #[serde(default)]
    pub loss: LossModel,
    /// Optional jitter (`max == 0` disables it).
    #[serde(default)]
    pub jitter: Jitter,
    /// Scheduled changes, applied in time order (ties in list order).
    #[serde(default)]
    pub events: Vec<ScheduledAction>,
    /// Largest packet the link carries, in bytes of UDP payload (the simulator's packet size);
    /// larger ones are dropped at entry. None (default): no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<u64>,
    /// ECN step marking (RFC 3168 §5): an ECN-capable packet arriving while the queue holds
    /// more than this threshold is marked CE and queued instead of waiting to be dropped;
    /// packets that are not ECN-capable still meet the drop-tail limit. `None`: no marking.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_threshold: Option<QueueLimit>,
    /// Clear the ECN codepoint of every packet entering the link (a bleaching middlebox,
    /// RFC 9000 §13.4.2 / §A.4).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ecn_bleach: bool,
    /// Name of the link's random streams (loss, jitter: `link/NAME/loss`, see [`crate::rng`]).
    /// `None` (default): the link's index in [`crate::Simulator::add_link`] order. Links of
    /// different runs with the same name and seed draw the same random sequence, packet for
    /// packet: common random numbers, so that runs compared with each other (a path alone
    /// and within a multipath set) face the same losses rather than independent draws.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub random_streams: Option<String>,
}

impl LinkConfig {
    /// A link with the given capacity, no delay, an infinite queue, no loss.
    pub fn new(capacity: Capacity) -> Self {
        Self {
            capacity,
            delay: 0,
            queue: QueueLimit::Infinite,
            loss: LossModel::None,
            jitter: Jitter::default(),
            events: Vec::new(),
            mtu: None,
            ecn_threshold: None,
            ecn_bleach: false,
            random_streams: None,
        }
    }

    /// Fixed-rate link of `bits_per_sec`.
    pub fn rate(bits_per_sec: u64) -> Self {
        Self::new(Capacity::Rate { bits_per_sec })
    }

    /// Fixed-rate link of `mbit` Mbit/s (rounded to whole bit/s).
    pub fn mbit(mbit: f64) -> Self {
        let bps = (mbit * 1e6).round();
        let bps = if bps.is_finite() && bps > 0.0 {
            bps.min(u64::MAX as f64) as u64
        } else {
            0
        };
        Self::rate(bps)
    }

    /// Link driven by a Mahimahi trace.
    pub fn trace(trace: MahimahiTrace) -> Self {
        Self::new(Capacity::Trace(trace))
    }

    /// Link with infinite capacity (pure delay line).
    pub fn unlimited() -> Self {
        Self::new(Capacity::Unlimited)
    }

    /// Sets the one-way propagation delay.
    pub fn with_delay(mut self, delay: SimTime) -> Self {
        self.delay = delay;
        self
    }

    /// Adds delay changes `(time, new_delay)` to the schedule.
    pub fn with_delay_schedule(mut self, changes: &[(SimTime, SimTime)]) -> Self {
        for &(at, delay) in changes {
            self = self.with_event(at, LinkAction::SetDelay { delay });
        }
        self
    }

    /// Sets the queue limit.
    pub fn with_queue(mut self, queue: QueueLimit) -> Self {
        self.queue = queue;
        self
    }

    /// Marks ECN-capable packets CE when the queue exceeds `threshold` (see
    /// [`LinkConfig::ecn_threshold`]).
    pub fn with_ecn_threshold(mut self, threshold: QueueLimit) -> Self {
        self.ecn_threshold = Some(threshold);
        self
    }

    /// Clears the ECN codepoint of every packet (see [`LinkConfig::ecn_bleach`]).
    pub fn with_ecn_bleach(mut self) -> Self {
        self.ecn_bleach = true;
        self
    }

    /// Sets the random loss model.
    pub fn with_loss(mut self, loss: LossModel) -> Self {
        self.loss = loss;
        self
    }

    /// Adds uniform jitter in `[0, max]`; `allow_reordering` lets packets overtake.
    pub fn with_jitter(mut self, max: SimTime, allow_reordering: bool) -> Self {
        self.jitter = Jitter {
            max,
            allow_reordering,
        };
        self
    }

    /// Sets the largest packet (UDP payload bytes) the link carries.
    pub fn with_mtu(mut self, mtu: u64) -> Self {
        self.mtu = Some(mtu);
        self
    }

    /// Schedules an action at absolute time `at`.
    pub fn with_event(mut self, at: SimTime, action: LinkAction) -> Self {
        self.events.push(ScheduledAction { at, action });
        self
    }

    /// Schedules the link to go down at `at`.
    pub fn down_at(self, at: SimTime) -> Self {
        self.with_event(at, LinkAction::Down)
    }

    /// Schedules the link to come back up at `at`.
    pub fn up_at(self, at: SimTime) -> Self {
        self.with_event(at, LinkAction::Up)
    }

    /// Checks the configuration (positive rates, valid probabilities).
    pub fn validate(&self) -> Result<(), String> {
        self.capacity.validate()?;
        self.loss.validate()?;
        for e in &self.events {
            e.action
                .validate()
                .map_err(|m| format!("event at {} ns: {m}", e.at))?;
        }
        Ok(())
    }
}
