//! Two in-memory endpoints joined by a lossless fixed-delay link, for the connection-reaching
//! harnesses. Everything is seeded, so an input replays the same way (only rustls' own TLS
//! randoms and key shares differ between runs, and frame processing does not depend on them).

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, LazyLock};

use bytes::BytesMut;
use mpquic_proto::crypto::testing::test_tls_configs;
use mpquic_proto::wire::header::PartialDecode;
use mpquic_proto::wire::stream_id::Dir;
use mpquic_proto::{
    ClientConfig, Connection, ConnectionHandle, Duration, Endpoint, EndpointConfig, Event,
    MultipathMode, RetryPolicy, ServerConfig, Timestamp, TransportConfig,
};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

pub(crate) const ALPN: &[u8] = b"fuzz";
pub(crate) const CLIENT_ADDR: &str = "10.0.0.1:4433";
pub(crate) const CLIENT_ADDR_2: &str = "10.0.0.2:4433";
pub(crate) const SERVER_ADDR: &str = "10.0.1.1:443";
/// A source address the client's packets come from when they are rewritten (a move).
pub(crate) const OTHER_CLIENT_ADDR: &str = "10.0.0.3:5555";
/// A source address the server's packets come from when they are rewritten.
pub(crate) const OTHER_SERVER_ADDR: &str = "10.0.1.2:443";

/// One-way delay of the link.
const DELAY: Duration = Duration::from_millis(5);
/// Datagrams one endpoint may emit at a single instant before the harness calls it a send
/// loop: congestion control and pacing allow far fewer.
const MAX_BURST: usize = 2_000;

/// Signing a certificate per input would dominate the run time: one pair of TLS configs.
static TLS: LazyLock<(Arc<rustls::ClientConfig>, Arc<rustls::ServerConfig>)> =
    LazyLock::new(|| test_tls_configs(&[ALPN]));

pub(crate) fn addr(s: &str) -> SocketAddr {
    s.parse().expect("constant socket address")
}

pub(crate) fn transport(mode: MultipathMode) -> TransportConfig {
    TransportConfig::default()
        .multipath(mode)
        // Pacing would spread a burst over virtual time: more steps for the same coverage.
        .pacing(false)
}

pub(crate) fn client_config(mode: MultipathMode) -> ClientConfig {
    let mut config = ClientConfig::new(TLS.0.clone(), Arc::new(transport(mode)));
    // Each input starts from scratch: no token from an earlier input's connection.
    config.token_store = None;
    config
}

/// A server endpoint; `retry` makes it ask every client to prove its address first.
pub(crate) fn server_endpoint(mode: MultipathMode, retry: bool) -> Endpoint {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let mut config = ServerConfig::new(TLS.1.clone(), Arc::new(transport(mode)), &mut rng);
    config.max_connections = 8;
    if retry {
        config.retry = RetryPolicy::Always;
    }
    Endpoint::new(
        Arc::new(EndpointConfig::with_reset_key([3; 32])),
        Some(Arc::new(config)),
        [4; 32],
    )
}

pub(crate) fn client_endpoint() -> Endpoint {
    Endpoint::new(
        Arc::new(EndpointConfig::with_reset_key([5; 32])),
        None,
        [6; 32],
    )
}

/// A datagram on the link.
#[derive(Clone)]
pub(crate) struct InFlight {
    pub at: Timestamp,
    pub to_server: bool,
    pub src: SocketAddr,
    pub dst: SocketAddr,
    pub data: Vec<u8>,
}

/// A client and a server endpoint on one link.
pub(crate) struct Net {
    pub client: Endpoint,
    pub server: Endpoint,
    pub now: Timestamp,
    /// In send order; the fixed delay keeps it sorted by arrival time.
    pub queue: VecDeque<InFlight>,
    /// Destination CID of the last datagram delivered to the client: one of its CIDs.
    pub client_cid: Option<Vec<u8>>,
    /// The next datagram towards the server (true) or the client (false) leaves with this
    /// source address instead of its own.
    pub rewrite_next_source: Option<(bool, SocketAddr)>,
    /// Steps stop before this time (see [`Net::allow`]).
    horizon: Timestamp,
    buf: Vec<u8>,
}

impl Net {
    pub(crate) fn new(mode: MultipathMode) -> Self {
        Self {
            client: client_endpoint(),
            server: server_endpoint(mode, false),
            now: Timestamp::ZERO,
            queue: VecDeque::new(),
            client_cid: None,
            rewrite_next_source: None,
            horizon: Timestamp::ZERO + Duration::from_secs(2),
            buf: Vec::with_capacity(1500),
        }
    }

    /// Move every datagram both endpoints want to send now onto the link.
    pub(crate) fn flush(&mut self) {
        for to_server in [true, false] {
            for n in 0.. {
                let ep = if to_server {
                    &mut self.client
                } else {
                    &mut self.server
                };
                let Some(t) = ep.poll_transmit(self.now, &mut self.buf) else {
                    break;
                };
                // A connection that never stops sending is a bug the fuzzer should report.
                assert!(n < MAX_BURST, "endpoint sent {MAX_BURST} datagrams at once");
                let src = match self.rewrite_next_source.take_if(|(to, _)| *to == to_server) {
                    Some((_, other)) => other,
                    None => t.local,
                };
                self.queue.push_back(InFlight {
                    at: self.now + DELAY,
                    to_server,
                    src,
                    dst: t.remote,
                    data: self.buf[..t.size].to_vec(),
                });
            }
        }
    }

    /// Advance to the next arrival or timer and process it, never past `horizon`; false when
    /// nothing is left before it.
    pub(crate) fn step(&mut self) -> bool {
        self.flush();
        let next_packet = self.queue.front().map(|p| p.at);
        let next_timer = [self.client.poll_timeout(), self.server.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        let Some(next) = [next_packet, next_timer].into_iter().flatten().min() else {
            return false;
        };
        if next > self.horizon {
            return false;
        }
        self.now = self.now.max(next);
        while self.queue.front().is_some_and(|p| p.at <= self.now) {
            let Some(p) = self.queue.pop_front() else {
                break;
            };
            self.deliver(p);
        }
        self.client.handle_timeout(self.now);
        self.server.handle_timeout(self.now);
        true
    }

    /// Let the next steps run for at most `d` of virtual time from now: without a bound, a
    /// quiet pair would jump from timer to timer up to the idle timeout.
    pub(crate) fn allow(&mut self, d: Duration) {
        self.horizon = self.now + d;
    }

    pub(crate) fn deliver(&mut self, p: InFlight) {
        let ep = if p.to_server {
            &mut self.server
        } else {
            if let Ok((first, _)) = PartialDecode::new(BytesMut::from(&p.data[..]), 8) {
                self.client_cid = Some(first.dcid().as_slice().to_vec());
            }
            &mut self.client
        };
        ep.handle_datagram(self.now, p.dst, p.src, BytesMut::from(&p.data[..]));
    }

    /// Step until `done` holds, at most `steps` times; whether it held.
    pub(crate) fn run_until(
        &mut self,
        steps: usize,
        mut done: impl FnMut(&mut Net) -> bool,
    ) -> bool {
        for _ in 0..steps {
            if done(self) {
                return true;
            }
            if !self.step() {
                break;
            }
        }
        done(self)
    }

    /// Run `steps` steps, with both applications consuming whatever arrives.
    pub(crate) fn run_with_apps(&mut self, steps: usize) {
        for _ in 0..steps {
            self.serve_apps();
            if !self.step() {
                break;
            }
        }
        self.serve_apps();
    }

    fn serve_apps(&mut self) {
        for ep in [&mut self.client, &mut self.server] {
            while ep.accept().is_some() {}
            for h in ep.handles() {
                if let Some(conn) = ep.connection_mut(h) {
                    consume(conn);
                }
                ep.after_connection_call(h);
            }
        }
    }
}

/// A simple application: accept every stream and read everything readable, so that data the
/// peer sends travels through reassembly, flow control credit and stream closing.
pub(crate) fn consume(conn: &mut Connection) {
    let mut buf = [0u8; 4096];
    for dir in [Dir::Bi, Dir::Uni] {
        while conn.accept(dir).is_some() {}
    }
    // Bounded: each event is handled once; a stream yields at most its buffered bytes.
    for _ in 0..256 {
        let Some(event) = conn.poll_event() else {
            break;
        };
        if let Event::Stream(mpquic_proto::StreamEvent::Readable { id }) = event {
            while let Ok(Some(n)) = conn.read(id, &mut buf) {
                if n == 0 {
                    break;
                }
            }
        }
    }
}

/// Handle of the first connection of an endpoint.
pub(crate) fn first_handle(ep: &Endpoint) -> Option<ConnectionHandle> {
    ep.handles().into_iter().next()
}
