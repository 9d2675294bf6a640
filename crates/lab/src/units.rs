//! Byte sizes (`"50MB"`, `"512KiB"`) and durations (`"10s"`, `"250ms"`) as
//! they appear in scenario files and on the command line.
//!
//! Both types parse strictly: a value with an unknown unit is rejected with
//! a message that names the value and lists the accepted forms. Decimal
//! units are powers of 10 (`KB` = 1000 B, `MB` = 10⁶ B, `GB` = 10⁹ B),
//! binary units powers of 2 (`KiB`, `MiB`, `GiB`); units are
//! case-insensitive. A TOML integer is accepted as a number of bytes;
//! durations must carry a unit (`ns`, `us`, `ms`, `s`, `min`), except `0`.

use std::fmt;
use std::str::FromStr;

use mpquic_netsim::spec::{byte_multiplier, split_number};
use mpquic_netsim::time::{format_exact, SimTime};
use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// Accepted forms of a byte size and a duration, for messages (the grammar of path specs:
/// one grammar for the whole project).
pub use mpquic_netsim::spec::{DURATION_EXPECTED, SIZE_EXPECTED};

fn whole(v: f64) -> Option<u64> {
    let r = v.round();
    (r.is_finite() && r >= 0.0 && r < u64::MAX as f64 && (v - r).abs() < 1e-6).then_some(r as u64)
}

/// A number of bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(
    /// The number of bytes.
    pub u64,
);

impl ByteSize {
    /// The size in bytes.
    pub fn bytes(self) -> u64 {
        self.0
    }
}

/// Parses a byte size; `None` if the text is not a valid size.
pub fn parse_size(s: &str) -> Option<u64> {
    let (v, unit) = split_number(s)?;
    whole(v * byte_multiplier(&unit)?)
}

impl FromStr for ByteSize {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        parse_size(s)
            .map(ByteSize)
            .ok_or_else(|| format!("invalid size `{s}`: expected {SIZE_EXPECTED}"))
    }
}

impl fmt::Display for ByteSize {
    /// The largest unit that represents the size exactly (`50MB`, `512KiB`, `1234B`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 6] = [
            (1_000_000_000, "GB"),
            (1 << 30, "GiB"),
            (1_000_000, "MB"),
            (1 << 20, "MiB"),
            (1_000, "KB"),
            (1 << 10, "KiB"),
        ];
        let b = self.0;
        match UNITS.iter().find(|(m, _)| b > 0 && b % m == 0) {
            Some((m, u)) => write!(f, "{}{u}", b / m),
            None => write!(f, "{b}B"),
        }
    }
}

impl Serialize for ByteSize {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

struct SizeVisitor;

impl de::Visitor<'_> for SizeVisitor {
    type Value = ByteSize;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(SIZE_EXPECTED)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<ByteSize, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<ByteSize, E> {
        Ok(ByteSize(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<ByteSize, E> {
        u64::try_from(v)
            .map(ByteSize)
            .map_err(|_| E::custom(format!("invalid size `{v}`: must not be negative")))
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(SizeVisitor)
    }
}

/// A span of virtual time in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct SimDuration(
    /// The span in nanoseconds.
    pub SimTime,
);

impl SimDuration {
    /// The duration in nanoseconds.
    pub fn nanos(self) -> SimTime {
        self.0
    }

    /// The duration in seconds.
    pub fn secs_f64(self) -> f64 {
        mpquic_netsim::time::as_secs_f64(self.0)
    }
}

/// Parses a duration; `None` if the text is not a valid duration.
pub fn parse_duration(s: &str) -> Option<SimTime> {
    mpquic_netsim::spec::parse_duration(s)
}

impl FromStr for SimDuration {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        parse_duration(s)
            .map(SimDuration)
            .ok_or_else(|| format!("invalid duration `{s}`: expected {DURATION_EXPECTED}"))
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_exact(self.0))
    }
}

impl Serialize for SimDuration {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

struct DurationVisitor;

impl de::Visitor<'_> for DurationVisitor {
    type Value = SimDuration;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(DURATION_EXPECTED)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<SimDuration, E> {
        v.parse().map_err(E::custom)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<SimDuration, E> {
        if v == 0 {
            Ok(SimDuration(0))
        } else {
            Err(E::custom(format!(
                "invalid duration `{v}`: a unit is required; expected {DURATION_EXPECTED}"
            )))
        }
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<SimDuration, E> {
        match u64::try_from(v) {
            Ok(v) => self.visit_u64(v),
            Err(_) => Err(E::custom(format!(
                "invalid duration `{v}`: must not be negative"
            ))),
        }
    }
}

impl<'de> Deserialize<'de> for SimDuration {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(DurationVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mpquic_netsim::time::MILLISECOND;
    use mpquic_netsim::time::SECOND;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("50MB"), Some(50_000_000));
        assert_eq!(parse_size("512KiB"), Some(524_288));
        assert_eq!(parse_size("1.5 GB"), Some(1_500_000_000));
        assert_eq!(parse_size("1234"), Some(1234));
        assert_eq!(parse_size("7b"), Some(7));
        assert_eq!(parse_size("10m"), Some(10_000_000), "the CLI's short units");
        assert_eq!(parse_size("2k"), Some(2_000));
        for bad in ["", "MB", "-1MB", "1.2.3MB", "10XB", "1e6", "0.5B", ".5MB"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
        for (v, s) in [
            (50_000_000, "50MB"),
            (524_288, "512KiB"),
            (1234, "1234B"),
            (0, "0B"),
        ] {
            assert_eq!(ByteSize(v).to_string(), s);
            assert_eq!(s.parse::<ByteSize>(), Ok(ByteSize(v)));
        }
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10s"), Some(10 * SECOND));
        assert_eq!(parse_duration("2.5ms"), Some(2_500_000));
        assert_eq!(parse_duration("1min"), Some(60 * SECOND));
        assert_eq!(parse_duration("0"), Some(0));
        assert_eq!(parse_duration("2h"), Some(7200 * SECOND));
        for bad in ["10", "10m", "s", "-1s", "1,5s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
        assert_eq!(SimDuration(1_500 * MILLISECOND).to_string(), "1500ms");
        let e = "10 sec".parse::<SimDuration>().unwrap_err();
        assert!(e.contains("`10 sec`"), "{e}");
    }
}
