//! Issue 13: packet numbers of one space sent on a fast and a slow path decode correctly at
//! the receiver (RFC 9000 §17.1, Appendix A), in SPNS and MPNS, with and without key updates
//! (RFC 9001 §6). A wrongly decoded number makes the packet fail authentication, which
//! `ConnectionStats::auth_failures` counts.

mod common;

use common::{addr, payload, NetConfig, Pair};
use mpquic_proto::scheduler::SchedulerKind;
use mpquic_proto::wire::stream_id::Dir;
use mpquic_proto::{ConnectionHandle, Design, Duration, MultipathMode, TransportConfig};

/// The server writes `CHUNK` bytes every millisecond (4 MB/s, ~3000 packets/s) until `SIZE`.
const CHUNK: usize = 4_000;
const SIZE: usize = 4_000_000;

/// Connects over a 5 ms path, opens a 100 ms path (one way; unlimited bandwidth), and has the
/// server stream `SIZE` bytes at a steady rate, round-robin over the paths: every slow-path
/// packet arrives after the ~150 fast-path packets sent during its transit. Returns the pair
/// and the client connection; the data arrived intact.
fn download(
    mode: MultipathMode,
    key_update_interval: Option<u64>,
    seed: u64,
) -> (Pair, ConnectionHandle) {
    let transport = TransportConfig::default()
        .multipath(mode)
        .scheduler(SchedulerKind::RoundRobin)
        .key_update_interval(key_update_interval);
    let fast = NetConfig {
        one_way_delay: Duration::from_millis(5),
        ..NetConfig::default()
    };
    let slow = NetConfig {
        one_way_delay: Duration::from_millis(100),
        ..NetConfig::default()
    };
    let mut pair = Pair::new(seed, transport.clone(), transport, fast);
    pair.path_net.push((addr("10.0.0.2:4433"), slow));
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established()
    });
    pair.run_for(Duration::from_millis(100));
    let (now, server_addr) = (pair.now, pair.server_addr);
    let conn = pair.client.connection_mut(ch).unwrap();
    conn.open_path(now, addr("10.0.0.2:4433"), server_addr)
        .expect("second path");
    let sid = conn.open_bi().unwrap();
    conn.write(sid, b"GET /\r\n").unwrap();
    pair.client.after_connection_call(ch);
    let data = payload(SIZE, 9);
    let (mut server, mut stream, mut written, mut received) = (None, None, 0, Vec::new());
    let mut buf = vec![0u8; 65536];
    let deadline = pair.now + Duration::from_secs(30);
    loop {
        assert!(pair.now < deadline, "seed {seed}: download did not finish");
        pair.run_for(Duration::from_millis(1));
        server = server.or_else(|| pair.server.accept());
        if let Some(sh) = server {
            let s = pair.server.connection_mut(sh).unwrap();
            stream = stream.or_else(|| s.accept(Dir::Bi));
            if let Some(id) = stream {
                let target = (written + CHUNK).min(SIZE);
                if let Ok(n) = s.write(id, &data[written..target]) {
                    written += n;
                }
                if written == SIZE {
                    let _ = s.finish(id);
                }
            }
            pair.server.after_connection_call(sh);
        }
        let c = pair.client.connection_mut(ch).unwrap();
        assert!(!c.is_closed(), "seed {seed}: closed: {:?}", c.error());
        let finished = loop {
            match c.read(sid, &mut buf) {
                Ok(Some(n)) => received.extend_from_slice(&buf[..n]),
                Ok(None) => break true,
                Err(_) => break false,
            }
        };
        pair.client.after_connection_call(ch);
        if finished {
            break;
        }
    }
    assert!(received == data, "seed {seed}: data corrupted");
    (pair, ch)
}

fn check(mode: MultipathMode, key_update_interval: Option<u64>, seed: u64) {
    let (pair, ch) = download(mode, key_update_interval, seed);
    let client = pair.client.connection(ch).unwrap();
    let expected = match mode {
        MultipathMode::Spns => Design::Spns,
        _ => Design::Mpns,
    };
    assert_eq!(client.design(), expected, "seed {seed}");
    let handles = pair.server.handles();
    let server = pair.server.connection(handles[0]).unwrap();
    let label = format!("seed {seed}, {mode:?}, key updates every {key_update_interval:?}");
    assert_eq!(client.stats().auth_failures, 0, "{label}: client");
    assert_eq!(server.stats().auth_failures, 0, "{label}: server");
    if key_update_interval.is_some() {
        assert!(server.stats().key_updates > 0, "{label}: no key update");
    }
    for p in server.path_stats() {
        assert!(
            p.validation == mpquic_proto::Validation::Validated,
            "{label}: path {} not validated",
            p.id
        );
        // Round-robin: the slow path gets its share once validated.
        assert!(
            p.counters.packets_sent > 20,
            "{label}: {} packets sent on path {}",
            p.counters.packets_sent,
            p.id
        );
    }
}

#[test]
fn spns_slow_path_packets_decode() {
    check(MultipathMode::Spns, None, 131);
}

#[test]
fn spns_slow_path_packets_decode_across_key_updates() {
    check(MultipathMode::Spns, Some(300), 132);
}

#[test]
fn mpns_packets_decode_across_key_updates() {
    check(MultipathMode::Mpns, Some(300), 133);
}
