//! Path MTU discovery (RFC 9000 §14.3, RFC 8899; issue 18) in the simulator: each path finds
//! its own datagram size under its link's MTU, in both multipath designs, and a path whose MTU
//! shrinks mid-transfer falls back and keeps going. A link's `mtu` is the largest UDP payload it
//! carries (the simulator's packet size).

mod common;

use common::{download, run_completed};
use mpquic_lab::{PathResult, RunResult, Scenario};
use mpquic_proto::MultipathMode;

const SEED: u64 = 3;
/// A 1500-byte IPv4 Ethernet link: 1472 bytes of UDP payload.
const WIDE: &str = "rate=20mbit,rtt=20ms,queue=1bdp,mtu=1472";
const NARROW: &str = "rate=15mbit,rtt=40ms,queue=1bdp,mtu=1280";

fn discovering(mut s: Scenario) -> Scenario {
    s.transport.config.mtu_discovery = Some(Default::default());
    s
}

/// The sender's path that starts at client interface `i`.
fn on_interface(r: &RunResult, i: usize) -> &PathResult {
    r.paths
        .iter()
        .find(|p| p.interface == Some(i))
        .unwrap_or_else(|| panic!("no path on interface {i}: {:?}", r.paths))
}

fn link_mtu_drops(r: &RunResult, name: &str) -> u64 {
    r.links
        .iter()
        .find(|l| l.name == name)
        .unwrap_or_else(|| panic!("no link {name}"))
        .drops
        .mtu_exceeded
        .packets
}

#[test]
fn each_path_finds_its_own_mtu_in_both_designs() {
    for mode in [MultipathMode::Mpns, MultipathMode::Spns] {
        let r = run_completed(&discovering(download(
            &[WIDE, NARROW],
            8_000_000,
            mode,
            SEED,
        )));
        let (wide, narrow) = (on_interface(&r, 0), on_interface(&r, 1));
        println!(
            "{mode:?}: {:.3} s; wide path mtu {:?} {:?}; narrow path mtu {:?} {:?}; MTU drops down {} / {}",
            r.completion_time_s.unwrap_or(f64::NAN),
            wide.mtu,
            wide.mtu_counters,
            narrow.mtu,
            narrow.mtu_counters,
            link_mtu_drops(&r, "path0.down"),
            link_mtu_drops(&r, "path1.down"),
        );
        let wide_mtu = wide.mtu.expect("discovery on");
        let narrow_mtu = narrow.mtu.expect("discovery on");
        assert!(wide_mtu >= 1450, "{mode:?}: wide path at {wide_mtu}");
        assert!(
            (1200..=1280).contains(&narrow_mtu) && narrow_mtu >= 1260,
            "{mode:?}: narrow path at {narrow_mtu}"
        );
        let counters = narrow.mtu_counters.expect("counters");
        assert_eq!(counters.black_holes, 0, "{mode:?}: {counters:?}");
        // Only probes were too large for the narrow link: data stayed within its MTU.
        assert!(
            link_mtu_drops(&r, "path1.down") <= counters.probes_lost,
            "{mode:?}: {} MTU drops, {} probes lost",
            link_mtu_drops(&r, "path1.down"),
            counters.probes_lost
        );
        assert!(r.paths.iter().all(|p| p.bytes_sent > 1_000_000));
    }
}

#[test]
fn a_path_whose_mtu_shrinks_falls_back_and_keeps_going() {
    let shrinking = format!("{WIDE},mtu_at=1500ms:1280");
    for (paths, mode) in [
        (vec![shrinking.as_str(), NARROW], MultipathMode::Mpns),
        (vec![shrinking.as_str(), NARROW], MultipathMode::Spns),
        (vec![shrinking.as_str()], MultipathMode::Single),
    ] {
        // Completed means every byte arrived and matched (the client checks the content).
        let r = run_completed(&discovering(download(&paths, 10_000_000, mode, SEED)));
        let p = on_interface(&r, 0);
        let counters = p.mtu_counters.expect("discovery on");
        println!(
            "{mode:?}: {:.3} s, path 0 mtu {:?} {counters:?}, {:.2} MB on it, error {:?}",
            r.completion_time_s.unwrap_or(f64::NAN),
            p.mtu,
            p.bytes_sent as f64 / 1e6,
            r.error,
        );
        assert!(r.error.is_none(), "{mode:?}: {:?}", r.error);
        assert!(counters.black_holes >= 1, "{mode:?}: {counters:?}");
        let mtu = p.mtu.expect("mtu");
        assert!((1200..=1280).contains(&mtu), "{mode:?}: mtu {mtu}");
        assert!(!p.abandoned, "{mode:?}: the path was abandoned");
    }
}

/// Discovery off: every packet has the configured fixed size, and no probe crosses a link.
#[test]
fn without_discovery_packets_keep_the_fixed_size() {
    let r = run_completed(&download(
        &["rate=20mbit,rtt=20ms,queue=1bdp,mtu=1350"],
        2_000_000,
        MultipathMode::Single,
        SEED,
    ));
    assert_eq!(link_mtu_drops(&r, "path0.down"), 0);
    assert_eq!(r.paths[0].mtu, None, "not recorded without discovery");
}
