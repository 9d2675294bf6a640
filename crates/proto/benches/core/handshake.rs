//! One full handshake in memory: a client and a server endpoint (proto, no sockets) exchange
//! datagrams until both sides are established (TLS 1.3 through rustls with an Ed25519
//! certificate, transport parameters, HANDSHAKE_DONE). Each iteration makes two new endpoints;
//! the configurations and the certificate are made once.

use criterion::Criterion;
use mpquic_proto::crypto::identity::LabIdentity;
use mpquic_proto::TransportConfig;

use crate::pair::{Configs, Pair};

pub fn bench(c: &mut Criterion) {
    let plain = Configs::new(TransportConfig::default(), TransportConfig::default());
    // The same with certificate compression (RFC 8879) on both sides: the client decompresses
    // the certificate in every handshake (the server compresses it once and caches it).
    let compressed = Configs::with_tls(
        TransportConfig::default(),
        TransportConfig::default(),
        LabIdentity {
            extra_names: 0,
            cert_compression: true,
        }
        .tls_configs(&[b"bench"]),
    );
    let mut buf = Vec::with_capacity(1500);
    for (name, configs) in [
        ("handshake_in_memory", &plain),
        ("handshake_in_memory_cert_compression", &compressed),
    ] {
        c.bench_function(name, |b| {
            b.iter_with_large_drop(|| {
                let mut pair = Pair::connect(configs);
                pair.settle(&mut buf);
                assert!(pair.established());
                pair
            })
        });
    }
}
