//! Issue 18: with `transport.zero_rtt = true` the client's successive connections resume
//! the session of the previous one and send their requests in 0-RTT packets, which shortens
//! their network time; the run stays deterministic.

mod common;

use common::run_completed;
use serde_json::Value;

/// Three successive connections over two paths, each with a batch of parallel requests
/// (small and large), with `transport.zero_rtt` as given.
fn scenario(mode: &str, zero_rtt: bool) -> mpquic_lab::Scenario {
    let text = format!(
        r#"
        seed = 18
        time_limit = "60s"
        paths = ["rate=20mbit,rtt=40ms,queue=1bdp,loss=0.2%", "rate=8mbit,rtt=90ms,queue=1bdp"]
        [workload]
        requests = {{ sizes = ["2KB", "300KB", "5KB", "40KB", "3KB", "150KB", "1KB"], connections = 3 }}
        [transport]
        multipath = "{mode}"
        {}
        "#,
        if zero_rtt {
            "zero_rtt = true"
        } else {
            "zero_rtt = false"
        }
    );
    mpquic_lab::Scenario::from_toml_str(&text, "zero-rtt").expect("valid")
}

/// The JSON result without the (non-deterministic) wall-clock time.
fn canonical(s: &mpquic_lab::Scenario) -> Value {
    let r = run_completed(s);
    let mut v = serde_json::to_value(&r).expect("serialize");
    let obj = v.as_object_mut().expect("result is an object");
    assert!(obj.remove("sim_wall_time_s").is_some());
    v
}

/// Mean network time (s) of the requests of connection `k`.
fn network_time(v: &Value, k: u64) -> f64 {
    let times: Vec<f64> = v["requests"]
        .as_array()
        .expect("requests")
        .iter()
        .filter(|q| q["connection"] == k)
        .map(|q| {
            q["completion_time_s"].as_f64().expect("completed")
                - q["connection_start_s"].as_f64().expect("start")
        })
        .collect();
    assert!(!times.is_empty());
    times.iter().sum::<f64>() / times.len() as f64
}

fn check_byte_exact(v: &Value) {
    for q in v["requests"].as_array().expect("requests") {
        // The client checks every byte against the pattern: no error and the full size read
        // means a byte-exact response.
        assert!(q["error"].is_null(), "{q}");
        assert_eq!(q["received"], q["size"], "{q}");
    }
    assert_eq!(v["bytes_received"], v["bytes_requested"]);
}

fn resumed_connections_use_0rtt(mode: &str) {
    let on = canonical(&scenario(mode, true));
    let off = canonical(&scenario(mode, false));
    check_byte_exact(&on);
    check_byte_exact(&off);
    let conns = on["connections"].as_array().expect("connections");
    assert_eq!(conns.len(), 3);
    // The first connection has no ticket yet.
    assert_eq!(conns[0]["zero_rtt_packets_sent"], 0, "{}", conns[0]);
    assert!(conns[0].get("zero_rtt_accepted").is_none(), "{}", conns[0]);
    for c in &conns[1..] {
        let sent = c["zero_rtt_packets_sent"].as_u64().expect("recorded");
        assert!(
            sent >= 1,
            "{mode}: no 0-RTT packet on a resumed connection: {c}"
        );
        assert_eq!(c["zero_rtt_accepted"], true, "{mode}: {c}");
    }
    for k in [1, 2] {
        let (with, without) = (network_time(&on, k), network_time(&off, k));
        assert!(
            with < without,
            "{mode}: connection {k}: network time {with} s with 0-RTT, {without} s without"
        );
    }
    // Without the setting nothing about 0-RTT is recorded (old JSON unchanged).
    let text = off.to_string();
    assert!(!text.contains("zero_rtt"), "{mode}: {text}");
}

#[test]
fn mpns_resumed_connections_send_requests_in_0rtt() {
    resumed_connections_use_0rtt("mpns");
}

#[test]
fn spns_resumed_connections_send_requests_in_0rtt() {
    resumed_connections_use_0rtt("spns");
}

#[test]
fn zero_rtt_runs_are_deterministic() {
    let s = scenario("mpns", true);
    let a = serde_json::to_string_pretty(&canonical(&s)).expect("json");
    let b = serde_json::to_string_pretty(&canonical(&s)).expect("json");
    assert!(a == b, "two runs of one 0-RTT scenario differ");
    assert!(a.contains("\"zero_rtt\": true"), "the setting is recorded");
}
