//! The project's one text grammar for durations and byte sizes: path specs, scenario files,
//! transport configuration files and every command-line option read values through it. It
//! lives in the encodings crate so the protocol core (configuration files) and the simulator
//! (path specs) share it without depending on each other.

/// Nanoseconds in a microsecond.
const MICROSECOND: u64 = 1_000;
/// Nanoseconds in a millisecond.
const MILLISECOND: u64 = 1_000_000;
/// Nanoseconds in a second.
const SECOND: u64 = 1_000_000_000;

/// Splits `"20mbit"` into `(20.0, "mbit")`. The number may have a fraction
/// and an exponent-free decimal form; the unit is lower-cased.
pub fn split_number(s: &str) -> Option<(f64, String)> {
    let s = s.trim();
    let end = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(end);
    if num.is_empty() || num.starts_with('.') || num.ends_with('.') {
        return None;
    }
    let v: f64 = num.parse().ok()?;
    v.is_finite().then(|| (v, unit.trim().to_ascii_lowercase()))
}

/// `v` rounded to a whole number, if it is one a `u64` holds.
fn to_u64(v: f64) -> Option<u64> {
    let r = v.round();
    (r.is_finite() && r >= 0.0 && r < u64::MAX as f64).then_some(r as u64)
}

/// Expected form of a duration.
pub const DURATION_EXPECTED: &str =
    "a number followed by ns, us, ms, s, min or h (e.g. `10ms`, `500us`, `1.5s`), or `0`";

/// Parses a duration into nanoseconds (`10ms`, `500us`, `1s`, `250ns`, `2min`, `1h`, `0`).
pub fn parse_duration(s: &str) -> Option<u64> {
    let (v, unit) = split_number(s)?;
    let mult = match unit.as_str() {
        "" if v == 0.0 => 0.0,
        "ns" => 1.0,
        "us" | "µs" => MICROSECOND as f64,
        "ms" => MILLISECOND as f64,
        "s" => SECOND as f64,
        "min" => 60.0 * SECOND as f64,
        "h" => 3600.0 * SECOND as f64,
        _ => return None,
    };
    to_u64(v * mult)
}

/// Formats nanoseconds compactly with the largest unit that divides them exactly (`"10ms"`,
/// `"1500us"`, `"2s"`, `"7ns"`, `"0s"`): [`parse_duration`] reads it back exactly.
pub fn format_duration(nanos: u64) -> String {
    if nanos == 0 {
        "0s".to_owned()
    } else if nanos % SECOND == 0 {
        format!("{}s", nanos / SECOND)
    } else if nanos % MILLISECOND == 0 {
        format!("{}ms", nanos / MILLISECOND)
    } else if nanos % MICROSECOND == 0 {
        format!("{}us", nanos / MICROSECOND)
    } else {
        format!("{nanos}ns")
    }
}

/// Expected form of a byte size.
pub const SIZE_EXPECTED: &str = "a number followed by B, kB, MB, GB, TB (powers of 10; also k, m, g, t) or KiB, MiB, GiB, TiB (powers of 2), e.g. `50MB`, or an integer number of bytes";

/// Bytes per `unit` of a size (lower-cased). Decimal units are powers of 10, binary ones of 2.
pub fn byte_multiplier(unit: &str) -> Option<f64> {
    Some(match unit {
        "" | "b" | "bytes" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "ki" | "kib" => 1024.0,
        "mi" | "mib" => 1_048_576.0,
        "gi" | "gib" => 1_073_741_824.0,
        "ti" | "tib" => 1_099_511_627_776.0,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_and_format_back() {
        assert_eq!(parse_duration("10ms"), Some(10 * MILLISECOND));
        assert_eq!(parse_duration("1.5s"), Some(1_500 * MILLISECOND));
        assert_eq!(parse_duration(" 500us "), Some(500 * MICROSECOND));
        assert_eq!(parse_duration("2min"), Some(120 * SECOND));
        assert_eq!(parse_duration("0"), Some(0));
        for bad in ["", "5", "ms", ".5s", "5.s", "-1s", "1e3ms", "10 parsecs"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
        for nanos in [0, 7, 1_500 * MICROSECOND, 10 * MILLISECOND, 3 * SECOND] {
            assert_eq!(parse_duration(&format_duration(nanos)), Some(nanos));
        }
        assert_eq!(format_duration(1_500 * MICROSECOND), "1500us");
    }

    #[test]
    fn sizes_have_decimal_and_binary_units() {
        assert_eq!(byte_multiplier("mb"), Some(1e6));
        assert_eq!(byte_multiplier("mib"), Some(1_048_576.0));
        assert_eq!(byte_multiplier("parsec"), None);
    }
}
