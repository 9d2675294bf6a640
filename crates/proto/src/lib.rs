#![warn(unreachable_pub, missing_docs)]
//! mpquic-proto: the sans-IO core of mpquic. No sockets, no threads, no clock reads, no global RNG:
//! time is passed in as [`Timestamp`], randomness is injected, datagrams go in and out as bytes.

// The public surface is what this file re-exports: the modules below are the core's own, and
// `unreachable_pub` keeps items inside them from claiming a visibility they do not have.
mod ack;
pub mod cc;
mod cid;
mod config;
mod connection;
pub mod crypto;
mod ecn;
mod endpoint;
mod error;
mod mtud;
mod path;
pub mod qlog;
mod recovery;
pub mod reinjection;
mod rtt_memory;
pub mod scheduler;
mod sent_frames;
mod small_map;
mod space;
mod spns_rules;
mod streams;
mod time;
mod token;
mod work;

pub use ack::{AckConfig, AckFrequencyRequest, RangeOrder};
pub use config::{
    ClientConfig, ConfigError, EndpointConfig, MultipathMode, RetryPolicy, ServerConfig, TokenKeys,
    TokenMemoryStore, TokenStore, TransportConfig, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_HANDSHAKES,
    DEFAULT_MAX_PACKET_THRESHOLD, DEFAULT_MAX_TIME_THRESHOLD, MAX_ACK_RANGES,
};
pub use connection::{
    ConnectError, Connection, ConnectionError, ConnectionStats, DatagramStats, Event, PathError,
    PathEvent, QoeReport, SendDatagramError, Transmit,
};
pub use ecn::{EcnCodepoint, EcnPathStats, EcnState};
pub use endpoint::{AcceptError, ConnectionHandle, Endpoint, EndpointStats, Incoming, RetryError};
pub use mtud::{MtuCounters, MtuDiscoveryConfig, Phase as MtuPhase, SocketMtu};
pub use path::{PathCounters, PathId, PathIdOutOfRange, PathStats, Validation};
pub use rtt_memory::{RttMemoryStore, RttStore};
pub use space::Design;
pub use spns_rules::{SpnsRule, SpnsRules};
pub use streams::{ReadError, StreamEvent, StreamStats, StreamsConfig, WriteError};

/// Internals for the core's benchmarks and tests (feature `testing`): the stream reassembly
/// buffer, counters of work a peer can cause. Packet protection helpers are in
/// `crypto::testing`.
#[cfg(any(test, feature = "testing"))]
pub mod testing {
    pub use crate::streams::assembler::Assembler;
    pub use crate::work::{
        ack_range_scan_steps, received_range_walk_steps, reinjection_scan_steps,
    };
}

pub use error::TransportError;
pub use mpquic_wire as wire;
pub use time::{Duration, Timestamp};
