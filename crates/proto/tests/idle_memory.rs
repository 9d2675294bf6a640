//! Heap held per idle server connection (issue 19, docs/PERFORMANCE.md "Memory per idle
//! connection"): the same measurement as `examples/conn_memory.rs` on 200 connections, with
//! an upper bound a little above what the core holds now (14.0 and 17.2 kB), so that memory
//! coming back (a B-tree leaf of unboxed paths alone is 15 kB) fails here. Alone in its test
//! binary: the counting allocator sees every allocation of the process.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::BytesMut;
use mpquic_proto::crypto::testing::test_tls_configs;
use mpquic_proto::{
    ClientConfig, Endpoint, EndpointConfig, MultipathMode, ServerConfig, Timestamp, TransportConfig,
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

const CONNECTIONS: usize = 200;

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

fn settle(now: &mut Timestamp, client: &mut Endpoint, server: &mut Endpoint, buf: &mut Vec<u8>) {
    for _ in 0..50 {
        *now += Duration::from_millis(30);
        client.handle_timeout(*now);
        server.handle_timeout(*now);
        exchange(*now, client, server, buf);
    }
}

/// Server heap per connection once `CONNECTIONS` connections are idle, each with `paths` paths.
fn bytes_per_idle_connection(paths: usize) -> usize {
    let (client_tls, server_tls) = test_tls_configs(&[b"mem"]);
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let transport = Arc::new(TransportConfig::default().multipath(MultipathMode::Mpns));
    let mut server_config = ServerConfig::new(server_tls, transport.clone(), &mut rng);
    server_config.max_connections = CONNECTIONS + 1;
    server_config.max_handshakes = CONNECTIONS + 1;
    let client_config = ClientConfig::new(client_tls, transport);
    let server_addr = "10.0.0.1:443".parse().unwrap();
    let before = LIVE.load(Ordering::Relaxed);
    let mut server = Endpoint::new(
        Arc::new(EndpointConfig::new(&mut rng)),
        Some(Arc::new(server_config)),
        [1; 32],
    );
    let mut client = Endpoint::new(Arc::new(EndpointConfig::new(&mut rng)), None, [2; 32]);
    let mut buf = Vec::with_capacity(1500);
    let mut now = Timestamp::from_nanos(1_000_000);
    for i in 0..CONNECTIONS {
        let local = format!("10.1.{}.{}:4433", i / 250, i % 250 + 1)
            .parse()
            .unwrap();
        client
            .connect(now, &client_config, local, server_addr, "localhost")
            .unwrap();
        exchange(now, &mut client, &mut server, &mut buf);
        now += Duration::from_millis(1);
    }
    settle(&mut now, &mut client, &mut server, &mut buf);
    for (i, h) in client.handles().into_iter().enumerate().take(CONNECTIONS) {
        if paths < 2 {
            break;
        }
        let local = format!("10.2.{}.{}:4433", i / 250, i % 250 + 1)
            .parse()
            .unwrap();
        client
            .connection_mut(h)
            .unwrap()
            .open_path(now, local, server_addr)
            .unwrap();
        client.after_connection_call(h);
    }
    exchange(now, &mut client, &mut server, &mut buf);
    settle(&mut now, &mut client, &mut server, &mut buf);
    let open: Vec<usize> = server
        .handles()
        .iter()
        .filter_map(|h| server.connection(*h))
        .filter(|c| c.is_established())
        .map(|c| c.path_stats().len())
        .collect();
    assert_eq!(open.len(), CONNECTIONS, "established connections");
    assert!(open.iter().all(|n| *n == paths), "paths per connection");
    drop(client);
    drop(buf);
    let live = LIVE.load(Ordering::Relaxed) - before;
    drop(server);
    live / CONNECTIONS
}

#[test]
fn idle_connections_stay_small() {
    let one = bytes_per_idle_connection(1);
    let two = bytes_per_idle_connection(2);
    println!("bytes per idle connection: {one} with one path, {two} with two");
    assert!(
        one < 15_500,
        "{one} bytes per idle connection with one path"
    );
    assert!(
        two < 19_000,
        "{two} bytes per idle connection with two paths"
    );
    assert!(two > one, "a second path costs something: {one} vs {two}");
}
