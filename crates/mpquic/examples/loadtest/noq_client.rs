//! noq 1.4 (a quinn fork implementing RFC 10069 multipath) as the load test's clients
//! (`--client-impl noq`): another stack's crowd against the server, with `--paths N` a crowd of
//! multipath clients opening paths from 127.0.0.2 .. 127.0.0.N.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};

use crate::workload::encode_request;

/// How long a connection waits for the server's connection IDs of a new path.
const PATH_CIDS_WAIT: Duration = Duration::from_secs(5);

/// noq client endpoints; connection `i` uses endpoint `i % count`.
pub struct NoqClients {
    endpoints: Vec<noq::Endpoint>,
    config: noq::ClientConfig,
    extra_locals: Vec<IpAddr>,
}

impl NoqClients {
    /// `count` endpoints on the IPv4 wildcard address (noq sets each path's source address
    /// with IP_PKTINFO), with mpquic's client TLS configuration; multipath on when
    /// `extra_locals` is not empty.
    pub fn new(
        count: usize,
        tls: Arc<rustls::ClientConfig>,
        extra_locals: Vec<IpAddr>,
    ) -> anyhow::Result<Self> {
        let crypto = noq::crypto::rustls::QuicClientConfig::try_from(tls)?;
        let mut config = noq::ClientConfig::new(Arc::new(crypto));
        let mut transport = noq::TransportConfig::default();
        if !extra_locals.is_empty() {
            let paths = u32::try_from(extra_locals.len() + 1)?;
            transport.max_concurrent_multipath_paths(paths);
        }
        config.transport_config(Arc::new(transport));
        let bind = SocketAddr::from(([0, 0, 0, 0], 0));
        let endpoints = (0..count)
            .map(|_| noq::Endpoint::client(bind))
            .collect::<Result<_, _>>()?;
        Ok(Self {
            endpoints,
            config,
            extra_locals,
        })
    }

    /// Connect to `server` from endpoint `i % count`, then open a path from each extra local
    /// address (waiting for the server's connection IDs for it if they have not come yet).
    pub async fn connect(&self, i: usize, server: SocketAddr) -> anyhow::Result<noq::Connection> {
        let ep = &self.endpoints[i % self.endpoints.len()];
        let conn = ep
            .connect_with(self.config.clone(), server, "localhost")?
            .await?;
        if !self.extra_locals.is_empty() && !conn.is_multipath_enabled() {
            return Err(anyhow!("multipath was not negotiated"));
        }
        for &local in &self.extra_locals {
            open_path(&conn, server, local)
                .await
                .with_context(|| format!("path from {local}"))?;
        }
        Ok(conn)
    }

    /// Wait until every connection has drained (bounded by the caller).
    pub async fn wait_idle(&self) {
        for ep in &self.endpoints {
            ep.wait_idle().await;
        }
    }
}

/// Open (and validate) a path from `local` to `server`; noq refuses while it has no
/// connection ID of the server for a new path ID, which our server issues right after the
/// handshake: retry for up to [`PATH_CIDS_WAIT`].
async fn open_path(
    conn: &noq::Connection,
    server: SocketAddr,
    local: IpAddr,
) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + PATH_CIDS_WAIT;
    loop {
        let tuple = noq::FourTuple::new(server, Some(local));
        match conn.open_path(tuple, noq::PathStatus::Available).await {
            Ok(_) => return Ok(()),
            Err(noq::PathError::RemoteCidsExhausted) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(20)).await
            }
            Err(e) => return Err(anyhow!("{e}")),
        }
    }
}

/// Ask for `size` bytes on a new bidirectional stream; the body (at most `limit` bytes).
pub async fn download(conn: &noq::Connection, size: u64, limit: usize) -> anyhow::Result<Vec<u8>> {
    let (mut send, mut recv) = conn.open_bi().await?;
    send.write_all(&encode_request(size)).await?;
    send.finish()?;
    Ok(recv.read_to_end(limit).await?)
}
