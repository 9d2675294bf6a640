//! Single-connection bulk throughput over loopback UDP: a client downloads 50 MB on one
//! bidirectional stream from a server that sends it from memory. Seven pairings in one run:
//! each of mpquic, quinn 0.11 and noq 1.4 against itself, and mpquic as client and as server
//! against each of the other two. Run with
//! `cargo bench -p mpquic --bench loopback`; criterion reports the throughput, and a summary
//! line per pairing gives MB/s (10^6 bytes per second).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mpquic::{config, hq, tls, Endpoint, TransportConfig};
use tokio::runtime::Runtime;

const SIZE: usize = 50_000_000;

/// A request: `GET /` and FIN; the answer is the payload.
const REQUEST: &[u8] = b"GET /\r\n";

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

fn certificate() -> (
    rustls_pki_types::CertificateDer<'static>,
    rustls_pki_types::PrivateKeyDer<'static>,
) {
    tls::self_signed(&["localhost"]).expect("certificate")
}

/// Our server answering every request stream with the payload.
fn mpquic_server(payload: Arc<Vec<u8>>) -> Endpoint {
    let (cert, key) = certificate();
    let tls = tls::server_config(&[hq::ALPN], vec![cert], key).expect("tls");
    let endpoint = Endpoint::server(
        config::server(tls, TransportConfig::default()),
        &["127.0.0.1:0".parse().expect("addr")],
    )
    .expect("bind");
    let ep = endpoint.clone();
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let payload = payload.clone();
            tokio::spawn(async move {
                let Ok(conn) = incoming.await else { return };
                while let Ok((mut send, mut recv)) = conn.accept_bi().await {
                    let payload = payload.clone();
                    tokio::spawn(async move {
                        if recv.read_to_end(1024).await.is_ok()
                            && send.write_all(&payload).await.is_ok()
                        {
                            let _ = send.finish();
                            let _ = send.finished().await;
                        }
                    });
                }
            });
        }
    });
    endpoint
}

/// A server answering every request stream with the payload, and one download with a client,
/// for quinn 0.11 and for noq 1.4 (a quinn fork with RFC 10069 multipath, here without it: both
/// are single-path transfers). Their APIs are the same, so one definition serves both.
macro_rules! quinn_like {
    ($krate:ident, $server:ident, $download:ident) => {
        fn $server(payload: Arc<Vec<u8>>) -> $krate::Endpoint {
            let (cert, key) = certificate();
            let tls = tls::server_config(&[hq::ALPN], vec![cert], key).expect("tls");
            let crypto =
                $krate::crypto::rustls::QuicServerConfig::try_from(Arc::unwrap_or_clone(tls))
                    .expect("crypto");
            let endpoint = $krate::Endpoint::server(
                $krate::ServerConfig::with_crypto(Arc::new(crypto)),
                "127.0.0.1:0".parse().expect("addr"),
            )
            .expect("bind");
            let ep = endpoint.clone();
            tokio::spawn(async move {
                while let Some(incoming) = ep.accept().await {
                    let payload = payload.clone();
                    tokio::spawn(async move {
                        let Ok(conn) = incoming.await else { return };
                        while let Ok((mut send, mut recv)) = conn.accept_bi().await {
                            let payload = payload.clone();
                            tokio::spawn(async move {
                                if recv.read_to_end(1024).await.is_ok()
                                    && send.write_all(&payload).await.is_ok()
                                {
                                    let _ = send.finish();
                                    let _ = send.stopped().await;
                                }
                            });
                        }
                    });
                }
            });
            endpoint
        }

        async fn $download(server: SocketAddr) -> Duration {
            let tls = tls::client_config(&[hq::ALPN], tls::ServerTrust::Insecure).expect("tls");
            let crypto =
                $krate::crypto::rustls::QuicClientConfig::try_from(Arc::unwrap_or_clone(tls))
                    .expect("crypto");
            let client =
                $krate::Endpoint::client("127.0.0.1:0".parse().expect("addr")).expect("bind");
            let conn = client
                .connect_with(
                    $krate::ClientConfig::new(Arc::new(crypto)),
                    server,
                    "localhost",
                )
                .expect("connect")
                .await
                .expect("handshake");
            let started = Instant::now();
            let (mut send, mut recv) = conn.open_bi().await.expect("open");
            send.write_all(REQUEST).await.expect("request");
            send.finish().expect("finish");
            let mut buf = vec![0u8; 256 * 1024];
            let mut total = 0;
            while let Some(n) = recv.read(&mut buf).await.expect("read") {
                total += n;
            }
            let elapsed = started.elapsed();
            assert_eq!(total, SIZE);
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
    let tls = tls::client_config(&[hq::ALPN], tls::ServerTrust::Insecure).expect("tls");
    let client = Endpoint::client(&["127.0.0.1:0".parse().expect("addr")]).expect("bind");
    let conn = client
        .connect_with(
            config::client(tls, TransportConfig::default()),
            server,
            "localhost",
        )
        .expect("connect")
        .await
        .expect("handshake");
    let started = Instant::now();
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    send.write_all(REQUEST).await.expect("request");
    send.finish().expect("finish");
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0;
    while let Some(n) = recv.read(&mut buf).await.expect("read") {
        total += n;
    }
    let elapsed = started.elapsed();
    assert_eq!(total, SIZE);
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
    let rt = runtime();
    let payload = Arc::new(vec![0x5a_u8; SIZE]);
    let (ours, quinn, noq) = rt.block_on(async {
        (
            mpquic_server(payload.clone()),
            quinn_server(payload.clone()),
            noq_server(payload.clone()),
        )
    });
    let ours_addr = ours.local_addr();
    let quinn_addr = quinn.local_addr().expect("quinn addr");
    let noq_addr = noq.local_addr().expect("noq addr");
    let mut group = c.benchmark_group("loopback_50MB");
    group
        .throughput(Throughput::Bytes(SIZE as u64))
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(8));
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
