//! HTTP/3 over mpquic through the h3 crate: our client (the adapter over mpquic) against a
//! quinn + h3-quinn server, a quinn + h3-quinn client against our file server, and our client
//! against our server over two paths. Every download is 10 MB, compared byte for byte.

// mpquic's test helpers: payloads, TLS, endpoints and quinn configurations.
#[path = "../../mpquic/tests/common/mod.rs"]
mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::{Buf, Bytes};
use common::{
    client_config_with, connect_with, payload, quinn_configs_with, root_with, server_endpoint_with,
    transport, within, MB,
};
use mpquic::{MultipathMode, PathStatus, SchedulerKind, TransportConfig};
use mpquic_h3::ALPN;

/// Body bytes per DATA frame the quinn server sends.
const QUINN_CHUNK: usize = 64 * 1024;

/// A quinn + h3-quinn server answering every request with `data` (status 200). Returns it and
/// its address.
fn quinn_h3_server(data: Bytes) -> (quinn::Endpoint, SocketAddr) {
    let (server_config, _) = quinn_configs_with(&[ALPN]);
    let endpoint =
        quinn::Endpoint::server(server_config, common::addr("127.0.0.1:0")).expect("quinn server");
    let local = endpoint.local_addr().expect("local addr");
    let ep = endpoint.clone();
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let data = data.clone();
            tokio::spawn(async move {
                let conn = incoming.await.expect("quinn handshake");
                let mut h3 =
                    h3::server::Connection::<_, Bytes>::new(h3_quinn::Connection::new(conn))
                        .await
                        .expect("h3 server connection");
                while let Ok(Some(resolver)) = h3.accept().await {
                    let (_request, mut stream) = resolver.resolve_request().await.expect("request");
                    let response = http::Response::builder()
                        .status(200)
                        .header("content-length", data.len())
                        .body(())
                        .expect("response");
                    stream.send_response(response).await.expect("send response");
                    let mut rest = data.clone();
                    while rest.has_remaining() {
                        let chunk = rest.split_to(rest.len().min(QUINN_CHUNK));
                        stream.send_data(chunk).await.expect("send data");
                    }
                    stream.finish().await.expect("finish");
                }
            });
        }
    });
    (endpoint, local)
}

/// Our HTTP/3 file server on 127.0.0.1 serving `root`, with transport settings `transport`.
fn our_h3_server(root: Arc<std::path::PathBuf>, transport: TransportConfig) -> mpquic::Endpoint {
    let endpoint = server_endpoint_with(&[ALPN], transport);
    let ep = endpoint.clone();
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let root = root.clone();
            tokio::spawn(async move {
                let Ok(conn) = incoming.await else { return };
                assert_eq!(conn.alpn_protocol().as_deref(), Some(ALPN));
                let _ = mpquic_h3::server::serve_connection(conn, root).await;
            });
        }
    });
    endpoint
}

fn assert_same(got: &[u8], expected: &[u8], who: &str) {
    assert!(
        got == expected,
        "{who} got {} bytes, expected {} (content differs)",
        got.len(),
        expected.len()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_gets_10mb_from_quinn_h3_server() {
    common::init_tracing();
    let data = Bytes::from(payload(10 * MB, 21));
    let (_quinn, server) = quinn_h3_server(data.clone());
    let (client, conn) = connect_with(
        &["127.0.0.1:0"],
        server,
        client_config_with(&[ALPN], transport(MultipathMode::Auto)),
    )
    .await;
    assert_eq!(conn.alpn_protocol().as_deref(), Some(ALPN));
    get_file_exact(&conn, server.port(), &data).await;
    within("close", client.wait_idle()).await;
}

/// Our client's `GET /file.bin` on `conn` to the server at `port`: status 200 and a body equal
/// to `data`.
async fn get_file_exact(conn: &mpquic::Connection, port: u16, data: &[u8]) {
    let uri = format!("https://localhost:{port}/file.bin");
    let mut response = within(
        "request",
        mpquic_h3::client::get(conn, uri.parse().unwrap()),
    )
    .await
    .expect("response");
    assert_eq!(response.status(), 200);
    let got = within("download", response.read_to_end(20 * MB))
        .await
        .expect("body");
    assert_same(&got, data, "our client");
}

/// A quinn + h3-quinn client's `GET url` against `server`: the status and the body.
async fn quinn_h3_get(server: SocketAddr, path: &str) -> (http::StatusCode, Vec<u8>) {
    let tls = mpquic::tls::client_config(&[ALPN], mpquic::tls::ServerTrust::Insecure).expect("tls");
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(Arc::unwrap_or_clone(tls))
        .expect("quinn crypto");
    let mut endpoint = quinn::Endpoint::client(common::addr("127.0.0.1:0")).expect("quinn client");
    endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    let conn = within(
        "quinn handshake",
        endpoint.connect(server, "localhost").expect("connect"),
    )
    .await
    .expect("quinn handshake with us");
    let (mut driver, mut sender) = h3::client::new(h3_quinn::Connection::new(conn))
        .await
        .expect("h3 client");
    let drive = tokio::spawn(async move {
        let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
    });
    let request = http::Request::get(format!("https://localhost:{}{path}", server.port()))
        .body(())
        .expect("request");
    let (status, body) = within("quinn h3 download", async {
        let mut stream = sender.send_request(request).await.expect("send request");
        stream.finish().await.expect("finish request");
        let response = stream.recv_response().await.expect("response");
        let mut body = Vec::new();
        while let Some(mut chunk) = stream.recv_data().await.expect("body") {
            while chunk.has_remaining() {
                let part = chunk.chunk();
                body.extend_from_slice(part);
                let n = part.len();
                chunk.advance(n);
            }
        }
        (response.status(), body)
    })
    .await;
    drop(sender);
    let _ = within("h3 close", drive).await;
    endpoint.wait_idle().await;
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_h3_client_gets_10mb_from_our_server() {
    common::init_tracing();
    let data = payload(10 * MB, 22);
    let (_dir, root) = root_with("file.bin", &data);
    let server = our_h3_server(root, transport(MultipathMode::Auto));
    let (status, got) = quinn_h3_get(server.local_addr(), "/file.bin").await;
    assert_eq!(status, 200);
    assert_same(&got, &data, "quinn's h3 client");
    let (status, body) = quinn_h3_get(server.local_addr(), "/missing.bin").await;
    assert_eq!(status, 404, "{}", String::from_utf8_lossy(&body));
}

/// Our client and server over two loopback paths (127.0.0.1 and 127.0.0.2). The server
/// schedules round robin, as in mpquic's own two-path test: on two identical loopback paths
/// min-RTT may legitimately keep almost everything on one of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h3_download_over_two_paths_uses_both() {
    common::init_tracing();
    let data = payload(10 * MB, 23);
    let (_dir, root) = root_with("file.bin", &data);
    let mode = MultipathMode::Auto;
    let server = our_h3_server(root, transport(mode).scheduler(SchedulerKind::RoundRobin));
    let (client, conn) = connect_with(
        &["127.0.0.1:0", "127.0.0.2:0"],
        server.local_addr(),
        client_config_with(&[ALPN], transport(mode)),
    )
    .await;
    let second = client.local_addrs()[1];
    within(
        "validation",
        conn.open_path(second, None, PathStatus::Available),
    )
    .await
    .expect("open second path");
    get_file_exact(&conn, server.local_addr().port(), &data).await;
    let paths = conn.path_stats();
    for p in &paths {
        eprintln!(
            "path {} {} -> {}: received {} B, sent {} B",
            p.id, p.local, p.remote, p.counters.bytes_received, p.counters.bytes_sent
        );
    }
    assert_eq!(paths.len(), 2, "{paths:?}");
    assert_eq!(paths[1].local, second);
    for p in &paths {
        assert!(
            p.counters.bytes_received > 100_000,
            "path {} carried only {} bytes",
            p.id,
            p.counters.bytes_received
        );
    }
    within("close", client.wait_idle()).await;
}
