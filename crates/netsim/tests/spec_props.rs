//! Property tests: spec and trace round trips, parsers never panic; TOML form.

use std::path::PathBuf;

use mpquic_netsim::loss::LossModel;
use mpquic_netsim::spec::{CapacitySpec, DirSpec, PathSpec, Preset, QueueSpec, TraceSource};
use mpquic_netsim::MahimahiTrace;
use proptest::prelude::*;

fn prob() -> impl Strategy<Value = f64> {
    prop_oneof![Just(0.0), Just(1.0), 0.0f64..=1.0]
}

fn capacity() -> impl Strategy<Value = CapacitySpec> {
    prop_oneof![
        (1u64..100_000_000_000).prop_map(CapacitySpec::Rate),
        "[a-z][a-z0-9_]{0,8}\\.(up|down)"
            .prop_map(|p| CapacitySpec::Trace(TraceSource::File(PathBuf::from(p)))),
        (
            any::<bool>(),
            any::<u64>(),
            proptest::option::of(1u64..10_000_000)
        )
            .prop_map(|(wifi, seed, duration_ms)| {
                let preset = if wifi { Preset::Wifi } else { Preset::Lte };
                CapacitySpec::Trace(TraceSource::Generated {
                    preset,
                    seed,
                    duration_ms,
                })
            }),
    ]
}

fn queue() -> impl Strategy<Value = QueueSpec> {
    prop_oneof![
        (0u64..1_000_000).prop_map(QueueSpec::Packets),
        (0u64..1_000_000_000).prop_map(QueueSpec::Bytes),
        (0.0f64..100.0).prop_map(QueueSpec::Bdp),
        Just(QueueSpec::Infinite),
    ]
}

fn loss() -> impl Strategy<Value = LossModel> {
    prop_oneof![
        Just(LossModel::None),
        (0.0f64..=1.0)
            .prop_filter("p > 0", |p| *p > 0.0)
            .prop_map(LossModel::bernoulli),
        (prob(), prob(), prob(), prob())
            .prop_map(|(a, b, c, d)| LossModel::gilbert_elliott(a, b, c, d)),
    ]
}

fn time() -> impl Strategy<Value = u64> {
    prop_oneof![
        0u64..10_000_000_000,
        (0u64..100_000).prop_map(|m| m * 1_000_000)
    ]
}

prop_compose! {
    fn dir_spec()(
        capacity in proptest::option::of(capacity()),
        delay in proptest::option::of(time()),
        queue in proptest::option::of(queue()),
        loss in proptest::option::of(loss()),
        jitter in proptest::option::of(time()),
        reorder in proptest::option::of(any::<bool>()),
        down_at in proptest::collection::vec(time(), 0..3),
        up_at in proptest::collection::vec(time(), 0..3),
        rate_at in proptest::collection::vec((time(), 1u64..100_000_000_000), 0..2),
        delay_at in proptest::collection::vec((time(), time()), 0..2),
        loss_at in proptest::collection::vec((time(), loss()), 0..2),
        mtu in proptest::option::of(proptest::option::of(64u64..100_000)),
        mtu_at in proptest::collection::vec((time(), proptest::option::of(64u64..100_000)), 0..2),
        (ecn, ecn_bleach) in (proptest::option::of(queue()), proptest::option::of(any::<bool>())),
    ) -> DirSpec {
        DirSpec {
            capacity, trace_start: None, delay, queue, loss, jitter, reorder, ecn, ecn_bleach,
            down_at, up_at, rate_at, delay_at, loss_at, mtu, mtu_at,
        }
    }
}

prop_compose! {
    fn path_spec()(
        shared in dir_spec(),
        rtt in proptest::option::of(time()),
        streams in proptest::option::of(0u32..8),
        up in dir_spec(),
        down in dir_spec(),
    ) -> PathSpec {
        PathSpec { shared, rtt, streams, up, down }
    }
}

proptest! {
    #[test]
    fn spec_string_round_trip(spec in path_spec()) {
        let text = spec.to_string();
        let parsed = PathSpec::parse(&text);
        prop_assert_eq!(parsed, Ok(spec), "text: {}", text);
    }

    #[test]
    fn spec_toml_and_json_round_trip(spec in path_spec()) {
        let json = serde_json::to_string(&spec).expect("json");
        let back: PathSpec = serde_json::from_str(&json).expect("from json");
        prop_assert_eq!(&back, &spec);
        #[derive(serde::Serialize, serde::Deserialize)]
        struct Doc { path: PathSpec }
        let toml_text = toml::to_string(&Doc { path: spec.clone() }).expect("toml");
        let doc: Doc = toml::from_str(&toml_text).expect("from toml");
        prop_assert_eq!(doc.path, spec);
    }

    #[test]
    fn spec_parser_never_panics(s in "\\PC{0,60}") {
        let _ = PathSpec::parse(&s);
    }

    #[test]
    fn spec_parser_never_panics_on_near_misses(
        key in "(up\\.|down\\.)?(rate|trace|delay|rtt|queue|loss|jitter|reorder|down_at|up_at|rate_at|delay_at|loss_at|x)",
        value in "[0-9.%:a-z,-]{0,12}",
    ) {
        let _ = PathSpec::parse(&format!("{key}={value}"));
    }

    #[test]
    fn trace_text_round_trip(
        first in 0u64..100,
        gaps in proptest::collection::vec(0u64..5, 0..200),
    ) {
        let mut ts = vec![first];
        for g in gaps {
            let next = ts[ts.len() - 1] + g;
            ts.push(next);
        }
        if ts[ts.len() - 1] == 0 {
            ts.push(1);
        }
        let t = MahimahiTrace::from_timestamps(ts.clone(), "p").expect("valid");
        let back = MahimahiTrace::parse(&t.to_text(), "p").expect("parse");
        prop_assert_eq!(back.timestamps_ms(), &ts[..]);
        prop_assert_eq!(back, t);
    }

    #[test]
    fn trace_parser_never_panics(s in "[0-9 \\n.x-]{0,80}") {
        if let Ok(t) = MahimahiTrace::parse(&s, "fuzz") {
            prop_assert!(t.period_ms() > 0);
            prop_assert!(t.timestamps_ms().windows(2).all(|w| w[0] <= w[1]));
        }
    }
}

#[test]
fn toml_tables_and_unknown_keys() {
    let text = r#"
        rate = "20mbit"
        rtt = "40ms"
        queue = "1.5bdp"
        loss = 0.01
        reorder = true
        down_at = ["2s", "8s"]
        up_at = "5s"
        [down]
        rate = "50mbit"
        loss = "ge:1%,20%"
    "#;
    let spec: PathSpec = toml::from_str(text).expect("toml");
    let from_string = PathSpec::parse(
        "rate=20mbit,rtt=40ms,queue=1.5bdp,loss=1%,reorder=true,down_at=2s,down_at=8s,up_at=5s,\
         down.rate=50mbit,down.loss=ge:0.01,0.2",
    )
    .expect("parse");
    assert_eq!(spec, from_string);
    let resolved = spec.resolve().expect("resolve");
    assert_eq!(resolved.up.queue, mpquic_netsim::QueueLimit::Bytes(150_000));
    assert_eq!(
        resolved.down.queue,
        mpquic_netsim::QueueLimit::Bytes(375_000)
    );

    let err = toml::from_str::<PathSpec>("rate = \"1mbit\"\nspeed = 3\n").unwrap_err();
    assert!(err.to_string().contains("speed"), "{err}");
    let err = toml::from_str::<PathSpec>("rate = \"1mbit\"\n[up]\nrtt = \"1ms\"\n").unwrap_err();
    assert!(err.to_string().contains("rtt"), "{err}");
    let err = toml::from_str::<PathSpec>("rate = \"fast\"\n").unwrap_err();
    assert!(
        err.to_string().contains("rate: invalid value `fast`"),
        "{err}"
    );
}

#[test]
fn link_config_serde_round_trip() {
    use mpquic_netsim::time::ms;
    use mpquic_netsim::{LinkAction, LinkConfig, QueueLimit};
    let trace = MahimahiTrace::parse("1\n1\n3\n", "t").expect("trace");
    let configs = [
        LinkConfig::mbit(20.0)
            .with_delay(ms(10))
            .with_queue(QueueLimit::Packets(100))
            .with_loss(LossModel::gilbert_elliott(0.01, 0.2, 0.0, 1.0))
            .with_jitter(ms(2), true)
            .down_at(ms(100))
            .up_at(ms(200))
            .with_event(ms(300), LinkAction::SetRate { bits_per_sec: 1000 }),
        LinkConfig::trace(trace).with_queue(QueueLimit::Bytes(3000)),
        LinkConfig::unlimited(),
    ];
    #[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
    struct Doc {
        link: LinkConfig,
    }
    for link in configs {
        let json = serde_json::to_string(&link).expect("json");
        let back: LinkConfig = serde_json::from_str(&json).expect("from json");
        assert_eq!(back, link);
        let doc = Doc { link };
        let text = toml::to_string(&doc).expect("toml");
        let back: Doc = toml::from_str(&text).expect("from toml");
        assert_eq!(back, doc);
    }
    // Invalid traces are rejected on deserialization.
    let bad = r#"{"capacity":{"trace":{"source":"x","timestamps_ms":[5,1]}}}"#;
    assert!(serde_json::from_str::<LinkConfig>(bad).is_err());
}
