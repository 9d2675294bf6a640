//! Handshake racing over several local addresses (issue 15).
//!
//! A client with several interfaces (Wi-Fi and cellular, two uplinks) does not know which one
//! reaches the server fastest, and the path its handshake runs on becomes path 0: the path of
//! the first flight of data and of the first RTT estimate. Over a slow interface the handshake
//! alone can cost more than a short transfer on the fast one. [`Endpoint::connect_racing`]
//! starts one handshake per (local, remote) pair at once, in the spirit of RFC 8305's
//! connection racing, and keeps the first connection whose handshake completes; the other
//! attempts are closed (RFC 9000 §10.2, an immediate close with code 0). The application then
//! opens its other interfaces as further paths of the winner
//! ([`Connection::open_path`](crate::Connection::open_path)).

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::{ClientConfig, ConnectError, Connecting, Connection, ConnectionError, Endpoint};

/// One handshake per (local, remote) pair, started together; resolves to the first connection
/// whose handshake completes and the index of its pair, or to the last error once every
/// attempt failed. Dropping it closes every attempt still running.
#[derive(Debug)]
#[must_use = "a connection attempt does nothing unless awaited"]
pub struct RacingConnect {
    /// The attempts still running, with the index of their pair.
    attempts: Vec<(usize, Connecting)>,
    last_error: Option<ConnectionError>,
}

impl Endpoint {
    /// Race the handshake to `server_name` over every `(local, remote)` pair of `pairs` (each
    /// `local` a bound socket of this endpoint, see [`Endpoint::local_addrs`]): one handshake
    /// per pair starts at once (connection racing, as RFC 8305 §5 does across address
    /// families), the first connection whose handshake completes is kept and the others are
    /// closed. The path of a handshake becomes path 0, so a client with a fast and a slow
    /// interface gets the fast one as path 0 without knowing which it is; it then opens the
    /// other interfaces with [`Connection::open_path`](crate::Connection::open_path). Costs one
    /// handshake per pair. Fails at once if a pair cannot even start (no such socket, a
    /// configuration the core refuses) or `pairs` is empty.
    pub fn connect_racing(
        &self,
        config: ClientConfig,
        pairs: &[(SocketAddr, SocketAddr)],
        server_name: &str,
    ) -> Result<RacingConnect, ConnectError> {
        if pairs.is_empty() {
            return Err(ConnectError::NoCandidates);
        }
        let attempts = pairs
            .iter()
            .enumerate()
            .map(|(i, &(local, remote))| {
                let attempt = self.connect_from(local, remote, server_name, config.clone())?;
                Ok((i, attempt))
            })
            .collect::<Result<Vec<_>, ConnectError>>()?;
        Ok(RacingConnect {
            attempts,
            last_error: None,
        })
    }
}

impl Future for RacingConnect {
    type Output = Result<(Connection, usize), ConnectionError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut i = 0;
        while i < self.attempts.len() {
            match Pin::new(&mut self.attempts[i].1).poll(cx) {
                Poll::Ready(Ok(conn)) => {
                    let index = self.attempts[i].0;
                    // Dropping the other attempts closes their connections.
                    self.attempts.clear();
                    return Poll::Ready(Ok((conn, index)));
                }
                Poll::Ready(Err(e)) => {
                    drop(self.attempts.remove(i));
                    self.last_error = Some(e);
                }
                Poll::Pending => i += 1,
            }
        }
        if self.attempts.is_empty() {
            let error = self.last_error.take();
            return Poll::Ready(Err(error.unwrap_or(ConnectionError::EndpointStopped)));
        }
        Poll::Pending
    }
}
