//! The adaptive loss-detection thresholds (RFC 9002 §6.1.1, §6.1.2): on a path that reorders
//! packets by more than kPacketThreshold packets, or by more than an eighth of its RTT, losses
//! declared by those thresholds prove spurious; the path's thresholds then rise, and later
//! reordering no longer resends data or shrinks the window.

mod common;

use common::{payload, NetConfig, Pair};
use mpquic_proto::{
    Duration, TransportConfig, DEFAULT_MAX_PACKET_THRESHOLD, DEFAULT_MAX_TIME_THRESHOLD,
};

/// What an upload over a jittery network (nothing dropped) left on the client's path.
struct Outcome {
    spurious: u64,
    by_time: u64,
    lost: u64,
    threshold: u64,
    time_threshold: f64,
    virtual_time: Duration,
}

/// Both thresholds fixed at RFC 9002's values.
const FIXED: (u64, f64) = (3, 1.125);
/// The defaults: both adaptive.
const ADAPTIVE: (u64, f64) = (DEFAULT_MAX_PACKET_THRESHOLD, DEFAULT_MAX_TIME_THRESHOLD);

/// Upload `len` bytes from a client with the maximum (packet, time) thresholds `max` over a
/// network whose packets take 10 ms plus up to `jitter` (uniform): reordering, but no loss.
fn upload_with_jitter(seed: u64, max: (u64, f64), jitter_ms: u64, len: usize) -> Outcome {
    let net = NetConfig {
        jitter: Duration::from_millis(jitter_ms),
        ..NetConfig::default()
    };
    let client = TransportConfig::default()
        .max_packet_threshold(max.0)
        .max_time_threshold(max.1);
    let mut pair = Pair::new(seed, client, TransportConfig::default(), net);
    let data = payload(len, seed as u8);
    let start = pair.now;
    let (ch, _, received) = pair.upload(&data, Duration::from_secs(120));
    assert!(
        received == data,
        "seed {seed}: the upload arrived short or corrupted"
    );
    let conn = pair.client.connection(ch).expect("client connection");
    let path = &conn.path_stats()[0];
    Outcome {
        spurious: path.counters.spurious_losses,
        by_time: path.counters.time_threshold_spurious,
        lost: path.counters.packets_lost,
        threshold: path.packet_threshold,
        time_threshold: path.time_threshold,
        virtual_time: pair.now - start,
    }
}

#[test]
fn reordering_raises_the_thresholds_and_ends_spurious_losses() {
    for seed in 1..4 {
        let fixed = upload_with_jitter(seed, FIXED, 4, 1_500_000);
        let adaptive = upload_with_jitter(seed, ADAPTIVE, 4, 1_500_000);
        // Nothing is dropped: every loss declared is spurious (those whose late ACK came
        // after the transfer's end, or after the record of the loss expired, are not counted).
        assert!(fixed.spurious * 10 >= fixed.lost * 9, "seed {seed}");
        assert!(adaptive.spurious * 10 >= adaptive.lost * 9, "seed {seed}");
        assert_eq!(
            fixed.threshold, 3,
            "seed {seed}: max 3 keeps kPacketThreshold"
        );
        assert!(
            fixed.spurious >= 20,
            "seed {seed}: 4 ms of jitter should reorder past 3 packets ({} spurious)",
            fixed.spurious
        );
        assert!(
            adaptive.threshold > 3 && adaptive.threshold <= DEFAULT_MAX_PACKET_THRESHOLD,
            "seed {seed}: threshold {}",
            adaptive.threshold
        );
        assert!(
            adaptive.time_threshold > 1.125 && adaptive.time_threshold <= 2.0,
            "seed {seed}: time threshold {}",
            adaptive.time_threshold
        );
        assert!(
            adaptive.by_time * 4 <= fixed.by_time,
            "seed {seed}: {} time-threshold spurious losses adaptive, {} fixed",
            adaptive.by_time,
            fixed.by_time
        );
        assert!(
            adaptive.spurious * 4 <= fixed.spurious,
            "seed {seed}: {} spurious losses with the adaptive threshold, {} with 3",
            adaptive.spurious,
            fixed.spurious
        );
        eprintln!(
            "seed {seed}: fixed {} spurious ({} by time) in {:?}; adaptive {} spurious ({} by \
             time, thresholds {} packets, {} RTT) in {:?}",
            fixed.spurious,
            fixed.by_time,
            fixed.virtual_time,
            adaptive.spurious,
            adaptive.by_time,
            adaptive.threshold,
            adaptive.time_threshold,
            adaptive.virtual_time
        );
    }
}

#[test]
fn a_path_without_reordering_keeps_the_rfc_thresholds() {
    let outcome = upload_with_jitter(7, ADAPTIVE, 0, 500_000);
    assert_eq!(outcome.spurious, 0);
    assert_eq!(outcome.threshold, 3);
    assert_eq!(outcome.time_threshold, 1.125);
}
