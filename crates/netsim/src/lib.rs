//! `mpquic-netsim`: a deterministic discrete-event network simulator.
//!
//! The simulator moves opaque UDP [`Datagram`]s between [`Node`]s over
//! one-way links with configurable capacity (fixed rate or Mahimahi trace),
//! propagation delay, drop-tail queues, random loss, jitter and scheduled
//! changes. It knows nothing about the protocol running on top.
//!
//! # Determinism
//!
//! * Virtual time ([`SimTime`], nanoseconds) only; the wall clock is read
//!   solely to report [`RunOutcome::wall_time`].
//! * Events are ordered by `(time, insertion sequence)`.
//! * All randomness derives from one `u64` seed through ChaCha20 sub-streams
//!   ([`rng`]): each link gets independent loss and jitter streams keyed by
//!   its id, and endpoints can get their own via [`Simulator::derive_seed`].
//! * No hash-map iteration anywhere (ordered maps and vectors only).
//!
//! # Example
//!
//! ```
//! use mpquic_netsim::{LinkConfig, QueueLimit, Simulator, time::ms};
//! use mpquic_netsim::toy::{ToyNode, WindowReceiver, WindowSender};
//!
//! let (a, b) = ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
//! let mut sim: Simulator<ToyNode> = Simulator::new(1);
//! let tx = WindowSender::new((a, 1).into(), (b, 2).into(), 1200, 500, 20, ms(200));
//! let tx = sim.add_node(ToyNode::Window(tx), [a]).unwrap();
//! sim.add_background_node(ToyNode::Receiver(WindowReceiver::new(40)), [b]).unwrap();
//! let fwd = LinkConfig::mbit(10.0).with_delay(ms(10)).with_queue(QueueLimit::Packets(50));
//! let rev = LinkConfig::mbit(10.0).with_delay(ms(10));
//! sim.add_path(a, b, fwd, rev).unwrap();
//! let out = sim.run_until(ms(10_000));
//! assert_eq!(out.reason, mpquic_netsim::StopReason::AllDone);
//! let truth = sim.ground_truth();
//! assert_eq!(truth.links[0].delivered.packets, 500);
//! # let _ = tx;
//! ```

#![warn(unreachable_pub, missing_docs)]

mod event;
pub mod generate;
pub mod link;
pub mod loss;
mod node;
mod packet;
pub mod queue;
pub mod rng;
mod sim;
pub mod spec;
pub mod stats;
pub mod time;
#[cfg(feature = "toy")]
pub mod toy;
pub mod trace;

pub use link::{
    Capacity, Delivery, Jitter, LinkAction, LinkConfig, LinkId, LinkModel, ScheduledAction,
};
pub use loss::LossModel;
pub use node::{Datagram, Ecn, Node};
pub use queue::QueueLimit;
pub use sim::{
    NodeId, RunOutcome, SimConfig, SimError, Simulator, StopReason, MAX_TIMER_FIRES_PER_MS,
};
pub use spec::{PathSpec, ResolvedPath, SpecError};
pub use stats::{DropCause, GroundTruth, LinkStats, RouteStats};
pub use time::SimTime;
pub use trace::{MahimahiTrace, TraceError};
