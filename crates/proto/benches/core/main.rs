//! Benchmarks of the sans-IO core (issue 19; results in docs/PERFORMANCE.md, "Benchmarks"):
//! packet build and parse with and without packet protection, ACK processing with 1, 8 and 64
//! ranges under 1% loss, stream reassembly, and a full handshake between two in-memory endpoints.
//! Run with `cargo bench -p mpquic-proto --bench core`.

mod ack;
mod handshake;
mod packet;
mod pair;
mod streams;

use criterion::{criterion_group, criterion_main};

criterion_group!(
    benches,
    packet::bench,
    streams::bench,
    ack::bench,
    handshake::bench
);
criterion_main!(benches);
