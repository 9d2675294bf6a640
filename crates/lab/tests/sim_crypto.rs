//! Issue 19: the simulation-only packet protection (`transport.crypto = "sim"`, not secure)
//! must not change any result. With the same seed, every field of the run JSON is identical
//! with real and with simulated 1-RTT crypto, except the crypto setting itself and the
//! wall-clock time. A packet one byte longer or shorter, a packet dropped by the stand-in
//! AEAD, or a key update at another packet would change byte counts, losses, times or the
//! key-update counters, so this comparison fails on any such difference.
//!
//! Running every quick suite twice is far too slow for a debug test (hundreds of 10 MB
//! runs): each suite contributes four representative runs of its quick list (at 0, 1/4, 1/2
//! and 3/4 of it: different designs, settings and network conditions), with downloads
//! shortened to 3 MB and videos to 8 chunks. Paths, losses, traces, transport settings and seeds are the suite's.

mod common;

use mpquic_lab::{run, ByteSize, CryptoMode, Scenario, Workload};
use mpquic_proto::MultipathMode;
use serde_json::Value;

/// The run JSON without wall-clock time, and the crypto setting it recorded.
fn result_json(s: &Scenario) -> (Value, Value) {
    let r = run(s).unwrap_or_else(|e| panic!("seed {}: scenario rejected: {e}", s.seed));
    let mut v = serde_json::to_value(&r).expect("serialize");
    let obj = v.as_object_mut().expect("object");
    assert!(obj.remove("sim_wall_time_s").is_some());
    let crypto = obj
        .get_mut("scenario")
        .and_then(|s| s.get_mut("transport"))
        .and_then(Value::as_object_mut)
        .and_then(|t| t.remove("crypto"))
        .expect("the run JSON records transport.crypto");
    (v, crypto)
}

/// Runs `s` with real and with simulated crypto and compares the JSON results.
fn assert_same_results(label: &str, s: &Scenario) {
    let mut real = s.clone();
    real.transport.crypto = CryptoMode::Real;
    let mut sim = s.clone();
    sim.transport.crypto = CryptoMode::Sim;
    let (a, crypto_a) = result_json(&real);
    let (b, crypto_b) = result_json(&sim);
    assert_eq!(crypto_a, Value::from("real"), "{label}");
    assert_eq!(crypto_b, Value::from("sim"), "{label}");
    if a != b {
        let a = serde_json::to_string_pretty(&a).expect("json");
        let b = serde_json::to_string_pretty(&b).expect("json");
        let line = a
            .lines()
            .zip(b.lines())
            .position(|(x, y)| x != y)
            .unwrap_or(0);
        panic!(
            "{label} (seed {}): real and simulated crypto differ first at JSON line {line}:\n\
             real: {}\nsim:  {}",
            s.seed,
            a.lines().nth(line).unwrap_or(""),
            b.lines().nth(line).unwrap_or("")
        );
    }
    // The comparison means something only if data moved.
    assert!(
        a["bytes_received"].as_u64().unwrap_or(0) > 0,
        "{label}: nothing was received"
    );
}

/// A smaller version of a suite's run (see the module documentation).
fn shortened(mut s: Scenario) -> Scenario {
    const CAP: u64 = 3_000_000;
    match &mut s.workload {
        Workload::Download(n) => n.0 = n.0.min(CAP),
        Workload::Video(v) => v.chunks = v.chunks.min(8),
        Workload::Requests { .. } | Workload::ShortConnections { .. } => {}
    }
    s
}

#[test]
fn simulated_crypto_gives_identical_results_in_every_suite() {
    for suite in mpquic_lab::suites::all() {
        let runs = suite.runs(true, 1);
        let mut picks: Vec<usize> = (0..4).map(|k| k * runs.len() / 4).collect();
        picks.dedup();
        for i in picks {
            let (id, scenario) = &runs[i];
            assert_same_results(
                &format!("{} {id}", suite.name()),
                &shortened(scenario.clone()),
            );
        }
    }
}

#[test]
fn simulated_crypto_gives_identical_results_across_key_updates_and_losses() {
    let mut s = common::download(
        &[
            "rate=20mbit,rtt=20ms,queue=1bdp,loss=1%",
            "rtt=50ms,queue=1.5bdp,jitter=2ms,up.rate=10mbit,down.trace=gen:lte:3:20s,down.loss=ge:1%,30%",
        ],
        3_000_000,
        MultipathMode::Mpns,
        5,
    );
    // A key update every 300 packets: every generation's stand-in keys must agree, and
    // the updates must happen at the same packets as with the real keys.
    s.transport.config.key_update_interval = Some(300);
    s.record.time_series = true;
    assert_same_results("key updates", &s);
    let mut sim = s.clone();
    sim.transport.crypto = CryptoMode::Sim;
    let r = run(&sim).expect("valid");
    assert!(r.completed, "{:?}", r.error);
    assert!(
        r.sender.key_updates >= 2,
        "key updates happened: {}",
        r.sender.key_updates
    );
    let mut spns = s;
    spns.transport.config.multipath = MultipathMode::Spns;
    assert_same_results("key updates, SPNS", &spns);
}

#[test]
fn simulated_crypto_is_refused_on_real_sockets() {
    let mut s = common::download(&[common::CONEXT_A], 100_000, MultipathMode::Single, 1);
    s.transport.crypto = CryptoMode::Sim;
    let err = mpquic_lab::real::run(&s).expect_err("sim crypto on real sockets");
    assert!(err.to_string().contains("transport.crypto"), "{err}");
}

#[test]
fn crypto_setting_parses_and_is_recorded() {
    let text = r#"
        paths = ["rate=10mbit,rtt=20ms"]
        [workload]
        download = "200KB"
        [transport]
        crypto = "sim"
    "#;
    let s = Scenario::from_toml_str(text, "sim-crypto").expect("valid");
    assert_eq!(s.transport.crypto, CryptoMode::Sim);
    let r = run(&s).expect("valid");
    assert!(r.completed);
    assert_eq!(r.bytes_received, ByteSize(200_000).0);
    let v = serde_json::to_value(&r).expect("json");
    assert_eq!(v["scenario"]["transport"]["crypto"], "sim");
    let bad = text.replace("\"sim\"", "\"fast\"");
    assert!(Scenario::from_toml_str(&bad, "bad").is_err());
}
