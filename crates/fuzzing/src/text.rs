//! Harnesses for the text and byte parsers: wire decoders, Mahimahi traces, lab scenarios, the
//! netsim/lab/CLI unit and path-spec parsers, and the hq-interop request line.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::Component;

use mpquic_lab::units::{ByteSize, SimDuration};
use mpquic_lab::Scenario;
use mpquic_netsim::generate::MAX_DURATION_MS;
use mpquic_netsim::spec::{CapacitySpec, DirSpec, TraceSource};
use mpquic_netsim::time::ms;
use mpquic_netsim::toy::{CbrSender, Sink, ToyNode};
use mpquic_netsim::{LinkConfig, MahimahiTrace, PathSpec, Simulator};

/// The CLI is a binary crate; its unit parsers are compiled in here from their source file.
/// Its `pub` items are public only to the binary's own modules, hence the allowances.
#[allow(dead_code, unreachable_pub)]
#[path = "../../cli/src/units.rs"]
mod cli_units;

/// Generated traces up to this length are resolved, and so are those beyond the generator's
/// limit (rejected at once); lengths in between are valid but take time proportional to their
/// length, which would only slow the fuzzer down.
const MAX_GENERATED_MS: u64 = 60_000;

/// Every wire decoder (varints, frames, headers, transport parameters) over the input.
pub fn wire_decode(data: &[u8]) {
    mpquic_wire::fuzz_decode_all(data);
}

/// The Mahimahi trace parser; a trace it accepts must survive a text round trip and drive a
/// simulated link for a while.
pub fn mahimahi_trace(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(trace) = MahimahiTrace::parse(&text, "fuzz") else {
        return;
    };
    let again = MahimahiTrace::parse(&trace.to_text(), "fuzz").expect("to_text re-parses");
    assert_eq!(again, trace, "trace text round trip");
    let _ = trace.mean_rate_bps();
    // A bin size that keeps the series short whatever the period.
    let _ = trace.rate_series(trace.period_ms() / 256 + 1);
    run_over_trace(trace);
}

fn run_over_trace(trace: MahimahiTrace) {
    let ip = |n: u8| IpAddr::V4(Ipv4Addr::new(10, 0, 0, n));
    let mut sim: Simulator<ToyNode> = Simulator::new(1);
    let cbr = CbrSender::new(
        SocketAddr::new(ip(1), 1),
        SocketAddr::new(ip(2), 1),
        1200,
        ms(1),
        50,
    );
    let added = sim.add_node(ToyNode::Cbr(cbr), [ip(1)]).is_ok()
        && sim
            .add_node(ToyNode::Sink(Sink::default()), [ip(2)])
            .is_ok()
        && sim
            .add_path(
                ip(1),
                ip(2),
                LinkConfig::trace(trace.clone()),
                LinkConfig::trace(trace),
            )
            .is_ok();
    if added {
        sim.run_until(ms(200));
    }
}

fn has_slow_trace(d: &DirSpec) -> bool {
    match &d.capacity {
        // Resolving reads the file: arbitrary paths (/dev/zero) are not the parser's business.
        Some(CapacitySpec::Trace(TraceSource::File(_))) => true,
        Some(CapacitySpec::Trace(TraceSource::Generated { duration_ms, .. })) => {
            duration_ms.is_some_and(|d| (MAX_GENERATED_MS + 1..=MAX_DURATION_MS).contains(&d))
        }
        _ => false,
    }
}

/// Whether resolving `spec` would read a file or generate a long trace.
fn resolve_is_slow(spec: &PathSpec) -> bool {
    [&spec.shared, &spec.up, &spec.down]
        .into_iter()
        .any(has_slow_trace)
}

/// The lab's scenario loader on arbitrary text: parse, validate (which resolves every path),
/// and a scenario it accepts must serialize and load again.
pub fn scenario_toml(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    // Validation loads traces; parse first (as `from_toml_str` does) to skip slow resolutions.
    let Ok(parsed) = toml::from_str::<Scenario>(&text) else {
        return;
    };
    let specs = parsed.paths.iter().map(|p| &p.0);
    if specs
        .chain(parsed.shared_bottleneck.iter().map(|b| &b.0))
        .any(resolve_is_slow)
    {
        return;
    }
    let Ok(scenario) = Scenario::from_toml_str(&text, "fuzz") else {
        return;
    };
    let back = scenario.to_toml().expect("a loaded scenario serializes");
    if let Err(e) = Scenario::from_toml_str(&back, "fuzz-again") {
        panic!("serialized scenario does not load: {e}\n{back}");
    }
}

/// Size, duration and path-spec parsers (netsim, lab, CLI) on every line of the input. Parsed
/// values must print back to text that parses to the same value.
pub fn unit_parsers(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for line in text.lines().take(64) {
        let _ = mpquic_netsim::spec::parse_duration(line);
        let _ = mpquic_netsim::spec::split_number(line);
        if let Ok(size) = line.parse::<ByteSize>() {
            let back: ByteSize = size.to_string().parse().expect("ByteSize re-parses");
            assert_eq!(back, size, "ByteSize round trip of {line:?}");
        }
        if let Ok(d) = line.parse::<SimDuration>() {
            let back: SimDuration = d.to_string().parse().expect("SimDuration re-parses");
            assert_eq!(back, d, "SimDuration round trip of {line:?}");
        }
        let _ = cli_units::parse_size(line);
        let _ = cli_units::parse_duration(line);
        path_spec(line);
    }
}

fn path_spec(line: &str) {
    let Ok(spec) = PathSpec::parse(line) else {
        return;
    };
    let canonical = spec.to_string();
    match PathSpec::parse(&canonical) {
        Ok(back) => assert_eq!(
            back, spec,
            "path spec round trip: {line:?} -> {canonical:?}"
        ),
        Err(e) => panic!("canonical spec {canonical:?} of {line:?} does not parse: {e}"),
    }
    if !resolve_is_slow(&spec) {
        let _ = spec.resolve();
    }
}

/// The hq-interop (HTTP/0.9) request parser and the mapping of its target to a relative path,
/// which must never leave the served directory.
pub fn hq_request(data: &[u8]) {
    let Ok(target) = mpquic::hq::parse_request(data) else {
        return;
    };
    assert!(target.starts_with('/'), "target {target:?}");
    if let Ok(relative) = mpquic::hq::relative_path(&target) {
        assert!(
            relative
                .components()
                .all(|c| matches!(c, Component::Normal(_))),
            "{target:?} maps to {relative:?}, outside the served directory"
        );
    }
}
