//! Issue 19, "certificate compression where it pays": a server whose certificate does not fit
//! its anti-amplification budget (RFC 9000 §8.1: three times the 1,200 bytes the client sent)
//! must wait a round trip for the client's next datagram before it can finish its first
//! flight; compressed (RFC 8879, `transport.cert_compression`) the same certificate fits, and
//! the handshake takes one round trip. Simulated, so the round trips are exact.

mod common;

use common::{download, run_completed};
use mpquic_lab::{RunResult, Scenario};
use mpquic_proto::MultipathMode;

const RTT_S: f64 = 0.1;
const PATH: &str = "rate=10mbit,rtt=100ms,queue=1bdp";
/// A certificate of about 5 kB: 200 subject alternative names besides "localhost".
const LARGE: usize = 200;

fn scenario(mode: MultipathMode, extra_names: usize, compression: bool) -> Scenario {
    let paths: &[&str] = match mode {
        MultipathMode::Single => &[PATH],
        _ => &[PATH, PATH],
    };
    let mut s = download(paths, 200_000, mode, 3);
    s.transport.cert_extra_names = Some(extra_names);
    s.transport.cert_compression = Some(compression);
    s
}

fn handshake_s(r: &RunResult) -> f64 {
    r.handshake_time_s.expect("handshake time")
}

#[test]
fn a_compressed_large_certificate_saves_the_round_trip_the_amplification_limit_costs() {
    for mode in [
        MultipathMode::Single,
        MultipathMode::Mpns,
        MultipathMode::Spns,
    ] {
        let small = run_completed(&scenario(mode, 0, false));
        let plain = run_completed(&scenario(mode, LARGE, false));
        let compressed = run_completed(&scenario(mode, LARGE, true));
        let (small_hs, plain_hs, compressed_hs) = (
            handshake_s(&small),
            handshake_s(&plain),
            handshake_s(&compressed),
        );
        println!(
            "{mode:?}: handshake {small_hs:.4} s small certificate, {plain_hs:.4} s large, \
             {compressed_hs:.4} s large compressed; server sent {} / {} / {} bytes",
            small.sender.bytes_sent, plain.sender.bytes_sent, compressed.sender.bytes_sent
        );
        assert!(small_hs < 1.1 * RTT_S, "{mode:?}: small: {small_hs}");
        // Uncompressed: the second half of the flight waits for the client's ACK.
        assert!(plain_hs > 2.0 * RTT_S, "{mode:?}: large: {plain_hs}");
        assert!(
            compressed_hs < 1.1 * RTT_S,
            "{mode:?}: compressed: {compressed_hs}"
        );
    }
}

#[test]
fn the_keys_are_recorded_and_checked() {
    let r = run_completed(&scenario(MultipathMode::Mpns, 10, true));
    let json = serde_json::to_value(&r.scenario).expect("json");
    assert_eq!(json["transport"]["cert_compression"], true, "{json}");
    assert_eq!(json["transport"]["cert_extra_names"], 10, "{json}");
    // Off and 0 are the defaults and are not echoed: earlier records stay as they were.
    let r = run_completed(&scenario(MultipathMode::Mpns, 0, false));
    let json = serde_json::to_value(&r.scenario).expect("json");
    assert!(
        json["transport"].get("cert_compression").is_none(),
        "{json}"
    );
    assert!(
        json["transport"].get("cert_extra_names").is_none(),
        "{json}"
    );

    let file = "paths = [\"rate=10mbit,rtt=20ms\"]\n[workload]\ndownload = \"1MB\"\n\
                [transport]\ncert_extra_names = 5000\n";
    let err = Scenario::from_toml_str(file, "big.toml").expect_err("5000 names");
    assert!(
        err.to_string().contains("cert_extra_names") && err.to_string().contains("at most 1000"),
        "{err}"
    );
}

#[test]
fn a_compressed_certificate_survives_a_lossy_first_flight() {
    // 10% random loss on both directions: some seeds lose a datagram of the compressed flight
    // or the client's ACK of it; every run still completes its handshake and download.
    const LOSSY: &str = "rate=10mbit,rtt=100ms,queue=1bdp,loss=10%";
    let mut slowest: f64 = 0.0;
    for mode in [MultipathMode::Mpns, MultipathMode::Spns] {
        for seed in 1..=8 {
            let mut s = download(&[LOSSY, PATH], 200_000, mode, seed);
            s.transport.cert_extra_names = Some(LARGE);
            s.transport.cert_compression = Some(true);
            let r = run_completed(&s);
            slowest = slowest.max(handshake_s(&r));
        }
    }
    println!("slowest handshake under 10% loss: {slowest:.3} s");
    // Some seed lost part of the handshake: the test exercised recovery, not only luck.
    assert!(slowest > 1.5 * RTT_S, "no run lost a handshake datagram");
}
