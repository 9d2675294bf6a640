//! mpquic-proto: the sans-IO core of mpquic. No sockets, no threads, no clock reads, no global RNG:
//! time is passed in as [`Timestamp`], randomness is injected, datagrams go in and out as bytes.

pub mod ack;
pub mod cc;
pub mod cid;
pub mod config;
pub mod connection;
pub mod crypto;
pub mod ecn;
pub mod endpoint;
pub mod error;
pub mod mtud;
pub mod path;
pub mod qlog;
pub mod recovery;
pub mod reinjection;
pub mod scheduler;
pub mod sent_frames;
pub mod space;
pub mod spns_rules;
pub mod streams;
pub mod time;
pub(crate) mod token;

pub use config::{
    ClientConfig, ConfigError, EndpointConfig, MultipathMode, RetryPolicy, ServerConfig, TokenKeys,
    TokenMemoryStore, TokenStore, TransportConfig,
};
pub use connection::{
    Connection, ConnectionError, ConnectionStats, DatagramStats, Event, PathEvent,
    SendDatagramError, Transmit,
};
pub use ecn::{EcnCodepoint, EcnPathStats, EcnState};
pub use endpoint::{ConnectionHandle, Endpoint, EndpointStats};
pub use path::{PathId, PathStats};
pub use space::Design;
pub use spns_rules::{SpnsRule, SpnsRules};

pub use error::TransportError;
pub use mpquic_wire as wire;
pub use time::{Duration, Timestamp};
