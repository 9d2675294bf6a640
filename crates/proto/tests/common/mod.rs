//! An in-memory network between two endpoints for integration tests: fixed latency, optional
//! loss, duplication and reordering, all from a seeded RNG. Every failure message includes the
//! seed so a run can be replayed.

#![allow(dead_code)]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::BytesMut;
use mpquic_proto::crypto::testing::test_tls_configs;
use mpquic_proto::wire::stream_id::Dir;
use mpquic_proto::{
    ClientConfig, ConnectionHandle, Endpoint, EndpointConfig, ServerConfig, Timestamp,
    TransportConfig,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

pub use mpquic_proto::Duration;

pub const ALPN: &[u8] = b"mpquic-test";

/// Impairments of the in-memory network.
#[derive(Debug, Clone, Copy)]
pub struct NetConfig {
    pub one_way_delay: Duration,
    pub loss: f64,
    pub duplicate: f64,
    /// Extra uniform delay in [0, jitter]: reorders packets.
    pub jitter: Duration,
}

impl Default for NetConfig {
    fn default() -> Self {
        Self {
            one_way_delay: Duration::from_millis(10),
            loss: 0.0,
            duplicate: 0.0,
            jitter: Duration::ZERO,
        }
    }
}

#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct InFlight {
    at: Timestamp,
    seq: u64,
    to_server: bool,
    src: SocketAddr,
    dst: SocketAddr,
    data: Vec<u8>,
}

pub struct Pair {
    pub client: Endpoint,
    pub server: Endpoint,
    pub now: Timestamp,
    pub client_addr: SocketAddr,
    pub server_addr: SocketAddr,
    pub net: NetConfig,
    pub seed: u64,
    pub client_config: ClientConfig,
    /// Datagrams dropped by the network, per direction (to server, to client).
    pub dropped: [u64; 2],
    /// Addresses whose traffic is black-holed: a client's local address, or a server address
    /// (both directions).
    pub blackholed: Vec<SocketAddr>,
    /// The next datagram towards the server travels with this source address instead of its
    /// own (an attacker rewriting it, RFC 9000 §9.3.2); impairments still follow the real one.
    pub spoof_next_to_server: Option<SocketAddr>,
    /// A NAT in front of the client: (inside, outside). Datagrams to the server from `inside`
    /// leave with source `outside`; datagrams to `outside` reach the client at `inside`.
    pub nat: Option<(SocketAddr, SocketAddr)>,
    /// Per-path impairments (by client local address) overriding `net`.
    pub path_net: Vec<(SocketAddr, NetConfig)>,
    /// Sees every datagram before the network takes it: (now, towards the server, bytes). It
    /// may rewrite the bytes; returning false drops the datagram.
    pub tap: Option<Tap>,
    /// Sees every datagram's direction (towards the server), source, destination and size as
    /// it is sent.
    pub watch: Option<Watch>,
    queue: BinaryHeap<Reverse<InFlight>>,
    rng: ChaCha20Rng,
    seq: u64,
    buf: Vec<u8>,
}

/// See [`Pair::tap`].
pub type Tap = Box<dyn FnMut(Timestamp, bool, &mut Vec<u8>) -> bool>;

/// See [`Pair::watch`].
pub type Watch = Box<dyn FnMut(bool, SocketAddr, SocketAddr, usize)>;

pub fn addr(s: &str) -> SocketAddr {
    s.parse().unwrap()
}

impl Pair {
    pub fn new(
        seed: u64,
        client_transport: TransportConfig,
        server_transport: TransportConfig,
        net: NetConfig,
    ) -> Self {
        let (client_tls, server_tls) = test_tls_configs(&[ALPN]);
        Self::with_tls(
            seed,
            (client_tls, server_tls),
            client_transport,
            server_transport,
            net,
        )
    }

    /// [`Pair::new`] with the given rustls configurations (client, server).
    pub fn with_tls(
        seed: u64,
        (client_tls, server_tls): (Arc<rustls::ClientConfig>, Arc<rustls::ServerConfig>),
        client_transport: TransportConfig,
        server_transport: TransportConfig,
        net: NetConfig,
    ) -> Self {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let seed_for = |rng: &mut ChaCha20Rng| {
            let mut s = [0u8; 32];
            rng.fill(&mut s);
            s
        };
        let mut server_config = ServerConfig::new(server_tls, Arc::new(server_transport), &mut rng);
        server_config.max_connections = 16;
        let client_ep_config = Arc::new(EndpointConfig::new(&mut rng));
        let server_ep_config = Arc::new(EndpointConfig::new(&mut rng));
        let client = Endpoint::new(client_ep_config, None, seed_for(&mut rng));
        let server = Endpoint::new(
            server_ep_config,
            Some(Arc::new(server_config)),
            seed_for(&mut rng),
        );
        Self {
            client,
            server,
            now: Timestamp::ZERO,
            client_addr: addr("10.0.0.1:4433"),
            server_addr: addr("10.0.1.1:443"),
            net,
            seed,
            client_config: ClientConfig::new(client_tls, Arc::new(client_transport)),
            dropped: [0, 0],
            blackholed: Vec::new(),
            spoof_next_to_server: None,
            nat: None,
            watch: None,
            path_net: Vec::new(),
            tap: None,
            queue: BinaryHeap::new(),
            rng,
            seq: 0,
            buf: Vec::with_capacity(1500),
        }
    }

    /// Start the client's connection.
    pub fn connect(&mut self) -> ConnectionHandle {
        self.client
            .connect(
                self.now,
                &self.client_config,
                self.client_addr,
                self.server_addr,
                "localhost",
            )
            .expect("connect")
    }

    /// Move every datagram both endpoints want to send into the network.
    fn flush(&mut self) {
        for to_server in [true, false] {
            loop {
                let ep = if to_server {
                    &mut self.client
                } else {
                    &mut self.server
                };
                let Some(t) = ep.poll_transmit(self.now, &mut self.buf) else {
                    break;
                };
                let data = self.buf[..t.size].to_vec();
                self.send(to_server, t.local, t.remote, data);
            }
        }
    }

    fn send(&mut self, to_server: bool, src: SocketAddr, dst: SocketAddr, mut data: Vec<u8>) {
        if let Some(watch) = self.watch.as_mut() {
            watch(to_server, src, dst, data.len());
        }
        let (client_side, server_side) = if to_server { (src, dst) } else { (dst, src) };
        if let Some(tap) = self.tap.as_mut() {
            if !tap(self.now, to_server, &mut data) {
                self.dropped[usize::from(!to_server)] += 1;
                return;
            }
        }
        let net = self
            .path_net
            .iter()
            .find(|(a, _)| *a == client_side)
            .map_or(self.net, |&(_, n)| n);
        let blackholed = [client_side, server_side]
            .iter()
            .any(|a| self.blackholed.contains(a));
        if blackholed || self.rng.gen_bool(net.loss) {
            self.dropped[usize::from(!to_server)] += 1;
            return;
        }
        let copies = if self.rng.gen_bool(net.duplicate) {
            2
        } else {
            1
        };
        let src = match self.spoof_next_to_server.take_if(|_| to_server) {
            Some(spoofed) => spoofed,
            None => src,
        };
        let (src, dst) = match self.nat {
            Some((inside, outside)) if to_server && src == inside => (outside, dst),
            Some((inside, outside)) if !to_server && dst == outside => (src, inside),
            _ => (src, dst),
        };
        for _ in 0..copies {
            let jitter = if net.jitter.is_zero() {
                Duration::ZERO
            } else {
                net.jitter.mul_f64(self.rng.gen::<f64>())
            };
            let at = self.now + net.one_way_delay + jitter;
            self.seq += 1;
            self.queue.push(Reverse(InFlight {
                at,
                seq: self.seq,
                to_server,
                src,
                dst,
                data: data.clone(),
            }));
        }
    }

    /// Advance to the next event and process it. Returns false when nothing is left to do.
    pub fn step(&mut self) -> bool {
        self.step_until(None)
    }

    /// Like `step`, but never advance past `limit`.
    pub fn step_until(&mut self, limit: Option<Timestamp>) -> bool {
        self.flush();
        let next_packet = self.queue.peek().map(|Reverse(p)| p.at);
        let next_timer = [self.client.poll_timeout(), self.server.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        let Some(mut next) = [next_packet, next_timer].into_iter().flatten().min() else {
            return false;
        };
        if let Some(limit) = limit {
            next = next.min(limit);
        }
        self.now = self.now.max(next);
        while self.queue.peek().is_some_and(|Reverse(p)| p.at <= self.now) {
            let Reverse(p) = self.queue.pop().unwrap();
            let ep = if p.to_server {
                &mut self.server
            } else {
                &mut self.client
            };
            ep.handle_datagram(self.now, p.dst, p.src, BytesMut::from(&p.data[..]));
        }
        self.client.handle_timeout(self.now);
        self.server.handle_timeout(self.now);
        true
    }

    /// Let virtual time pass for `d`, processing events on the way.
    pub fn run_for(&mut self, d: Duration) {
        let until = self.now + d;
        while self.now < until {
            if !self.step_until(Some(until)) {
                self.now = until;
            }
        }
    }

    /// Step until `done` holds; panics (with the seed) after `limit` of virtual time.
    pub fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&mut Pair) -> bool) {
        let deadline = self.now + limit;
        while !done(self) {
            assert!(
                self.now < deadline,
                "seed {}: condition not reached within {:?}",
                self.seed,
                limit
            );
            if !self.step() {
                assert!(
                    done(self),
                    "seed {}: nothing left to do before the condition held",
                    self.seed
                );
                return;
            }
        }
    }
}

impl Pair {
    /// A pair whose client connected and whose server accepted, 100 ms after the client saw
    /// the handshake complete (so CIDs and HANDSHAKE_DONE have arrived): (pair, client handle,
    /// server handle).
    pub fn established(
        seed: u64,
        client: TransportConfig,
        server: TransportConfig,
        net: NetConfig,
    ) -> (Pair, ConnectionHandle, ConnectionHandle) {
        let mut pair = Pair::new(seed, client, server, net);
        let ch = pair.connect();
        pair.run_until(Duration::from_secs(5), |p| {
            p.client.connection(ch).unwrap().is_established()
        });
        let sh = pair.server.accept().unwrap();
        pair.run_for(Duration::from_millis(100));
        (pair, ch, sh)
    }

    /// Connect, then send `data` from the client on one bidirectional stream and read it on the
    /// server until FIN (within `limit` of virtual time). Returns the client and server handles
    /// and the bytes the server read.
    pub fn upload(
        &mut self,
        data: &[u8],
        limit: Duration,
    ) -> (ConnectionHandle, ConnectionHandle, Vec<u8>) {
        let ch = self.connect();
        self.run_until(Duration::from_secs(10), |p| {
            p.client.connection(ch).is_some_and(|c| c.is_established())
        });
        let (sh, received) = self.upload_on(ch, None, data, limit, |_, _| {});
        (ch, sh, received)
    }

    /// Send `data` from client connection `ch` on a new bidirectional stream and read it on the
    /// server until FIN (within `limit`): on `server` if the server connection is known, else
    /// on the newest one the server accepts. `each_step` runs at every step with the number of
    /// bytes the server has read so far. Returns the server handle and the bytes read.
    pub fn upload_on(
        &mut self,
        ch: ConnectionHandle,
        server: Option<ConnectionHandle>,
        data: &[u8],
        limit: Duration,
        mut each_step: impl FnMut(&mut Pair, usize),
    ) -> (ConnectionHandle, Vec<u8>) {
        let sid = self
            .client
            .connection_mut(ch)
            .expect("client connection")
            .open_bi()
            .expect("stream");
        let (mut written, mut fin, mut done) = (0, false, false);
        let mut received = Vec::new();
        let mut server_conn = server;
        let mut server_stream = None;
        let mut buf = vec![0u8; 65536];
        self.run_until(limit, |p| {
            each_step(p, received.len());
            let c = p.client.connection_mut(ch).expect("client connection");
            while written < data.len() {
                match c.write(sid, &data[written..]) {
                    Ok(n) if n > 0 => written += n,
                    _ => break,
                }
            }
            if written == data.len() && !fin {
                c.finish(sid).expect("finish");
                fin = true;
            }
            // The newest accepted connection is this one (earlier ones may wait unaccepted).
            while let Some(h) = p.server.accept() {
                server_conn = Some(h);
            }
            let Some(sh) = server_conn else { return false };
            let s = p.server.connection_mut(sh).expect("server connection");
            server_stream = server_stream.or_else(|| s.accept(Dir::Bi));
            while let Some(id) = server_stream {
                match s.read(id, &mut buf) {
                    Ok(Some(n)) => received.extend_from_slice(&buf[..n]),
                    Ok(None) => {
                        done = true;
                        break;
                    }
                    Err(_) => break,
                }
            }
            done
        });
        let sh = server_conn.expect("the server accepted the connection");
        (sh, received)
    }
}

/// Deterministic payload for stream `salt`.
pub fn payload(len: usize, salt: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32).wrapping_mul(2_654_435_761).to_be_bytes()[0] ^ salt)
        .collect()
}

/// The path events client connection `ch` has queued, drained.
pub fn client_path_events(pair: &mut Pair, ch: ConnectionHandle) -> Vec<mpquic_proto::PathEvent> {
    let conn = pair.client.connection_mut(ch).expect("client connection");
    std::iter::from_fn(|| conn.poll_event())
        .filter_map(|e| match e {
            mpquic_proto::Event::Path(p) => Some(p),
            _ => None,
        })
        .collect()
}

/// A congestion window that never closes: a hostile client keeps sending whether or not its
/// packets are acknowledged (its own stack is its business).
#[derive(Debug)]
pub struct Unlimited;

impl mpquic_proto::cc::CongestionController for Unlimited {
    fn on_packet_sent(&mut self, _: Timestamp, _: u64, _: u64) {}
    fn on_ack(&mut self, _: &mpquic_proto::cc::AckEvent<'_>, _: mpquic_proto::cc::Coupling<'_>) {}
    fn on_congestion_event(
        &mut self,
        _: &mpquic_proto::cc::LossEvent<'_>,
        _: mpquic_proto::cc::Coupling<'_>,
    ) {
    }
    fn window(&self) -> u64 {
        1 << 40
    }
    fn name(&self) -> &'static str {
        "unlimited"
    }
    fn stats(&self) -> mpquic_proto::cc::CcStats {
        mpquic_proto::cc::CcStats::default()
    }
}

impl mpquic_proto::cc::ControllerFactory for Unlimited {
    fn name(&self) -> &str {
        "unlimited"
    }
    fn build(
        &self,
        _: mpquic_proto::cc::CcConfig,
    ) -> Box<dyn mpquic_proto::cc::CongestionController> {
        Box::new(Unlimited)
    }
}

/// A client that sends whether or not anything it sends is acknowledged ([`Unlimited`], no
/// pacing): the hostile peer of `hostile_peer.rs`, `hostile_cpu.rs` and the `hostile_cpu`
/// example.
pub fn unacked_client() -> TransportConfig {
    TransportConfig::default()
        .with_congestion_controller_factory(Arc::new(Unlimited))
        .pacing(false)
}

/// Raw frame bytes a hostile client puts in one packet: below any packet's room for frames.
pub const ROOM: usize = 1000;

/// `frames` encoded back to back (at most [`ROOM`] bytes).
pub fn encode(frames: &[mpquic_proto::wire::frame::Frame]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in frames {
        f.encode(&mut out);
    }
    assert!(out.len() <= ROOM, "{} bytes of frames", out.len());
    out
}

/// `frames` followed by PADDING up to [`ROOM`] bytes: a full-size datagram.
pub fn padded(frames: &[mpquic_proto::wire::frame::Frame]) -> Vec<u8> {
    let mut out = encode(frames);
    out.resize(ROOM, 0);
    out
}

/// Client-initiated bidirectional stream `index`.
pub fn client_bidi(index: u64) -> mpquic_proto::wire::stream_id::StreamId {
    use mpquic_proto::wire::stream_id::{Side, StreamId};
    StreamId::new(Side::Client, Dir::Bi, index)
}

/// A packet's worth of stream control on the client's bidirectional streams 0..36 (which the
/// client opened): RESET_STREAM, STOP_SENDING, MAX_STREAM_DATA and STREAM_DATA_BLOCKED each,
/// the limits varying with `round`.
pub fn stream_control_flood(round: usize) -> Vec<mpquic_proto::wire::frame::Frame> {
    use mpquic_proto::wire::frame::Frame;
    (0..36u64)
        .flat_map(|s| {
            let id = client_bidi(s);
            [
                Frame::ResetStream {
                    id,
                    error_code: 1,
                    final_size: 0,
                },
                Frame::StopSending { id, error_code: 2 },
                Frame::MaxStreamData {
                    id,
                    max: 1 << 20 | round as u64,
                },
                Frame::StreamDataBlocked {
                    id,
                    limit: 1 << 20 | round as u64,
                },
            ]
        })
        .collect()
}
