//! Hostile input over real UDP on loopback (issue 12): a flood of malformed datagrams, including
//! garbage that looks like client Initials, must leave the server serving the next real client.

mod common;

use std::time::{Duration, Instant};

use common::{connect_client, payload, root_with, start_server, transport, within, MB};
use mpquic::{hq, MultipathMode};

/// Datagrams of many shapes: short headers, truncated long headers, Initials of every size
/// with random protection, unknown versions, empty and one-byte datagrams.
fn malformed(i: u32, rng: &mut u64) -> Vec<u8> {
    let mut next = || {
        *rng ^= *rng << 13;
        *rng ^= *rng >> 7;
        *rng ^= *rng << 17;
        *rng as u8
    };
    let len = match i % 5 {
        0 => 1200,
        1 => 1350,
        2 => usize::from(next()) * 4,
        3 => 40,
        _ => (i as usize % 1500).max(1),
    };
    let mut d: Vec<u8> = (0..len).map(|_| next()).collect();
    if let (Some(first), true) = (d.first_mut(), i % 5 < 2) {
        // A long-header Initial of QUIC v1 with 8-byte CIDs and random "protected" bytes.
        *first = 0xc0 | (*first & 0x0f);
        d[1..5].copy_from_slice(&1u32.to_be_bytes());
        d[5] = 8;
        d[14] = 8;
        d[23] = 0;
    }
    d
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_thousand_malformed_datagrams_then_a_client_downloads_byte_exact() {
    let data = payload(MB, 3);
    let (_dir, root) = root_with("file.bin", &data);
    let server = start_server(root, transport(MultipathMode::Auto));
    let target = server.local_addr();
    let attacker = tokio::net::UdpSocket::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let mut rng = 0x1234_5678_9abc_def0u64;
    for i in 0..20_000u32 {
        attacker
            .send_to(&malformed(i, &mut rng), target)
            .await
            .expect("send");
        if i % 500 == 0 {
            // Let the server's receive loop keep up rather than overflow the socket buffer.
            tokio::task::yield_now().await;
        }
    }
    let started = Instant::now();
    let (client, conn) = connect_client(target, transport(MultipathMode::Auto)).await;
    let handshake = started.elapsed();
    let mut body = hq::request(&conn, "/file.bin").await.expect("request");
    let got = within("download", body.read_to_end(2 * MB))
        .await
        .expect("read");
    assert!(got == data, "got {} bytes, content differs", got.len());
    eprintln!("handshake after the flood: {handshake:?}");
    assert!(
        handshake < Duration::from_secs(2),
        "handshake after the flood took {handshake:?}"
    );
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}
