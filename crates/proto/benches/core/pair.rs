//! Two proto endpoints exchanging datagrams in memory (no sockets): the setup shared by the
//! handshake and ACK-processing benchmarks.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::BytesMut;
use mpquic_proto::crypto::testing::test_tls_configs;
use mpquic_proto::{
    ClientConfig, ConnectionHandle, Endpoint, EndpointConfig, ServerConfig, Timestamp,
    TransportConfig,
};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

pub const CLIENT_ADDR: &str = "10.0.0.2:4433";
pub const SERVER_ADDR: &str = "10.0.0.1:443";

/// One datagram on its way: where it goes, where it came from, its bytes.
pub struct Datagram {
    pub to: SocketAddr,
    pub from: SocketAddr,
    pub data: BytesMut,
}

/// Client and server configurations, built once (certificates and key generation are not part
/// of what the benchmarks time).
pub struct Configs {
    pub endpoint: Arc<EndpointConfig>,
    pub client: ClientConfig,
    pub server: Arc<ServerConfig>,
}

impl Configs {
    pub fn new(client: TransportConfig, server: TransportConfig) -> Self {
        Self::with_tls(client, server, test_tls_configs(&[b"bench"]))
    }

    /// [`Configs::new`] with the given TLS configurations (client, server).
    pub fn with_tls(
        client: TransportConfig,
        server: TransportConfig,
        (client_tls, server_tls): (Arc<rustls::ClientConfig>, Arc<rustls::ServerConfig>),
    ) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        Self {
            endpoint: Arc::new(EndpointConfig::new(&mut rng)),
            client: ClientConfig::new(client_tls, Arc::new(client)),
            server: Arc::new(ServerConfig::new(server_tls, Arc::new(server), &mut rng)),
        }
    }
}

/// A client and a server endpoint, and the client's connection once `connect` was called.
pub struct Pair {
    pub client: Endpoint,
    pub server: Endpoint,
    pub conn: ConnectionHandle,
    pub now: Timestamp,
}

impl Pair {
    /// Both endpoints, the client's connection started (its first flight not yet polled).
    pub fn connect(configs: &Configs) -> Self {
        let now = Timestamp::from_nanos(1_000_000);
        let server = Endpoint::new(
            configs.endpoint.clone(),
            Some(configs.server.clone()),
            [1; 32],
        );
        let mut client = Endpoint::new(configs.endpoint.clone(), None, [2; 32]);
        let conn = client
            .connect(
                now,
                &configs.client,
                addr(CLIENT_ADDR),
                addr(SERVER_ADDR),
                "localhost",
            )
            .expect("connect");
        Self {
            client,
            server,
            conn,
            now,
        }
    }

    /// Exchange datagrams (no delay, no loss) until neither side has anything to send.
    pub fn settle(&mut self, buf: &mut Vec<u8>) {
        loop {
            let up = drain(&mut self.client, self.now, buf);
            let down = drain(&mut self.server, self.now, buf);
            if up.is_empty() && down.is_empty() {
                return;
            }
            deliver(&mut self.server, self.now, up);
            deliver(&mut self.client, self.now, down);
        }
    }

    /// Whether both sides of the connection completed the handshake.
    pub fn established(&self) -> bool {
        let server = self
            .server
            .handles()
            .first()
            .and_then(|h| self.server.connection(*h))
            .is_some_and(|c| c.is_established());
        server
            && self
                .client
                .connection(self.conn)
                .is_some_and(|c| c.is_established())
    }

    /// The server's side of the (only) connection.
    pub fn server_handle(&self) -> ConnectionHandle {
        *self.server.handles().first().expect("server connection")
    }
}

/// Everything `ep` sends now.
pub fn drain(ep: &mut Endpoint, now: Timestamp, buf: &mut Vec<u8>) -> Vec<Datagram> {
    let mut out = Vec::new();
    while let Some(t) = ep.poll_transmit(now, buf) {
        out.push(Datagram {
            to: t.remote,
            from: t.local,
            data: BytesMut::from(&buf[..t.size]),
        });
    }
    out
}

/// Hand `datagrams` to `ep`.
pub fn deliver(ep: &mut Endpoint, now: Timestamp, datagrams: Vec<Datagram>) {
    for d in datagrams {
        ep.handle_datagram(now, d.to, d.from, d.data);
    }
}

pub fn addr(s: &str) -> SocketAddr {
    s.parse().expect("address")
}
