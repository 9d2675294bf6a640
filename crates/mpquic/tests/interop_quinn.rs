//! Interoperability with quinn 0.11 over loopback UDP, both directions of data:
//! our client against a quinn server and a quinn client against our server.

mod common;

use std::sync::Arc;

use common::{
    addr, connect_client, payload, quinn_configs, root_with, server_endpoint, start_server,
    transport, within, MB,
};
use mpquic::{hq, MultipathMode};
use tokio::io::AsyncWriteExt;

/// A quinn server answering `GET /<n>` with `data` and, on any other first line, reading the
/// whole stream and replying with its length. Returns its address.
fn quinn_server(data: Arc<Vec<u8>>) -> (quinn::Endpoint, std::net::SocketAddr) {
    let (server_config, _) = quinn_configs();
    let endpoint =
        quinn::Endpoint::server(server_config, addr("127.0.0.1:0")).expect("quinn server");
    let local = endpoint.local_addr().expect("local addr");
    let ep = endpoint.clone();
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let data = data.clone();
            tokio::spawn(async move {
                let conn = incoming.await.expect("quinn handshake");
                while let Ok((mut send, mut recv)) = conn.accept_bi().await {
                    let request = recv.read_to_end(20 * MB).await.expect("quinn read");
                    if request.starts_with(b"GET /") {
                        send.write_all(&data).await.expect("quinn write");
                    } else {
                        send.write_all(request.len().to_string().as_bytes())
                            .await
                            .expect("quinn reply");
                    }
                    send.finish().expect("quinn finish");
                    let _ = send.stopped().await;
                }
            });
        }
    });
    (endpoint, local)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_downloads_from_quinn_server() {
    common::init_tracing();
    let data = Arc::new(payload(10 * MB, 3));
    let (_quinn, server_addr) = quinn_server(data.clone());
    let (client, conn) = connect_client(server_addr, transport(MultipathMode::Auto)).await;
    assert_eq!(conn.alpn_protocol().as_deref(), Some(hq::ALPN));
    let mut body = hq::request(&conn, "/file").await.expect("request");
    let got = within("download", body.read_to_end(20 * MB))
        .await
        .expect("read");
    assert!(
        got == *data,
        "got {} bytes, expected {} (content differs)",
        got.len(),
        data.len()
    );
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_uploads_to_quinn_server() {
    let data = payload(10 * MB, 4);
    let (_quinn, server_addr) = quinn_server(Arc::new(Vec::new()));
    let (_client, conn) = connect_client(server_addr, transport(MultipathMode::Auto)).await;
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    within("upload", async {
        send.write_all(&data).await.expect("write");
        send.shutdown().await.expect("finish");
    })
    .await;
    let reply = within("reply", recv.read_to_end(100)).await.expect("reply");
    assert_eq!(
        reply,
        data.len().to_string().as_bytes(),
        "quinn counted a different length"
    );
}

/// A quinn client connected to `server`, trusting any certificate our server presents.
async fn quinn_client(server: std::net::SocketAddr) -> (quinn::Endpoint, quinn::Connection) {
    let tls =
        mpquic::tls::client_config(&[hq::ALPN], mpquic::tls::ServerTrust::Insecure).expect("tls");
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(Arc::unwrap_or_clone(tls))
        .expect("quinn crypto");
    let mut endpoint = quinn::Endpoint::client(addr("127.0.0.1:0")).expect("quinn client");
    endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    let conn = within(
        "quinn handshake",
        endpoint.connect(server, "localhost").expect("connect"),
    )
    .await
    .expect("quinn handshake with us");
    (endpoint, conn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_client_downloads_from_our_server() {
    let data = payload(10 * MB, 5);
    let (_dir, root) = root_with("file.bin", &data);
    let server = start_server(root, transport(MultipathMode::Auto));
    let (endpoint, conn) = quinn_client(server.local_addr()).await;
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    send.write_all(b"GET /file.bin\r\n").await.expect("request");
    send.finish().expect("finish");
    let got = within("download", recv.read_to_end(20 * MB))
        .await
        .expect("quinn read");
    assert!(
        got == data,
        "quinn got {} bytes, expected {} (content differs)",
        got.len(),
        data.len()
    );
    // A missing file resets the stream with 404.
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    send.write_all(b"GET /missing\r\n").await.expect("request");
    send.finish().expect("finish");
    let err = within("404", recv.read_to_end(MB))
        .await
        .expect_err("missing file");
    assert!(err.to_string().contains("404"), "unexpected error {err}");
    conn.close(0u32.into(), b"done");
    within("quinn idle", endpoint.wait_idle()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_client_uploads_to_our_server() {
    let data = payload(10 * MB, 6);
    let server = server_endpoint(transport(MultipathMode::Auto));
    let server_addr = server.local_addr();
    let receiver = tokio::spawn(async move {
        let conn = server.accept().await.expect("incoming");
        let (mut send, mut recv) = conn.accept_bi().await.expect("stream");
        let got = recv.read_to_end(20 * MB).await.expect("upload");
        send.write_all(got.len().to_string().as_bytes())
            .await
            .expect("reply");
        send.finish().expect("finish");
        send.finished().await.expect("acknowledged");
        got
    });
    let (_endpoint, conn) = quinn_client(server_addr).await;
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    within("upload", send.write_all(&data))
        .await
        .expect("quinn write");
    send.finish().expect("finish");
    let reply = within("reply", recv.read_to_end(100)).await.expect("reply");
    assert_eq!(reply, data.len().to_string().as_bytes());
    let got = within("server", receiver).await.expect("server task");
    assert!(
        got == data,
        "we got {} bytes from quinn, expected {}",
        got.len(),
        data.len()
    );
}
