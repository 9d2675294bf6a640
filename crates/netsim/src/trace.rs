//! Mahimahi packet-delivery traces.
//!
//! A Mahimahi trace is a text file with one millisecond timestamp per line.
//! Each line is one *delivery opportunity*: the chance to drain up to 1500
//! bytes from the bottleneck queue at that millisecond. A timestamp repeated
//! `k` times gives `k` opportunities in that millisecond. The trace repeats
//! forever with a period equal to its last timestamp, so the one-line trace
//! `"1"` is a constant 12 Mbit/s link (one 1500-byte opportunity per ms).
//!
//! In the simulator the trace is aligned to virtual time 0: opportunity `i`
//! of repetition `k` happens at `k * period + timestamp[i]` milliseconds.
//! A trace may instead start at an offset into its period
//! ([`MahimahiTrace::with_start`]): virtual time `t` then replays trace time
//! `t + start`, so runs with different seeds can replay different stretches
//! of one recording rather than always its first seconds.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::time::{SimTime, MILLISECOND};

/// Bytes that one delivery opportunity can carry.
pub const OPPORTUNITY_BYTES: u64 = 1500;

/// Errors from parsing or loading a Mahimahi trace. The `Display` form is
/// `file:line: reason` for line-level problems.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TraceError {
    /// A specific line is malformed.
    #[error("{file}:{line}: {reason}")]
    Line {
        /// Source (file) name given to the parser.
        file: String,
        /// 1-based line number.
        line: usize,
        /// What is wrong with the line.
        reason: String,
    },
    /// The trace as a whole is unusable (e.g. empty).
    #[error("{file}: {reason}")]
    Invalid {
        /// Source (file) name given to the parser.
        file: String,
        /// What is wrong with the trace.
        reason: String,
    },
    /// The file could not be read.
    #[error("{file}: cannot read trace: {reason}")]
    Io {
        /// Path of the file.
        file: String,
        /// The I/O error message.
        reason: String,
    },
}

/// A validated Mahimahi trace: non-empty, non-decreasing millisecond
/// timestamps whose last value (the period) is positive.
///
/// Cloning is cheap (the timestamps are shared).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "TraceRepr", into = "TraceRepr")]
pub struct MahimahiTrace {
    source: String,
    timestamps_ms: Arc<Vec<u64>>,
    /// Where in the period replay starts (ms, always below the period).
    start_ms: u64,
}

/// Serialized form of [`MahimahiTrace`] (validated on deserialization).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TraceRepr {
    source: String,
    timestamps_ms: Vec<u64>,
    #[serde(default, skip_serializing_if = "is_zero")]
    start_ms: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl TryFrom<TraceRepr> for MahimahiTrace {
    type Error = TraceError;

    fn try_from(r: TraceRepr) -> Result<Self, TraceError> {
        Ok(MahimahiTrace::from_timestamps(r.timestamps_ms, r.source)?.with_start(r.start_ms))
    }
}

impl From<MahimahiTrace> for TraceRepr {
    fn from(t: MahimahiTrace) -> Self {
        TraceRepr {
            source: t.source,
            timestamps_ms: t.timestamps_ms.as_ref().clone(),
            start_ms: t.start_ms,
        }
    }
}

fn parse_line(line: &str, prev: Option<u64>) -> Result<u64, String> {
    if let Some(rest) = line.strip_prefix('-') {
        if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return Err(format!("negative timestamp {line:?}"));
        }
    }
    if !line.bytes().all(|b| b.is_ascii_digit()) {
        let numeric = line.bytes().any(|b| b.is_ascii_digit());
        let reason = if numeric && line.parse::<f64>().is_ok() {
            format!("timestamp {line:?} is not an integer number of milliseconds")
        } else {
            format!("expected a non-negative integer millisecond timestamp, found {line:?}")
        };
        return Err(reason);
    }
    let value: u64 = line
        .parse()
        .map_err(|_| format!("timestamp {line:?} is too large"))?;
    match prev {
        Some(p) if value < p => Err(format!(
            "timestamp {value} is smaller than the previous one ({p})"
        )),
        _ => Ok(value),
    }
}

impl MahimahiTrace {
    /// Parses trace text strictly. `source_name` is used in error messages
    /// (typically the file name). Blank lines are ignored; every other line
    /// must be a non-negative integer, with no sign, fraction or trailing
    /// characters (surrounding whitespace is allowed), and timestamps must
    /// not decrease.
    pub fn parse(text: &str, source_name: &str) -> Result<Self, TraceError> {
        let mut out = Vec::new();
        let mut prev = None;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            let v = parse_line(line, prev).map_err(|reason| TraceError::Line {
                file: source_name.to_owned(),
                line: i + 1,
                reason,
            })?;
            prev = Some(v);
            out.push(v);
        }
        Self::from_timestamps(out, source_name.to_owned())
    }

    /// Reads and parses a trace file; the file name is used as the source name.
    pub fn load(path: impl AsRef<Path>) -> Result<Self, TraceError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| TraceError::Io {
            file: name.clone(),
            reason: e.to_string(),
        })?;
        Self::parse(&text, &name)
    }

    /// Builds a trace from timestamps, validating the invariants.
    pub fn from_timestamps(
        timestamps_ms: Vec<u64>,
        source: impl Into<String>,
    ) -> Result<Self, TraceError> {
        let source = source.into();
        let invalid = |reason: String| TraceError::Invalid {
            file: source.clone(),
            reason,
        };
        let Some(&last) = timestamps_ms.last() else {
            return Err(invalid("trace contains no timestamps".to_owned()));
        };
        if let Some(i) = timestamps_ms.windows(2).position(|w| w[1] < w[0]) {
            return Err(invalid(format!(
                "timestamp #{} ({}) is smaller than the previous one ({})",
                i + 2,
                timestamps_ms[i + 1],
                timestamps_ms[i]
            )));
        }
        if last == 0 {
            return Err(invalid(
                "trace period is 0 ms (the last timestamp must be positive)".to_owned(),
            ));
        }
        if last.checked_mul(MILLISECOND).is_none() {
            return Err(invalid(format!("last timestamp {last} ms is too large")));
        }
        Ok(Self {
            source,
            timestamps_ms: Arc::new(timestamps_ms),
            start_ms: 0,
        })
    }

    /// The same trace, replayed from `start_ms` into its period (taken
    /// modulo the period): virtual time `t` plays trace time `t + start`.
    /// The mean rate is unchanged; the stretch a short run sees is not.
    pub fn with_start(mut self, start_ms: u64) -> Self {
        self.start_ms = start_ms % self.period_ms();
        self
    }

    /// Where replay starts in the period (ms).
    pub fn start_ms(&self) -> u64 {
        self.start_ms
    }

    /// A constant-rate trace with `per_ms` opportunities every millisecond
    /// (`per_ms * 12` Mbit/s). `per_ms` of 0 is treated as 1.
    pub fn constant(per_ms: usize) -> Self {
        Self {
            source: format!("constant-{per_ms}-per-ms"),
            timestamps_ms: Arc::new(vec![1; per_ms.max(1)]),
            start_ms: 0,
        }
    }

    /// The source name (file name or generator description).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The opportunity timestamps in milliseconds.
    pub fn timestamps_ms(&self) -> &[u64] {
        &self.timestamps_ms
    }

    /// Number of delivery opportunities per period.
    pub fn opportunities_per_period(&self) -> usize {
        self.timestamps_ms.len()
    }

    /// Repetition period in milliseconds (the last timestamp).
    pub fn period_ms(&self) -> u64 {
        self.timestamps_ms.last().copied().unwrap_or(1).max(1)
    }

    /// Long-run mean capacity in bits per second.
    pub fn mean_rate_bps(&self) -> f64 {
        let bits = self.timestamps_ms.len() as f64 * (OPPORTUNITY_BYTES * 8) as f64;
        bits / (self.period_ms() as f64 / 1000.0)
    }

    /// Capacity in bit/s averaged over consecutive `bin_ms` windows of one
    /// period (opportunities at `t` fall into bin `(t - 1) / bin_ms`, so the
    /// trace `"1"` has all of its capacity in the first bin). Useful to plot
    /// the ground-truth capacity.
    pub fn rate_series(&self, bin_ms: u64) -> Vec<f64> {
        let bin_ms = bin_ms.max(1);
        let bins = self.period_ms().div_ceil(bin_ms) as usize;
        let mut counts = vec![0u64; bins.max(1)];
        for &t in self.timestamps_ms.iter() {
            let b = (t.saturating_sub(1) / bin_ms) as usize;
            if let Some(c) = counts.get_mut(b.min(bins.saturating_sub(1))) {
                *c += 1;
            }
        }
        let secs = bin_ms as f64 / 1000.0;
        counts
            .into_iter()
            .map(|c| (c * OPPORTUNITY_BYTES * 8) as f64 / secs)
            .collect()
    }

    /// Serializes back to Mahimahi text (one timestamp per line, trailing newline).
    pub fn to_text(&self) -> String {
        let mut s = String::with_capacity(self.timestamps_ms.len() * 6);
        for t in self.timestamps_ms.iter() {
            // Writing to a String cannot fail.
            let _ = writeln!(s, "{t}");
        }
        s
    }
}

/// Position of a delivery opportunity: repetition `cycle`, line `idx`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) struct OpportunityPos {
    pub(crate) cycle: u64,
    pub(crate) idx: usize,
}

/// Maps opportunity positions to absolute virtual time. Positions count in
/// trace time; virtual time is trace time minus the start offset, and only
/// positions at or after the offset are ever produced.
#[derive(Debug, Clone)]
pub(crate) struct TraceSchedule {
    ts: Arc<Vec<u64>>,
    period_ns: SimTime,
    start_ns: SimTime,
}

impl TraceSchedule {
    pub(crate) fn new(trace: &MahimahiTrace) -> Self {
        Self {
            ts: Arc::clone(&trace.timestamps_ms),
            period_ns: trace.period_ms().saturating_mul(MILLISECOND),
            start_ns: trace.start_ms.saturating_mul(MILLISECOND),
        }
    }

    fn ts_ns(&self, idx: usize) -> SimTime {
        self.ts.get(idx).copied().unwrap_or(0) * MILLISECOND
    }

    /// Absolute (virtual) time of an opportunity.
    pub(crate) fn time_of(&self, pos: OpportunityPos) -> SimTime {
        self.trace_time_of(pos).saturating_sub(self.start_ns)
    }

    fn trace_time_of(&self, pos: OpportunityPos) -> SimTime {
        pos.cycle
            .saturating_mul(self.period_ns)
            .saturating_add(self.ts_ns(pos.idx))
    }

    /// The position following `pos`.
    pub(crate) fn next(&self, pos: OpportunityPos) -> OpportunityPos {
        if pos.idx + 1 < self.ts.len() {
            OpportunityPos {
                cycle: pos.cycle,
                idx: pos.idx + 1,
            }
        } else {
            OpportunityPos {
                cycle: pos.cycle + 1,
                idx: 0,
            }
        }
    }

    /// The earliest opportunity whose (virtual) time is `>= t`.
    pub(crate) fn first_at_or_after(&self, t: SimTime) -> OpportunityPos {
        let t = t.saturating_add(self.start_ns);
        let cycle = t / self.period_ns;
        let within = t - cycle * self.period_ns;
        let idx = self.ts.partition_point(|&x| x * MILLISECOND < within);
        let mut pos = if idx == self.ts.len() {
            OpportunityPos {
                cycle: cycle + 1,
                idx: 0,
            }
        } else {
            OpportunityPos { cycle, idx }
        };
        // Opportunities at the very end of the previous repetition coincide
        // with the start of this one (timestamp == period).
        while pos.idx == 0 && pos.cycle > 0 {
            let prev = OpportunityPos {
                cycle: pos.cycle - 1,
                idx: self.ts.len() - 1,
            };
            if self.trace_time_of(prev) < t {
                break;
            }
            pos = prev;
            while pos.idx > 0 {
                let p = OpportunityPos {
                    cycle: pos.cycle,
                    idx: pos.idx - 1,
                };
                if self.trace_time_of(p) < t {
                    break;
                }
                pos = p;
            }
        }
        pos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_ok_and_rate() {
        let t = MahimahiTrace::parse("1\n", "one").expect("valid");
        assert_eq!(t.period_ms(), 1);
        assert!((t.mean_rate_bps() - 12e6).abs() < 1e-6);
        let t = MahimahiTrace::parse(" 0\n\n5\r\n5\n10\n", "x").expect("valid");
        assert_eq!(t.timestamps_ms(), &[0, 5, 5, 10]);
        assert_eq!(t.to_text(), "0\n5\n5\n10\n");
    }

    #[test]
    fn parse_errors_carry_file_and_line() {
        let e = MahimahiTrace::parse("1\n15\n12\n", "trace.up").unwrap_err();
        assert_eq!(
            e.to_string(),
            "trace.up:3: timestamp 12 is smaller than the previous one (15)"
        );
        for (text, line) in [
            ("1\n2x\n", 2),
            ("1\n\n-3\n", 3),
            ("1.5\n", 1),
            ("+4\n", 1),
            ("3\n4 5\n", 2),
            ("99999999999999999999999\n", 1),
        ] {
            match MahimahiTrace::parse(text, "f") {
                Err(TraceError::Line { line: l, file, .. }) => {
                    assert_eq!((l, file.as_str()), (line, "f"), "{text:?}");
                }
                other => panic!("{text:?}: unexpected {other:?}"),
            }
        }
        assert!(matches!(
            MahimahiTrace::parse("\n \n", "e"),
            Err(TraceError::Invalid { .. })
        ));
        assert!(matches!(
            MahimahiTrace::parse("0\n0\n", "z"),
            Err(TraceError::Invalid { .. })
        ));
        assert!(MahimahiTrace::load("/nonexistent/trace.up").is_err());
    }

    #[test]
    fn schedule_positions() {
        let t = MahimahiTrace::parse("0\n5\n5\n10\n", "x").expect("valid");
        let s = TraceSchedule::new(&t);
        let at = |c, i| OpportunityPos { cycle: c, idx: i };
        assert_eq!(s.first_at_or_after(0), at(0, 0));
        assert_eq!(s.first_at_or_after(1), at(0, 1));
        assert_eq!(s.time_of(at(0, 1)), 5 * MILLISECOND);
        // 10 ms is both the last entry of cycle 0 and the first of cycle 1.
        assert_eq!(s.first_at_or_after(10 * MILLISECOND), at(0, 3));
        assert_eq!(s.next(at(0, 3)), at(1, 0));
        assert_eq!(s.time_of(at(1, 0)), 10 * MILLISECOND);
        assert_eq!(s.first_at_or_after(10 * MILLISECOND + 1), at(1, 1));
        let one = TraceSchedule::new(&MahimahiTrace::constant(1));
        assert_eq!(one.first_at_or_after(0), at(0, 0));
        assert_eq!(one.time_of(at(0, 0)), MILLISECOND);
        assert_eq!(one.first_at_or_after(3 * MILLISECOND), at(2, 0));
    }

    #[test]
    fn schedule_with_start_offset() {
        // Opportunities at 2, 5, 5 and 10 ms; replay from 4 ms: virtual
        // 1 ms is trace 5 ms, virtual 6 ms trace 10 ms, then trace 12 ms
        // (the next cycle's 2 ms) at virtual 8 ms.
        let t = MahimahiTrace::parse("2\n5\n5\n10\n", "x")
            .expect("valid")
            .with_start(14);
        assert_eq!(t.start_ms(), 4, "taken modulo the period");
        let s = TraceSchedule::new(&t);
        let mut pos = s.first_at_or_after(0);
        let mut times = Vec::new();
        for _ in 0..5 {
            times.push(s.time_of(pos) / MILLISECOND);
            pos = s.next(pos);
        }
        assert_eq!(times, [1, 1, 6, 8, 11]);
        assert_eq!(
            s.time_of(s.first_at_or_after(2 * MILLISECOND)),
            6 * MILLISECOND
        );
        assert!((t.mean_rate_bps() - 4.0 * 12e6 / 10.0).abs() < 1e-6);
        let json = serde_json::to_string(&t).expect("json");
        let back: MahimahiTrace = serde_json::from_str(&json).expect("back");
        assert_eq!(back, t);
    }

    #[test]
    fn rate_series_sums_to_mean() {
        let t = MahimahiTrace::parse("1\n2\n2\n3\n4\n", "x").expect("valid");
        let s = t.rate_series(2);
        assert_eq!(s.len(), 2);
        let mean = s.iter().sum::<f64>() / s.len() as f64;
        assert!((mean - t.mean_rate_bps()).abs() < 1e-6);
    }

    #[test]
    fn serde_validates() {
        let ok = TraceRepr {
            source: "s".into(),
            timestamps_ms: vec![3, 1],
            start_ms: 0,
        };
        assert!(MahimahiTrace::try_from(ok).is_err());
    }
}
