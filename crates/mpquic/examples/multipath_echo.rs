//! Multipath in a few lines: a server echoes every bidirectional stream; a client bound to two
//! local addresses connects, opens a second path, waits for the path events that say it is
//! usable, echoes 1 MB and prints what each path carried.
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
use mpquic::{config, Endpoint, MultipathMode, PathEvent, SchedulerKind, TransportConfig};

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
        while let Some(conn) = accepting.accept().await {
            tokio::spawn(async move {
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
    let conn = client
        .connect(server, "localhost", config::client(tls, transport))?
        .await?;
    println!("connected, design {:?}", conn.design());

    let second = client.local_addrs()[1];
    let path = conn.open_path(second).await.context("open second path")?;
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match conn.path_event().await? {
                PathEvent::Validated { id } if id == path => return anyhow::Ok(()),
                PathEvent::Failed { id } | PathEvent::Abandoned { id, .. } if id == path => {
                    bail!("path {id} failed")
                }
                other => println!("path event: {other:?}"),
            }
        }
    })
    .await
    .context("path validation timed out")??;
    println!("path {path} from {second} validated");

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
            "path {} {} -> {}: sent {} B, received {} B, srtt {:.3} ms",
            p.id, p.local, p.remote, p.counters.bytes_sent, p.counters.bytes_received, p.srtt_ms
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
