//! A noq client downloads from our server through `mpquic-emulate` on two emulated paths
//! (20 Mbit/s 10 ms and 15 Mbit/s 20 ms one-way): noq's first path leaves its wildcard socket
//! from 127.0.0.1, the second from 127.0.0.2, and the emulator gives our server one 4-tuple per
//! path, as a NAT would. Unlike on bare loopback, the two paths differ, so the scheduler's
//! choice is not arbitrary: each must carry a real share.

mod common;

use std::net::IpAddr;

use common::noq::{noq_client, noq_get, our_server};
use common::{payload, root_with, transport, within, MB};
use mpquic::{Design, MultipathMode};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn noq_client_downloads_through_the_emulator_over_two_paths() {
    common::init_tracing();
    let data = payload(8 * MB, 21);
    let (_dir, root) = root_with("file.bin", &data);
    let (server, mut conns) = our_server(root, transport(MultipathMode::Auto));
    let paths = [
        "from=127.0.0.1,rate=20mbit,delay=10ms",
        "from=127.0.0.2,rate=15mbit,delay=20ms",
    ];
    let emulator = common::emulator(server.local_addr(), &paths);
    let listen = emulator.listen_addr();

    let (endpoint, conn) = noq_client(listen, true).await;
    assert!(
        conn.is_multipath_enabled(),
        "noq did not negotiate multipath"
    );
    let ours = within("our connection", conns.recv())
        .await
        .expect("our connection");
    assert_eq!(ours.design(), Some(Design::Mpns));
    let second_ip: IpAddr = "127.0.0.2".parse().expect("ip");
    common::noq::noq_open_path(&conn, listen, second_ip).await;

    let started = std::time::Instant::now();
    let got = noq_get(&conn).await;
    let secs = started.elapsed().as_secs_f64();
    assert!(got == data, "noq got {} bytes, content differs", got.len());
    let report = emulator.stop().expect("report");
    eprintln!("{report}");
    let paths = ours.path_stats();
    let sent: Vec<u64> = paths.iter().map(|p| p.counters.stream_bytes_sent).collect();
    eprintln!(
        "noq download: {:.1} Mbit/s, stream bytes per path {sent:?}",
        data.len() as f64 * 8.0 / secs / 1e6
    );
    assert_eq!(paths.len(), 2, "{paths:?}");
    // Both paths are distinct relay sockets of the emulator: distinct 4-tuples at our server.
    assert_ne!(paths[0].remote, paths[1].remote);
    assert_eq!(report.paths[0].clients, 1);
    assert_eq!(report.paths[1].clients, 1);
    for (i, b) in sent.iter().enumerate() {
        assert!(
            *b as usize > data.len() / 10,
            "path {i} carried {b} B of {sent:?}"
        );
    }
    conn.close(0u32.into(), b"done");
    within("noq idle", endpoint.wait_idle()).await;
}
