//! ACK_FREQUENCY (draft-ietf-quic-ack-frequency) on paced simulated paths: when the server
//! (the data sender) asks for an ACK every tenth ack-eliciting packet, the client's ACK frames
//! follow, in every design; the download stays as fast.

mod common;

use common::{download, run_completed};
use mpquic_proto::AckFrequencyRequest;
use mpquic_proto::MultipathMode;

const PATHS: [&str; 2] = [
    "rate=40mbit,delay=10ms,queue=1bdp",
    "rate=20mbit,delay=20ms,queue=1bdp",
];

/// (sender packets per receiver ACK frame, goodput Mbit/s) of a 10 MB download.
fn run(mode: MultipathMode, request: Option<AckFrequencyRequest>) -> (f64, f64) {
    let paths = if mode == MultipathMode::Single {
        &PATHS[..1]
    } else {
        &PATHS[..]
    };
    let mut s = download(paths, 10_000_000, mode, 3);
    s.transport.config.ack.request_ack_frequency = request;
    let r = run_completed(&s);
    let per_ack = r.sender.packets_sent as f64 / r.receiver.ack_frames_sent.max(1) as f64;
    (per_ack, r.goodput_mbps)
}

#[test]
fn acks_follow_the_requested_threshold_in_every_design() {
    let request = AckFrequencyRequest {
        ack_eliciting_threshold: 9,
        max_ack_delay_us: 25_000,
        reordering_threshold: 0,
    };
    for mode in [
        MultipathMode::Single,
        MultipathMode::Spns,
        MultipathMode::Mpns,
    ] {
        let (default_per_ack, default_goodput) = run(mode, None);
        let (per_ack, goodput) = run(mode, Some(request));
        // RFC 9000 §13.2.2: an ACK at least every second ack-eliciting packet.
        assert!(
            default_per_ack < 2.6,
            "{mode:?}: {default_per_ack:.2} packets per ACK by default"
        );
        // Requested: an ACK after more than 9 ack-eliciting packets, i.e. every 10th (a few more
        // ACKs: handshake, timer, tail; the sender's count also has its own ACK-only packets).
        assert!(
            (8.0..=11.0).contains(&per_ack),
            "{mode:?}: {per_ack:.2} packets per ACK when asked for one per 10"
        );
        assert!(
            goodput > 0.9 * default_goodput,
            "{mode:?}: {goodput:.1} Mbit/s with the request, {default_goodput:.1} without"
        );
    }
}

/// With a request whose Reordering Threshold is RFC 9000's 1 (an immediate ACK for every packet
/// that arrives out of order), a path that reorders makes the receiver acknowledge almost every
/// packet. Once reordering raised the sender's packet threshold, the sender asks for that
/// threshold instead (draft-ietf-quic-ack-frequency, "Setting the Reordering Threshold Value"),
/// and the receiver's ACKs fall back towards the requested ack-eliciting threshold.
#[test]
fn a_raised_packet_threshold_is_requested_and_saves_acks() {
    let request = AckFrequencyRequest {
        ack_eliciting_threshold: 9,
        max_ack_delay_us: 25_000,
        reordering_threshold: 1,
    };
    let run = |max_packet_threshold: u64| {
        let mut s = download(
            &["rate=40mbit,delay=10ms,queue=1bdp,jitter=2ms,reorder=true"],
            10_000_000,
            MultipathMode::Single,
            3,
        );
        s.transport.config.ack.request_ack_frequency = Some(request);
        s.transport.config.max_packet_threshold = max_packet_threshold;
        let r = run_completed(&s);
        let per_ack = r.sender.packets_sent as f64 / r.receiver.ack_frames_sent.max(1) as f64;
        (per_ack, r.goodput_mbps)
    };
    let (fixed_per_ack, fixed_goodput) = run(3);
    let (adaptive_per_ack, adaptive_goodput) = run(mpquic_proto::DEFAULT_MAX_PACKET_THRESHOLD);
    eprintln!(
        "packets per ACK: fixed {fixed_per_ack:.2} ({fixed_goodput:.1} Mbit/s), adaptive \
         {adaptive_per_ack:.2} ({adaptive_goodput:.1} Mbit/s)"
    );
    assert!(
        fixed_per_ack < 3.0,
        "{fixed_per_ack:.2} packets per ACK with the threshold fixed: reordering should \
         trigger immediate ACKs"
    );
    assert!(
        adaptive_per_ack > 2.0 * fixed_per_ack,
        "{adaptive_per_ack:.2} packets per ACK adaptive, {fixed_per_ack:.2} fixed"
    );
    assert!(
        adaptive_goodput >= fixed_goodput,
        "{adaptive_goodput:.1} Mbit/s adaptive, {fixed_goodput:.1} fixed"
    );
}
