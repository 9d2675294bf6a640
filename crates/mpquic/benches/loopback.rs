//! Single-connection bulk throughput over loopback UDP: a client downloads 50 MB on one
//! bidirectional stream from a server that sends it from memory. Seven pairings in one run:
//! each of mpquic, quinn 0.11 and noq 1.4 against itself, and mpquic as client and as server
//! against each of the other two. Run with
//! `cargo bench -p mpquic --bench loopback`; criterion reports the throughput, and a summary
//! line per pairing gives MB/s (10^6 bytes per second).

#[macro_use]
mod support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use mpquic::{config, Endpoint, TransportConfig};

const SIZE: usize = 50_000_000;

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().expect("addr")
}

/// A server answering every request stream with the payload, and one download with a client,
/// for quinn 0.11 and for noq 1.4 (a quinn fork with RFC 10069 multipath, here without it: both
/// are single-path transfers). Their APIs are the same, so one definition serves both.
macro_rules! quinn_like {
    ($krate:ident, $server:ident, $download:ident) => {
        fn $server(payload: Arc<Vec<u8>>) -> $krate::Endpoint {
            let crypto = $krate::crypto::rustls::QuicServerConfig::try_from(support::server_tls())
                .expect("crypto");
            let endpoint = $krate::Endpoint::server(
                $krate::ServerConfig::with_crypto(Arc::new(crypto)),
                loopback(),
            )
            .expect("bind");
            serve_payload!(endpoint, payload, stopped);
            endpoint
        }

        async fn $download(server: SocketAddr) -> Duration {
            let crypto = $krate::crypto::rustls::QuicClientConfig::try_from(support::client_tls())
                .expect("crypto");
            let client = $krate::Endpoint::client(loopback()).expect("bind");
            let conn = client
                .connect_with(
                    $krate::ClientConfig::new(Arc::new(crypto)),
                    server,
                    "localhost",
                )
                .expect("connect")
                .await
                .expect("handshake");
            let elapsed = timed_download!(conn, SIZE);
            conn.close(0u32.into(), b"done");
            client.wait_idle().await;
            elapsed
        }
    };
}

quinn_like!(quinn, quinn_server, quinn_download);
quinn_like!(noq, noq_server, noq_download);

/// One download with our client; returns the time from the request to the last byte.
async fn mpquic_download(server: SocketAddr) -> Duration {
    let client = Endpoint::client(&[loopback()]).expect("bind");
    let conn = client
        .connect_with(
            config::client(Arc::new(support::client_tls()), TransportConfig::default()),
            server,
            "localhost",
        )
        .expect("connect")
        .await
        .expect("handshake");
    let elapsed = timed_download!(conn, SIZE);
    conn.close(0, b"done");
    client.wait_idle().await;
    elapsed
}

/// Which client a pairing runs.
#[derive(Clone, Copy)]
enum Client {
    Mpquic,
    Quinn,
    Noq,
}

fn bench(c: &mut Criterion) {
    let rt = support::runtime();
    let payload = Arc::new(vec![0x5a_u8; SIZE]);
    let (ours, quinn, noq) = rt.block_on(async {
        (
            support::mpquic_server(payload.clone(), TransportConfig::default(), loopback()),
            quinn_server(payload.clone()),
            noq_server(payload.clone()),
        )
    });
    let ours_addr = ours.local_addr();
    let quinn_addr = quinn.local_addr().expect("quinn addr");
    let noq_addr = noq.local_addr().expect("noq addr");
    let mut group = support::transfer_group(c, "loopback_50MB", SIZE);
    let pairings = [
        ("mpquic_client-mpquic_server", Client::Mpquic, ours_addr),
        ("quinn_client-quinn_server", Client::Quinn, quinn_addr),
        ("noq_client-noq_server", Client::Noq, noq_addr),
        ("mpquic_client-quinn_server", Client::Mpquic, quinn_addr),
        ("quinn_client-mpquic_server", Client::Quinn, ours_addr),
        ("mpquic_client-noq_server", Client::Mpquic, noq_addr),
        ("noq_client-mpquic_server", Client::Noq, ours_addr),
    ];
    for (name, client, server) in pairings {
        let mut best = Duration::MAX;
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let t = match client {
                            Client::Mpquic => mpquic_download(server).await,
                            Client::Quinn => quinn_download(server).await,
                            Client::Noq => noq_download(server).await,
                        };
                        best = best.min(t);
                        total += t;
                    }
                    total
                })
            })
        });
        if best < Duration::MAX {
            println!(
                "{name}: best {:.1} MB/s ({SIZE} bytes in {best:?})",
                SIZE as f64 / best.as_secs_f64() / 1e6
            );
        }
    }
    group.finish();
    drop((ours, quinn, noq));
}

criterion_group!(benches, bench);
criterion_main!(benches);
