//! User-supplied Mahimahi traces for the Wi-Fi + cellular pair
//! (`mpquic lab run spns-vs-mpns --traces DIR`).
//!
//! The SPNS report (§2.3) replayed one recorded office Wi-Fi trace and one
//! cellular trace. By default the suite uses the project's generated ones;
//! with `--traces` it replays the user's recordings in the paper's roles:
//! the cellular path replays DIR's cellular files, and the Wi-Fi path a
//! Wi-Fi recording from DIR when it has one (a name containing `wifi`, any
//! case) or else a generated Wi-Fi trace — never a cellular recording (a
//! cellular trace in the Wi-Fi role gave 10 ms paths of ~5 Mbit/s with
//! 8-packet queues). A trace is a pair of Mahimahi files `NAME.up` (client
//! to server) and `NAME.down` (server to client) in one directory.
//!
//! Each trace pair replays its files from a start point chosen from the
//! run seed and the pair ([`start_offset_ms`]), so the pairs of one run set
//! and the runs of different seeds see different stretches of a recording.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use mpquic_netsim::MahimahiTrace;
use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::SplitMix64;

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
    /// The shorter of the two files' periods (ms): start offsets stay below it.
    pub period_ms: u64,
}

impl TraceFiles {
    /// Whether the name marks a Wi-Fi recording.
    pub fn is_wifi(&self) -> bool {
        self.name.to_ascii_lowercase().contains("wifi")
    }

    /// The path spec replaying this trace from `start_ms` with one-way
    /// `delay` and a queue of one BDP of the trace's mean rate (the
    /// generated pair's settings).
    pub fn path_spec(&self, delay: &str, start_ms: u64) -> String {
        format!(
            "up.trace={},down.trace={},trace_start={start_ms}ms,delay={delay},queue=1bdp",
            self.up.display(),
            self.down.display()
        )
    }
}

/// The traces of a directory by role.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceRoles {
    /// Names containing `wifi`, by name (may be empty: then the Wi-Fi role
    /// replays a generated trace).
    pub wifi: Vec<TraceFiles>,
    /// Every other trace, by name (at least one).
    pub cellular: Vec<TraceFiles>,
}

/// A start point in `[0, period)` from the run seed, the trace pair and the
/// role: the first draw of a SplitMix64 generator whose first state is a
/// weighted sum of the three (deterministic, and different for different
/// seeds). SplitMix64 adds its increment before it mixes, so the generator is
/// seeded one increment below that sum.
pub fn start_offset_ms(seed: u64, pair: usize, role: u64, period_ms: u64) -> u64 {
    const SPLITMIX64_INCREMENT: u64 = 0x9E37_79B9_7F4A_7C15;
    let first_state = seed
        .wrapping_mul(SPLITMIX64_INCREMENT)
        .wrapping_add((pair as u64).wrapping_mul(0xBF58_476D_1CE4_E5B9))
        .wrapping_add(role.wrapping_mul(0x94D0_49BB_1331_11EB));
    let mut rng = SplitMix64::seed_from_u64(first_state.wrapping_sub(SPLITMIX64_INCREMENT));
    rng.next_u64() % period_ms.max(1)
}

/// Loads one trace file (for its period), with the file named on error.
fn period_of(path: &Path) -> anyhow::Result<u64> {
    let t = MahimahiTrace::load(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(t.period_ms())
}

/// The complete traces of `dir` (both `.up` and `.down`), loaded once so a
/// bad file is one clear error before anything runs.
fn complete_traces(dir: &Path) -> anyhow::Result<Vec<TraceFiles>> {
    let mut names = Vec::new();
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let path = entry
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        let is_down = path.extension().is_some_and(|e| e == "down");
        if let (true, Some(stem)) = (is_down, path.file_stem().and_then(|s| s.to_str())) {
            names.push(stem.to_owned());
        }
    }
    names.sort();
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
        let period_ms = period_of(&up)?.min(period_of(&down)?);
        traces.push(TraceFiles {
            name,
            up,
            down,
            period_ms,
        });
    }
    Ok(traces)
}

/// The traces of `dir` by role: names containing `wifi` (any case) play
/// the Wi-Fi path, every other trace the cellular path.
///
/// Errors (never panics) when `dir` is unreadable, holds no complete
/// cellular trace, a file is not a valid Mahimahi trace, or a file name
/// cannot be written in a path spec.
pub fn trace_roles(dir: &Path) -> anyhow::Result<TraceRoles> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("trace directory {}", dir.display()))?;
    let (wifi, cellular): (Vec<TraceFiles>, Vec<TraceFiles>) = complete_traces(&dir)?
        .into_iter()
        .partition(TraceFiles::is_wifi);
    if cellular.is_empty() {
        let found: Vec<&str> = wifi.iter().map(|t| t.name.as_str()).collect();
        bail!(
            "{}: expected at least one cellular Mahimahi trace as NAME.up and NAME.down \
             (a name without \"wifi\"; found {} complete Wi-Fi trace{}{}{})",
            dir.display(),
            found.len(),
            if found.len() == 1 { "" } else { "s" },
            if found.is_empty() { "" } else { ": " },
            found.join(", ")
        );
    }
    Ok(TraceRoles { wifi, cellular })
}

impl TraceRoles {
    /// The two path specs of trace pair `k`: the Wi-Fi role (a Wi-Fi file
    /// of DIR, or `gen:wifi:wifi_seed`) and the cellular role (cellular
    /// file `k mod n`), each from a start point chosen from `seed` and `k`.
    pub fn pair(&self, seed: u64, k: usize, wifi_seed: u64) -> [String; 2] {
        let wifi = match self.wifi.get(k % self.wifi.len().max(1)) {
            Some(t) => t.path_spec(WIFI_DELAY, start_offset_ms(seed, k, 0, t.period_ms)),
            None => format!("trace=gen:wifi:{wifi_seed},delay={WIFI_DELAY},queue=1bdp"),
        };
        let cell = &self.cellular[k % self.cellular.len()];
        let start = start_offset_ms(seed, k, 1, cell.period_ms);
        [wifi, cell.path_spec(CELLULAR_DELAY, start)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) {
        for ext in ["up", "down"] {
            std::fs::write(dir.join(format!("{name}.{ext}")), text).expect("write");
        }
    }

    #[test]
    fn cellular_files_never_play_the_wifi_role() {
        let tmp = tempfile::tempdir().expect("tmp");
        write(tmp.path(), "verizon", "1\n2\n3\n");
        write(tmp.path(), "att", "1\n5\n");
        let roles = trace_roles(tmp.path()).expect("roles");
        assert!(roles.wifi.is_empty());
        let [w, c] = roles.pair(1, 0, 77);
        assert!(w.starts_with("trace=gen:wifi:77,"), "{w}");
        assert!(c.contains("att.down") && c.contains("delay=30ms"), "{c}");
        let [_, c1] = roles.pair(1, 1, 78);
        assert!(c1.contains("verizon.down"), "{c1}");
        write(tmp.path(), "Office-WiFi", "1\n");
        let roles = trace_roles(tmp.path()).expect("roles");
        let [w, c] = roles.pair(1, 0, 77);
        assert!(
            w.contains("Office-WiFi.down") && w.contains("delay=10ms"),
            "{w}"
        );
        assert!(!c.contains("WiFi"), "{c}");
    }

    #[test]
    fn offsets_depend_on_seed_and_pair() {
        let a = start_offset_ms(1, 0, 1, 140_000);
        assert!(a < 140_000);
        assert_ne!(a, start_offset_ms(2, 0, 1, 140_000));
        assert_ne!(a, start_offset_ms(1, 1, 1, 140_000));
        assert_eq!(a, start_offset_ms(1, 0, 1, 140_000));
        assert_eq!(start_offset_ms(5, 3, 1, 0), 0);
        // The offsets the hand-written mixer gave before `rand_xoshiro` (same trace runs).
        assert_eq!(start_offset_ms(1, 0, 1, 1_000_000_000), 883_737_428);
        assert_eq!(start_offset_ms(42, 3, 2, 86_400_000), 38_790_188);
    }

    #[test]
    fn bad_directories_are_errors() {
        let tmp = tempfile::tempdir().expect("tmp");
        let e = format!("{:#}", trace_roles(tmp.path()).unwrap_err());
        assert!(
            e.contains("at least one cellular") && e.contains("found 0"),
            "{e}"
        );
        write(tmp.path(), "home-wifi", "1\n");
        let e = format!("{:#}", trace_roles(tmp.path()).unwrap_err());
        assert!(e.contains("home-wifi"), "{e}");
        write(tmp.path(), "lte", "x\n");
        let e = format!("{:#}", trace_roles(tmp.path()).unwrap_err());
        assert!(e.contains("lte.up") || e.contains("lte.down"), "{e}");
    }
}
