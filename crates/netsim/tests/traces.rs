//! Every shared Mahimahi trace parses and has a plausible rate; generated
//! traces round-trip.

use std::path::PathBuf;

use mpquic_netsim::generate::{self, GeneratorConfig};
use mpquic_netsim::{MahimahiTrace, TraceError};

fn shared_traces_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/traces"
    ))
}

/// Trace files in the directory: everything except README files.
fn trace_files() -> Option<Vec<PathBuf>> {
    let dir = shared_traces_dir();
    let entries = match std::fs::read_dir(&dir) {
        Ok(e) => e,
        Err(e) => {
            println!("skipping: {} not readable ({e})", dir.display());
            return None;
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !name.starts_with("README") && !name.starts_with('.')
        })
        .collect();
    files.sort();
    Some(files)
}

#[test]
fn every_shared_trace_parses_with_plausible_rate() {
    let Some(files) = trace_files() else {
        return;
    };
    assert!(!files.is_empty(), "no trace files found");
    for f in files {
        let t = MahimahiTrace::load(&f).unwrap_or_else(|e| panic!("{e}"));
        let mbit = t.mean_rate_bps() / 1e6;
        println!(
            "{}: {} opportunities, period {} ms, mean {mbit:.2} Mbit/s",
            f.display(),
            t.opportunities_per_period(),
            t.period_ms()
        );
        assert!(
            (0.1..=200.0).contains(&mbit),
            "{}: {mbit} Mbit/s",
            f.display()
        );
        assert!(t.period_ms() >= 1000, "{}: suspiciously short", f.display());
        // Text round trip preserves every timestamp.
        let again = MahimahiTrace::parse(&t.to_text(), "again").expect("reparse");
        assert_eq!(again.timestamps_ms(), t.timestamps_ms());
    }
}

#[test]
fn load_errors_name_the_file_and_line() {
    let dir = std::env::temp_dir().join(format!("netsim-traces-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("mkdir");
    let path = dir.join("trace.up");
    let text = (1..=16)
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join("\n")
        + "\n12\n";
    std::fs::write(&path, text).expect("write");
    let err = MahimahiTrace::load(&path).unwrap_err();
    let expected = format!(
        "{}:17: timestamp 12 is smaller than the previous one (16)",
        path.display()
    );
    assert_eq!(err.to_string(), expected);
    assert!(matches!(err, TraceError::Line { line: 17, .. }));
    let missing = MahimahiTrace::load(dir.join("nope")).unwrap_err();
    assert!(matches!(missing, TraceError::Io { .. }));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn generated_presets_differ_in_character() {
    let wifi = generate::wifi_like(1, 60_000).expect("gen");
    let lte = generate::lte_like(1, 60_000).expect("gen");
    assert!(wifi.mean_rate_bps() > lte.mean_rate_bps());
    // Both vary over time: 1 s bins are not all equal.
    for t in [&wifi, &lte] {
        let bins = t.rate_series(1000);
        let max = bins.iter().cloned().fold(0.0, f64::max);
        let min = bins.iter().cloned().fold(f64::MAX, f64::min);
        assert!(max > 2.0 * min, "{}: {min}..{max}", t.source());
    }
    let cfg = GeneratorConfig::lte_like();
    let json = serde_json::to_string(&cfg).expect("json");
    let back: GeneratorConfig = serde_json::from_str(&json).expect("parse");
    assert_eq!(back, cfg);
}
