//! Fuzz harnesses of mpquic, one `pub fn NAME(data: &[u8])` per target. The cargo-fuzz targets
//! in `fuzz/fuzz_targets/` are one-line wrappers around them, and `tests/replay.rs` runs every
//! checked-in seed (and a local corpus) through them on stable, so a crash the fuzzer finds
//! becomes a regression test by copying its input into `fuzz/seeds/<target>/`.
//!
//! A harness may see its input rejected with an error; it must never panic, hang or allocate
//! without bound. Where a harness asserts (round trips, path confinement), the assertion is a
//! property of the code under test, not of the harness.

#![warn(unreachable_pub, missing_docs)]

mod connection;
mod net;
mod packets;
pub mod seeds;
mod text;

pub use connection::{client_datagram, established_frames, server_datagram, FrameSetup};
pub use text::{hq_request, mahimahi_trace, scenario_toml, unit_parsers, wire_decode};

/// A fuzz target: its name (as in `fuzz/Cargo.toml` and `fuzz/seeds/`) and its harness.
pub type Target = (&'static str, fn(&[u8]));

/// Every target.
pub const TARGETS: &[Target] = &[
    ("wire_decode", wire_decode),
    ("established_frames", established_frames),
    ("client_datagram", client_datagram),
    ("server_datagram", server_datagram),
    ("mahimahi_trace", mahimahi_trace),
    ("scenario_toml", scenario_toml),
    ("unit_parsers", unit_parsers),
    ("hq_request", hq_request),
];
