//! A crowd of multipath clients at once against our server: noq's (RFC 10069) and ours, each
//! connecting from 127.0.0.1, opening a second path from 127.0.0.2 and downloading byte-exact.
//! (`examples/loadtest --paths N [--client-impl noq]` does the same with 1,000 clients.)

mod common;

use std::net::IpAddr;

use common::noq::{noq_client, noq_get, noq_open_path, our_server};
use common::{connect_from, payload, root_with, transport, within, TEST_TIMEOUT};
use mpquic::{hq, MultipathMode, PathStatus};
use tokio::task::JoinSet;

const CLIENTS: usize = 40;
const SIZE: usize = 300_000;

/// Our server with `/file.bin`; every connection it accepts also goes to the returned channel.
fn server() -> (
    tempfile::TempDir,
    mpquic::Endpoint,
    tokio::sync::mpsc::UnboundedReceiver<mpquic::Connection>,
) {
    let (dir, root) = root_with("file.bin", &payload(SIZE, 9));
    let (endpoint, conns) = our_server(root, transport(MultipathMode::Auto));
    (dir, endpoint, conns)
}

/// Every server connection of the run had a second path, and its client got the file.
async fn check_server_side(conns: &mut tokio::sync::mpsc::UnboundedReceiver<mpquic::Connection>) {
    for i in 0..CLIENTS {
        let conn = within("server connection", conns.recv()).await.unwrap();
        let paths = conn.path_stats();
        assert!(
            paths.len() >= 2,
            "server connection {i} has {} path(s)",
            paths.len()
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crowd_of_noq_multipath_clients_downloads_from_our_server() {
    let (_dir, endpoint, mut conns) = server();
    let addr = endpoint.local_addr();
    let second: IpAddr = "127.0.0.2".parse().unwrap();
    let mut clients = JoinSet::new();
    for _ in 0..CLIENTS {
        clients.spawn(async move {
            let (client, conn) = noq_client(addr, true).await;
            noq_open_path(&conn, addr, second).await;
            let got = noq_get(&conn).await;
            assert!(
                got == payload(SIZE, 9),
                "a noq client got {} bytes",
                got.len()
            );
            conn.close(0u32.into(), b"done");
            client.wait_idle().await;
        });
    }
    while let Some(r) = within("noq crowd", clients.join_next()).await {
        r.expect("noq client");
    }
    check_server_side(&mut conns).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crowd_of_our_multipath_clients_downloads_from_our_server() {
    let (_dir, endpoint, mut conns) = server();
    let addr = endpoint.local_addr();
    let mut clients = JoinSet::new();
    for _ in 0..CLIENTS {
        clients.spawn(async move {
            let locals = ["127.0.0.1:0", "127.0.0.2:0"];
            let (client, conn) = connect_from(&locals, addr, transport(MultipathMode::Auto)).await;
            let second = client.local_addrs()[1];
            tokio::time::timeout(
                TEST_TIMEOUT,
                conn.open_path(second, None, PathStatus::Available),
            )
            .await
            .expect("validation of the second path in time")
            .expect("second path");
            let mut recv = hq::request(&conn, "/file.bin").await.expect("request");
            let got = within("download", recv.read_to_end(2 * SIZE))
                .await
                .unwrap();
            assert!(got == payload(SIZE, 9), "a client got {} bytes", got.len());
            conn.close(0, b"done");
        });
    }
    while let Some(r) = within("crowd", clients.join_next()).await {
        r.expect("client");
    }
    check_server_side(&mut conns).await;
}
