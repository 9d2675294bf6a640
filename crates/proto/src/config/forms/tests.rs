use std::collections::BTreeMap;

use super::super::{MultipathMode, TransportConfig};
use crate::cc::CcAlgorithm;
use crate::mtud::MtuDiscoveryConfig;
use crate::path::PathId;
use crate::reinjection::ReinjectionMode;
use crate::scheduler::SchedulerKind;
use crate::spns_rules::{SpnsRule, SpnsRules};
use crate::time::Duration;

fn from_toml(text: &str) -> Result<TransportConfig, toml::de::Error> {
    TransportConfig::deserialize_validated(toml::Deserializer::new(text))
}

/// Every field of the configuration, including the ones files never write (the Debug form
/// has them all; the struct has no PartialEq because of its factories).
fn same(a: &TransportConfig, b: &TransportConfig) -> bool {
    format!("{a:?}") == format!("{b:?}")
}

/// A configuration with every written field away from its default.
fn changed() -> TransportConfig {
    let mtud = MtuDiscoveryConfig {
        ceiling: 1500,
        raise_interval: Duration::from_millis(1500),
        ..Default::default()
    };
    let ack = crate::ack::AckConfig {
        default_range_limit: 4,
        ..Default::default()
    };
    let streams = crate::streams::StreamsConfig {
        max_streams_bidi: 7,
        ..Default::default()
    };
    TransportConfig::default()
        .idle_timeout(Duration::from_secs(5))
        .initial_rtt(Duration::from_micros(100_500))
        .max_datagram_size(1400)
        .mtu_discovery(Some(mtud))
        .congestion(CcAlgorithm::NewReno)
        .path_congestion(BTreeMap::from([
            (PathId::new(1), CcAlgorithm::Bbr),
            (PathId::new(3), CcAlgorithm::Lia),
        ]))
        .ack(ack)
        .streams(streams)
        .multipath(MultipathMode::Spns)
        .max_path_id(3)
        .scheduler(SchedulerKind::RoundRobin)
        .active_connection_id_limit(8)
        .spns_rules(SpnsRules::report().with(SpnsRule::PerPathRttSamples, false))
        .pacing(false)
        .key_update_interval(Some(1000))
        .path_failure_ptos(5)
        .path_idle_timeout(Some(Duration::from_secs(2)))
        .reinjection(ReinjectionMode::Qoe {
            lower_ms: 500,
            upper_ms: 2000,
        })
        .qoe_feedback(true)
        .datagram_receive_buffer(None)
        .datagram_send_buffer(4096)
        .ecn(false)
}

#[test]
fn default_config_round_trips_through_toml_and_json() {
    let config = TransportConfig::default();
    let text = toml::to_string(&config).expect("TOML");
    let back = from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(same(&config, &back), "{text}");
    let json = serde_json::to_string(&config).expect("JSON");
    let back: TransportConfig = serde_json::from_str(&json).expect("JSON back");
    assert!(same(&config, &back), "{json}");
    // The empty table is the default configuration.
    assert!(same(&from_toml("").expect("empty"), &config));
}

#[test]
fn every_written_field_round_trips() {
    let config = changed();
    assert!(!same(&config, &TransportConfig::default()));
    let text = toml::to_string(&config).expect("TOML");
    let back = from_toml(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert!(same(&config, &back), "{text}");
    for line in [
        "cc = \"newreno\"",
        "idle_timeout = \"5s\"",
        "initial_rtt = \"100500us\"",
        "raise_interval = \"1500ms\"",
        "scheduler = \"round-robin\"",
        "spns_rules = \"report,no-per-path-rtt-samples\"",
        "datagram_receive_buffer = false",
        "path_idle_timeout = \"2s\"",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} missing in\n{text}");
    }
    let json = serde_json::to_string(&config).expect("JSON");
    let back =
        TransportConfig::deserialize_validated(&mut serde_json::Deserializer::from_str(&json))
            .expect("JSON back");
    assert!(same(&config, &back), "{json}");
}

#[test]
fn a_table_gives_what_the_setters_give() {
    let config = from_toml(
        r#"
        congestion = "NewReno"            # the field's name and FromStr's spelling
        multipath = "SPNS"
        scheduler = "rr"                  # the command line's short form
        max_path_id = 3
        mtu_discovery = { ceiling = 1500, raise_interval = "1.5s" }
        path_congestion = { 1 = "bbr", 3 = "lia" }
        spns_rules = { per_path_rtt_samples = false }
        pacing = false
        idle_timeout = "5s"
        initial_rtt = "100.5ms"
        max_datagram_size = 1400
        active_connection_id_limit = 8
        key_update_interval = 1000
        path_failure_ptos = 5
        path_idle_timeout = "2s"
        reinjection = { mode = "qoe", lower_ms = 500, upper_ms = 2000 }
        qoe_feedback = true
        datagram_receive_buffer = false
        datagram_send_buffer = 4096
        ecn = false
        [ack]
        default_range_limit = 4
        [streams]
        max_streams_bidi = 7
        "#,
    )
    .expect("valid");
    assert!(same(&config, &changed()), "{config:?}");
}

#[test]
fn off_switches_and_defaults() {
    let c = from_toml("mtu_discovery = false\ndatagram_receive_buffer = 1000\n").expect("valid");
    assert_eq!(c.mtu_discovery, None);
    assert_eq!(c.datagram_receive_buffer, Some(1000));
    let c = from_toml("mtu_discovery = true\ndatagram_receive_buffer = true\n").expect("valid");
    assert_eq!(c.mtu_discovery, Some(MtuDiscoveryConfig::default()));
    assert_eq!(
        c.datagram_receive_buffer,
        TransportConfig::default().datagram_receive_buffer
    );
    let c = from_toml("idle_timeout = 0\n").expect("0 needs no unit");
    assert_eq!(c.idle_timeout, Duration::ZERO);
}

/// One line of a TOML error: its message, without the quoted source lines.
fn message(e: &toml::de::Error) -> String {
    e.message().to_owned()
}

#[test]
fn bad_values_are_refused_naming_the_key() {
    for (text, needle) in [
        (
            "idle_timeout = \"5 parsecs\"",
            "invalid duration `5 parsecs`",
        ),
        ("idle_timeout = 30", "a unit is required"),
        ("cc = \"vegas\"", "unknown congestion controller 'vegas'"),
        ("scheduler = \"fastest\"", "unknown scheduler 'fastest'"),
        ("colour = \"red\"", "unknown field `colour`"),
        (
            "path_congestion = { first = \"bbr\" }",
            "`first` is not a path ID",
        ),
        (
            "mtu_discovery = { ceiling = 1500, size = 3 }",
            "unknown field `size`",
        ),
        (
            "reinjection = { mode = \"qoe\" }",
            "needs both lower_ms and upper_ms",
        ),
        // validate()'s errors, `FIELD: PROBLEM` as for a flag or a setter.
        (
            "[ack]\nmax_range_limit = 65",
            "ack.max_range_limit: 65 is out of range",
        ),
        (
            "idle_timeout = \"1500us\"",
            "idle_timeout: 1.5ms is not a whole number",
        ),
        (
            "mtu_discovery.ceiling = 1000",
            "mtu_discovery.ceiling: 1000 is out of range",
        ),
        (
            "[streams]\nmax_streams_uni = 2000000000000000000",
            "streams.max_streams_uni",
        ),
    ] {
        let e = from_toml(text).expect_err(text);
        assert!(message(&e).contains(needle), "{text}: {e}");
        assert!(!message(&e).contains('\n'), "one line: {e}");
    }
    // A type error inside a table keeps its position: the key is on the quoted line.
    let e = from_toml("pacing = true\nmtu_discovery = { ceiling = \"big\" }\n").expect_err("bad");
    assert!(e.to_string().contains("line 2"), "{e}");
}
