//! What every report must say to be read fairly (issue 13, lab fidelity):
//! which paper it reproduces (by title), how it was made (mode, transfer
//! size, program version, date), how many runs completed, how long a run
//! may take, and where our numbers differ from the paper's by more than
//! their own noise — with one sentence each, generated from the numbers.

use std::path::Path;

use mpquic_netsim::PathSpec;
use mpquic_report::{Cell, Section, Table};

use super::common::RunRecord;
use super::common::{num, LinkRecord};

/// A paper a suite reproduces, named by its title (not by a seed file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paper {
    /// Short name used in table titles (`SPNS report`, `XLINK`, ...).
    pub short: &'static str,
    /// The title, as printed on the paper.
    pub title: &'static str,
    /// Authors and venue.
    pub source: &'static str,
}

impl Paper {
    /// `Short: “Title” (source)`.
    pub fn cite(&self) -> String {
        format!(
            "{}: \u{201c}{}\u{201d} ({})",
            self.short, self.title, self.source
        )
    }
}

/// Seed 000.
pub const SPNS_REPORT: Paper = Paper {
    short: "SPNS report",
    title: "Technical Report: Implementation of Single Packet Number Space in Multi-Path QUIC",
    source: "Tang, Ma, Liu, Alibaba Group, arXiv 2210.13663",
};

/// Seed 002.
pub const XLINK: Paper = Paper {
    short: "XLINK",
    title: "XLINK: QoE-Driven Multi-Path QUIC Transport in Large-scale Video Services",
    source: "Zheng et al., ACM SIGCOMM 2021",
};

/// Seed 003 (notes on the paper).
pub const CCR_2022: Paper = Paper {
    short: "CCR 2022",
    title: "The Packet Number Space Debate in Multipath QUIC",
    source: "De Coninck, ACM SIGCOMM Computer Communication Review 2022",
};

/// Seed 004 (slides).
pub const CONEXT_2017: Paper = Paper {
    short: "CoNEXT 2017",
    title: "Multipath QUIC: Design and Evaluation",
    source: "De Coninck, Bonaventure, ACM CoNEXT 2017",
};

/// The program version: the crate version plus `git describe` at build time
/// when git was available (see `build.rs`).
pub fn program_version() -> String {
    let v = env!("CARGO_PKG_VERSION");
    match option_env!("MPQUIC_GIT_DESCRIBE") {
        Some(d) => format!("mpquic {v} ({d})"),
        None => format!("mpquic {v}"),
    }
}

/// Today's UTC date as `YYYY-MM-DD` (civil-from-days, H. Hinnant's algorithm;
/// no date crate needed for one line).
pub fn utc_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    civil_date(secs / 86_400)
}

/// `YYYY-MM-DD` of a day count since 1970-01-01.
pub fn civil_date(days: u64) -> String {
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// What `suite.json` says about the run (absent when a test calls a suite's
/// report directly).
#[derive(Debug, Clone, Default, serde::Deserialize)]
struct MetaFile {
    quick: Option<bool>,
    date: Option<String>,
}

/// `1.5 MB`, `300 kB`, `50 MB` (10³ multiples, as the papers write sizes),
/// rounded for reading; [`crate::units::ByteSize`] prints sizes exactly, for
/// scenario files.
pub fn format_bytes(b: u64) -> String {
    let b = b as f64;
    let (v, unit) = if b >= 1e9 {
        (b / 1e9, "GB")
    } else if b >= 1e6 {
        (b / 1e6, "MB")
    } else if b >= 1e3 {
        (b / 1e3, "kB")
    } else {
        (b, "B")
    };
    let text = format!("{v:.2}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    format!("{text} {unit}")
}

/// The transfer sizes of the runs: `10 MB per run`, or each size with its
/// run count when they differ.
pub fn transfer_sizes(runs: &[(String, RunRecord)]) -> String {
    let mut sizes: std::collections::BTreeMap<u64, usize> = Default::default();
    for (_, r) in runs {
        *sizes.entry(r.bytes_requested).or_default() += 1;
    }
    match sizes.len() {
        0 => "no runs".to_owned(),
        1 => sizes
            .keys()
            .map(|b| format!("{} per run", format_bytes(*b)))
            .collect(),
        _ => {
            let parts: Vec<String> = sizes
                .iter()
                .map(|(b, n)| format!("{} ({n} runs)", format_bytes(*b)))
                .collect();
            format!("{} per run", parts.join(", "))
        }
    }
}

/// The "About this report" section every report starts with: papers by
/// title, mode, transfer size, runs completed, version and dates.
pub fn about_section(papers: &[Paper], runs: &[(String, RunRecord)], dir: &Path) -> Section {
    let meta: MetaFile = std::fs::read_to_string(dir.join("suite.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    let mode = match meta.quick {
        Some(true) => "quick",
        Some(false) => "full",
        None => "unknown (no suite.json beside the runs)",
    };
    let mut s = Section::new("About this report");
    let titles: Vec<String> = papers.iter().map(Paper::cite).collect();
    s.paragraphs
        .push(format!("Reproduces: {}.", titles.join("; ")));
    let done = runs.iter().filter(|(_, r)| r.completed).count();
    s.paragraphs.push(format!(
        "Mode: {mode}. Transfer size: {}. Runs: {done} completed of {}.",
        transfer_sizes(runs),
        runs.len()
    ));
    let ran = meta
        .date
        .map_or(String::new(), |d| format!("; runs made {d}"));
    s.paragraphs.push(format!(
        "Program: {}. Report built {} (UTC){ran}.",
        program_version(),
        utc_date()
    ));
    s
}

/// `c of n` for the runs that a mean or median is taken over: a run that did
/// not complete is counted here, never silently left out.
pub fn completed_of(rs: &[&RunRecord]) -> Cell {
    let done = rs.iter().filter(|r| r.completed).count();
    Cell::text(format!("{done} of {}", rs.len()))
}

/// A caption note for a chart whose points average runs: `all N runs
/// completed`, or which groups lost runs (`label: c of n completed`).
pub fn completion_note(groups: &[(String, Vec<&RunRecord>)]) -> String {
    let total: usize = groups.iter().map(|g| g.1.len()).sum();
    let short: Vec<String> = groups
        .iter()
        .filter_map(|(label, rs)| {
            let done = rs.iter().filter(|r| r.completed).count();
            (done < rs.len()).then(|| format!("{label} {done} completed of {}", rs.len()))
        })
        .collect();
    if short.is_empty() {
        format!("all {total} runs completed")
    } else {
        format!(
            "means over completed runs only: {} (other points: all completed)",
            short.join(", ")
        )
    }
}

/// A run may take this many times the ideal transfer time at the paths'
/// aggregate mean capacity before it is cut off.
pub const TIME_LIMIT_FACTOR: f64 = 10.0;

/// Longest virtual time limit (s), so a near-zero capacity cannot stall a
/// suite for simulated days.
pub const TIME_LIMIT_CAP_S: u64 = 4 * 3600;

/// The download (server-to-client) mean capacity of the paths in bit/s:
/// the sum of their `down` links' nominal rates (a trace's mean rate).
/// `None` when a spec does not resolve or has no finite rate.
pub fn aggregate_capacity_bps(paths: &[String]) -> Option<f64> {
    let mut total = 0.0;
    for p in paths {
        let r = PathSpec::parse(p).ok()?.resolve().ok()?;
        total += r.down.capacity.nominal_rate_bps()?;
    }
    (total > 0.0 && total.is_finite()).then_some(total)
}

/// The per-run virtual time limit: `max(floor, k × size / aggregate mean
/// capacity)` with k = [`TIME_LIMIT_FACTOR`], capped at
/// [`TIME_LIMIT_CAP_S`]; the floor alone when the capacity is unknown.
pub fn time_limit_s(paths: &[String], bytes: u64, floor_s: u64) -> u64 {
    let Some(bps) = aggregate_capacity_bps(paths) else {
        return floor_s;
    };
    let ideal = bytes as f64 * 8.0 / bps;
    let scaled = (TIME_LIMIT_FACTOR * ideal).ceil();
    let scaled = if scaled.is_finite() {
        scaled.min(TIME_LIMIT_CAP_S as f64) as u64
    } else {
        TIME_LIMIT_CAP_S
    };
    scaled.max(floor_s)
}

/// How a link's queue was sized, for the report: `25 pkt (37.5 kB)`.
pub fn queue_text(l: &LinkRecord) -> String {
    match l.queue_limit {
        mpquic_netsim::QueueLimit::Bytes(b) => {
            format!("{:.1} pkt ({})", b as f64 / 1500.0, format_bytes(b))
        }
        mpquic_netsim::QueueLimit::Packets(n) => format!("{n} pkt"),
        mpquic_netsim::QueueLimit::Infinite => "unlimited".to_owned(),
    }
}

/// One of the paper's figures beside ours: ours is a sample (one value per
/// seed, trace pair or condition), so its spread is the noise.
#[derive(Debug, Clone, PartialEq)]
pub struct Comparison {
    /// What is compared, e.g. `SPNS speed vs MPNS (%)`.
    pub figure: String,
    /// The paper's value.
    pub paper: f64,
    /// Our values, one per independent run group.
    pub samples: Vec<f64>,
    /// What one sample is (`trace pairs`, `traces`, `conditions`).
    pub per: &'static str,
    /// Likely causes of a difference that the suite knows of.
    pub causes: Vec<String>,
}

impl Comparison {
    /// Mean of our samples.
    pub fn ours(&self) -> Option<f64> {
        mpquic_report::stats::mean(&self.samples)
    }

    /// The noise: the standard deviation of our samples across
    /// seeds/traces (0 with fewer than two samples: no estimate).
    pub fn noise(&self) -> f64 {
        mpquic_report::stats::stddev(&self.samples).unwrap_or(0.0)
    }

    /// Ours minus the paper's.
    pub fn difference(&self) -> Option<f64> {
        self.ours().map(|o| o - self.paper)
    }

    /// One sentence when |difference| > noise, else `None`.
    pub fn discussion(&self) -> Option<String> {
        let d = self.difference()?;
        let noise = self.noise();
        if d.abs() <= noise {
            return None;
        }
        let n = self.samples.len();
        let spread = if n < 2 {
            format!(
                "from one {} only, so without a noise estimate",
                self.per.trim_end_matches('s')
            )
        } else if noise > 0.0 {
            format!(
                "{:.1} times the spread ({}) across {n} {}",
                d.abs() / noise,
                fmt_num(noise),
                self.per
            )
        } else {
            format!("with no spread across {n} {}", self.per)
        };
        let causes = if self.causes.is_empty() {
            "the cause is not known to the suite".to_owned()
        } else {
            format!("likely because {}", self.causes.join(", and "))
        };
        Some(format!(
            "{}: ours is {} against the paper's {}, a difference of {} that is {spread}; {causes}.",
            self.figure,
            fmt_num(self.ours().unwrap_or(f64::NAN)),
            fmt_num(self.paper),
            fmt_signed(d),
        ))
    }
}

/// About three significant digits, as the papers print their figures.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

fn fmt_signed(v: f64) -> String {
    if v >= 0.0 {
        format!("+{}", fmt_num(v))
    } else {
        fmt_num(v)
    }
}

/// The comparison table and the discussion sentences, as a section.
pub fn differences_section(paper: &Paper, comparisons: &[Comparison]) -> (Section, Table) {
    let mut s = Section::new(format!("Differences from the paper ({})", paper.short));
    s.paragraphs.push(format!(
        "Each row sets one figure of {} beside ours: ours is the mean over independent run \
         groups, noise is their standard deviation. A difference larger than the noise is \
         discussed below in one sentence generated from the numbers.",
        paper.cite()
    ));
    let cols = [
        "figure",
        "paper",
        "ours (mean)",
        "noise (sd)",
        "samples",
        "difference",
        "beyond noise",
    ];
    let mut t = Table::new(
        "Paper vs ours",
        cols.iter().map(|c| (*c).to_owned()).collect(),
    );
    for c in comparisons {
        let beyond = c.difference().map(|d| d.abs() > c.noise());
        t.rows.push(vec![
            Cell::text(&c.figure),
            Cell::num(c.paper, 3),
            num(c.ours(), 3),
            Cell::num(c.noise(), 3),
            Cell::text(match c.samples.len() {
                1 => format!("1 {}", c.per.trim_end_matches('s')),
                n => format!("{n} {}", c.per),
            }),
            num(c.difference(), 3),
            Cell::text(match beyond {
                Some(true) => "yes",
                Some(false) => "no",
                None => "no data",
            }),
        ]);
    }
    let lines: Vec<String> = comparisons
        .iter()
        .filter_map(Comparison::discussion)
        .collect();
    if lines.is_empty() {
        s.paragraphs
            .push("No difference exceeds its noise.".to_owned());
    }
    s.paragraphs.extend(lines);
    (s, t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_sizes() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(19_723), "2024-01-01");
        assert_eq!(civil_date(20_513), "2026-03-01");
        assert_eq!(format_bytes(10_000_000), "10 MB");
        assert_eq!(format_bytes(1_500_000), "1.5 MB");
        assert_eq!(format_bytes(300_000), "300 kB");
        assert!(program_version().starts_with("mpquic "));
    }

    #[test]
    fn time_limit_scales_with_size_and_capacity() {
        let paths = [
            "rate=8mbit,rtt=20ms".to_owned(),
            "rate=2mbit,rtt=20ms".to_owned(),
        ];
        // 50 MB at 10 Mbit/s = 40 s ideal; x10 = 400 s.
        assert_eq!(time_limit_s(&paths, 50_000_000, 60), 400);
        // 1 MB: 0.8 s ideal, x10 = 8 s, below the floor.
        assert_eq!(time_limit_s(&paths, 1_000_000, 60), 60);
        assert_eq!(time_limit_s(&paths[1..], 50_000_000, 60), 2000);
        assert_eq!(time_limit_s(&["bogus".to_owned()], 50_000_000, 60), 60);
        let slow = ["rate=800bit,rtt=20ms".to_owned()];
        assert_eq!(time_limit_s(&slow, 50_000_000, 60), TIME_LIMIT_CAP_S);
    }

    #[test]
    fn completion_is_counted_not_hidden() {
        let ok = RunRecord {
            completed: true,
            ..Default::default()
        };
        let bad = RunRecord::default();
        assert_eq!(completed_of(&[&ok, &bad, &ok]).display(), "2 of 3");
        let note = completion_note(&[("SPNS".into(), vec![&ok, &bad]), ("MPNS".into(), vec![&ok])]);
        assert!(note.contains("SPNS 1 completed of 2"), "{note}");
        assert_eq!(
            completion_note(&[("MPNS".into(), vec![&ok, &ok])]),
            "all 2 runs completed"
        );
    }

    #[test]
    fn differences_beyond_noise_get_one_sentence() {
        let mut c = Comparison {
            figure: "SPNS speed vs MPNS (%)".into(),
            paper: -0.3,
            samples: vec![-3.0, -2.0, -4.0],
            per: "trace pairs",
            causes: vec!["the traces are generated".into()],
        };
        let line = c.discussion().expect("beyond noise");
        assert!(
            line.contains("ours is -3.00") && line.contains("of -2.70"),
            "{line}"
        );
        assert!(
            line.contains("2.7 times the spread (1.00) across 3 trace pairs"),
            "{line}"
        );
        assert!(line.contains("the traces are generated"), "{line}");
        assert_eq!(line.matches(". ").count(), 0, "one sentence: {line}");
        c.samples = vec![-1.0, 1.0, 0.0];
        assert_eq!(c.discussion(), None, "within noise");
        c.samples = vec![5.0];
        assert!(c
            .discussion()
            .expect("single")
            .contains("without a noise estimate"));
        let (s, t) = differences_section(&SPNS_REPORT, &[c]);
        assert_eq!(t.rows.len(), 1);
        assert!(s.paragraphs[0].contains("Single Packet Number Space"));
    }
}
