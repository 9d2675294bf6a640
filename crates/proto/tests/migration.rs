//! Connection migration started by the client (RFC 9000 §9): path 0 moves to another local
//! address in the middle of an upload, without multipath and in both multipath designs; the
//! server follows, the upload completes byte-exact, and the move uses a fresh connection ID
//! (§9.5). A move to an address that does not work falls back to the old one.

mod common;

use common::{addr, client_path_events, payload, NetConfig, Pair};
use mpquic_proto::wire::stream_id::{Dir, StreamId};
use mpquic_proto::{
    ConnectionHandle, Duration, Event, MultipathMode, PathError, PathEvent, PathId, TransportConfig,
};

const MODES: [MultipathMode; 3] = [
    MultipathMode::Single,
    MultipathMode::Spns,
    MultipathMode::Mpns,
];
const UPLOAD: usize = 1_500_000;
const MIGRATE_AT: usize = 300_000;
const CID_LEN: usize = 8;

/// An established pair in `mode` on the default network: (pair, client, server).
fn established(seed: u64, mode: MultipathMode) -> (Pair, ConnectionHandle, ConnectionHandle) {
    let t = TransportConfig::default().multipath(mode);
    Pair::established(seed, t.clone(), t, NetConfig::default())
}

/// An upload of [`UPLOAD`] bytes during which, once the server has read [`MIGRATE_AT`], the
/// client moves path 0 to `new_local`. Returns what the server read and the migration's
/// result.
fn upload_with_migration(
    pair: &mut Pair,
    ch: ConnectionHandle,
    sh: ConnectionHandle,
    new_local: std::net::SocketAddr,
) -> (Vec<u8>, Option<Result<(), PathError>>) {
    let data = payload(UPLOAD, 3);
    let mut migration = None;
    let limit = Duration::from_secs(60);
    let (_, received) = pair.upload_on(ch, Some(sh), &data, limit, |p, received| {
        if migration.is_none() && received >= MIGRATE_AT {
            let now = p.now;
            let c = p.client.connection_mut(ch).unwrap();
            migration = Some(c.migrate_path(now, PathId::ZERO, new_local));
            p.client.after_connection_call(ch);
        }
    });
    assert!(
        received == data,
        "{} of {} bytes, or content differs",
        received.len(),
        data.len()
    );
    (received, migration)
}

fn path0_local_and_remote(
    pair: &Pair,
    ch: ConnectionHandle,
    sh: ConnectionHandle,
) -> (std::net::SocketAddr, std::net::SocketAddr) {
    let client = pair.client.connection(ch).unwrap().path_stats();
    let server = pair.server.connection(sh).unwrap().path_stats();
    let local = client.iter().find(|p| p.id == PathId::ZERO).unwrap().local;
    let remote = server.iter().find(|p| p.id == PathId::ZERO).unwrap().remote;
    (local, remote)
}

/// Destination CIDs of the client's short-header packets, in order.
type DcidLog = std::rc::Rc<std::cell::RefCell<Vec<Vec<u8>>>>;

fn log_client_dcids(pair: &mut Pair) -> DcidLog {
    log_dcids(pair)[0].clone()
}

/// Destination CIDs of the short-header packets of each side, in order: [client's, server's].
fn log_dcids(pair: &mut Pair) -> [DcidLog; 2] {
    let logs = [DcidLog::default(), DcidLog::default()];
    let sinks = logs.clone();
    pair.tap = Some(Box::new(move |_, to_server, data| {
        if data.first().is_some_and(|b| b & 0x80 == 0) && data.len() > CID_LEN {
            let sink = &sinks[usize::from(!to_server)];
            sink.borrow_mut().push(data[1..1 + CID_LEN].to_vec());
        }
        true
    }));
    logs
}

#[test]
fn client_moves_path_0_mid_upload_in_every_design() {
    for mode in MODES {
        let (mut pair, ch, sh) = established(21, mode);
        let old_local = pair.client_addr;
        let new_local = addr("10.0.0.9:6000");
        let [dcids, server_dcids] = log_dcids(&mut pair);
        let (_, migration) = upload_with_migration(&mut pair, ch, sh, new_local);
        assert_eq!(migration, Some(Ok(())), "{mode:?}");
        let (local, remote_seen) = path0_local_and_remote(&pair, ch, sh);
        assert_eq!(local, new_local, "{mode:?}: client path 0 moved");
        assert_eq!(
            remote_seen, new_local,
            "{mode:?}: the server follows (RFC 9000 §9.3)"
        );
        let events = client_path_events(&mut pair, ch);
        assert!(
            events.contains(&PathEvent::Validated { id: PathId::ZERO }),
            "{mode:?}: {events:?}"
        );
        assert!(
            !events.contains(&PathEvent::Failed { id: PathId::ZERO }),
            "{mode:?}: {events:?}"
        );
        // RFC 9000 §9.5: the new address never carries a CID the old one used.
        let log = dcids.borrow();
        let last = log.last().unwrap().clone();
        let first = log.first().unwrap().clone();
        assert_ne!(first, last, "{mode:?}: the CID changed with the address");
        let switch = log.iter().position(|d| *d == last).unwrap();
        assert!(log[..switch].iter().all(|d| *d != last), "{mode:?}");
        assert_ne!(old_local, new_local);
        // The server, following a client that took a new CID, takes one too (§9.5: no CID
        // towards two destination addresses).
        let log = server_dcids.borrow();
        assert_ne!(
            log.first(),
            log.last(),
            "{mode:?}: the server's CID changed"
        );
    }
}

/// RFC 9000 §9.4: after a move to another network both ends start their RTT estimates over;
/// a minimum RTT kept from the old, faster network would mislead loss detection and pacing.
#[test]
fn both_ends_forget_the_old_networks_rtt() {
    for mode in MODES {
        let (mut pair, ch, sh) = established(26, mode);
        let slower = addr("10.0.0.9:6000");
        let forty_ms = NetConfig {
            one_way_delay: Duration::from_millis(40),
            ..NetConfig::default()
        };
        pair.path_net.push((slower, forty_ms));
        let (_, migration) = upload_with_migration(&mut pair, ch, sh, slower);
        assert_eq!(migration, Some(Ok(())), "{mode:?}");
        for (side, stats) in [
            ("client", pair.client.connection(ch).unwrap().path_stats()),
            ("server", pair.server.connection(sh).unwrap().path_stats()),
        ] {
            let path0 = stats.iter().find(|p| p.id == PathId::ZERO).unwrap();
            assert!(
                path0.min_rtt_ms >= 79.0,
                "{mode:?} {side}: min RTT {} ms kept from the 20 ms network",
                path0.min_rtt_ms
            );
        }
    }
}

#[test]
fn a_move_to_an_address_that_does_not_work_falls_back() {
    for mode in MODES {
        let (mut pair, ch, sh) = established(22, mode);
        let old_local = pair.client_addr;
        let dead = addr("10.0.0.66:6000");
        pair.blackholed.push(dead);
        let dcids = log_client_dcids(&mut pair);
        let (_, migration) = upload_with_migration(&mut pair, ch, sh, dead);
        assert_eq!(
            migration,
            Some(Ok(())),
            "{mode:?}: the core accepted the move"
        );
        let (local, remote_seen) = path0_local_and_remote(&pair, ch, sh);
        assert_eq!(local, old_local, "{mode:?}: back on the old address");
        assert_eq!(remote_seen, old_local, "{mode:?}");
        let events = client_path_events(&mut pair, ch);
        assert!(
            events.contains(&PathEvent::Failed { id: PathId::ZERO }),
            "{mode:?}: {events:?}"
        );
        // RFC 9000 §9.5: back on the old address with the CID used there before; the one
        // the failed move used (seen at the other address) is not.
        let log = dcids.borrow();
        let (first, last) = (log.first().unwrap(), log.last().unwrap());
        assert_eq!(first, last, "{mode:?}: the old address's CID again");
        assert!(
            log.iter().any(|d| d != first),
            "{mode:?}: the move used another"
        );
    }
}

#[test]
fn migration_is_refused_where_rfc_9000_forbids_it() {
    let t = TransportConfig::default();
    let (mut pair, ch, sh) = Pair::established(23, t.clone(), t, NetConfig::default());
    let now = pair.now;
    let new_local = addr("10.0.0.9:6000");
    let server = pair.server.connection_mut(sh).unwrap();
    assert_eq!(
        server.migrate_path(now, PathId::ZERO, new_local),
        Err(PathError::ServerCannotMigrate)
    );
    let client = pair.client.connection_mut(ch).unwrap();
    assert_eq!(
        client.migrate_path(now, PathId::new(5), new_local),
        Err(PathError::UnknownPath(PathId::new(5)))
    );
    // Moving to the address in use changes nothing.
    let current = pair.client_addr;
    assert_eq!(client.migrate_path(now, PathId::ZERO, current), Ok(()));

    // Before the handshake is confirmed (RFC 9000 §9).
    let t = TransportConfig::default();
    let mut pair = Pair::new(24, t.clone(), t, NetConfig::default());
    let ch = pair.connect();
    let now = pair.now;
    let client = pair.client.connection_mut(ch).unwrap();
    assert_eq!(
        client.migrate_path(now, PathId::ZERO, new_local),
        Err(PathError::NotEstablished)
    );
}

#[test]
fn each_move_needs_a_spare_connection_id() {
    let t = TransportConfig::default();
    let (mut pair, ch, _) = Pair::established(25, t.clone(), t, NetConfig::default());
    let mut moved = 0;
    for i in 0..10u8 {
        let now = pair.now;
        let to = addr(&format!("10.0.1.{}:6000", i + 1));
        let result = pair
            .client
            .connection_mut(ch)
            .unwrap()
            .migrate_path(now, PathId::ZERO, to);
        pair.client.after_connection_call(ch);
        match result {
            Ok(()) => moved += 1,
            Err(e) => {
                assert_eq!(e, PathError::NoConnectionId);
                break;
            }
        }
        pair.run_for(Duration::from_millis(100));
    }
    // The server keeps active_connection_id_limit CIDs issued, replacing retired ones: the
    // client can keep moving as long as the server keeps up.
    assert!(moved >= 3, "only {moved} moves");

    // Moves faster than the server replaces CIDs use up the spares: refused, not reused.
    let now = pair.now;
    let client = pair.client.connection_mut(ch).unwrap();
    let refused = (0..10u8)
        .map(|i| client.migrate_path(now, PathId::ZERO, addr(&format!("10.0.2.{}:6000", i + 1))))
        .position(|r| r == Err(PathError::NoConnectionId));
    let limit = TransportConfig::default().active_connection_id_limit as usize;
    assert!(refused.is_some_and(|n| n < limit), "{refused:?}");
}

/// RFC 9000 §9.3.2: a server follows a packet from a new address, but if that address never
/// answers its PATH_CHALLENGE (an attacker rewrote the source) it goes back to the last
/// validated one rather than lose its client. The client is silent meanwhile (its network is
/// black-holed), so only the server's own fallback can bring the path back.
#[test]
fn a_server_goes_back_when_its_peers_new_address_does_not_answer() {
    for mode in MODES {
        let (mut pair, ch, sh) = established(27, mode);
        let (real, spoofed) = (pair.client_addr, addr("10.9.9.9:7777"));
        let c = pair.client.connection_mut(ch).unwrap();
        let sid = c.open_bi().unwrap();
        c.write(sid, b"hello").unwrap();
        c.finish(sid).unwrap();
        pair.client.after_connection_call(ch);
        pair.blackholed.push(spoofed);
        pair.spoof_next_to_server = Some(spoofed);
        pair.step();
        assert!(
            pair.spoof_next_to_server.is_none(),
            "{mode:?}: the datagram left"
        );
        pair.blackholed.push(real);
        pair.run_for(Duration::from_secs(8));
        let server = pair.server.connection_mut(sh).unwrap();
        let path0 = server
            .path_stats()
            .into_iter()
            .find(|p| p.id == PathId::ZERO)
            .unwrap();
        assert_eq!(path0.remote, real, "{mode:?}: the server went back");
        let events: Vec<_> = std::iter::from_fn(|| server.poll_event()).collect();
        assert!(
            events.contains(&Event::Path(PathEvent::Failed { id: PathId::ZERO })),
            "{mode:?}: {events:?}"
        );
        pair.blackholed.retain(|a| *a != real);
        assert_eq!(server_reads(&mut pair, sh, sid, 5), b"hello", "{mode:?}");
    }
}

/// Moves between networks that differ (2 to 100 ms one way, 0 to 3% loss both ways, chosen
/// per seed) in every design: the upload still completes byte-exact and the move succeeds —
/// a lost PATH_CHALLENGE or PATH_RESPONSE is sent again, and three in a row are needed to fail.
#[test]
fn moves_between_lossy_networks_of_different_delays() {
    for seed in 0..8u64 {
        for mode in MODES {
            let net = |ms: u64, loss_permille: u64| NetConfig {
                one_way_delay: Duration::from_millis(ms),
                loss: loss_permille as f64 / 1000.0,
                ..NetConfig::default()
            };
            // Deterministic "random" parameters per seed.
            let mix = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17);
            let (old_ms, new_ms) = (2 + mix % 99, 2 + (mix >> 8) % 99);
            let (old_loss, new_loss) = ((mix >> 16) % 31, (mix >> 24) % 31);
            let t = TransportConfig::default().multipath(mode);
            let (mut pair, ch, sh) =
                Pair::established(100 + seed, t.clone(), t, net(old_ms, old_loss));
            let new_local = addr("10.0.0.9:6000");
            pair.path_net.push((new_local, net(new_ms, new_loss)));
            let (_, migration) = upload_with_migration(&mut pair, ch, sh, new_local);
            let what =
                format!("seed {seed} {mode:?}: {old_ms} ms/{old_loss}‰ -> {new_ms} ms/{new_loss}‰");
            assert_eq!(migration, Some(Ok(())), "{what}");
            let (local, remote_seen) = path0_local_and_remote(&pair, ch, sh);
            assert_eq!((local, remote_seen), (new_local, new_local), "{what}");
        }
    }
}

/// What the server reads of stream `sid` (accepting it) until `len` bytes have arrived, within
/// 10 s of virtual time.
fn server_reads(pair: &mut Pair, sh: ConnectionHandle, sid: StreamId, len: usize) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 64];
    pair.run_until(Duration::from_secs(10), |p| {
        let s = p.server.connection_mut(sh).unwrap();
        while let Some(id) = s.accept(Dir::Bi) {
            assert_eq!(id, sid);
        }
        while let Ok(Some(n)) = s.read(sid, &mut buf) {
            got.extend_from_slice(&buf[..n]);
        }
        got.len() >= len
    });
    got
}

/// The server's connection's path 0 remote address.
fn server_path0_remote(pair: &Pair, sh: ConnectionHandle) -> std::net::SocketAddr {
    let paths = pair.server.connection(sh).unwrap().path_stats();
    paths.iter().find(|p| p.id == PathId::ZERO).unwrap().remote
}

/// RFC 9000 §9.3: "An endpoint only changes the address to which it sends packets in response
/// to the highest-numbered non-probing packet." A NAT rebinds the client while two of its
/// packets are in flight and the network reorders them: the newer one (from the new address)
/// moves the server's path, and the older one, delivered after it from the old address, must
/// not move it back. Then the transfer finishes through the NAT.
#[test]
fn a_reordered_packet_from_the_old_address_does_not_move_the_server_back() {
    for mode in MODES {
        let (mut pair, ch, sh) = established(28, mode);
        let (real, outside) = (pair.client_addr, addr("192.0.2.7:40000"));
        // Hold back everything the client sends for a while.
        let held = std::rc::Rc::new(std::cell::RefCell::new(Vec::<Vec<u8>>::new()));
        let sink = held.clone();
        pair.tap = Some(Box::new(move |_, to_server, data| {
            if to_server {
                sink.borrow_mut().push(data.clone());
            }
            !to_server
        }));
        let c = pair.client.connection_mut(ch).unwrap();
        let sid = c.open_bi().unwrap();
        c.write(sid, b"first ").unwrap();
        pair.client.after_connection_call(ch);
        pair.step();
        let c = pair.client.connection_mut(ch).unwrap();
        c.write(sid, b"second").unwrap();
        c.finish(sid).unwrap();
        pair.client.after_connection_call(ch);
        pair.step();
        pair.tap = None;
        let held = held.take();
        assert!(held.len() >= 2, "{mode:?}: {} datagrams held", held.len());
        let (older, newer) = (held.first().unwrap(), held.last().unwrap());
        let (now, server_addr) = (pair.now, pair.server_addr);
        let deliver = |pair: &mut Pair, from, data: &[u8]| {
            pair.server
                .handle_datagram(now, server_addr, from, data.into());
        };
        deliver(&mut pair, outside, newer);
        assert_eq!(
            server_path0_remote(&pair, sh),
            outside,
            "{mode:?}: the newest packet moves the path"
        );
        deliver(&mut pair, real, older);
        assert_eq!(
            server_path0_remote(&pair, sh),
            outside,
            "{mode:?}: an older packet from the old address does not move it back"
        );
        // From now on the NAT is in place; the held data is resent and the server validates
        // the new address.
        pair.nat = Some((real, outside));
        let [_, server_dcids] = log_dcids(&mut pair);
        assert_eq!(
            server_reads(&mut pair, sh, sid, 12),
            b"first second",
            "{mode:?}"
        );
        assert_eq!(server_path0_remote(&pair, sh), outside, "{mode:?}");
        // A NAT rebinding (the client's CID unchanged): the server may keep its CID (§9.5)
        // and does, rather than spend one.
        let log = server_dcids.borrow();
        assert!(!log.is_empty(), "{mode:?}");
        assert!(
            log.iter().all(|d| *d == log[0]),
            "{mode:?}: the server's CID stayed"
        );
        drop(log);
        let server = pair.server.connection_mut(sh).unwrap();
        let events: Vec<_> = std::iter::from_fn(|| server.poll_event()).collect();
        assert!(
            !events.contains(&Event::Path(PathEvent::Failed { id: PathId::ZERO })),
            "{mode:?}: {events:?}"
        );
    }
}

/// RFC 9000 §8.2.2 and §9.3: a probe (PATH_CHALLENGE and padding only) from a new address does
/// not move the server's path, and its PATH_RESPONSE goes back to the address the probe came
/// from. The client's old network goes dark as it moves, so a response sent the old way would
/// never arrive; the client's first non-probing packet from the new address then moves the
/// server's path.
#[test]
fn a_probe_is_answered_where_it_came_from_and_does_not_move_the_path() {
    for mode in MODES {
        let (mut pair, ch, sh) = established(29, mode);
        let (old_local, new_local) = (pair.client_addr, addr("10.0.0.9:6000"));
        let now = pair.now;
        let c = pair.client.connection_mut(ch).unwrap();
        assert_eq!(c.migrate_path(now, PathId::ZERO, new_local), Ok(()));
        pair.client.after_connection_call(ch);
        pair.blackholed.push(old_local);
        let mut server_remote_when_validated = None;
        pair.run_until(Duration::from_secs(2), |p| {
            let validated =
                client_path_events(p, ch).contains(&PathEvent::Validated { id: PathId::ZERO });
            if validated {
                server_remote_when_validated = Some(server_path0_remote(p, sh));
            }
            server_remote_when_validated.is_some()
        });
        assert_eq!(
            server_remote_when_validated,
            Some(old_local),
            "{mode:?}: the probe alone did not move the server's path"
        );
        // The client now sends from the new address: the server follows and validates it.
        let c = pair.client.connection_mut(ch).unwrap();
        let sid = c.open_bi().unwrap();
        c.write(sid, b"moved").unwrap();
        c.finish(sid).unwrap();
        pair.client.after_connection_call(ch);
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        pair.run_until(Duration::from_secs(2), |p| {
            let s = p.server.connection_mut(sh).unwrap();
            while s.accept(Dir::Bi).is_some() {}
            while let Ok(Some(n)) = s.read(sid, &mut buf) {
                got.extend_from_slice(&buf[..n]);
            }
            got == b"moved"
        });
        assert_eq!(server_path0_remote(&pair, sh), new_local, "{mode:?}");
    }
}

/// A probe holding several PATH_CHALLENGE frames (three more than the client's own, injected)
/// gets one PATH_RESPONSE datagram at the probing address: each answer could be padded to what
/// the probe's size allows, so more would multiply what a spoofed source receives (RFC 9000
/// §8.1, §21.5). The newest challenge, the client's own, is answered and validates its move.
#[test]
fn several_challenges_in_one_probe_get_one_answer() {
    let t = TransportConfig::default();
    let (mut pair, ch, _) = Pair::established(30, t.clone(), t, NetConfig::default());
    let big_to_client = std::rc::Rc::new(std::cell::Cell::new(0));
    let count = big_to_client.clone();
    pair.tap = Some(Box::new(move |_, to_server, data| {
        if !to_server && data.len() >= 1200 {
            count.set(count.get() + 1);
        }
        true
    }));
    let now = pair.now;
    let c = pair.client.connection_mut(ch).unwrap();
    c.migrate_path(now, PathId::ZERO, addr("10.0.0.9:6000"))
        .unwrap();
    for i in 1..=3u8 {
        let mut frame = vec![0x1a];
        frame.extend_from_slice(&[i; 8]);
        c.inject_raw_frame(frame);
    }
    pair.client.after_connection_call(ch);
    pair.run_until(Duration::from_secs(2), |p| {
        client_path_events(p, ch).contains(&PathEvent::Validated { id: PathId::ZERO })
    });
    assert_eq!(big_to_client.get(), 1, "full-size datagrams to the client");
}
