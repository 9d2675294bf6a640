//! Serde (TOML/JSON) form of [`PathSpec`]: the same keys as the string
//! grammar, with `up` / `down` sub-tables instead of prefixes.

use serde::{Deserialize, Serialize};

use super::{DirSpec, PathSpec, SpecError};

/// A scalar value in a config file: strings are parsed like spec values;
/// numbers and booleans are converted to their text form first (so
/// `loss = 0.01` and `reorder = true` work).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    /// A string such as `"20mbit"`.
    Str(String),
    /// A boolean.
    Bool(bool),
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
}

impl Scalar {
    fn text(&self) -> String {
        match self {
            Scalar::Str(s) => s.clone(),
            Scalar::Bool(b) => b.to_string(),
            Scalar::Int(i) => i.to_string(),
            Scalar::Float(f) => f.to_string(),
        }
    }
}

/// One value or a list (for `down_at` / `up_at`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OneOrMany {
    /// A single value.
    One(Scalar),
    /// Several values.
    Many(Vec<Scalar>),
}

impl OneOrMany {
    fn items(&self) -> Vec<String> {
        match self {
            OneOrMany::One(s) => vec![s.text()],
            OneOrMany::Many(v) => v.iter().map(Scalar::text).collect(),
        }
    }
}

/// Per-direction table (`[up]` / `[down]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirSpecToml {
    /// `rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Scalar>,
    /// `trace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Scalar>,
    /// `trace_start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_start: Option<Scalar>,
    /// `delay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Scalar>,
    /// `queue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Scalar>,
    /// `loss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Scalar>,
    /// `jitter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Scalar>,
    /// `reorder`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder: Option<Scalar>,
    /// `ecn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<Scalar>,
    /// `ecn_bleach`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_bleach: Option<Scalar>,
    /// `down_at` (value or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_at: Option<OneOrMany>,
    /// `up_at` (value or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_at: Option<OneOrMany>,
    /// `rate_at` (`"TIME:RATE"` or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_at: Option<OneOrMany>,
    /// `delay_at` (`"TIME:DELAY"` or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_at: Option<OneOrMany>,
    /// `loss_at` (`"TIME:LOSS"` or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_at: Option<OneOrMany>,
    /// `mtu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<Scalar>,
    /// `mtu_at` (`"TIME:BYTES"` or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu_at: Option<OneOrMany>,
}

/// Top-level table of a path spec.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathSpecToml {
    /// `rate`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Scalar>,
    /// `trace`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<Scalar>,
    /// `trace_start`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_start: Option<Scalar>,
    /// `delay`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Scalar>,
    /// `rtt`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<Scalar>,
    /// `streams`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<Scalar>,
    /// `queue`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Scalar>,
    /// `loss`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<Scalar>,
    /// `jitter`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Scalar>,
    /// `reorder`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder: Option<Scalar>,
    /// `ecn`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<Scalar>,
    /// `ecn_bleach`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_bleach: Option<Scalar>,
    /// `down_at` (value or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_at: Option<OneOrMany>,
    /// `up_at` (value or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up_at: Option<OneOrMany>,
    /// `rate_at` (`"TIME:RATE"` or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_at: Option<OneOrMany>,
    /// `delay_at` (`"TIME:DELAY"` or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_at: Option<OneOrMany>,
    /// `loss_at` (`"TIME:LOSS"` or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_at: Option<OneOrMany>,
    /// `mtu`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu: Option<Scalar>,
    /// `mtu_at` (`"TIME:BYTES"` or list).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mtu_at: Option<OneOrMany>,
    /// Overrides for the `up` direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<DirSpecToml>,
    /// Overrides for the `down` direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down: Option<DirSpecToml>,
}

impl DirSpecToml {
    fn pairs(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        let scalars = [
            ("rate", &self.rate),
            ("trace", &self.trace),
            ("trace_start", &self.trace_start),
            ("delay", &self.delay),
            ("queue", &self.queue),
            ("loss", &self.loss),
            ("jitter", &self.jitter),
            ("reorder", &self.reorder),
            ("mtu", &self.mtu),
            ("ecn", &self.ecn),
            ("ecn_bleach", &self.ecn_bleach),
        ];
        for (k, v) in scalars {
            if let Some(v) = v {
                out.push((k, v.text()));
            }
        }
        let lists = [
            ("down_at", &self.down_at),
            ("up_at", &self.up_at),
            ("rate_at", &self.rate_at),
            ("delay_at", &self.delay_at),
            ("loss_at", &self.loss_at),
            ("mtu_at", &self.mtu_at),
        ];
        for (k, v) in lists {
            for item in v.iter().flat_map(OneOrMany::items) {
                out.push((k, item));
            }
        }
        out
    }

    fn from_pairs(items: Vec<String>) -> Self {
        let mut t = DirSpecToml::default();
        let (mut downs, mut ups) = (Vec::new(), Vec::new());
        let (mut rates, mut delays, mut losses) = (Vec::new(), Vec::new(), Vec::new());
        let mut mtus = Vec::new();
        for item in items {
            let Some((k, v)) = item.split_once('=') else {
                continue;
            };
            let v = Some(Scalar::Str(v.to_owned()));
            match k {
                "rate" => t.rate = v,
                "trace" => t.trace = v,
                "trace_start" => t.trace_start = v,
                "delay" => t.delay = v,
                "queue" => t.queue = v,
                "loss" => t.loss = v,
                "jitter" => t.jitter = v,
                "reorder" => t.reorder = v,
                "mtu" => t.mtu = v,
                "mtu_at" => mtus.extend(v),
                "ecn" => t.ecn = v,
                "ecn_bleach" => t.ecn_bleach = v,
                "down_at" => downs.extend(v),
                "up_at" => ups.extend(v),
                "rate_at" => rates.extend(v),
                "delay_at" => delays.extend(v),
                "loss_at" => losses.extend(v),
                _ => {}
            }
        }
        let list = |v: Vec<Scalar>| (!v.is_empty()).then_some(OneOrMany::Many(v));
        t.down_at = list(downs);
        t.up_at = list(ups);
        t.rate_at = list(rates);
        t.delay_at = list(delays);
        t.loss_at = list(losses);
        t.mtu_at = list(mtus);
        t
    }
}

impl TryFrom<PathSpecToml> for PathSpec {
    type Error = SpecError;

    fn try_from(t: PathSpecToml) -> Result<Self, SpecError> {
        let mut spec = PathSpec::default();
        let shared = DirSpecToml {
            rate: t.rate,
            trace: t.trace,
            trace_start: t.trace_start,
            delay: t.delay,
            queue: t.queue,
            loss: t.loss,
            jitter: t.jitter,
            reorder: t.reorder,
            ecn: t.ecn,
            ecn_bleach: t.ecn_bleach,
            down_at: t.down_at,
            up_at: t.up_at,
            rate_at: t.rate_at,
            delay_at: t.delay_at,
            loss_at: t.loss_at,
            mtu: t.mtu,
            mtu_at: t.mtu_at,
        };
        for (k, v) in shared.pairs() {
            spec.set(k, &v)?;
        }
        if let Some(r) = t.rtt {
            spec.set("rtt", &r.text())?;
        }
        if let Some(n) = t.streams {
            spec.set("streams", &n.text())?;
        }
        for (prefix, dir) in [("up.", t.up), ("down.", t.down)] {
            for (k, v) in dir.iter().flat_map(DirSpecToml::pairs) {
                spec.set(&format!("{prefix}{k}"), &v)?;
            }
        }
        Ok(spec)
    }
}

fn dir_items(d: &DirSpec) -> Vec<String> {
    let mut items = Vec::new();
    d.write_items("", &mut items);
    items
}

impl From<PathSpec> for PathSpecToml {
    fn from(p: PathSpec) -> Self {
        let shared = DirSpecToml::from_pairs(dir_items(&p.shared));
        let up = DirSpecToml::from_pairs(dir_items(&p.up));
        let down = DirSpecToml::from_pairs(dir_items(&p.down));
        let nonempty = |d: DirSpecToml| (d != DirSpecToml::default()).then_some(d);
        PathSpecToml {
            rate: shared.rate,
            trace: shared.trace,
            trace_start: shared.trace_start,
            delay: shared.delay,
            rtt: p.rtt.map(|r| Scalar::Str(super::value::format_duration(r))),
            streams: p.streams.map(|n| Scalar::Int(i64::from(n))),
            queue: shared.queue,
            loss: shared.loss,
            jitter: shared.jitter,
            reorder: shared.reorder,
            ecn: shared.ecn,
            ecn_bleach: shared.ecn_bleach,
            down_at: shared.down_at,
            up_at: shared.up_at,
            rate_at: shared.rate_at,
            delay_at: shared.delay_at,
            loss_at: shared.loss_at,
            mtu: shared.mtu,
            mtu_at: shared.mtu_at,
            up: nonempty(up),
            down: nonempty(down),
        }
    }
}
