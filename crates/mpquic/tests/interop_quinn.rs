//! Interoperability with quinn 0.11 over loopback UDP, both directions of data:
//! our client against a quinn server and a quinn client against our server.

mod common;

use std::sync::Arc;

use common::{
    accepted, addr, client_config, connect_client, payload, root_with, server_endpoint,
    spawn_quinn_server, start_server, transport, within, MB,
};
use mpquic::{hq, MultipathMode};
use mpquic_proto::crypto::testing::CountingSessionStore;
use tokio::io::AsyncWriteExt;

/// A quinn server answering `GET /<n>` with `data` and, on any other first line, reading the
/// whole stream and replying with its length. Returns its address.
fn quinn_server(data: Arc<Vec<u8>>) -> (quinn::Endpoint, std::net::SocketAddr) {
    spawn_quinn_server(move |conn| {
        let data = data.clone();
        async move {
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
        }
    })
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
    // A loopback path probes past 1452 up to the peer's max_udp_payload_size, which quinn sets
    // to 1472 (RFC 9000 §18.2): the datagrams quinn got were that size, not our 16 kB.
    common::assert_capped_at_peer_limit(&conn.path_stats()[0], 1472);
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

/// A quinn client's hq-interop request for `path` on a new stream, and the whole answer.
async fn quinn_get(
    conn: &quinn::Connection,
    path: &str,
    max: usize,
) -> Result<Vec<u8>, quinn::ReadToEndError> {
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    send.write_all(format!("GET {path}\r\n").as_bytes())
        .await
        .expect("request");
    send.finish().expect("finish");
    within("download", recv.read_to_end(max)).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_client_downloads_from_our_server() {
    let data = payload(10 * MB, 5);
    let (_dir, root) = root_with("file.bin", &data);
    let server = start_server(root, transport(MultipathMode::Auto));
    let (endpoint, conn) = quinn_client(server.local_addr()).await;
    let got = quinn_get(&conn, "/file.bin", 20 * MB)
        .await
        .expect("quinn read");
    assert!(
        got == data,
        "quinn got {} bytes, expected {} (content differs)",
        got.len(),
        data.len()
    );
    // A missing file resets the stream with 404.
    let err = quinn_get(&conn, "/missing", MB)
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
        let conn = accepted(&server).await;
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

/// Datagram `i` of `len` bytes (RFC 9221 interop): its index, then a pattern.
fn datagram(i: u8, len: usize) -> bytes::Bytes {
    let mut d = payload(len, i);
    if let Some(first) = d.first_mut() {
        *first = i;
    }
    d.into()
}

/// Sizes the datagram interop tests exchange: up to 1000 bytes, which fits quinn's packets
/// before its path MTU discovery raised them from 1200 bytes.
const DATAGRAM_SIZES: [usize; 6] = [0, 1, 63, 100, 500, 1000];

/// A quinn server that echoes every DATAGRAM frame it receives (quinn's datagram API); one it
/// cannot send back (larger than its current maximum) is answered with its length in decimal.
fn quinn_datagram_echo_server() -> (quinn::Endpoint, std::net::SocketAddr) {
    spawn_quinn_server(|conn| async move {
        assert!(conn.max_datagram_size().is_some(), "we offered datagrams");
        while let Ok(d) = conn.read_datagram().await {
            let reply = if conn.max_datagram_size().is_some_and(|m| d.len() <= m) {
                d
            } else {
                d.len().to_string().into()
            };
            conn.send_datagram(reply).expect("quinn send_datagram");
        }
    })
}

/// RFC 9221 with quinn: our client sends datagrams one at a time to a quinn server that echoes
/// them with quinn's datagram API; each comes back intact. The largest our client allows
/// reaches quinn too (it answers with the length it got).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_datagrams_echoed_by_quinn_server() {
    let (_quinn, server_addr) = quinn_datagram_echo_server();
    let (_client, conn) = connect_client(server_addr, transport(MultipathMode::Auto)).await;
    // Path MTU discovery starts at 1200 bytes (RFC 9000 §14) and raises the size within a few
    // round trips; the largest datagram is taken once it settled.
    within("path MTU search", async {
        while conn.path_stats().iter().any(|p| {
            use mpquic::MtuPhase as Phase;
            matches!(p.mtu_phase, Phase::Base | Phase::Searching)
        }) {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await;
    let max = conn.max_datagram_size().expect("quinn offers datagrams");
    assert!(max >= 1200, "max_datagram_size {max}");
    for (i, &len) in DATAGRAM_SIZES.iter().enumerate() {
        let d = datagram(i as u8, len);
        conn.send_datagram(d.clone()).expect("send_datagram");
        let echo = within("echo", conn.read_datagram())
            .await
            .expect("read_datagram");
        assert_eq!(echo, d, "datagram {i} of {len} bytes");
    }
    conn.send_datagram(datagram(9, max))
        .expect("largest datagram");
    let reply = within("reply", conn.read_datagram()).await.expect("reply");
    let echoed = reply == datagram(9, max);
    println!("largest datagram {max} bytes; quinn echoed it: {echoed}");
    assert!(
        echoed || reply == max.to_string().as_bytes(),
        "quinn answered {reply:?} to a {max}-byte datagram"
    );
    assert_eq!(
        conn.send_datagram(datagram(10, max + 1)),
        Err(mpquic::SendDatagramError::TooLarge)
    );
    let stats = conn.stats().datagram_frames;
    let n = DATAGRAM_SIZES.len() as u64 + 1;
    assert_eq!((stats.sent, stats.received), (n, n));
    conn.close(0, b"done");
}

/// RFC 9221 with quinn the other way: a quinn client sends datagrams to our server, which
/// echoes them with [`mpquic::Connection::read_datagram`] / `send_datagram`; quinn gets each
/// back intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_client_datagrams_echoed_by_our_server() {
    let server = server_endpoint(transport(MultipathMode::Auto));
    let server_addr = server.local_addr();
    let echo = tokio::spawn(async move {
        let conn = accepted(&server).await;
        let mut count = 0u64;
        while let Ok(d) = conn.read_datagram().await {
            conn.send_datagram(d).expect("our send_datagram");
            count += 1;
        }
        (count, conn.stats().datagram_frames)
    });
    let (endpoint, conn) = quinn_client(server_addr).await;
    assert!(
        conn.max_datagram_size().is_some_and(|m| m >= 1000),
        "our server offers datagrams: {:?}",
        conn.max_datagram_size()
    );
    for (i, &len) in DATAGRAM_SIZES.iter().enumerate() {
        let d = datagram(i as u8, len);
        conn.send_datagram(d.clone()).expect("quinn send_datagram");
        let echo = within("echo", conn.read_datagram())
            .await
            .expect("quinn read_datagram");
        assert_eq!(echo, d, "datagram {i} of {len} bytes");
    }
    conn.close(0u32.into(), b"done");
    within("quinn idle", endpoint.wait_idle()).await;
    let (count, stats) = within("server", echo).await.expect("server task");
    let n = DATAGRAM_SIZES.len() as u64;
    assert_eq!(count, n);
    assert_eq!((stats.sent, stats.received), (n, n));
}

/// `count` connections from `client`, `parallel` at a time, each with a clone of `config` (one
/// rustls configuration, so one session cache) fetching `/small` and checking the body.
/// Returns the failures.
async fn fetch_many(
    client: &mpquic::Endpoint,
    server: std::net::SocketAddr,
    config: mpquic::ClientConfig,
    count: usize,
    parallel: usize,
    expected: &[u8],
) -> Vec<String> {
    let mut failures = Vec::new();
    for batch in 0..count.div_ceil(parallel) {
        let mut tasks = tokio::task::JoinSet::new();
        for i in batch * parallel..((batch + 1) * parallel).min(count) {
            let (client, config, expected) = (client.clone(), config.clone(), expected.to_vec());
            tasks.spawn(async move {
                let conn = client
                    .connect_with(config, server, "localhost")
                    .map_err(|e| format!("{i}: connect: {e}"))?
                    .await
                    .map_err(|e| format!("{i}: handshake: {e}"))?;
                let mut body = hq::request(&conn, "/small")
                    .await
                    .map_err(|e| format!("{i}: request: {e}"))?;
                let got = body
                    .read_to_end(MB)
                    .await
                    .map_err(|e| format!("{i}: read: {e}"))?;
                conn.close(0, b"done");
                (got == expected)
                    .then_some(())
                    .ok_or(format!("{i}: {} bytes, content differs", got.len()))
            });
        }
        let results = within("batch", tasks.join_all()).await;
        failures.extend(results.into_iter().filter_map(Result::err));
    }
    failures
}

/// Issue 12: one client endpoint reusing one client configuration for 300 connections to one
/// quinn server, which issues session tickets. With the default configuration (resumption off)
/// no handshake may fail.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_connections_reusing_one_client_config() {
    let data = payload(2000, 8);
    let (_quinn, server_addr) = quinn_server(Arc::new(data.clone()));
    let client = mpquic::Endpoint::client(&[addr("127.0.0.1:0")]).expect("bind client");
    let config = client_config(transport(MultipathMode::Auto));
    let started = std::time::Instant::now();
    let failures = fetch_many(&client, server_addr, config, 300, 4, &data).await;
    eprintln!("300 connections in {:?}", started.elapsed());
    assert!(
        failures.is_empty(),
        "{} of 300 connections failed, e.g. {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
}

/// The same with TLS session resumption turned on: the later connections offer quinn's tickets
/// and resume; each must check its own server's transport parameters (RFC 9000 §7.3), not the
/// ones remembered with the ticket (§7.4.1).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumed_connections_to_quinn_all_succeed() {
    let data = payload(2000, 9);
    let (_quinn, server_addr) = quinn_server(Arc::new(data.clone()));
    let client = mpquic::Endpoint::client(&[addr("127.0.0.1:0")]).expect("bind client");
    let store = Arc::new(CountingSessionStore::new(64));
    let mut tls = Arc::unwrap_or_clone(
        mpquic::tls::client_config(&[hq::ALPN], mpquic::tls::ServerTrust::Insecure)
            .expect("client tls"),
    );
    tls.resumption = rustls::client::Resumption::store(store.clone());
    let config = mpquic::config::client(Arc::new(tls), transport(MultipathMode::Auto));
    let failures = fetch_many(&client, server_addr, config, 100, 4, &data).await;
    assert!(
        failures.is_empty(),
        "{} of 100 resumed connections failed, e.g. {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    assert!(
        store.tickets_taken() >= 50,
        "only {} connections offered a ticket",
        store.tickets_taken()
    );
}

/// RFC 9000 §18.2: our server's `preferred_address` transport parameter (addresses, the CID with
/// sequence number 1 and its reset token) decodes in quinn, whose client accepts the handshake
/// and downloads over it. The advertised address is the server's own, so whether quinn moves to
/// it or not, the data arrives.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_client_accepts_our_preferred_address() {
    let data = payload(MB, 9);
    let (_dir, root) = root_with("file.bin", &data);
    let server = start_server(root, transport(MultipathMode::Auto));
    let mut advertising = common::server_config(transport(MultipathMode::Auto));
    advertising.set_preferred_address(server.local_addr());
    server
        .set_server_config(advertising)
        .expect("valid server config");
    let (endpoint, conn) = quinn_client(server.local_addr()).await;
    let got = quinn_get(&conn, "/file.bin", 2 * MB)
        .await
        .expect("quinn read");
    assert!(got == data, "quinn got {} bytes", got.len());
    conn.close(0u32.into(), b"done");
    within("quinn idle", endpoint.wait_idle()).await;
}

/// Issue 15: `Endpoint::connect_racing` against another stack. Two attempts from two local
/// sockets go to a quinn server at once; the first to complete is kept and quinn serves it
/// byte-exact, while the other attempt is closed (quinn sees it end).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_racing_client_downloads_from_quinn_server() {
    let data = Arc::new(payload(MB, 9));
    let (_quinn, server_addr) = quinn_server(data.clone());
    let (client, locals, conn, winner) =
        common::race_to(&["127.0.0.1:0", "127.0.0.1:0"], server_addr).await;
    assert!(winner < locals.len());
    assert_eq!(conn.path_stats()[0].local, locals[winner]);
    let mut body = hq::request(&conn, "/file").await.expect("request");
    let got = within("download", body.read_to_end(2 * MB))
        .await
        .expect("read");
    assert!(got == *data, "got {} bytes, content differs", got.len());
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}

/// A quinn client moves to another address mid-download (`Endpoint::rebind` to a socket on
/// 127.0.0.2; the old socket is gone, so nothing more arrives there): our server, in each
/// design (quinn negotiates none), follows it (RFC 9000 §9.3) and the download completes
/// byte-exact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_client_moves_to_another_address_mid_download() {
    let data = payload(5 * MB, 10);
    for mode in [
        MultipathMode::Single,
        MultipathMode::Spns,
        MultipathMode::Mpns,
    ] {
        let (_dir, root) = root_with("file.bin", &data);
        let server = start_server(root, transport(mode));
        let (endpoint, conn) = quinn_client(server.local_addr()).await;
        let (mut send, mut recv) = conn.open_bi().await.expect("open");
        send.write_all(b"GET /file.bin\r\n").await.expect("request");
        send.finish().expect("finish");
        let mut got = common::read_at_least(&mut recv, MB).await;
        let socket = std::net::UdpSocket::bind("127.0.0.2:0").expect("bind 127.0.0.2");
        endpoint.rebind(socket).expect("rebind");
        let rest = within("rest of the download", recv.read_to_end(10 * MB))
            .await
            .expect("read the rest");
        got.extend_from_slice(&rest);
        assert!(got == data, "{mode:?}: quinn got {} bytes", got.len());
        conn.close(0u32.into(), b"done");
        within("quinn idle", endpoint.wait_idle()).await;
    }
}
