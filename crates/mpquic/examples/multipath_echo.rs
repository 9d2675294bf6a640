//! Multipath in a few lines: a server echoes every bidirectional stream; a client bound to two
//! local addresses connects, opens a second path from the second address (waiting until it is
//! validated), echoes 1 MB and prints what each path carried.
//!
//! ```sh
//! cargo run --release -p mpquic --example multipath_echo
//! ```
//!
//! Both endpoints run in this process on loopback (127.0.0.1 and 127.0.0.2 are both loopback
//! on Linux). `cargo test -p mpquic --example multipath_echo` runs it as a test.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context};
use mpquic::tls::{self, ServerTrust};
use mpquic::{config, Endpoint, MultipathMode, PathStatus, SchedulerKind, TransportConfig};

const ALPN: &[u8] = b"echo";
const SIZE: usize = 1 << 20;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let transport = TransportConfig::default()
        // Offer both multipath designs; the peer's offer decides (RFC 10069 or SPNS).
        .multipath(MultipathMode::Auto)
        // Two identical loopback paths: round robin shows both in use (min-RTT would keep to
        // whichever measured a few microseconds faster).
        .scheduler(SchedulerKind::RoundRobin);
    let server = start_echo_server(transport.clone())?;
    run_client(server.local_addr(), transport).await?;
    server.close(0, b"bye");
    Ok(())
}

/// An endpoint on 127.0.0.1 that echoes each bidirectional stream of each connection.
fn start_echo_server(transport: TransportConfig) -> anyhow::Result<Endpoint> {
    let (cert, key) = tls::self_signed(&["localhost"])?;
    let tls = tls::server_config(&[ALPN], vec![cert], key)?;
    let endpoint = Endpoint::server(config::server(tls, transport), &[addr("127.0.0.1:0")])?;
    let accepting = endpoint.clone();
    tokio::spawn(async move {
        // Each attempt is accepted (it could be refused or sent a Retry instead) and served
        // in its own task.
        while let Some(incoming) = accepting.accept().await {
            tokio::spawn(async move {
                let conn = incoming.await?;
                while let Ok((mut send, mut recv)) = conn.accept_bi().await {
                    let data = recv.read_to_end(usize::MAX).await?;
                    send.write_all(&data).await?;
                    send.finish()?;
                }
                anyhow::Ok(())
            });
        }
    });
    Ok(endpoint)
}

async fn run_client(server: SocketAddr, transport: TransportConfig) -> anyhow::Result<()> {
    // One socket per local address: each can carry one path.
    let client = Endpoint::client(&[addr("127.0.0.1:0"), addr("127.0.0.2:0")])?;
    let tls = tls::client_config(&[ALPN], ServerTrust::Insecure)?;
    client.set_default_client_config(config::client(tls, transport));
    let conn = client.connect(server, "localhost")?.await?;
    println!("connected, design {:?}", conn.design());

    // The second path leaves from 127.0.0.2 (any port: the socket bound to that IP) to the
    // server's address; the future resolves once path validation succeeded (RFC 9000 §8.2).
    let local: std::net::IpAddr = "127.0.0.2".parse()?;
    let path = tokio::time::timeout(
        Duration::from_secs(10),
        conn.open_path(local, server, PathStatus::Available),
    )
    .await
    .context("path validation timed out")?
    .context("open second path")?;
    println!("path {} from {local} validated", path.id());

    let data: Vec<u8> = (0..SIZE).map(|i| (i % 251) as u8).collect();
    let (mut send, mut recv) = conn.open_bi().await?;
    send.write_all(&data).await?;
    send.finish()?;
    let echoed = recv.read_to_end(2 * SIZE).await?;
    if echoed != data {
        bail!(
            "echo differs: {} bytes back of {}",
            echoed.len(),
            data.len()
        );
    }
    for p in conn.path_stats() {
        println!(
            "path {} {} -> {}: sent {} B, received {} B, rtt {:?}",
            p.id, p.local, p.remote, p.counters.bytes_sent, p.counters.bytes_received, p.rtt
        );
    }
    conn.close(0, b"done");
    client.wait_idle().await;
    Ok(())
}

fn addr(s: &str) -> SocketAddr {
    s.parse().expect("a socket address")
}

#[cfg(test)]
mod tests {
    #[test]
    fn example_runs() {
        super::main().expect("multipath echo");
    }
}
