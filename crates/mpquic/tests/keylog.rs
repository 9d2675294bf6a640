//! `SSLKEYLOGFILE`: client and server append their TLS secrets in the NSS key log format that
//! Wireshark reads. In its own test binary because it sets a process-wide environment variable.

mod common;

use common::{connect_client, root_with, start_server, transport};
use mpquic::MultipathMode;

/// Labels of the TLS 1.3 secrets (NSS key log format), each logged by both sides.
const LABELS: [&str; 5] = [
    "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
    "SERVER_HANDSHAKE_TRAFFIC_SECRET",
    "CLIENT_TRAFFIC_SECRET_0",
    "SERVER_TRAFFIC_SECRET_0",
    "EXPORTER_SECRET",
];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sslkeylogfile_gets_both_sides_secrets() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("keys.log");
    // Before any configuration is built: rustls reads the variable when the log is created.
    std::env::set_var("SSLKEYLOGFILE", &path);
    let (_root_dir, root) = root_with("file.bin", b"hello");
    let server = start_server(root, transport(MultipathMode::Single));
    let (client, conn) =
        connect_client(server.local_addr(), transport(MultipathMode::Single)).await;
    conn.close(0, b"done");
    common::within("close", client.wait_idle()).await;
    let text = std::fs::read_to_string(&path).expect("the key log was written");
    let mut counts = [0usize; 5];
    for line in text.lines() {
        let fields: Vec<&str> = line.split(' ').collect();
        assert_eq!(fields.len(), 3, "line {line:?}");
        let label = LABELS
            .iter()
            .position(|l| *l == fields[0])
            .unwrap_or_else(|| panic!("unexpected label in {line:?}"));
        counts[label] += 1;
        // 32-byte client random; a SHA-256 (32-byte) or SHA-384 (48-byte) secret.
        assert_eq!(fields[1].len(), 64, "client random in {line:?}");
        assert!([64, 96].contains(&fields[2].len()), "secret in {line:?}");
        assert!(fields[1..]
            .iter()
            .all(|f| f.bytes().all(|b| b.is_ascii_hexdigit())));
    }
    // The client's and the server's configuration each log the five secrets of the connection;
    // Wireshark needs the first four to decrypt QUIC.
    assert_eq!(counts, [2, 2, 2, 2, 2], "{text}");
}
