//! Every checked-in seed, and the local fuzzing corpus when there is one, through its harness
//! on stable: a crash once found and saved under `fuzz/seeds/<target>/` stays fixed.

use std::path::{Path, PathBuf};

use mpquic_fuzzing::TARGETS;

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs every file of `fuzz/<kind>/<target>/`; returns how many ran. A file that vanished
/// since the listing is skipped: a fuzzer running beside the tests merges its corpus.
fn replay(kind: &str, target: &str, harness: fn(&[u8])) -> usize {
    let inputs = files(&fuzz_dir().join(kind).join(target));
    let mut ran = 0;
    for path in &inputs {
        let data = match std::fs::read(path) {
            Ok(data) => data,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => panic!("{}: {e}", path.display()),
        };
        ran += 1;
        // A panic names the input that caused it.
        let result = std::panic::catch_unwind(|| harness(&data));
        assert!(result.is_ok(), "{target}: {} panicked", path.display());
    }
    ran
}

#[test]
fn every_target_has_seeds_and_they_pass() {
    for &(target, harness) in TARGETS {
        let n = replay("seeds", target, harness);
        assert!(n >= 3, "{target}: only {n} seeds in fuzz/seeds/{target}");
    }
}

/// The local corpus is large after a long run; `MPQUIC_REPLAY_CORPUS=0` skips it.
#[test]
fn local_corpus_passes() {
    if std::env::var("MPQUIC_REPLAY_CORPUS").is_ok_and(|v| v == "0") {
        return;
    }
    for &(target, harness) in TARGETS {
        let n = replay("corpus", target, harness);
        if n > 0 {
            eprintln!("{target}: replayed {n} corpus inputs");
        }
    }
}
