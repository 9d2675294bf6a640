//! The classes of hostile input measured by the example: one hostile packet each round.

use bytes::Bytes;
use mpquic_proto::wire::cid::{ConnectionId, ResetToken};
use mpquic_proto::wire::frame::{
    AckFrame, DatagramFrame, Frame, NewConnectionId, PathStatus, StreamFrame,
};
use mpquic_proto::wire::stream_id::{Dir, Side, StreamId};
use mpquic_proto::{MultipathMode, TransportConfig};

use crate::common::{addr, client_bidi, encode, padded, stream_control_flood};
use crate::{fill, Bench, Class, Round, DATA};

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

/// An ACK frame of one packet number only.
fn ack_one(largest: u64) -> Frame {
    Frame::Ack(AckFrame {
        path_id: None,
        largest,
        ack_delay: 0,
        ranges: vec![largest..=largest],
        ecn: None,
    })
}

/// The server's newest packet acknowledged alone, in as many ACK frames as fit.
fn one_range_acks() -> Round {
    Box::new(|b, _| {
        let l = b.server_pn();
        fill(|_| ack_one(l))
    })
}

/// A download is running: the client opened a stream and asked for data.
fn start_download(b: &mut Bench) {
    open_stream(b);
    b.serve = true;
    b.hostile(encode(&[Frame::Stream(StreamFrame {
        id: client_bidi(0),
        offset: 0,
        fin: false,
        data: Bytes::from_static(&DATA[..1]),
    })]));
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

/// Every class measured, the ordinary one first (the ratios are to it).
pub(crate) fn classes() -> Vec<Class> {
    [
        group_0(),
        group_1(),
        group_2(),
        group_3(),
        group_4(),
        group_5(),
        group_6(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn group_0() -> Vec<Class> {
    vec![
        Class {
            name: "normal: 900 B of new STREAM data",
            server: default_server,
            setup: open_stream,
            round: || {
                let mut offset = 0;
                Box::new(move |_, _| {
                    let f = Frame::Stream(StreamFrame {
                        id: client_bidi(0),
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
    ]
}

fn group_1() -> Vec<Class> {
    vec![
        Class {
            name: "download; the client sends PINGs (its stack ACKs)",
            server: default_server,
            setup: start_download,
            round: || Box::new(|_, _| encode(&[Frame::Ping])),
        },
        Class {
            name: "download; ACK frames of a recent packet only, as many as fit",
            server: default_server,
            setup: start_download,
            round: one_range_acks,
        },
        Class {
            name: "ACK: as many one-range ACK frames as fit (~200)",
            server: default_server,
            setup: no_setup,
            round: one_range_acks,
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
    ]
}

fn group_2() -> Vec<Class> {
    vec![
        Class {
            name: "STREAM: 40 x 16 B duplicates inside 64 KB held unread",
            server: default_server,
            setup: |b| {
                open_stream(b);
                b.reader = false;
                for k in 0..72u64 {
                    let f = Frame::Stream(StreamFrame {
                        id: client_bidi(0),
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
                            id: client_bidi(0),
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
                            id: client_bidi(0),
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
                            id: client_bidi(0),
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
                        id: client_bidi(0),
                        offset: (i as u64 * 900) % 30_000,
                        fin: false,
                        data: Bytes::from_static(&DATA),
                    })])
                })
            },
        },
    ]
}

fn group_3() -> Vec<Class> {
    vec![
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
                    let frames = stream_control_flood(i);
                    encode(&frames)
                })
            },
        },
    ]
}

fn group_4() -> Vec<Class> {
    vec![
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
    ]
}

fn group_5() -> Vec<Class> {
    vec![
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
    ]
}

fn group_6() -> Vec<Class> {
    vec![
        Class {
            name: "STREAM: 16 B with a gap on each of 100 streams, unread",
            server: default_server,
            setup: |b| b.reader = false,
            round: || {
                let mut offset = [1u64; 100];
                Box::new(move |_, i| {
                    fill(|j| {
                        let s = (i * 37 + j) % 100;
                        let f = Frame::Stream(StreamFrame {
                            id: client_bidi(s as u64),
                            offset: offset[s],
                            fin: false,
                            data: Bytes::from_static(&DATA[..16]),
                        });
                        offset[s] += 33;
                        f
                    })
                })
            },
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
            name: "client key update as often as allowed, PING",
            server: || {
                let mut t = TransportConfig::default();
                t.key_update_interval = Some(1 << 40);
                t
            },
            setup: no_setup,
            round: || Box::new(|_, _| encode(&[Frame::Ping])),
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
