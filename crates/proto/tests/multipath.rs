//! Multipath between two in-memory endpoints, in both packet-number-space designs: path
//! opening and validation, data on both paths, and handover when a path dies.

mod common;

use common::{addr, payload, NetConfig, Pair};
use mpquic_proto::wire::stream_id::{Dir, StreamId};
use mpquic_proto::PathError;
use mpquic_proto::{
    ConnectionHandle, Design, Duration, Event, MultipathMode, PathEvent, PathId, TransportConfig,
    Validation,
};

fn transport(mode: MultipathMode) -> TransportConfig {
    TransportConfig::default().multipath(mode)
}

struct Transfer {
    data: Vec<u8>,
    written: usize,
    fin: bool,
    received: Vec<u8>,
    server: Option<ConnectionHandle>,
    stream: Option<StreamId>,
    done: bool,
}

impl Transfer {
    fn new(data: Vec<u8>) -> Self {
        Self {
            data,
            written: 0,
            fin: false,
            received: Vec::new(),
            server: None,
            stream: None,
            done: false,
        }
    }

    /// Server sends `data` to the client on a stream the client opened (a download).
    fn poll(&mut self, pair: &mut Pair, ch: ConnectionHandle, sid: StreamId) -> bool {
        if self.server.is_none() {
            self.server = pair.server.accept();
        }
        if let Some(sh) = self.server {
            let s = pair.server.connection_mut(sh).unwrap();
            if self.stream.is_none() {
                self.stream = s.accept(Dir::Bi);
            }
            if let Some(id) = self.stream {
                while self.written < self.data.len() {
                    match s.write(id, &self.data[self.written..]) {
                        Ok(n) => self.written += n,
                        Err(_) => break,
                    }
                }
                if self.written == self.data.len() && !self.fin {
                    s.finish(id).unwrap();
                    self.fin = true;
                }
            }
        }
        let c = pair.client.connection_mut(ch).unwrap();
        let mut buf = vec![0u8; 65536];
        loop {
            match c.read(sid, &mut buf) {
                Ok(Some(n)) => self.received.extend_from_slice(&buf[..n]),
                Ok(None) => {
                    self.done = true;
                    break;
                }
                Err(_) => break,
            }
        }
        self.done
    }
}

/// Connect, open a second path from another client address, and start a download request.
fn two_paths(mode: MultipathMode, seed: u64) -> (Pair, ConnectionHandle, StreamId) {
    two_paths_with(
        transport(mode),
        transport(mode),
        NetConfig::default(),
        None,
        seed,
    )
}

/// Opens a path from 10.0.0.2, retrying for up to 5 s while the CIDs or path IDs it needs
/// have not arrived.
fn open_second_path(pair: &mut Pair, ch: ConnectionHandle) -> Result<PathId, PathError> {
    let deadline = pair.now + Duration::from_secs(5);
    loop {
        let (now, server_addr) = (pair.now, pair.server_addr);
        let conn = pair.client.connection_mut(ch).unwrap();
        match conn.open_path(now, addr("10.0.0.2:4433"), server_addr) {
            Err(PathError::NoConnectionId | PathError::PathIdLimit) if now < deadline => {
                pair.run_for(Duration::from_millis(10))
            }
            result => return result,
        }
    }
}

fn two_paths_with(
    client: TransportConfig,
    server: TransportConfig,
    net: NetConfig,
    second: Option<NetConfig>,
    seed: u64,
) -> (Pair, ConnectionHandle, StreamId) {
    let mut pair = Pair::new(seed, client, server, net);
    if let Some(second) = second {
        pair.path_net.push((addr("10.0.0.2:4433"), second));
    }
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established()
    });
    // Let CIDs for the extra path IDs arrive (on a lossy network they may need a resend).
    pair.run_for(Duration::from_millis(100));
    let id = open_second_path(&mut pair, ch).expect("second path");
    assert_eq!(id, PathId::new(1));
    pair.client.after_connection_call(ch);
    let sid = pair.client.connection_mut(ch).unwrap().open_bi().unwrap();
    pair.client
        .connection_mut(ch)
        .unwrap()
        .write(sid, b"GET /\r\n")
        .unwrap();
    (pair, ch, sid)
}

fn assert_both_paths_used(mode: MultipathMode) {
    let (mut pair, ch, sid) = two_paths(mode, 21);
    let mut t = Transfer::new(payload(4_000_000, 3));
    pair.run_until(Duration::from_secs(120), |p| {
        let c = p.client.connection(ch).unwrap();
        if c.is_closed() {
            panic!(
                "{mode:?}: client closed: {:?}; server: {:?}",
                c.error(),
                t.server
                    .map(|s| p.server.connection(s).unwrap().error().cloned())
            );
        }
        t.poll(p, ch, sid)
    });
    assert!(
        t.received == t.data,
        "{mode:?}: corrupted or short download"
    );
    let conn = pair.client.connection_mut(ch).unwrap();
    let expected = if mode == MultipathMode::Spns {
        Design::Spns
    } else {
        Design::Mpns
    };
    assert_eq!(conn.design(), expected);
    let mut events = Vec::new();
    while let Some(e) = conn.poll_event() {
        events.push(e);
    }
    assert!(
        events.contains(&Event::Path(PathEvent::Validated { id: PathId::new(1) })),
        "{mode:?}: {events:?}"
    );
    let sh = t.server.unwrap();
    let server_paths = pair.server.connection(sh).unwrap().path_stats();
    assert_eq!(server_paths.len(), 2, "{mode:?}: server sees both paths");
    let total: u64 = server_paths
        .iter()
        .map(|p| p.counters.stream_bytes_sent)
        .sum();
    for p in &server_paths {
        let share = p.counters.stream_bytes_sent as f64 / total as f64;
        assert!(
            share >= 0.10,
            "{mode:?}: path {} carried only {:.1}% of the data",
            p.id,
            share * 100.0
        );
    }
}

#[test]
fn mpns_uses_both_paths() {
    assert_both_paths_used(MultipathMode::Mpns);
}

#[test]
fn spns_uses_both_paths() {
    assert_both_paths_used(MultipathMode::Spns);
}

#[test]
fn handover_when_a_path_dies() {
    for mode in [MultipathMode::Mpns, MultipathMode::Spns] {
        let (mut pair, ch, sid) = two_paths(mode, 33);
        let mut t = Transfer::new(payload(3_000_000, 9));
        // Run until some data moved, then black-hole the original path in both directions.
        pair.run_until(Duration::from_secs(30), |p| {
            t.poll(p, ch, sid);
            t.received.len() > 500_000
        });
        let dead = pair.client_addr;
        pair.blackholed.push(dead);
        pair.run_until(Duration::from_secs(120), |p| t.poll(p, ch, sid));
        assert!(
            t.received == t.data,
            "{mode:?}: corrupted or short download after handover"
        );
        let server = pair.server.connection(t.server.unwrap()).unwrap();
        assert!(
            server.stats().handovers >= 1 || server.path_stats().iter().any(|p| p.abandoned),
            "{mode:?}: no handover recorded"
        );
    }
}

#[test]
fn reinjection_never_duplicates_or_corrupts_data() {
    use mpquic_proto::reinjection::ReinjectionMode;
    for (mode, seed) in [
        (MultipathMode::Mpns, 41),
        (MultipathMode::Spns, 42),
        (MultipathMode::Mpns, 43),
    ] {
        let server = transport(mode).reinjection(ReinjectionMode::Always);
        let lossy = NetConfig {
            loss: 0.02,
            jitter: Duration::from_millis(3),
            ..NetConfig::default()
        };
        let slow_lossy = NetConfig {
            one_way_delay: Duration::from_millis(60),
            loss: 0.03,
            ..NetConfig::default()
        };
        let (mut pair, ch, sid) =
            two_paths_with(transport(mode), server, lossy, Some(slow_lossy), seed);
        // Several short chunks, each followed by a pause: every chunk ends with a tail.
        let mut t = Transfer::new(payload(1_500_000, 5));
        pair.run_until(Duration::from_secs(120), |p| {
            let c = p.client.connection(ch).unwrap();
            assert!(!c.is_closed(), "seed {seed}: closed: {:?}", c.error());
            t.poll(p, ch, sid)
        });
        assert!(
            t.received == t.data,
            "seed {seed}: re-injection corrupted or duplicated data"
        );
        let server = pair.server.connection(t.server.unwrap()).unwrap();
        assert!(
            !server.is_closed(),
            "seed {seed}: flow control or another error: {:?}",
            server.error()
        );
        assert!(
            server.stats().reinjected_bytes > 0,
            "seed {seed}: nothing was re-injected"
        );
    }
}

#[test]
fn qoe_feedback_reaches_the_server_only_when_negotiated() {
    use mpquic_proto::QoeReport;
    let with_qoe = |mode| transport(mode).qoe_feedback(true);
    let (mut pair, ch, sid) = two_paths_with(
        with_qoe(MultipathMode::Mpns),
        with_qoe(MultipathMode::Mpns),
        NetConfig::default(),
        None,
        44,
    );
    let report = QoeReport {
        cached_bytes: 1000,
        cached_frames: 30,
        play_time_left_ms: 1200,
        bitrate_kbps: 2500,
        frame_rate: 30,
    };
    pair.client
        .connection_mut(ch)
        .unwrap()
        .send_qoe_feedback(report)
        .unwrap();
    let mut t = Transfer::new(payload(10_000, 1));
    pair.run_until(Duration::from_secs(10), |p| t.poll(p, ch, sid));
    assert_eq!(
        pair.server
            .connection(t.server.unwrap())
            .unwrap()
            .peer_qoe(),
        Some(report)
    );
    // Without the server's agreement the client may not send it.
    let (mut pair, ch, _) = two_paths_with(
        with_qoe(MultipathMode::Mpns),
        transport(MultipathMode::Mpns),
        NetConfig::default(),
        None,
        45,
    );
    assert!(pair
        .client
        .connection_mut(ch)
        .unwrap()
        .send_qoe_feedback(report)
        .is_err());
}

#[test]
fn idle_path_is_abandoned_and_removed() {
    let t = transport(MultipathMode::Mpns).path_idle_timeout(Some(Duration::from_secs(2)));
    let (mut pair, ch, sid) = two_paths_with(t.clone(), t, NetConfig::default(), None, 46);
    let mut tr = Transfer::new(payload(100_000, 2));
    pair.run_until(Duration::from_secs(10), |p| tr.poll(p, ch, sid));
    // Path 1 goes silent (black hole); path 0 keeps the connection alive with pings.
    pair.blackholed.push(addr("10.0.0.2:4433"));
    for _ in 0..10 {
        pair.client
            .connection_mut(ch)
            .unwrap()
            .inject_raw_frame(vec![0x01]);
        pair.run_for(Duration::from_millis(500));
    }
    let conn = pair.client.connection_mut(ch).unwrap();
    let mut abandoned = false;
    while let Some(e) = conn.poll_event() {
        abandoned |=
            matches!(e, Event::Path(PathEvent::Abandoned { id, .. }) if id == PathId::new(1));
    }
    assert!(abandoned, "path 1 was not abandoned after its idle timeout");
    assert!(!conn.is_closed(), "the connection must survive on path 0");
    assert!(
        conn.path_stats().iter().all(|p| p.id != PathId::new(1)),
        "abandoned path state removed after 3 PTOs"
    );
}

#[test]
fn ack_on_all_paths_sends_bounded_copies() {
    // Regression: copies of another path's ACK used to be re-sent on every poll (an ACK storm).
    use mpquic_proto::{AckConfig, RangeOrder};
    for order in [RangeOrder::HighestFirst, RangeOrder::LowestFirst] {
        let mut ack = AckConfig::default();
        ack.ack_on_all_paths = true;
        ack.range_order = order;
        ack.default_range_limit = 4;
        let t = transport(MultipathMode::Spns).ack(ack);
        let (mut pair, ch, sid) = two_paths_with(t.clone(), t, NetConfig::default(), None, 47);
        let mut tr = Transfer::new(payload(1_000_000, 4));
        pair.run_until(Duration::from_secs(60), |p| tr.poll(p, ch, sid));
        assert!(tr.received == tr.data, "{order:?}: corrupted or short");
        let stats = pair.client.connection(ch).unwrap().stats();
        let received = stats.packets_received;
        assert!(
            stats.ack_frames_sent <= 3 * received,
            "{order:?}: {} ACK frames for {received} packets received",
            stats.ack_frames_sent
        );
    }
}

/// The SPNS report's §2.2 receiver rule as a switch, end to end: with the report's rules the
/// client acknowledges on the path the packets arrived on, so the slow path carries ACKs of
/// its own and the server samples its RTT from them; with the naive preset every ACK takes
/// the path with the lowest RTT and the slow path never gets an own RTT sample. The data
/// arrive intact either way.
#[test]
fn spns_ack_path_follows_the_rules() {
    use mpquic_proto::SpnsRules;
    for (rules, seed) in [(SpnsRules::report(), 51), (SpnsRules::naive(), 52)] {
        let t = transport(MultipathMode::Spns)
            .spns_rules(rules)
            // Both paths must carry data for the ACK-path rules to show (ECF may idle one).
            .scheduler(mpquic_proto::scheduler::SchedulerKind::MinRtt);
        let slow = NetConfig {
            one_way_delay: Duration::from_millis(40),
            ..NetConfig::default()
        };
        let (mut pair, ch, sid) =
            two_paths_with(t.clone(), t, NetConfig::default(), Some(slow), seed);
        let mut tr = Transfer::new(payload(2_000_000, 7));
        pair.run_until(Duration::from_secs(60), |p| tr.poll(p, ch, sid));
        assert!(
            tr.received == tr.data,
            "{rules}: corrupted or short download"
        );
        let client = pair.client.connection(ch).unwrap().path_stats();
        let server = pair
            .server
            .connection(tr.server.unwrap())
            .unwrap()
            .path_stats();
        let acks_on_slow = client
            .iter()
            .find(|p| p.id == PathId::new(1))
            .unwrap()
            .counters
            .ack_frames_sent;
        let slow_path = server.iter().find(|p| p.id == PathId::new(1)).unwrap();
        println!(
            "seed {seed}, {rules}: path 1: {} stream bytes, {} packets received by the client, {acks_on_slow} ACK frames from it, {} own RTT samples",
            slow_path.counters.stream_bytes_sent,
            client.iter().find(|p| p.id == PathId::new(1)).unwrap().counters.packets_received,
            slow_path.counters.own_rtt_samples
        );
        assert!(
            slow_path.counters.stream_bytes_sent > 0,
            "{rules}: slow path unused"
        );
        if rules == SpnsRules::report() {
            assert!(acks_on_slow > 0, "{rules}: no ACK frame on path 1");
            assert!(slow_path.counters.own_rtt_samples > 0, "{rules}");
        } else {
            assert_eq!(acks_on_slow, 0, "{rules}: ACK frames on the slow path");
            assert_eq!(slow_path.counters.own_rtt_samples, 0, "{rules}");
        }
    }
}

/// DATAGRAM frames (RFC 9221) over two lossy paths beside a stream, in both designs (and with
/// XLINK re-injection of every stream tail): the server sends one 300-byte datagram every
/// 2 ms while it sends a 2 MB download. The datagrams travel on both path IDs, each in exactly
/// one DATAGRAM frame (frames sent = datagrams the application sent: a lost one is neither
/// retransmitted nor re-injected nor copied by a PTO probe), and every frame sent is in the end
/// either acknowledged or declared lost. The client receives at most that many, each intact
/// and once; the download is byte-exact.
#[test]
fn datagrams_beside_a_stream_over_two_lossy_paths() {
    use bytes::Bytes;
    use mpquic_proto::reinjection::ReinjectionMode;
    const N: u32 = 400;
    const LEN: usize = 300;
    let datagram = |i: u32| {
        let mut d = payload(LEN, i as u8);
        d[..4].copy_from_slice(&i.to_be_bytes());
        Bytes::from(d)
    };
    for (mode, reinjection, seed) in [
        (MultipathMode::Spns, ReinjectionMode::default(), 61),
        (MultipathMode::Mpns, ReinjectionMode::default(), 62),
        (MultipathMode::Mpns, ReinjectionMode::Always, 63),
    ] {
        let server = transport(mode).reinjection(reinjection);
        let lossy = NetConfig {
            loss: 0.03,
            ..NetConfig::default()
        };
        let lossy_slower = NetConfig {
            one_way_delay: Duration::from_millis(15),
            ..lossy
        };
        let (mut pair, ch, sid) =
            two_paths_with(transport(mode), server, lossy, Some(lossy_slower), seed);
        let mut t = Transfer::new(payload(2_000_000, 11));
        let (mut sent, mut start) = (0u32, None);
        let mut got: Vec<Bytes> = Vec::new();
        let mut poll = |p: &mut Pair, t: &mut Transfer| {
            let done = t.poll(p, ch, sid);
            if let Some(sh) = t.server {
                let now = p.now;
                let start = *start.get_or_insert(now);
                let due = now.saturating_duration_since(start).as_nanos() / 2_000_000 + 1;
                let s = p.server.connection_mut(sh).unwrap();
                while sent < N && u128::from(sent) < due {
                    s.send_datagram(datagram(sent)).expect("send_datagram");
                    sent += 1;
                }
            }
            let c = p.client.connection_mut(ch).unwrap();
            while let Some(d) = c.recv_datagram() {
                got.push(d);
            }
            done && sent == N
        };
        pair.run_until(Duration::from_secs(120), |p| {
            let c = p.client.connection(ch).unwrap();
            assert!(!c.is_closed(), "seed {seed}: closed: {:?}", c.error());
            poll(p, &mut t)
        });
        // Time for the last losses to be detected.
        let until = pair.now + Duration::from_secs(3);
        pair.run_until(Duration::from_secs(5), |p| {
            poll(p, &mut t);
            p.now >= until
        });
        assert!(
            t.received == t.data,
            "seed {seed}: corrupted or short download"
        );

        let server = pair.server.connection(t.server.unwrap()).unwrap();
        let stats = server.stats().datagram_frames;
        let per_path: Vec<(u32, u64, u64)> = server
            .path_stats()
            .iter()
            .map(|p| {
                let c = &p.counters;
                (
                    p.id.as_u32(),
                    c.datagram_frames_sent,
                    c.datagram_frames_lost,
                )
            })
            .collect();
        let client = pair.client.connection(ch).unwrap();
        let received: Vec<(u32, u64)> = client
            .path_stats()
            .iter()
            .map(|p| (p.id.as_u32(), p.counters.datagram_frames_received))
            .collect();
        println!(
            "seed {seed} {mode:?} {reinjection:?}: {N} datagrams: sent {} acked {} lost {} \
             dropped {}; client got {}; per path (id, sent, lost) {per_path:?}, received \
             {received:?}; reinjected {} B",
            stats.sent,
            stats.acked,
            stats.lost,
            stats.send_dropped,
            got.len(),
            server.stats().reinjected_bytes,
        );
        assert_eq!(
            stats.sent,
            u64::from(N),
            "seed {seed}: frames sent != datagrams"
        );
        assert_eq!(stats.send_dropped, 0, "seed {seed}");
        assert_eq!(
            per_path.iter().map(|p| p.1).sum::<u64>(),
            u64::from(N),
            "seed {seed}: per-path counts"
        );
        for id in [0, 1] {
            let on_path = per_path.iter().find(|p| p.0 == id).map_or(0, |p| p.1);
            assert!(on_path > 0, "seed {seed}: no datagram on path {id}");
        }
        assert!(stats.lost > 0, "seed {seed}: nothing lost on 3 % loss");
        assert_eq!(
            stats.acked + stats.lost,
            stats.sent,
            "seed {seed}: every datagram is acknowledged or lost, once"
        );
        // Received: intact, each at most once, no more than were sent.
        assert!(got.len() <= N as usize && !got.is_empty(), "seed {seed}");
        let mut ids: Vec<u32> = got
            .iter()
            .map(|d| {
                let i = u32::from_be_bytes(d[..4].try_into().unwrap());
                assert_eq!(d, &datagram(i), "seed {seed}: datagram {i} corrupted");
                i
            })
            .collect();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(
            ids.len(),
            got.len(),
            "seed {seed}: a datagram arrived twice"
        );
        assert_eq!(
            client.stats().datagram_frames.received,
            got.len() as u64,
            "seed {seed}"
        );
        // Undelivered ones were all declared lost (more may be: spurious losses).
        assert!(
            stats.lost >= u64::from(N) - got.len() as u64,
            "seed {seed}: {} undelivered, {} declared lost",
            u64::from(N) - got.len() as u64,
            stats.lost
        );
    }
}

/// The redundant scheduler copies each packet's stream data onto the other path, once: with
/// both paths open before the transfer, each carries (about) all of it, and no more than that
/// (the copies used to go back into the shared retransmission queue, where the next packet on
/// the same path took them and copied them again, over and over until acknowledged).
#[test]
fn redundant_copies_each_packet_once_onto_the_other_path() {
    use mpquic_proto::scheduler::SchedulerKind;
    const SIZE: usize = 300_000;
    for (mode, seed) in [(MultipathMode::Mpns, 51), (MultipathMode::Spns, 52)] {
        let server = transport(mode).scheduler(SchedulerKind::Redundant);
        let (mut pair, ch, sid) =
            two_paths_with(transport(mode), server, NetConfig::default(), None, seed);
        // Both paths validated before the server starts sending.
        pair.run_for(Duration::from_millis(300));
        let mut t = Transfer::new(payload(SIZE, 6));
        pair.run_until(Duration::from_secs(30), |p| t.poll(p, ch, sid));
        assert!(
            t.received == t.data,
            "{mode:?}: corrupted or short download"
        );
        let server = pair.server.connection(t.server.unwrap()).unwrap();
        let sent: Vec<u64> = server
            .path_stats()
            .iter()
            .map(|p| p.counters.stream_bytes_sent)
            .collect();
        println!("{mode:?}: stream bytes sent per path {sent:?} for {SIZE}");
        assert_eq!(sent.len(), 2, "{mode:?}");
        for (id, &bytes) in sent.iter().enumerate() {
            assert!(
                bytes >= SIZE as u64 * 9 / 10 && bytes <= SIZE as u64 * 12 / 10,
                "{mode:?}: path {id} carried {bytes} stream bytes of {SIZE}"
            );
        }
    }
}

/// RFC 10069 §5.1: path IDs are never reused, so a connection whose paths come and go needs
/// new ones. Each side allows one more path ID whenever an abandoned path closes (MAX_PATH_ID),
/// so the client can keep replacing a path far beyond the first limit (2 here). Without it,
/// the third path was refused with `PathIdLimit` for good.
#[test]
fn path_ids_are_granted_again_as_abandoned_paths_close() {
    for mode in [MultipathMode::Mpns, MultipathMode::Spns] {
        let mut t = transport(mode);
        t.max_path_id = 2;
        let mut pair = Pair::new(47, t.clone(), t, NetConfig::default());
        let ch = pair.connect();
        pair.run_until(Duration::from_secs(5), |p| {
            p.client.connection(ch).unwrap().is_established()
        });
        for round in 1..=6u32 {
            let id =
                open_second_path(&mut pair, ch).unwrap_or_else(|e| panic!("{mode:?} {round}: {e}"));
            assert_eq!(id, PathId::new(round), "{mode:?}");
            pair.client.after_connection_call(ch);
            pair.run_for(Duration::from_millis(300));
            let (now, conn) = (pair.now, pair.client.connection_mut(ch).unwrap());
            assert!(
                conn.path_stats()
                    .iter()
                    .any(|p| p.id == id && p.validation == Validation::Validated),
                "{mode:?} {round}: path {id} not validated"
            );
            conn.close_path(now, id, 0).expect("abandon");
            pair.client.after_connection_call(ch);
            // Both sides close the path after 3 PTOs and grant a new path ID.
            pair.run_for(Duration::from_secs(2));
        }
        assert!(!pair.client.connection(ch).unwrap().is_closed(), "{mode:?}");
    }
}
