//! The server's decision on each connection attempt (quinn's `Incoming`): accept, refuse
//! (CONNECTION_REFUSED, RFC 9000 §20.1), retry (a Retry packet, RFC 9000 §8.1.2) or ignore;
//! and the client's default configuration (`connect(addr, name)`).

mod common;

use std::time::Duration;

use common::{client_config, connect_client, server_endpoint, transport, within};
use mpquic::{ConnectError, ConnectionError, Endpoint, MultipathMode};

/// CONNECTION_REFUSED (RFC 9000 §20.1).
const CONNECTION_REFUSED: u64 = 0x2;

fn client() -> Endpoint {
    let client = Endpoint::client(&[common::addr("127.0.0.1:0")]).expect("bind client");
    client.set_default_client_config(client_config(transport(MultipathMode::Auto)));
    client
}

/// The client sends "ping" on a new bidirectional stream; the accepted connection answers "pong".
async fn ping_pong(conn: &mpquic::Connection, accepted: &mpquic::Connection) {
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    send.write_all(b"ping").await.expect("write");
    send.finish().expect("finish");
    let (mut s_send, mut s_recv) = within("accept stream", accepted.accept_bi())
        .await
        .expect("stream");
    assert_eq!(s_recv.read_to_end(10).await.expect("read"), b"ping");
    s_send.write_all(b"pong").await.expect("write");
    s_send.finish().expect("finish");
    assert_eq!(
        within("reply", recv.read_to_end(10)).await.expect("reply"),
        b"pong"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_incoming_gives_the_client_connection_refused() {
    let server = server_endpoint(transport(MultipathMode::Auto));
    let ep = server.clone();
    let decided = tokio::spawn(async move {
        let incoming = ep.accept().await.expect("incoming");
        let from = incoming.remote_address();
        assert!(!incoming.remote_address_validated());
        incoming.refuse();
        from
    });
    let client = client();
    let started = std::time::Instant::now();
    let result = within(
        "refusal",
        client
            .connect(server.local_addr(), "localhost")
            .expect("connect"),
    )
    .await;
    let from = decided.await.expect("server task");
    assert_eq!(from, client.local_addr());
    assert_eq!(server.stats().refused, 1);
    match result {
        Err(ConnectionError::Lost(mpquic::CloseReason::PeerTransportClose { code, .. })) => {
            assert_eq!(code, CONNECTION_REFUSED)
        }
        other => panic!("expected CONNECTION_REFUSED, got {other:?}"),
    }
    // At once, not after a handshake timeout.
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retried_incoming_connects_after_a_retry() {
    let server = server_endpoint(transport(MultipathMode::Auto));
    let ep = server.clone();
    let decided = tokio::spawn(async move {
        let first = ep.accept().await.expect("first attempt");
        assert!(!first.remote_address_validated() && first.may_retry());
        first.retry().expect("retry");
        // The client repeats its Initial with our Retry token: its address is validated.
        let second = ep.accept().await.expect("second attempt");
        assert!(second.remote_address_validated());
        // Only one Retry per attempt (RFC 9000 §8.1.2): the attempt comes back.
        let second = second.retry().expect_err("no second Retry").into_incoming();
        second.await.expect("server handshake")
    });
    let client = client();
    let conn = within(
        "handshake after a Retry",
        client
            .connect(server.local_addr(), "localhost")
            .expect("connect"),
    )
    .await
    .expect("connected after a Retry");
    let accepted = within("server", decided).await.expect("server task");
    // Exactly one Retry packet left the server; nothing was refused.
    let stats = server.stats();
    assert_eq!((stats.retries_sent, stats.refused), (1, 0), "{stats:?}");
    ping_pong(&conn, &accepted).await;
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ignored_incoming_is_decided_again_when_the_client_retransmits() {
    let server = server_endpoint(transport(MultipathMode::Auto));
    let ep = server.clone();
    let decided = tokio::spawn(async move {
        ep.accept().await.expect("first attempt").ignore();
        // The client's Initial retransmission (after its PTO) is a new attempt.
        ep.accept().await.expect("again").await.expect("handshake")
    });
    let (client, conn) = connect_client(server.local_addr(), transport(MultipathMode::Auto)).await;
    let accepted = within("server", decided).await.expect("server task");
    assert_eq!(accepted.remote_address(), Some(client.local_addr()));
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_uses_the_endpoint_default_config() {
    let server = server_endpoint(transport(MultipathMode::Auto));
    let accepting = common::accept_one(&server);
    let client = Endpoint::client(&[common::addr("127.0.0.1:0")]).expect("bind client");
    assert!(matches!(
        client.connect(server.local_addr(), "localhost"),
        Err(ConnectError::NoDefaultClientConfig)
    ));
    // Set on one handle, used through another.
    client
        .clone()
        .set_default_client_config(client_config(transport(MultipathMode::Auto)));
    let conn = within(
        "handshake",
        client
            .connect(server.local_addr(), "localhost")
            .expect("connect"),
    )
    .await
    .expect("handshake");
    let accepted = within("accept", accepting).await.expect("accepted");
    assert_eq!(conn.alpn_protocol(), accepted.alpn_protocol());
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}

/// With `set_accept_all` the endpoint answers the client before the application has looked
/// at the attempt: the client's handshake completes although nobody called `accept` yet.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_all_completes_the_handshake_before_the_application_decides() {
    let server = server_endpoint(transport(MultipathMode::Auto));
    server.set_accept_all(true);
    let (client, conn) = connect_client(server.local_addr(), transport(MultipathMode::Auto)).await;
    let incoming = within("accept", server.accept())
        .await
        .expect("the attempt");
    assert_eq!(incoming.remote_address(), client.local_addr());
    assert_eq!(incoming.local_address(), server.local_addr());
    assert!(!incoming.remote_address_validated());
    // Already answered: no Retry is possible any more.
    assert!(!incoming.may_retry());
    let incoming = incoming.retry().expect_err("no Retry").into_incoming();
    let accepted = within("handshake", incoming.accept().expect("accept"))
        .await
        .expect("accepted");
    ping_pong(&conn, &accepted).await;
    let stats = server.stats();
    assert_eq!((stats.retries_sent, stats.refused), (0, 0), "{stats:?}");
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}

/// Refusing an attempt the endpoint already accepted closes its connection with
/// CONNECTION_REFUSED, as refusing a pending attempt answers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusing_an_accepted_attempt_closes_it_with_connection_refused() {
    let server = server_endpoint(transport(MultipathMode::Auto));
    server.set_accept_all(true);
    let (client, conn) = connect_client(server.local_addr(), transport(MultipathMode::Auto)).await;
    within("accept", server.accept())
        .await
        .expect("the attempt")
        .refuse();
    match within("refusal", conn.closed()).await {
        ConnectionError::Lost(mpquic::CloseReason::PeerTransportClose { code, .. }) => {
            assert_eq!(code, CONNECTION_REFUSED)
        }
        other => panic!("expected CONNECTION_REFUSED, got {other:?}"),
    }
    assert_eq!(server.stats().refused, 1);
    within("close", client.wait_idle()).await;
}
