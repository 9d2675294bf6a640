//! Path events: a client subscribes to its connection's path events, opens a second path,
//! marks it as backup (a local status change), closes it, and prints every event it sees;
//! the server prints the events of its side too (the peer's status change among them).
//!
//! ```sh
//! cargo run -p mpquic --example path_events
//! ```
//!
//! Both endpoints run in this process on loopback (127.0.0.1 and 127.0.0.2 are both loopback
//! on Linux). `cargo test -p mpquic --example path_events` runs it as a test.

use std::net::IpAddr;
use std::time::Duration;

use anyhow::{bail, Context};
use mpquic::tls::{self, ServerTrust};
use mpquic::{
    config, Endpoint, MultipathMode, PathEvent, PathEvents, PathEventsError, PathStatus,
    TransportConfig,
};

const ALPN: &[u8] = b"events";
/// Application error code of the PATH_ABANDON closing the second path.
const DONE_WITH_PATH: u64 = 7;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let transport = TransportConfig::default().multipath(MultipathMode::Auto);
    let (cert, key) = tls::self_signed(&["localhost"])?;
    let server_tls = tls::server_config(&[ALPN], vec![cert], key)?;
    let server = Endpoint::server(
        config::server(server_tls, transport.clone()),
        &["127.0.0.1:0".parse()?],
    )?;
    let accepting = server.clone();
    // A subscription sees the events sent after it was made, and the server can subscribe
    // only once its handshake is done, which its task may learn after the client has already
    // opened a path: the client waits for the server's subscription (a demo's choice; a real
    // server subscribes whenever it likes and sees what follows).
    let (subscribed_tx, subscribed) = tokio::sync::oneshot::channel();
    let server_side = tokio::spawn(async move {
        let conn = accepting.accept().await.context("no attempt")?.await?;
        let events = conn.path_events();
        let _ = subscribed_tx.send(());
        print_events("server", events).await
    });

    let client = Endpoint::client(&["127.0.0.1:0".parse()?, "127.0.0.2:0".parse()?])?;
    let client_tls = tls::client_config(&[ALPN], ServerTrust::Insecure)?;
    client.set_default_client_config(config::client(client_tls, transport));
    let conn = client.connect(server.local_addr(), "localhost")?.await?;
    // Subscribe before opening the path: a subscription sees the events sent after it.
    let printer = tokio::spawn(print_events("client", conn.path_events()));
    subscribed.await.context("the server did not subscribe")?;

    let second: IpAddr = "127.0.0.2".parse()?;
    let path = tokio::time::timeout(
        Duration::from_secs(10),
        conn.open_path(second, None, PathStatus::Available),
    )
    .await
    .context("path validation timed out")??;
    println!("client: path {} from {second} is validated", path.id());
    path.set_status(PathStatus::Backup)?;
    // Give the PATH_STATUS_BACKUP frame a moment to reach the server before the path goes.
    tokio::time::sleep(Duration::from_millis(100)).await;
    // A second subscription (each sees every event) waits for the abandonment.
    let mut events = conn.path_events();
    path.close(DONE_WITH_PATH)?;
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match events.recv().await? {
                PathEvent::Abandoned { id, .. } if id == path.id() => return anyhow::Ok(()),
                _ => continue,
            }
        }
    })
    .await
    .context("path not abandoned")??;

    conn.close(0, b"done");
    client.wait_idle().await;
    let (client_events, server_events) = (printer.await??, server_side.await??);
    let local_status = client_events.iter().any(|e| {
        matches!(
            e,
            PathEvent::StatusChanged {
                origin: mpquic::StatusOrigin::Local,
                ..
            }
        )
    });
    let peer_status = server_events.iter().any(|e| {
        matches!(
            e,
            PathEvent::StatusChanged {
                origin: mpquic::StatusOrigin::Peer,
                ..
            }
        )
    });
    if !local_status || !peer_status {
        bail!("status change not reported: client {client_events:?}, server {server_events:?}");
    }
    server.close(0, b"bye");
    Ok(())
}

/// Print `who`'s path events until the connection ends; returns them.
async fn print_events(who: &str, mut events: PathEvents) -> anyhow::Result<Vec<PathEvent>> {
    let mut seen = Vec::new();
    loop {
        match events.recv().await {
            Ok(event) => {
                println!("{who}: {event:?}");
                seen.push(event);
            }
            Err(PathEventsError::Lagged(n)) => println!("{who}: missed {n} events"),
            Err(PathEventsError::Closed) => return Ok(seen),
            Err(e) => bail!("{who}: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn example_runs() {
        super::main().expect("path events");
    }
}
