//! Virtual time.
//!
//! All simulated time is expressed as [`SimTime`]: an integer number of
//! nanoseconds since the start of the simulation. Integer arithmetic keeps
//! every run bit-identical across machines.

/// Nanoseconds of virtual time since simulation start (also used for durations).
pub type SimTime = u64;

/// One nanosecond.
pub const NANOSECOND: SimTime = 1;
/// One microsecond in [`SimTime`] units.
pub const MICROSECOND: SimTime = 1_000;
/// One millisecond in [`SimTime`] units.
pub const MILLISECOND: SimTime = 1_000_000;
/// One second in [`SimTime`] units.
pub const SECOND: SimTime = 1_000_000_000;

/// `n` microseconds.
pub const fn us(n: u64) -> SimTime {
    n.saturating_mul(MICROSECOND)
}

/// `n` milliseconds.
pub const fn ms(n: u64) -> SimTime {
    n.saturating_mul(MILLISECOND)
}

/// `n` seconds.
pub const fn secs(n: u64) -> SimTime {
    n.saturating_mul(SECOND)
}

/// Converts (non-negative, finite) seconds to [`SimTime`], rounding to the
/// nearest nanosecond. Negative or NaN inputs give 0; huge inputs saturate.
pub fn from_secs_f64(s: f64) -> SimTime {
    if s.is_nan() || s <= 0.0 {
        return 0;
    }
    let ns = (s * SECOND as f64).round();
    if ns >= u64::MAX as f64 {
        u64::MAX
    } else {
        ns as u64
    }
}

/// Converts a [`SimTime`] to floating-point seconds.
pub fn as_secs_f64(t: SimTime) -> f64 {
    t as f64 / SECOND as f64
}

/// Converts a [`SimTime`] to a [`std::time::Duration`].
pub fn to_duration(t: SimTime) -> std::time::Duration {
    std::time::Duration::from_nanos(t)
}

/// Converts a [`std::time::Duration`] to [`SimTime`] (saturating).
pub fn from_duration(d: std::time::Duration) -> SimTime {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// Time needed to serialize `bytes` bytes at `bits_per_sec`, rounded up to
/// the next nanosecond. A rate of 0 yields `SimTime::MAX` (never finishes).
pub fn serialization_time(bytes: u64, bits_per_sec: u64) -> SimTime {
    if bits_per_sec == 0 {
        return SimTime::MAX;
    }
    let num = u128::from(bytes) * 8 * u128::from(SECOND);
    let den = u128::from(bits_per_sec);
    u64::try_from(num.div_ceil(den)).unwrap_or(SimTime::MAX)
}

/// Formats a duration compactly with the largest unit that divides it
/// exactly (`"10ms"`, `"1500us"`, `"2s"`, `"7ns"`); used by spec printing.
pub fn format_exact(t: SimTime) -> String {
    mpquic_wire::units::format_duration(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_time_exact_and_rounded() {
        // 1400 B at 100 Mbit/s = 112 us exactly.
        assert_eq!(serialization_time(1400, 100_000_000), us(112));
        // 1 B at 3 bit/s = 2.666.. s -> rounded up.
        assert_eq!(serialization_time(1, 3), 2_666_666_667);
        assert_eq!(serialization_time(1, 0), SimTime::MAX);
    }

    #[test]
    fn conversions() {
        assert_eq!(from_secs_f64(1.5), 1_500_000_000);
        assert_eq!(from_secs_f64(-1.0), 0);
        assert_eq!(from_secs_f64(f64::NAN), 0);
        assert_eq!(from_secs_f64(1e30), u64::MAX);
        assert!((as_secs_f64(ms(250)) - 0.25).abs() < 1e-12);
        assert_eq!(from_duration(to_duration(ms(3))), ms(3));
    }

    #[test]
    fn exact_format() {
        assert_eq!(format_exact(0), "0s");
        assert_eq!(format_exact(ms(10)), "10ms");
        assert_eq!(format_exact(us(1500)), "1500us");
        assert_eq!(format_exact(secs(2)), "2s");
        assert_eq!(format_exact(7), "7ns");
    }
}
