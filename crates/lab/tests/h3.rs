//! Issue 17: the requests workload over HTTP/3 on the simulator (`protocol = "h3"`):
//! parallel `GET /bytes/<size>` requests on one connection through the h3 crate, over
//! two paths with MPNS and SPNS, byte-exact and deterministic.

mod common;

use common::run_completed;
use mpquic_lab::h3sim::Protocol;
use mpquic_lab::{RunResult, Scenario};

/// Five parallel requests of mixed sizes, 2 KB .. 1 MB.
const SIZES: [u64; 5] = [2_048, 1_048_576, 16_384, 262_144, 65_536];

fn scenario(mode: &str, protocol: &str, connections: usize, seed: u64) -> Scenario {
    let sizes: Vec<String> = SIZES.iter().map(|s| format!("\"{s}B\"")).collect();
    let text = format!(
        r#"
        seed = {seed}
        time_limit = "60s"
        paths = ["rate=20mbit,rtt=20ms,queue=1bdp", "rate=10mbit,rtt=50ms,queue=1bdp,loss=0.5%"]
        [workload]
        requests = {{ sizes = [{}], connections = {connections}, protocol = "{protocol}" }}
        [transport]
        multipath = "{mode}"
        "#,
        sizes.join(", ")
    );
    Scenario::from_toml_str(&text, "<h3 test>").expect("valid scenario")
}

/// Every request completed with exactly its size; returns the result.
fn check_complete(s: &Scenario) -> RunResult {
    let r = run_completed(s);
    assert_eq!(r.requests.len(), SIZES.len());
    for (q, size) in r.requests.iter().zip(SIZES) {
        assert_eq!(q.size, size);
        assert_eq!(q.received, size, "{q:?}");
        assert_eq!(q.error, None, "{q:?}");
        assert!(q.completion_time_s.is_some(), "{q:?}");
    }
    assert_eq!(r.bytes_received, SIZES.iter().sum::<u64>());
    r
}

/// The JSON result without the (non-deterministic) wall-clock time.
fn canonical_json(r: &RunResult) -> String {
    let mut v = serde_json::to_value(r).expect("serialize");
    let obj = v.as_object_mut().expect("result is an object");
    assert!(obj.remove("sim_wall_time_s").is_some());
    serde_json::to_string_pretty(&v).expect("serialize")
}

#[test]
fn parallel_requests_over_h3_complete_on_two_paths() {
    for mode in ["mpns", "spns"] {
        let s = scenario(mode, "h3", 1, 5);
        assert_eq!(s.workload.protocol(), Protocol::H3);
        let r = check_complete(&s);
        let used = r.paths.iter().filter(|p| p.bytes_sent > 0).count();
        assert!(used >= 2, "{mode}: {} paths carried data", used);
        // The result says which protocol ran.
        let json = canonical_json(&r);
        assert!(json.contains("\"protocol\": \"h3\""), "{mode}");
        assert!(
            r.scenario.workload.to_string().ends_with("over HTTP/3"),
            "{}",
            r.scenario.workload
        );
    }
}

#[test]
fn short_connections_over_h3_complete() {
    let r = check_complete(&scenario("spns", "h3", 2, 9));
    let conns: Vec<usize> = r.requests.iter().map(|q| q.connection).collect();
    assert_eq!(conns, [0, 0, 1, 1, 1]);
    let second = r.requests[2].connection_start_s;
    assert!(second > 0.0);
    for q in &r.requests[2..] {
        assert_eq!(q.connection_start_s, second);
        assert!(q.completion_time_s.expect("completed") > second);
    }
}

#[test]
fn h3_runs_are_deterministic() {
    for mode in ["mpns", "spns"] {
        let s = scenario(mode, "h3", 1, 11);
        let a = canonical_json(&check_complete(&s));
        let b = canonical_json(&check_complete(&s));
        assert!(a == b, "{mode}: two runs with the same seed differ");
    }
}

#[test]
fn custom_protocol_is_the_default_and_not_echoed() {
    let explicit = scenario("mpns", "custom", 1, 5);
    let text = explicit.to_toml().expect("toml");
    assert!(!text.contains("protocol"), "{text}");
    assert_eq!(explicit.workload.protocol(), Protocol::Custom);
    let r = check_complete(&explicit);
    assert!(!canonical_json(&r).contains("\"protocol\""));
}

#[test]
fn unknown_protocols_are_errors() {
    let text = r#"
        paths = ["rate=20mbit,rtt=20ms"]
        [workload]
        requests = { sizes = ["2KB"], protocol = "h2" }
    "#;
    let e = Scenario::from_toml_str(text, "<h3 test>")
        .expect_err("h2 is not a protocol")
        .to_string();
    assert!(e.contains("h2") && e.contains("h3"), "{e}");
}

#[test]
fn sim_command_runs_an_h3_scenario_file() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("h3.toml");
    let out = dir.path().join("h3.json");
    std::fs::write(
        &file,
        r#"
        seed = 3
        paths = ["rate=10mbit,rtt=20ms", "rate=5mbit,rtt=40ms"]
        [workload]
        requests = { sizes = ["2KB", "300KB", "40KB"], protocol = "h3" }
        [transport]
        multipath = "mpns"
        "#,
    )
    .expect("write scenario");
    let args = mpquic_lab::SimArgs {
        scenario: Some(file),
        json: Some(out.clone()),
        quiet: true,
        ..mpquic_lab::SimArgs::default()
    };
    mpquic_lab::sim_command(args).expect("run");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("JSON")).expect("valid JSON");
    assert_eq!(v["completed"], true);
    assert_eq!(v["bytes_received"], 342_000);
    assert_eq!(v["scenario"]["workload"]["requests"]["protocol"], "h3");
}

#[test]
fn real_runs_refuse_h3() {
    let e = mpquic_lab::real::run(&scenario("mpns", "h3", 1, 1))
        .expect_err("HTTP/3 runs are simulator-only")
        .to_string();
    assert!(e.contains("HTTP/3"), "{e}");
}
