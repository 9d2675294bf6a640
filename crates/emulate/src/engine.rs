//! The timer thread: owns every path's two [`LinkModel`]s, feeds them the
//! datagrams the socket threads received (stamped with their arrival time)
//! and sends each datagram on when its link releases it.
//!
//! Only this thread touches the models, so they need no lock; the socket
//! threads never wait for it (an unbounded channel), and it sleeps exactly
//! until the earliest event of any model or the next message.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mpquic_netsim::stats::Counter;
use mpquic_netsim::{Datagram, Delivery, LinkModel, SimTime};

use crate::config::EmulatorConfig;
use crate::relay::Tally;
use crate::report::{DirectionReport, JitterHistogram, PathReport, Report};

/// Longest sleep without any scheduled event (the thread still wakes at
/// once for a message).
const IDLE_WAIT: Duration = Duration::from_secs(1);

/// Which link of a path a datagram crosses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dir {
    /// Client to server.
    Up,
    /// Server to client.
    Down,
}

/// What the socket threads and the handle tell the timer thread.
pub(crate) enum Msg {
    /// A datagram arrived at `at` from (`Up`) or for (`Down`) `client`.
    Datagram {
        at: Instant,
        path: usize,
        dir: Dir,
        client: SocketAddr,
        payload: Vec<u8>,
    },
    /// A new client: its datagrams go to the server from `socket`.
    Relay {
        path: usize,
        client: SocketAddr,
        socket: Arc<UdpSocket>,
    },
    /// Send a report back.
    Report(Sender<Report>),
    /// Finish.
    Stop,
}

struct PathState {
    up: LinkModel,
    down: LinkModel,
    clients: u64,
}

/// The timer thread's state.
pub(crate) struct Engine {
    config: EmulatorConfig,
    /// The actual listen address (the configured one may have port 0).
    listen_addr: SocketAddr,
    start: Instant,
    paths: Vec<PathState>,
    listen: Arc<UdpSocket>,
    relays: HashMap<SocketAddr, Arc<UdpSocket>>,
    jitter: JitterHistogram,
    tally: Arc<Tally>,
    send_errors: u64,
    out: Vec<Delivery>,
}

impl Engine {
    /// Builds the link models (which validates every link configuration).
    pub(crate) fn new(
        config: EmulatorConfig,
        listen: Arc<UdpSocket>,
        listen_addr: SocketAddr,
        tally: Arc<Tally>,
        start: Instant,
    ) -> Result<Self, String> {
        let mut paths = Vec::new();
        for (i, p) in config.paths.iter().enumerate() {
            let index = u32::try_from(2 * i).map_err(|_| "too many paths".to_owned())?;
            let model = |c, idx| {
                LinkModel::new(c, config.seed, idx)
                    .map_err(|e| format!("--path #{} `{}`: {e}", i + 1, p.spec))
            };
            paths.push(PathState {
                up: model(&p.links.up, index)?,
                down: model(&p.links.down, index + 1)?,
                clients: 0,
            });
        }
        Ok(Self {
            config,
            listen_addr,
            start,
            paths,
            listen,
            relays: HashMap::new(),
            jitter: JitterHistogram::default(),
            tally,
            send_errors: 0,
            out: Vec::new(),
        })
    }

    fn nanos(&self, t: Instant) -> SimTime {
        u64::try_from(t.saturating_duration_since(self.start).as_nanos()).unwrap_or(u64::MAX)
    }

    /// Runs until told to stop (or every sender is gone); returns the final report.
    pub(crate) fn run(mut self, rx: Receiver<Msg>) -> Report {
        loop {
            let wait = self.next_deadline().map_or(IDLE_WAIT, |d| {
                d.saturating_duration_since(Instant::now()).min(IDLE_WAIT)
            });
            let first = match rx.recv_timeout(wait) {
                Ok(msg) => Some(msg),
                Err(RecvTimeoutError::Timeout) => None,
                Err(RecvTimeoutError::Disconnected) => break,
            };
            // Everything already queued is handled before releasing, so
            // arrivals enter their links in the order they were stamped.
            let mut stop = false;
            for msg in first
                .into_iter()
                .chain(std::iter::from_fn(|| rx.try_recv().ok()))
            {
                if !self.handle(msg) {
                    stop = true;
                    break;
                }
            }
            self.release_due();
            if stop {
                break;
            }
        }
        self.report()
    }

    /// Earliest event of any link.
    fn next_deadline(&self) -> Option<Instant> {
        let next = self
            .paths
            .iter()
            .flat_map(|p| [p.up.next_event_time(), p.down.next_event_time()])
            .flatten()
            .min()?;
        // A link may schedule centuries ahead (`delay=1e9s`): no deadline then.
        self.start.checked_add(Duration::from_nanos(next))
    }

    /// Handles one message; false to stop.
    fn handle(&mut self, msg: Msg) -> bool {
        match msg {
            Msg::Datagram {
                at,
                path,
                dir,
                client,
                payload,
            } => self.arrive(at, path, dir, client, payload),
            Msg::Relay {
                path,
                client,
                socket,
            } => {
                if let Some(p) = self.paths.get_mut(path) {
                    p.clients += 1;
                }
                self.relays.insert(client, socket);
            }
            Msg::Report(reply) => {
                let _ = reply.send(self.report());
            }
            Msg::Stop => return false,
        }
        true
    }

    fn arrive(&mut self, at: Instant, path: usize, dir: Dir, client: SocketAddr, payload: Vec<u8>) {
        let at = self.nanos(at);
        let server = self.config.server;
        let Some(p) = self.paths.get_mut(path) else {
            return;
        };
        let mut out = std::mem::take(&mut self.out);
        // A drop is counted by the link itself (its ground truth).
        let _ = match dir {
            Dir::Up => {
                p.up.send(at, Datagram::new(client, server, payload), &mut out)
            }
            Dir::Down => p
                .down
                .send(at, Datagram::new(server, client, payload), &mut out),
        };
        self.dispatch(dir, &mut out);
        self.out = out;
    }

    /// Advances every link to now and sends what they release.
    fn release_due(&mut self) {
        let now = self.nanos(Instant::now());
        let mut out = std::mem::take(&mut self.out);
        for i in 0..self.paths.len() {
            self.paths[i].up.advance(now, &mut out);
            self.dispatch(Dir::Up, &mut out);
            self.paths[i].down.advance(now, &mut out);
            self.dispatch(Dir::Down, &mut out);
        }
        self.out = out;
    }

    /// Sends released datagrams on, recording how late each one leaves.
    fn dispatch(&mut self, dir: Dir, out: &mut Vec<Delivery>) {
        for d in out.drain(..) {
            let sent = match dir {
                Dir::Up => match self.relays.get(&d.datagram.src) {
                    Some(relay) => relay.send(&d.datagram.payload).is_ok(),
                    None => false,
                },
                Dir::Down => self
                    .listen
                    .send_to(&d.datagram.payload, d.datagram.dst)
                    .is_ok(),
            };
            let late = self.nanos(Instant::now()).saturating_sub(d.at);
            self.jitter.record(late);
            if !sent {
                self.send_errors += 1;
            }
        }
    }

    fn report(&self) -> Report {
        let counter = |packets: &std::sync::atomic::AtomicU64,
                       bytes: &std::sync::atomic::AtomicU64| Counter {
            packets: packets.load(Ordering::Relaxed),
            bytes: bytes.load(Ordering::Relaxed),
        };
        let t = &self.tally;
        Report {
            listen: self.listen_addr,
            server: self.config.server,
            seed: self.config.seed,
            elapsed_s: self.start.elapsed().as_secs_f64(),
            jitter: self.jitter.stats(),
            paths: self
                .paths
                .iter()
                .zip(&self.config.paths)
                .enumerate()
                .map(|(i, (s, c))| PathReport {
                    index: i,
                    from: c.from,
                    spec: c.spec.clone(),
                    clients: s.clients,
                    up: DirectionReport::of(&s.up, 2 * i),
                    down: DirectionReport::of(&s.down, 2 * i + 1),
                })
                .collect(),
            unmatched: counter(&t.unmatched_packets, &t.unmatched_bytes),
            refused_clients: counter(&t.refused_packets, &t.refused_bytes),
            send_errors: self.send_errors + t.relay_errors.load(Ordering::Relaxed),
        }
    }
}
