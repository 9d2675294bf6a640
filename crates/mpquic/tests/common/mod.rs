//! Helpers shared by the integration tests: payloads, TLS, our server and quinn's.

#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use mpquic::{config, hq, tls, Endpoint, MultipathMode, TransportConfig};

pub mod aioquic;
pub mod noq;
pub mod tickets;

/// Upper bound of every network wait in the tests.
pub const TEST_TIMEOUT: Duration = Duration::from_secs(20);

pub const MB: usize = 1_000_000;

/// Deterministic, non-repeating-looking payload.
pub fn payload(len: usize, salt: u8) -> Vec<u8> {
    let mut x: u32 = 0x9e37_79b9 ^ u32::from(salt);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

pub fn addr(s: &str) -> SocketAddr {
    s.parse().expect("socket address")
}

pub fn transport(mode: MultipathMode) -> TransportConfig {
    TransportConfig::default().multipath(mode)
}

pub fn init_tracing() {
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
}

/// A directory with one file `name` holding `data`.
pub fn root_with(name: &str, data: &[u8]) -> (tempfile::TempDir, Arc<PathBuf>) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join(name), data).expect("write file");
    let root = Arc::new(dir.path().canonicalize().expect("canonical root"));
    (dir, root)
}

/// A server endpoint on 127.0.0.1:0 with a fresh self-signed certificate and ALPN hq-interop;
/// the test accepts its connections itself.
pub fn server_endpoint(transport: TransportConfig) -> Endpoint {
    server_endpoint_with(&[hq::ALPN], transport)
}

/// [`server_endpoint`] offering the ALPN protocols `alpns` (for the HTTP/3 tests too).
pub fn server_endpoint_with(alpns: &[&[u8]], mut transport: TransportConfig) -> Endpoint {
    // $QLOGDIR (if set) gets a qlog of each server connection: for chasing a failure.
    if let Some(dir) = mpquic::qlog::dir_from_flag_or_env(None) {
        let qlog = mpquic::qlog::dir_config(dir, mpquic::qlog::QlogClock::Real).expect("qlog dir");
        transport.qlog = Some(qlog);
    }
    Endpoint::server(server_config_with(alpns, transport), &[addr("127.0.0.1:0")])
        .expect("bind server")
}

/// A server configuration with a fresh self-signed certificate for "localhost" and ALPN
/// hq-interop (for endpoints a test binds itself, or changes with `set_server_config`).
pub fn server_config(transport: TransportConfig) -> mpquic::ServerConfig {
    server_config_with(&[hq::ALPN], transport)
}

/// [`server_config`] offering the ALPN protocols `alpns`.
pub fn server_config_with(alpns: &[&[u8]], transport: TransportConfig) -> mpquic::ServerConfig {
    let (cert, key) = tls::self_signed(&["localhost"]).expect("certificate");
    let tls = tls::server_config(alpns, vec![cert], key).expect("server tls");
    config::server(tls, transport)
}

/// Our hq-interop server on 127.0.0.1:0 serving `root`.
pub fn start_server(root: Arc<PathBuf>, transport: TransportConfig) -> Endpoint {
    let endpoint = server_endpoint(transport);
    serve_each(&endpoint, move |conn| {
        let root = root.clone();
        async move {
            hq::serve_connection(conn, root).await;
        }
    });
    endpoint
}

/// Accept every connection attempt on `endpoint` and hand each connection, once its handshake
/// completed, to `serve` in a task of its own (attempts that fail are dropped).
pub fn serve_each<F, Fut>(endpoint: &Endpoint, serve: F)
where
    F: Fn(mpquic::Connection) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let ep = endpoint.clone();
    let serve = Arc::new(serve);
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let serve = serve.clone();
            tokio::spawn(async move {
                if let Ok(conn) = incoming.await {
                    serve(conn).await;
                }
            });
        }
    });
}

/// A client configuration for our client (insecure verification, hq-interop).
pub fn client_config(transport: TransportConfig) -> mpquic::ClientConfig {
    client_config_with(&[hq::ALPN], transport)
}

/// [`client_config`] offering the ALPN protocols `alpns`.
pub fn client_config_with(alpns: &[&[u8]], transport: TransportConfig) -> mpquic::ClientConfig {
    let tls = tls::client_config(alpns, tls::ServerTrust::Insecure).expect("client tls");
    config::client(tls, transport)
}

/// quinn's TLS configurations: a server presenting a fresh self-signed certificate (and sending
/// session tickets) and a client trusting it, TLS 1.3 with the ring provider, ALPN hq-interop.
pub fn quinn_configs() -> (quinn::ServerConfig, quinn::ClientConfig) {
    quinn_configs_with(&[hq::ALPN])
}

/// [`quinn_configs`] with the ALPN protocols `alpns`.
pub fn quinn_configs_with(alpns: &[&[u8]]) -> (quinn::ServerConfig, quinn::ClientConfig) {
    let (cert, key) = tls::self_signed(&["localhost"]).expect("certificate");
    let server_tls = tls::server_config(alpns, vec![cert.clone()], key).expect("server tls");
    let client_tls =
        tls::client_config(alpns, tls::ServerTrust::Roots(vec![cert])).expect("client tls");
    let mut server_tls = Arc::unwrap_or_clone(server_tls);
    // Like quinn's own defaults: session tickets after the handshake (post-handshake CRYPTO).
    server_tls.send_tls13_tickets = 2;
    let server_crypto =
        quinn::crypto::rustls::QuicServerConfig::try_from(server_tls).expect("quinn server crypto");
    let client_crypto =
        quinn::crypto::rustls::QuicClientConfig::try_from(Arc::unwrap_or_clone(client_tls))
            .expect("quinn client crypto");
    (
        quinn::ServerConfig::with_crypto(Arc::new(server_crypto)),
        quinn::ClientConfig::new(Arc::new(client_crypto)),
    )
}

/// A quinn server on 127.0.0.1 with [`quinn_configs`]: each connection, once its handshake
/// completed, is handed to `serve` in a task of its own. Returns the endpoint and its address.
pub fn spawn_quinn_server<F, Fut>(serve: F) -> (quinn::Endpoint, SocketAddr)
where
    F: Fn(quinn::Connection) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    spawn_quinn_server_with(quinn_configs().0, serve)
}

/// [`spawn_quinn_server`] with a server configuration of the test's own.
pub fn spawn_quinn_server_with<F, Fut>(
    server_config: quinn::ServerConfig,
    serve: F,
) -> (quinn::Endpoint, SocketAddr)
where
    F: Fn(quinn::Connection) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let endpoint =
        quinn::Endpoint::server(server_config, addr("127.0.0.1:0")).expect("quinn server");
    let local = endpoint.local_addr().expect("local addr");
    let ep = endpoint.clone();
    let serve = Arc::new(serve);
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let serve = serve.clone();
            tokio::spawn(async move {
                let conn = incoming.await.expect("quinn handshake");
                serve(conn).await;
            });
        }
    });
    (endpoint, local)
}

/// A quinn server's answer to one request stream: read the request (at most 1,000 bytes),
/// send `data`, finish, and wait until the peer has it all.
pub async fn quinn_answer(mut send: quinn::SendStream, mut recv: quinn::RecvStream, data: &[u8]) {
    let _ = recv.read_to_end(1000).await;
    send.write_all(data).await.expect("quinn write");
    send.finish().expect("quinn finish");
    let _ = send.stopped().await;
}

/// Run `f` with the test timeout.
pub async fn within<T>(what: &str, f: impl std::future::Future<Output = T>) -> T {
    match tokio::time::timeout(TEST_TIMEOUT, f).await {
        Ok(v) => v,
        Err(_) => panic!("{what}: timed out after {TEST_TIMEOUT:?}"),
    }
}

/// A client endpoint on 127.0.0.1 connected (handshake done) to `server`.
pub async fn connect_client(
    server: SocketAddr,
    transport: TransportConfig,
) -> (mpquic::Endpoint, mpquic::Connection) {
    connect_from(&["127.0.0.1:0"], server, transport).await
}

/// A client endpoint bound to `locals` (the first carries the handshake) connected (handshake
/// done) to `server`.
pub async fn connect_from(
    locals: &[&str],
    server: SocketAddr,
    transport: TransportConfig,
) -> (mpquic::Endpoint, mpquic::Connection) {
    connect_with(locals, server, client_config(transport)).await
}

/// [`connect_from`] with a complete client configuration (another ALPN, for instance).
pub async fn connect_with(
    locals: &[&str],
    server: SocketAddr,
    config: mpquic::ClientConfig,
) -> (mpquic::Endpoint, mpquic::Connection) {
    let locals: Vec<SocketAddr> = locals.iter().map(|l| addr(l)).collect();
    let client = mpquic::Endpoint::client(&locals).expect("bind client");
    let conn = within(
        "handshake",
        client
            .connect_with(config, server, "localhost")
            .expect("connect"),
    )
    .await
    .expect("handshake");
    (client, conn)
}

/// Accept the next connection attempt on `server` and wait for its handshake, in a task of its
/// own (the handshake only proceeds once the attempt is accepted).
pub fn accept_one(server: &Endpoint) -> tokio::task::JoinHandle<mpquic::Connection> {
    let server = server.clone();
    tokio::spawn(async move { accepted(&server).await })
}

/// Accept the next connection attempt on `server` and wait for its handshake (the caller runs
/// apart from the client, or the handshake never proceeds).
pub async fn accepted(server: &Endpoint) -> mpquic::Connection {
    let incoming = server.accept().await.expect("incoming");
    incoming.await.expect("server handshake")
}

/// Serve one connection on `server`: the first bidirectional stream gets `data` in answer to
/// its request. Returns the server's connection once the peer has acknowledged everything.
pub fn send_on_first_stream(
    server: &Endpoint,
    data: Vec<u8>,
) -> tokio::task::JoinHandle<mpquic::Connection> {
    let server = server.clone();
    tokio::spawn(async move {
        let conn = accepted(&server).await;
        let (mut send, mut recv) = conn.accept_bi().await.expect("stream");
        recv.read_to_end(64).await.expect("request");
        send.write_all(&data).await.expect("write");
        send.finish().expect("finish");
        send.finished().await.expect("acknowledged");
        conn
    })
}

/// Asks on a new bidirectional stream (the counterpart of [`send_on_first_stream`]) and checks
/// that the answer is `data`, byte for byte.
pub async fn fetch_on_new_stream(conn: &mpquic::Connection, data: &[u8]) {
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    send.write_all(b"GET").await.expect("request");
    send.finish().expect("finish");
    let got = within("download", recv.read_to_end(2 * data.len()))
        .await
        .expect("read");
    assert!(got == data, "content differs ({} bytes)", got.len());
}

/// A loopback path to a peer whose max_udp_payload_size is `limit` (above 1452) settles at
/// that limit, never above. Packets lost in a burst at the end of a flight (a peer's receive
/// buffer overflowing) can pass for a black hole, which sends the path back to 1200 bytes and
/// through the search again: then it may end the transfer below the limit.
pub fn assert_capped_at_peer_limit(path: &mpquic::PathStats, limit: u64) {
    let c = path.mtu_counters;
    assert!(
        path.mtu <= limit,
        "path {}: mtu {} {c:?}",
        path.id,
        path.mtu
    );
    if c.black_holes == 0 {
        assert_eq!(path.mtu, limit, "path {}: {c:?}", path.id);
    }
}

/// `mpquic-emulate` in front of `server`: one emulated path per spec of `paths` (path `i` is
/// number `i + 1`, `from=` picks it by the client's address), seed 1. Clients send to the
/// emulator's `listen_addr()`.
pub fn emulator(server: SocketAddr, paths: &[&str]) -> mpquic_emulate::Emulator {
    mpquic_emulate::Emulator::start(mpquic_emulate::EmulatorConfig {
        listen: addr("127.0.0.1:0"),
        server,
        paths: paths
            .iter()
            .enumerate()
            .map(|(i, p)| mpquic_emulate::EmulatedPath::parse(p, i + 1).expect("path"))
            .collect(),
        seed: 1,
    })
    .expect("emulator")
}

/// A client bound to `locals` that races its handshake to `remote` from each of them
/// (`Endpoint::connect_racing`, issue 15): the endpoint, its bound addresses, and the winning
/// connection with the index of its local address.
pub async fn race_to(
    locals: &[&str],
    remote: SocketAddr,
) -> (mpquic::Endpoint, Vec<SocketAddr>, mpquic::Connection, usize) {
    let binds: Vec<SocketAddr> = locals.iter().map(|l| addr(l)).collect();
    let client = mpquic::Endpoint::client(&binds).expect("bind");
    let bound = client.local_addrs();
    let pairs: Vec<(SocketAddr, SocketAddr)> = bound.iter().map(|&l| (l, remote)).collect();
    let race = client
        .connect_racing(
            client_config(transport(MultipathMode::Auto)),
            &pairs,
            "localhost",
        )
        .expect("start the race");
    let (conn, winner) = within("race", race).await.expect("a handshake completes");
    (client, bound, conn, winner)
}

/// Download `path` (hq-interop) on `conn`, moving path 0 to the local address `to` once
/// `migrate_after` bytes have arrived (client-initiated migration, RFC 9000 §9). Returns the
/// body and the migration's outcome.
pub async fn download_migrating(
    conn: &mpquic::Connection,
    path: &str,
    migrate_after: usize,
    to: &str,
) -> (Vec<u8>, Result<(), mpquic::OpenPathError>) {
    let target: mpquic::LocalAddr = to.parse().expect("local address");
    download_while(conn, path, migrate_after, || {
        conn.migrate(mpquic::PathId::ZERO, target)
    })
    .await
}

/// Download `path` (hq-interop) on `conn`, running `during()` (a move of path 0) once `after`
/// bytes have arrived, alongside the rest of the download. Returns the body and its outcome.
pub async fn download_while<F: std::future::Future>(
    conn: &mpquic::Connection,
    path: &str,
    after: usize,
    during: impl FnOnce() -> F,
) -> (Vec<u8>, F::Output) {
    let mut body = hq::request(conn, path).await.expect("request");
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    while got.len() < after {
        match within("download", body.read(&mut buf)).await.expect("read") {
            Some(n) => got.extend_from_slice(&buf[..n]),
            None => panic!("the body ended at {} bytes, before the move", got.len()),
        }
    }
    let (outcome, rest) = tokio::join!(
        within("move", during()),
        within("rest of the download", body.read_to_end(100 * MB)),
    );
    got.extend_from_slice(&rest.expect("read the rest"));
    (got, outcome)
}

/// Read from `recv` (any stack's receive stream) until at least `n` bytes have arrived.
pub async fn read_at_least<R: tokio::io::AsyncRead + Unpin>(recv: &mut R, n: usize) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    while got.len() < n {
        let read = within("download", recv.read(&mut buf)).await.expect("read");
        assert!(read > 0, "the stream ended at {} bytes", got.len());
        got.extend_from_slice(&buf[..read]);
    }
    got
}
