//! CPU work per packet against a hostile, authenticated peer: for each class of well-formed but
//! hostile input, the server's cost of handling one such packet (its `handle_datagram`, the
//! replies it then sends and its timers), in microseconds, over the first `N` packets of a
//! fresh connection and over packets `9N..10N` (cost growing with what the peer did shows as a
//! larger second figure), each the median of a few runs, and its ratio to an ordinary data
//! packet's cost.
//!
//! `cargo run --release -p mpquic-proto --example hostile_cpu [N] [class substring]`

#[path = "../tests/common/mod.rs"]
mod common;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use common::{addr, NetConfig, Pair};
use mpquic_proto::cc::{
    AckEvent, CcConfig, CcStats, CongestionController, ControllerFactory, Coupling, LossEvent,
};
use mpquic_proto::wire::cid::{ConnectionId, ResetToken};
use mpquic_proto::wire::frame::{
    AckFrame, DatagramFrame, Frame, NewConnectionId, PathStatus, StreamFrame,
};
use mpquic_proto::wire::stream_id::{Dir, Side, StreamId};
use mpquic_proto::{
    ConnectionHandle, Duration, MultipathMode, PathId, ReadError, Timestamp, TransportConfig,
};

/// Raw frame bytes per hostile packet: below any packet's room for frames.
const ROOM: usize = 1000;
const RUNS: usize = 3;

#[derive(Debug)]
struct Unlimited;

impl CongestionController for Unlimited {
    fn on_packet_sent(&mut self, _: Timestamp, _: u64, _: u64) {}
    fn on_ack(&mut self, _: &AckEvent<'_>, _: Coupling<'_>) {}
    fn on_congestion_event(&mut self, _: &LossEvent<'_>, _: Coupling<'_>) {}
    fn window(&self) -> u64 {
        1 << 40
    }
    fn name(&self) -> &'static str {
        "unlimited"
    }
    fn stats(&self) -> CcStats {
        CcStats::default()
    }
}

impl ControllerFactory for Unlimited {
    fn name(&self) -> &str {
        "unlimited"
    }
    fn build(&self, _: CcConfig) -> Box<dyn CongestionController> {
        Box::new(Unlimited)
    }
}

/// The hostile client sends whether or not anything is acknowledged.
fn client_config() -> TransportConfig {
    TransportConfig::default()
        .with_congestion_controller_factory(Arc::new(Unlimited))
        .pacing(false)
}

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
        let client = client_config().multipath(server.multipath);
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

fn encode(frames: &[Frame]) -> Vec<u8> {
    let mut out = Vec::new();
    for f in frames {
        f.encode(&mut out);
    }
    assert!(out.len() <= ROOM, "{} bytes of frames", out.len());
    out
}

fn padded(frames: &[Frame]) -> Vec<u8> {
    let mut out = encode(frames);
    out.resize(ROOM, 0);
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

fn bidi(i: u64) -> StreamId {
    StreamId::new(Side::Client, Dir::Bi, i)
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

fn default_server() -> TransportConfig {
    TransportConfig::default()
}

fn no_setup(_: &mut Bench) {}

/// The client opens stream 0 (it knows the stream the server's flow-control frames are for).
fn open_stream(b: &mut Bench) {
    b.pair
        .client
        .connection_mut(b.ch)
        .unwrap()
        .open_bi()
        .unwrap();
}

/// Ranges of single packet numbers every other number, from `largest` down, as many as fit.
fn ack_sparse(path_id: Option<u64>, largest: u64, stride: u64) -> Frame {
    let mut ranges = Vec::new();
    let mut pn = largest;
    while ranges.len() < 450 && pn > stride {
        ranges.push(pn..=pn);
        pn -= stride;
    }
    Frame::Ack(AckFrame {
        path_id,
        largest,
        ack_delay: 0,
        ranges,
        ecn: None,
    })
}

fn ack_all(path_id: Option<u64>, largest: u64) -> Frame {
    Frame::Ack(AckFrame {
        path_id,
        largest,
        ack_delay: 0,
        ranges: vec![0..=largest],
        ecn: None,
    })
}

fn cid(n: u64) -> ConnectionId {
    ConnectionId::new(&n.to_be_bytes()).unwrap()
}

fn classes() -> Vec<Class> {
    vec![
        Class {
            name: "normal: 900 B of new STREAM data",
            server: default_server,
            setup: open_stream,
            round: || {
                let mut offset = 0;
                Box::new(move |_, _| {
                    let f = Frame::Stream(StreamFrame {
                        id: bidi(0),
                        offset,
                        fin: false,
                        data: Bytes::from_static(&DATA),
                    });
                    offset += DATA.len() as u64;
                    encode(&[f])
                })
            },
        },
        Class {
            name: "PING, padded",
            server: default_server,
            setup: no_setup,
            round: || Box::new(|_, _| padded(&[Frame::Ping])),
        },
        Class {
            name: "ACK: ~450 single-PN ranges, stride 2, nothing new",
            server: default_server,
            setup: no_setup,
            round: || Box::new(|b, _| encode(&[ack_sparse(None, b.server_pn(), 2)])),
        },
        Class {
            name: "ACK: ~450 ranges, stride 1000 (far below)",
            server: default_server,
            setup: no_setup,
            round: || {
                Box::new(|b, _| {
                    let l = b.server_pn();
                    let mut f = ack_sparse(None, l, 2);
                    if let Frame::Ack(a) = &mut f {
                        a.ranges.truncate(1);
                        let mut low = l.saturating_sub(2);
                        while a.ranges.len() < 300 && low > 0 {
                            a.ranges.push(low..=low);
                            low = low.saturating_sub(1 + (low % 7));
                        }
                    }
                    encode(&[f])
                })
            },
        },
        Class {
            name: "ACK: one range 0..=largest, every packet",
            server: default_server,
            setup: no_setup,
            round: || Box::new(|b, _| encode(&[ack_all(None, b.server_pn())])),
        },
        Class {
            name: "ACK: 20 frames x 40 ranges per packet",
            server: default_server,
            setup: no_setup,
            round: || {
                Box::new(|b, _| {
                    let l = b.server_pn();
                    fill(|_| {
                        let mut f = ack_sparse(None, l, 2);
                        if let Frame::Ack(a) = &mut f {
                            a.ranges.truncate(20);
                        }
                        f
                    })
                })
            },
        },
        Class {
            name: "PATH_ACK for paths 1..=7 (unopened), many ranges",
            server: default_server,
            setup: no_setup,
            round: || {
                Box::new(|_, _| {
                    fill(|i| {
                        let mut f = ack_sparse(Some(1 + i as u64 % 7), 0, 2);
                        if let Frame::Ack(a) = &mut f {
                            a.largest = 0;
                            a.ranges = vec![0..=0];
                        }
                        f
                    })
                })
            },
        },
        Class {
            name: "SPNS, 8 paths: ACK, 20 frames x 40 ranges per packet",
            server: || TransportConfig::default().multipath(MultipathMode::Spns),
            setup: |b| b.open_paths(7),
            round: || {
                Box::new(|b, _| {
                    let l = b.server_pn();
                    fill(|_| {
                        let mut f = ack_sparse(None, l, 2);
                        if let Frame::Ack(a) = &mut f {
                            a.ranges.truncate(20);
                        }
                        f
                    })
                })
            },
        },
        Class {
            name: "MPNS, 8 paths: PATH_ACK for each, 20 ranges each",
            server: default_server,
            setup: |b| b.open_paths(7),
            round: || {
                Box::new(|b, i| {
                    let largest: Vec<u64> = (0..8).map(|k| b.server_path_pn(k)).collect();
                    fill(|j| {
                        let k = (i + j) % 8;
                        let mut f = ack_sparse(Some(k as u64), largest[k], 2);
                        if let Frame::Ack(a) = &mut f {
                            a.ranges.truncate(20);
                            if a.ranges.is_empty() {
                                a.ranges.push(0..=0);
                                a.largest = 0;
                            }
                        }
                        f
                    })
                })
            },
        },
        Class {
            name: "STREAM: 40 x 16 B duplicates inside 64 KB held unread",
            server: default_server,
            setup: |b| {
                open_stream(b);
                b.reader = false;
                for k in 0..72u64 {
                    let f = Frame::Stream(StreamFrame {
                        id: bidi(0),
                        offset: k * 900,
                        fin: false,
                        data: Bytes::from_static(&DATA),
                    });
                    b.hostile(encode(&[f]));
                }
            },
            round: || {
                Box::new(|_, i| {
                    fill(|j| {
                        let off = ((i * 40 + j) as u64 * 1601) % 64_000;
                        Frame::Stream(StreamFrame {
                            id: bidi(0),
                            offset: off,
                            fin: false,
                            data: Bytes::from_static(&DATA[..16]),
                        })
                    })
                })
            },
        },
        Class {
            name: "STREAM: 32 B pieces with gaps, unread (state grows)",
            server: default_server,
            setup: |b| {
                open_stream(b);
                b.reader = false
            },
            round: || {
                let mut offset = 1u64;
                Box::new(move |_, _| {
                    fill(|_| {
                        let f = Frame::Stream(StreamFrame {
                            id: bidi(0),
                            offset,
                            fin: false,
                            data: Bytes::from_static(&DATA[..32]),
                        });
                        offset += 33;
                        f
                    })
                })
            },
        },
        Class {
            name: "STREAM: 900 B frame over the gapped pieces, again and again",
            server: default_server,
            setup: |b| {
                open_stream(b);
                b.reader = false;
                let mut offset = 1u64;
                for _ in 0..40 {
                    let bytes = fill(|_| {
                        let f = Frame::Stream(StreamFrame {
                            id: bidi(0),
                            offset,
                            fin: false,
                            data: Bytes::from_static(&DATA[..32]),
                        });
                        offset += 33;
                        f
                    });
                    b.hostile(bytes);
                }
            },
            round: || {
                Box::new(|_, i| {
                    encode(&[Frame::Stream(StreamFrame {
                        id: bidi(0),
                        offset: (i as u64 * 900) % 30_000,
                        fin: false,
                        data: Bytes::from_static(&DATA),
                    })])
                })
            },
        },
        Class {
            name: "uni streams opened with 1 B + FIN and reset, 10 per packet",
            server: default_server,
            setup: no_setup,
            round: || {
                let mut next = 0u64;
                Box::new(move |_, _| {
                    let mut frames = Vec::new();
                    for _ in 0..10 {
                        let id = StreamId::new(Side::Client, Dir::Uni, next);
                        next += 1;
                        frames.push(Frame::Stream(StreamFrame {
                            id,
                            offset: 0,
                            fin: true,
                            data: Bytes::from_static(&DATA[..1]),
                        }));
                        frames.push(Frame::ResetStream {
                            id,
                            error_code: 1,
                            final_size: 1,
                        });
                    }
                    encode(&frames)
                })
            },
        },
        Class {
            name: "RESET/STOP_SENDING/MAX_STREAM_DATA/BLOCKED on 36 streams",
            server: default_server,
            setup: |b| {
                for _ in 0..36 {
                    b.pair
                        .client
                        .connection_mut(b.ch)
                        .unwrap()
                        .open_bi()
                        .unwrap();
                }
            },
            round: || {
                Box::new(|_, i| {
                    let frames: Vec<Frame> = (0..36u64)
                        .flat_map(|s| {
                            let id = bidi(s);
                            [
                                Frame::ResetStream {
                                    id,
                                    error_code: 1,
                                    final_size: 0,
                                },
                                Frame::StopSending { id, error_code: 2 },
                                Frame::MaxStreamData {
                                    id,
                                    max: 1 << 20 | i as u64,
                                },
                                Frame::StreamDataBlocked {
                                    id,
                                    limit: 1 << 20 | i as u64,
                                },
                            ]
                        })
                        .collect();
                    encode(&frames)
                })
            },
        },
        Class {
            name: "NEW_CONNECTION_ID, retire_prior_to = sequence, 1 per packet",
            server: default_server,
            setup: no_setup,
            round: || {
                let mut seq = 10u64;
                Box::new(move |_, _| {
                    let frames: Vec<Frame> = (0..1)
                        .map(|_| {
                            seq += 1;
                            Frame::NewConnectionId(NewConnectionId {
                                path_id: None,
                                sequence: seq,
                                retire_prior_to: seq,
                                cid: cid(seq + 1000),
                                reset_token: ResetToken([seq as u8; 16]),
                            })
                        })
                        .collect();
                    encode(&frames)
                })
            },
        },
        Class {
            name: "PATH_CHALLENGE x 100 per packet",
            server: default_server,
            setup: no_setup,
            round: || {
                Box::new(|_, i| {
                    fill(|j| Frame::PathChallenge(((i * 1000 + j) as u64).to_be_bytes()))
                })
            },
        },
        Class {
            name: "PATH_RESPONSE x 100 per packet (unsolicited)",
            server: default_server,
            setup: no_setup,
            round: || {
                Box::new(|_, i| {
                    fill(|j| Frame::PathResponse(((i * 1000 + j) as u64).to_be_bytes()))
                })
            },
        },
        Class {
            name: "PATH_STATUS + MAX_PATH_ID + PATH_ABANDON (unopened paths)",
            server: default_server,
            setup: no_setup,
            round: || {
                Box::new(|_, i| {
                    fill(|j| {
                        let seq = (i * 1000 + j) as u64;
                        match j % 3 {
                            0 => Frame::PathStatus {
                                path_id: 1 + seq % 7,
                                sequence: seq,
                                status: if seq % 2 == 0 {
                                    PathStatus::Backup
                                } else {
                                    PathStatus::Available
                                },
                            },
                            1 => Frame::MaxPathId(1000 + seq),
                            _ => Frame::PathAbandon {
                                path_id: 1 + seq % 7,
                                error_code: 0,
                            },
                        }
                    })
                })
            },
        },
        Class {
            name: "ACK_FREQUENCY, extreme values, rising sequence",
            server: || {
                let mut t = TransportConfig::default();
                t.ack.min_ack_delay_us = Some(1000);
                t
            },
            setup: no_setup,
            round: || {
                Box::new(|_, i| {
                    fill(|j| Frame::AckFrequency {
                        sequence: (i * 1000 + j) as u64,
                        ack_eliciting_threshold: (1 << 62) - 1,
                        request_max_ack_delay_us: (1 << 14) * 1000 - 1,
                        reordering_threshold: (i % 2) as u64 * ((1 << 62) - 1),
                    })
                })
            },
        },
        Class {
            name: "every other client packet dropped (PN gaps), PING",
            server: default_server,
            setup: |b| b.drop_odd = true,
            round: || Box::new(|_, _| encode(&[Frame::Ping])),
        },
        Class {
            name: "ACK_FREQUENCY (threshold, delay max) then PN gaps, PING",
            server: || {
                let mut t = TransportConfig::default();
                t.ack.min_ack_delay_us = Some(1000);
                t
            },
            setup: |b| {
                b.hostile(encode(&[Frame::AckFrequency {
                    sequence: 1,
                    ack_eliciting_threshold: (1 << 62) - 1,
                    request_max_ack_delay_us: (1 << 14) * 1000 - 1,
                    reordering_threshold: (1 << 62) - 1,
                }]));
                b.drop_odd = true;
            },
            round: || Box::new(|_, _| encode(&[Frame::Ping])),
        },
        Class {
            name: "ACK_FREQUENCY (reordering 3) then PN gaps, PING",
            server: || {
                let mut t = TransportConfig::default();
                t.ack.min_ack_delay_us = Some(1000);
                t
            },
            setup: |b| {
                b.hostile(encode(&[Frame::AckFrequency {
                    sequence: 1,
                    ack_eliciting_threshold: 10,
                    request_max_ack_delay_us: 25_000,
                    reordering_threshold: 3,
                }]));
                b.drop_odd = true;
            },
            round: || Box::new(|_, _| encode(&[Frame::Ping])),
        },
        Class {
            name: "SPNS, 2 paths, path 1 silent, ACK_FREQUENCY (reordering 3), PN gaps",
            server: || {
                let mut t = TransportConfig::default().multipath(MultipathMode::Spns);
                t.ack.min_ack_delay_us = Some(1000);
                t
            },
            setup: |b| {
                b.open_paths(1);
                b.hostile(encode(&[Frame::AckFrequency {
                    sequence: 1,
                    ack_eliciting_threshold: 10,
                    request_max_ack_delay_us: 25_000,
                    reordering_threshold: 3,
                }]));
                b.drop_from = Some(addr("10.0.2.1:4433"));
                b.drop_odd = true;
            },
            round: || Box::new(|_, _| encode(&[Frame::Ping])),
        },
        Class {
            name: "SPNS, 2 paths, path 1 silent, PN gaps, PING",
            server: || TransportConfig::default().multipath(MultipathMode::Spns),
            setup: |b| {
                b.open_paths(1);
                b.drop_from = Some(addr("10.0.2.1:4433"));
                b.drop_odd = true;
            },
            round: || Box::new(|_, _| encode(&[Frame::Ping])),
        },
        Class {
            name: "16 coalesced Handshake packets (keys gone) + 1-RTT PING",
            server: default_server,
            setup: |b| b.coalesce = 16,
            round: || Box::new(|_, _| encode(&[Frame::Ping])),
        },
        Class {
            name: "CRYPTO after the handshake, 40 x 16 B gapped",
            server: default_server,
            setup: no_setup,
            round: || {
                Box::new(|_, i| {
                    fill(|j| Frame::Crypto {
                        offset: ((i * 40 + j) as u64 * 37) % 60_000,
                        data: Bytes::from_static(&DATA[..16]),
                    })
                })
            },
        },
        Class {
            name: "DATAGRAM x 450 empty per packet",
            server: || {
                let mut t = TransportConfig::default();
                t.datagram_receive_buffer = Some(64 * 1024);
                t
            },
            setup: no_setup,
            round: || {
                Box::new(|_, _| fill(|_| Frame::Datagram(DatagramFrame { data: Bytes::new() })))
            },
        },
        Class {
            name: "PING, the client hears (so acknowledges) nothing",
            server: default_server,
            setup: |b| b.deaf = true,
            round: || Box::new(|_, _| encode(&[Frame::Ping])),
        },
        Class {
            name: "new source address every packet, PING",
            server: default_server,
            setup: no_setup,
            round: || {
                Box::new(|b, i| {
                    b.spoof = Some(addr(&format!(
                        "10.{}.{}.{}:{}",
                        20 + i / 60000,
                        (i / 250) % 240,
                        i % 250 + 1,
                        1024 + i % 60000
                    )));
                    encode(&[Frame::Ping])
                })
            },
        },
    ]
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
    for class in classes() {
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
