//! Malformed and forbidden input: the peer closes with the error code the RFCs prescribe, and
//! nothing panics on random or mutated datagrams.

mod common;

use bytes::BytesMut;
use common::{NetConfig, Pair};
use mpquic_proto::wire::error::TransportErrorCode as Code;
use mpquic_proto::{ConnectionError, ConnectionHandle, Duration, MultipathMode, TransportConfig};
use proptest::prelude::*;

fn transport(mode: MultipathMode) -> TransportConfig {
    TransportConfig::default().multipath(mode)
}

fn established(mode: MultipathMode, seed: u64) -> (Pair, ConnectionHandle, ConnectionHandle) {
    Pair::established(seed, transport(mode), transport(mode), NetConfig::default())
}

/// The client sends `frame`; the server must close with `code`, and the client must learn it.
fn server_rejects(mode: MultipathMode, frame: Vec<u8>, code: Code) {
    server_rejects_with(transport(mode), transport(mode), frame, code)
}

/// [`server_rejects`] with the given client and server configurations.
fn server_rejects_with(
    client: TransportConfig,
    server: TransportConfig,
    frame: Vec<u8>,
    code: Code,
) {
    let (mut pair, ch, sh) = Pair::established(5, client, server, NetConfig::default());
    pair.client
        .connection_mut(ch)
        .unwrap()
        .inject_raw_frame(frame.clone());
    pair.run_until(Duration::from_secs(5), |p| {
        p.server.connection(sh).unwrap().is_closed()
    });
    match pair.server.connection(sh).unwrap().error() {
        Some(ConnectionError::TransportError(e)) => {
            assert_eq!(e.code, code, "frame {frame:02x?}: {e}")
        }
        other => panic!("frame {frame:02x?}: server ended with {other:?}, expected {code}"),
    }
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_closed()
    });
    match pair.client.connection(ch).unwrap().error() {
        Some(ConnectionError::PeerTransportClose { code: c, .. }) => assert_eq!(*c, code.0),
        other => panic!("frame {frame:02x?}: client saw {other:?}"),
    }
}

fn server_ignores(mode: MultipathMode, frame: Vec<u8>) {
    server_ignores_with(transport(mode), transport(mode), frame);
}

/// [`server_ignores`] with the given client and server configurations; returns the pair and
/// the server's handle.
fn server_ignores_with(
    client: TransportConfig,
    server: TransportConfig,
    frame: Vec<u8>,
) -> (Pair, ConnectionHandle) {
    let (mut pair, ch, sh) = Pair::established(6, client, server, NetConfig::default());
    pair.client
        .connection_mut(ch)
        .unwrap()
        .inject_raw_frame(frame.clone());
    pair.run_for(Duration::from_millis(500));
    let server = pair.server.connection(sh).unwrap();
    assert!(
        !server.is_closed(),
        "frame {frame:02x?} closed the connection: {:?}",
        server.error()
    );
    (pair, sh)
}

#[test]
fn unknown_frame_type_is_frame_encoding_error() {
    server_rejects(
        MultipathMode::Single,
        vec![0x21],
        Code::FRAME_ENCODING_ERROR,
    );
}

#[test]
fn truncated_stream_frame_is_frame_encoding_error() {
    // STREAM with LEN bit, stream 0, length 100, only 3 bytes of data.
    server_rejects(
        MultipathMode::Single,
        vec![0x0a, 0x00, 0x40, 0x64, 1, 2, 3],
        Code::FRAME_ENCODING_ERROR,
    );
}

#[test]
fn zero_length_new_connection_id_is_frame_encoding_error() {
    let mut f = vec![0x18, 0x01, 0x00, 0x00];
    f.extend_from_slice(&[0u8; 16]);
    server_rejects(MultipathMode::Single, f, Code::FRAME_ENCODING_ERROR);
}

#[test]
fn max_streams_above_two_to_the_sixty_is_frame_encoding_error() {
    // MAX_STREAMS (bidi) with an 8-byte varint 2^60 + 1.
    let v: u64 = (1 << 60) + 1;
    let mut f = vec![0x12];
    f.extend_from_slice(&(v | (0b11 << 62)).to_be_bytes());
    server_rejects(MultipathMode::Single, f, Code::FRAME_ENCODING_ERROR);
}

/// draft-ietf-quic-ack-frequency §"ACK_FREQUENCY Frame": a Requested Max Ack Delay below our
/// min_ack_delay (1 ms by default) or of 2^14 ms or more is a PROTOCOL_VIOLATION; a valid
/// request is taken, an older sequence number ignored.
#[test]
fn ack_frequency_with_an_invalid_delay_is_protocol_violation() {
    // Type 0x40af, sequence 1, threshold 9, delay 500 us (0x41f4), reordering 0.
    let below_min = vec![0x40, 0xaf, 0x01, 0x09, 0x41, 0xf4, 0x00];
    server_rejects(MultipathMode::Single, below_min, Code::PROTOCOL_VIOLATION);
    // Delay 2^14 ms = 16,384,000 us (4-byte varint 0x80fa_0000).
    let too_long = vec![0x40, 0xaf, 0x01, 0x09, 0x80, 0xfa, 0x00, 0x00, 0x00];
    server_rejects(MultipathMode::Mpns, too_long, Code::PROTOCOL_VIOLATION);
    // Delay 20 ms (0x4e20 -> 2-byte varint 0x8000_4e20 needs 4 bytes).
    let valid = vec![0x40, 0xaf, 0x02, 0x09, 0x80, 0x00, 0x4e, 0x20, 0x00];
    server_ignores(MultipathMode::Spns, valid);
}

/// A DATAGRAM frame (type 0x31, two-byte Length) with `len` bytes of payload: `len + 3` bytes.
fn datagram_frame(len: usize) -> Vec<u8> {
    assert!((64..16384).contains(&len));
    let mut f = vec![0x31, 0x40 | (len >> 8) as u8, len as u8];
    f.resize(3 + len, 0xd7);
    f
}

/// RFC 9221 §3: a DATAGRAM frame to an endpoint that did not advertise max_datagram_frame_size
/// is a PROTOCOL_VIOLATION, in every multipath design.
#[test]
fn datagram_when_not_offered_is_protocol_violation() {
    for mode in [
        MultipathMode::Single,
        MultipathMode::Spns,
        MultipathMode::Mpns,
    ] {
        let server = transport(mode).datagram_receive_buffer(None);
        server_rejects_with(
            transport(mode),
            server,
            datagram_frame(100),
            Code::PROTOCOL_VIOLATION,
        );
    }
}

/// RFC 9221 §3: a DATAGRAM frame larger than the max_datagram_frame_size we sent is a
/// PROTOCOL_VIOLATION; one of exactly that size is delivered. A receive buffer of 100 bytes
/// advertises 100.
#[test]
fn oversize_datagram_is_protocol_violation() {
    let server = |mode| transport(mode).datagram_receive_buffer(Some(100));
    for mode in [MultipathMode::Single, MultipathMode::Mpns] {
        server_rejects_with(
            transport(mode),
            server(mode),
            datagram_frame(98),
            Code::PROTOCOL_VIOLATION,
        );
    }
    let (mut pair, sh) = server_ignores_with(
        transport(MultipathMode::Spns),
        server(MultipathMode::Spns),
        datagram_frame(97),
    );
    let conn = pair.server.connection_mut(sh).unwrap();
    assert_eq!(conn.recv_datagram().map(|d| d.len()), Some(97));
    assert_eq!(conn.stats().datagram_frames.received, 1);
}

#[test]
fn handshake_done_from_client_is_protocol_violation() {
    server_rejects(MultipathMode::Single, vec![0x1e], Code::PROTOCOL_VIOLATION);
}

#[test]
fn stream_errors_have_their_codes() {
    // STREAM on stream 1 (server-initiated bidi, never opened by the server).
    server_rejects(
        MultipathMode::Single,
        vec![0x0a, 0x01, 0x01, 0xaa],
        Code::STREAM_STATE_ERROR,
    );
    // Client bidi stream index 200 (id 800) beyond the limit of 100.
    server_rejects(
        MultipathMode::Single,
        vec![0x0a, 0x43, 0x20, 0x01, 0xaa],
        Code::STREAM_LIMIT_ERROR,
    );
    // Data at offset 64 MB: beyond the stream's flow-control window.
    server_rejects(
        MultipathMode::Single,
        vec![0x0e, 0x00, 0x84, 0x00, 0x00, 0x00, 0x01, 0xaa],
        Code::FLOW_CONTROL_ERROR,
    );
}

#[test]
fn new_connection_ids_beyond_the_limit() {
    let mut frames = Vec::new();
    for seq in 11u8..=18 {
        frames.extend_from_slice(&[0x18, seq, 0x00, 0x08]);
        frames.extend_from_slice(&[seq; 8]);
        frames.extend_from_slice(&[seq; 16]);
    }
    server_rejects(
        MultipathMode::Single,
        frames,
        Code::CONNECTION_ID_LIMIT_ERROR,
    );
}

#[test]
fn multipath_frames_need_negotiation() {
    // PATH_ABANDON (0x3e75) for path 0 on a single-path connection.
    server_rejects(
        MultipathMode::Single,
        vec![0x7e, 0x75, 0x00, 0x00],
        Code::PROTOCOL_VIOLATION,
    );
}

#[test]
fn path_ids_beyond_the_limit_are_protocol_violations() {
    // The server allows path IDs up to 7.
    server_rejects(
        MultipathMode::Mpns,
        vec![0x7e, 0x75, 0x10, 0x00],
        Code::PROTOCOL_VIOLATION,
    );
    // PATH_STATUS_AVAILABLE (0x3e77) for path 9.
    server_rejects(
        MultipathMode::Mpns,
        vec![0x7e, 0x77, 0x09, 0x01],
        Code::PROTOCOL_VIOLATION,
    );
    // MAX_PATH_ID (0x3e7a) below the initial value of 7.
    server_rejects(
        MultipathMode::Mpns,
        vec![0x7e, 0x7a, 0x02],
        Code::PROTOCOL_VIOLATION,
    );
}

#[test]
fn path_ack_for_unknown_path_is_ignored_and_for_unsent_packets_rejected() {
    // PATH_ACK (0x3e) for path 5 (within the limit, never used): silently ignored (RFC 10069 §7).
    server_ignores(
        MultipathMode::Mpns,
        vec![0x3e, 0x05, 0x00, 0x00, 0x00, 0x00],
    );
    // PATH_ACK for path 0 acknowledging packet 1000, never sent: PROTOCOL_VIOLATION.
    server_rejects(
        MultipathMode::Mpns,
        vec![0x3e, 0x00, 0x43, 0xe8, 0x00, 0x00, 0x00],
        Code::PROTOCOL_VIOLATION,
    );
}

#[test]
fn malformed_transport_parameters_are_rejected() {
    // ack_delay_exponent (0x0a) = 21 is invalid (RFC 9000 §18.2).
    for raw in [
        vec![0x0a, 0x01, 21],
        vec![0x01, 0x01, 0x05, 0x01, 0x01, 0x05],
    ] {
        let client = TransportConfig::default().raw_transport_params(raw.clone());
        let mut pair = Pair::new(9, client, TransportConfig::default(), NetConfig::default());
        let ch = pair.connect();
        pair.run_until(Duration::from_secs(10), |p| {
            p.client.connection(ch).unwrap().is_closed()
        });
        match pair.client.connection(ch).unwrap().error() {
            Some(ConnectionError::PeerTransportClose { code, .. }) => {
                assert_eq!(
                    *code,
                    Code::TRANSPORT_PARAMETER_ERROR.0,
                    "params {raw:02x?}"
                )
            }
            other => panic!("params {raw:02x?}: client saw {other:?}"),
        }
    }
}

#[test]
fn application_close_reaches_the_peer() {
    let (mut pair, ch, sh) = established(MultipathMode::Auto, 7);
    let now = pair.now;
    pair.client
        .connection_mut(ch)
        .unwrap()
        .close(now, 42, bytes::Bytes::from_static(b"bye"));
    pair.run_until(Duration::from_secs(5), |p| {
        p.server.connection(sh).unwrap().is_closed()
    });
    assert_eq!(
        pair.server.connection(sh).unwrap().error(),
        Some(&ConnectionError::PeerApplicationClose {
            code: 42,
            reason: "bye".into()
        })
    );
    // Both sides end drained after their closing/draining periods.
    pair.run_until(Duration::from_secs(10), |p| {
        p.client.connection(ch).unwrap().is_drained()
            && p.server.connection(sh).unwrap().is_drained()
    });
}

#[test]
fn idle_timeout_closes_silently() {
    let t = TransportConfig::default().idle_timeout(Duration::from_secs(2));
    let mut pair = Pair::new(8, t.clone(), t, NetConfig::default());
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established()
    });
    pair.run_until(Duration::from_secs(10), |p| {
        p.client.connection(ch).unwrap().is_drained()
    });
    assert_eq!(
        pair.client.connection(ch).unwrap().error(),
        Some(&ConnectionError::TimedOut)
    );
}

#[test]
fn key_updates_keep_the_transfer_going() {
    let t = TransportConfig::default().key_update_interval(Some(100));
    let (mut pair, ch, sh) = {
        let mut pair = Pair::new(11, t.clone(), t, NetConfig::default());
        let ch = pair.connect();
        pair.run_until(Duration::from_secs(5), |p| {
            p.client.connection(ch).unwrap().is_established()
        });
        let sh = pair.server.accept().unwrap();
        (pair, ch, sh)
    };
    let sid = pair.client.connection_mut(ch).unwrap().open_uni().unwrap();
    let data = common::payload(2_000_000, 1);
    let mut written = 0;
    let mut received = Vec::new();
    let mut stream = None;
    pair.run_until(Duration::from_secs(60), |p| {
        let c = p.client.connection_mut(ch).unwrap();
        while written < data.len() {
            match c.write(sid, &data[written..]) {
                Ok(n) => written += n,
                Err(_) => break,
            }
        }
        if written == data.len() {
            let _ = c.finish(sid);
        }
        let s = p.server.connection_mut(sh).unwrap();
        if stream.is_none() {
            stream = s.accept(mpquic_proto::wire::stream_id::Dir::Uni);
        }
        let mut buf = vec![0u8; 65536];
        let Some(id) = stream else { return false };
        loop {
            match s.read(id, &mut buf) {
                Ok(Some(n)) => received.extend_from_slice(&buf[..n]),
                Ok(None) => return true,
                Err(_) => return false,
            }
        }
    });
    assert!(received == data);
    let updates = pair.client.connection(ch).unwrap().stats().key_updates
        + pair.server.connection(sh).unwrap().stats().key_updates;
    assert!(
        updates >= 2,
        "only {updates} key updates in a 2 MB transfer with an interval of 100 packets"
    );
}

#[test]
fn stateless_reset_for_unknown_connection() {
    let (mut pair, ch, _sh) = established(MultipathMode::Single, 12);
    // The server forgets everything (e.g. it restarted with the same reset key).
    for h in pair.server.handles() {
        pair.server.remove(h);
    }
    let sid = pair.client.connection_mut(ch).unwrap().open_uni().unwrap();
    pair.client
        .connection_mut(ch)
        .unwrap()
        .write(sid, &[7u8; 2000])
        .unwrap();
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_drained()
    });
    assert_eq!(
        pair.client.connection(ch).unwrap().error(),
        Some(&ConnectionError::Reset)
    );
}

#[test]
fn version_negotiation_for_unknown_versions() {
    let (mut pair, _ch, _sh) = established(MultipathMode::Single, 13);
    let mut dgram = vec![0xc0, 0x1a, 0x2a, 0x3a, 0x4a, 0x08];
    dgram.extend_from_slice(&[1u8; 8]);
    dgram.push(0x08);
    dgram.extend_from_slice(&[2u8; 8]);
    dgram.resize(1200, 0);
    let (client, server) = (pair.client_addr, pair.server_addr);
    pair.server
        .handle_datagram(pair.now, server, client, BytesMut::from(&dgram[..]));
    let mut buf = Vec::new();
    let t = pair
        .server
        .poll_transmit(pair.now, &mut buf)
        .expect("a version negotiation packet");
    assert_eq!(t.remote, client);
    assert_eq!(&buf[1..5], &[0, 0, 0, 0], "version field of VN is 0");
    assert_eq!(&buf[buf.len() - 4..], &[0, 0, 0, 1], "lists QUIC v1");
}

/// Datagrams captured from a real handshake, for mutation.
fn handshake_datagrams() -> Vec<Vec<u8>> {
    let mut pair = Pair::new(
        14,
        TransportConfig::default(),
        TransportConfig::default(),
        NetConfig::default(),
    );
    let ch = pair.connect();
    let mut out = Vec::new();
    let mut buf = Vec::new();
    while let Some(t) = pair.client.poll_transmit(pair.now, &mut buf) {
        out.push(buf[..t.size].to_vec());
    }
    for d in &out {
        pair.server.handle_datagram(
            pair.now,
            pair.server_addr,
            pair.client_addr,
            BytesMut::from(&d[..]),
        );
    }
    while let Some(t) = pair.server.poll_transmit(pair.now, &mut buf) {
        out.push(buf[..t.size].to_vec());
    }
    let _ = ch;
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_datagrams_never_panic(data in proptest::collection::vec(any::<u8>(), 0..1500)) {
        let (mut pair, _ch, _sh) = established(MultipathMode::Auto, 15);
        let (c, s) = (pair.client_addr, pair.server_addr);
        pair.server.handle_datagram(pair.now, s, c, BytesMut::from(&data[..]));
        pair.client.handle_datagram(pair.now, c, s, BytesMut::from(&data[..]));
        pair.run_for(Duration::from_millis(50));
    }

    #[test]
    fn mutated_handshake_datagrams_never_panic(index in 0usize..8, flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
        let datagrams = handshake_datagrams();
        let mut d = datagrams[index % datagrams.len()].clone();
        for (pos, v) in flips {
            let i = pos % d.len();
            d[i] ^= v;
        }
        let mut pair = Pair::new(16, TransportConfig::default(), TransportConfig::default(), NetConfig::default());
        let _ch = pair.connect();
        let (c, s) = (pair.client_addr, pair.server_addr);
        pair.server.handle_datagram(pair.now, s, c, BytesMut::from(&d[..]));
        pair.client.handle_datagram(pair.now, c, s, BytesMut::from(&d[..]));
        pair.run_for(Duration::from_millis(50));
    }
}

#[test]
fn handshake_with_a_silent_peer_times_out() {
    // Regression: the idle deadline used the backed-off PTO and moved away with every probe.
    let t = TransportConfig::default().idle_timeout(Duration::from_millis(500));
    let mut pair = Pair::new(
        17,
        t,
        TransportConfig::default(),
        NetConfig {
            loss: 1.0,
            ..NetConfig::default()
        },
    );
    let ch = pair.connect();
    pair.run_until(Duration::from_secs(60), |p| {
        p.client.connection(ch).unwrap().is_drained()
    });
    assert_eq!(
        pair.client.connection(ch).unwrap().error(),
        Some(&ConnectionError::TimedOut)
    );
    assert!(pair.now.as_nanos() < 10_000_000_000, "took {:?}", pair.now);
}
