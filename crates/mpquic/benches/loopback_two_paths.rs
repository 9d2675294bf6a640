//! Two-path bulk throughput over loopback UDP (RFC 10069 multipath): a client connects from
//! 127.0.0.1, opens a second path from 127.0.0.2 to the same server address, waits until it is
//! usable, and downloads 50 MB on one bidirectional stream. Four pairings: mpquic and noq 1.4
//! against themselves and against each other. Run with
//! `cargo bench -p mpquic --bench loopback_two_paths`; what is timed is the request to the last
//! byte (handshake and path set-up excluded). Each pairing prints, once, the bytes the client
//! received on each path, so that a run where the second path carried nothing shows.

#[macro_use]
mod support;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use mpquic::{config, Endpoint, MultipathMode, PathStatus, TransportConfig};

const SIZE: usize = 50_000_000;
const FIRST: &str = "127.0.0.1";
const SECOND: &str = "127.0.0.2";
/// Paths noq may have open at once.
const NOQ_PATHS: u32 = 4;

fn ip(s: &str) -> IpAddr {
    s.parse().expect("ip")
}

fn ours_transport() -> TransportConfig {
    TransportConfig::default().multipath(MultipathMode::Mpns)
}

fn noq_transport() -> Arc<noq::TransportConfig> {
    let mut t = noq::TransportConfig::default();
    t.max_concurrent_multipath_paths(NOQ_PATHS);
    Arc::new(t)
}

/// A noq server on 127.0.0.1 with multipath, answering every request stream with the payload.
fn noq_server(payload: Arc<Vec<u8>>) -> noq::Endpoint {
    let crypto =
        noq::crypto::rustls::QuicServerConfig::try_from(support::server_tls()).expect("crypto");
    let mut config = noq::ServerConfig::with_crypto(Arc::new(crypto));
    config.transport_config(noq_transport());
    let endpoint =
        noq::Endpoint::server(config, SocketAddr::new(ip(FIRST), 0)).expect("noq server");
    serve_payload!(endpoint, payload, stopped);
    endpoint
}

/// One download with our client over two paths; `report` prints each path's bytes.
async fn mpquic_download(server: SocketAddr, report: bool) -> Duration {
    let tls = Arc::new(support::client_tls());
    let locals = [
        SocketAddr::new(ip(FIRST), 0),
        SocketAddr::new(ip(SECOND), 0),
    ];
    let client = Endpoint::client(&locals).expect("bind");
    let conn = client
        .connect_with(config::client(tls, ours_transport()), server, "localhost")
        .expect("connect")
        .await
        .expect("handshake");
    conn.open_path(client.local_addrs()[1], None, PathStatus::Available)
        .await
        .expect("second path");
    let elapsed = timed_download!(conn, SIZE);
    if report {
        let bytes: Vec<u64> = conn
            .path_stats()
            .iter()
            .map(|p| p.counters.bytes_received)
            .collect();
        println!("mpquic client: bytes received per path {bytes:?}");
    }
    conn.close(0, b"done");
    client.wait_idle().await;
    elapsed
}

/// One download with a noq client over two paths (the second from 127.0.0.2).
async fn noq_download(server: SocketAddr, report: bool) -> Duration {
    let crypto =
        noq::crypto::rustls::QuicClientConfig::try_from(support::client_tls()).expect("crypto");
    let mut config = noq::ClientConfig::new(Arc::new(crypto));
    config.transport_config(noq_transport());
    // The wildcard address lets noq send from either local address (IP_PKTINFO).
    let client = noq::Endpoint::client("0.0.0.0:0".parse().expect("addr")).expect("bind");
    let conn = client
        .connect_with(config, server, "localhost")
        .expect("connect")
        .await
        .expect("handshake");
    loop {
        let open = conn.open_path(
            noq::FourTuple::new(server, Some(ip(SECOND))),
            noq::PathStatus::Available,
        );
        match open.await {
            Ok(_) => break,
            // The server's CIDs for path 1 arrive just after the handshake.
            Err(noq::PathError::RemoteCidsExhausted) => {
                tokio::time::sleep(Duration::from_millis(5)).await
            }
            Err(e) => panic!("noq could not open a second path: {e}"),
        }
    }
    let elapsed = timed_download!(conn, SIZE);
    if report {
        let bytes: Vec<u64> = (0u32..2)
            .filter_map(|id| conn.path_stats(noq::PathId::from(id)))
            .map(|s| s.udp_rx.bytes)
            .collect();
        println!("noq client: bytes received per path {bytes:?}");
    }
    conn.close(0u32.into(), b"done");
    client.wait_idle().await;
    elapsed
}

#[derive(Clone, Copy)]
enum Client {
    Mpquic,
    Noq,
}

fn bench(c: &mut Criterion) {
    let rt = support::runtime();
    let payload = Arc::new(vec![0x5a_u8; SIZE]);
    let (ours, noq) = rt.block_on(async {
        let bind = SocketAddr::new(ip(FIRST), 0);
        (
            support::mpquic_server(payload.clone(), ours_transport(), bind),
            noq_server(payload.clone()),
        )
    });
    let ours_addr = ours.local_addr();
    let noq_addr = noq.local_addr().expect("noq addr");
    let mut group = support::transfer_group(c, "loopback_two_paths_50MB", SIZE);
    let pairings = [
        ("mpquic_client-mpquic_server", Client::Mpquic, ours_addr),
        ("noq_client-noq_server", Client::Noq, noq_addr),
        ("mpquic_client-noq_server", Client::Mpquic, noq_addr),
        ("noq_client-mpquic_server", Client::Noq, ours_addr),
    ];
    for (name, client, server) in pairings {
        let mut reported = false;
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                rt.block_on(async {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let report = !std::mem::replace(&mut reported, true);
                        total += match client {
                            Client::Mpquic => mpquic_download(server, report).await,
                            Client::Noq => noq_download(server, report).await,
                        };
                    }
                    total
                })
            })
        });
    }
    group.finish();
    drop((ours, noq));
}

criterion_group!(benches, bench);
criterion_main!(benches);
