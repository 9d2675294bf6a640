//! Client-initiated connection migration (RFC 9000 §9) over loopback UDP: the client leaves
//! 127.0.0.1 for 127.0.0.2 in the middle of a download, against our server (without multipath
//! and with RFC 10069) and against quinn, whose server follows migrations; a quinn server that
//! sends disable_active_migration gets none. (aioquic: `interop_aioquic.rs`.) Path 0 also
//! moves to a server's preferred address (RFC 9000 §9.6), ours and quinn's.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use common::{
    addr, connect_from, download_migrating, download_while, payload, quinn_answer, quinn_configs,
    root_with, spawn_quinn_server_with, start_server, transport, MB,
};
use mpquic::{MultipathMode, OpenPathError, PathId};
use mpquic_proto::PathError;

const LOCALS: [&str; 2] = ["127.0.0.1:0", "127.0.0.2:0"];

fn path0_local(conn: &mpquic::Connection) -> std::net::SocketAddr {
    let paths = conn.path_stats();
    paths
        .iter()
        .find(|p| p.id == PathId::ZERO)
        .expect("path 0")
        .local
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_moves_to_another_address_mid_download_from_our_server() {
    let data = payload(5 * MB, 21);
    for mode in [
        MultipathMode::Single,
        MultipathMode::Mpns,
        MultipathMode::Spns,
    ] {
        let (_dir, root) = root_with("f.bin", &data);
        let server = start_server(root, transport(mode));
        let (_client, conn) = connect_from(&LOCALS, server.local_addr(), transport(mode)).await;
        let (got, migrated) = download_migrating(&conn, "/f.bin", MB, "127.0.0.2").await;
        assert!(
            got == data,
            "{mode:?}: download differs ({} bytes)",
            got.len()
        );
        assert!(migrated.is_ok(), "{mode:?}: {migrated:?}");
        assert_eq!(
            path0_local(&conn).ip(),
            addr("127.0.0.2:0").ip(),
            "{mode:?}"
        );
    }
}

/// quinn's server follows a client that moves (its default), answering the PATH_CHALLENGE
/// from the new address and accepting the new connection ID.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_moves_to_another_address_mid_download_from_quinn() {
    let data = Arc::new(payload(5 * MB, 22));
    let served = data.clone();
    let (_quinn, server) = spawn_quinn_server_with(quinn_configs().0, move |conn| {
        let data = served.clone();
        async move {
            while let Ok((send, recv)) = conn.accept_bi().await {
                quinn_answer(send, recv, &data).await;
            }
        }
    });
    let (_client, conn) = connect_from(&LOCALS, server, transport(MultipathMode::Auto)).await;
    let (got, migrated) = download_migrating(&conn, "/f.bin", MB, "127.0.0.2").await;
    assert!(got == *data, "download differs ({} bytes)", got.len());
    assert!(migrated.is_ok(), "{migrated:?}");
    assert_eq!(path0_local(&conn).ip(), addr("127.0.0.2:0").ip());
}

/// RFC 9000 §18.2: a server that sends disable_active_migration (quinn's `migration(false)`)
/// gets no migration; the connection carries on from where it was.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_migration_to_a_server_that_disables_it() {
    let data = Arc::new(payload(100_000, 23));
    let served = data.clone();
    let mut config = quinn_configs().0;
    config.migration(false);
    let (_quinn, server) = spawn_quinn_server_with(config, move |conn| {
        let data = served.clone();
        async move {
            while let Ok((send, recv)) = conn.accept_bi().await {
                quinn_answer(send, recv, &data).await;
            }
        }
    });
    let (_client, conn) = connect_from(&LOCALS, server, transport(MultipathMode::Auto)).await;
    let refused = conn.migrate(PathId::ZERO, addr("127.0.0.2:0")).await;
    assert!(
        matches!(
            refused,
            Err(OpenPathError::Path(PathError::MigrationDisabled))
        ),
        "{refused:?}"
    );
    let mut body = mpquic::hq::request(&conn, "/f.bin").await.expect("request");
    let got = common::within("download", body.read_to_end(MB))
        .await
        .expect("read");
    assert!(got == *data);
    assert_eq!(path0_local(&conn).ip(), addr("127.0.0.1:0").ip());
}

/// Our server without multipath, serving one small file, and a client connected to it from
/// 127.0.0.1: (file root, server, client, connection).
async fn single_path_connection() -> (
    tempfile::TempDir,
    mpquic::Endpoint,
    mpquic::Endpoint,
    mpquic::Connection,
) {
    let (dir, root) = root_with("f.bin", b"x");
    let server = start_server(root, transport(MultipathMode::Single));
    let single = transport(MultipathMode::Single);
    let (client, conn) = connect_from(&["127.0.0.1:0"], server.local_addr(), single).await;
    (dir, server, client, conn)
}

/// A socket the endpoint does not have is refused before anything changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migration_to_an_unbound_address_is_refused_and_to_the_current_one_is_a_no_op() {
    let (_dir, _server, _client, conn) = single_path_connection().await;
    let refused = conn.migrate(PathId::ZERO, addr("127.0.0.3:0")).await;
    assert!(
        matches!(refused, Err(OpenPathError::NotBound(_))),
        "{refused:?}"
    );
    // The address in use: nothing to do, at once.
    let here = path0_local(&conn);
    common::within("no-op migration", conn.migrate(PathId::ZERO, here))
        .await
        .expect("a move to the current address succeeds");
}

/// Our server bound to 127.0.0.1 and 127.0.0.2 (ports of their own), advertising the second
/// as its preferred address (RFC 9000 §9.6), serving `root`. Returns it and both addresses.
fn server_with_preferred_address(
    root: Arc<std::path::PathBuf>,
    mode: MultipathMode,
) -> (mpquic::Endpoint, SocketAddr, SocketAddr) {
    let bind = [addr("127.0.0.1:0"), addr("127.0.0.2:0")];
    let server =
        mpquic::Endpoint::server(common::server_config(transport(mode)), &bind).expect("bind");
    let (original, preferred) = (server.local_addrs()[0], server.local_addrs()[1]);
    let mut config = common::server_config(transport(mode));
    config.set_preferred_address(preferred);
    server
        .set_server_config(config)
        .expect("valid server config");
    common::serve_each(&server, move |conn| {
        let root = root.clone();
        async move {
            mpquic::hq::serve_connection(conn, root).await;
        }
    });
    (server, original, preferred)
}

/// RFC 9000 §9.6: path 0 moves to our server's preferred address in the middle of a download,
/// without multipath and with it; the download completes byte-exact and the connection then
/// talks to the preferred address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_moves_to_our_servers_preferred_address_mid_download() {
    let data = payload(5 * MB, 23);
    for mode in [MultipathMode::Single, MultipathMode::Mpns] {
        let (_dir, root) = root_with("f.bin", &data);
        let (_server, original, preferred) = server_with_preferred_address(root, mode);
        let (_client, conn) = connect_from(&["127.0.0.1:0"], original, transport(mode)).await;
        assert_eq!(conn.peer_preferred_address(), vec![preferred], "{mode:?}");
        let (got, moved) =
            download_while(&conn, "/f.bin", MB, || conn.migrate_to_preferred_address()).await;
        assert!(
            got == data,
            "{mode:?}: download differs ({} bytes)",
            got.len()
        );
        assert_eq!(moved.expect("moved"), preferred, "{mode:?}");
        assert_eq!(conn.remote_address(), Some(preferred), "{mode:?}");
        // Once there, a second call has nothing to do.
        let again = common::within("again", conn.migrate_to_preferred_address()).await;
        assert_eq!(again.expect("no-op"), preferred, "{mode:?}");
    }
}

/// quinn's server advertises a preferred address (`preferred_address_v4`) and takes the
/// client's packets there (quinn's own client never moves). The quinn endpoint is bound to
/// 0.0.0.0 so that the one socket receives at both loopback addresses.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_moves_to_a_quinn_servers_preferred_address() {
    let data = Arc::new(payload(3 * MB, 24));
    let served = data.clone();
    // The local IP quinn's connection uses once it has sent the whole answer.
    let quinn_local = Arc::new(std::sync::Mutex::new(None));
    let seen = quinn_local.clone();
    let (quinn, bound) = spawn_quinn_server_with(quinn_configs().0, move |conn| {
        let (data, seen) = (served.clone(), seen.clone());
        async move {
            while let Ok((send, recv)) = conn.accept_bi().await {
                quinn_answer(send, recv, &data).await;
                *seen.lock().unwrap() = conn.local_ip();
            }
        }
    });
    // Rebind the quinn endpoint to 0.0.0.0 on a port of its own and advertise 127.0.0.2.
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").expect("bind 0.0.0.0");
    let port = socket.local_addr().expect("port").port();
    quinn.rebind(socket).expect("rebind");
    let mut config = quinn_configs().0;
    let preferred = std::net::SocketAddrV4::new(std::net::Ipv4Addr::new(127, 0, 0, 2), port);
    config.preferred_address_v4(Some(preferred));
    quinn.set_server_config(Some(config));
    assert_ne!(bound.port(), 0);
    let original = addr(&format!("127.0.0.1:{port}"));
    let (_client, conn) =
        connect_from(&["127.0.0.1:0"], original, transport(MultipathMode::Auto)).await;
    assert_eq!(
        conn.peer_preferred_address(),
        vec![SocketAddr::V4(preferred)]
    );
    let (got, moved) =
        download_while(&conn, "/f.bin", MB, || conn.migrate_to_preferred_address()).await;
    assert!(got == *data, "download differs ({} bytes)", got.len());
    assert_eq!(moved.expect("moved"), SocketAddr::V4(preferred));
    assert_eq!(conn.remote_address(), Some(SocketAddr::V4(preferred)));
    // quinn finished its answer: it took everything the client sent to its preferred address.
    // It answers from its original address still (quinn-proto 0.11 keeps a connection's
    // `local_ip` for good); our client takes those packets, which do not come from a new
    // server address (RFC 9000 §9.6 asks to discard only those).
    common::within("quinn's answer", async {
        while quinn_local.lock().unwrap().is_none() {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    })
    .await;
}

/// A server without a preferred address: the move is refused at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_move_to_a_preferred_address_nobody_advertised() {
    let (_dir, _server, _client, conn) = single_path_connection().await;
    let refused = common::within("refusal", conn.migrate_to_preferred_address()).await;
    assert!(
        matches!(
            refused,
            Err(OpenPathError::Path(PathError::NoPreferredAddress))
        ),
        "{refused:?}"
    );
}
