//! How soon a second path carries data when the initial path is the slow one (issue 15): the
//! server sends the CIDs of the other path IDs in 0.5-RTT, the client opens the second path
//! when its own handshake completes, and the server holds that path's packets until its
//! handshake completes (RFC 9001 §5.7) rather than processing or dropping them.

mod common;

use common::{addr, NetConfig, Pair};
use mpquic_proto::Validation;
use mpquic_proto::{Duration, MultipathMode, PathId, TransportConfig};

const SLOW_ONE_WAY_MS: u64 = 30;
const FAST_ONE_WAY_MS: u64 = 2;

fn transport() -> TransportConfig {
    TransportConfig::default().multipath(MultipathMode::Mpns)
}

#[test]
fn second_path_opens_when_the_clients_handshake_completes() {
    second_path_opens_when_the_clients_handshake_completes_in(MultipathMode::Mpns);
}

/// SPNS too: its path-ID limit travels in mpquic's `spns_max_path_id` transport parameter, so
/// the server's CIDs for path 1 come with its first flight as in MPNS. Before, SPNS granted
/// path IDs only by MAX_PATH_ID after the handshake, one slow round trip later.
#[test]
fn spns_second_path_opens_when_the_clients_handshake_completes() {
    second_path_opens_when_the_clients_handshake_completes_in(MultipathMode::Spns);
}

fn one_way(ms: u64) -> NetConfig {
    NetConfig {
        one_way_delay: Duration::from_millis(ms),
        ..NetConfig::default()
    }
}

fn path1_validation(pair: &Pair, client: bool) -> Option<Validation> {
    let ep = if client { &pair.client } else { &pair.server };
    let handle = ep.handles().into_iter().next()?;
    let stats = ep.connection(handle)?.path_stats();
    stats
        .iter()
        .find(|p| p.id == PathId::new(1))
        .map(|p| p.validation)
}

fn second_path_opens_when_the_clients_handshake_completes_in(mode: MultipathMode) {
    let t = TransportConfig::default().multipath(mode);
    let mut pair = Pair::new(7, t.clone(), t, one_way(SLOW_ONE_WAY_MS));
    let second = addr("10.0.0.2:4433");
    pair.path_net.push((second, one_way(FAST_ONE_WAY_MS)));
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established()
    });
    let completed_at = pair.now;

    // The CIDs for path 1 came with the server's first flight: no round trip to wait.
    let (now, server_addr) = (pair.now, pair.server_addr);
    let id = pair
        .client
        .connection_mut(ch)
        .unwrap()
        .open_path(now, second, server_addr)
        .expect("CIDs for path 1 arrive in 0.5-RTT, with the server's handshake flight");
    assert_eq!(id, PathId::new(1));
    pair.client.after_connection_call(ch);

    // The probe on the fast path reaches the server long before the client's Finished does on
    // the slow one; the server must not act on it until its handshake completes.
    let server_done = |p: &Pair| {
        p.server
            .handles()
            .into_iter()
            .next()
            .and_then(|h| p.server.connection(h))
            .is_some_and(|c| c.is_established())
    };
    let mut probe_seen_early = false;
    pair.run_until(Duration::from_secs(5), |p| {
        if server_done(p) {
            return true;
        }
        assert!(
            path1_validation(p, false).is_none(),
            "server processed a 1-RTT packet before its handshake completed (RFC 9001 §5.7)"
        );
        probe_seen_early |= p.now > completed_at + Duration::from_millis(FAST_ONE_WAY_MS);
        false
    });
    assert!(
        probe_seen_early,
        "the probe did not arrive before the Finished"
    );

    // Held, not dropped: the path validates one fast round trip after the server completes,
    // without waiting for a probe timeout (333 ms initial RTT on a new path).
    let server_completed_at = pair.now;
    pair.run_until(Duration::from_secs(5), |p| {
        path1_validation(p, true) == Some(Validation::Validated)
    });
    let budget = Duration::from_millis(2 * FAST_ONE_WAY_MS + 5);
    assert!(
        pair.now <= server_completed_at + budget,
        "path 1 validated at {:?}, server completed at {:?}",
        pair.now,
        server_completed_at
    );
    // Before 0.5-RTT CIDs the client learnt them one slow round trip after its completion.
    let slow_rtt = Duration::from_millis(2 * SLOW_ONE_WAY_MS);
    assert!(pair.now < completed_at + slow_rtt);
}

/// Short-header datagrams are held before decryption, so anyone who saw the server's CID can
/// send them: at most a few are kept, and the handshake completes as usual.
#[test]
fn held_early_datagrams_are_bounded() {
    use std::cell::RefCell;
    use std::rc::Rc;

    let mut pair = Pair::new(9, transport(), transport(), one_way(SLOW_ONE_WAY_MS));
    let server_cid: Rc<RefCell<Option<Vec<u8>>>> = Rc::default();
    let seen = Rc::clone(&server_cid);
    pair.tap = Some(Box::new(move |_, to_server, bytes| {
        // The server's first datagram: long header, its SCID after the DCID.
        if !to_server && seen.borrow().is_none() && bytes[0] & 0x80 != 0 {
            let dcid_len = usize::from(bytes[5]);
            let scid_len = usize::from(bytes[6 + dcid_len]);
            let at = 7 + dcid_len;
            *seen.borrow_mut() = Some(bytes[at..at + scid_len].to_vec());
        }
        true
    }));
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(5), |_| server_cid.borrow().is_some());
    let cid = server_cid.borrow().clone().unwrap();
    let (client_addr, server_addr) = (pair.client_addr, pair.server_addr);
    let forged = 40;
    for i in 0..forged {
        let mut dgram = vec![0x40u8];
        dgram.extend_from_slice(&cid);
        dgram.extend(std::iter::repeat_n(i as u8, 60));
        let now = pair.now;
        pair.server
            .handle_datagram(now, server_addr, client_addr, dgram.as_slice().into());
    }
    // Before the handshake completes, all but the held few are already dropped.
    let sh = pair.server.handles()[0];
    let dropped = pair.server.connection(sh).unwrap().stats().packets_dropped;
    assert!(
        dropped >= forged - 8,
        "{dropped} of {forged} forged datagrams dropped before completion: the rest are held"
    );
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established()
            && p.server
                .handles()
                .into_iter()
                .next()
                .is_some_and(|h| p.server.connection(h).is_some_and(|c| c.is_established()))
    });
    // The held ones fail authentication once processed.
    let stats = pair.server.connection(sh).unwrap().stats();
    assert!(stats.packets_dropped >= forged, "{stats:?}");
    assert!(pair.server.connection(sh).unwrap().error().is_none());
}

/// RFC 9001 §5.7 on the client: the server's 0.5-RTT datagram (the CIDs for path 1) reaches
/// the client before the Handshake datagrams that give it 1-RTT keys, as on a network that
/// reorders. The client holds it rather than dropping it, so the CIDs are there when its
/// handshake completes and nothing is retransmitted.
#[test]
fn client_holds_half_rtt_packets_that_overtake_the_handshake() {
    use std::cell::RefCell;
    use std::rc::Rc;

    let mut pair = Pair::new(11, transport(), transport(), one_way(SLOW_ONE_WAY_MS));
    // The server's datagrams, held back until its 0.5-RTT one has been sent.
    let held: Rc<RefCell<Vec<Vec<u8>>>> = Rc::default();
    let releasing = Rc::new(RefCell::new(false));
    let (tap_held, tap_releasing) = (Rc::clone(&held), Rc::clone(&releasing));
    pair.tap = Some(Box::new(move |_, to_server, bytes| {
        if to_server || *tap_releasing.borrow() {
            return true;
        }
        tap_held.borrow_mut().push(bytes.to_vec());
        false
    }));
    let ch = pair.connect();
    let has_short = |h: &RefCell<Vec<Vec<u8>>>| h.borrow().iter().any(|d| d[0] & 0x80 == 0);
    pair.run_until(Duration::from_secs(5), |_| has_short(&held));
    *releasing.borrow_mut() = true;
    // Short-header (1-RTT) datagrams first, then the Initial and Handshake ones.
    let mut datagrams = held.borrow_mut().split_off(0);
    datagrams.sort_by_key(|d| d[0] & 0x80);
    let (now, client_addr, server_addr) = (pair.now, pair.client_addr, pair.server_addr);
    for d in datagrams {
        pair.client
            .handle_datagram(now, client_addr, server_addr, d.as_slice().into());
    }
    pair.client.after_connection_call(ch);
    let conn = pair.client.connection(ch).unwrap();
    assert!(conn.is_established(), "the handshake flight was delivered");
    assert_eq!(
        conn.stats().packets_dropped,
        0,
        "a 0.5-RTT packet was dropped"
    );
    let (now, server_addr) = (pair.now, pair.server_addr);
    let id = pair
        .client
        .connection_mut(ch)
        .unwrap()
        .open_path(now, addr("10.0.0.2:4433"), server_addr)
        .expect("the held 0.5-RTT packet brought the CIDs for path 1");
    assert_eq!(id, PathId::new(1));
}
