//! DATAGRAM frames (RFC 9221) between two in-memory endpoints on one path: negotiation, the
//! size limit, both buffers, and delivery behind a stream in the other direction. The
//! two-path lossy run is in `multipath.rs` (it shares that file's path set-up).

mod common;

use bytes::Bytes;
use common::{payload, NetConfig, Pair};
use mpquic_proto::wire::stream_id::Dir;
use mpquic_proto::{
    ConnectionHandle, Duration, Event, MultipathMode, PathId, SendDatagramError, TransportConfig,
};

fn transport() -> TransportConfig {
    TransportConfig::default().multipath(MultipathMode::Auto)
}

fn established(
    client: TransportConfig,
    server: TransportConfig,
) -> (Pair, ConnectionHandle, ConnectionHandle) {
    Pair::established(11, client, server, NetConfig::default())
}

/// Datagram `i` of `len` bytes: its index in the first four bytes, then a pattern.
fn datagram(i: u32, len: usize) -> Bytes {
    let mut d = payload(len.max(4), i as u8);
    d[..4].copy_from_slice(&i.to_be_bytes());
    d.truncate(len);
    Bytes::from(d)
}

/// Everything the server's connection has received, and how many DatagramReceived events it
/// reported.
fn drain_server(pair: &mut Pair, sh: ConnectionHandle) -> (Vec<Bytes>, usize) {
    let conn = pair.server.connection_mut(sh).unwrap();
    let mut events = 0;
    while let Some(e) = conn.poll_event() {
        events += usize::from(e == Event::DatagramReceived);
    }
    let mut got = Vec::new();
    while let Some(d) = conn.recv_datagram() {
        got.push(d);
    }
    (got, events)
}

/// Defaults offer datagrams both ways; the largest size the API reports goes through in one
/// packet, one byte more is refused.
#[test]
fn datagrams_of_every_size_up_to_the_maximum_arrive_in_order() {
    // A fixed 1350-byte datagram size (no path MTU discovery), for the exact figure below.
    let fixed = transport().mtu_discovery(None);
    let (mut pair, ch, sh) = established(fixed.clone(), fixed);
    let client = pair.client.connection_mut(ch).unwrap();
    let max = client
        .max_datagram_size(None)
        .expect("the server offered datagrams");
    // 1350-byte UDP payload - (1 + 8-byte CID + 4-byte packet number) - 16-byte tag: 1321
    // bytes of frames; a 1318-byte datagram takes 1 + 2 + 1318.
    assert_eq!(max, 1318);
    assert_eq!(client.max_datagram_size(Some(PathId::ZERO)), Some(max));
    assert_eq!(
        client.max_datagram_size(Some(PathId::new(9))),
        None,
        "unknown path"
    );
    assert_eq!(
        client.send_datagram(datagram(0, max + 1)),
        Err(SendDatagramError::TooLarge)
    );
    let sizes = [0, 1, 4, 63, 64, 500, 1200, max - 1, max];
    for (i, &len) in sizes.iter().enumerate() {
        client.send_datagram(datagram(i as u32, len)).unwrap();
    }
    pair.run_for(Duration::from_millis(200));
    let (got, events) = drain_server(&mut pair, sh);
    assert_eq!(
        events, 1,
        "one event while the queue went from empty to non-empty"
    );
    let lens: Vec<usize> = got.iter().map(|d| d.len()).collect();
    assert_eq!(lens, sizes.to_vec());
    for (i, d) in got.iter().enumerate() {
        if d.len() >= 4 {
            assert_eq!(d, &datagram(i as u32, d.len()));
        }
    }
    let stats = pair.client.connection(ch).unwrap().stats().datagram_frames;
    assert_eq!(stats.sent, sizes.len() as u64);
    assert_eq!(stats.acked, sizes.len() as u64);
    assert_eq!(stats.lost, 0);
    let server = pair.server.connection(sh).unwrap().stats().datagram_frames;
    assert_eq!(server.received, sizes.len() as u64);
    assert_eq!(server.bytes_received, sizes.iter().sum::<usize>() as u64);
}

/// RFC 9221 §3: without a receive buffer we neither offer nor send datagrams (quinn's
/// `Disabled`), and the peer sees no support (`UnsupportedByPeer`).
#[test]
fn disabled_locally_means_unsupported_for_the_peer() {
    let off = transport().datagram_receive_buffer(None);
    let (mut pair, ch, sh) = established(off, transport());
    let client = pair.client.connection_mut(ch).unwrap();
    assert_eq!(
        client.send_datagram(Bytes::from_static(b"x")),
        Err(SendDatagramError::Disabled)
    );
    let server = pair.server.connection_mut(sh).unwrap();
    assert_eq!(server.max_datagram_size(None), None);
    assert_eq!(
        server.send_datagram(Bytes::from_static(b"x")),
        Err(SendDatagramError::UnsupportedByPeer)
    );
}

/// A full receive buffer drops its oldest datagrams; a full send buffer too.
#[test]
fn full_buffers_drop_the_oldest_datagrams() {
    let small_rx = transport().datagram_receive_buffer(Some(1000));
    let small_tx = transport().datagram_send_buffer(1000);
    // Receive side: five 300-byte datagrams, unread: the newest three fit.
    let (mut pair, ch, sh) = established(transport(), small_rx);
    for i in 0..5 {
        let client = pair.client.connection_mut(ch).unwrap();
        client.send_datagram(datagram(i, 300)).unwrap();
        pair.run_for(Duration::from_millis(5));
    }
    pair.run_for(Duration::from_millis(100));
    let (got, _) = drain_server(&mut pair, sh);
    let ids: Vec<u8> = got.iter().map(|d| d[3]).collect();
    assert_eq!(ids, vec![2, 3, 4]);
    let stats = pair.server.connection(sh).unwrap().stats().datagram_frames;
    assert_eq!((stats.received, stats.recv_dropped), (5, 2));

    // Send side: five queued before any packet goes out: the oldest two are dropped unsent.
    let (mut pair, ch, sh) = established(small_tx, transport());
    let client = pair.client.connection_mut(ch).unwrap();
    assert_eq!(
        client.send_datagram(datagram(9, 1001)),
        Err(SendDatagramError::TooLarge)
    );
    for i in 0..5 {
        client.send_datagram(datagram(i, 300)).unwrap();
    }
    assert_eq!(client.datagram_send_buffer_space(), 100);
    pair.run_for(Duration::from_millis(100));
    let (got, _) = drain_server(&mut pair, sh);
    let ids: Vec<u8> = got.iter().map(|d| d[3]).collect();
    assert_eq!(ids, vec![2, 3, 4]);
    let stats = pair.client.connection(ch).unwrap().stats().datagram_frames;
    assert_eq!((stats.sent, stats.send_dropped), (3, 2));
}

/// Maximum-size datagrams from a client that uploads and downloads at once, so that many of
/// its packets carry an ACK, which leaves no room for such a datagram: every datagram arrives,
/// intact and in order, while both transfers run. (A datagram held back by an ACK goes first in
/// the next data packet; in this simulation the next packet rarely has an ACK anyway, so the
/// test also passes without that rule: it checks delivery, not the rule.)
#[test]
fn maximum_size_datagrams_are_not_starved_by_acks() {
    let (mut pair, ch, sh) = established(transport(), transport());
    let data = payload(8_000_000, 7);
    let client = pair.client.connection_mut(ch).unwrap();
    let down = client.open_bi().unwrap();
    client.write(down, b"GET").unwrap();
    let up = client.open_uni().unwrap();
    let max = client.max_datagram_size(None).unwrap();
    pair.run_for(Duration::from_millis(50));
    let server = pair.server.connection_mut(sh).unwrap();
    let server_sid = server.accept(Dir::Bi).expect("request stream");
    let (mut written, mut uploaded, mut sent) = (0, 0, 0u32);
    let mut received = Vec::new();
    let mut buf = vec![0u8; 65536];
    let (mut download, mut upload) = (0, 0);
    let mut server_up = None;
    pair.run_until(Duration::from_secs(30), |p| {
        let s = p.server.connection_mut(sh).unwrap();
        while written < data.len() {
            match s.write(server_sid, &data[written..]) {
                Ok(n) if n > 0 => written += n,
                _ => break,
            }
        }
        while let Some(d) = s.recv_datagram() {
            received.push(d);
        }
        server_up = server_up.or_else(|| s.accept(Dir::Uni));
        while let Some(Ok(Some(n))) = server_up.map(|id| s.read(id, &mut buf)) {
            upload += n;
        }
        let c = p.client.connection_mut(ch).unwrap();
        while let Ok(Some(n)) = c.read(down, &mut buf) {
            download += n;
        }
        while uploaded < data.len() {
            match c.write(up, &data[uploaded..]) {
                Ok(n) if n > 0 => uploaded += n,
                _ => break,
            }
        }
        // One maximum-size datagram per 5 ms once both transfers are under way.
        let started = download > 0 && upload > 0;
        if sent < 20 && started && p.now.as_nanos() / 5_000_000 > u64::from(sent) {
            c.send_datagram(datagram(sent, max)).unwrap();
            sent += 1;
        }
        sent == 20 && received.len() == 20
    });
    assert!(
        download < data.len() && upload < data.len(),
        "a transfer ended before the datagrams arrived ({download} B down, {upload} B up)"
    );
    for (i, d) in received.iter().enumerate() {
        assert_eq!(d, &datagram(i as u32, max));
    }
}
