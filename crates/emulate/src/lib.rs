//! `mpquic-emulate`: the simulator's link models in real time, as a
//! user-space UDP relay (no root, no kernel queueing disciplines).
//!
//! A client sends to the emulator's listen address. Each datagram takes
//! the path of its source IP (`from=IP` in the path's spec, e.g.
//! `from=127.0.0.2`: on Linux every address of 127.0.0.0/8 is loopback),
//! crosses that path's up link and is sent to the server from a relay
//! socket owned by the client address, so the server sees one 4-tuple per
//! client path, as behind a NAT. Replies cross the path's down link and
//! reach the client from the listen address.
//!
//! The links are [`mpquic_netsim::LinkModel`]s: the simulator's own link
//! engine (rate, one-way delay, drop-tail queue, Bernoulli and
//! Gilbert–Elliott loss, jitter and reordering, Mahimahi traces, scheduled
//! `down_at`/`up_at`), stepped by a dedicated timer thread in real time
//! instead of by the simulator's event loop; path specs use exactly the
//! grammar of `mpquic sim --path`. Threads: one receives on the listen
//! socket, one per relay socket receives the server's replies, and the
//! timer thread owns the models and sends every datagram when its link
//! releases it, recording how late it left (the release jitter of the
//! [`Report`]).
//!
//! ```no_run
//! use mpquic_emulate::{EmulatedPath, Emulator, EmulatorConfig};
//! let config = EmulatorConfig {
//!     listen: "127.0.0.1:0".parse().unwrap(),
//!     server: "127.0.0.1:4433".parse().unwrap(),
//!     paths: vec![
//!         EmulatedPath::parse("from=127.0.0.2,rate=20mbit,delay=10ms", 1).unwrap(),
//!         EmulatedPath::parse("from=127.0.0.3,rate=15mbit,delay=20ms", 2).unwrap(),
//!     ],
//!     seed: 1,
//! };
//! let emulator = Emulator::start(config).unwrap();
//! println!("clients send to {}", emulator.listen_addr());
//! // ... run a client from 127.0.0.2 and 127.0.0.3 ...
//! println!("{}", emulator.stop().unwrap());
//! ```

#![warn(unreachable_pub, missing_docs)]

mod config;
mod engine;
mod relay;
mod report;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

pub use config::{EmulateError, EmulatedPath, EmulatorConfig, DEFAULT_MTU};
pub use relay::MAX_CLIENTS;
pub use report::{DirectionReport, JitterStats, PathReport, Report};

use engine::{Engine, Msg};
use relay::{Listener, Tally};

/// A running emulator. Dropping it stops it; [`Emulator::stop`] also
/// returns the final report.
pub struct Emulator {
    listen: SocketAddr,
    stop: Arc<AtomicBool>,
    tx: mpsc::Sender<Msg>,
    timer: Option<JoinHandle<Report>>,
    listener: Option<JoinHandle<()>>,
}

impl Emulator {
    /// Binds the listen socket and starts the threads. The links' clocks
    /// (and their scheduled events such as `down_at=2s`) start now.
    pub fn start(config: EmulatorConfig) -> Result<Self, EmulateError> {
        config.validate()?;
        let socket = Arc::new(relay::bind(config.listen, "listen on")?);
        let listen = socket.local_addr().map_err(|source| EmulateError::Bind {
            what: "listen on",
            addr: config.listen,
            source,
        })?;
        let tally = Arc::new(Tally::default());
        let stop = Arc::new(AtomicBool::new(false));
        let engine = Engine::new(
            config.clone(),
            socket.clone(),
            listen,
            tally.clone(),
            Instant::now(),
        )
        .map_err(EmulateError::Config)?;
        let (tx, rx) = mpsc::channel();
        let timer = std::thread::Builder::new()
            .name("emulate-timer".to_owned())
            .spawn(move || engine.run(rx))
            .map_err(|e| EmulateError::Io(format!("starting the timer thread: {e}")))?;
        let listener = Listener {
            config,
            socket,
            tx: tx.clone(),
            stop: stop.clone(),
            tally,
        };
        let mut emulator = Self {
            listen,
            stop,
            tx,
            timer: Some(timer),
            listener: None,
        };
        let handle = std::thread::Builder::new()
            .name("emulate-listen".to_owned())
            .spawn(move || listener.run())
            .map_err(|e| EmulateError::Io(format!("starting the listen thread: {e}")))?;
        emulator.listener = Some(handle);
        Ok(emulator)
    }

    /// The address clients send to.
    pub fn listen_addr(&self) -> SocketAddr {
        self.listen
    }

    /// The counters so far (`None` if the timer thread has ended).
    pub fn report(&self) -> Option<Report> {
        let (reply, rx) = mpsc::channel();
        self.tx.send(Msg::Report(reply)).ok()?;
        rx.recv().ok()
    }

    /// Stops every thread and returns the final report (an error only if
    /// the timer thread died, which would be a bug).
    pub fn stop(mut self) -> Result<Report, EmulateError> {
        self.shutdown().ok_or_else(|| {
            EmulateError::Io("the emulator's timer thread ended unexpectedly".into())
        })
    }

    fn shutdown(&mut self) -> Option<Report> {
        self.stop.store(true, Ordering::Relaxed);
        let _ = self.tx.send(Msg::Stop);
        let report = self.timer.take().and_then(|t| t.join().ok());
        if let Some(l) = self.listener.take() {
            let _ = l.join();
        }
        report
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}
