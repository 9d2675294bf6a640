//! Heap bytes an idle server connection holds: `cargo run --release -p mpquic-proto --example
//! conn_memory [N] [single|spns|mpns|auto] [PATHS]`. Establishes N connections between two
//! in-memory endpoints (with `PATHS` = 2, each client then opens and validates a second path
//! from another address), drops the client endpoint, and divides the server's live heap (counted
//! by a wrapping allocator) by N.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::BytesMut;
use mpquic_proto::crypto::testing::test_tls_configs;
use mpquic_proto::{
    ClientConfig, Endpoint, EndpointConfig, ServerConfig, Timestamp, TransportConfig,
};
use rand_chacha::ChaCha20Rng;
use rand_core::SeedableRng;

struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(new_size, Ordering::Relaxed);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Move datagrams between the endpoints until neither has anything to send now.
fn exchange(now: Timestamp, client: &mut Endpoint, server: &mut Endpoint, buf: &mut Vec<u8>) {
    loop {
        let mut moved = false;
        while let Some(t) = client.poll_transmit(now, buf) {
            server.handle_datagram(now, t.remote, t.local, BytesMut::from(&buf[..t.size]));
            moved = true;
        }
        while let Some(t) = server.poll_transmit(now, buf) {
            client.handle_datagram(now, t.remote, t.local, BytesMut::from(&buf[..t.size]));
            moved = true;
        }
        if !moved {
            return;
        }
    }
}

/// Let ACKs, HANDSHAKE_DONE, NEW_TOKEN and path validation settle: 1.5 s of timers.
fn settle(now: &mut Timestamp, client: &mut Endpoint, server: &mut Endpoint, buf: &mut Vec<u8>) {
    for _ in 0..50 {
        *now += std::time::Duration::from_millis(30);
        client.handle_timeout(*now);
        server.handle_timeout(*now);
        exchange(*now, client, server, buf);
    }
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(500);
    let (client_tls, server_tls) = test_tls_configs(&[b"mem"]);
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let multipath = std::env::args()
        .nth(2)
        .map_or(Ok(mpquic_proto::MultipathMode::Auto), |m| m.parse())
        .expect("multipath mode");
    let paths: usize = std::env::args()
        .nth(3)
        .map_or(Ok(1), |p| p.parse())
        .expect("path count");
    let transport = Arc::new(TransportConfig::default().multipath(multipath));
    let mut server_config = ServerConfig::new(server_tls, transport.clone(), &mut rng);
    server_config.max_connections = n + 1;
    server_config.max_handshakes = n + 1;
    let client_config = ClientConfig::new(client_tls, transport);
    let server_addr = "10.0.0.1:443".parse().expect("addr");
    let before = LIVE.load(Ordering::Relaxed);
    let mut server = Endpoint::new(
        Arc::new(EndpointConfig::new(&mut rng)),
        Some(Arc::new(server_config)),
        [1; 32],
    );
    let mut client = Endpoint::new(Arc::new(EndpointConfig::new(&mut rng)), None, [2; 32]);
    let mut buf = Vec::with_capacity(1500);
    let mut now = Timestamp::from_nanos(1_000_000);
    for i in 0..n {
        let local = format!("10.1.{}.{}:4433", i / 250, i % 250 + 1)
            .parse()
            .expect("addr");
        client
            .connect(now, &client_config, local, server_addr, "localhost")
            .expect("connect");
        exchange(now, &mut client, &mut server, &mut buf);
        now += std::time::Duration::from_millis(1);
    }
    settle(&mut now, &mut client, &mut server, &mut buf);
    if paths > 1 {
        for (i, h) in client.handles().into_iter().enumerate() {
            let local = format!("10.2.{}.{}:4433", i / 250, i % 250 + 1)
                .parse()
                .expect("addr");
            if let Some(conn) = client.connection_mut(h) {
                conn.open_path(now, local, server_addr)
                    .expect("second path");
            }
            client.after_connection_call(h);
        }
        exchange(now, &mut client, &mut server, &mut buf);
        settle(&mut now, &mut client, &mut server, &mut buf);
    }
    let paths_open: usize = server
        .handles()
        .iter()
        .filter_map(|h| server.connection(*h))
        .map(|c| c.path_stats().len())
        .sum();
    let established = server
        .handles()
        .iter()
        .filter(|h| server.connection(**h).is_some_and(|c| c.is_established()))
        .count();
    drop(client);
    drop(buf);
    let live = LIVE.load(Ordering::Relaxed) - before;
    println!(
        "{established} of {n} server connections established, {paths_open} paths; server heap {} kB, {} B per connection",
        live / 1000,
        live / n.max(1)
    );
    // Left allocated on purpose: under a heap profiler (`valgrind --tool=dhat`) the bytes still
    // allocated at exit are then the server's, by allocation site (docs/PERFORMANCE.md, "Memory
    // per idle connection"). The process ends here anyway.
    std::mem::forget(server);
}
