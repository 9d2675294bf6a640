//! Handshake racing over the client's interfaces (`transport.race_paths`, issue 15).
//!
//! A multipath client does not know which of its interfaces is fastest when it connects, and
//! the path its handshake runs on becomes path 0: the path that carries the first flight of
//! data and every path's CIDs, whose RTT is the first estimate. When that interface is the slow
//! one, multipath starts behind the best single path by the difference of the handshake times
//! and never catches up on short transfers. Racing is what a client with several interfaces
//! does about it (the connection racing of RFC 8305 §5, applied to interfaces instead of
//! address families): start one handshake per interface at once, keep the first connection
//! whose handshake completes, close the others, and open the remaining interfaces as further
//! paths of the winner. The cost is one extra handshake per interface (a few kilobytes on
//! every path, which the run's figures include: the server counts the losers' packets).

use std::net::SocketAddr;

use bytes::Bytes;
use mpquic_netsim::time::SimTime;
use mpquic_proto::{ClientConfig, ConnectionHandle, Endpoint, Timestamp};

/// Reason phrase of the CONNECTION_CLOSE that ends a losing handshake.
const LOST: &[u8] = b"handshake race lost";

/// One handshake per interface, started together; see the module documentation.
#[derive(Debug)]
pub struct HandshakeRace {
    /// The connections still running: (handle, interface index).
    entrants: Vec<(ConnectionHandle, usize)>,
}

/// Where a race stands after [`HandshakeRace::settle`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RaceState {
    /// No handshake has completed yet.
    Running,
    /// The first connection to complete its handshake, on interface `iface`; the others were
    /// closed.
    Won {
        /// The winning connection.
        handle: ConnectionHandle,
        /// Its interface index.
        iface: usize,
    },
    /// Every handshake failed; the last failure.
    Failed(String),
}

impl HandshakeRace {
    /// Starts one connection from each interface `(local, remote)` (index = interface index)
    /// at `now`. A connection that cannot even start (a configuration error) fails the race.
    pub fn start(
        endpoint: &mut Endpoint,
        now: SimTime,
        config: &ClientConfig,
        interfaces: &[(SocketAddr, SocketAddr)],
        server_name: &str,
    ) -> Result<Self, String> {
        let mut entrants = Vec::with_capacity(interfaces.len());
        for (iface, &(local, remote)) in interfaces.iter().enumerate() {
            let handle = endpoint
                .connect(
                    Timestamp::from_nanos(now),
                    config,
                    local,
                    remote,
                    server_name,
                )
                .map_err(|e| format!("cannot connect from interface {iface}: {e}"))?;
            entrants.push((handle, iface));
        }
        Ok(Self { entrants })
    }

    /// The connection of interface 0, the one a client without racing would use (its
    /// handle stands for the client's connection until the race is won).
    pub fn first(&self) -> Option<ConnectionHandle> {
        self.entrants.first().map(|&(h, _)| h)
    }

    /// Drops the entrants whose connection closed; once one has completed its handshake,
    /// closes every other one (RFC 9000 §10.2: an immediate close, which the server sees as
    /// the peer's application closing) and returns it.
    pub fn settle(&mut self, now: SimTime, endpoint: &mut Endpoint) -> RaceState {
        let mut last_failure = None;
        self.entrants
            .retain(|&(h, iface)| match endpoint.connection(h) {
                Some(c) if !c.is_closed() => true,
                Some(c) => {
                    let why = c.error().map_or_else(|| "closed".into(), |e| e.to_string());
                    last_failure = Some(format!("interface {iface}: {why}"));
                    false
                }
                None => false,
            });
        let winner = self
            .entrants
            .iter()
            .copied()
            .find(|&(h, _)| endpoint.connection(h).is_some_and(|c| c.is_established()));
        let Some((handle, iface)) = winner else {
            return match (self.entrants.is_empty(), last_failure) {
                (true, why) => RaceState::Failed(why.unwrap_or_else(|| "no interface".into())),
                (false, _) => RaceState::Running,
            };
        };
        for &(h, _) in self.entrants.iter().filter(|&&(h, _)| h != handle) {
            if let Some(c) = endpoint.connection_mut(h) {
                c.close(Timestamp::from_nanos(now), 0, Bytes::from_static(LOST));
                endpoint.after_connection_call(h);
            }
        }
        self.entrants.clear();
        RaceState::Won { handle, iface }
    }
}
