//! `mpquic-lab`: runs the real `mpquic-proto` endpoints over the
//! `mpquic-netsim` simulator.
//!
//! * [`QuicNode`] adapts one [`mpquic_proto::Endpoint`] plus its application
//!   ([`ClientApp`] / [`ServerApp`]) to the simulator's
//!   [`Node`](mpquic_netsim::Node) trait, in virtual time.
//! * [`Scenario`] describes a run (paths, workload, transport settings) and
//!   is read from TOML; [`run`] executes it and returns a [`RunResult`]
//!   that serializes to JSON.
//! * [`sim_command`] is the `mpquic sim` command-line entry point.
//!
//! ```no_run
//! use mpquic_lab::{run, Scenario};
//! let scenario = Scenario::from_toml_str(r#"
//!     seed = 1
//!     paths = ["rate=20mbit,rtt=20ms", "rate=15mbit,rtt=40ms"]
//!     [workload]
//!     download = "20MB"
//!     [transport]
//!     multipath = "mpns"
//! "#, "<inline>").unwrap();
//! let result = run(&scenario).unwrap();
//! println!("{}", serde_json::to_string_pretty(&result).unwrap());
//! ```
//!
//! Runs are deterministic: the same scenario and seed give the same result
//! (apart from `sim_wall_time_s`). All randomness of the network and of both
//! endpoints derives from the seed; TLS uses Ed25519 test certificates so
//! that handshake sizes, and therefore all timing, do not depend on the
//! TLS library's own randomness.

#![warn(missing_docs)]

pub mod cli;
pub mod error;
pub mod h3sim;
pub mod labcmd;
pub mod node;
pub mod output;
pub mod race;
pub mod real;
pub mod result;
pub mod runner;
pub mod scenario;
pub mod suites;
pub mod summary;
pub mod truth;
pub mod units;
pub mod video;
pub mod workload;

pub use cli::{sim_command, SimArgs};
pub use error::LabError;
pub use node::{ClientOptions, QuicNode, ServerOptions};
pub use result::{ConnectionFigures, LinkResult, PathResult, RunResult, TimeSeries};
pub use runner::run;
pub use scenario::{CryptoMode, PathItem, RecordSettings, Scenario, TransportSettings, Workload};
pub use units::{ByteSize, SimDuration};
pub use workload::{ClientApp, ServerApp};
