//! Client-initiated connection migration (RFC 9000 §9) over loopback UDP: the client leaves
//! 127.0.0.1 for 127.0.0.2 in the middle of a download, against our server (without multipath
//! and with RFC 10069) and against quinn, whose server follows migrations; a quinn server that
//! sends disable_active_migration gets none. (aioquic: `interop_aioquic.rs`.)

mod common;

use std::sync::Arc;

use common::{
    addr, connect_from, download_migrating, payload, quinn_answer, quinn_configs, root_with,
    spawn_quinn_server_with, start_server, transport, MB,
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

/// A socket the endpoint does not have is refused before anything changes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn migration_to_an_unbound_address_is_refused_and_to_the_current_one_is_a_no_op() {
    let (_dir, root) = root_with("f.bin", b"x");
    let server = start_server(root, transport(MultipathMode::Single));
    let (_client, conn) = connect_from(
        &["127.0.0.1:0"],
        server.local_addr(),
        transport(MultipathMode::Single),
    )
    .await;
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
