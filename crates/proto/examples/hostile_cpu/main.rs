//! CPU work per packet against a hostile, authenticated peer: for each class of well-formed but
//! hostile input, the server's cost of handling one such packet (its `handle_datagram`, the
//! replies it then sends and its timers), in microseconds, over the first `N` packets of a
//! fresh connection and over packets `9N..10N` (cost growing with what the peer did shows as a
//! larger second figure), each the median of a few runs, and its ratio to an ordinary data
//! packet's cost.
//!
//! `cargo run --release -p mpquic-proto --example hostile_cpu [N] [class substring]`

mod classes;
#[path = "../../tests/common/mod.rs"]
mod common;

use std::net::SocketAddr;
use std::time::Instant;

use bytes::BytesMut;
use common::{addr, NetConfig, Pair, ROOM};
use mpquic_proto::wire::frame::Frame;
use mpquic_proto::wire::stream_id::{Dir, StreamId};
use mpquic_proto::{ConnectionHandle, Duration, PathId, ReadError, TransportConfig};

const RUNS: usize = 3;

/// One established connection, driven packet by packet.
struct Bench {
    pair: Pair,
    ch: ConnectionHandle,
    sh: ConnectionHandle,
    buf: Vec<u8>,
    /// Every client datagram after the first `drop_every`-th... one in `drop_every` is
    /// delivered (0: all).
    drop_odd: bool,
    sent: u64,
    /// The source address of the next hostile datagrams, if not the client's own.
    spoof: Option<SocketAddr>,
    /// The server application reads streams and datagrams (untimed).
    reader: bool,
    /// The server application writes on every bidirectional stream it accepted (untimed).
    serve: bool,
    /// Client datagrams from this address are lost.
    drop_from: Option<SocketAddr>,
    /// Long-header (Handshake) packets put before each hostile 1-RTT packet in its datagram.
    coalesce: usize,
    /// The client hears nothing from the server (so acknowledges nothing).
    deaf: bool,
    /// Streams the server application accepted and reads.
    open: Vec<StreamId>,
}

impl Bench {
    fn new(server: TransportConfig) -> Self {
        let mut client = common::unacked_client().multipath(server.multipath);
        // A class asking for key updates has the client start one as often as it may.
        client.key_update_interval = server.key_update_interval.map(|_| 1);
        let (mut pair, ch, sh) = Pair::established(13, client, server, NetConfig::default());
        pair.run_for(Duration::from_millis(200));
        Self {
            pair,
            ch,
            sh,
            buf: Vec::with_capacity(1500),
            drop_odd: false,
            sent: 0,
            spoof: None,
            reader: true,
            open: Vec::new(),
            deaf: false,
            drop_from: None,
            serve: false,
            coalesce: 0,
        }
    }

    fn closed(&self) -> Option<String> {
        let s = self.pair.server.connection(self.sh)?;
        s.is_closed().then(|| format!("{:?}", s.error()))
    }

    /// Server-side largest packet number safely below what it sent in path 0's space.
    fn server_pn(&self) -> u64 {
        let s = self.pair.server.connection(self.sh).unwrap().stats();
        s.packets_sent.saturating_sub(12)
    }

    /// Server-side largest packet number safely below what it sent on path `id` (MPNS).
    fn server_path_pn(&self, id: u32) -> u64 {
        let s = self.pair.server.connection(self.sh).unwrap().path_stats();
        let sent = s
            .iter()
            .find(|p| p.id == PathId::new(id))
            .map_or(0, |p| p.counters.packets_sent);
        sent.saturating_sub(if id == 0 { 12 } else { 2 })
    }

    /// The client opens `n` more paths (from 10.0.2.1, .2, ...) and they are validated
    /// (untimed, before the measurement).
    fn open_paths(&mut self, n: u8) {
        for k in 1..=n {
            let local = addr(&format!("10.0.2.{k}:4433"));
            let deadline = self.pair.now + Duration::from_secs(5);
            loop {
                let (now, remote) = (self.pair.now, self.pair.server_addr);
                let c = self.pair.client.connection_mut(self.ch).unwrap();
                match c.open_path(now, local, remote) {
                    Ok(_) => break,
                    Err(e) => {
                        assert!(self.pair.now < deadline, "path {k}: {e:?}");
                        self.pair.run_for(Duration::from_millis(10));
                    }
                }
            }
            self.pair.client.after_connection_call(self.ch);
            self.pair.run_for(Duration::from_millis(100));
        }
        self.pair.run_for(Duration::from_millis(300));
        let paths = self.pair.server.connection(self.sh).unwrap().path_stats();
        assert_eq!(paths.len(), usize::from(n) + 1, "{paths:?}");
    }

    /// Client datagrams now due, untimed.
    fn client_datagrams(&mut self) -> Vec<(SocketAddr, SocketAddr, Vec<u8>)> {
        let mut out = Vec::new();
        let now = self.pair.now;
        while let Some(t) = self.pair.client.poll_transmit(now, &mut self.buf) {
            out.push((t.local, t.remote, self.buf[..t.size].to_vec()));
        }
        out
    }

    /// The client sends `frames` (raw bytes) in its next packet; the server handles it, sends
    /// what it wants and runs its timers: returns that time in nanoseconds. Then the client
    /// hears the replies (untimed).
    fn hostile(&mut self, frames: Vec<u8>) -> u128 {
        self.pair.now += Duration::from_micros(100);
        let now = self.pair.now;
        self.pair.client.handle_timeout(now);
        let c = self.pair.client.connection_mut(self.ch).unwrap();
        c.inject_raw_frame(frames);
        self.pair.client.after_connection_call(self.ch);
        let datagrams = self.client_datagrams();
        let mut replies = Vec::new();
        let started = Instant::now();
        for (src, dst, data) in datagrams {
            self.sent += 1;
            if self.drop_odd && self.sent % 2 == 0 || Some(src) == self.drop_from {
                continue;
            }
            let data = coalesced(self.coalesce, data);
            let src = self.spoof.unwrap_or(src);
            self.pair
                .server
                .handle_datagram(now, dst, src, BytesMut::from(&data[..]));
        }
        self.pair.server.handle_timeout(now);
        while let Some(t) = self.pair.server.poll_transmit(now, &mut self.buf) {
            replies.push((t.local, t.remote, self.buf[..t.size].to_vec()));
        }
        let spent = started.elapsed().as_nanos();
        for (src, dst, data) in replies {
            // Replies to a spoofed address do not reach the client.
            if Some(dst) == self.spoof || self.deaf {
                continue;
            }
            self.pair
                .client
                .handle_datagram(now, dst, src, BytesMut::from(&data[..]));
        }
        self.pair.client.handle_timeout(now);
        if self.reader {
            self.read_all();
        }
        spent
    }

    /// The server application accepts streams and reads what it can (untimed).
    fn read_all(&mut self) {
        let Some(s) = self.pair.server.connection_mut(self.sh) else {
            return;
        };
        let mut buf = [0u8; 4096];
        while s.poll_event().is_some() {}
        for dir in [Dir::Bi, Dir::Uni] {
            while let Some(id) = s.accept(dir) {
                self.open.push(id);
            }
        }
        self.open.retain(|&id| loop {
            match s.read(id, &mut buf) {
                Ok(Some(n)) if n > 0 => {}
                Ok(Some(_)) | Err(ReadError::Blocked) => break true,
                _ => break false,
            }
        });
        while s.recv_datagram().is_some() {}
        if self.serve {
            // A download on every bidirectional stream: keep 256 kB queued.
            static ZEROS: [u8; 65536] = [0; 65536];
            for &id in self.open.iter().filter(|id| id.dir() == Dir::Bi) {
                for _ in 0..4 {
                    if !matches!(s.write(id, &ZEROS), Ok(n) if n > 0) {
                        break;
                    }
                }
            }
        }
        self.pair.server.after_connection_call(self.sh);
    }
}

/// `n` Handshake packets (whose keys the server dropped long ago) to the DCID of the short-header
/// packet `data`, then `data`.
fn coalesced(n: usize, data: Vec<u8>) -> Vec<u8> {
    if n == 0 {
        return data;
    }
    let mut out = Vec::new();
    for _ in 0..n {
        out.push(0xe0);
        out.extend_from_slice(&1u32.to_be_bytes());
        out.push(8);
        out.extend_from_slice(&data[1..9]);
        out.push(0);
        out.extend_from_slice(&[0x40, 40]);
        out.extend_from_slice(&[0; 40]);
    }
    out.extend_from_slice(&data);
    out
}

/// Frames while they fit in `ROOM`.
fn fill(mut next: impl FnMut(usize) -> Frame) -> Vec<u8> {
    let mut out = Vec::new();
    for i in 0.. {
        let mut one = Vec::new();
        next(i).encode(&mut one);
        if out.len() + one.len() > ROOM {
            break;
        }
        out.extend_from_slice(&one);
    }
    out
}

static DATA: [u8; 900] = [7; 900];

/// One hostile packet: (bench, packet index) -> frame bytes.
type Round = Box<dyn FnMut(&mut Bench, usize) -> Vec<u8>>;

struct Class {
    name: &'static str,
    server: fn() -> TransportConfig,
    setup: fn(&mut Bench),
    round: fn() -> Round,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

/// (µs/packet over the first n, µs/packet over packets 9n..10n, closed with, server packets
/// received per round).
fn measure(class: &Class, n: usize) -> (f64, f64, Option<String>, f64) {
    let (mut first, mut last, mut closed, mut per_round) = (Vec::new(), Vec::new(), None, 0.0);
    for _ in 0..RUNS {
        let mut b = Bench::new((class.server)());
        (class.setup)(&mut b);
        let received = |b: &Bench| {
            let s = b.pair.server.connection(b.sh).unwrap().stats();
            s.packets_received
        };
        let before = received(&b);
        let mut round = (class.round)();
        let (mut t_first, mut t_last) = (0u128, 0u128);
        for i in 0..10 * n {
            let frames = round(&mut b, i);
            let t = b.hostile(frames);
            if i < n {
                t_first += t;
            } else if i >= 9 * n {
                t_last += t;
            }
            if let Some(e) = b.closed() {
                closed = Some(format!("closed after {} packets: {e}", i + 1));
                break;
            }
        }
        per_round = (received(&b) - before) as f64 / (10 * n) as f64;
        let updates = b.pair.server.connection(b.sh).unwrap().stats().key_updates;
        if updates > 0 && closed.is_none() {
            closed = Some(format!("{updates} key updates"));
        }
        first.push(t_first as f64 / n as f64 / 1000.0);
        last.push(t_last as f64 / n as f64 / 1000.0);
    }
    (median(first), median(last), closed, per_round)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(200, |a| a.parse().expect("N"));
    let only = args.next();
    let mut base = None;
    println!("N = {n}; µs/packet of server work (median of {RUNS} runs)");
    println!(
        "{:<62} {:>9} {:>9} {:>7} {:>7} {:>5}",
        "class", "first N", "9N..10N", "x norm", "growth", "rx/pk"
    );
    for class in classes::classes() {
        if only
            .as_ref()
            .is_some_and(|o| !class.name.contains(o.as_str()))
            && base.is_some()
        {
            continue;
        }
        let (a, b, closed, per_round) = measure(&class, n);
        let norm = *base.get_or_insert(a);
        println!(
            "{:<62} {:>9.1} {:>9.1} {:>7.1} {:>7.2} {:>5.2}{}",
            class.name,
            a,
            b,
            a.max(b) / norm,
            b / a,
            per_round,
            closed.map_or(String::new(), |c| format!("  [{c}]"))
        );
    }
}
