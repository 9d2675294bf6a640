//! How [`TransportConfig`](super::TransportConfig) fields are written in files (TOML scenario
//! tables, `--transport` files, JSON records): the serde adaptors its derive names with
//! `#[serde(with = ...)]`. Each form reads what the command line accepts for the same setting,
//! so one schema serves files, flags and code:
//!
//! - durations in the project's one grammar (`"40ms"`, `"1.5s"`, `"2min"`, `0`), the grammar
//!   of path specs, which lives in [`mpquic_wire::units::parse_duration`];
//! - algorithm names as their `FromStr` reads them (`"NewReno"`, `"rr"`), written as the
//!   registered name;
//! - `spns_rules` as a preset string (`"report,no-two-range-limits"`) or a table of rules;
//! - `reinjection` as a strict `{ mode = ... }` table;
//! - optional features that are on by default as `false` (off), `true` (defaults) or a value.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserialize, Deserializer, Error as _};
use serde::ser::{Serialize, Serializer};

use crate::cc::CcAlgorithm;
use crate::mtud::MtuDiscoveryConfig;
use crate::path::PathId;
use crate::reinjection::ReinjectionMode;
use crate::spns_rules::SpnsRules;
use crate::time::Duration;

/// Accepted forms of a duration, for messages.
use mpquic_wire::units::DURATION_EXPECTED;

/// A duration in the project's grammar: `"40ms"`, `"1.5s"`; a bare number only as `0`.
pub(crate) mod duration {
    use super::*;

    /// Written as the exact shortest form (`"30s"`, `"1500ms"`, `"250us"`).
    pub(crate) fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        let nanos = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
        s.serialize_str(&mpquic_wire::units::format_duration(nanos))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        d.deserialize_any(DurationVisitor)
    }
}

/// An optional duration (absent: None), in the grammar of [`duration`].
pub(crate) mod opt_duration {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match d {
            Some(d) => super::duration::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<Duration>, D::Error> {
        super::duration::deserialize(d).map(Some)
    }
}

struct DurationVisitor;

impl de::Visitor<'_> for DurationVisitor {
    type Value = Duration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(DURATION_EXPECTED)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Duration, E> {
        mpquic_wire::units::parse_duration(v)
            .map(Duration::from_nanos)
            .ok_or_else(|| {
                E::custom(format!(
                    "invalid duration `{v}`: expected {DURATION_EXPECTED}"
                ))
            })
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Duration, E> {
        if v == 0 {
            return Ok(Duration::ZERO);
        }
        Err(E::custom(format!(
            "invalid duration `{v}`: a unit is required; expected {DURATION_EXPECTED}"
        )))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Duration, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            Err(_) => Err(E::custom(format!(
                "invalid duration `{v}`: must not be negative"
            ))),
        }
    }
}

/// A value read through its `FromStr` (the command line's parser, with its error text), so
/// that a name added to the core's registry is accepted everywhere at once. Written by the
/// type's own `Serialize`, which is the registered name.
pub(crate) fn from_str<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr<Err = String>,
{
    String::deserialize(d)?.parse().map_err(D::Error::custom)
}

/// Per-path congestion controllers: a table from path ID to algorithm name
/// (`path_congestion = { 1 = "newreno" }`). File formats key tables by strings, so the path
/// ID's text form is handled here and only here.
pub(crate) mod path_congestion {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        map: &BTreeMap<PathId, CcAlgorithm>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_map(map.iter().map(|(id, cc)| (id.to_string(), cc.name())))
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<BTreeMap<PathId, CcAlgorithm>, D::Error> {
        let raw = BTreeMap::<String, String>::deserialize(d)?;
        raw.into_iter()
            .map(|(id, cc)| {
                let id = id.trim().parse::<PathId>().map_err(|_| {
                    D::Error::custom(format!("path_congestion: `{id}` is not a path ID"))
                })?;
                Ok((id, cc.parse().map_err(D::Error::custom)?))
            })
            .collect()
    }
}

/// [`SpnsRules`] as the shortest preset string (`"report"`, `"report,no-RULE"`); read from such
/// a string or from a table of rule switches (missing rules on).
pub(crate) mod spns_rules {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(rules: &SpnsRules, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(rules)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SpnsRules, D::Error> {
        struct Visitor;
        impl<'de> de::Visitor<'de> for Visitor {
            type Value = SpnsRules;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "\"report\", \"naive\" (optionally with ,RULE or ,no-RULE) or a table of rules",
                )
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SpnsRules, E> {
                v.parse().map_err(E::custom)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<SpnsRules, A::Error> {
                SpnsRules::deserialize(de::value::MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// `reinjection` as written: `{ mode = "off" | "always" | "tail" }` or
/// `{ mode = "qoe", lower_ms = N, upper_ms = N }`. Read strictly here rather than by the enum's
/// derived (internally tagged) format, which ignores unknown keys and thresholds given to
/// other modes; written by that derived format, which is the same table.
pub(crate) mod reinjection {
    use super::*;

    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Written {
        mode: String,
        lower_ms: Option<u64>,
        upper_ms: Option<u64>,
    }

    pub(crate) fn serialize<S: Serializer>(
        mode: &ReinjectionMode,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        mode.serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<ReinjectionMode, D::Error> {
        let r = Written::deserialize(d)?;
        match (r.mode.as_str(), r.lower_ms, r.upper_ms) {
            ("off", None, None) => Ok(ReinjectionMode::Off),
            ("always", None, None) => Ok(ReinjectionMode::Always),
            ("tail", None, None) => Ok(ReinjectionMode::Tail),
            ("qoe", Some(lower_ms), Some(upper_ms)) => {
                Ok(ReinjectionMode::Qoe { lower_ms, upper_ms })
            }
            ("qoe", ..) => Err(D::Error::custom(
                "reinjection: mode `qoe` needs both lower_ms and upper_ms",
            )),
            ("off" | "always" | "tail", ..) => Err(D::Error::custom(format!(
                "reinjection: lower_ms and upper_ms apply only to mode `qoe`, not `{}`",
                r.mode
            ))),
            (other, ..) => Err(D::Error::custom(format!(
                "reinjection: unknown mode `{other}` (expected off, always, tail or qoe)"
            ))),
        }
    }
}

/// An optional feature that is on by default: `false` turns it off (None), `true` keeps the
/// default settings, a value sets them (`T` read from a table or a number, so that errors
/// inside it keep their position). None is written as `false`: file formats such as TOML have
/// no null, and an absent key means the default.
struct OffOr<T>(std::marker::PhantomData<T>);

impl<'de, T: Deserialize<'de> + Default> de::Visitor<'de> for OffOr<T> {
    type Value = Option<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("false (off), true (the defaults) or the settings")
    }

    fn visit_bool<E: de::Error>(self, on: bool) -> Result<Option<T>, E> {
        Ok(on.then(T::default))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Option<T>, E> {
        T::deserialize(de::value::U64Deserializer::new(v)).map(Some)
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Option<T>, E> {
        T::deserialize(de::value::I64Deserializer::new(v)).map(Some)
    }

    fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<Option<T>, A::Error> {
        T::deserialize(de::value::MapAccessDeserializer::new(map)).map(Some)
    }
}

fn off_or_deserialize<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    d.deserialize_any(OffOr(std::marker::PhantomData))
}

fn off_or_serialize<S: Serializer, T: Serialize>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        None => s.serialize_bool(false),
        Some(v) => v.serialize(s),
    }
}

/// `mtu_discovery = false | true | { ceiling = 1500, ... }` (see [`OffOr`]).
pub(crate) mod mtu_discovery {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(
        v: &Option<MtuDiscoveryConfig>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        off_or_serialize(v, s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<MtuDiscoveryConfig>, D::Error> {
        off_or_deserialize(d)
    }
}

/// The receive buffer of DATAGRAM frames: `false` (not offered), `true` (the default size) or
/// a number of bytes (see [`OffOr`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DatagramBuffer(usize);

impl Default for DatagramBuffer {
    fn default() -> Self {
        Self(super::DEFAULT_DATAGRAM_RECEIVE_BUFFER)
    }
}

impl<'de> Deserialize<'de> for DatagramBuffer {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        usize::deserialize(d).map(Self)
    }
}

/// `datagram_receive_buffer = false | true | BYTES`.
pub(crate) mod datagram_receive_buffer {
    use super::*;

    pub(crate) fn serialize<S: Serializer>(v: &Option<usize>, s: S) -> Result<S::Ok, S::Error> {
        off_or_serialize(v, s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<usize>, D::Error> {
        Ok(off_or_deserialize::<D, DatagramBuffer>(d)?.map(|b| b.0))
    }
}

impl super::TransportConfig {
    /// Reads a configuration in the file schema from any serde format and checks it with
    /// [`validate`](Self::validate), so that a bad file is refused with the same one-line
    /// error (`FIELD: PROBLEM`) as a bad flag or builder call. The derived `Deserialize`
    /// alone does not validate (a connection still refuses an invalid configuration).
    ///
    /// ```
    /// # use mpquic_proto::TransportConfig;
    /// let json = r#"{ "cc": "newreno", "idle_timeout": "10s", "ack": { "max_range_limit": 48 } }"#;
    /// let config = TransportConfig::deserialize_validated(
    ///     &mut serde_json::Deserializer::from_str(json),
    /// )
    /// .unwrap();
    /// assert_eq!(config.ack.max_range_limit, 48);
    /// ```
    pub fn deserialize_validated<'de, D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let config = Self::deserialize(d)?;
        config.validate().map_err(D::Error::custom)?;
        Ok(config)
    }
}

#[cfg(test)]
mod tests;
