//! Issue 15: handshake racing over the client's interfaces (`transport.race_paths`,
//! `mpquic_lab::race`). The first connection to complete its handshake is kept: its path is
//! path 0, the other interfaces become further paths, the losers are closed.

mod common;

use common::{download, path, run_completed, run_ok};
use mpquic_lab::{RunResult, Scenario};
use mpquic_proto::MultipathMode;

const SEED: u64 = 7;
const MB2: u64 = 2_000_000;
/// A slow path with a long RTT, listed first (interface 0).
const SLOW: &str = "rate=1mbit,rtt=200ms,queue=1bdp";
/// A fast path with a short RTT (interface 1).
const FAST: &str = "rate=40mbit,rtt=20ms,queue=1bdp";

fn raced(paths: &[&str], mode: MultipathMode, race: bool) -> Scenario {
    let mut s = download(paths, MB2, mode, SEED);
    s.transport.race_paths = race.then_some(true);
    s
}

fn logged(r: &RunResult, what: &str) -> bool {
    r.log
        .iter()
        .any(|e| e.side == "client" && e.event.what.contains(what))
}

#[test]
fn the_fast_interface_wins_and_becomes_path_0() {
    for mode in [MultipathMode::Mpns, MultipathMode::Spns] {
        let plain = run_completed(&raced(&[SLOW, FAST], mode, false));
        let r = run_completed(&raced(&[SLOW, FAST], mode, true));
        let hs = r.handshake_time_s.expect("handshake time");
        let plain_hs = plain.handshake_time_s.expect("handshake time");
        println!(
            "{mode:?}: handshake {hs:.3} s raced vs {plain_hs:.3} s from interface 0; \
             completion {:.3} s vs {:.3} s",
            r.completion_time_s.unwrap_or(f64::NAN),
            plain.completion_time_s.unwrap_or(f64::NAN)
        );
        assert!(
            logged(&r, "handshake race won by interface 1"),
            "{mode:?}: {:?}",
            r.log
        );
        assert!(!logged(&plain, "race"), "{mode:?}: no race without the key");
        // The fast path's handshake (1 RTT of 20 ms plus transmission) beats the slow one's
        // (200 ms); without racing the handshake runs on the slow path.
        assert!(hs < 0.1, "{mode:?}: raced handshake took {hs} s");
        assert!(
            plain_hs > 0.2,
            "{mode:?}: plain handshake took {plain_hs} s"
        );
        assert!(
            r.completion_time_s < plain.completion_time_s,
            "{mode:?}: racing did not finish sooner"
        );
        // Path 0 is the fast interface's, and the slow interface was opened as a path.
        assert_eq!(path(&r, 0).interface, Some(1), "{mode:?}: {:?}", r.paths);
        assert!(
            r.paths.iter().any(|p| p.interface == Some(0)),
            "{mode:?}: the slow interface was not opened as a path: {:?}",
            r.paths
        );
        assert_eq!(r.connections.len(), 1, "{mode:?}: one client connection");
    }
}

#[test]
fn a_race_on_a_dead_interface_still_connects() {
    // Interface 0 drops everything: without racing the handshake never completes; with it,
    // interface 1 wins and the download completes byte-exact (run_completed checks the bytes).
    let dead = "rate=10mbit,rtt=20ms,queue=1bdp,loss=100%";
    let alive = "rate=10mbit,rtt=30ms,queue=1bdp";
    let mut plain = raced(&[dead, alive], MultipathMode::Mpns, false);
    plain.time_limit = mpquic_lab::SimDuration(mpquic_netsim::time::ms(5_000));
    assert!(!run_ok(&plain).completed, "no handshake over a dead path");
    let r = run_completed(&raced(&[dead, alive], MultipathMode::Mpns, true));
    assert!(
        logged(&r, "handshake race won by interface 1"),
        "{:?}",
        r.log
    );
    assert_eq!(r.bytes_received, MB2);
}

#[test]
fn when_interface_0_is_faster_it_wins_and_the_run_barely_changes() {
    let plain = run_completed(&raced(&[FAST, SLOW], MultipathMode::Mpns, false));
    let r = run_completed(&raced(&[FAST, SLOW], MultipathMode::Mpns, true));
    assert!(
        logged(&r, "handshake race won by interface 0"),
        "{:?}",
        r.log
    );
    assert_eq!(path(&r, 0).interface, Some(0));
    assert_eq!(r.handshake_time_s, plain.handshake_time_s);
    // The only difference is the losing handshake on the slow interface: its packets count
    // in the server's figures, and the transfer ends within 2 % of the unraced one.
    let (t, t0) = (
        r.completion_time_s.expect("time"),
        plain.completion_time_s.expect("time"),
    );
    println!(
        "raced {t:.4} s, plain {t0:.4} s; server packets {} vs {}",
        r.sender.packets_sent, plain.sender.packets_sent
    );
    assert!((t / t0 - 1.0).abs() < 0.02, "raced {t} s vs {t0} s");
}

#[test]
fn racing_is_recorded_and_checked() {
    let s = raced(&[SLOW, FAST], MultipathMode::Mpns, true);
    let text = s.to_toml().expect("toml");
    assert!(text.contains("race_paths = true"), "{text}");
    let back = Scenario::from_toml_str(&text, "race.toml").expect("reads back");
    assert!(back.transport.race_paths());
    let r = run_completed(&s);
    let json = serde_json::to_value(&r).expect("json");
    assert_eq!(json["scenario"]["transport"]["race_paths"], true);
    // Without the key nothing is echoed (earlier records stay byte-identical).
    let plain = raced(&[SLOW, FAST], MultipathMode::Mpns, false);
    assert!(!plain.to_toml().expect("toml").contains("race_paths"));
    // HTTP/3 requests are refused with the key named.
    let h3 = format!(
        "paths = [\"{SLOW}\", \"{FAST}\"]\n\
         [workload]\nrequests = {{ sizes = [\"100KB\"], protocol = \"h3\" }}\n\
         [transport]\nrace_paths = true\n"
    );
    let e = Scenario::from_toml_str(&h3, "h3.toml").expect_err("h3 with racing");
    assert!(e.to_string().contains("transport.race_paths"), "{e}");
}
