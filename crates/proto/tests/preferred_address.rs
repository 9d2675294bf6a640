//! The server's preferred_address transport parameter (RFC 9000 §18.2, §9.6, §5.1.1; RFC 10069
//! "Path ID and connection IDs"): the client learns the addresses and the CID of sequence 1
//! for path 0, the server never issues sequence 1 again, a path to the advertised address
//! validates, path 0 moves there in every design (and stays where it was when the address does
//! not answer), and a client that sends the parameter is refused.

mod common;

use std::sync::{Arc, Mutex};

use std::net::SocketAddr;

use common::{addr, client_path_events, payload, NetConfig, Pair};
use mpquic_proto::qlog::{QlogConfig, QlogEvent, QlogFrame, QlogSink};
use mpquic_proto::wire::error::TransportErrorCode as Code;
use mpquic_proto::{
    ConnectionError, ConnectionHandle, Duration, MultipathMode, PathError, PathEvent, PathId,
    ServerConfig, Timestamp, TransportConfig, Validation,
};

/// (path ID, sequence number, CID hex) of every NEW_CONNECTION_ID-like frame a server sent.
type Announced = Arc<Mutex<Vec<(u64, u64, String)>>>;

struct CidRecorder(Announced);

impl QlogSink for CidRecorder {
    fn emit(&mut self, _time: Timestamp, event: QlogEvent) {
        let QlogEvent::PacketSent(packet) = event else {
            return;
        };
        for frame in packet.frames {
            if let QlogFrame::NewConnectionId(n) | QlogFrame::PathNewConnectionId(n) = frame {
                let entry = (n.path_id.unwrap_or(0), n.sequence_number, n.connection_id);
                self.0.lock().unwrap().push(entry);
            }
        }
    }
}

fn transport() -> TransportConfig {
    TransportConfig::default().multipath(MultipathMode::Mpns)
}

/// A pair whose server advertises `advertised`, recording the CIDs the server announces.
fn pair_advertising(advertised: &[&str], seed: u64) -> (Pair, Announced) {
    pair_advertising_with(advertised, seed, transport())
}

/// [`pair_advertising`] with both ends on `transport`.
fn pair_advertising_with(
    advertised: &[&str],
    seed: u64,
    transport: TransportConfig,
) -> (Pair, Announced) {
    let announced = Announced::default();
    let sink = announced.clone();
    let server_transport = transport.clone().qlog(Some(QlogConfig::new(move |ctx| {
        ctx.side
            .is_server()
            .then(|| Box::new(CidRecorder(sink.clone())) as Box<dyn QlogSink>)
    })));
    let mut pair = Pair::new(seed, transport, server_transport, NetConfig::default());
    let mut config: ServerConfig = pair.server.server_config().unwrap().as_ref().clone();
    for a in advertised {
        config.set_preferred_address(addr(a));
    }
    config.validate().expect("valid server config");
    pair.server.set_server_config(Some(Arc::new(config)));
    (pair, announced)
}

#[test]
fn client_learns_preferred_address_and_opens_a_path_to_it() {
    let (mut pair, announced) = pair_advertising(&["10.0.1.2:8443", "[2001:db8::1]:8443"], 3);
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established()
    });
    let sh = pair.server.accept().unwrap();
    pair.run_for(Duration::from_millis(200));
    let client = pair.client.connection(ch).unwrap();
    assert_eq!(
        client.peer_preferred_address(),
        vec![addr("10.0.1.2:8443"), addr("[2001:db8::1]:8443")]
    );
    // Only a client learns a preferred address.
    assert!(pair
        .server
        .connection(sh)
        .unwrap()
        .peer_preferred_address()
        .is_empty());
    // Nothing migrated: path 0 still goes to the initial address.
    let path0 = client
        .path_stats()
        .into_iter()
        .find(|p| p.id == PathId::ZERO);
    assert_eq!(path0.unwrap().remote, pair.server_addr);

    // Sequence 1 of path 0 travelled in the transport parameter: the server announces path 0's
    // other CIDs from sequence 2 on, each CID once (a second sequence 1 with another CID would
    // also be a PROTOCOL_VIOLATION at the client, RFC 9000 §19.15).
    let announced = announced.lock().unwrap().clone();
    let path0: Vec<u64> = announced
        .iter()
        .filter(|(path, _, _)| *path == 0)
        .map(|(_, seq, _)| *seq)
        .collect();
    assert!(!path0.is_empty(), "no CIDs announced for path 0");
    assert!(
        path0.iter().all(|&seq| seq >= 2),
        "path 0 sequences {path0:?}"
    );
    let mut cids: Vec<&String> = announced.iter().map(|(_, _, cid)| cid).collect();
    let total = cids.len();
    cids.sort();
    cids.dedup();
    assert_eq!(cids.len(), total, "a CID was announced twice");

    // A second path from another local address to the advertised IPv4 address validates.
    let now = pair.now;
    let second = addr("10.0.0.2:4433");
    let id = pair
        .client
        .connection_mut(ch)
        .unwrap()
        .open_path(now, second, addr("10.0.1.2:8443"))
        .expect("open path");
    pair.run_until(Duration::from_secs(5), |p| {
        let stats = p.client.connection(ch).unwrap().path_stats();
        stats
            .iter()
            .any(|s| s.id == id && s.validation == Validation::Validated)
    });
    let client = pair.client.connection(ch).unwrap();
    assert!(!client.is_closed(), "closed: {:?}", client.error());
}

#[test]
fn no_preferred_address_without_configuration() {
    let (mut pair, announced) = pair_advertising(&[], 4);
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established()
    });
    pair.run_for(Duration::from_millis(200));
    let client = pair.client.connection(ch).unwrap();
    assert!(client.peer_preferred_address().is_empty());
    // Without the parameter, path 0's announced CIDs start at sequence 1.
    let announced = announced.lock().unwrap();
    assert!(announced
        .iter()
        .any(|(path, seq, _)| *path == 0 && *seq == 1));
}

#[test]
fn server_refuses_preferred_address_from_a_client() {
    // preferred_address (0x0d) from a client: TRANSPORT_PARAMETER_ERROR (RFC 9000 §18.2).
    let mut value = Vec::new();
    value.extend_from_slice(&[10, 0, 1, 2, 0x20, 0xfb]); // 10.0.1.2:8443
    value.extend_from_slice(&[0; 18]); // no IPv6 address
    value.push(8);
    value.extend_from_slice(&[7; 8]); // CID
    value.extend_from_slice(&[9; 16]); // stateless reset token
    let mut raw = vec![0x0d, value.len() as u8];
    raw.extend_from_slice(&value);
    let client = transport().raw_transport_params(raw);
    let mut pair = Pair::new(5, client, transport(), NetConfig::default());
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(10), |p| {
        p.client.connection(ch).unwrap().is_closed()
    });
    match pair.client.connection(ch).unwrap().error() {
        Some(ConnectionError::PeerTransportClose { code, .. }) => {
            assert_eq!(*code, Code::TRANSPORT_PARAMETER_ERROR.0)
        }
        other => panic!("client saw {other:?}"),
    }
}

#[test]
fn unreachable_preferred_addresses_are_refused_by_validation() {
    let (pair, _) = pair_advertising(&[], 6);
    for bad in ["0.0.0.0:443", "10.0.1.2:0", "[::]:443"] {
        let mut config: ServerConfig = pair.server.server_config().unwrap().as_ref().clone();
        config.set_preferred_address(addr(bad));
        let err = config.validate().expect_err(bad);
        assert!(
            err.to_string().contains("preferred_address"),
            "{bad}: {err}"
        );
    }
}

const MODES: [MultipathMode; 3] = [
    MultipathMode::Single,
    MultipathMode::Spns,
    MultipathMode::Mpns,
];
const PREFERRED: &str = "10.0.1.2:8443";

/// An established pair whose server advertises [`PREFERRED`]: (pair, client, server).
fn established_advertising(
    seed: u64,
    mode: MultipathMode,
) -> (Pair, ConnectionHandle, ConnectionHandle) {
    established_advertising_these(&[PREFERRED, "[2001:db8::1]:8443"], seed, mode)
}

/// An established pair whose server advertises `advertised`: (pair, client, server).
fn established_advertising_these(
    advertised: &[&str],
    seed: u64,
    mode: MultipathMode,
) -> (Pair, ConnectionHandle, ConnectionHandle) {
    let t = TransportConfig::default().multipath(mode);
    let (mut pair, _) = pair_advertising_with(advertised, seed, t);
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established()
    });
    let sh = pair.server.accept().unwrap();
    pair.run_for(Duration::from_millis(200));
    (pair, ch, sh)
}

/// Path 0's (local, remote) on the client and on the server.
fn path0_tuples(
    pair: &Pair,
    ch: ConnectionHandle,
    sh: ConnectionHandle,
) -> [(SocketAddr, SocketAddr); 2] {
    let tuple = |stats: Vec<mpquic_proto::PathStats>| {
        let p = stats.into_iter().find(|p| p.id == PathId::ZERO).unwrap();
        (p.local, p.remote)
    };
    [
        tuple(pair.client.connection(ch).unwrap().path_stats()),
        tuple(pair.server.connection(sh).unwrap().path_stats()),
    ]
}

/// Upload `len` bytes from the client on a new stream, moving path 0 to the server's
/// preferred address once a third has arrived; returns the move's result.
fn upload_moving_to_preferred(
    pair: &mut Pair,
    ch: ConnectionHandle,
    sh: ConnectionHandle,
    len: usize,
) -> Option<Result<SocketAddr, PathError>> {
    let data = payload(len, 9);
    let mut moved = None;
    let (_, received) = pair.upload_on(ch, Some(sh), &data, Duration::from_secs(60), |p, got| {
        if moved.is_none() && got >= len / 3 {
            let now = p.now;
            let c = p.client.connection_mut(ch).unwrap();
            moved = Some(c.migrate_to_preferred_address(now));
            p.client.after_connection_call(ch);
        }
    });
    assert!(
        received == data,
        "{} of {len} bytes, or content differs",
        received.len()
    );
    moved
}

/// RFC 9000 §9.6: without multipath (and with it) path 0 moves to the server's preferred
/// address of its family in the middle of an upload: validated first, then all packets go
/// there and the server sends from there; the upload completes byte-exact.
#[test]
fn path_0_moves_to_the_preferred_address_in_every_design() {
    for mode in MODES {
        let (mut pair, ch, sh) = established_advertising(31, mode);
        let (client_addr, original) = (pair.client_addr, pair.server_addr);
        let sources = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let log = sources.clone();
        pair.watch = Some(Box::new(move |to_server, src, _, _| {
            if !to_server {
                log.borrow_mut().push(src);
            }
        }));
        let moved = upload_moving_to_preferred(&mut pair, ch, sh, 1_000_000);
        assert_eq!(moved, Some(Ok(addr(PREFERRED))), "{mode:?}");
        let [client, server] = path0_tuples(&pair, ch, sh);
        assert_eq!(client, (client_addr, addr(PREFERRED)), "{mode:?}: client");
        assert_eq!(server, (addr(PREFERRED), client_addr), "{mode:?}: server");
        let events = client_path_events(&mut pair, ch);
        assert!(
            events.contains(&PathEvent::Validated { id: PathId::ZERO }),
            "{mode:?}: {events:?}"
        );
        // RFC 9000 §9.6.2: from the preferred address first only the answer to the client's
        // probe and the server's own challenge, each alone; the server's other packets leave
        // from the original address until the new path is validated.
        let sources = sources.borrow();
        let from_preferred: Vec<usize> = (0..sources.len())
            .filter(|&i| sources[i] == addr(PREFERRED))
            .collect();
        assert!(from_preferred.len() > 2, "{mode:?}");
        let second = from_preferred[1];
        assert!(
            sources[second..].contains(&original),
            "{mode:?}: the original address still sends after the server's challenge"
        );
        assert_eq!(sources.last(), Some(&addr(PREFERRED)), "{mode:?}");
    }
}

/// RFC 9000 §9.6.1: "If path validation fails, the client MUST continue sending all future
/// packets to the server's original IP address." The preferred address is black-holed.
#[test]
fn a_preferred_address_that_does_not_answer_leaves_path_0_where_it_was() {
    for mode in MODES {
        let (mut pair, ch, sh) = established_advertising(32, mode);
        pair.blackholed.push(addr(PREFERRED));
        let moved = upload_moving_to_preferred(&mut pair, ch, sh, 600_000);
        assert_eq!(
            moved,
            Some(Ok(addr(PREFERRED))),
            "{mode:?}: the move started"
        );
        let [client, server] = path0_tuples(&pair, ch, sh);
        assert_eq!(
            client,
            (pair.client_addr, pair.server_addr),
            "{mode:?}: client"
        );
        assert_eq!(
            server,
            (pair.server_addr, pair.client_addr),
            "{mode:?}: server"
        );
        let events = client_path_events(&mut pair, ch);
        assert!(
            events.contains(&PathEvent::Failed { id: PathId::ZERO }),
            "{mode:?}: {events:?}"
        );
    }
}

#[test]
fn a_move_to_the_preferred_address_needs_one_and_a_client() {
    let (mut pair, ch, sh) = established_advertising_these(&[], 33, MultipathMode::Single);
    let now = pair.now;
    let client = pair.client.connection_mut(ch).unwrap();
    assert_eq!(
        client.migrate_to_preferred_address(now),
        Err(PathError::NoPreferredAddress)
    );
    let server = pair.server.connection_mut(sh).unwrap();
    assert_eq!(
        server.migrate_to_preferred_address(now),
        Err(PathError::ServerCannotMigrate)
    );
    // Only an IPv6 address advertised, path 0 on IPv4: none of its family.
    let advertised = ["[2001:db8::1]:8443"];
    let (mut pair, ch, _) = established_advertising_these(&advertised, 34, MultipathMode::Single);
    let now = pair.now;
    let client = pair.client.connection_mut(ch).unwrap();
    assert_eq!(
        client.migrate_to_preferred_address(now),
        Err(PathError::NoPreferredAddress)
    );
}
