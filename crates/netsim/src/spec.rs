//! Path specifications for the CLI and configuration files.
//!
//! # String grammar
//!
//! ```text
//! spec   := item ("," item)*
//! item   := [dir "."] key "=" value
//! dir    := "up" | "down"
//! ```
//!
//! Keys without a prefix apply to both directions; `up.KEY` / `down.KEY`
//! override them for one direction (`up` is the direction from the first
//! address of [`crate::Simulator::add_path`] to the second). The scheduled
//! keys (`down_at`, `up_at`, `rate_at`, `delay_at`, `loss_at`, `mtu_at`) may be
//! repeated; their shared and per-direction values add up. Every other key
//! may appear once per scope.
//!
//! | key | value | meaning |
//! |-----|-------|---------|
//! | `rate` | `20mbit`, `100Mbit`, `1.5gbit`, `64kbit`, `800bit`; `bps`/`kbps`/`mbps`/`gbps` are synonyms (bits/s) | fixed capacity |
//! | `trace` | a Mahimahi file path, or `gen:wifi:SEED[:DURATION]` / `gen:lte:SEED[:DURATION]` (default 60 s, at most 1 h) | trace capacity (exclusive with `rate` in one scope) |
//! | `trace_start` | duration, e.g. `93250ms` | replay the trace from this point of its period (modulo the period; default 0); needs `trace` |
//! | `delay` | `10ms`, `500us`, `1s`, `250ns`, `0` | one-way propagation delay (default 0) |
//! | `rtt` | duration (no prefix allowed) | sets `delay = rtt / 2` in both directions; exclusive with `delay` |
//! | `streams` | an integer N (no prefix allowed) | draw random loss and jitter from the streams named `pathN.up` / `pathN.down` instead of the links' own: runs that give one path the same N (and seed) see the same draws packet for packet (common random numbers; [`crate::LinkConfig::random_streams`]) |
//! | `queue` | `100pkt`, `150000b` (= `150000B`, bytes), `64kb` (10³ B), `1mb` (10⁶ B), `64kib`, `1mib`, `1.5bdp`, `inf` | drop-tail limit (default `1bdp`) |
//! | `loss` | `none`, `1%`, `0.01`, `ge:P,R[,H[,K]]` | random loss at link entry |
//! | `jitter` | duration | uniform extra delay in `[0, jitter]` |
//! | `reorder` | `true`/`false` | allow jitter to reorder packets (default false) |
//! | `ecn` | a queue size as for `queue` (`20kb`, `15pkt`, `0.5bdp`), or `off` | CE-mark ECN-capable packets arriving above this queue occupancy (step marking; default off) |
//! | `ecn_bleach` | `true`/`false` | clear the ECN codepoint of every packet (default false) |
//! | `down_at`, `up_at` | duration since start | scheduled link down / up |
//! | `rate_at` | `TIME:RATE`, e.g. `3s:5mbit` | at TIME the capacity becomes a fixed RATE |
//! | `delay_at` | `TIME:DELAY`, e.g. `3s:50ms` | at TIME the one-way delay becomes DELAY |
//! | `loss_at` | `TIME:LOSS`, e.g. `3s:2%`, `3s:ge:1%,10%` | at TIME the loss model becomes LOSS |
//! | `mtu` | bytes, e.g. `1500`, or `inf` | largest packet (UDP payload) carried; larger ones are dropped (default `inf`) |
//! | `mtu_at` | `TIME:BYTES`, e.g. `3s:1280`, `5s:inf` | at TIME the link MTU becomes BYTES |
//!
//! `ge:P,R,H,K` is Gilbert–Elliott with `P` = P(good→bad), `R` =
//! P(bad→good), `H` = loss probability in the bad state (default 1) and `K`
//! = loss probability in the good state (default 0) — the positional order
//! of netem's `gemodel p r 1-h 1-k`. Each value is a fraction or a
//! percentage. Because the `ge:` value contains commas, items without `=`
//! that follow a `loss=ge:` (or `loss_at=TIME:ge:`) item are appended to it.
//!
//! `queue=Nbdp` uses the direction's rate (a trace's mean rate) times the
//! path RTT, defined as the sum of both directions' one-way delays (2× the
//! one-way delay for symmetric paths); the result is at least 1500 bytes.
//! For a trace link that is the trace's mean capacity over its whole period
//! times the propagation RTT, whatever `trace_start` is.
//!
//! Example: `rate=20mbit,rtt=40ms,queue=1.5bdp,loss=1%,down.rate=50mbit`.
//!
//! # TOML
//!
//! [`PathSpec`] also (de)serializes with serde as a table with the same keys
//! (unknown keys are rejected) and optional `up` / `down` sub-tables:
//!
//! ```toml
//! rate = "20mbit"
//! rtt = "40ms"
//! queue = "1.5bdp"
//! loss = 0.01           # numbers and booleans are accepted too
//! down_at = ["2s", "8s"]
//! [down]
//! trace = "gen:lte:7"
//! ```
//!
//! Parsing ([`PathSpec::parse`]) never touches the file system; traces are
//! loaded by [`PathSpec::resolve`], which turns the spec into two
//! [`LinkConfig`](crate::LinkConfig)s.

mod resolve;
mod toml_form;
mod value;

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::loss::LossModel;
use crate::time::SimTime;

pub use resolve::ResolvedPath;
pub use toml_form::{DirSpecToml, PathSpecToml, Scalar};
pub use value::{byte_multiplier, parse_duration, split_number, DURATION_EXPECTED, SIZE_EXPECTED};

/// Errors from parsing or resolving a path spec. Messages name the key (with
/// its `up.`/`down.` prefix) and what was expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecError {
    /// An item is not of the form `key=value`.
    #[error("`{item}` is not a key=value pair")]
    Syntax {
        /// The offending item.
        item: String,
    },
    /// The key is not known.
    #[error("unknown key `{key}` (expected rate, trace, trace_start, delay, rtt, streams, queue, loss, jitter, reorder, ecn, ecn_bleach, mtu, down_at, up_at, rate_at, delay_at, loss_at or mtu_at, optionally prefixed by `up.` or `down.`; `rtt` and `streams` take no prefix)")]
    UnknownKey {
        /// The offending key.
        key: String,
    },
    /// The value does not parse.
    #[error("{key}: invalid value `{value}`: expected {expected}")]
    BadValue {
        /// The key.
        key: String,
        /// The value given.
        value: String,
        /// Description of valid values.
        expected: String,
    },
    /// A key was given twice in the same scope.
    #[error("{key} is given more than once")]
    Duplicate {
        /// The key.
        key: String,
    },
    /// Inconsistent or missing settings.
    #[error("{0}")]
    Conflict(String),
    /// A trace could not be loaded or generated.
    #[error("{key}: cannot use trace `{value}`: {reason}")]
    Trace {
        /// The key (`trace`, `up.trace`, ...).
        key: String,
        /// The value given.
        value: String,
        /// Why it failed.
        reason: String,
    },
}

/// A queue size as written in a spec.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum QueueSpec {
    /// Packet limit.
    Packets(u64),
    /// Byte limit.
    Bytes(u64),
    /// Multiple of the bandwidth-delay product.
    Bdp(f64),
    /// No limit.
    Infinite,
}

/// Synthetic trace presets (see [`crate::generate`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// [`crate::generate::GeneratorConfig::wifi_like`].
    Wifi,
    /// [`crate::generate::GeneratorConfig::lte_like`].
    Lte,
}

/// Where a trace comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceSource {
    /// A Mahimahi file.
    File(PathBuf),
    /// A generated trace.
    Generated {
        /// Model preset.
        preset: Preset,
        /// Generator seed.
        seed: u64,
        /// Trace length in ms (preset default when `None`).
        duration_ms: Option<u64>,
    },
}

/// Capacity as written in a spec.
#[derive(Debug, Clone, PartialEq)]
pub enum CapacitySpec {
    /// `rate=`, in bit/s.
    Rate(u64),
    /// `trace=`.
    Trace(TraceSource),
}

/// Settings of one scope (shared, `up.` or `down.`); `None` = not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DirSpec {
    /// `rate` or `trace`.
    pub capacity: Option<CapacitySpec>,
    /// `trace_start`.
    pub trace_start: Option<SimTime>,
    /// `delay`.
    pub delay: Option<SimTime>,
    /// `queue`.
    pub queue: Option<QueueSpec>,
    /// `loss`.
    pub loss: Option<LossModel>,
    /// `jitter`.
    pub jitter: Option<SimTime>,
    /// `reorder`.
    pub reorder: Option<bool>,
    /// `ecn`: CE-marking threshold (`QueueSpec::Infinite` = `off`).
    pub ecn: Option<QueueSpec>,
    /// `ecn_bleach`.
    pub ecn_bleach: Option<bool>,
    /// `down_at` (repeatable).
    pub down_at: Vec<SimTime>,
    /// `up_at` (repeatable).
    pub up_at: Vec<SimTime>,
    /// `rate_at` (repeatable): when, and the new rate in bit/s.
    pub rate_at: Vec<(SimTime, u64)>,
    /// `delay_at` (repeatable): when, and the new one-way delay.
    pub delay_at: Vec<(SimTime, SimTime)>,
    /// `loss_at` (repeatable): when, and the new loss model.
    pub loss_at: Vec<(SimTime, LossModel)>,
    /// `mtu`: largest UDP payload carried (`Some(None)` is an explicit `inf`).
    pub mtu: Option<Option<u64>>,
    /// `mtu_at` (repeatable): when, and the new MTU (None: unlimited).
    pub mtu_at: Vec<(SimTime, Option<u64>)>,
}

/// A parsed (not yet resolved) bidirectional path specification.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PathSpecToml", into = "PathSpecToml")]
pub struct PathSpec {
    /// Keys without prefix.
    pub shared: DirSpec,
    /// `rtt`.
    pub rtt: Option<SimTime>,
    /// `streams`: the name of the random streams of both directions' links.
    pub streams: Option<u32>,
    /// `up.` keys.
    pub up: DirSpec,
    /// `down.` keys.
    pub down: DirSpec,
}

fn bad(key: &str, value: &str, expected: &str) -> SpecError {
    SpecError::BadValue {
        key: key.to_owned(),
        value: value.to_owned(),
        expected: expected.to_owned(),
    }
}

fn set_once<T>(slot: &mut Option<T>, v: T, key: &str) -> Result<(), SpecError> {
    if slot.is_some() {
        return Err(SpecError::Duplicate {
            key: key.to_owned(),
        });
    }
    *slot = Some(v);
    Ok(())
}

fn parse_with<T>(
    key: &str,
    value: &str,
    f: impl Fn(&str) -> Option<T>,
    expected: &str,
) -> Result<T, SpecError> {
    f(value).ok_or_else(|| bad(key, value, expected))
}

const TRACE_EXPECTED: &str =
    "a Mahimahi file path or `gen:wifi:SEED[:DURATION]` / `gen:lte:SEED[:DURATION]`";

fn parse_trace_source(key: &str, value: &str) -> Result<TraceSource, SpecError> {
    let v = value.trim();
    let Some(rest) = v.strip_prefix("gen:") else {
        if v.is_empty() {
            return Err(bad(key, value, TRACE_EXPECTED));
        }
        return Ok(TraceSource::File(PathBuf::from(v)));
    };
    let parts: Vec<&str> = rest.split(':').collect();
    let preset = match parts.first().map(|p| p.to_ascii_lowercase()).as_deref() {
        Some("wifi") => Preset::Wifi,
        Some("lte") => Preset::Lte,
        _ => return Err(bad(key, value, "generator `wifi` or `lte` after `gen:`")),
    };
    let seed = parts
        .get(1)
        .and_then(|s| s.parse::<u64>().ok())
        .ok_or_else(|| bad(key, value, "an integer seed, as in `gen:wifi:42`"))?;
    let duration_ms = match parts.get(2) {
        None => None,
        Some(d) => {
            let t = value::parse_duration(d)
                .filter(|t| *t > 0 && t % crate::time::MILLISECOND == 0)
                .ok_or_else(|| bad(key, value, "a positive whole-millisecond duration after the seed, as in `gen:lte:7:120s`"))?;
            Some(t / crate::time::MILLISECOND)
        }
    };
    if parts.len() > 3 {
        return Err(bad(key, value, TRACE_EXPECTED));
    }
    Ok(TraceSource::Generated {
        preset,
        seed,
        duration_ms,
    })
}

impl DirSpec {
    /// Applies one `key=value` (`base` is the key without prefix, `full`
    /// the key as written, for messages).
    fn set(&mut self, base: &str, full: &str, value: &str) -> Result<(), SpecError> {
        use value::*;
        match base {
            "rate" => {
                let r = parse_with(full, value, parse_rate, RATE_EXPECTED)?;
                self.set_capacity(CapacitySpec::Rate(r), full)
            }
            "trace" => {
                let t = parse_trace_source(full, value)?;
                self.set_capacity(CapacitySpec::Trace(t), full)
            }
            "trace_start" => {
                let d = parse_with(full, value, parse_duration, DURATION_EXPECTED)?;
                set_once(&mut self.trace_start, d, full)
            }
            "delay" => {
                let d = parse_with(full, value, parse_duration, DURATION_EXPECTED)?;
                set_once(&mut self.delay, d, full)
            }
            "queue" => {
                let q = parse_with(full, value, parse_queue, QUEUE_EXPECTED)?;
                set_once(&mut self.queue, q, full)
            }
            "loss" => {
                let l = parse_with(full, value, parse_loss, LOSS_EXPECTED)?;
                set_once(&mut self.loss, l, full)
            }
            "jitter" => {
                let j = parse_with(full, value, parse_duration, DURATION_EXPECTED)?;
                set_once(&mut self.jitter, j, full)
            }
            "reorder" => {
                let b = parse_with(full, value, parse_bool, BOOL_EXPECTED)?;
                set_once(&mut self.reorder, b, full)
            }
            "ecn" => {
                let off = value.trim().eq_ignore_ascii_case("off");
                let q = if off {
                    QueueSpec::Infinite
                } else {
                    parse_with(full, value, parse_queue, QUEUE_EXPECTED)?
                };
                set_once(&mut self.ecn, q, full)
            }
            "ecn_bleach" => {
                let b = parse_with(full, value, parse_bool, BOOL_EXPECTED)?;
                set_once(&mut self.ecn_bleach, b, full)
            }
            "down_at" => {
                let t = parse_with(full, value, parse_duration, DURATION_EXPECTED)?;
                self.down_at.push(t);
                Ok(())
            }
            "up_at" => {
                let t = parse_with(full, value, parse_duration, DURATION_EXPECTED)?;
                self.up_at.push(t);
                Ok(())
            }
            "rate_at" => {
                let c = parse_change(full, value, parse_rate, RATE_EXPECTED)?;
                self.rate_at.push(c);
                Ok(())
            }
            "delay_at" => {
                let c = parse_change(full, value, parse_duration, DURATION_EXPECTED)?;
                self.delay_at.push(c);
                Ok(())
            }
            "loss_at" => {
                let c = parse_change(full, value, parse_loss, LOSS_EXPECTED)?;
                self.loss_at.push(c);
                Ok(())
            }
            "mtu" => {
                let m = parse_with(full, value, parse_mtu, MTU_EXPECTED)?;
                set_once(&mut self.mtu, m, full)
            }
            "mtu_at" => {
                let c = parse_change(full, value, parse_mtu, MTU_EXPECTED)?;
                self.mtu_at.push(c);
                Ok(())
            }
            _ => Err(SpecError::UnknownKey {
                key: full.to_owned(),
            }),
        }
    }

    fn set_capacity(&mut self, c: CapacitySpec, key: &str) -> Result<(), SpecError> {
        if self.capacity.is_some() {
            return Err(SpecError::Conflict(format!(
                "{key}: `rate` and `trace` are mutually exclusive and may be given once per direction"
            )));
        }
        self.capacity = Some(c);
        Ok(())
    }

    fn write_items(&self, prefix: &str, out: &mut Vec<String>) {
        use value::*;
        match &self.capacity {
            Some(CapacitySpec::Rate(r)) => out.push(format!("{prefix}rate={}", format_rate(*r))),
            Some(CapacitySpec::Trace(t)) => out.push(format!("{prefix}trace={t}")),
            None => {}
        }
        if let Some(t) = self.trace_start {
            out.push(format!("{prefix}trace_start={}", format_duration(t)));
        }
        if let Some(d) = self.delay {
            out.push(format!("{prefix}delay={}", format_duration(d)));
        }
        if let Some(q) = &self.queue {
            out.push(format!("{prefix}queue={}", format_queue(q)));
        }
        if let Some(l) = &self.loss {
            out.push(format!("{prefix}loss={}", format_loss(l)));
        }
        if let Some(j) = self.jitter {
            out.push(format!("{prefix}jitter={}", format_duration(j)));
        }
        if let Some(r) = self.reorder {
            out.push(format!("{prefix}reorder={r}"));
        }
        match &self.ecn {
            Some(QueueSpec::Infinite) => out.push(format!("{prefix}ecn=off")),
            Some(q) => out.push(format!("{prefix}ecn={}", format_queue(q))),
            None => {}
        }
        if let Some(b) = self.ecn_bleach {
            out.push(format!("{prefix}ecn_bleach={b}"));
        }
        for t in &self.down_at {
            out.push(format!("{prefix}down_at={}", format_duration(*t)));
        }
        for t in &self.up_at {
            out.push(format!("{prefix}up_at={}", format_duration(*t)));
        }
        for (t, r) in &self.rate_at {
            let (t, r) = (format_duration(*t), format_rate(*r));
            out.push(format!("{prefix}rate_at={t}:{r}"));
        }
        for (t, d) in &self.delay_at {
            let (t, d) = (format_duration(*t), format_duration(*d));
            out.push(format!("{prefix}delay_at={t}:{d}"));
        }
        for (t, l) in &self.loss_at {
            let (t, l) = (format_duration(*t), format_loss(l));
            out.push(format!("{prefix}loss_at={t}:{l}"));
        }
        if let Some(m) = self.mtu {
            out.push(format!("{prefix}mtu={}", format_mtu(m)));
        }
        for (t, m) in &self.mtu_at {
            out.push(format!(
                "{prefix}mtu_at={}:{}",
                format_duration(*t),
                format_mtu(*m)
            ));
        }
    }
}

/// Parses a scheduled change `TIME:VALUE`.
fn parse_change<T>(
    key: &str,
    value: &str,
    f: impl Fn(&str) -> Option<T>,
    expected: &str,
) -> Result<(SimTime, T), SpecError> {
    let expected = format!("TIME:VALUE, e.g. `3s:...`, where VALUE is {expected}");
    let (t, v) = value
        .split_once(':')
        .ok_or_else(|| bad(key, value, &expected))?;
    let at = value::parse_duration(t.trim()).ok_or_else(|| bad(key, value, &expected))?;
    let v = f(v.trim()).ok_or_else(|| bad(key, value, &expected))?;
    Ok((at, v))
}

impl fmt::Display for TraceSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceSource::File(p) => write!(f, "{}", p.display()),
            TraceSource::Generated {
                preset,
                seed,
                duration_ms,
            } => {
                let name = match preset {
                    Preset::Wifi => "wifi",
                    Preset::Lte => "lte",
                };
                write!(f, "gen:{name}:{seed}")?;
                if let Some(d) = duration_ms {
                    let t = d.saturating_mul(crate::time::MILLISECOND);
                    write!(f, ":{}", value::format_duration(t))?;
                }
                Ok(())
            }
        }
    }
}

/// Splits a spec string into `(key, value)` pairs, gluing the comma-separated
/// parts of a `ge:` loss value back together.
fn split_items(s: &str) -> Result<Vec<(String, String)>, SpecError> {
    let mut items: Vec<(String, String)> = Vec::new();
    for raw in s.split(',') {
        let t = raw.trim();
        if t.is_empty() {
            continue;
        }
        if let Some((k, v)) = t.split_once('=') {
            items.push((k.trim().to_owned(), v.trim().to_owned()));
            continue;
        }
        match items.last_mut() {
            Some((k, v))
                if (k.ends_with("loss") && v.starts_with("ge:"))
                    || (k.ends_with("loss_at") && v.contains(":ge:")) =>
            {
                v.push(',');
                v.push_str(t);
            }
            _ => return Err(SpecError::Syntax { item: t.to_owned() }),
        }
    }
    Ok(items)
}

impl PathSpec {
    /// Parses a spec string (see the module docs). No file system access.
    pub fn parse(s: &str) -> Result<Self, SpecError> {
        let mut spec = PathSpec::default();
        for (k, v) in split_items(s)? {
            spec.set(&k, &v)?;
        }
        Ok(spec)
    }

    /// Applies one `key=value` pair (key possibly prefixed).
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), SpecError> {
        if key == "rtt" {
            let d = value::parse_duration(value)
                .ok_or_else(|| bad(key, value, value::DURATION_EXPECTED))?;
            return set_once(&mut self.rtt, d, key);
        }
        if key == "streams" {
            let n = value
                .parse()
                .map_err(|_| bad(key, value, "a path number such as 0 or 1"))?;
            return set_once(&mut self.streams, n, key);
        }
        if let Some(base) = key.strip_prefix("up.") {
            self.up.set(base, key, value)
        } else if let Some(base) = key.strip_prefix("down.") {
            self.down.set(base, key, value)
        } else {
            self.shared.set(key, key, value)
        }
    }
}

impl FromStr for PathSpec {
    type Err = SpecError;

    fn from_str(s: &str) -> Result<Self, SpecError> {
        PathSpec::parse(s)
    }
}

impl fmt::Display for PathSpec {
    /// Canonical form; `PathSpec::parse(&spec.to_string())` gives `spec` back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut items = Vec::new();
        self.shared.write_items("", &mut items);
        if let Some(r) = self.rtt {
            items.push(format!("rtt={}", value::format_duration(r)));
        }
        if let Some(n) = self.streams {
            items.push(format!("streams={n}"));
        }
        self.up.write_items("up.", &mut items);
        self.down.write_items("down.", &mut items);
        f.write_str(&items.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    #[test]
    fn parses_example() {
        let s = PathSpec::parse("rate=20mbit,delay=10ms,queue=1.5bdp,loss=1%").expect("parse");
        assert_eq!(s.shared.capacity, Some(CapacitySpec::Rate(20_000_000)));
        assert_eq!(s.shared.delay, Some(ms(10)));
        assert_eq!(s.shared.queue, Some(QueueSpec::Bdp(1.5)));
        assert_eq!(s.shared.loss, Some(LossModel::bernoulli(0.01)));
        assert_eq!(
            s.to_string(),
            "rate=20mbit,delay=10ms,queue=1.5bdp,loss=0.01"
        );
    }

    #[test]
    fn ge_with_commas_and_prefixes() {
        let s = PathSpec::parse(
            "rate=10mbit,up.loss=ge:1%,10%,0.8,0,down.trace=gen:lte:7:30s,rtt=50ms",
        )
        .expect("parse");
        assert_eq!(
            s.up.loss,
            Some(LossModel::gilbert_elliott(0.01, 0.1, 0.0, 0.8))
        );
        assert_eq!(
            s.down.capacity,
            Some(CapacitySpec::Trace(TraceSource::Generated {
                preset: Preset::Lte,
                seed: 7,
                duration_ms: Some(30_000)
            }))
        );
        assert_eq!(s.rtt, Some(ms(50)));
        assert_eq!(PathSpec::parse(&s.to_string()), Ok(s));
    }

    #[test]
    fn errors_name_key_and_expectation() {
        let e = PathSpec::parse("rate=20mb").unwrap_err().to_string();
        assert!(
            e.contains("rate: invalid value `20mb`") && e.contains("mbit"),
            "{e}"
        );
        let e = PathSpec::parse("rate=1mbit,bogus=3").unwrap_err();
        assert_eq!(
            e,
            SpecError::UnknownKey {
                key: "bogus".into()
            }
        );
        let e = PathSpec::parse("up.rtt=3ms").unwrap_err();
        assert!(matches!(e, SpecError::UnknownKey { .. }));
        let e = PathSpec::parse("delay=1ms,delay=2ms").unwrap_err();
        assert_eq!(
            e,
            SpecError::Duplicate {
                key: "delay".into()
            }
        );
        assert!(matches!(
            PathSpec::parse("rate=1mbit,trace=x"),
            Err(SpecError::Conflict(_))
        ));
        assert!(matches!(
            PathSpec::parse("rate=1mbit,junk"),
            Err(SpecError::Syntax { .. })
        ));
        let e = PathSpec::parse("trace=gen:umts:1").unwrap_err().to_string();
        assert!(e.contains("trace: invalid value `gen:umts:1`"), "{e}");
        assert!(PathSpec::parse("trace=gen:wifi:x").is_err());
        assert!(PathSpec::parse("trace=gen:wifi:1:1500us").is_err());
        assert!(PathSpec::parse("delay=5").is_err());
        assert!(PathSpec::parse("queue=12").is_err());
        assert!(PathSpec::parse("loss=2").is_err());
        assert!(PathSpec::parse("reorder=maybe").is_err());
    }

    #[test]
    fn trace_start_round_trips() {
        let s = PathSpec::parse("trace=gen:lte:3,trace_start=1500ms,down.trace_start=2s")
            .expect("parse");
        assert_eq!(s.shared.trace_start, Some(ms(1500)));
        assert_eq!(s.down.trace_start, Some(ms(2000)));
        assert_eq!(PathSpec::parse(&s.to_string()), Ok(s));
        assert!(PathSpec::parse("trace_start=soon").is_err());
    }

    #[test]
    fn scheduled_changes() {
        let s = PathSpec::parse(
            "rate=10mbit,rate_at=3s:5mbit,up.delay_at=2s:50ms,loss_at=1s:ge:1%,10%,loss_at=4s:0",
        )
        .expect("parse");
        assert_eq!(s.shared.rate_at, vec![(ms(3000), 5_000_000)]);
        assert_eq!(s.up.delay_at, vec![(ms(2000), ms(50))]);
        assert_eq!(s.shared.loss_at.len(), 2);
        assert_eq!(
            s.shared.loss_at[0].1,
            LossModel::gilbert_elliott(0.01, 0.1, 0.0, 1.0)
        );
        assert_eq!(PathSpec::parse(&s.to_string()), Ok(s));
        let e = PathSpec::parse("rate=1mbit,rate_at=3s")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("rate_at: invalid value `3s`: expected TIME:VALUE"),
            "{e}"
        );
        assert!(PathSpec::parse("rate=1mbit,delay_at=x:1ms").is_err());
        assert!(PathSpec::parse("rate=1mbit,loss_at=1s:200%").is_err());
    }

    #[test]
    fn repeated_events() {
        let s =
            PathSpec::parse("rate=1mbit,down_at=1s,up_at=2s,down_at=3s,up.up_at=4s").expect("p");
        assert_eq!(s.shared.down_at, vec![ms(1000), ms(3000)]);
        assert_eq!(s.shared.up_at, vec![ms(2000)]);
        assert_eq!(s.up.up_at, vec![ms(4000)]);
        assert_eq!(PathSpec::parse(&s.to_string()), Ok(s));
    }
}
