//! Parsing of human-friendly sizes (`10MB`, `512KiB`, `1.5G`) and durations (`5s`, `250ms`).

use std::time::Duration;

/// Parse a byte size: a number with an optional unit. Decimal units (`k`, `M`, `G`, `T`, with
/// or without `B`) are powers of 1000, binary units (`KiB`, `MiB`, ...) powers of 1024; units
/// are case-insensitive, a bare number is bytes.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() {
        return Err(format!(
            "invalid size '{s}': expected a number followed by a unit, like 10MB or 512KiB"
        ));
    }
    let unit = unit.trim().to_ascii_lowercase();
    let multiplier: u64 = match unit.as_str() {
        "" | "b" => 1,
        "k" | "kb" => 1_000,
        "m" | "mb" => 1_000_000,
        "g" | "gb" => 1_000_000_000,
        "t" | "tb" => 1_000_000_000_000,
        "ki" | "kib" => 1 << 10,
        "mi" | "mib" => 1 << 20,
        "gi" | "gib" => 1 << 30,
        "ti" | "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "invalid size '{s}': unknown unit '{unit}' (use B, kB, MB, GB, KiB, MiB or GiB)"
            ))
        }
    };
    let value: f64 = number.parse().map_err(|_| {
        format!("invalid size '{s}': expected a number followed by a unit, like 10MB or 512KiB")
    })?;
    let bytes = value * multiplier as f64;
    if !bytes.is_finite() || bytes > u64::MAX as f64 {
        return Err(format!("invalid size '{s}': too large"));
    }
    Ok(bytes.round() as u64)
}

/// Parse a duration: a number with an optional unit (`ms`, `s`, `m`, `h`); a bare number is
/// seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    if number.is_empty() {
        return Err(format!(
            "invalid duration '{s}': expected a number followed by a unit, like 5s or 250ms"
        ));
    }
    let seconds_per_unit = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "s" | "sec" | "secs" => 1.0,
        "ms" => 0.001,
        "us" | "µs" => 0.000_001,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "invalid duration '{s}': unknown unit '{other}' (use ms, s, m or h)"
            ))
        }
    };
    let value: f64 = number.parse().map_err(|_| {
        format!("invalid duration '{s}': expected a number followed by a unit, like 5s or 250ms")
    })?;
    Duration::try_from_secs_f64(value * seconds_per_unit)
        .map_err(|_| format!("invalid duration '{s}': out of range"))
}

/// A size for humans: `10.0 MB`, `512 B`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.2} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("10MB"), Ok(10_000_000));
        assert_eq!(parse_size("512KiB"), Ok(524_288));
        assert_eq!(parse_size("1.5GB"), Ok(1_500_000_000));
        assert_eq!(parse_size("42"), Ok(42));
        assert_eq!(parse_size("3 mib"), Ok(3 << 20));
        assert!(parse_size("ten").unwrap_err().contains("expected a number"));
        assert!(parse_size("10XB").unwrap_err().contains("unknown unit"));
        assert!(parse_size("").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("1.5m"), Ok(Duration::from_secs(90)));
        assert!(parse_duration("5 parsecs")
            .unwrap_err()
            .contains("unknown unit"));
        assert!(parse_duration("-1s").is_err());
    }

    #[test]
    fn formats_bytes() {
        assert_eq!(format_bytes(512), "512 B");
        assert_eq!(format_bytes(10_000_000), "10.00 MB");
    }
}
