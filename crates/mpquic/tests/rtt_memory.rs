//! Clients made with `mpquic::config::client` remember round-trip times (RFC 9002 §6.2.2): on
//! loopback, through a relay that drops the first datagram of the second connection, that
//! connection's lost Initial goes again within milliseconds instead of after a second.

mod common;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{addr, client_config, root_with, spawn_quinn_server, start_server, transport, within};
use mpquic::MultipathMode;
use tokio::net::UdpSocket;

/// A UDP relay between one client and `server`; while `drop_next` is set, the next datagram
/// from the client is dropped (and the flag cleared).
async fn relay(server: SocketAddr, drop_next: Arc<AtomicBool>) -> SocketAddr {
    let outside = UdpSocket::bind(addr("127.0.0.1:0")).await.unwrap();
    let inside = UdpSocket::bind(addr("127.0.0.1:0")).await.unwrap();
    let listen = outside.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut buf, mut client) = (vec![0u8; 65536], None);
        loop {
            let mut back = vec![0u8; 65536];
            tokio::select! {
                r = outside.recv_from(&mut buf) => {
                    let (n, from) = r.unwrap();
                    client = Some(from);
                    if !drop_next.swap(false, Ordering::SeqCst) {
                        let _ = inside.send_to(&buf[..n], server).await;
                    }
                }
                r = inside.recv_from(&mut back) => {
                    let (n, _) = r.unwrap();
                    if let Some(c) = client {
                        let _ = outside.send_to(&back[..n], c).await;
                    }
                }
            }
        }
    });
    listen
}

/// [`second_handshake_to`] our own server.
async fn second_handshake(config: mpquic::ClientConfig) -> Duration {
    let (_dir, root) = root_with("f", b"x");
    let server = start_server(root, transport(MultipathMode::Auto));
    second_handshake_to(config, server.local_addr()).await
}

/// A first connection to `server` through the relay (closed and drained), then a second one
/// whose first datagram is dropped: how long its handshake took.
async fn second_handshake_to(config: mpquic::ClientConfig, server: SocketAddr) -> Duration {
    let drop_next = Arc::new(AtomicBool::new(false));
    let via = relay(server, drop_next.clone()).await;
    let client = mpquic::Endpoint::client(&[addr("127.0.0.1:0")]).unwrap();
    let connect = || {
        client
            .connect_with(config.clone(), via, "localhost")
            .unwrap()
    };
    let first = within("first handshake", connect()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    first.close(0, b"done");
    within("first connection drained", client.wait_idle()).await;
    drop_next.store(true, Ordering::SeqCst);
    let started = Instant::now();
    within("second handshake", connect()).await.unwrap();
    assert!(
        !drop_next.load(Ordering::SeqCst),
        "the first Initial was dropped"
    );
    started.elapsed()
}

#[tokio::test]
async fn a_lost_first_initial_is_resent_at_once_with_the_rtt_remembered() {
    let config = client_config(transport(MultipathMode::Auto));
    assert!(config.rtt_store.is_some(), "config::client remembers RTTs");
    let took = second_handshake(config).await;
    assert!(
        took < Duration::from_millis(500),
        "second handshake took {took:?}"
    );
}

#[tokio::test]
async fn without_the_rtt_store_a_lost_first_initial_waits_about_a_second() {
    // The control: the same client without memory starts from the 333 ms initial RTT.
    let mut config = client_config(transport(MultipathMode::Auto));
    config.rtt_store = None;
    let took = second_handshake(config).await;
    assert!(
        took > Duration::from_millis(900),
        "second handshake took {took:?}"
    );
}

#[tokio::test]
async fn the_rtt_is_remembered_against_a_quinn_server_too() {
    // The memory is the client's: a quinn server (which knows nothing of it) sees the same
    // early retransmission of the lost Initial.
    let (_endpoint, server) = spawn_quinn_server(|conn| async move {
        let _ = conn.closed().await;
    });
    let config = client_config(transport(MultipathMode::Auto));
    let took = second_handshake_to(config, server).await;
    assert!(
        took < Duration::from_millis(500),
        "second handshake with quinn took {took:?}"
    );
}
