//! Regression tests for bugs found in the sans-IO core (`mpquic-proto`) while building the
//! runtime (both fixed in the core since), driven directly through the core's API.

use std::sync::Arc;

use mpquic_proto::{ClientConfig, Endpoint, EndpointConfig, Timestamp, TransportConfig};

/// Was: `Connection::idle_deadline` (proto/src/connection/timers.rs) raised the idle timeout to
/// three times the *backed-off* PTO (`Path::pto` multiplies by 2^pto_count). When the peer is
/// silent, every PTO doubled the PTO, and the next PTO always fired before the (moved) idle
/// deadline: the handshake with a silent server was not abandoned for ~85 minutes (backoff
/// exponent capped at 16), whatever `idle_timeout` said. RFC 9000 §10.1 asks for at
/// least 3 × the current PTO, which implementations take without backoff.
#[test]
fn handshake_with_silent_peer_times_out() {
    let tls = mpquic::tls::client_config(&[b"x"], mpquic::tls::ServerTrust::Insecure).expect("tls");
    let transport = TransportConfig::default().idle_timeout(std::time::Duration::from_millis(500));
    let config = ClientConfig::new(tls, Arc::new(transport));
    let mut rng = rand::rngs::OsRng;
    let mut endpoint = Endpoint::new(Arc::new(EndpointConfig::new(&mut rng)), None, [7; 32]);
    let local = "127.0.0.1:1000".parse().expect("addr");
    let remote = "127.0.0.1:2000".parse().expect("addr");
    let handle = endpoint
        .connect(Timestamp::ZERO, &config, local, remote, "localhost")
        .expect("connect");
    let mut buf = Vec::new();
    let mut now = Timestamp::ZERO;
    // Drop everything the client sends; run its timers for 60 s of virtual time.
    while now < Timestamp::from_nanos(60_000_000_000) {
        while endpoint.poll_transmit(now, &mut buf).is_some() {}
        let Some(next) = endpoint.poll_timeout() else {
            break;
        };
        now = next;
        endpoint.handle_timeout(now);
    }
    let conn = endpoint.connection(handle).expect("connection");
    assert!(
        conn.is_drained(),
        "still {conn:?} after 60 s with a 500 ms idle timeout (now {now:?})"
    );
}

/// Datagrams in flight in the reproduction below: (to_server, from, to, bytes).
type Flight = Vec<(bool, std::net::SocketAddr, std::net::SocketAddr, Vec<u8>)>;

fn collect(endpoint: &mut Endpoint, now: Timestamp, to_server: bool, out: &mut Flight) {
    let mut buf = Vec::new();
    while let Some(t) = endpoint.poll_transmit(now, &mut buf) {
        out.push((to_server, t.local, t.remote, buf[..t.size].to_vec()));
    }
}

/// A client that closes its connection after completing the handshake but before it received
/// HANDSHAKE_DONE (not yet confirmed). Was: `send_close` (proto/src/connection/close.rs) sent
/// CONNECTION_CLOSE only in a Handshake packet (it added the 1-RTT epoch only once the
/// handshake was confirmed or when it had no other keys). The server, whose handshake is
/// complete and confirmed, has discarded its Handshake keys and dropped the packet: it never
/// learnt of the close and kept probing until its idle timeout. RFC 9000 §10.2.3 asks to send the close in
/// the highest protection level available (1-RTT) and possibly also in a lower one.
#[test]
fn close_before_handshake_done_reaches_the_server() {
    let (cert, key) = mpquic::tls::self_signed(&["localhost"]).expect("cert");
    let server_tls = mpquic::tls::server_config(&[b"x"], vec![cert], key).expect("tls");
    let client_tls =
        mpquic::tls::client_config(&[b"x"], mpquic::tls::ServerTrust::Insecure).expect("tls");
    let transport = Arc::new(TransportConfig::default());
    let mut rng = rand::rngs::OsRng;
    let mut server_config = mpquic::ServerConfig::new(server_tls, transport.clone(), &mut rng);
    server_config.max_connections = 4;
    let mut client = Endpoint::new(Arc::new(EndpointConfig::new(&mut rng)), None, [1; 32]);
    let mut server = Endpoint::new(
        Arc::new(EndpointConfig::new(&mut rng)),
        Some(Arc::new(server_config)),
        [2; 32],
    );
    let (ca, sa) = (
        "127.0.0.1:1000".parse().expect("addr"),
        "127.0.0.1:2000".parse().expect("addr"),
    );
    let now = Timestamp::from_nanos(1_000_000);
    let ch = client
        .connect(
            now,
            &ClientConfig::new(client_tls, transport),
            ca,
            sa,
            "localhost",
        )
        .expect("connect");
    let mut flight = Flight::new();
    let mut server_handle = None;
    // Exchange datagrams until the server has completed (and so confirmed) the handshake;
    // hold back what the server sends after that (its HANDSHAKE_DONE).
    for _ in 0..10 {
        collect(&mut client, now, true, &mut flight);
        collect(&mut server, now, false, &mut flight);
        for (to_server, from, to, data) in std::mem::take(&mut flight) {
            let target = if to_server { &mut server } else { &mut client };
            target.handle_datagram(now, to, from, bytes::BytesMut::from(&data[..]));
        }
        server_handle = server_handle.or_else(|| server.accept());
        if server_handle
            .and_then(|h| server.connection(h))
            .is_some_and(|c| c.is_established())
        {
            break;
        }
    }
    let sh = server_handle.expect("server accepted");
    assert!(client.connection(ch).expect("client").is_established());
    collect(&mut server, now, false, &mut Flight::new()); // HANDSHAKE_DONE: lost.
    client
        .connection_mut(ch)
        .expect("client")
        .close(now, 0, bytes::Bytes::new());
    collect(&mut client, now, true, &mut flight);
    for (_, from, to, data) in flight.drain(..) {
        server.handle_datagram(now, to, from, bytes::BytesMut::from(&data[..]));
    }
    let closed_at_once = server
        .connection(sh)
        .expect("server connection")
        .is_closed();
    // Keep both running (no loss) for 3 s: the server's probes make the closing client resend
    // its CONNECTION_CLOSE.
    let mut now = now;
    let mut sizes = Vec::new();
    let mut unrouted = 0;
    while now < Timestamp::from_nanos(3_000_000_000)
        && !server
            .connection(sh)
            .expect("server connection")
            .is_closed()
    {
        collect(&mut client, now, true, &mut flight);
        collect(&mut server, now, false, &mut flight);
        for (to_server, from, to, data) in std::mem::take(&mut flight) {
            if to_server {
                sizes.push(data.len());
                server.handle_datagram(now, to, from, bytes::BytesMut::from(&data[..]));
            } else if client
                .handle_datagram(now, to, from, bytes::BytesMut::from(&data[..]))
                .is_none()
            {
                unrouted += 1;
            }
        }
        let next = [client.poll_timeout(), server.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        let Some(next) = next else { break };
        now = next.max(now);
        client.handle_timeout(now);
        server.handle_timeout(now);
    }
    let server_conn = server.connection(sh).expect("server connection");
    assert!(
        server_conn.is_closed(),
        "closed at once: {closed_at_once}; after 3 s the server still has not processed the client's \
         CONNECTION_CLOSE (client datagrams of {sizes:?} bytes; {unrouted} server datagrams not \
         routed to the closing client connection {:?}): {server_conn:?}",
        client.connection(ch)
    );
}
