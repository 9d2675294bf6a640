//! A client and a server `Streams` exchanging real encoded frames over an in-memory
//! channel with random loss, reordering, spurious loss and re-injection.

use std::collections::HashMap;

use bytes::Bytes;
use mpquic_wire::stream_id::{Dir, StreamId};

use super::{connected, decode, dispatch};
use crate::streams::{
    ReadError, SentStreamFrames, StreamEvent, Streams, StreamsConfig, WriteError,
};
use crate::time::{Duration, Timestamp};

const PACKET: usize = 1200;
const PACKETS_PER_STEP: usize = 12;
const STEP: Duration = Duration::from_millis(10);
const RTT: Duration = Duration::from_millis(40);

use rand_core::RngCore;

/// The deterministic random stream of a test run (the workspace's one seeded RNG helper).
type Rng = rand_chacha::ChaCha20Rng;

/// The bytes stream `id` carries in the direction where it has `len` bytes.
fn pattern(id: StreamId, len: usize, response: bool) -> Vec<u8> {
    let salt = id.0 as usize * 7 + usize::from(response) * 13;
    (0..len).map(|i| (i * 31 + (i >> 9) + salt) as u8).collect()
}

const BIDI_REQUESTS: [usize; 6] = [0, 1, 300_000, 5_000, 120_000, 70_000];
const BIDI_RESPONSES: [usize; 6] = [1_000, 0, 10, 200_000, 3, 60_000];
const UNI_REQUESTS: [usize; 2] = [50_000, 0];
const SERVER_UNI: usize = 150_000;

struct Outgoing {
    id: StreamId,
    data: Vec<u8>,
    pos: usize,
    finished: bool,
}

/// One endpoint's application: streams to open, data to write, data read.
struct App {
    streams: Streams,
    to_open: Vec<(Dir, Vec<u8>)>,
    outgoing: Vec<Outgoing>,
    incoming: HashMap<StreamId, (Vec<u8>, bool)>,
    finished_events: usize,
    max_stream_window: u64,
    is_server: bool,
}

impl App {
    fn new(streams: Streams, is_server: bool) -> Self {
        Self {
            streams,
            to_open: Vec::new(),
            outgoing: Vec::new(),
            incoming: HashMap::new(),
            finished_events: 0,
            max_stream_window: 0,
            is_server,
        }
    }

    fn run(&mut self) {
        while let Some(ev) = self.streams.poll_event() {
            if let StreamEvent::Finished { .. } = ev {
                self.finished_events += 1;
            }
        }
        for dir in [Dir::Bi, Dir::Uni] {
            while let Some(id) = self.streams.accept(dir) {
                self.incoming.insert(id, (Vec::new(), false));
                if self.is_server && dir == Dir::Bi {
                    let len = BIDI_RESPONSES[id.index() as usize];
                    self.outgoing.push(Outgoing {
                        id,
                        data: pattern(id, len, true),
                        pos: 0,
                        finished: false,
                    });
                }
            }
        }
        while let Some((dir, _)) = self.to_open.first() {
            let Some(id) = self.streams.open(*dir) else {
                break;
            };
            let (dir, data) = self.to_open.remove(0);
            if dir == Dir::Bi {
                self.incoming.insert(id, (Vec::new(), false));
            }
            self.outgoing.push(Outgoing {
                id,
                data,
                pos: 0,
                finished: false,
            });
        }
        self.write_all();
        self.read_all();
    }

    fn write_all(&mut self) {
        for o in self.outgoing.iter_mut().filter(|o| !o.finished) {
            while o.pos < o.data.len() {
                // Alternate the copying and the zero-copy write paths.
                let res = if o.pos % 2 == 0 {
                    self.streams.write(o.id, &o.data[o.pos..])
                } else {
                    self.streams
                        .write_bytes(o.id, Bytes::copy_from_slice(&o.data[o.pos..]))
                };
                match res {
                    Ok(n) => o.pos += n,
                    Err(WriteError::Blocked) => break,
                    Err(e) => panic!("write on {:?}: {e}", o.id),
                }
            }
            if o.pos == o.data.len() {
                self.streams.finish(o.id).unwrap();
                o.finished = true;
            }
        }
    }

    fn read_all(&mut self) {
        for (&id, (buf, eof)) in self.incoming.iter_mut().filter(|(_, (_, eof))| !eof) {
            if let Some(w) = self.streams.stream_recv_window(id) {
                self.max_stream_window = self.max_stream_window.max(w);
            }
            loop {
                match self.streams.read_chunk(id, 5000) {
                    Ok(Some(chunk)) => buf.extend_from_slice(&chunk),
                    Ok(None) => {
                        *eof = true;
                        break;
                    }
                    Err(ReadError::Blocked) => break,
                    Err(e) => panic!("read on {id:?}: {e}"),
                }
            }
        }
    }

    fn done(&self) -> bool {
        self.to_open.is_empty()
            && self.outgoing.iter().all(|o| o.finished)
            && self.finished_events == self.outgoing.len()
            && self.incoming.values().all(|(_, eof)| *eof)
    }
}

enum Event {
    Deliver {
        to: usize,
        payload: Vec<u8>,
    },
    Ack {
        sender: usize,
        sent: SentStreamFrames,
    },
    Lost {
        sender: usize,
        sent: SentStreamFrames,
    },
    Reinject {
        sender: usize,
        sent: SentStreamFrames,
    },
}

/// Builds and "sends" up to `PACKETS_PER_STEP` packets from endpoint `from`.
fn send_packets(
    app: &mut App,
    from: usize,
    now: Timestamp,
    step: u64,
    rng: &mut Rng,
    events: &mut Vec<(u64, Event)>,
) {
    for _ in 0..PACKETS_PER_STEP {
        let mut payload = Vec::with_capacity(PACKET);
        let mut sent = SentStreamFrames::default();
        app.streams
            .write_control_frames(now, RTT, &mut payload, PACKET, &mut sent);
        let room = PACKET - payload.len();
        app.streams
            .write_stream_frames(&mut payload, room, &mut sent);
        assert!(payload.len() <= PACKET);
        if sent.is_empty() {
            assert!(!app.streams.has_pending_data() && !app.streams.has_pending_control());
            return;
        }
        let delay = 1 + rng.next_u64() % 4;
        let roll = rng.next_u64() % 100;
        if roll < 10 {
            // Lost, detected a few steps later.
            events.push((step + 5, Event::Lost { sender: from, sent }));
            continue;
        }
        events.push((
            step + delay,
            Event::Deliver {
                to: 1 - from,
                payload,
            },
        ));
        if roll < 14 {
            // Spuriously declared lost before its acknowledgement arrives.
            events.push((
                step + 1,
                Event::Lost {
                    sender: from,
                    sent: sent.clone(),
                },
            ));
        } else if roll < 18 {
            events.push((
                step + 1,
                Event::Reinject {
                    sender: from,
                    sent: sent.clone(),
                },
            ));
        }
        events.push((step + delay + 1, Event::Ack { sender: from, sent }));
    }
}

fn run_pair(seed: u64) {
    let config = StreamsConfig {
        max_data: 32 * 1024,
        max_stream_data_bidi_local: 8 * 1024,
        max_stream_data_bidi_remote: 8 * 1024,
        max_stream_data_uni: 8 * 1024,
        max_streams_bidi: 4,
        max_streams_uni: 4,
        send_buffer: 32 * 1024,
        max_window: 256 * 1024,
    };
    let (c, s) = connected(config.clone(), config.clone());
    let mut apps = [App::new(c, false), App::new(s, true)];
    for (i, &len) in BIDI_REQUESTS.iter().enumerate() {
        let id = StreamId::new(mpquic_wire::stream_id::Side::Client, Dir::Bi, i as u64);
        apps[0].to_open.push((Dir::Bi, pattern(id, len, false)));
    }
    for (i, &len) in UNI_REQUESTS.iter().enumerate() {
        let id = StreamId::new(mpquic_wire::stream_id::Side::Client, Dir::Uni, i as u64);
        apps[0].to_open.push((Dir::Uni, pattern(id, len, false)));
    }
    let id = StreamId::new(mpquic_wire::stream_id::Side::Server, Dir::Uni, 0);
    apps[1]
        .to_open
        .push((Dir::Uni, pattern(id, SERVER_UNI, false)));

    let mut rng = mpquic_netsim::rng::stream_rng(seed, "proto/streams/pair");
    let mut events: Vec<(u64, Event)> = Vec::new();
    let mut step = 0;
    while !(apps[0].done() && apps[1].done()) {
        step += 1;
        assert!(step < 20_000, "seed {seed}: no progress");
        let now = Timestamp::ZERO + STEP * step as u32;
        let (due, rest): (Vec<_>, Vec<_>) = events.into_iter().partition(|(t, _)| *t <= step);
        events = rest;
        for (_, ev) in due {
            match ev {
                Event::Deliver { to, payload } => {
                    for frame in decode(payload) {
                        dispatch(&mut apps[to].streams, frame).expect("no connection error");
                    }
                }
                Event::Ack { sender, sent } => apps[sender].streams.on_frames_acked(&sent),
                Event::Lost { sender, sent } => apps[sender].streams.on_frames_lost(&sent),
                Event::Reinject { sender, sent } => {
                    let copy = apps[sender].streams.retransmittable_copy(&sent);
                    apps[sender].streams.on_frames_lost(&copy);
                }
            }
        }
        for (i, app) in apps.iter_mut().enumerate() {
            app.run();
            send_packets(app, i, now, step, &mut rng, &mut events);
            // The running count of reassembly pieces stays exact through inserts, reads,
            // resets and removals.
            let (running, counted) = app.streams.recount_pieces();
            assert_eq!(running, counted, "seed {seed}: step {step}");
        }
    }
    eprintln!(
        "seed {seed}: {step} steps, client {:?} window {} / {}, server {:?} window {} / {}",
        apps[0].streams.stats(),
        apps[0].streams.local_data_window(),
        apps[0].max_stream_window,
        apps[1].streams.stats(),
        apps[1].streams.local_data_window(),
        apps[1].max_stream_window
    );
    check_outcome(&apps, &config, seed);
}

fn check_outcome(apps: &[App; 2], config: &StreamsConfig, seed: u64) {
    let mut total = 0;
    for app in apps {
        for (&id, (data, eof)) in &app.incoming {
            let index = id.index() as usize;
            let expected = match (id.dir(), app.is_server) {
                (Dir::Bi, true) => pattern(id, BIDI_REQUESTS[index], false),
                (Dir::Bi, false) => pattern(id, BIDI_RESPONSES[index], true),
                (Dir::Uni, true) => pattern(id, UNI_REQUESTS[index], false),
                (Dir::Uni, false) => pattern(id, SERVER_UNI, false),
            };
            assert!(*eof);
            assert!(
                *data == expected,
                "seed {seed}: stream {id:?} corrupted ({} bytes)",
                data.len()
            );
            total += data.len() as u64;
        }
        // Every stream reached its terminal states and was freed.
        assert_eq!(app.streams.live_streams(), 0, "seed {seed}");
        assert!(
            app.streams.stats().bytes_retransmitted > 0,
            "seed {seed}: no loss exercised"
        );
    }
    assert_eq!(
        apps[1].incoming.len(),
        BIDI_REQUESTS.len() + UNI_REQUESTS.len()
    );
    assert_eq!(apps[0].incoming.len(), BIDI_REQUESTS.len() + 1);
    let read: u64 = apps.iter().map(|a| a.streams.stats().bytes_read).sum();
    assert_eq!(read, total);
    // Receive windows auto-tuned upwards.
    assert!(
        apps[1].streams.local_data_window() > config.max_data,
        "seed {seed}"
    );
    assert!(
        apps[1].max_stream_window > config.max_stream_data_bidi_remote,
        "seed {seed}"
    );
    assert!(
        apps[0].max_stream_window > config.max_stream_data_bidi_local,
        "seed {seed}"
    );
}

#[test]
fn lossy_reordering_exchange_delivers_every_stream_exactly() {
    for seed in [0x9e37_79b9_7f4a_7c15, 1, 42, 0xdead_beef, 7777] {
        run_pair(seed);
    }
}
