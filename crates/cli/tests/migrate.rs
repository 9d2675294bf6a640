//! `mpquic client --migrate-to`: a download through `mpquic emulate` (20 Mbit/s, so it lasts
//! about two seconds) moves from 127.0.0.2 to 127.0.0.3 part-way, with a server that does not do
//! multipath; the emulator relays each client address from a socket of its own, so the server
//! sees its peer move as it would behind a real network change (RFC 9000 §9).

mod common;

use common::{run, served_file, start, start_file_server};

#[test]
fn client_moves_to_another_address_mid_download() {
    let dir = tempfile::tempdir().expect("temp dir");
    // 4 MB at 20 Mbit/s: 1.6 s, time enough for a second PATH_CHALLENGE (666 ms after the
    // first, twice the initial RTT) should a queue drop the first exchange.
    let (root, data) = served_file(dir.path(), "file.bin", 4_000_000);
    let root = root.as_str();
    let (_server, server) = start_file_server(root, "single");
    let (_emulator, listen) = start(
        &[
            "emulate",
            "--listen",
            "127.0.0.1:0",
            "--server",
            &server,
            "--duration",
            "60s",
            "--path",
            "rate=20mbit,delay=10ms,queue=1bdp",
        ],
        "clients send to ",
    );
    let moves = [
        "--path",
        "127.0.0.2:0",
        "--migrate-to",
        "127.0.0.3",
        "--migrate-after",
        "300ms",
    ];
    let stderr = fetch(
        &format!("https://{listen}/file.bin"),
        &moves,
        dir.path(),
        &data,
    );
    assert!(stderr.contains("migrated to 127.0.0.3"), "stderr: {stderr}");
}

/// `mpquic client URL --insecure --alpn hq-interop EXTRA -o FILE` under `dir`: asserts success
/// and that the file received is `data`; returns the client's stderr.
fn fetch(url: &str, extra: &[&str], dir: &std::path::Path, data: &[u8]) -> String {
    let output = dir.join("out.bin");
    let mut args = vec![
        "client",
        url,
        "--insecure",
        "--quiet",
        "--alpn",
        "hq-interop",
    ];
    args.extend_from_slice(extra);
    args.extend(["--timeout", "10s", "-o", output.to_str().expect("utf-8")]);
    let out = run(&args);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "stderr: {stderr}");
    assert!(
        std::fs::read(&output).expect("output") == data,
        "the download differs"
    );
    stderr
}

#[test]
fn migrate_to_needs_migrate_after() {
    let out = run(&[
        "client",
        "https://127.0.0.1:4433/x",
        "--insecure",
        "--migrate-to",
        "127.0.0.3",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--migrate-after"), "stderr: {stderr}");
}

/// `mpquic client --to-preferred-address`: the server listens on 127.0.0.1 and 127.0.0.2 and
/// advertises the second (`--advertise`, RFC 9000 §18.2) without multipath; the client moves
/// path 0 there once the handshake is confirmed (§9.6) and the download completes byte-exact.
/// Against a server that advertises nothing the client says so and downloads where it is.
#[test]
fn client_moves_to_the_servers_preferred_address() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (root, data) = served_file(dir.path(), "file.bin", 3_000_000);
    let root = root.as_str();
    let port = {
        let socket = std::net::UdpSocket::bind("127.0.0.2:0").expect("bind 127.0.0.2");
        socket.local_addr().expect("port").port()
    };
    let preferred = format!("127.0.0.2:{port}");
    for advertise in [true, false] {
        let mut args = vec![
            "server",
            "--listen",
            "127.0.0.1:0",
            "--listen",
            &preferred,
            "--root",
            root,
            "--multipath",
            "single",
        ];
        if advertise {
            args.extend(["--advertise", "127.0.0.2"]);
        }
        let (_server, server) = start(&args, "listening on ");
        let url = format!("https://{server}/file.bin");
        let stderr = fetch(&url, &["--to-preferred-address"], dir.path(), &data);
        let said = match advertise {
            true => format!("moved to the server's preferred address {preferred}"),
            false => "the server advertised no preferred address".to_string(),
        };
        assert!(stderr.contains(&said), "stderr: {stderr}");
    }
}
