//! mpquic-proto: the sans-IO core of mpquic. No sockets, no threads, no clock reads, no global RNG:
//! time is passed in as [`Timestamp`], randomness is injected, datagrams go in and out as bytes.

pub mod cc;
pub mod crypto;
pub mod error;
pub mod recovery;
pub mod streams;
pub mod time;

pub use error::TransportError;
pub use mpquic_wire as wire;
pub use time::{Duration, Timestamp};
