//! The socket threads: one receives on the listen socket, one per relay
//! socket receives the server's replies. They only stamp each datagram with
//! its arrival time and pass it to the timer thread, so a slow release
//! never delays a receive.
//!
//! A relay socket belongs to one client address (and therefore one path):
//! it is connected to the server, so the server sees one 4-tuple per client
//! path, and the kernel only lets the server's datagrams through, as a NAT
//! with endpoint-dependent filtering would.

use std::collections::HashSet;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::config::{EmulateError, EmulatorConfig};
use crate::engine::{Dir, Msg};

/// Socket buffer size asked for (the kernel grants at most
/// `net.core.rmem_max`/`wmem_max`): bursts of a fast sender (GSO batches)
/// must not overflow a socket before its thread reads them.
const SOCKET_BUFFER: usize = 4 << 20;

/// How often a blocked receive checks whether the emulator is stopping.
const POLL: Duration = Duration::from_millis(50);

/// Client addresses one emulator relays for at most (each costs a socket
/// and a thread; beyond it new sources are refused and counted).
pub const MAX_CLIENTS: usize = 256;

/// Largest UDP payload.
const MAX_DATAGRAM: usize = 65_535;

/// Counters kept by the socket threads.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) unmatched_packets: AtomicU64,
    pub(crate) unmatched_bytes: AtomicU64,
    pub(crate) refused_packets: AtomicU64,
    pub(crate) refused_bytes: AtomicU64,
    /// Relay sockets that could not be created.
    pub(crate) relay_errors: AtomicU64,
}

fn count(packets: &AtomicU64, bytes: &AtomicU64, n: usize) {
    packets.fetch_add(1, Ordering::Relaxed);
    bytes.fetch_add(n as u64, Ordering::Relaxed);
}

/// A UDP socket bound to `addr` with large buffers and a receive timeout.
pub(crate) fn bind(addr: SocketAddr, what: &'static str) -> Result<UdpSocket, EmulateError> {
    let fail = |source| EmulateError::Bind { what, addr, source };
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )
    .map_err(fail)?;
    // Best effort: a smaller buffer only costs drops under bursts.
    let _ = socket.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = socket.set_send_buffer_size(SOCKET_BUFFER);
    socket.bind(&addr.into()).map_err(fail)?;
    socket.set_read_timeout(Some(POLL)).map_err(fail)?;
    Ok(socket.into())
}

/// Whether a receive error only means "nothing yet" or a transient ICMP
/// report (a connected socket learns of an unreachable server this way).
fn transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock
            | io::ErrorKind::TimedOut
            | io::ErrorKind::Interrupted
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
    )
}

/// What the listen thread needs.
pub(crate) struct Listener {
    pub(crate) config: EmulatorConfig,
    pub(crate) socket: Arc<UdpSocket>,
    pub(crate) tx: Sender<Msg>,
    pub(crate) stop: Arc<AtomicBool>,
    pub(crate) tally: Arc<Tally>,
}

impl Listener {
    /// Receives client datagrams until stopped, then waits for the relay threads.
    pub(crate) fn run(self) {
        let mut buf = vec![0u8; MAX_DATAGRAM];
        let mut clients = HashSet::new();
        let mut threads: Vec<JoinHandle<()>> = Vec::new();
        while !self.stop.load(Ordering::Relaxed) {
            let (n, client) = match self.socket.recv_from(&mut buf) {
                Ok(r) => r,
                Err(e) if transient(&e) => continue,
                Err(_) => {
                    // Unexpected: do not spin on a persistent error.
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
            };
            let at = Instant::now();
            let Some(path) = self.config.path_of(client.ip()) else {
                let t = &self.tally;
                count(&t.unmatched_packets, &t.unmatched_bytes, n);
                continue;
            };
            if !clients.contains(&client) {
                if clients.len() >= MAX_CLIENTS {
                    let t = &self.tally;
                    count(&t.refused_packets, &t.refused_bytes, n);
                    continue;
                }
                match self.new_relay(path, client) {
                    Some(handle) => threads.push(handle),
                    None => continue,
                }
                clients.insert(client);
            }
            let msg = Msg::Datagram {
                at,
                path,
                dir: Dir::Up,
                client,
                payload: buf[..n].to_vec(),
            };
            if self.tx.send(msg).is_err() {
                break;
            }
        }
        for t in threads {
            let _ = t.join();
        }
    }

    /// Opens the relay socket of a new client and starts its thread.
    fn new_relay(&self, path: usize, client: SocketAddr) -> Option<JoinHandle<()>> {
        let server = self.config.server;
        let any = match server.ip() {
            IpAddr::V4(_) => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            IpAddr::V6(_) => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
        };
        let socket = bind(SocketAddr::new(any, 0), "relay from")
            .ok()
            .filter(|s| s.connect(server).is_ok())
            .map(Arc::new);
        let Some(socket) = socket else {
            self.tally.relay_errors.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        let relay = Relay {
            socket: socket.clone(),
            path,
            client,
            tx: self.tx.clone(),
            stop: self.stop.clone(),
        };
        let handle = std::thread::Builder::new()
            .name(format!("emulate-relay-{client}"))
            .spawn(move || relay.run())
            .ok();
        if handle.is_none() {
            self.tally.relay_errors.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        let _ = self.tx.send(Msg::Relay {
            path,
            client,
            socket,
        });
        handle
    }
}

/// The receiving side of one relay socket.
struct Relay {
    socket: Arc<UdpSocket>,
    path: usize,
    client: SocketAddr,
    tx: Sender<Msg>,
    stop: Arc<AtomicBool>,
}

impl Relay {
    fn run(self) {
        let mut buf = vec![0u8; MAX_DATAGRAM];
        while !self.stop.load(Ordering::Relaxed) {
            let n = match self.socket.recv(&mut buf) {
                Ok(n) => n,
                Err(e) if transient(&e) => continue,
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(1));
                    continue;
                }
            };
            let msg = Msg::Datagram {
                at: Instant::now(),
                path: self.path,
                dir: Dir::Down,
                client: self.client,
                payload: buf[..n].to_vec(),
            };
            if self.tx.send(msg).is_err() {
                break;
            }
        }
    }
}
