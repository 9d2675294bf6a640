//! The driver task of an endpoint: the only place that touches the sockets.
//!
//! Each round it reads every datagram waiting on every socket (non-blocking), hands them to the
//! core, runs expired timers, collects what the core wants to send and the application's tasks
//! [`State::process`] wakes, sends the datagrams on the socket bound to their local address, and
//! then wakes those tasks (`wakeups`: not while holding the lock, not before the datagrams).
//! When there is nothing left to do it sleeps until a socket is readable, the core's next timer
//! fires or an application call wakes it.
//!
//! Socket I/O goes through `quinn-udp`: runs of equal-sized datagrams to one address leave in a
//! single GSO send, and receives use recvmmsg and GRO where the system has them (plain
//! sendmsg/recvmsg otherwise). One copy per received datagram hands the core a `BytesMut`.

use std::future::poll_fn;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Poll, Waker};

use bytes::BytesMut;
use mpquic_proto::{EcnCodepoint, Transmit};
use quinn_udp::{RecvMeta, UdpSocketState};
use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::time::Instant;

use crate::connection::ConnectionError;
use crate::state::Shared;
use crate::wakeups::Deferral;

/// Largest UDP payload.
const MAX_DATAGRAM: usize = 65_535;
/// Receive calls per socket per round before the core gets to send.
const RECV_CALLS: usize = 16;
/// Buffers (messages) per receive call (recvmmsg).
const RECV_SLOTS: usize = 8;
/// Datagrams taken from the core per round before sockets are read again.
const SEND_BATCH: usize = 64;
/// Bytes taken from the core per round: a batch of large datagrams (a same-host path's, up to
/// 64 kB each) stops here rather than at [`SEND_BATCH`], so the batch buffer stays about a
/// megabyte. A full batch of 16 kB datagrams fits: a 256 kB bound made a 200 MB loopback
/// download 10% slower (more rounds, each taking the lock and the sockets again).
const SEND_BATCH_BYTES: usize = 1024 * 1024;
/// Most datagrams in one segmentation-offload (GSO) send.
const MAX_SEGMENTS: usize = 32;
/// Most bytes in one GSO send (the UDP length field is 16 bits).
const MAX_SEGMENTED_BYTES: usize = 64_000;
/// Consecutive receive errors (other than "would block") after which the endpoint fails.
const MAX_RECV_ERRORS: u32 = 128;
/// Floor of the sleep when the core reports a timer that is already due after handling it.
const STUCK_TIMER_DELAY: std::time::Duration = std::time::Duration::from_millis(1);

/// A bound socket, its local address and its batched-I/O state (GSO/GRO support).
#[derive(Debug)]
pub(crate) struct BoundSocket {
    pub local: SocketAddr,
    pub socket: UdpSocket,
    pub state: UdpSocketState,
}

impl BoundSocket {
    /// Wrap a non-blocking std socket (within a tokio runtime).
    pub(crate) fn new(socket: std::net::UdpSocket) -> io::Result<Self> {
        let state = UdpSocketState::new((&socket).into())?;
        let local = socket.local_addr()?;
        Ok(Self {
            local,
            socket: UdpSocket::from_std(socket)?,
            state,
        })
    }

    /// Size of one receive buffer: room for a full GRO batch of the largest datagrams.
    fn slot_size(&self) -> usize {
        (2048 * self.state.gro_segments()).max(MAX_DATAGRAM)
    }
}

/// What the sockets allow path MTU discovery (RFC 9000 §14.3): quinn-udp sets the
/// don't-fragment behaviour on each socket (IP_PMTUDISC_PROBE / IPV6_DONTFRAG on Linux) and
/// reports where it could not (`may_fragment`); discovery is then off (fragmented probes would
/// pass, RFC 8899 §3), as quinn does. The largest datagram the driver sends and receives is
/// the largest IPv4 UDP payload (a 16-bit IP length less the IPv4 and UDP headers); each
/// path's search finds what its route carries below that and the configured ceiling.
pub(crate) fn socket_mtu(sockets: &[BoundSocket]) -> mpquic_proto::SocketMtu {
    mpquic_proto::SocketMtu {
        dont_fragment: sockets.iter().all(|s| !s.state.may_fragment()),
        max_udp_payload: MAX_UDP_PAYLOAD,
    }
}

/// Largest IPv4 UDP payload: 65535 less 20 bytes of IPv4 and 8 of UDP header.
const MAX_UDP_PAYLOAD: u16 = 65_507;

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
    /// Receive buffers: [`RECV_SLOTS`] slots per socket.
    rx_bufs: Vec<Vec<u8>>,
    /// Received datagrams: local and remote address, ECN codepoint, contents.
    received: Vec<(SocketAddr, SocketAddr, Option<EcnCodepoint>, BytesMut)>,
    /// Datagrams to send, their bytes back to back in `tx_data`.
    outgoing: Vec<Transmit>,
    tx_data: Vec<u8>,
    scratch: Vec<u8>,
    recv_errors: u32,
    stuck_rounds: u32,
    /// Wake-ups of the last round, made after its datagrams are sent.
    woken: Vec<Waker>,
}

impl Driver {
    fn new(shared: Arc<Shared>, sockets: Vec<BoundSocket>) -> Self {
        let rx_bufs = sockets
            .iter()
            .map(|s| vec![0; s.slot_size() * RECV_SLOTS])
            .collect();
        Self {
            shared,
            sockets,
            rx_bufs,
            received: Vec::new(),
            outgoing: Vec::with_capacity(SEND_BATCH),
            tx_data: Vec::with_capacity(SEND_BATCH * 1500),
            scratch: Vec::with_capacity(1500),
            recv_errors: 0,
            stuck_rounds: 0,
            woken: Vec::new(),
        }
    }

    async fn run(mut self) -> io::Result<()> {
        loop {
            let more_input = self.receive()?;
            let round = self.round();
            self.send().await;
            // The application's tasks, once the round's datagrams are out (`wakeups`).
            self.woken.drain(..).for_each(Waker::wake);
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
        for (s, buf) in self.sockets.iter().zip(self.rx_bufs.iter_mut()) {
            let slot = s.slot_size();
            let mut calls = 0;
            // Whether the socket said it had nothing more: the last allowed call may say so too.
            let mut drained = false;
            while calls < RECV_CALLS {
                calls += 1;
                let mut meta = [RecvMeta::default(); RECV_SLOTS];
                let mut iovs: Vec<IoSliceMut<'_>> =
                    buf.chunks_mut(slot).map(IoSliceMut::new).collect();
                match s.socket.try_io(Interest::READABLE, || {
                    s.state.recv((&s.socket).into(), &mut iovs, &mut meta)
                }) {
                    Ok(n) => {
                        self.recv_errors = 0;
                        for (m, data) in meta.iter().zip(iovs.iter()).take(n) {
                            // With GRO one buffer holds several datagrams, `stride` bytes apart.
                            for datagram in data[..m.len].chunks(m.stride.max(1)) {
                                // RFC 9000 §13.4.1: the codepoint goes to the core.
                                let ecn = m.ecn.and_then(|e| EcnCodepoint::from_bits(e as u8));
                                self.received.push((
                                    s.local,
                                    m.addr,
                                    ecn,
                                    BytesMut::from(datagram),
                                ));
                            }
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        drained = true;
                        break;
                    }
                    Err(e) => {
                        // ICMP errors (connection refused, unreachable) surface here on some
                        // systems; they are about one datagram, not the socket.
                        tracing::debug!("recv on {}: {e}", s.local);
                        self.recv_errors += 1;
                        if self.recv_errors >= MAX_RECV_ERRORS {
                            return Err(e);
                        }
                    }
                }
            }
            more |= !drained;
        }
        Ok(more)
    }

    /// Feed the core, run timers, collect datagrams to send and the tasks to wake (woken after
    /// the send, `wakeups`), under the lock.
    fn round(&mut self) -> Round {
        let deferral = Deferral::start(std::mem::take(&mut self.woken));
        let shared = self.shared.clone();
        let mut st = shared.lock();
        let now = shared.now();
        for (local, remote, ecn, data) in self.received.drain(..) {
            tracing::trace!(len = data.len(), %local, %remote, ?ecn, "recv");
            if let Some(h) = st.proto.handle_datagram_ecn(now, local, remote, ecn, data) {
                if let Some(cs) = st.conns.get_mut(&h) {
                    cs.on_datagram();
                }
            }
        }
        if st.proto.next_timeout().is_some_and(|t| t <= now) {
            st.proto.handle_timeout(now);
        }
        // Before sending: an attempt accepted here answers in this round.
        st.take_attempts(now);
        while self.outgoing.len() < SEND_BATCH && self.tx_data.len() < SEND_BATCH_BYTES {
            let Some(t) = st.proto.poll_transmit(now, &mut self.scratch) else {
                break;
            };
            tracing::trace!(len = t.size, local = %t.local, remote = %t.remote, "send");
            self.tx_data.extend_from_slice(&self.scratch[..t.size]);
            self.outgoing.push(t);
        }
        st.process();
        let more = self.outgoing.len() == SEND_BATCH || self.tx_data.len() >= SEND_BATCH_BYTES;
        let timeout = st.proto.next_timeout();
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
        self.woken = deferral.finish();
        Round {
            deadline,
            more,
            exit,
        }
    }

    /// Send the collected datagrams, runs of equal-sized datagrams to the same address in one
    /// segmentation-offload call. A datagram that cannot be sent (no socket for its local
    /// address, or a send error) is dropped: the core treats it as lost.
    async fn send(&mut self) {
        let mut start = 0;
        let mut offset = 0;
        while start < self.outgoing.len() {
            let first = self.outgoing[start];
            let Some(s) = self.socket_for(&first) else {
                tracing::debug!("no socket bound to {} (to {})", first.local, first.remote);
                offset += first.size;
                start += 1;
                continue;
            };
            let end = self.segment_run(start, s.state.max_gso_segments());
            let len: usize = self.outgoing[start..end].iter().map(|t| t.size).sum();
            let transmit = quinn_udp::Transmit {
                destination: first.remote,
                // RFC 9000 §13.4.2: the core's choice; quinn-udp sets the socket options.
                ecn: first
                    .ecn
                    .and_then(|e| quinn_udp::EcnCodepoint::from_bits(e.bits())),
                contents: &self.tx_data[offset..offset + len],
                segment_size: (end - start > 1).then_some(first.size),
                src_ip: None,
            };
            loop {
                match s.socket.try_io(Interest::WRITABLE, || {
                    s.state.send((&s.socket).into(), &transmit)
                }) {
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        if let Err(e) = s.socket.writable().await {
                            tracing::debug!("send from {}: {e}", s.local);
                            break;
                        }
                    }
                    Err(e) => {
                        tracing::debug!("send from {} to {}: {e}", s.local, first.remote);
                        break;
                    }
                    Ok(()) => break,
                }
            }
            offset += len;
            start = end;
        }
        self.outgoing.clear();
        self.tx_data.clear();
    }

    /// The socket a datagram leaves from: the one bound to its local address, or else the
    /// first of the remote's address family.
    fn socket_for(&self, t: &Transmit) -> Option<&BoundSocket> {
        self.sockets
            .iter()
            .find(|s| s.local == t.local)
            .or_else(|| {
                self.sockets
                    .iter()
                    .find(|s| s.local.is_ipv4() == t.remote.is_ipv4())
            })
    }

    /// End of the run of datagrams from `start` that can go in one GSO send: same addresses,
    /// the same size except a smaller last one, within the segment and byte limits.
    fn segment_run(&self, start: usize, max_segments: usize) -> usize {
        let first = self.outgoing[start];
        let limit = max_segments
            .clamp(1, MAX_SEGMENTS)
            .min(MAX_SEGMENTED_BYTES / first.size.max(1))
            .max(1);
        let mut end = start + 1;
        while end < self.outgoing.len() && end - start < limit {
            let t = self.outgoing[end];
            if t.local != first.local
                || t.remote != first.remote
                || t.ecn != first.ecn
                || t.size > first.size
            {
                break;
            }
            end += 1;
            if t.size < first.size {
                break;
            }
        }
        end
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
