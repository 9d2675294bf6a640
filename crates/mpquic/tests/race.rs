//! Issue 15: `Endpoint::connect_racing` on real sockets. Through `mpquic-emulate`, a client
//! with a slow interface (127.0.0.1: 150 ms one way) and a fast one (127.0.0.2: 5 ms) races
//! its handshake over both: the fast one wins, the slow one is opened as a second path, and
//! the download is byte-exact. Without racing the handshake would take two slow round trips.

mod common;

use std::time::{Duration, Instant};

use common::{addr, client_config, payload, root_with, start_server, transport, within, MB};
use mpquic::{hq, ConnectError, Endpoint, MultipathMode, PathStatus};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fast_interface_wins_the_race_and_the_slow_one_becomes_a_path() {
    common::init_tracing();
    let data = payload(MB, 57);
    let (_dir, root) = root_with("file.bin", &data);
    let server = start_server(root, transport(MultipathMode::Auto));
    let paths = [
        "from=127.0.0.1,rate=20mbit,delay=150ms",
        "from=127.0.0.2,rate=50mbit,delay=5ms",
    ];
    let emulator = common::emulator(server.local_addr(), &paths);
    let listen = emulator.listen_addr();

    let started = Instant::now();
    let (client, locals, conn, winner) =
        common::race_to(&["127.0.0.1:0", "127.0.0.2:0"], listen).await;
    let handshake = started.elapsed();
    assert_eq!(winner, 1, "the fast interface wins");
    // Two round trips of the slow path would be 600 ms; the fast one's are 20 ms (the
    // emulator and loopback add little).
    assert!(
        handshake < Duration::from_millis(300),
        "raced handshake took {handshake:?}"
    );
    let slow = within(
        "open the slow interface as a path",
        conn.open_path(locals[0], listen, PathStatus::Available),
    )
    .await
    .expect("second path validated");
    assert_eq!(slow.stats().expect("stats").local, locals[0]);
    let mut body = hq::request(&conn, "/file.bin").await.expect("request");
    let got = within("download", body.read_to_end(2 * MB))
        .await
        .expect("read");
    assert!(got == data, "got {} bytes, content differs", got.len());
    let stats = conn.path_stats();
    assert_eq!(stats.len(), 2, "{stats:?}");
    assert_eq!(stats[0].local, locals[1], "path 0 is the winner's");
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
    eprintln!("{}", emulator.stop().expect("report"));
}

#[tokio::test]
async fn a_dead_interface_loses_the_race_and_an_empty_race_is_refused() {
    let data = payload(64 * 1024, 58);
    let (_dir, root) = root_with("file.bin", &data);
    let server = start_server(root, transport(MultipathMode::Auto));
    // A port nobody answers on: the first attempt can never complete.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
    let client = Endpoint::client(&[addr("127.0.0.1:0"), addr("127.0.0.1:0")]).expect("bind");
    let locals = client.local_addrs();
    let pairs = [
        (locals[0], silent.local_addr().expect("addr")),
        (locals[1], server.local_addr()),
    ];
    let config = client_config(transport(MultipathMode::Auto));
    let race = client
        .connect_racing(config.clone(), &pairs, "localhost")
        .expect("start");
    let (conn, winner) = within("race", race).await.expect("handshake");
    assert_eq!(winner, 1);
    let mut body = hq::request(&conn, "/file.bin").await.expect("request");
    let got = within("download", body.read_to_end(MB))
        .await
        .expect("read");
    assert!(got == data);
    assert!(matches!(
        client.connect_racing(config, &[], "localhost"),
        Err(ConnectError::NoCandidates)
    ));
    conn.close(0, b"done");
}
