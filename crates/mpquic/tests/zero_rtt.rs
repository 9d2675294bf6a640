//! 0-RTT through the runtime (RFC 9001 §4.6): a second connection with a remembered session
//! sends its request in 0-RTT packets to our server and to a quinn server; a server that does
//! not know the ticket rejects early data and the client resends it in 1-RTT, byte-exact; many
//! connections sharing one 0-RTT client configuration against quinn all succeed; a quinn
//! client's 0-RTT to our server after its limits shrank is rejected, not accepted and closed on.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use common::tickets::WatchedStore;
use common::{addr, payload, root_with, transport, within};
use mpquic::{config, hq, tls, Connection, Endpoint, MultipathMode};

const MB: usize = 1 << 20;

/// Our server on 127.0.0.1:0 accepting 0-RTT, echoing every bidirectional stream (read to the
/// end, write it back) or, for hq-interop GET requests, serving `root`.
fn our_server(
    root: Arc<std::path::PathBuf>,
) -> (
    Endpoint,
    tokio::sync::mpsc::UnboundedReceiver<mpquic::ConnectionStats>,
) {
    let (cert, key) = tls::self_signed(&["localhost"]).expect("certificate");
    let server_tls = tls::server_config_0rtt(&[hq::ALPN], vec![cert], key).expect("server tls");
    let endpoint = Endpoint::server(
        config::server(server_tls, transport(MultipathMode::Auto)),
        &[addr("127.0.0.1:0")],
    )
    .expect("bind server");
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    let ep = endpoint.clone();
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let (root, tx) = (root.clone(), tx.clone());
            tokio::spawn(async move {
                let Ok(conn) = incoming.await else { return };
                serve(&conn, &root).await;
                let _ = tx.send(conn.stats());
            });
        }
    });
    (endpoint, rx)
}

async fn serve(conn: &Connection, root: &Arc<std::path::PathBuf>) {
    while let Ok((mut send, mut recv)) = conn.accept_bi().await {
        let Ok(request) = recv.read_to_end(4 * MB).await else {
            return;
        };
        if request.starts_with(b"GET /") {
            let path = String::from_utf8_lossy(&request[4..]).trim().to_owned();
            let data = std::fs::read(root.join(path.trim_start_matches('/'))).unwrap_or_default();
            let _ = send.write_all(&data).await;
        } else {
            let _ = send.write_all(&request).await;
        }
        let _ = send.finish();
    }
}

/// A relay with 10 ms of one-way delay in front of `server`: on bare loopback the handshake
/// can complete (under CPU load) before the test task has written its request, leaving
/// nothing for 0-RTT. Returns the relay (keep it) and the address to connect to.
fn delayed(server: SocketAddr) -> (mpquic_emulate::Emulator, SocketAddr) {
    delayed_by(server, "rate=100mbit,delay=10ms")
}

fn delayed_by(server: SocketAddr, path: &str) -> (mpquic_emulate::Emulator, SocketAddr) {
    let emulator = common::emulator(server, &[path]);
    let listen = emulator.listen_addr();
    (emulator, listen)
}

fn client_0rtt() -> (mpquic::ClientConfig, Arc<WatchedStore>) {
    let store = WatchedStore::new();
    let tls = tls::client_config_0rtt(&[hq::ALPN], tls::ServerTrust::Insecure, Some(store.clone()))
        .expect("client tls");
    (config::client(tls, transport(MultipathMode::Auto)), store)
}

/// A first connection that fetches `/file` and leaves its tickets in the config's store.
async fn warm_up(
    client: &Endpoint,
    server: SocketAddr,
    config: &mpquic::ClientConfig,
    store: &WatchedStore,
) {
    let connecting = client
        .connect_with(config.clone(), server, "localhost")
        .expect("connect");
    let connecting = match connecting.into_0rtt() {
        Ok(_) => panic!("0-RTT without a ticket"),
        Err(c) => c,
    };
    let conn = within("first handshake", connecting)
        .await
        .expect("handshake");
    let mut body = hq::request(&conn, "/file").await.expect("request");
    within("first download", body.read_to_end(4 * MB))
        .await
        .expect("read");
    store.wait_for_tickets(1).await;
    conn.close(0, b"done");
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
}

/// The second connection: `into_0rtt` succeeds, the GET goes out in 0-RTT. Returns the
/// connection, the body and whether the server accepted the 0-RTT data.
async fn fetch_0rtt(
    client: &Endpoint,
    server: SocketAddr,
    config: &mpquic::ClientConfig,
) -> (Connection, Vec<u8>, bool) {
    let connecting = client
        .connect_with(config.clone(), server, "localhost")
        .expect("connect");
    let (conn, accepted) = match connecting.into_0rtt() {
        Ok(pair) => pair,
        Err(_) => panic!("no 0-RTT with a stored ticket"),
    };
    let mut body = hq::request(&conn, "/file").await.expect("request");
    let got = within("0-RTT download", body.read_to_end(4 * MB))
        .await
        .expect("read");
    let accepted = within("handshake", accepted).await;
    (conn, got, accepted)
}

/// MUST SHOW 1 (our server): the request of the second connection travels in 0-RTT packets,
/// which the server opens and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_connection_sends_request_in_0rtt_to_our_server() {
    let data = payload(100_000, 1);
    let (_dir, root) = root_with("file", &data);
    let (server, mut stats) = our_server(root);
    let (_relay, server_addr) = delayed(server.local_addr());
    let client = Endpoint::client(&[addr("127.0.0.1:0")]).expect("bind client");
    let (config, store) = client_0rtt();
    warm_up(&client, server_addr, &config, &store).await;
    let first = within("server stats", stats.recv()).await.expect("stats");
    assert_eq!(first.zero_rtt_packets_received, 0);
    let (conn, got, accepted) = fetch_0rtt(&client, server_addr, &config).await;
    assert!(got == data, "the 0-RTT download differs");
    assert!(accepted, "our server rejected 0-RTT");
    let cs = conn.stats();
    assert!(cs.zero_rtt_packets_sent >= 1, "{cs:?}");
    assert_eq!(conn.zero_rtt_accepted(), Some(true));
    conn.close(0, b"done");
    let ss = within("server stats", stats.recv()).await.expect("stats");
    assert_eq!(ss.zero_rtt_packets_received, cs.zero_rtt_packets_sent);
    assert_eq!(ss.zero_rtt_accepted, Some(true));
}

/// A quinn server that accepts 0-RTT (max_early_data_size 0xffffffff) and serves every
/// connection from its ClientHello on (`into_0rtt`), answering `GET /...` with `data`.
fn quinn_0rtt_server(data: Arc<Vec<u8>>) -> (quinn::Endpoint, SocketAddr) {
    let (cert, key) = tls::self_signed(&["localhost"]).expect("certificate");
    let server_tls = tls::server_config_0rtt(&[hq::ALPN], vec![cert], key).expect("tls");
    let crypto =
        quinn::crypto::rustls::QuicServerConfig::try_from(Arc::unwrap_or_clone(server_tls))
            .expect("quinn server crypto");
    let config = quinn::ServerConfig::with_crypto(Arc::new(crypto));
    let endpoint = quinn::Endpoint::server(config, addr("127.0.0.1:0")).expect("quinn server");
    let local = endpoint.local_addr().expect("local addr");
    let ep = endpoint.clone();
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let data = data.clone();
            tokio::spawn(async move {
                let Ok(connecting) = incoming.accept() else {
                    return;
                };
                let conn = match connecting.into_0rtt() {
                    Ok((conn, _)) => conn,
                    Err(connecting) => match connecting.await {
                        Ok(conn) => conn,
                        Err(_) => return,
                    },
                };
                while let Ok((mut send, mut recv)) = conn.accept_bi().await {
                    if recv.read_to_end(64 * 1024).await.is_err() {
                        return;
                    }
                    let _ = send.write_all(&data).await;
                    let _ = send.finish();
                }
            });
        }
    });
    (endpoint, local)
}

/// MUST SHOW 1 (quinn): quinn accepts our 0-RTT request and answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_connection_sends_request_in_0rtt_to_quinn() {
    let data = Arc::new(payload(100_000, 2));
    let (_quinn, quinn_addr) = quinn_0rtt_server(data.clone());
    let (_relay, server_addr) = delayed(quinn_addr);
    let client = Endpoint::client(&[addr("127.0.0.1:0")]).expect("bind client");
    let (config, store) = client_0rtt();
    warm_up(&client, server_addr, &config, &store).await;
    let (conn, got, accepted) = fetch_0rtt(&client, server_addr, &config).await;
    assert!(got == *data, "the 0-RTT download differs");
    assert!(accepted, "quinn rejected 0-RTT");
    let cs = conn.stats();
    assert!(cs.zero_rtt_packets_sent >= 1, "{cs:?}");
    assert_eq!(cs.zero_rtt_packets_requeued, 0);
}

/// MUST SHOW 2: a server that does not know the ticket (another server process under the same
/// name) rejects 0-RTT; the 0-RTT part of a 200 kB echo is sent again in 1-RTT and the echo is
/// byte-exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rejected_0rtt_is_resent_in_1rtt() {
    let (_dir, root) = root_with("file", &payload(1000, 3));
    let (first, _) = our_server(root.clone());
    let (second, _) = our_server(root);
    let client = Endpoint::client(&[addr("127.0.0.1:0")]).expect("bind client");
    let (config, store) = client_0rtt();
    warm_up(&client, first.local_addr(), &config, &store).await;
    let (_relay, second_addr) = delayed(second.local_addr());
    let connecting = client
        .connect_with(config, second_addr, "localhost")
        .expect("connect");
    let (conn, accepted) = connecting.into_0rtt().expect("0-RTT with a stored ticket");
    let data = payload(200_000, 4);
    let (mut send, mut recv) = conn.open_bi().await.expect("stream");
    let writer = {
        let data = data.clone();
        tokio::spawn(async move {
            send.write_all(&data).await.expect("write");
            send.finish().expect("finish");
        })
    };
    let echo = within("echo", recv.read_to_end(MB)).await.expect("read");
    writer.await.expect("writer");
    assert!(!within("handshake", accepted).await, "0-RTT was accepted");
    assert_eq!(echo.len(), data.len());
    assert!(echo == data, "the echo differs");
    let cs = conn.stats();
    assert!(cs.zero_rtt_packets_sent > 0, "{cs:?}");
    assert_eq!(cs.zero_rtt_packets_requeued, cs.zero_rtt_packets_sent);
    assert_eq!(conn.zero_rtt_accepted(), Some(false));
}

/// MUST SHOW 3: 150 connections (four at a time) sharing one 0-RTT client configuration
/// against quinn: none fails, and most resume with 0-RTT accepted. The earlier bug (issue 12:
/// the remembered initial_source_connection_id checked as the new one) would fail them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_0rtt_connections_to_quinn_all_succeed() {
    let data = Arc::new(payload(2000, 5));
    let (_quinn, server_addr) = quinn_0rtt_server(data.clone());
    let client = Endpoint::client(&[addr("127.0.0.1:0")]).expect("bind client");
    let (config, _) = client_0rtt();
    let (mut failures, mut accepted) = (Vec::new(), 0);
    for batch in 0..150 / 4 + 1 {
        let mut tasks = tokio::task::JoinSet::new();
        for i in batch * 4..(batch * 4 + 4).min(150) {
            let (client, config, data) = (client.clone(), config.clone(), data.clone());
            tasks.spawn(async move {
                let connecting = client
                    .connect_with(config, server_addr, "localhost")
                    .map_err(|e| format!("{i}: connect: {e}"))?;
                let (conn, zero_rtt) = match connecting.into_0rtt() {
                    Ok((conn, accepted)) => (conn, Some(accepted)),
                    Err(c) => (c.await.map_err(|e| format!("{i}: handshake: {e}"))?, None),
                };
                let mut body = hq::request(&conn, "/small")
                    .await
                    .map_err(|e| format!("{i}: request: {e}"))?;
                let got = body
                    .read_to_end(MB)
                    .await
                    .map_err(|e| format!("{i}: read: {e}"))?;
                let accepted = match zero_rtt {
                    Some(a) => a.await,
                    None => false,
                };
                conn.close(0, b"done");
                (got == *data)
                    .then_some(accepted)
                    .ok_or(format!("{i}: {} bytes, content differs", got.len()))
            });
        }
        for r in within("batch", tasks.join_all()).await {
            match r {
                Ok(a) => accepted += usize::from(a),
                Err(e) => failures.push(e),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of 150 connections failed, e.g. {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert!(accepted >= 75, "only {accepted} of 150 used 0-RTT");
}

/// Time to the first body byte of a `/file` fetch on a new connection from `config`, from the
/// connection attempt on (0-RTT when `into_0rtt` succeeds), and whether 0-RTT was accepted.
async fn time_to_first_byte(
    client: &Endpoint,
    server: SocketAddr,
    config: &mpquic::ClientConfig,
) -> (std::time::Duration, Option<bool>) {
    let started = std::time::Instant::now();
    let connecting = client
        .connect_with(config.clone(), server, "localhost")
        .expect("connect");
    let conn = match connecting.into_0rtt() {
        Ok((conn, _)) => conn,
        Err(connecting) => within("handshake", connecting).await.expect("handshake"),
    };
    let mut body = hq::request(&conn, "/file").await.expect("request");
    let mut buf = [0u8; 1];
    within("first byte", body.read(&mut buf))
        .await
        .expect("read")
        .expect("a byte");
    let ttfb = started.elapsed();
    within("rest", body.read_to_end(4 * MB))
        .await
        .expect("read");
    within("handshake", async {
        while conn.zero_rtt_accepted().is_none() && conn.stats().zero_rtt_packets_sent > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await;
    let accepted = conn.zero_rtt_accepted();
    conn.close(0, b"done");
    (ttfb, accepted)
}

/// Through the emulator with 25 ms of one-way delay (RTT 50 ms): the 0-RTT request's first byte
/// arrives one round trip earlier than with a full handshake (about 1 RTT instead of 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn zero_rtt_saves_a_round_trip_through_the_emulator() {
    let (_dir, root) = root_with("file", &payload(10_000, 6));
    let (server, _) = our_server(root);
    let (_relay, server_addr) = delayed_by(server.local_addr(), "rate=50mbit,delay=25ms");
    let client = Endpoint::client(&[addr("127.0.0.1:0")]).expect("bind client");
    let (config, store) = client_0rtt();
    let (full, none) = time_to_first_byte(&client, server_addr, &config).await;
    assert_eq!(none, None);
    store.wait_for_tickets(1).await;
    let (early, accepted) = time_to_first_byte(&client, server_addr, &config).await;
    assert_eq!(accepted, Some(true));
    eprintln!("time to first byte: full handshake {full:?}, 0-RTT {early:?}");
    assert!(full >= std::time::Duration::from_millis(100), "{full:?}");
    assert!(
        early + std::time::Duration::from_millis(40) <= full,
        "0-RTT {early:?}, full handshake {full:?}"
    );
}

/// RFC 9000 §7.4.1 from another stack's side: a quinn client holds a ticket from our server,
/// whose configuration then changes (same rustls configuration and session store). With lower
/// flow-control limits the server must not take 0-RTT under the old ones: it does not resume
/// the ticket, quinn's 0-RTT is rejected and its request goes again in 1-RTT. With higher
/// limits quinn's 0-RTT is accepted. Either way the answer arrives and nothing fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_0rtt_to_our_server_after_its_limits_change() {
    let data = payload(3000, 9);
    for (factor, accepted_expected) in [(0.5, false), (2.0, true)] {
        let (_dir, root) = root_with("file", &data);
        let (cert, key) = tls::self_signed(&["localhost"]).expect("certificate");
        let server_tls = tls::server_config_0rtt(&[hq::ALPN], vec![cert], key).expect("tls");
        let base = transport(MultipathMode::Auto);
        let server = Endpoint::server(
            config::server(server_tls.clone(), base.clone()),
            &[addr("127.0.0.1:0")],
        )
        .expect("bind server");
        common::serve_each(&server, move |conn| {
            let root = root.clone();
            async move { serve(&conn, &root).await }
        });
        // rustls' own client settings for resumption and early data, used by quinn.
        let rustls_client = Arc::unwrap_or_clone(
            tls::client_config_0rtt(&[hq::ALPN], tls::ServerTrust::Insecure, None)
                .expect("client tls"),
        );
        let crypto =
            quinn::crypto::rustls::QuicClientConfig::try_from(rustls_client).expect("quinn crypto");
        let quinn_config = quinn::ClientConfig::new(Arc::new(crypto));
        let client = quinn::Endpoint::client(addr("127.0.0.1:0")).expect("quinn client");
        // quinn fails the streams of rejected 0-RTT (`ZeroRttRejected`): the caller asks again.
        let try_get = |conn: quinn::Connection| async move {
            let (mut send, mut recv) = conn.open_bi().await.expect("open");
            if send.write_all(b"GET /file").await.is_err() || send.finish().is_err() {
                return None;
            }
            within("answer", recv.read_to_end(MB)).await.ok()
        };
        let get = |conn: quinn::Connection| async move { try_get(conn).await.expect("answer") };
        // Warm up: a full handshake, an answer, and the tickets that follow it.
        let first = client
            .connect_with(quinn_config.clone(), server.local_addr(), "localhost")
            .expect("connect");
        let first = within("handshake", first).await.expect("first handshake");
        assert_eq!(get(first.clone()).await, data);
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        first.close(0u32.into(), b"done");
        // The server's limits change; its rustls configuration (and session store) stays.
        let mut changed = base.clone();
        changed.streams.max_data = (changed.streams.max_data as f64 * factor) as u64;
        server
            .set_server_config(config::server(server_tls, changed))
            .expect("valid config");
        let connecting = client
            .connect_with(quinn_config, server.local_addr(), "localhost")
            .expect("connect");
        let (conn, accepted) = connecting.into_0rtt().expect("quinn holds a 0-RTT ticket");
        let early = try_get(conn.clone()).await;
        let accepted = within("handshake", accepted).await;
        assert_eq!(accepted, accepted_expected, "x{factor}: 0-RTT accepted");
        assert_eq!(
            early.is_some(),
            accepted,
            "x{factor}: the 0-RTT request answered"
        );
        let answer = match early {
            Some(answer) => answer,
            None => get(conn.clone()).await,
        };
        assert_eq!(answer, data, "x{factor}");
        assert!(
            conn.close_reason().is_none(),
            "x{factor}: {:?}",
            conn.close_reason()
        );
        conn.close(0u32.into(), b"done");
    }
}
