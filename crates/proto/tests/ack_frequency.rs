//! ACK_FREQUENCY (draft-ietf-quic-ack-frequency) between two of our endpoints. The ACK rate a
//! request produces is checked on the paced simulator (crates/lab/tests/ack_frequency.rs): this
//! in-memory network delivers bursts at one instant, and the receiver's flow-control updates
//! carry ACKs, so ACK counts here say little.

mod common;

use common::{payload, NetConfig, Pair};
use mpquic_proto::AckFrequencyRequest;
use mpquic_proto::{Duration, MultipathMode, TransportConfig};

/// Packets the receiver may take before acknowledging, as requested.
const THRESHOLD: u64 = 9;

fn transport(mode: MultipathMode, request: Option<AckFrequencyRequest>) -> TransportConfig {
    let mut t = TransportConfig::default().multipath(mode);
    t.ack.request_ack_frequency = request;
    t
}

/// Upload 2 MB; returns (packets the client sent, ACK frames the server sent).
fn upload(
    mode: MultipathMode,
    request: Option<AckFrequencyRequest>,
    server_min_ack_delay_us: Option<u64>,
) -> (u64, u64) {
    let mut server = transport(mode, None);
    server.ack.min_ack_delay_us = server_min_ack_delay_us;
    let mut pair = Pair::new(5, transport(mode, request), server, NetConfig::default());
    let data = payload(2_000_000, 3);
    let (ch, sh, received) = pair.upload(&data, Duration::from_secs(60));
    assert!(received == data, "{mode:?}: upload not byte-exact");
    let client = pair.client.connection(ch).expect("client").stats();
    let server = pair.server.connection(sh).expect("server").stats();
    (client.packets_sent, server.ack_frames_sent)
}

const REQUEST: AckFrequencyRequest = AckFrequencyRequest {
    ack_eliciting_threshold: THRESHOLD,
    max_ack_delay_us: 25_000,
    reordering_threshold: 0,
};

/// draft-ietf-quic-ack-frequency: a peer that did not advertise min_ack_delay gets no
/// ACK_FREQUENCY (it would have to treat one as a PROTOCOL_VIOLATION); the run is the same as
/// without a request, packet for packet.
#[test]
fn ack_frequency_to_a_peer_without_min_ack_delay_is_not_sent() {
    let plain = upload(MultipathMode::Single, None, None);
    let requested = upload(MultipathMode::Single, Some(REQUEST), None);
    assert_eq!(plain, requested);
}
