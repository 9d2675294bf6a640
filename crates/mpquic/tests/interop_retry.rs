//! Retry (RFC 9000 §8.1.2, §17.2.5) against quinn in both roles, over loopback UDP: the
//! integrity tag (RFC 9001 §5.8), the token echo and the transport parameters that
//! authenticate the Retry (§7.3) must all satisfy another stack.

mod common;

use std::sync::Arc;

use common::{
    addr, connect_client, payload, quinn_answer, quinn_configs, root_with, transport, within, MB,
};
use mpquic::{config, hq, tls, Endpoint, MultipathMode, RetryPolicy};

/// Our hq server on loopback asking every client to Retry first.
fn retrying_server(root: Arc<std::path::PathBuf>) -> Endpoint {
    let (cert, key) = tls::self_signed(&["localhost"]).expect("certificate");
    let tls = tls::server_config(&[hq::ALPN], vec![cert], key).expect("server tls");
    let mut server_config = config::server(tls, transport(MultipathMode::Auto));
    server_config.retry = RetryPolicy::Always;
    let endpoint = Endpoint::server(server_config, &[addr("127.0.0.1:0")]).expect("bind server");
    common::serve_each(&endpoint, move |conn| {
        let root = root.clone();
        async move {
            hq::serve_connection(conn, root).await;
        }
    });
    endpoint
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_client_follows_our_retry() {
    let data = payload(MB, 8);
    let (_dir, root) = root_with("file.bin", &data);
    let server = retrying_server(root);
    let client_tls =
        tls::client_config(&[hq::ALPN], tls::ServerTrust::Insecure).expect("client tls");
    let crypto =
        quinn::crypto::rustls::QuicClientConfig::try_from(Arc::unwrap_or_clone(client_tls))
            .expect("quinn crypto");
    let mut endpoint = quinn::Endpoint::client(addr("127.0.0.1:0")).expect("quinn client");
    endpoint.set_default_client_config(quinn::ClientConfig::new(Arc::new(crypto)));
    let conn = within(
        "quinn handshake through a Retry",
        endpoint
            .connect(server.local_addr(), "localhost")
            .expect("connect"),
    )
    .await
    .expect("quinn accepted our Retry and transport parameters");
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    send.write_all(b"GET /file.bin\r\n").await.expect("request");
    send.finish().expect("finish");
    let got = within("download", recv.read_to_end(2 * MB))
        .await
        .expect("quinn read");
    assert!(
        got == data,
        "quinn got {} bytes, content differs",
        got.len()
    );
    conn.close(0u32.into(), b"done");
    within("quinn idle", endpoint.wait_idle()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_follows_a_quinn_retry() {
    let data = Arc::new(payload(MB, 9));
    let (server_config, _) = quinn_configs();
    let quinn = quinn::Endpoint::server(server_config, addr("127.0.0.1:0")).expect("quinn");
    let server_addr = quinn.local_addr().expect("addr");
    let retries = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let (ep, served, counter) = (quinn.clone(), data.clone(), retries.clone());
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            if !incoming.remote_address_validated() {
                counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                incoming.retry().expect("retry");
                continue;
            }
            let data = served.clone();
            tokio::spawn(async move {
                let conn = incoming.await.expect("quinn handshake");
                if let Ok((send, recv)) = conn.accept_bi().await {
                    quinn_answer(send, recv, &data).await;
                }
            });
        }
    });
    let (client, conn) = connect_client(server_addr, transport(MultipathMode::Auto)).await;
    let mut body = hq::request(&conn, "/file").await.expect("request");
    let got = within("download", body.read_to_end(2 * MB))
        .await
        .expect("read");
    assert!(got == *data, "got {} bytes, content differs", got.len());
    assert_eq!(
        retries.load(std::sync::atomic::Ordering::Relaxed),
        1,
        "quinn asked for exactly one Retry"
    );
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}
