//! What the loopback benchmarks share: servers that answer every request stream with the
//! payload, for mpquic and for the quinn-like stacks (quinn 0.11, noq 1.4), and the timed read
//! of one answer.

use std::net::SocketAddr;
use std::sync::Arc;

use mpquic::{config, hq, tls, Endpoint, TransportConfig};

/// Serve the payload on every request stream of an endpoint of any of the stacks (their
/// server APIs agree); `$done` is the send stream's wait for the peer's acknowledgement
/// (`finished` in mpquic, `stopped` in quinn and noq).
macro_rules! serve_payload {
    ($endpoint:expr, $payload:expr, $done:ident) => {{
        let ep = $endpoint.clone();
        let payload: Arc<Vec<u8>> = $payload;
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
                                let _ = send.$done().await;
                            }
                        });
                    }
                });
            }
        });
    }};
}

/// A request: `GET /` and FIN; the answer is the payload.
pub const REQUEST: &[u8] = b"GET /\r\n";

/// The runtime both ends of a benchmark run on: two worker threads.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// The benchmark group of one transfer size: throughput in bytes, ten samples of at least
/// eight seconds in all after one second of warm-up.
pub fn transfer_group<'c>(
    c: &'c mut criterion::Criterion,
    name: &str,
    size: usize,
) -> criterion::BenchmarkGroup<'c, criterion::measurement::WallTime> {
    let mut group = c.benchmark_group(name);
    group
        .throughput(criterion::Throughput::Bytes(size as u64))
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_secs(1))
        .measurement_time(std::time::Duration::from_secs(8));
    group
}

/// A fresh self-signed certificate for "localhost".
pub fn certificate() -> (
    rustls_pki_types::CertificateDer<'static>,
    rustls_pki_types::PrivateKeyDer<'static>,
) {
    tls::self_signed(&["localhost"]).expect("certificate")
}

/// Our server on `bind` answering every request stream with the payload.
pub fn mpquic_server(
    payload: Arc<Vec<u8>>,
    transport: TransportConfig,
    bind: SocketAddr,
) -> Endpoint {
    let (cert, key) = certificate();
    let tls = tls::server_config(&[hq::ALPN], vec![cert], key).expect("tls");
    let endpoint = Endpoint::server(config::server(tls, transport), &[bind]).expect("bind");
    serve_payload!(endpoint, payload, finished);
    endpoint
}

/// The rustls configuration of a quinn-like server (mpquic's, with a fresh certificate).
pub fn server_tls() -> rustls::ServerConfig {
    let (cert, key) = certificate();
    Arc::unwrap_or_clone(tls::server_config(&[hq::ALPN], vec![cert], key).expect("tls"))
}

/// The rustls configuration of a quinn-like client (mpquic's, accepting any certificate).
pub fn client_tls() -> rustls::ClientConfig {
    Arc::unwrap_or_clone(tls::client_config(&[hq::ALPN], tls::ServerTrust::Insecure).expect("tls"))
}

/// Send [`REQUEST`] on a new stream of `$conn` and read the answer to its end; evaluates to
/// the time from the request to the last byte. Checks that `$size` bytes arrived. One
/// definition for every stack (their stream APIs agree).
macro_rules! timed_download {
    ($conn:expr, $size:expr) => {{
        let started = std::time::Instant::now();
        let (mut send, mut recv) = $conn.open_bi().await.expect("open");
        send.write_all(crate::support::REQUEST)
            .await
            .expect("request");
        send.finish().expect("finish");
        let mut buf = vec![0u8; 256 * 1024];
        let mut total = 0;
        while let Some(n) = recv.read(&mut buf).await.expect("read") {
            total += n;
        }
        assert_eq!(total, $size);
        started.elapsed()
    }};
}
