//! One full handshake in memory: a client and a server endpoint (proto, no sockets) exchange
//! datagrams until both sides are established (TLS 1.3 through rustls with an Ed25519
//! certificate, transport parameters, HANDSHAKE_DONE). Each iteration makes two new endpoints;
//! the configurations and the certificate are made once.

use criterion::Criterion;
use mpquic_proto::TransportConfig;

use crate::pair::{Configs, Pair};

pub fn bench(c: &mut Criterion) {
    let configs = Configs::new(TransportConfig::default(), TransportConfig::default());
    let mut buf = Vec::with_capacity(1500);
    c.bench_function("handshake_in_memory", |b| {
        b.iter_with_large_drop(|| {
            let mut pair = Pair::connect(&configs);
            pair.settle(&mut buf);
            assert!(pair.established());
            pair
        })
    });
}
