//! Interoperability with a third, independent stack: aioquic 1.2 (Python), over loopback UDP,
//! in both roles (`interop/aioquic/peer.py`; installed by `interop/aioquic/setup.sh`).
//!
//! quinn and noq share rustls and much of their design with us; aioquic shares nothing (its own
//! TLS 1.3, loss recovery and flow control), so it checks what the other two cannot: resumption
//! and 0-RTT against another TLS stack, Retry and NEW_TOKEN tokens, key updates, NAT rebinding
//! and connection-ID changes initiated by the peer, small flow-control windows, DATAGRAM frames,
//! a lossy path, a client that offers multipath to a peer that knows nothing of it, and our
//! client migrating to another address (RFC 9000 §9) the way it must with such a peer.

mod common;

use std::path::Path;
use std::sync::Arc;

use common::aioquic::{self, ClientRun};
use common::tickets::WatchedStore;
use common::{addr, connect_with, payload, root_with, transport, within, MB};
use mpquic::{config, hq, tls, Connection, Endpoint, MultipathMode, PathStatus, RetryPolicy};
use mpquic_proto::Design;
use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// A handshake on loopback takes a few milliseconds; a lost first flight waiting for a probe
/// timeout (RFC 9002 §6.2, 1 s with backoff) would take far longer than this.
const HANDSHAKE_BOUND_MS: f64 = 500.0;

/// Our server on 127.0.0.1: GET requests (hq-interop) served from `root`, any other request
/// answered with its length, DATAGRAM frames echoed. Each connection is also sent on the
/// returned channel with its multipath design (read at once: it is gone with the connection),
/// for the tests to read its statistics.
fn our_server(
    root: Arc<std::path::PathBuf>,
    server_config: mpquic::ServerConfig,
) -> (
    Endpoint,
    mpsc::UnboundedReceiver<(Connection, Option<Design>)>,
) {
    let endpoint = Endpoint::server(server_config, &[addr("127.0.0.1:0")]).expect("bind server");
    let (tx, rx) = mpsc::unbounded_channel();
    common::serve_each(&endpoint, move |conn| {
        let (root, tx) = (root.clone(), tx.clone());
        async move {
            let _ = tx.send((conn.clone(), conn.design()));
            tokio::spawn(echo_datagrams(conn.clone()));
            while let Ok((send, recv)) = conn.accept_bi().await {
                tokio::spawn(answer(send, recv, root.clone()));
            }
        }
    });
    (endpoint, rx)
}

async fn echo_datagrams(conn: Connection) {
    while let Ok(datagram) = conn.read_datagram().await {
        let _ = conn.send_datagram(datagram);
    }
}

/// One request: a file for `GET /name`, the request's length for anything else.
async fn answer(
    mut send: mpquic::SendStream,
    mut recv: mpquic::RecvStream,
    root: Arc<std::path::PathBuf>,
) {
    let Ok(request) = recv.read_to_end(64 * MB).await else {
        return;
    };
    let body = if request.starts_with(b"GET /") {
        let file = hq::parse_request(&request).and_then(|target| hq::resolve(&root, &target));
        match file.map(std::fs::read) {
            Ok(Ok(data)) => data,
            _ => {
                let _ = send.reset(0x10c);
                return;
            }
        }
    } else {
        request.len().to_string().into_bytes()
    };
    let _ = send.write_all(&body).await;
    let _ = send.shutdown().await;
}

/// A server configuration with a fresh certificate, hq-interop, DATAGRAM frames accepted, and
/// session tickets for 0-RTT (single use, against replay).
fn our_server_config() -> mpquic::ServerConfig {
    let (cert, key) = tls::self_signed(&["localhost"]).expect("certificate");
    let tls = tls::server_config_0rtt(&[hq::ALPN], vec![cert], key).expect("server tls");
    config::server(tls, datagram_transport())
}

fn datagram_transport() -> mpquic::TransportConfig {
    let mut t = transport(MultipathMode::Auto);
    t.datagram_receive_buffer = Some(64 * 1024);
    t
}

fn assert_bodies(run: &ClientRun, expected: &[&[u8]]) {
    assert_eq!(run.bodies.len(), expected.len(), "{}", run.report);
    for (i, (got, want)) in run.bodies.iter().zip(expected).enumerate() {
        assert!(
            got == want,
            "body {i}: {} bytes, expected {} (content differs)",
            got.len(),
            want.len()
        );
    }
}

async fn next_connection(
    rx: &mut mpsc::UnboundedReceiver<(Connection, Option<Design>)>,
) -> (Connection, Option<Design>) {
    within("server connection", rx.recv())
        .await
        .expect("a connection reached the server")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aioquic_client_downloads_two_files_at_once_from_our_server() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let (a, b) = (payload(3 * MB, 1), payload(MB, 2));
    let (dir, root) = root_with("a.bin", &a);
    std::fs::write(dir.path().join("b.bin"), &b).expect("write b");
    let (server, mut conns) = our_server(root, our_server_config());
    let run = aioquic::run_client(
        &python,
        server.local_addr(),
        &["--get", "/a.bin", "--get", "/b.bin"],
    )
    .await;
    assert_bodies(&run, &[&a, &b]);
    assert_eq!(run.report["alpn"], "hq-interop");
    assert!(
        run.number("handshake_ms") < HANDSHAKE_BOUND_MS,
        "{}",
        run.report
    );
    // aioquic offers no multipath: the connection is plain RFC 9000 on our side.
    let (_, design) = next_connection(&mut conns).await;
    assert_eq!(design, Some(Design::Single));
}

/// RFC 9001 §4.6: the second connection resumes with our ticket and its request goes in 0-RTT,
/// which our server accepts and answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aioquic_client_resumes_and_our_server_answers_its_0rtt_request() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(200_000, 3);
    let (_dir, root) = root_with("f.bin", &data);
    let (server, mut conns) = our_server(root, our_server_config());
    let tickets = tempfile::tempdir().expect("ticket dir");
    let ticket = tickets.path().join("ticket");
    let ticket = ticket.to_str().expect("utf-8 path");
    let args = ["--get", "/f.bin", "--ticket", ticket, "--zero-rtt"];
    let first = aioquic::run_client(&python, server.local_addr(), &args).await;
    assert_bodies(&first, &[&data]);
    assert!(!first.flag("session_resumed"));
    assert!(
        Path::new(ticket).exists(),
        "our server sent no session ticket"
    );
    let second = aioquic::run_client(&python, server.local_addr(), &args).await;
    assert_bodies(&second, &[&data]);
    assert!(second.flag("session_resumed"), "{}", second.report);
    assert!(second.flag("early_data_accepted"), "{}", second.report);
    next_connection(&mut conns).await;
    let resumed = next_connection(&mut conns).await.0.stats().counters;
    assert!(resumed.zero_rtt_packets_received >= 1, "{resumed:?}");
    assert_eq!(resumed.zero_rtt_accepted, Some(true));
}

/// RFC 9000 §8.1.2–8.1.3: aioquic follows our Retry, keeps the NEW_TOKEN token we send after the
/// handshake, and with it the next connection is validated without a Retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aioquic_client_follows_our_retry_then_skips_it_with_our_new_token() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(100_000, 4);
    let (_dir, root) = root_with("f.bin", &data);
    let mut server_config = our_server_config();
    server_config.retry = RetryPolicy::Always;
    let (server, _conns) = our_server(root, server_config);
    let first = aioquic::run_client(
        &python,
        server.local_addr(),
        &["--get", "/f.bin", "--wait-tokens"],
    )
    .await;
    assert_bodies(&first, &[&data]);
    assert_eq!(server.stats().retries_sent, 1);
    let token = first.tokens().pop().expect("a NEW_TOKEN token");
    let second = aioquic::run_client(
        &python,
        server.local_addr(),
        &["--get", "/f.bin", "--token", &token],
    )
    .await;
    assert_bodies(&second, &[&data]);
    let stats = server.stats();
    assert_eq!(
        stats.retries_sent, 1,
        "the token did not validate the address: {stats:?}"
    );
    assert_eq!(stats.invalid_tokens, 0, "{stats:?}");
}

/// The peer's moves in the middle of a download: a 1-RTT key update (RFC 9001 §6), a switch to
/// a new connection ID (RFC 9000 §5.1.2) and a new source port (NAT rebinding, RFC 9000 §9.3).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aioquic_client_updates_keys_changes_cid_and_rebinds_mid_download() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(5 * MB, 5);
    let (_dir, root) = root_with("f.bin", &data);
    let (server, mut conns) = our_server(root, our_server_config());
    let run = aioquic::run_client(
        &python,
        server.local_addr(),
        &[
            "--get",
            "/f.bin",
            "--key-update-after",
            "500000",
            "--new-cid-after",
            "1500000",
            "--rebind-after",
            "2500000",
        ],
    )
    .await;
    assert_bodies(&run, &[&data]);
    for step in ["key_updated", "new_cid", "rebound"] {
        assert!(run.flag(step), "{step} did not happen: {}", run.report);
    }
    let stats = next_connection(&mut conns).await.0.stats().counters;
    assert!(stats.key_updates >= 1, "{stats:?}");
}

/// An upload answered with its length, and DATAGRAM frames (RFC 9221) echoed by our server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aioquic_client_uploads_and_our_server_echoes_its_datagrams() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let (_dir, root) = root_with("empty", b"");
    let (server, _conns) = our_server(root, our_server_config());
    let run = aioquic::run_client(
        &python,
        server.local_addr(),
        &["--upload", "3000000", "--datagrams", "10"],
    )
    .await;
    assert_eq!(run.number("upload_reply"), 3_000_000.0, "{}", run.report);
    assert_eq!(run.number("datagrams_echoed"), 10.0, "{}", run.report);
}

/// aioquic's flow control with small windows (16 KB per stream, 64 KB per connection): our
/// server must keep sending as MAX_STREAM_DATA / MAX_DATA arrive, without stalling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aioquic_client_with_small_flow_control_windows() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(2 * MB, 6);
    let (_dir, root) = root_with("f.bin", &data);
    let (server, _conns) = our_server(root, our_server_config());
    let args = [
        "--get",
        "/f.bin",
        "--max-stream-data",
        "16384",
        "--max-data",
        "65536",
    ];
    let run = aioquic::run_client(&python, server.local_addr(), &args).await;
    assert_bodies(&run, &[&data]);
}

/// Through an emulated path with 2% random loss both ways: both stacks' loss recovery, and
/// theirs with ours, still deliver every byte.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aioquic_client_downloads_over_a_lossy_path() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(MB, 7);
    let (_dir, root) = root_with("f.bin", &data);
    let (server, _conns) = our_server(root, our_server_config());
    let emulator = common::emulator(
        server.local_addr(),
        &["rate=50mbit,delay=5ms,queue=1bdp,loss=2%"],
    );
    let run = aioquic::run_client(&python, emulator.listen_addr(), &["--get", "/f.bin"]).await;
    assert_bodies(&run, &[&data]);
}

/// 600 requests on one connection, two at a time: our server keeps granting streams
/// (MAX_STREAMS, RFC 9000 §4.6) as the earlier ones close.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aioquic_client_makes_600_requests_on_one_connection() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(1_000, 14);
    let (_dir, root) = root_with("f.bin", &data);
    let (server, _conns) = our_server(root, our_server_config());
    let args = ["--get", "/f.bin", "--get", "/f.bin", "--repeat", "300"];
    let run = aioquic::run_client(&python, server.local_addr(), &args).await;
    assert_bodies(&run, &[&data, &data]);
}

// ---- our client, aioquic's server ----

fn our_client_config() -> mpquic::ClientConfig {
    let tls = tls::client_config(&[hq::ALPN], tls::ServerTrust::Insecure).expect("client tls");
    config::client(tls, datagram_transport())
}

async fn download(conn: &Connection, path: &str, len: usize) -> Vec<u8> {
    let mut body = hq::request(conn, path).await.expect("request");
    within("download", body.read_to_end(2 * len))
        .await
        .expect("read")
}

/// Our client offers multipath (both designs) to a server that knows nothing of it: the
/// connection is plain RFC 9000, a second path is refused locally with a clear error, and two
/// downloads at once still arrive intact.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_downloads_from_aioquic_without_multipath() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let (a, b) = (payload(3 * MB, 8), payload(MB, 9));
    let (dir, root) = root_with("a.bin", &a);
    std::fs::write(dir.path().join("b.bin"), &b).expect("write b");
    let peer = aioquic::Server::start(&python, &root, &[]).await;
    let (_client, conn) = connect_with(
        &["127.0.0.1:0", "127.0.0.2:0"],
        peer.addr,
        our_client_config(),
    )
    .await;
    assert_eq!(conn.design(), Some(Design::Single));
    let refused = conn
        .open_path(addr("127.0.0.2:0"), None, PathStatus::Available)
        .await;
    assert!(
        matches!(
            refused,
            Err(mpquic::OpenPathError::Path(
                mpquic_proto::PathError::MultipathNotNegotiated
            ))
        ),
        "{refused:?}"
    );
    let (got_a, got_b) = tokio::join!(
        download(&conn, "/a.bin", a.len()),
        download(&conn, "/b.bin", b.len())
    );
    assert!(got_a == a && got_b == b, "a download differs");
}

/// Without multipath, changing networks is a migration (RFC 9000 §9): our client moves path 0
/// to 127.0.0.2 mid-download; aioquic validates the new address and keeps sending.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_migrates_mid_download_from_aioquic() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(3 * MB, 17);
    let (_dir, root) = root_with("f.bin", &data);
    let peer = aioquic::Server::start(&python, &root, &[]).await;
    let locals = ["127.0.0.1:0", "127.0.0.2:0"];
    let (_client, conn) = connect_with(&locals, peer.addr, our_client_config()).await;
    let (got, migrated) = common::download_migrating(&conn, "/f.bin", MB, "127.0.0.2").await;
    assert!(got == data, "download differs ({} bytes)", got.len());
    assert!(migrated.is_ok(), "{migrated:?}");
    let paths = conn.path_stats();
    assert_eq!(paths[0].local.ip(), addr("127.0.0.2:0").ip(), "{paths:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_follows_aioquic_retry() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(MB, 10);
    let (_dir, root) = root_with("f.bin", &data);
    let peer = aioquic::Server::start(&python, &root, &["--retry"]).await;
    let (_client, conn) = connect_with(&["127.0.0.1:0"], peer.addr, our_client_config()).await;
    assert!(
        download(&conn, "/f.bin", data.len()).await == data,
        "download differs"
    );
}

/// RFC 9001 §4.6 with aioquic's TLS: our second connection resumes with aioquic's ticket and
/// sends its request in 0-RTT, which aioquic accepts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_sends_0rtt_to_aioquic() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(100_000, 11);
    let (_dir, root) = root_with("f.bin", &data);
    let peer = aioquic::Server::start(&python, &root, &[]).await;
    let store = WatchedStore::new();
    let tls = tls::client_config_0rtt(&[hq::ALPN], tls::ServerTrust::Insecure, Some(store.clone()))
        .expect("client tls");
    let config = config::client(tls, datagram_transport());
    let client = Endpoint::client(&[addr("127.0.0.1:0")]).expect("bind client");
    let conn = within(
        "first handshake",
        client
            .connect_with(config.clone(), peer.addr, "localhost")
            .expect("connect"),
    )
    .await
    .expect("handshake");
    assert!(download(&conn, "/f.bin", data.len()).await == data);
    // aioquic's ticket follows its handshake; a loaded machine can delay it past the download.
    store.wait_for_tickets(1).await;
    conn.close(0, b"done");
    let connecting = client
        .connect_with(config, peer.addr, "localhost")
        .expect("connect");
    let Ok((conn, accepted)) = connecting.into_0rtt() else {
        panic!(
            "no 0-RTT with aioquic's ticket ({} stored)",
            store.tickets()
        )
    };
    let got = download(&conn, "/f.bin", data.len()).await;
    assert!(got == data, "0-RTT download differs");
    assert!(
        within("handshake", accepted).await,
        "aioquic refused our 0-RTT data"
    );
    let stats = conn.stats().counters;
    assert!(stats.zero_rtt_packets_sent >= 1, "{stats:?}");
}

/// Our side's moves against aioquic: key updates every 500 packets (RFC 9001 §6) during an
/// upload and a download, and DATAGRAM frames echoed by aioquic.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_updates_keys_uploads_and_sends_datagrams_to_aioquic() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(2 * MB, 12);
    let (_dir, root) = root_with("f.bin", &data);
    let peer = aioquic::Server::start(&python, &root, &[]).await;
    let mut transport = datagram_transport();
    transport.key_update_interval = Some(500);
    let tls = tls::client_config(&[hq::ALPN], tls::ServerTrust::Insecure).expect("client tls");
    let (_client, conn) =
        connect_with(&["127.0.0.1:0"], peer.addr, config::client(tls, transport)).await;
    let upload = payload(2 * MB, 13);
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    within("upload", async {
        send.write_all(&upload).await.expect("write");
        send.shutdown().await.expect("finish");
    })
    .await;
    let reply = within("reply", recv.read_to_end(100)).await.expect("reply");
    assert_eq!(reply, upload.len().to_string().as_bytes());
    assert!(
        download(&conn, "/f.bin", data.len()).await == data,
        "download differs"
    );
    for i in 0..10u8 {
        conn.send_datagram(vec![i; 100].into())
            .expect("send datagram");
    }
    for _ in 0..10 {
        let echo = within("datagram echo", conn.read_datagram())
            .await
            .expect("datagram");
        assert_eq!(echo.len(), 100);
    }
    let stats = conn.stats().counters;
    assert!(stats.key_updates >= 2, "{stats:?}");
}

/// 300 requests on one connection, two at a time, to a server that grants 128 streams at first:
/// our client waits for aioquic's MAX_STREAMS rather than failing or stalling.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_makes_300_requests_to_aioquic_on_one_connection() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(1_000, 15);
    let (_dir, root) = root_with("f.bin", &data);
    let peer = aioquic::Server::start(&python, &root, &[]).await;
    let (_client, conn) = connect_with(&["127.0.0.1:0"], peer.addr, our_client_config()).await;
    for round in 0..150 {
        let (a, b) = tokio::join!(
            download(&conn, "/f.bin", data.len()),
            download(&conn, "/f.bin", data.len())
        );
        assert!(a == data && b == data, "round {round}: a response differs");
    }
}

/// Our loss recovery against aioquic's acknowledgements, through 2% random loss both ways.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_downloads_from_aioquic_over_a_lossy_path() {
    let Some(python) = aioquic::python() else {
        return;
    };
    let data = payload(MB, 16);
    let (_dir, root) = root_with("f.bin", &data);
    let peer = aioquic::Server::start(&python, &root, &[]).await;
    let emulator = common::emulator(peer.addr, &["rate=50mbit,delay=5ms,queue=1bdp,loss=2%"]);
    let (_client, conn) = connect_with(
        &["127.0.0.1:0"],
        emulator.listen_addr(),
        our_client_config(),
    )
    .await;
    assert!(
        download(&conn, "/f.bin", data.len()).await == data,
        "download differs"
    );
}
