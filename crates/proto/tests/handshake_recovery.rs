//! The handshake under the conditions other stacks create (issue 12): a client Initial that is
//! shorter than its datagram (padding after the packet, as picoquic sends it), a lost server
//! first flight, and a client resuming a TLS session.

mod common;

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use bytes::BytesMut;
use common::{NetConfig, Pair, ALPN};
use mpquic_proto::crypto::testing::{
    self, open_initial, reshape_client_initial, CountingSessionStore,
};
use mpquic_proto::crypto::testing::{initial_keys, DirectionalKeys, Side};
use mpquic_proto::wire::frame::Frame;
use mpquic_proto::wire::header::PartialDecode;
use mpquic_proto::{ConnectionHandle, Duration, Timestamp, TransportConfig};

/// One datagram the server sent: when, its size, and whether it carried an ack-eliciting
/// Initial packet (and whether that one had CRYPTO data).
#[derive(Debug, Clone, Copy)]
struct ServerDatagram {
    at: Timestamp,
    size: usize,
    eliciting_initial: bool,
    crypto_initial: bool,
}

/// What a tap saw: the DCID of the client's first Initial (for the Initial keys) and every
/// server datagram.
#[derive(Default)]
struct Seen {
    client_keys: Option<DirectionalKeys>,
    server: Vec<ServerDatagram>,
}

impl Seen {
    /// Note a server datagram; returns whether it carries CRYPTO data in an Initial packet.
    fn on_server_datagram(&mut self, at: Timestamp, data: &[u8]) -> bool {
        let frames = self
            .client_keys
            .as_ref()
            .and_then(|k| open_initial(data, k))
            .map(|(_, f)| f)
            .unwrap_or_default();
        let record = ServerDatagram {
            at,
            size: data.len(),
            eliciting_initial: frames.iter().any(Frame::is_ack_eliciting),
            crypto_initial: frames.iter().any(|f| matches!(f, Frame::Crypto { .. })),
        };
        self.server.push(record);
        record.crypto_initial
    }
}

/// Remember the client's Initial keys (from the DCID of its first datagram) in `seen`.
fn learn_keys(seen: &mut Seen, data: &[u8]) {
    if seen.client_keys.is_none() {
        let (first, _) = PartialDecode::new(BytesMut::from(data), 8).expect("client Initial");
        // The client's view: `remote` opens the server's Initial packets.
        seen.client_keys = Some(initial_keys(first.dcid().as_slice(), Side::Client).remote);
    }
}

fn both_established(pair: &mut Pair, ch: ConnectionHandle) -> Option<ConnectionHandle> {
    let client = pair.client.connection(ch)?.is_established();
    let sh = pair.server.handles().first().copied()?;
    (client && pair.server.connection(sh)?.is_established()).then_some(sh)
}

fn ms(t: Timestamp) -> f64 {
    t.as_nanos() as f64 / 1e6
}

/// picoquic's first datagram: 1,252 bytes of which the Initial packet is 334 (the rest zero
/// bytes after it). RFC 9000 §8.1 counts the whole datagram, so the server may send 3,756
/// bytes: its first flight goes out at once in datagrams of at least 1,200 bytes (§14.1) and
/// the handshake takes one round trip.
#[test]
fn short_initial_in_a_padded_datagram_is_answered_in_full() {
    let net = NetConfig::default();
    let mut pair = Pair::new(
        21,
        TransportConfig::default(),
        TransportConfig::default(),
        net,
    );
    let seen = Rc::new(RefCell::new(Seen::default()));
    let tap_seen = seen.clone();
    pair.tap = Some(Box::new(move |now, to_server, data| {
        let mut seen = tap_seen.borrow_mut();
        if !to_server {
            seen.on_server_datagram(now, data);
        } else if seen.client_keys.is_none() {
            learn_keys(&mut seen, data);
            *data = reshape_client_initial(data, 334, 1252);
        }
        true
    }));
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(5), |p| {
        both_established(p, ch).is_some()
    });
    let sh = both_established(&mut pair, ch).expect("established");
    let seen = seen.borrow();
    let first = seen.server.first().expect("the server answered");
    assert!(
        first.size >= 1200 && first.eliciting_initial,
        "the server's first datagram has {} bytes (ack-eliciting Initial: {})",
        first.size,
        first.eliciting_initial
    );
    for d in seen.server.iter().filter(|d| d.eliciting_initial) {
        assert!(
            d.size >= 1200,
            "{d:?}: ack-eliciting Initial in a short datagram"
        );
    }
    let client = pair.client.connection(ch).unwrap().stats();
    let server = pair.server.connection(sh).unwrap().stats();
    let rtt = net.one_way_delay * 2;
    let client_done = client.handshake_completed_at.expect("client completed");
    let server_done = server.handshake_completed_at.expect("server completed");
    assert!(
        client_done <= Timestamp::ZERO + rtt && server_done <= Timestamp::ZERO + rtt * 3 / 2,
        "handshake completed at {:.1} ms (client) / {:.1} ms (server); one round trip is {:?}",
        ms(client_done),
        ms(server_done),
        rtt
    );
    assert_eq!((client.pto_count, server.pto_count), (0, 0), "a PTO fired");
}

/// The server's first flight (its first datagram with CRYPTO data in an Initial) is lost. A
/// client with short timers probes; the server's ACK-only Initial packets answering the probes
/// are acknowledged, which shows the first one lost (RFC 9002 §6.1): it is resent then, not
/// one server PTO (about 1 s with the 333 ms initial RTT) after it was sent.
#[test]
fn lost_server_first_flight_is_resent_when_acks_show_it() {
    let client_transport = TransportConfig::default().initial_rtt(Duration::from_millis(50));
    let mut pair = Pair::new(
        22,
        client_transport,
        TransportConfig::default(),
        NetConfig::default(),
    );
    let seen = Rc::new(RefCell::new(Seen::default()));
    let tap_seen = seen.clone();
    let mut dropped = false;
    pair.tap = Some(Box::new(move |now, to_server, data| {
        let mut seen = tap_seen.borrow_mut();
        if to_server {
            learn_keys(&mut seen, data);
            return true;
        }
        let crypto = seen.on_server_datagram(now, data);
        if crypto && !dropped {
            dropped = true;
            return false;
        }
        true
    }));
    let ch = pair.connect();
    // The server's loss and PTO counts when the resent flight has just gone out.
    let mut at_resend = None;
    pair.run_until(Duration::from_secs(5), |p| {
        let flights = seen
            .borrow()
            .server
            .iter()
            .filter(|d| d.crypto_initial)
            .count();
        if flights >= 2 && at_resend.is_none() {
            let sh = p.server.handles()[0];
            let stats = p.server.connection(sh).unwrap().stats();
            at_resend = Some((stats.packets_lost, stats.pto_count));
        }
        both_established(p, ch).is_some()
    });
    let seen = seen.borrow();
    let mut flights = seen.server.iter().filter(|d| d.crypto_initial);
    let lost = flights.next().expect("first flight").at;
    let resent = flights.next().expect("first flight resent").at;
    let (packets_lost, ptos) = at_resend.expect("resent");
    assert!(
        resent - lost < Duration::from_millis(500),
        "first flight sent at {:.1} ms, resent at {:.1} ms",
        ms(lost),
        ms(resent),
    );
    assert!(
        packets_lost > 0 && ptos == 0,
        "resent after {packets_lost} packets declared lost and {ptos} PTOs"
    );
    let client = pair.client.connection(ch).unwrap().stats();
    assert!(
        client.handshake_completed_at.unwrap() < Timestamp::ZERO + Duration::from_millis(900),
        "client completed at {:.1} ms",
        ms(client.handshake_completed_at.unwrap())
    );
}

/// With a ticket from an earlier connection, rustls reports the parameters remembered with it
/// until the server's EncryptedExtensions arrive (RFC 9000 §7.4.1); those carry the earlier
/// connection's CIDs. The resumed connection must check the new ones (§7.3) and succeed.
#[test]
fn resumed_session_checks_this_connections_transport_parameters() {
    let (cert, key) = testing::self_signed_ed25519(&["localhost"]);
    let mut server_tls = Arc::unwrap_or_clone(testing::server_config(cert.clone(), key, &[ALPN]));
    server_tls.send_tls13_tickets = 2;
    let mut client_tls = Arc::unwrap_or_clone(testing::client_config(cert, &[ALPN]));
    let store = Arc::new(CountingSessionStore::new(8));
    client_tls.resumption = rustls::client::Resumption::store(store.clone());
    let mut pair = Pair::with_tls(
        23,
        (Arc::new(client_tls), Arc::new(server_tls)),
        TransportConfig::default(),
        TransportConfig::default(),
        NetConfig::default(),
    );
    for attempt in 0..3 {
        let ch = pair.connect();
        pair.run_until(Duration::from_secs(5), |p| {
            p.client.connection(ch).unwrap().is_established()
                || p.client.connection(ch).unwrap().is_closed()
        });
        let conn = pair.client.connection(ch).unwrap();
        assert!(
            conn.is_established(),
            "connection {attempt} failed: {:?}",
            conn.error()
        );
        // The tickets follow the handshake in 1-RTT CRYPTO frames.
        pair.run_for(Duration::from_millis(100));
        assert!(!pair.client.connection(ch).unwrap().is_closed());
    }
    assert_eq!(
        store.tickets_taken(),
        2,
        "the later connections did not offer a ticket"
    );
}
