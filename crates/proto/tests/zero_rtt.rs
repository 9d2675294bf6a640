//! 0-RTT (RFC 9000 §7.4.1, RFC 9001 §4.6): a second connection with a remembered session sends
//! its request in 0-RTT packets within the remembered limits; a server that does not know the
//! ticket rejects early data and the client resends everything in 1-RTT; a server configured
//! with lower limits than a ticket's does not resume it, and one that accepts 0-RTT but lowers
//! its limits anyway is caught by the client (§7.4.1).

mod common;

use std::sync::Arc;

use common::{payload, NetConfig, Pair, ALPN};
use mpquic_proto::crypto::resumption::{client_enable_0rtt, server_allow_0rtt};
use mpquic_proto::crypto::testing::{self, CountingSessionStore};
use mpquic_proto::wire::stream_id::Dir;
use mpquic_proto::{ConnectionHandle, Duration, RetryPolicy, ServerConfig, TransportConfig};

const NET: NetConfig = NetConfig {
    one_way_delay: Duration::from_millis(20),
    loss: 0.0,
    duplicate: 0.0,
    jitter: Duration::ZERO,
};

/// rustls configurations with resumption and 0-RTT on both sides; the client's sessions go to
/// the returned store.
fn tls_0rtt() -> (
    Arc<rustls::ClientConfig>,
    Arc<rustls::ServerConfig>,
    Arc<CountingSessionStore>,
) {
    let (cert, key) = testing::self_signed_ed25519(&["localhost"]);
    let mut server = Arc::unwrap_or_clone(testing::server_config(cert.clone(), key, &[ALPN]));
    server_allow_0rtt(&mut server);
    let mut client = Arc::unwrap_or_clone(testing::client_config(cert, &[ALPN]));
    let store = Arc::new(CountingSessionStore::new(8));
    client_enable_0rtt(&mut client, store.clone());
    (Arc::new(client), Arc::new(server), store)
}

fn pair(
    seed: u64,
    tls: (Arc<rustls::ClientConfig>, Arc<rustls::ServerConfig>),
    server: TransportConfig,
) -> Pair {
    Pair::with_tls(seed, tls, TransportConfig::default(), server, NET)
}

/// A full connection that leaves its session tickets in the client's store.
fn warm_up(pair: &mut Pair) {
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established()
    });
    // The tickets follow the handshake in 1-RTT CRYPTO frames.
    pair.run_for(Duration::from_millis(200));
    assert!(
        !pair.client.connection(ch).unwrap().is_zero_rtt_available(),
        "the first connection had no ticket"
    );
    while pair.server.accept().is_some() {}
}

/// Connect and write `data` on a bidirectional stream at once (before any network event), then
/// run until the server read all of it. Returns the handles and what the server read.
fn request(pair: &mut Pair, data: &[u8]) -> (ConnectionHandle, ConnectionHandle, Vec<u8>) {
    let ch = pair.connect();
    let c = pair.client.connection_mut(ch).unwrap();
    let sid = c.open_bi().expect("a stream within the remembered limits");
    let mut written = c.write(sid, data).unwrap();
    let mut finished = false;
    let (mut server, mut stream, mut got, mut done) = (None, None, Vec::new(), false);
    let mut buf = vec![0u8; 65536];
    pair.run_until(Duration::from_secs(10), |p| {
        let c = p.client.connection_mut(ch).unwrap();
        if written < data.len() {
            written += c.write(sid, &data[written..]).unwrap_or(0);
        }
        if written == data.len() && !finished {
            finished = c.finish(sid).is_ok();
        }
        while let Some(h) = p.server.accept() {
            server = Some(h);
        }
        let Some(sh) = server else { return false };
        let s = p.server.connection_mut(sh).unwrap();
        stream = stream.or_else(|| s.accept(Dir::Bi));
        while let Some(id) = stream {
            match s.read(id, &mut buf) {
                Ok(Some(n)) => got.extend_from_slice(&buf[..n]),
                Ok(None) => {
                    done = true;
                    break;
                }
                Err(_) => break,
            }
        }
        done
    });
    (ch, server.unwrap(), got)
}

/// Test 1 (core): the second connection's request goes out in 0-RTT packets, the server opens
/// them and reads the request before the client's handshake completes.
#[test]
fn second_connection_sends_request_in_0rtt() {
    let (client, server, store) = tls_0rtt();
    let mut p = pair(31, (client, server), TransportConfig::default());
    warm_up(&mut p);
    let data = payload(3000, 1);
    let (ch, sh, got) = request(&mut p, &data);
    assert_eq!(got, data);
    assert_eq!(store.tickets_taken(), 1);
    let client = p.client.connection(ch).unwrap();
    let cs = client.stats();
    // One-way delay 20 ms: the server has the whole request at 20 ms, the client completes its
    // handshake at 40 ms.
    assert_eq!(
        cs.handshake_completed_at, None,
        "the request waited for 1-RTT"
    );
    let ss = p.server.connection(sh).unwrap().stats();
    assert!(cs.zero_rtt_packets_sent >= 3, "client sent {cs:?}");
    assert_eq!(ss.zero_rtt_packets_received, cs.zero_rtt_packets_sent);
    assert_eq!(cs.zero_rtt_stream_bytes, 3000);
    assert_eq!(ss.zero_rtt_accepted, Some(true));
    p.run_for(Duration::from_millis(100));
    let client = p.client.connection(ch).unwrap();
    assert_eq!(client.zero_rtt_accepted(), Some(true));
    assert_eq!(client.stats().zero_rtt_packets_requeued, 0);
    assert_eq!(client.retransmitted_bytes(), 0);
}

/// Test 2 (core): a server that does not know the ticket (a new server process: new session
/// cache) rejects early data; every byte sent in 0-RTT goes again in 1-RTT (RFC 9001 §4.6.2)
/// and the upload arrives byte-exact.
#[test]
fn rejected_0rtt_is_resent_in_1rtt() {
    let (client, server, _) = tls_0rtt();
    let mut first = pair(
        32,
        (client.clone(), server.clone()),
        TransportConfig::default(),
    );
    warm_up(&mut first);
    // Same certificate, fresh rustls server state: the ticket is unknown.
    let (cert, key) = testing::self_signed_ed25519(&["localhost"]);
    let mut fresh = Arc::unwrap_or_clone(testing::server_config(cert, key, &[ALPN]));
    server_allow_0rtt(&mut fresh);
    let mut second = pair(33, (client, Arc::new(fresh)), TransportConfig::default());
    let data = payload(200_000, 2);
    let (ch, sh, got) = request(&mut second, &data);
    assert_eq!(got.len(), data.len());
    assert!(got == data, "the upload is not byte-exact");
    let client = second.client.connection(ch).unwrap();
    let cs = client.stats();
    assert!(cs.zero_rtt_packets_sent > 0, "no 0-RTT was attempted");
    assert_eq!(cs.zero_rtt_packets_requeued, cs.zero_rtt_packets_sent);
    assert_eq!(client.zero_rtt_accepted(), Some(false));
    let ss = second.server.connection(sh).unwrap().stats();
    assert_eq!(ss.zero_rtt_packets_received, 0);
    assert_eq!(ss.zero_rtt_accepted, None);
}

/// Test 4 (core): 0-RTT data stays within the remembered initial_max_data (RFC 9000 §7.4.1:
/// "flow control limits from remembered transport parameters apply to all 0-RTT packets");
/// the rest follows in 1-RTT once the handshake completes.
#[test]
fn zero_rtt_data_is_limited_by_remembered_limits() {
    let (client, server, _) = tls_0rtt();
    let mut transport = TransportConfig::default();
    transport.streams.max_data = 5000;
    transport.streams.max_stream_data_bidi_remote = 4000;
    let mut p = pair(34, (client, server), transport);
    warm_up(&mut p);
    let data = payload(30_000, 3);
    let (ch, _, got) = request(&mut p, &data);
    assert!(got == data);
    let cs = p.client.connection(ch).unwrap().stats();
    assert!(cs.zero_rtt_packets_sent > 0);
    // The stream's remembered limit (4000) is below the connection's (5000).
    assert_eq!(cs.zero_rtt_stream_bytes, 4000, "{cs:?}");
}

/// RFC 9000 §7.4.1: a server "MUST reject 0-RTT data if the restored values for transport
/// parameters cannot be supported". The same rustls configuration (same session cache) comes
/// back in a server configuration with a lower initial_max_data: the tickets issued under the
/// higher limit are not resumed, so the client's 0-RTT is rejected and its request goes again
/// in 1-RTT. A configuration with higher limits than the ticket's still takes 0-RTT.
#[test]
fn tickets_resume_only_under_limits_at_least_those_they_were_issued_under() {
    for (factor, resumes) in [(0.5, false), (2.0, true)] {
        let (client, server, _) = tls_0rtt();
        let mut first = pair(
            35,
            (client.clone(), server.clone()),
            TransportConfig::default(),
        );
        warm_up(&mut first);
        let mut changed = TransportConfig::default();
        changed.streams.max_data = (changed.streams.max_data as f64 * factor) as u64;
        let mut second = pair(36, (client, server), changed);
        let data = payload(3000, 4);
        let (ch, _, got) = request(&mut second, &data);
        assert!(got == data, "x{factor}: the request arrives");
        // The client learns the outcome with the handshake's completion.
        second.run_for(Duration::from_millis(100));
        let client = second.client.connection(ch).unwrap();
        assert_eq!(client.zero_rtt_accepted(), Some(resumes), "x{factor}");
        assert!(!client.is_closed(), "x{factor}: {:?}", client.error());
    }
}

/// The client's own check (RFC 9000 §7.4.1): a server that accepts 0-RTT with a limit below the
/// remembered one (here its transport settings were swapped in after `ServerConfig::new`, which
/// binds tickets to the limits, as another stack might misbehave) is closed on with
/// PROTOCOL_VIOLATION.
#[test]
fn accepted_0rtt_with_reduced_limits_is_a_protocol_violation() {
    let (client, server, _) = tls_0rtt();
    let mut second = pair(
        36,
        (client.clone(), server.clone()),
        TransportConfig::default(),
    );
    warm_up(&mut second);
    let mut lower = TransportConfig::default();
    lower.streams.max_data /= 2;
    let mut config = ServerConfig::clone(second.server.server_config().expect("server"));
    config.transport = Arc::new(lower);
    second.server.set_server_config(Some(Arc::new(config)));
    let ch = second.connect();
    let c = second.client.connection_mut(ch).unwrap();
    let sid = c.open_bi().unwrap();
    c.write(sid, b"GET /").unwrap();
    second.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_closed()
    });
    let error = format!("{:?}", second.client.connection(ch).unwrap().error());
    assert!(
        error.contains("initial_max_data was reduced"),
        "closed with {error}"
    );
}

/// RFC 9000 §17.2.5.3: after a Retry the client may attempt 0-RTT again; the 0-RTT packets sent
/// before it were dropped (no connection yet), so their data goes out again in 0-RTT to the
/// new connection ID and the server still reads the request before the client's handshake
/// completes.
#[test]
fn zero_rtt_is_sent_again_after_a_retry() {
    let (client, server, _) = tls_0rtt();
    let mut p = pair(37, (client, server), TransportConfig::default());
    let mut config = ServerConfig::clone(p.server.server_config().expect("server"));
    config.retry = RetryPolicy::Always;
    p.server.set_server_config(Some(Arc::new(config)));
    // No NEW_TOKEN token: it would spare the second connection its Retry (RFC 9000 §8.1.3).
    p.client_config.token_store = None;
    warm_up(&mut p);
    let data = payload(2000, 7);
    let (ch, sh, got) = request(&mut p, &data);
    assert!(got == data);
    let cs = p.client.connection(ch).unwrap().stats();
    let ss = p.server.connection(sh).unwrap().stats();
    assert!(cs.zero_rtt_packets_requeued > 0, "{cs:?}");
    assert!(ss.zero_rtt_packets_received > 0, "{ss:?}");
    assert_eq!(
        cs.handshake_completed_at, None,
        "the request waited for 1-RTT"
    );
}

/// A rejecting server whose new limits are below the remembered ones the 0-RTT writes were
/// allowed by: the data cannot be resent within them (RFC 9001 §4.6.2, RFC 9000 §4.1), so the
/// client closes with an explicit error instead of breaking the server's flow control.
#[test]
fn rejected_0rtt_beyond_the_new_limits_fails_loudly() {
    let (client, server, _) = tls_0rtt();
    let mut first = pair(38, (client.clone(), server), TransportConfig::default());
    warm_up(&mut first);
    let (cert, key) = testing::self_signed_ed25519(&["localhost"]);
    let mut fresh = Arc::unwrap_or_clone(testing::server_config(cert, key, &[ALPN]));
    server_allow_0rtt(&mut fresh);
    let mut small = TransportConfig::default();
    small.streams.max_data = 20_000;
    let mut second = pair(39, (client, Arc::new(fresh)), small);
    let ch = second.connect();
    let c = second.client.connection_mut(ch).unwrap();
    let sid = c.open_bi().unwrap();
    let written = c.write(sid, &payload(100_000, 8)).unwrap();
    assert!(
        written > 20_000,
        "the remembered limits allowed only {written}"
    );
    second.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_closed()
    });
    let error = format!("{:?}", second.client.connection(ch).unwrap().error());
    assert!(error.contains("exceeds the server's new limits"), "{error}");
}
