//! How fast the emulator relays on this machine: N client sockets (127.0.0.2, 127.0.0.3, ...)
//! each offer RATE Mbit/s of 1200-byte datagrams for SECONDS to a sink on 127.0.0.1 through N
//! emulated paths of RATE Mbit/s (5 ms one-way, 1 BDP queue); with `echo` the sink sends every
//! datagram back, so each path carries RATE in both directions.
//!
//! ```text
//! cargo run --release -p mpquic-emulate --example sustain -- [PATHS] [RATE_MBIT] [SECONDS] [echo]
//! ```
//!
//! Prints, per path, the rate the sink received over the steady part of the run (the first and
//! last 10% left out), the emulator's drops, and the release jitter.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use mpquic_emulate::{EmulatedPath, Emulator, EmulatorConfig};

const SIZE: usize = 1200;

fn arg<T: std::str::FromStr>(i: usize, default: T) -> T {
    std::env::args()
        .nth(i)
        .and_then(|a| a.parse().ok())
        .unwrap_or(default)
}

/// Received bytes per path, counted only inside the measurement window.
struct Sink {
    bytes: Vec<AtomicU64>,
    measuring: AtomicBool,
}

fn sink(socket: UdpSocket, sink: Arc<Sink>, echo: bool, stop: Arc<AtomicBool>) {
    socket
        .set_read_timeout(Some(Duration::from_millis(50)))
        .expect("timeout");
    let mut buf = vec![0u8; 65_535];
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, from)) = socket.recv_from(&mut buf) else {
            continue;
        };
        let path = usize::from(buf[0]);
        if sink.measuring.load(Ordering::Relaxed) {
            if let Some(b) = sink.bytes.get(path) {
                b.fetch_add(n as u64, Ordering::Relaxed);
            }
        }
        if echo {
            let _ = socket.send_to(&buf[..n], from);
        }
    }
}

/// Paced sender: a burst every millisecond, absolute deadlines.
fn send(path: u8, to: SocketAddr, rate_bps: f64, seconds: f64, stop: Arc<AtomicBool>) {
    let socket = big_socket(&format!("127.0.0.{}:0", 2 + path));
    let drain = socket.try_clone().expect("clone");
    let flag = stop.clone();
    // Replies (with echo) must be read, or the client's socket buffer fills.
    std::thread::spawn(move || {
        drain
            .set_read_timeout(Some(Duration::from_millis(50)))
            .expect("timeout");
        let mut buf = vec![0u8; 65_535];
        while !flag.load(Ordering::Relaxed) {
            let _ = drain.recv(&mut buf);
        }
    });
    let mut packet = vec![0u8; SIZE];
    packet[0] = path;
    let per_ms = rate_bps / 8.0 / SIZE as f64 / 1000.0;
    let start = Instant::now();
    let mut sent = 0.0;
    let mut tick = 0u32;
    while start.elapsed().as_secs_f64() < seconds {
        tick += 1;
        let due = start + Duration::from_millis(u64::from(tick));
        if let Some(w) = due.checked_duration_since(Instant::now()) {
            std::thread::sleep(w);
        }
        let target = per_ms * f64::from(tick);
        while sent < target {
            let _ = socket.send_to(&packet, to);
            sent += 1.0;
        }
    }
}

fn main() {
    let paths: u8 = arg(1, 2);
    let rate: f64 = arg(2, 100.0);
    let seconds: f64 = arg(3, 10.0);
    let echo = std::env::args().nth(4).is_some_and(|a| a == "echo");
    let server = big_socket("127.0.0.1:0");
    let server_addr = server.local_addr().expect("addr");
    let specs: Vec<String> = (0..paths)
        .map(|i| format!("from=127.0.0.{},rate={rate}mbit,delay=5ms", 2 + i))
        .collect();
    let emulator = Emulator::start(EmulatorConfig {
        listen: "127.0.0.1:0".parse().expect("addr"),
        server: server_addr,
        paths: specs
            .iter()
            .enumerate()
            .map(|(i, s)| EmulatedPath::parse(s, i + 1).expect("spec"))
            .collect(),
        seed: 1,
    })
    .expect("emulator");
    let listen = emulator.listen_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let counts = Arc::new(Sink {
        bytes: (0..paths).map(|_| AtomicU64::new(0)).collect(),
        measuring: AtomicBool::new(false),
    });
    let (c, s) = (counts.clone(), stop.clone());
    let sink_thread = std::thread::spawn(move || sink(server, c, echo, s));
    let senders: Vec<_> = (0..paths)
        .map(|p| {
            let s = stop.clone();
            std::thread::spawn(move || send(p, listen, rate * 1e6, seconds, s))
        })
        .collect();
    let window = Duration::from_secs_f64(seconds * 0.8);
    std::thread::sleep(Duration::from_secs_f64(seconds * 0.1));
    counts.measuring.store(true, Ordering::Relaxed);
    let cpu0 = cpu_seconds();
    let t0 = Instant::now();
    std::thread::sleep(window);
    counts.measuring.store(false, Ordering::Relaxed);
    let (elapsed, cpu) = (t0.elapsed().as_secs_f64(), cpu_seconds() - cpu0);
    for t in senders {
        let _ = t.join();
    }
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Relaxed);
    let _ = sink_thread.join();
    let report = emulator.stop().expect("report");
    println!("{report}");
    for (i, b) in counts.bytes.iter().enumerate() {
        let mbps = b.load(Ordering::Relaxed) as f64 * 8.0 / elapsed / 1e6;
        println!("path {i}: sink received {mbps:.2} Mbit/s of {rate} offered");
    }
    println!(
        "process CPU over the window: {:.0}% of one core (senders, sink and emulator together)",
        cpu / elapsed * 100.0
    );
}

/// A UDP socket with 4 MiB buffers (the sink must not drop what the emulator forwards).
fn big_socket(addr: &str) -> UdpSocket {
    let addr: SocketAddr = addr.parse().expect("addr");
    let s =
        socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).expect("socket");
    let _ = s.set_recv_buffer_size(4 << 20);
    let _ = s.set_send_buffer_size(4 << 20);
    s.bind(&addr.into()).expect("bind");
    s.into()
}

/// User + system CPU time of this process (Linux /proc; 0 elsewhere).
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may contain spaces) start after the last ')'.
    let rest = stat.rsplit(')').next().unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = [11, 12]
        .iter()
        .filter_map(|&i| f.get(i).and_then(|v| v.parse::<f64>().ok()))
        .sum();
    ticks / 100.0
}
