//! The path API (issue 16): `open_path(local, remote, status)` with an IP alone, its future
//! resolving to validated or failed, broadcast path events with an explicit lag error, local
//! status changes reported, and a dual-stack second path (IPv4 path 0, IPv6 path 1).

mod common;

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use common::{
    accept_one, addr, connect_from, payload, root_with, server_endpoint, start_server, transport,
    within, MB,
};
use mpquic::{
    hq, Endpoint, MultipathMode, OpenPathError, PathEvent, PathEvents, PathEventsError, PathStatus,
    SchedulerKind, StatusOrigin, TransportConfig, Validation,
};

fn ip(s: &str) -> IpAddr {
    s.parse().expect("IP address")
}

/// Every event waiting on `events` (without waiting for more).
fn drain(events: &mut PathEvents) -> Vec<PathEvent> {
    let mut out = Vec::new();
    while let Some(e) = events.try_recv().expect("no lag, not closed") {
        out.push(e);
    }
    out
}

/// A server offering multipath and serving `file.bin` = "x", and a client with sockets on
/// 127.0.0.1 and 127.0.0.2 connected to it from the first (the directory and the server must
/// outlive the test's use of the connection).
async fn served_two_address_client() -> (tempfile::TempDir, Endpoint, Endpoint, mpquic::Connection)
{
    let (dir, root) = root_with("file.bin", b"x");
    let server = start_server(root, transport(MultipathMode::Auto));
    let (client, conn) = connect_from(
        &["127.0.0.1:0", "127.0.0.2:0"],
        server.local_addr(),
        transport(MultipathMode::Auto),
    )
    .await;
    (dir, server, client, conn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_path_with_an_ip_alone_resolves_once_validated() {
    let (_dir, server, client, conn) = served_two_address_client().await;
    let mut events = conn.path_events();
    // No port: whichever socket is bound to 127.0.0.2 (its port was picked by the system).
    let path = within(
        "validation",
        conn.open_path(ip("127.0.0.2"), None, PathStatus::Available),
    )
    .await
    .expect("second path validated");
    let stats = path.stats().expect("path stats");
    assert_eq!(stats.validation, Validation::Validated);
    assert_eq!(stats.local, client.local_addrs()[1]);
    assert_eq!(stats.remote, server.local_addr());
    let seen = drain(&mut events);
    assert!(
        seen.contains(&PathEvent::Opened { id: path.id() })
            && seen.contains(&PathEvent::Validated { id: path.id() }),
        "{seen:?}"
    );
    // `IP:0` means the same; an IP no socket is bound to is refused at once.
    assert!(matches!(
        conn.open_path(addr("127.0.0.3:0"), None, PathStatus::Available)
            .await,
        Err(OpenPathError::NotBound(_))
    ));
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn path_to_an_unreachable_remote_fails_within_the_validation_timeout() {
    let (_dir, _server, client, conn) = served_two_address_client().await;
    // A bound socket that never answers: PATH_CHALLENGEs go unanswered (no ICMP either).
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    let silent_addr = silent.local_addr().expect("addr");
    let mut events = conn.path_events();
    let started = Instant::now();
    let result = within(
        "validation failure",
        conn.open_path(ip("127.0.0.2"), silent_addr, PathStatus::Available),
    )
    .await;
    let elapsed = started.elapsed();
    eprintln!("path to a silent remote failed after {elapsed:?}: {result:?}");
    let Err(OpenPathError::ValidationFailed(id)) = result else {
        panic!("expected a validation failure, got {result:?}");
    };
    // Three unanswered PATH_CHALLENGEs (their waits grow with the path's PTO backoff): about
    // 6 s on loopback with the default 333 ms initial RTT.
    assert!(elapsed < Duration::from_secs(12), "{elapsed:?}");
    let seen = drain(&mut events);
    assert!(seen.contains(&PathEvent::Failed { id }), "{seen:?}");
    // The connection goes on over path 0.
    let mut body = hq::request(&conn, "/file.bin").await.expect("request");
    assert_eq!(
        within("download", body.read_to_end(10))
            .await
            .expect("read"),
        b"x"
    );
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_subscribers_see_every_event_and_a_slow_one_lags() {
    let (_dir, _server, client, conn) = served_two_address_client().await;
    let (mut fast, mut slow) = (conn.path_events(), conn.path_events());
    let path = within(
        "validation",
        conn.open_path(ip("127.0.0.2"), None, PathStatus::Backup),
    )
    .await
    .expect("second path");
    let id = path.id();
    let expected = vec![
        PathEvent::Opened { id },
        PathEvent::StatusChanged {
            id,
            status: PathStatus::Backup,
            origin: StatusOrigin::Local,
        },
        PathEvent::Validated { id },
    ];
    let (got_fast, got_slow) = (drain(&mut fast), drain(&mut slow));
    assert_eq!(got_fast, expected);
    assert_eq!(got_slow, expected);

    // More status changes than a subscriber may fall behind by; only `fast` keeps up.
    let changes = 2 * PathEvents::CAPACITY;
    for i in 0..changes {
        let status = if i % 2 == 0 {
            PathStatus::Available
        } else {
            PathStatus::Backup
        };
        path.set_status(status).expect("set status");
        let event = within("status event", fast.recv()).await.expect("event");
        assert_eq!(
            event,
            PathEvent::StatusChanged {
                id,
                status,
                origin: StatusOrigin::Local
            }
        );
    }
    match slow.recv().await {
        Err(PathEventsError::Lagged(n)) => {
            assert_eq!(n as usize, changes - PathEvents::CAPACITY, "missed events");
        }
        other => panic!("expected a lag error, got {other:?}"),
    }
    // After the error the slow subscriber reads the events still kept, the newest last.
    let rest = drain(&mut slow);
    assert_eq!(rest.len(), PathEvents::CAPACITY);
    assert_eq!(
        rest.last(),
        Some(&PathEvent::StatusChanged {
            id,
            status: PathStatus::Backup,
            origin: StatusOrigin::Local
        })
    );
    // Once the connection has ended a subscription says so.
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
    assert_eq!(
        within("closed", fast.recv()).await,
        Err(PathEventsError::Closed)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_set_path_status_yields_a_status_changed_event() {
    let server = server_endpoint(transport(MultipathMode::Auto));
    let accepting = accept_one(&server);
    let (client, conn) = connect_from(
        &["127.0.0.1:0", "127.0.0.2:0"],
        server.local_addr(),
        transport(MultipathMode::Auto),
    )
    .await;
    let accepted = within("accept", accepting).await.expect("accepted");
    let mut server_events = accepted.path_events();
    let path = within(
        "validation",
        conn.open_path(ip("127.0.0.2"), None, PathStatus::Available),
    )
    .await
    .expect("second path");
    let mut events = conn.path_events();
    conn.set_path_status(path.id(), PathStatus::Backup)
        .expect("set status");
    let local = PathEvent::StatusChanged {
        id: path.id(),
        status: PathStatus::Backup,
        origin: StatusOrigin::Local,
    };
    assert_eq!(within("local event", events.recv()).await, Ok(local));
    // The same status again is no change: no event.
    conn.set_path_status(path.id(), PathStatus::Backup)
        .expect("set status");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(events.try_recv(), Ok(None));
    // The server hears of it in a PATH_STATUS_BACKUP frame (RFC 10069 §3.3).
    let peer = within("peer event", async {
        loop {
            match server_events.recv().await.expect("server event") {
                e @ PathEvent::StatusChanged { .. } => break e,
                _ => continue,
            }
        }
    })
    .await;
    assert_eq!(
        peer,
        PathEvent::StatusChanged {
            id: path.id(),
            status: PathStatus::Backup,
            origin: StatusOrigin::Peer,
        }
    );
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}

/// A client bound to 127.0.0.1 and [::1], connected (handshake done) to `v4` over IPv4.
async fn dual_stack_client(v4: SocketAddr) -> (Endpoint, mpquic::Connection) {
    let client = Endpoint::client(&[addr("127.0.0.1:0"), addr("[::1]:0")]).expect("bind client");
    client.set_default_client_config(common::client_config(transport(MultipathMode::Auto)));
    let conn = within(
        "handshake",
        client.connect(v4, "localhost").expect("connect"),
    )
    .await
    .expect("handshake");
    (client, conn)
}

/// A server listening on 127.0.0.1 and [::1] (two sockets), serving hq-interop from `root`.
/// None when this machine has no IPv6 loopback.
fn dual_stack_server(
    root: std::sync::Arc<std::path::PathBuf>,
    transport: TransportConfig,
) -> Option<Endpoint> {
    let bind = [addr("127.0.0.1:0"), addr("[::1]:0")];
    let endpoint = match Endpoint::server(common::server_config(transport), &bind) {
        Ok(endpoint) => endpoint,
        Err(e) => {
            eprintln!("skipped: cannot bind [::1] ({e})");
            return None;
        }
    };
    let ep = endpoint.clone();
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let root = root.clone();
            tokio::spawn(async move {
                if let Ok(conn) = incoming.await {
                    hq::serve_connection(conn, root).await;
                }
            });
        }
    });
    Some(endpoint)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ipv4_path_zero_and_ipv6_second_path_carry_data() {
    let data = payload(4 * MB, 41);
    let (_dir, root) = root_with("file.bin", &data);
    let round_robin = transport(MultipathMode::Auto).scheduler(SchedulerKind::RoundRobin);
    let Some(server) = dual_stack_server(root, round_robin) else {
        return;
    };
    let (v4, v6): (SocketAddr, SocketAddr) = (server.local_addrs()[0], server.local_addrs()[1]);
    let (client, conn) = dual_stack_client(v4).await;
    // Without a remote the path would go to the IPv4 address: refused, not left to time out.
    assert!(matches!(
        conn.try_open_path(ip("::1"), None, PathStatus::Available),
        Err(OpenPathError::NoRemote(_))
    ));
    let path = within(
        "validation",
        conn.open_path(ip("::1"), v6, PathStatus::Available),
    )
    .await
    .expect("IPv6 path validated");
    let mut body = hq::request(&conn, "/file.bin").await.expect("request");
    let got = within("download", body.read_to_end(8 * MB))
        .await
        .expect("read");
    assert!(got == data, "content differs ({} bytes)", got.len());
    let paths = conn.path_stats();
    for p in &paths {
        eprintln!(
            "path {} {} -> {}: received {} B, rtt {:?}",
            p.id, p.local, p.remote, p.counters.bytes_received, p.rtt
        );
    }
    let second = paths.iter().find(|p| p.id == path.id()).expect("path 1");
    assert_eq!(second.remote, v6);
    assert!(second.local.is_ipv6());
    for p in &paths {
        assert!(
            p.counters.bytes_received > 100_000,
            "path {} carried only {} bytes",
            p.id,
            p.counters.bytes_received
        );
    }
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}

/// RFC 9000 §18.2 preferred_address with multipath (RFC 10069 "Path ID and connection IDs"):
/// a server on 127.0.0.1 and [::1] advertising its IPv6 address; the IPv4 client learns it and
/// opens a path from ::1 without naming the remote.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn second_path_goes_to_the_advertised_address_of_its_family() {
    let (_dir, root) = root_with("file.bin", &payload(MB, 43));
    let Some(server) = dual_stack_server(root, transport(MultipathMode::Auto)) else {
        return;
    };
    let (v4, v6): (SocketAddr, SocketAddr) = (server.local_addrs()[0], server.local_addrs()[1]);
    // The IPv6 port is known once bound: advertise it from now on.
    let mut advertising = common::server_config(transport(MultipathMode::Auto));
    advertising.set_preferred_address(v6);
    server
        .set_server_config(advertising)
        .expect("valid server config");
    let (client, conn) = dual_stack_client(v4).await;
    assert_eq!(conn.peer_preferred_address(), vec![v6]);
    let path = within(
        "validation",
        conn.open_path(ip("::1"), None, PathStatus::Available),
    )
    .await
    .expect("IPv6 path to the advertised address validated");
    let stats = path.stats().expect("path stats");
    assert_eq!(stats.remote, v6);
    assert!(stats.local.is_ipv6());
    // Path 0 stays where it was: nothing migrated.
    assert_eq!(conn.remote_address(), Some(v4));
    let mut body = hq::request(&conn, "/file.bin").await.expect("request");
    let got = within("download", body.read_to_end(2 * MB))
        .await
        .expect("read");
    assert_eq!(got.len(), MB);
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_advertised_address_is_refused() {
    let server = common::server_endpoint(transport(MultipathMode::Auto));
    let mut config = common::server_config(transport(MultipathMode::Auto));
    config.set_preferred_address(addr("[::]:4433"));
    let err = server.set_server_config(config).unwrap_err();
    assert!(err.to_string().contains("preferred_address"), "{err}");
}
