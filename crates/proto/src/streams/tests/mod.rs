//! Tests of [`super::Streams`]: frame-level error handling and a two-endpoint
//! exchange over a lossy, reordering in-memory channel.

mod errors;
mod pair;
