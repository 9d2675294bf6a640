//! noq (a quinn fork implementing RFC 10069 multipath) as a client of our server, shared by the
//! interop tests over plain loopback and over emulated paths.

use std::net::SocketAddr;
use std::sync::Arc;

use mpquic::{hq, Endpoint, TransportConfig};
use tokio::sync::mpsc;

use super::{addr, server_endpoint, within, MB};

/// Paths noq may have open at once (it advertises `initial_max_path_id` = this - 1).
pub const NOQ_PATHS: u32 = 4;

/// noq's transport settings: multipath on (`initial_max_path_id` sent) or off.
pub fn noq_transport(multipath: bool) -> Arc<noq::TransportConfig> {
    let mut t = noq::TransportConfig::default();
    if multipath {
        t.max_concurrent_multipath_paths(NOQ_PATHS);
    }
    Arc::new(t)
}

/// Our hq-interop server on 127.0.0.1 serving `root`, handing out its side of each connection.
pub fn our_server(
    root: Arc<std::path::PathBuf>,
    transport: TransportConfig,
) -> (Endpoint, mpsc::UnboundedReceiver<mpquic::Connection>) {
    let endpoint = server_endpoint(transport);
    let (tx, rx) = mpsc::unbounded_channel();
    super::serve_each(&endpoint, move |conn| {
        let (root, tx) = (root.clone(), tx.clone());
        async move {
            let _ = tx.send(conn.clone());
            hq::serve_connection(conn, root).await;
        }
    });
    (endpoint, rx)
}

/// A noq client endpoint on the IPv4 wildcard address (so that it can send from any local
/// address: noq-udp sets the source with IP_PKTINFO), connected to `server`.
pub async fn noq_client(server: SocketAddr, multipath: bool) -> (noq::Endpoint, noq::Connection) {
    let tls =
        mpquic::tls::client_config(&[hq::ALPN], mpquic::tls::ServerTrust::Insecure).expect("tls");
    let crypto = noq::crypto::rustls::QuicClientConfig::try_from(tls).expect("noq crypto");
    let mut config = noq::ClientConfig::new(Arc::new(crypto));
    config.transport_config(noq_transport(multipath));
    let endpoint = noq::Endpoint::client(addr("0.0.0.0:0")).expect("noq client");
    let conn = within(
        "noq handshake",
        endpoint
            .connect_with(config, server, "localhost")
            .expect("connect"),
    )
    .await
    .expect("noq handshake with us");
    (endpoint, conn)
}

/// `GET /file.bin` from a noq connection.
pub async fn noq_get(conn: &noq::Connection) -> Vec<u8> {
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    send.write_all(b"GET /file.bin\r\n").await.expect("request");
    send.finish().expect("finish");
    within("download", recv.read_to_end(20 * MB))
        .await
        .expect("noq read")
}

/// noq opens a path from `local` to `server` (and waits for its validation); noq refuses while
/// it holds no connection ID of ours for a new path ID (our server issues them right after the
/// handshake): `RemoteCidsExhausted` is retried every 20 ms, within the test timeout.
pub async fn noq_open_path(
    conn: &noq::Connection,
    server: SocketAddr,
    local: std::net::IpAddr,
) -> noq::Path {
    within("noq open_path", async {
        loop {
            let tuple = noq::FourTuple::new(server, Some(local));
            match conn.open_path(tuple, noq::PathStatus::Available).await {
                Ok(path) => break path,
                Err(noq::PathError::RemoteCidsExhausted) => {
                    tokio::time::sleep(std::time::Duration::from_millis(20)).await
                }
                Err(e) => panic!("noq could not open a path from {local}: {e}"),
            }
        }
    })
    .await
}
