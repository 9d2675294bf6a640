//! Scenario files and command-line arguments: accepted forms, mapping onto
//! the transport configuration, and precise rejection of mistakes.

use std::path::Path;

use mpquic_lab::cli::build_scenario;
use mpquic_lab::{ByteSize, LabError, Scenario, SimArgs, Workload};
use mpquic_proto::cc::CcAlgorithm;
use mpquic_proto::reinjection::ReinjectionMode;
use mpquic_proto::scheduler::SchedulerKind;
use mpquic_proto::MultipathMode;
use mpquic_proto::RangeOrder;

fn parse(text: &str) -> Result<Scenario, LabError> {
    Scenario::from_toml_str(text, "test.toml")
}

fn error_of(text: &str) -> String {
    match parse(text) {
        Ok(s) => panic!("accepted: {s:?}"),
        Err(e) => e.to_string(),
    }
}

const MINIMAL: &str = r#"
paths = ["rate=20mbit,rtt=40ms"]
[workload]
download = "1MB"
"#;

#[test]
fn minimal_scenario_has_defaults() {
    let s = parse(MINIMAL).expect("valid");
    assert_eq!(s.seed, 0);
    assert_eq!(s.time_limit.secs_f64(), 60.0);
    assert_eq!(s.workload, Workload::Download(ByteSize(1_000_000)));
    let c = s.transport.to_config().expect("config");
    assert_eq!(c.multipath, MultipathMode::Auto);
    assert_eq!(c.congestion, CcAlgorithm::Cubic);
    assert_eq!(c.spns_rules, mpquic_proto::SpnsRules::report());
}

#[test]
fn shipped_scenarios_parse() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("scenarios dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "toml") {
            Scenario::from_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert!(
        n >= 3,
        "expected the example scenarios in {}",
        dir.display()
    );
}

#[test]
fn transport_settings_map_onto_config() {
    let s = parse(
        r#"
        seed = 9
        time_limit = "2.5s"
        paths = ["rate=20mbit,rtt=20ms", { rate = "15mbit", rtt = "40ms", down = { loss = "1%" } }]
        [workload]
        requests = { sizes = ["10KB", "512KiB", 7] }
        [transport]
        cc = "NewReno"
        multipath = "spns"
        scheduler = "round_robin"
        ack_range_limit = 4
        rtt_sample_on_receiving_path = false
        initial_rtt_ms = 100
        pacing = false
        idle_timeout = "5s"
        [transport.ack]
        ack_eliciting_threshold = 3
        range_order = "lowest_first"
        "#,
    )
    .expect("valid");
    assert_eq!(s.seed, 9);
    assert_eq!(s.time_limit.nanos(), 2_500_000_000);
    assert_eq!(s.paths.len(), 2);
    assert_eq!(s.workload.response_sizes(), vec![10_000, 524_288, 7]);
    let c = s.transport.to_config().expect("config");
    assert_eq!(c.congestion, CcAlgorithm::NewReno);
    assert_eq!(c.multipath, MultipathMode::Spns);
    assert_eq!(c.scheduler, SchedulerKind::RoundRobin);
    assert_eq!(c.ack.default_range_limit, 4);
    assert_eq!(c.ack.ack_eliciting_threshold, 3);
    assert_eq!(c.ack.range_order, RangeOrder::LowestFirst);
    assert_eq!(
        c.ack.max_range_limit, 64,
        "unset AckConfig fields keep defaults"
    );
    assert!(!c.spns_rules.per_path_rtt_samples && !c.pacing);
    assert!(
        c.spns_rules.per_path_loss_detection,
        "the other rules stay on"
    );
    assert_eq!(c.initial_rtt.as_millis(), 100);
    assert_eq!(c.idle_timeout.as_secs(), 5);
}

#[test]
fn round_trips_through_toml() {
    let s = parse(
        r#"
        paths = ["rate=20mbit,rtt=20ms,queue=1.5bdp,down_at=2s", { trace = "gen:lte:7:10s", delay = "5ms" }]
        [workload]
        download = "50MB"
        [transport]
        multipath = "mpns"
        ack_range_limit = 8
        "#,
    )
    .expect("valid");
    let text = s.to_toml().expect("serialize");
    let back = parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(back.paths, s.paths);
    assert_eq!(back.workload, s.workload);
    assert_eq!(back.transport.ack_range_limit, Some(8));
    assert_eq!(back.transport.config.multipath, MultipathMode::Mpns);
}

#[test]
fn unknown_keys_are_named() {
    let e = error_of(&format!("seeds = 3\n{MINIMAL}"));
    assert!(
        e.contains("test.toml") && e.contains("unknown field `seeds`"),
        "{e}"
    );
    let e = error_of(&format!(
        "{MINIMAL}\n[transport]\ncongestion_control = \"cubic\"\n"
    ));
    assert!(e.contains("unknown field `congestion_control`"), "{e}");
    let e = error_of(&format!("{MINIMAL}\n[transport.ack]\nthreshold = 2\n"));
    assert!(e.contains("unknown field `threshold`"), "{e}");
    let e = error_of(
        "paths = [{ rate = \"1mbit\", colour = \"red\" }]\n[workload]\ndownload = \"1MB\"\n",
    );
    assert!(e.contains("unknown field `colour`"), "{e}");
    let e = error_of("paths = [\"rate=1mbit,colour=red\"]\n[workload]\ndownload = \"1MB\"\n");
    assert!(e.contains("unknown key `colour`"), "{e}");
    let e = error_of("paths = [\"rate=1mbit\"]\n[workload]\nupload = \"1MB\"\n");
    assert!(
        e.contains("unknown field `upload`, expected `download` or `requests`"),
        "{e}"
    );
    let e = error_of(&format!("{MINIMAL}requests = {{ sizes = [\"1KB\"] }}\n"));
    assert!(e.contains("exactly one of `download` or `requests`"), "{e}");
}

#[test]
fn bad_units_are_named() {
    let e = error_of("paths = [\"rate=1mbit\"]\n[workload]\ndownload = \"50XB\"\n");
    assert!(
        e.contains("invalid size `50XB`") && e.contains("download"),
        "{e}"
    );
    let e = error_of(&format!("time_limit = \"10 sec\"\n{MINIMAL}"));
    assert!(
        e.contains("invalid duration `10 sec`") && e.contains("time_limit"),
        "{e}"
    );
    let e = error_of(&format!("time_limit = 10\n{MINIMAL}"));
    assert!(e.contains("unit is required"), "{e}");
    let e = error_of("paths = [\"rate=20mb,rtt=40ms\"]\n[workload]\ndownload = \"1MB\"\n");
    assert!(e.contains("rate: invalid value `20mb`"), "{e}");
    let e = error_of(
        "paths = [{ rate = \"20mbit\", queue = \"3 cups\" }]\n[workload]\ndownload = \"1MB\"\n",
    );
    assert!(e.contains("queue: invalid value `3 cups`"), "{e}");
    let e = error_of(&format!("{MINIMAL}\n[transport]\ncc = \"vegas\"\n"));
    assert!(e.contains("unknown congestion controller 'vegas'"), "{e}");
    let e = error_of(&format!("{MINIMAL}\n[transport]\nmultipath = \"both\"\n"));
    assert!(e.contains("unknown multipath mode 'both'"), "{e}");
}

#[test]
fn out_of_range_values_are_named() {
    let e = error_of(&format!("{MINIMAL}\n[transport]\nack_range_limit = 100\n"));
    assert!(
        e.starts_with("transport.ack_range_limit: 100 is out of range"),
        "{e}"
    );
    let e = error_of(&format!("{MINIMAL}\n[transport]\nack_range_limit = 0\n"));
    assert!(e.starts_with("transport.ack_range_limit"), "{e}");
    let e = error_of("paths = []\n[workload]\ndownload = \"1MB\"\n");
    assert!(e.starts_with("paths: at least one path"), "{e}");
    let e = error_of("paths = [\"rate=1mbit\"]\n[workload]\nrequests = { sizes = [] }\n");
    assert!(e.starts_with("workload.requests.sizes"), "{e}");
    let e = error_of("paths = [\"rtt=40ms\"]\n[workload]\ndownload = \"1MB\"\n");
    assert!(e.starts_with("paths[0]: no capacity"), "{e}");
}

#[test]
fn missing_trace_names_path_key_and_file() {
    let e = error_of(
        "paths = [\"rate=1mbit\", { rtt = \"40ms\", down = { trace = \"no/such/file.down\" }, up = { rate = \"1mbit\" } }]\n[workload]\ndownload = \"1MB\"\n",
    );
    assert!(
        e.starts_with("paths[1]: down.trace: cannot use trace `no/such/file.down`"),
        "{e}"
    );
}

#[test]
fn trace_paths_resolve_against_the_scenario_file() {
    let dir = std::env::temp_dir().join(format!("mpquic-lab-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("link.trace"), "1\n2\n3\n4\n").expect("trace");
    let file = dir.join("s.toml");
    std::fs::write(
        &file,
        "paths = [{ trace = \"link.trace\", rtt = \"20ms\" }]\n[workload]\ndownload = \"1KB\"\n",
    )
    .expect("scenario");
    let loaded = Scenario::from_file(&file);
    std::fs::remove_dir_all(&dir).ok();
    loaded.expect("relative trace found next to the scenario");
}

#[test]
fn command_line_overrides_the_file() {
    let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios/conext2017.toml");
    let args = SimArgs {
        scenario: Some(file),
        paths: vec!["rate=10mbit,rtt=10ms".into()],
        download: Some(ByteSize(1_000_000)),
        cc: Some(CcAlgorithm::NewReno),
        multipath: Some(MultipathMode::Spns),
        ack_range_limit: Some(4),
        seed: Some(42),
        time_limit: Some("5s".parse().expect("duration")),
        ..SimArgs::default()
    };
    let s = build_scenario(&args).expect("valid");
    assert_eq!(s.paths.len(), 1);
    assert_eq!(s.seed, 42);
    assert_eq!(s.workload, Workload::Download(ByteSize(1_000_000)));
    assert_eq!(s.transport.config.congestion, CcAlgorithm::NewReno);
    assert_eq!(s.transport.config.multipath, MultipathMode::Spns);
    assert_eq!(s.transport.ack_range_limit, Some(4));
    assert_eq!(s.time_limit.secs_f64(), 5.0);
}

#[test]
fn command_line_errors() {
    let e = build_scenario(&SimArgs::default()).unwrap_err().to_string();
    assert!(e.contains("--path"), "{e}");
    let args = SimArgs {
        paths: vec!["rate=1mbit".into(), "rate=fast".into()],
        ..SimArgs::default()
    };
    let e = build_scenario(&args).unwrap_err().to_string();
    assert!(
        e.starts_with("--path #2 `rate=fast`: rate: invalid value `fast`"),
        "{e}"
    );
    let args = SimArgs {
        scenario: Some("/no/such/scenario.toml".into()),
        ..SimArgs::default()
    };
    let e = build_scenario(&args).unwrap_err().to_string();
    assert!(e.starts_with("/no/such/scenario.toml:"), "{e}");
}

#[test]
fn clap_parses_the_documented_command_line() {
    use clap::Parser;
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: SimArgs,
    }
    let cli = Cli::try_parse_from([
        "sim",
        "--path",
        "rate=20mbit,delay=10ms,queue=1.5bdp",
        "--path",
        "rate=15mbit,rtt=40ms",
        "--download",
        "50MB",
        "--cc",
        "cubic",
        "--multipath",
        "mpns",
        "--scheduler",
        "min-rtt",
        "--ack-range-limit",
        "4",
        "--seed",
        "7",
        "--time-limit",
        "60s",
        "--json",
        "out.json",
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let s = build_scenario(&cli.args).expect("valid");
    assert_eq!(s.paths.len(), 2);
    assert_eq!(s.workload.total_bytes(), 50_000_000);
    assert_eq!(s.transport.config.scheduler, SchedulerKind::MinRtt);
    let bad = Cli::try_parse_from(["sim", "--path", "rate=1mbit", "--download", "5 parsecs"]);
    let e = bad.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(e.contains("invalid size `5 parsecs`"), "{e}");
}

#[test]
fn sim_command_writes_the_json_result() {
    let out = std::env::temp_dir().join(format!("mpquic-lab-result-{}.json", std::process::id()));
    let args = SimArgs {
        paths: vec!["rate=10mbit,rtt=20ms".into()],
        download: Some(ByteSize(200_000)),
        seed: Some(3),
        json: Some(out.clone()),
        quiet: true,
        ..SimArgs::default()
    };
    mpquic_lab::sim_command(args).expect("run");
    let text = std::fs::read_to_string(&out).expect("JSON written");
    std::fs::remove_file(&out).ok();
    let v: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(v["completed"], true, "{text}");
    assert_eq!(v["bytes_received"], 200_000);
    for key in [
        "completion_time_s",
        "goodput_mbps",
        "ack_frames_sent",
        "avg_ack_frame_bytes",
        "retransmitted_bytes",
        "spurious_retransmissions",
        "sim_wall_time_s",
        "events",
        "design",
        "scenario",
    ] {
        assert!(!v[key].is_null(), "missing {key}");
    }
    for key in [
        "id",
        "bytes_sent",
        "packets_lost",
        "srtt_ms",
        "true_rtt_ms",
        "srtt_mae_ms",
        "cwnd",
    ] {
        assert!(!v["paths"][0][key].is_null(), "missing paths[0].{key}");
    }
    assert_eq!(v["scenario"]["seed"], 3);
}

#[test]
fn successive_connections_parse_split_and_round_trip() {
    let text = r#"
        paths = ["rate=20mbit,rtt=40ms"]
        [workload]
        requests = { sizes = ["2KB", "4KB", "8KB", "16KB", "32KB"], connections = 2 }
    "#;
    let s = parse(text).expect("valid");
    assert_eq!(
        s.workload,
        Workload::ShortConnections {
            sizes: [2_000, 4_000, 8_000, 16_000, 32_000].map(ByteSize).to_vec(),
            connections: 2,
            protocol: Default::default(),
        }
    );
    // Batches [0, 2) and [2, 5): batch k is sizes[k*n/c .. (k+1)*n/c].
    assert_eq!(s.workload.batch_ends(), vec![2]);
    let again = parse(&s.to_toml().expect("toml")).expect("round trip");
    assert_eq!(again.workload, s.workload);
    let one = text.replace("connections = 2", "connections = 1");
    assert!(matches!(
        parse(&one).expect("valid").workload,
        Workload::Requests { .. }
    ));
}

#[test]
fn bad_connection_counts_are_named() {
    let with = |n: &str| {
        format!(
            "paths = [\"rate=20mbit,rtt=40ms\"]\n[workload]\n\
             requests = {{ sizes = [\"2KB\", \"4KB\", \"8KB\"], connections = {n} }}\n"
        )
    };
    for n in ["0", "4"] {
        let e = error_of(&with(n));
        assert!(e.contains("workload.requests.connections"), "{n}: {e}");
    }
    let e = error_of(&with("-1"));
    assert!(e.contains("connections"), "{e}");
    let e = error_of(&with("2, batches = 3"));
    assert!(e.contains("batches"), "{e}");
}

#[test]
fn transport_values_the_handshake_would_refuse_fail_at_load() {
    for (extra, key) in [
        (
            "[transport.ack]\nack_delay_exponent = 21\n",
            "transport.ack.ack_delay_exponent: 21",
        ),
        (
            "[transport.ack]\nmax_ack_delay_ms = 16384\n",
            "transport.ack.max_ack_delay_ms: 16384",
        ),
        (
            "[transport.ack]\nack_eliciting_threshold = 0\n",
            "transport.ack.ack_eliciting_threshold: 0",
        ),
        (
            "[transport.ack]\ndefault_range_limit = 0\n",
            "transport.ack.default_range_limit: 0",
        ),
        (
            "[transport.ack]\ndefault_range_limit = 65\n",
            "transport.ack.default_range_limit: 65",
        ),
        (
            "[transport.ack]\nmax_range_limit = 0\n",
            "transport.ack.max_range_limit: 0",
        ),
        (
            "[transport.ack]\nmax_range_limit = 65\n",
            "transport.ack.max_range_limit: 65",
        ),
        (
            "[transport]\nidle_timeout = \"1500us\"\n",
            "transport.idle_timeout: 1.5ms is not a whole number of milliseconds",
        ),
        (
            "[transport]\nmtu_discovery = true\nmtu_ceiling = 1000\n",
            "transport.mtu_ceiling: 1000 is out of range: expected 1200..=65527",
        ),
        (
            "[transport]\nack_range_limit = 65\n",
            "transport.ack_range_limit: 65 is out of range: expected 1..=64",
        ),
        (
            "[transport.ack]\nmin_ack_delay_us = 30000\n",
            "transport.ack.min_ack_delay_us: 30000 is out of range",
        ),
        (
            "[transport]\nkey_update_interval = 0\n",
            "transport.key_update_interval: 0 is out of range",
        ),
        (
            "[transport]\ninitial_rtt_ms = nan\n",
            "transport.initial_rtt_ms: NaN is out of range",
        ),
        (
            "[transport]\nmax_datagram_size = 1199\n",
            "transport.max_datagram_size: 1199",
        ),
        (
            "[transport]\ninitial_rtt_ms = 0\n",
            "transport.initial_rtt_ms: 0",
        ),
        (
            "[transport]\nreinjection = { mode = \"qoe\", lower_ms = 900, upper_ms = 900 }\n",
            "transport.reinjection: lower_ms (900)",
        ),
    ] {
        let e = error_of(&format!("{MINIMAL}{extra}"));
        assert!(e.starts_with(key), "{extra}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
    // The limits themselves are accepted.
    for extra in [
        "[transport.ack]\nack_delay_exponent = 20\nmax_ack_delay_ms = 16383\nmax_range_limit = 64\n",
        "[transport]\nidle_timeout = \"0s\"\nmax_datagram_size = 1200\n",
    ] {
        parse(&format!("{MINIMAL}{extra}")).unwrap_or_else(|e| panic!("{extra}: {e}"));
    }
}

#[test]
fn reinjection_tables_are_strict() {
    for (value, needle) in [
        (
            "{ mode = \"qoe\", lower_ms = 1, upper_ms = 2, colour = 3 }",
            "unknown field `colour`",
        ),
        (
            "{ mode = \"off\", lower_ms = 1 }",
            "apply only to mode `qoe`",
        ),
        (
            "{ mode = \"qoe\", lower_ms = 1 }",
            "needs both lower_ms and upper_ms",
        ),
        ("{ mode = \"sometimes\" }", "unknown mode `sometimes`"),
    ] {
        let e = error_of(&format!("{MINIMAL}[transport]\nreinjection = {value}\n"));
        assert!(e.contains(needle), "{value}: {e}");
    }
    let s = parse(&format!(
        "{MINIMAL}[transport]\nreinjection = {{ mode = \"always\" }}\n"
    ))
    .expect("valid");
    assert_eq!(s.transport.config.reinjection, ReinjectionMode::Always);
}

#[test]
fn video_levels_the_player_could_never_reach_are_refused() {
    let video = |fields: &str| {
        format!(
            "paths = [\"rate=20mbit,rtt=40ms\"]\n[workload]\nvideo = {{ chunks = 3, {fields} }}\n"
        )
    };
    let e = error_of(&video("buffer_target_ms = 1000, startup_ms = 2000"));
    assert!(
        e.starts_with("workload.video.startup_ms: 2000 is above"),
        "{e}"
    );
    let e = error_of(&video(
        "buffer_target_ms = 1000, startup_ms = 500, resume_ms = 1500",
    ));
    assert!(
        e.starts_with("workload.video.resume_ms: 1500 is above"),
        "{e}"
    );
    let e = error_of(&video("resume_ms = 0"));
    assert!(
        e.starts_with("workload.video.resume_ms: must be positive"),
        "{e}"
    );
}

#[test]
fn parse_errors_are_one_line_with_position_and_key() {
    let e = error_of("paths = [\"rate=1mbit\"]\n[workload]\ndownload = \"50XB\"\n");
    assert!(
        e.starts_with("test.toml:3:12: workload.download: invalid size `50XB`"),
        "{e}"
    );
    assert!(!e.contains('\n'), "one line: {e}");
    let e = error_of(&format!(
        "{MINIMAL}[transport.ack]\nrange_order = \"sideways\"\n"
    ));
    assert!(
        e.starts_with("test.toml:6:15: transport.ack.range_order: unknown variant `sideways`"),
        "{e}"
    );
    assert!(!e.contains('\n'), "one line: {e}");
}

/// The `[transport]` table is the core's schema: a table of its keys gives the configuration
/// the builder's setters give (with the lab's two defaults: fixed-size packets, ECN decided
/// by the links).
#[test]
fn a_transport_table_gives_what_the_builder_gives() {
    use mpquic_proto::{Duration, SpnsRule, SpnsRules, TransportConfig};
    let s = parse(&format!(
        r#"{MINIMAL}
        [transport]
        congestion = "bbr"
        multipath = "spns"
        scheduler = "blest"
        spns_rules = "report,no-per-path-rtt-samples"
        initial_rtt = "100ms"
        idle_timeout = "5s"
        path_idle_timeout = "2s"
        max_path_id = 3
        path_congestion = {{ 1 = "newreno" }}
        reinjection = {{ mode = "always" }}
        datagram_receive_buffer = false
        [transport.ack]
        ack_eliciting_threshold = 3
        [transport.streams]
        max_streams_bidi = 7
        "#
    ))
    .expect("valid");
    let mut ack = mpquic_proto::AckConfig::default();
    ack.ack_eliciting_threshold = 3;
    let mut streams = mpquic_proto::StreamsConfig::default();
    streams.max_streams_bidi = 7;
    let built = TransportConfig::default()
        .congestion(CcAlgorithm::Bbr)
        .multipath(MultipathMode::Spns)
        .scheduler(SchedulerKind::Blest)
        .spns_rules(SpnsRules::report().with(SpnsRule::PerPathRttSamples, false))
        .initial_rtt(Duration::from_millis(100))
        .idle_timeout(Duration::from_secs(5))
        .path_idle_timeout(Some(Duration::from_secs(2)))
        .max_path_id(3)
        .path_congestion([(mpquic_proto::PathId::new(1), CcAlgorithm::NewReno)].into())
        .reinjection(ReinjectionMode::Always)
        .datagram_receive_buffer(None)
        .ack(ack)
        .streams(streams)
        .mtu_discovery(None)
        .ecn(false);
    let config = s.transport.to_config().expect("valid");
    assert_eq!(format!("{config:?}"), format!("{built:?}"));
}

#[test]
fn core_keys_are_checked_and_named_like_the_others() {
    for (extra, key) in [
        (
            "[transport]\npath_idle_timeout = \"5 parsecs\"\n",
            "test.toml:6:21: transport.path_idle_timeout: invalid duration `5 parsecs`",
        ),
        (
            "[transport.streams]\nmax_streams_bidi = 2000000000000000000\n",
            "transport.streams.max_streams_bidi: 2000000000000000000 is out of range",
        ),
        (
            "[transport]\nmtu_discovery = { ceiling = 1000 }\n",
            "transport.mtu_discovery.ceiling: 1000 is out of range",
        ),
        (
            "[transport]\npath_failure_ptos = 0\n",
            "transport.path_failure_ptos: 0 is out of range",
        ),
    ] {
        let e = error_of(&format!("{MINIMAL}{extra}"));
        assert!(e.starts_with(key), "{extra}: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }
}

/// The run JSON records the table in the form earlier records have (the older keys as written,
/// core keys written or away from the defaults), and reading the record back gives the same
/// configuration.
#[test]
fn the_record_keeps_its_form_and_reads_back() {
    let s = parse(&format!(
        r#"{MINIMAL}
        [transport]
        cc = "newreno"
        ack_range_limit = 8
        initial_rtt_ms = 100
        idle_timeout = "30s"
        max_path_id = 3
        crypto = "sim"
        "#
    ))
    .expect("valid");
    let json = serde_json::to_string(&s.transport).expect("JSON");
    assert_eq!(
        json,
        r#"{"cc":"newreno","multipath":"auto","scheduler":"ecf","ack_range_limit":8,"spns_rules":"report","initial_rtt_ms":100.0,"pacing":true,"idle_timeout":"30s","crypto":"sim","max_path_id":3}"#
    );
    let back: mpquic_lab::TransportSettings = serde_json::from_str(&json).expect("reads back");
    let (a, b) = (s.transport.to_config(), back.to_config());
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
}
