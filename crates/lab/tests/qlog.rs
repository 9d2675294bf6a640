//! qlog of simulated runs (issue 17): both paths appear in the packet and recovery events of
//! both designs, and the bytes depend only on the scenario and its seed (virtual time).

mod common;

use std::sync::{Arc, Mutex};

use common::download;
use mpquic_lab::runner::run_with_qlog;
use mpquic_proto::qlog::{split_records, QlogConfig, QlogHeader, QlogWriter, SharedBuffer};
use mpquic_proto::wire::stream_id::Side;
use mpquic_proto::MultipathMode;
use serde_json::Value;

/// Both endpoints' qlog bytes, client first.
struct Logs {
    client: Vec<u8>,
    server: Vec<u8>,
}

fn two_path(mode: MultipathMode, seed: u64) -> mpquic_lab::Scenario {
    download(
        &[
            "rate=10mbit,rtt=20ms,queue=1bdp,loss=0.5%",
            "rate=8mbit,rtt=50ms,queue=1bdp,jitter=1ms",
        ],
        1_500_000,
        mode,
        seed,
    )
}

/// Runs `scenario` with an in-memory sink per connection.
fn run_logged(scenario: &mpquic_lab::Scenario) -> Logs {
    let buffers: Arc<Mutex<Vec<(Side, SharedBuffer)>>> = Arc::default();
    let collected = buffers.clone();
    let config = QlogConfig::new(move |ctx| {
        let buf = SharedBuffer::default();
        collected.lock().unwrap().push((ctx.side, buf.clone()));
        let header = QlogHeader {
            side: ctx.side,
            odcid: ctx.odcid.to_string(),
            description: None,
            wall_clock_time: None,
        };
        let writer = QlogWriter::new(buf, &header, ctx.start).ok()?;
        Some(Box::new(writer) as Box<dyn mpquic_proto::qlog::QlogSink>)
    });
    let result = run_with_qlog(scenario, Some(config)).expect("valid scenario");
    assert!(
        result.completed,
        "seed {}: {:?}",
        scenario.seed, result.error
    );
    let buffers = buffers.lock().unwrap();
    let of = |side: Side| {
        let mut logs = buffers.iter().filter(|(s, _)| *s == side);
        let (_, buf) = logs.next().expect("one connection per side");
        assert!(logs.next().is_none(), "one connection per side");
        buf.contents()
    };
    Logs {
        client: of(Side::Client),
        server: of(Side::Server),
    }
}

fn records(bytes: &[u8]) -> Vec<Value> {
    split_records(bytes)
        .map(|r| serde_json::from_slice(r).expect("every record is JSON"))
        .collect()
}

/// Path IDs of the events named `name`.
fn paths_of(events: &[Value], name: &str) -> std::collections::BTreeSet<u64> {
    events
        .iter()
        .filter(|e| e["name"] == name)
        .map(|e| {
            e["data"]["path_id"]
                .as_u64()
                .unwrap_or_else(|| panic!("{name} without path_id: {e}"))
        })
        .collect()
}

#[test]
fn both_paths_appear_in_packet_and_recovery_events_of_both_designs() {
    for mode in [MultipathMode::Spns, MultipathMode::Mpns] {
        let logs = run_logged(&two_path(mode, 7));
        for (side, bytes) in [("client", &logs.client), ("server", &logs.server)] {
            let events = records(bytes);
            assert!(
                events[0].get("qlog_format").is_some(),
                "{mode:?} {side}: header first"
            );
            let events = &events[1..];
            for name in [
                "quic:packet_sent",
                "quic:packet_received",
                "quic:recovery_metrics_updated",
            ] {
                let paths = paths_of(events, name);
                assert!(
                    paths.contains(&0) && paths.contains(&1),
                    "{mode:?} {side}: {name} on paths {paths:?}"
                );
            }
            let times: Vec<f64> = events.iter().map(|e| e["time"].as_f64().unwrap()).collect();
            assert!(
                times.windows(2).all(|w| w[0] <= w[1]),
                "{mode:?} {side}: time order"
            );
        }
        // The sender sees its data on both paths and losses on the lossy one.
        let server = records(&logs.server);
        assert!(
            paths_of(&server, "quic:packet_lost").contains(&0),
            "{mode:?}: losses"
        );
        assert!(!paths_of(&server, "quic:congestion_state_updated").is_empty());
    }
}

#[test]
fn same_seed_same_bytes_and_the_seed_matters() {
    for mode in [MultipathMode::Spns, MultipathMode::Mpns] {
        let a = run_logged(&two_path(mode, 11));
        let b = run_logged(&two_path(mode, 11));
        assert!(
            a.client == b.client,
            "{mode:?}: client qlog differs between two runs"
        );
        assert!(
            a.server == b.server,
            "{mode:?}: server qlog differs between two runs"
        );
        let c = run_logged(&two_path(mode, 12));
        assert!(
            a.client != c.client,
            "{mode:?}: another seed, same client qlog"
        );
        assert!(
            a.server != c.server,
            "{mode:?}: another seed, same server qlog"
        );
    }
}

/// Path MTU discovery (issue 18) logs `quic:mtu_updated` per path: the server's path 0 on a
/// 1500-byte IPv4 link (1472 bytes of UDP payload) goes from 1200 to the 1452-byte ceiling, its
/// path 1 (1280) settles below 1280, each with `done` on the last update.
#[test]
fn mtu_updates_are_logged_per_path() {
    let mut s = download(
        &[
            "rate=10mbit,rtt=20ms,queue=1bdp,mtu=1472",
            "rate=8mbit,rtt=50ms,queue=1bdp,mtu=1280",
        ],
        1_500_000,
        MultipathMode::Mpns,
        7,
    );
    s.transport.config.mtu_discovery = Some(Default::default());
    let logs = run_logged(&s);
    let server = records(&logs.server);
    let updates: Vec<&Value> = server
        .iter()
        .filter(|e| e["name"] == "quic:mtu_updated")
        .collect();
    let last = |path: u64| {
        updates
            .iter()
            .rev()
            .find(|e| e["data"]["path_id"] == path)
            .unwrap_or_else(|| panic!("no mtu_updated on path {path}: {updates:?}"))
    };
    assert_eq!(last(0)["data"]["new"], 1452, "{updates:?}");
    assert_eq!(last(0)["data"]["done"], true);
    let narrow = last(1)["data"]["new"].as_u64().unwrap();
    assert!((1260..=1280).contains(&narrow), "{updates:?}");
    assert!(updates.iter().all(|e| e["data"]["old"].is_u64()));
}

/// Reordering that makes losses spurious raises the path's loss thresholds (RFC 9002 §6.1.1,
/// §6.1.2), and the server logs each rise as `quic:recovery_parameters_set`; the thresholds
/// logged never fall.
#[test]
fn raised_loss_thresholds_are_logged() {
    let s = download(
        &["rate=20mbit,rtt=10ms,queue=1bdp,jitter=5ms,reorder=true"],
        1_000_000,
        MultipathMode::Single,
        3,
    );
    let logs = run_logged(&s);
    let server = records(&logs.server);
    let sets: Vec<(u64, f64)> = server
        .iter()
        .filter(|e| e["name"] == "quic:recovery_parameters_set")
        .map(|e| {
            assert_eq!(e["data"]["path_id"], 0);
            (
                e["data"]["reordering_threshold"].as_u64().unwrap(),
                e["data"]["time_threshold"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(sets.len() >= 2, "{sets:?}");
    assert!(
        sets.windows(2)
            .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
        "{sets:?}"
    );
    let (packets, time) = *sets.last().unwrap();
    assert!(packets > 3 && time > 1.125, "{sets:?}");
}
