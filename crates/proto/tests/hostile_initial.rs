//! Initials anyone can build: RFC 9001 §5.2 derives the Initial keys from the client's
//! Destination Connection ID alone, so these packets reach frame processing on a server that
//! has never seen the sender. They must not panic it, and the server must stay usable.

mod common;

use bytes::{Bytes, BytesMut};
use common::{addr, NetConfig, Pair};
use mpquic_proto::crypto::testing::{initial_keys, seal_initial};
use mpquic_proto::wire::stream_id::Side;
use mpquic_proto::wire::ConnectionId;
use mpquic_proto::{Duration, TransportConfig};

/// A client Initial carrying `frames`, padded with PADDING to the 1200-byte minimum
/// (RFC 9000 §14.1) and sealed with the Initial keys of `dcid`.
fn sealed_initial(dcid: &[u8], scid: &[u8], frames: &[u8]) -> Vec<u8> {
    let keys = initial_keys(dcid, Side::Client);
    let cids = (
        ConnectionId::new(dcid).unwrap(),
        ConnectionId::new(scid).unwrap(),
    );
    seal_initial(&keys.local, cids, Bytes::new(), 0, frames, 1200).unwrap()
}

#[test]
fn zero_length_crypto_frame_then_a_normal_handshake() {
    let mut pair = Pair::new(
        21,
        TransportConfig::default(),
        TransportConfig::default(),
        NetConfig::default(),
    );
    // CRYPTO (0x06), offset 0, length 0: regression for a division by zero in the crypto
    // stream's reassembly buffer, which was built with a zero defragmentation threshold.
    let datagram = sealed_initial(&[0xab; 8], &[0xcd; 8], &[0x06, 0x00, 0x00]);
    assert_eq!(datagram.len(), 1200);
    let attacker = addr("10.0.0.9:5555");
    let server_addr = pair.server_addr;
    let now = pair.now;
    let handle =
        pair.server
            .handle_datagram(now, server_addr, attacker, BytesMut::from(&datagram[..]));
    assert!(
        handle.is_some(),
        "the Initial was dropped before frame processing, so this test proves nothing"
    );
    // The server goes on serving a real client.
    let ch = pair.connect();
    let server_established = |p: &Pair| {
        p.server
            .handles()
            .into_iter()
            .filter(|&h| p.server.connection(h).unwrap().is_established())
            .count()
    };
    pair.run_until(Duration::from_secs(5), |p| {
        p.client.connection(ch).unwrap().is_established() && server_established(p) > 0
    });
    let established = server_established(&pair);
    assert_eq!(established, 1);
}
