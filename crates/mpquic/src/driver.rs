//! The driver task of an endpoint: the only place that touches the sockets.
//!
//! Each round it reads every datagram waiting on every socket (non-blocking), hands them to the
//! core, runs expired timers, collects what the core wants to send, lets [`State::process`] wake
//! the application's tasks, and sends the datagrams on the socket bound to their local address.
//! When there is nothing left to do it sleeps until a socket is readable, the core's next timer
//! fires or an application call wakes it.

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::Poll;

use bytes::BytesMut;
use mpquic_proto::Transmit;
use tokio::net::UdpSocket;
use tokio::time::Instant;

use crate::connection::ConnectionError;
use crate::state::Shared;

/// Datagrams read from one socket per round before the core gets to send.
const RECV_BATCH: usize = 64;
/// Datagrams taken from the core per round before sockets are read again.
const SEND_BATCH: usize = 64;
/// Largest UDP payload.
const MAX_DATAGRAM: usize = 65_535;
/// Consecutive receive errors (other than "would block") after which the endpoint fails.
const MAX_RECV_ERRORS: u32 = 128;
/// Floor of the sleep when the core reports a timer that is already due after handling it.
const STUCK_TIMER_DELAY: std::time::Duration = std::time::Duration::from_millis(1);

/// A bound socket and its local address.
#[derive(Debug)]
pub(crate) struct BoundSocket {
    pub local: SocketAddr,
    pub socket: UdpSocket,
}

/// Start the driver task of `shared` and a supervisor that fails the endpoint's connections if
/// the driver stops (an I/O error, or a panic in the core) so that no application task hangs.
pub(crate) fn spawn(shared: Arc<Shared>, sockets: Vec<BoundSocket>) {
    let driver = Driver::new(shared.clone(), sockets);
    let task = tokio::spawn(driver.run());
    tokio::spawn(async move {
        let error = match task.await {
            Ok(Ok(())) => ConnectionError::EndpointStopped,
            Ok(Err(e)) => ConnectionError::EndpointFailed(format!("UDP socket error: {e}")),
            Err(e) if e.is_panic() => {
                ConnectionError::EndpointFailed("the endpoint's driver task panicked".into())
            }
            Err(_) => ConnectionError::EndpointStopped,
        };
        if let ConnectionError::EndpointFailed(msg) = &error {
            tracing::error!("mpquic endpoint failed: {msg}");
        }
        shared.lock().on_driver_stopped(error);
    });
}

/// What one round under the lock decided.
struct Round {
    deadline: Option<Instant>,
    more: bool,
    exit: bool,
}

struct Driver {
    shared: Arc<Shared>,
    sockets: Vec<BoundSocket>,
    rx_buf: Vec<u8>,
    received: Vec<(SocketAddr, SocketAddr, BytesMut)>,
    outgoing: Vec<(Transmit, Vec<u8>)>,
    spare: Vec<Vec<u8>>,
    recv_errors: u32,
    stuck_rounds: u32,
}

impl Driver {
    fn new(shared: Arc<Shared>, sockets: Vec<BoundSocket>) -> Self {
        Self {
            shared,
            sockets,
            rx_buf: vec![0; MAX_DATAGRAM],
            received: Vec::with_capacity(RECV_BATCH),
            outgoing: Vec::with_capacity(SEND_BATCH),
            spare: Vec::new(),
            recv_errors: 0,
            stuck_rounds: 0,
        }
    }

    async fn run(mut self) -> io::Result<()> {
        loop {
            let more_input = self.receive()?;
            let round = self.round();
            self.send().await;
            if round.exit {
                return Ok(());
            }
            if more_input || round.more {
                tokio::task::yield_now().await;
                continue;
            }
            self.wait(round.deadline).await;
        }
    }

    /// Read what is waiting on every socket. Returns whether a socket may have more.
    fn receive(&mut self) -> io::Result<bool> {
        let mut more = false;
        for s in &self.sockets {
            let mut n = 0;
            while n < RECV_BATCH {
                match s.socket.try_recv_from(&mut self.rx_buf) {
                    Ok((len, from)) => {
                        self.recv_errors = 0;
                        self.received
                            .push((s.local, from, BytesMut::from(&self.rx_buf[..len])));
                        n += 1;
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        // ICMP errors (connection refused, unreachable) surface here on some
                        // systems; they are about one datagram, not the socket.
                        tracing::debug!("recv on {}: {e}", s.local);
                        self.recv_errors += 1;
                        if self.recv_errors >= MAX_RECV_ERRORS {
                            return Err(e);
                        }
                        n += 1;
                    }
                }
            }
            more |= n == RECV_BATCH;
        }
        Ok(more)
    }

    /// Feed the core, run timers, collect datagrams to send and wake tasks, under the lock.
    fn round(&mut self) -> Round {
        let shared = self.shared.clone();
        let mut st = shared.lock();
        let now = shared.now();
        for (local, remote, data) in self.received.drain(..) {
            if let Some(h) = st.proto.handle_datagram(now, local, remote, data) {
                if let Some(cs) = st.conns.get_mut(&h) {
                    cs.on_datagram();
                }
            }
        }
        if st.proto.poll_timeout().is_some_and(|t| t <= now) {
            st.proto.handle_timeout(now);
        }
        while self.outgoing.len() < SEND_BATCH {
            let mut buf = self.spare.pop().unwrap_or_default();
            match st.proto.poll_transmit(now, &mut buf) {
                Some(t) => {
                    buf.truncate(t.size);
                    self.outgoing.push((t, buf));
                }
                None => {
                    self.spare.push(buf);
                    break;
                }
            }
        }
        st.process(now);
        let more = self.outgoing.len() == SEND_BATCH;
        let timeout = st.proto.poll_timeout();
        // A timer still due right after it was handled would make the loop spin: sleep a little.
        self.stuck_rounds = if timeout.is_some_and(|t| t <= now) && self.outgoing.is_empty() {
            self.stuck_rounds + 1
        } else {
            0
        };
        let deadline = timeout.map(|t| {
            let at = shared.instant(t);
            if self.stuck_rounds > 2 {
                at.max(Instant::now() + STUCK_TIMER_DELAY)
            } else {
                at
            }
        });
        let exit = st.endpoint_refs == 0 && st.is_idle();
        Round {
            deadline,
            more,
            exit,
        }
    }

    /// Send the collected datagrams. A datagram that cannot be sent (no socket for its local
    /// address, or a send error) is dropped: the core treats it as lost.
    async fn send(&mut self) {
        for (t, buf) in self.outgoing.drain(..) {
            let socket = self
                .sockets
                .iter()
                .find(|s| s.local == t.local)
                .or_else(|| {
                    self.sockets
                        .iter()
                        .find(|s| s.local.is_ipv4() == t.remote.is_ipv4())
                });
            match socket {
                Some(s) => {
                    let result = match s.socket.try_send_to(&buf, t.remote) {
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            s.socket.send_to(&buf, t.remote).await
                        }
                        other => other,
                    };
                    if let Err(e) = result {
                        tracing::debug!("send from {} to {}: {e}", s.local, t.remote);
                    }
                }
                None => tracing::debug!("no socket bound to {} (to {})", t.local, t.remote),
            }
            self.spare.push(buf);
        }
    }

    /// Sleep until a socket is readable, the deadline passes or the application wakes us.
    async fn wait(&self, deadline: Option<Instant>) {
        let sleep = async {
            match deadline {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let readable = poll_fn(|cx| {
            for s in &self.sockets {
                if s.socket.poll_recv_ready(cx).is_ready() {
                    return Poll::Ready(());
                }
            }
            Poll::Pending
        });
        tokio::select! {
            () = self.shared.driver_woken() => {}
            () = sleep => {}
            () = readable => {}
        }
    }
}
