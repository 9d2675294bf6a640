//! Issue 3: the same scenario and seed give an identical JSON result.

mod common;

use common::{download, run_completed};
use mpquic_proto::MultipathMode;

/// The JSON result without the (non-deterministic) wall-clock time.
fn canonical_json(s: &mpquic_lab::Scenario) -> String {
    let r = run_completed(s);
    let mut v = serde_json::to_value(&r).expect("serialize");
    let obj = v.as_object_mut().expect("result is an object");
    assert!(obj.remove("sim_wall_time_s").is_some());
    serde_json::to_string_pretty(&v).expect("serialize")
}

/// Randomness everywhere: Bernoulli and bursty loss, jitter, a generated
/// trace, two paths, time series on.
fn lossy_scenario(seed: u64) -> mpquic_lab::Scenario {
    let mut s = download(
        &[
            "rate=20mbit,rtt=20ms,queue=1bdp,loss=1%",
            "rtt=50ms,queue=1.5bdp,jitter=2ms,up.rate=10mbit,down.trace=gen:lte:3:20s,down.loss=ge:1%,30%",
        ],
        3_000_000,
        MultipathMode::Mpns,
        seed,
    );
    s.record.time_series = true;
    s
}

#[test]
fn same_seed_same_json() {
    for seed in [1, 2] {
        let s = lossy_scenario(seed);
        let a = canonical_json(&s);
        let b = canonical_json(&s);
        if a != b {
            let line = a
                .lines()
                .zip(b.lines())
                .position(|(x, y)| x != y)
                .unwrap_or(0);
            panic!(
                "seed {seed}: two runs differ first at JSON line {line}:\n{}\n{}",
                a.lines().nth(line).unwrap_or(""),
                b.lines().nth(line).unwrap_or("")
            );
        }
        assert!(
            a.contains("\"time_series\""),
            "seed {seed}: series recorded"
        );
    }
}

#[test]
fn the_seed_matters() {
    let a = canonical_json(&lossy_scenario(3));
    let b = canonical_json(&lossy_scenario(4));
    assert_ne!(a, b, "seeds 3 and 4 gave identical runs over lossy links");
}

/// Successive short connections (the SPNS report's A/B test, seed 000):
/// three connections over two lossy paths, each with a batch of parallel
/// requests, one after the other.
fn short_connections_scenario() -> mpquic_lab::Scenario {
    let text = r#"
        seed = 11
        time_limit = "60s"
        paths = ["rate=20mbit,rtt=30ms,queue=1bdp,loss=0.5%", "rate=8mbit,rtt=80ms,queue=1bdp"]
        [workload]
        requests = { sizes = ["2KB", "300KB", "40KB", "1MB", "8KB", "150KB", "3KB"], connections = 3 }
        [transport]
        multipath = "mpns"
    "#;
    mpquic_lab::Scenario::from_toml_str(text, "short-connections").expect("valid")
}

#[test]
fn successive_connections_complete_byte_exact_and_deterministic() {
    let s = short_connections_scenario();
    let a = canonical_json(&s);
    assert_eq!(a, canonical_json(&s), "two runs of one scenario differ");
    let v: serde_json::Value = serde_json::from_str(&a).expect("json");
    let conns = v["connections"].as_array().expect("connections");
    assert_eq!(conns.len(), 3);
    for w in conns.windows(2) {
        let closed = w[0]["closed_s"].as_f64().expect("closed");
        assert!(w[1]["opened_s"].as_f64().expect("opened") >= closed);
        assert!(w[1]["handshake_s"].as_f64().expect("handshake") > closed);
    }
    // Batches of 7 requests over 3 connections: [0, 2), [2, 4), [4, 7).
    let expected_connection = [0, 0, 1, 1, 2, 2, 2];
    let requests = v["requests"].as_array().expect("requests");
    assert_eq!(requests.len(), expected_connection.len());
    for (q, k) in requests.iter().zip(expected_connection) {
        // The client checks every byte against the pattern: no error and
        // the full size read means a byte-exact response.
        assert!(q["error"].is_null(), "{q}");
        assert_eq!(q["received"], q["size"], "{q}");
        assert_eq!(q["connection"], k, "{q}");
        let start = conns[k]["opened_s"].as_f64().expect("opened");
        assert_eq!(q["connection_start_s"].as_f64(), Some(start));
        assert!(q["completion_time_s"].as_f64().expect("done") > start);
    }
    assert_eq!(v["bytes_received"], v["bytes_requested"]);
    let log = v["log"].to_string();
    for k in [1, 2] {
        assert!(log.contains(&format!("connection {k} opened")), "{log}");
    }
}
