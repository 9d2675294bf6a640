use super::*;
use crate::mtud::MtuDiscoveryConfig;

/// The field an invalid configuration is refused for, and the whole message.
fn refused(config: TransportConfig) -> (String, String) {
    let e = config.validate().expect_err("the configuration is invalid");
    (e.field.clone(), e.to_string())
}

fn with_ack(f: impl FnOnce(&mut crate::ack::AckConfig)) -> TransportConfig {
    let mut ack = crate::ack::AckConfig::default();
    f(&mut ack);
    TransportConfig::default().ack(ack)
}

#[test]
fn defaults_are_valid() {
    TransportConfig::default().validate().unwrap();
    TransportConfig::default()
        .mtu_discovery(None)
        .reinjection(ReinjectionMode::Qoe {
            lower_ms: 500,
            upper_ms: 2000,
        })
        .validate()
        .unwrap();
}

#[test]
fn each_bad_field_is_named() {
    let qoe = ReinjectionMode::Qoe {
        lower_ms: 2000,
        upper_ms: 500,
    };
    let mtud = |f: fn(&mut MtuDiscoveryConfig)| {
        let mut m = MtuDiscoveryConfig::default();
        f(&mut m);
        TransportConfig::default().mtu_discovery(Some(m))
    };
    let streams = crate::streams::StreamsConfig {
        max_streams_bidi: (1 << 60) + 1,
        ..Default::default()
    };
    let cases: Vec<(TransportConfig, &str, &str)> = vec![
        (
            TransportConfig::default().idle_timeout(Duration::from_micros(1500)),
            "idle_timeout",
            "not a whole number of milliseconds",
        ),
        (
            TransportConfig::default().initial_rtt(Duration::ZERO),
            "initial_rtt",
            "0ns is out of range",
        ),
        (
            TransportConfig::default().initial_rtt(Duration::from_secs(61)),
            "initial_rtt",
            "at most 60s",
        ),
        (
            TransportConfig::default().max_datagram_size(1199),
            "max_datagram_size",
            "1199 is out of range: expected 1200..=65527",
        ),
        (
            mtud(|m| m.ceiling = 65528),
            "mtu_discovery.ceiling",
            "65528 is out of range",
        ),
        (mtud(|m| m.max_probes = 0), "mtu_discovery.max_probes", "0"),
        (mtud(|m| m.min_step = 0), "mtu_discovery.min_step", "0"),
        (
            with_ack(|a| a.ack_eliciting_threshold = 0),
            "ack.ack_eliciting_threshold",
            "at least 1",
        ),
        (
            with_ack(|a| a.max_ack_delay_ms = 1 << 14),
            "ack.max_ack_delay_ms",
            "16384 is out of range: expected 0..=16383 (RFC 9000 §18.2)",
        ),
        (
            with_ack(|a| a.ack_delay_exponent = 21),
            "ack.ack_delay_exponent",
            "expected 0..=20",
        ),
        (
            with_ack(|a| a.max_range_limit = 65),
            "ack.max_range_limit",
            "65 is out of range: expected 1..=64",
        ),
        (
            with_ack(|a| a.default_range_limit = 0),
            "ack.default_range_limit",
            "0 is out of range: expected 1..=64",
        ),
        (
            with_ack(|a| {
                a.max_range_limit = 8;
                a.default_range_limit = 9;
            }),
            "ack.default_range_limit",
            "9 is out of range: expected 1..=8 (ack.max_range_limit)",
        ),
        (
            with_ack(|a| a.min_ack_delay_us = Some(30_000)),
            "ack.min_ack_delay_us",
            "30000 is out of range: expected 0..=25000",
        ),
        (
            TransportConfig::default().active_connection_id_limit(1),
            "active_connection_id_limit",
            "at least 2",
        ),
        (
            TransportConfig::default().path_failure_ptos(0),
            "path_failure_ptos",
            "at least 1",
        ),
        (
            TransportConfig::default().max_packet_threshold(2),
            "max_packet_threshold",
            "3 (fixed, RFC 9002 §6.1.1) to 65536",
        ),
        (
            TransportConfig::default().max_time_threshold(1.0),
            "max_time_threshold",
            "1.125 (fixed, RFC 9002 §6.1.2) to 8 RTTs",
        ),
        (
            TransportConfig::default().max_time_threshold(f64::NAN),
            "max_time_threshold",
            "to 8 RTTs",
        ),
        (
            TransportConfig::default().max_packet_threshold(1 << 20),
            "max_packet_threshold",
            "3 (fixed",
        ),
        (
            TransportConfig::default().key_update_interval(Some(0)),
            "key_update_interval",
            "at least 1",
        ),
        (
            TransportConfig::default().path_idle_timeout(Some(Duration::ZERO)),
            "path_idle_timeout",
            "more than 0",
        ),
        (
            TransportConfig::default().reinjection(qoe),
            "reinjection",
            "lower_ms (2000) must be below upper_ms (500)",
        ),
        (
            TransportConfig::default().streams(streams),
            "streams.max_streams_bidi",
            "out of range",
        ),
    ];
    for (config, field, text) in cases {
        let (got, message) = refused(config);
        assert_eq!(got, field, "{message}");
        assert!(message.starts_with(&format!("{field}: ")), "{message}");
        assert!(message.contains(text), "{field}: {message}");
        assert!(!message.contains('\n'), "one line: {message}");
    }
}

#[test]
fn renamed_keeps_the_problem() {
    let e = TransportConfig::default()
        .max_datagram_size(1000)
        .validate()
        .unwrap_err()
        .renamed("transport.max_datagram_size");
    assert_eq!(
        e.to_string(),
        "transport.max_datagram_size: 1000 is out of range: expected 1200..=65527 \
         (RFC 9000 §14, §18.2)"
    );
}

#[test]
fn endpoint_and_server_limits() {
    let mut endpoint = EndpointConfig::with_reset_key([0; 32]);
    endpoint.validate().unwrap();
    endpoint.cid_len = 21;
    assert_eq!(endpoint.validate().unwrap_err().field, "cid_len");
}
