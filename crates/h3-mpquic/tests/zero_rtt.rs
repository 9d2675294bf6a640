//! HTTP/3 in 0-RTT (RFC 9001 §4.6, RFC 9114 §3.3): our h3 server answers a GET that arrived in
//! 0-RTT packets, before the client's handshake completed. Through the emulator with 10 ms of
//! one-way delay: on bare loopback the handshake may complete before the h3 client has written
//! its request, and nothing would be left for 0-RTT.

// mpquic's test helpers: payloads, TLS, endpoints and quinn configurations.
#[path = "../../mpquic/tests/common/mod.rs"]
mod common;

use common::{addr, payload, root_with, transport, within, MB};
use mpquic::{config, tls, Endpoint, MultipathMode};
use mpquic_emulate::{EmulatedPath, Emulator, EmulatorConfig};
use mpquic_h3::ALPN;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn h3_get_in_0rtt_is_served() {
    let data = payload(300_000, 41);
    let (_dir, root) = root_with("file.bin", &data);
    let (cert, key) = tls::self_signed(&["localhost"]).expect("certificate");
    let server_tls = tls::server_config_0rtt(&[ALPN], vec![cert], key).expect("server tls");
    let server = Endpoint::server(
        config::server(server_tls, transport(MultipathMode::Auto)),
        &[addr("127.0.0.1:0")],
    )
    .expect("bind server");
    let ep = server.clone();
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let root = root.clone();
            tokio::spawn(async move {
                if let Ok(conn) = incoming.await {
                    let _ = mpquic_h3::server::serve_connection(conn, root).await;
                }
            });
        }
    });
    let emulator = Emulator::start(EmulatorConfig {
        listen: addr("127.0.0.1:0"),
        server: server.local_addr(),
        paths: vec![EmulatedPath::parse("rate=100mbit,delay=10ms", 1).expect("path")],
        seed: 1,
    })
    .expect("emulator");
    let server_addr = emulator.listen_addr();
    let uri: http::Uri = format!("https://localhost:{}/file.bin", server_addr.port())
        .parse()
        .unwrap();
    let client = Endpoint::client(&[addr("127.0.0.1:0")]).expect("bind client");
    let tls = tls::client_config_0rtt(&[ALPN], tls::ServerTrust::Insecure, None).expect("tls");
    let config = config::client(tls, transport(MultipathMode::Auto));
    for attempt in 0..2 {
        let connecting = client
            .connect_with(config.clone(), server_addr, "localhost")
            .expect("connect");
        let (conn, accepted) = match connecting.into_0rtt() {
            Ok((conn, accepted)) => (conn, Some(accepted)),
            Err(connecting) => (
                within("handshake", connecting).await.expect("handshake"),
                None,
            ),
        };
        assert_eq!(accepted.is_some(), attempt == 1, "0-RTT only with a ticket");
        let mut response = within("request", mpquic_h3::client::get(&conn, uri.clone()))
            .await
            .expect("response");
        assert_eq!(response.status(), 200);
        let got = within("download", response.read_to_end(MB))
            .await
            .expect("body");
        assert!(got == data, "attempt {attempt}: the body differs");
        if let Some(accepted) = accepted {
            assert!(within("handshake", accepted).await, "0-RTT rejected");
            let stats = conn.stats();
            assert!(stats.zero_rtt_packets_sent >= 1, "{stats:?}");
            assert_eq!(stats.zero_rtt_packets_requeued, 0);
        }
        drop(response);
        conn.close(0, b"done");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
