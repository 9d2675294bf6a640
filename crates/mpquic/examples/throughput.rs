//! Download `SIZE` bytes (default 50 MB) from our own server over loopback and print both
//! sides' statistics: `cargo run --release -p mpquic --example throughput [BYTES]`.

use std::sync::Arc;
use std::time::Instant;

use mpquic::{config, hq, tls, Endpoint, TransportConfig};

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let size: usize = std::env::args()
        .nth(1)
        .map_or(Ok(50_000_000), |s| s.parse())?;
    let payload = Arc::new(vec![0x5a_u8; size]);
    let (cert, key) = tls::self_signed(&["localhost"])?;
    let server_tls = tls::server_config(&[hq::ALPN], vec![cert], key)?;
    let server = Endpoint::server(
        config::server(server_tls, TransportConfig::default()),
        &["127.0.0.1:0".parse()?],
    )?;
    let ep = server.clone();
    let served = tokio::spawn(async move {
        let conn = ep
            .accept()
            .await
            .expect("incoming")
            .await
            .expect("handshake");
        let (mut send, mut recv) = conn.accept_bi().await.expect("stream");
        recv.read_to_end(1024).await.expect("request");
        send.write_all(&payload).await.expect("write");
        send.finish().expect("finish");
        send.finished().await.expect("acknowledged");
        conn
    });
    let client_tls = tls::client_config(&[hq::ALPN], tls::ServerTrust::Insecure)?;
    let client = Endpoint::client(&["127.0.0.1:0".parse()?])?;
    let conn = client
        .connect_with(
            config::client(client_tls, TransportConfig::default()),
            server.local_addr(),
            "localhost",
        )?
        .await?;
    let started = Instant::now();
    let mut body = hq::request(&conn, "/").await?;
    let mut buf = vec![0u8; 256 * 1024];
    let mut total = 0;
    while let Some(n) = body.read(&mut buf).await? {
        total += n;
    }
    let elapsed = started.elapsed();
    println!(
        "{total} bytes in {elapsed:?}: {:.1} MB/s",
        total as f64 / elapsed.as_secs_f64() / 1e6
    );
    let server_conn = served.await?;
    for (side, c) in [("client", &conn), ("server", &server_conn)] {
        let s = c.stats();
        println!(
            "{side}: sent {} packets, received {}, lost {}, spurious {}, PTOs {}",
            s.packets_sent, s.packets_received, s.packets_lost, s.spurious_losses, s.pto_count
        );
        for p in c.path_stats() {
            println!(
                "  path {}: rtt {:?}, cwnd {}, cc {:?}",
                p.id, p.rtt, p.cwnd, p.congestion
            );
        }
    }
    Ok(())
}
