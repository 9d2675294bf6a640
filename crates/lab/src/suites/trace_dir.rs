//! User-supplied Mahimahi traces for the Wi-Fi + cellular pair
//! (`mpquic lab run spns-vs-mpns --traces DIR`).
//!
//! The SPNS report (seed 000) replayed recorded office Wi-Fi and cellular
//! traces; by default the suite uses the project's generated ones, and
//! with `--traces` it replays the user's recordings instead. A trace is a
//! pair of Mahimahi files `NAME.up` (client to server) and `NAME.down`
//! (server to client) in one directory.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

/// One-way delay added to the Wi-Fi-role path (as for the generated traces).
pub const WIFI_DELAY: &str = "10ms";

/// One-way delay added to the cellular-role path.
pub const CELLULAR_DELAY: &str = "30ms";

/// One Mahimahi trace: `NAME.up` and `NAME.down` in a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceFiles {
    /// The file name without `.up` / `.down`.
    pub name: String,
    /// Client-to-server capacity file.
    pub up: PathBuf,
    /// Server-to-client capacity file.
    pub down: PathBuf,
}

impl TraceFiles {
    /// The path spec replaying this trace with one-way `delay` and a
    /// queue of one BDP (the generated pair's settings).
    pub fn path_spec(&self, delay: &str) -> String {
        format!(
            "up.trace={},down.trace={},delay={delay},queue=1bdp",
            self.up.display(),
            self.down.display()
        )
    }
}

/// The traces of `dir`, in the order trace pairs use them: names
/// containing `wifi` (any case) first, then by name. Trace pair `k` plays
/// trace `k mod n` on the Wi-Fi-role path and trace `(k + 1) mod n` on the
/// cellular-role path.
///
/// Errors (never panics) when `dir` is unreadable, holds fewer than two
/// complete traces, or a file name cannot be written in a path spec.
pub fn mahimahi_pairs(dir: &Path) -> anyhow::Result<Vec<TraceFiles>> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("trace directory {}", dir.display()))?;
    let mut names = Vec::new();
    let entries = std::fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        let is_down = path.extension().is_some_and(|e| e == "down");
        if let (true, Some(stem)) = (is_down, path.file_stem().and_then(|s| s.to_str())) {
            names.push(stem.to_owned());
        }
    }
    let mut traces = Vec::new();
    for name in names {
        let up = dir.join(format!("{name}.up"));
        let down = dir.join(format!("{name}.down"));
        if !up.is_file() || !down.is_file() {
            continue;
        }
        for p in [&up, &down] {
            let text = p.display().to_string();
            if text.contains([',', '=']) || text.chars().any(char::is_whitespace) {
                bail!(
                    "trace file {text}: a path with ',', '=' or whitespace cannot be used in a \
                     path spec; rename or move it"
                );
            }
        }
        traces.push(TraceFiles { name, up, down });
    }
    if traces.len() < 2 {
        let found: Vec<&str> = traces.iter().map(|t| t.name.as_str()).collect();
        bail!(
            "{}: expected at least two Mahimahi traces, each as NAME.up and NAME.down \
             (found {} complete{}{}); the Wi-Fi + cellular pair needs two",
            dir.display(),
            found.len(),
            if found.is_empty() { "" } else { ": " },
            found.join(", ")
        );
    }
    traces.sort_by_key(|t| {
        (
            !t.name.to_ascii_lowercase().contains("wifi"),
            t.name.clone(),
        )
    });
    Ok(traces)
}
