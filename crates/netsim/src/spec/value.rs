//! Parsers and canonical formatters for spec values (rates, durations,
//! queue sizes, loss models, booleans).

use crate::loss::LossModel;
use crate::time::{format_exact, SimTime};

use super::QueueSpec;

pub use mpquic_wire::units::{byte_multiplier, split_number, DURATION_EXPECTED, SIZE_EXPECTED};

fn to_u64(v: f64) -> Option<u64> {
    let r = v.round();
    (r.is_finite() && r >= 0.0 && r < u64::MAX as f64).then_some(r as u64)
}

/// Expected form of a rate.
pub(crate) const RATE_EXPECTED: &str =
    "a positive number followed by bit, kbit, mbit or gbit (or bps, kbps, mbps, gbps, all bits per second), e.g. `20mbit`";

/// Parses a rate into bit/s (must be positive).
pub(crate) fn parse_rate(s: &str) -> Option<u64> {
    let (v, unit) = split_number(s)?;
    let mult = match unit.as_str() {
        "bit" | "bps" => 1.0,
        "kbit" | "kbps" => 1e3,
        "mbit" | "mbps" => 1e6,
        "gbit" | "gbps" => 1e9,
        _ => return None,
    };
    to_u64(v * mult).filter(|&b| b > 0)
}

/// Canonical rate text (largest exact unit).
pub(crate) fn format_rate(bps: u64) -> String {
    if bps % 1_000_000_000 == 0 {
        format!("{}gbit", bps / 1_000_000_000)
    } else if bps % 1_000_000 == 0 {
        format!("{}mbit", bps / 1_000_000)
    } else if bps % 1_000 == 0 {
        format!("{}kbit", bps / 1_000)
    } else {
        format!("{bps}bit")
    }
}

/// Parses a duration (`10ms`, `500us`, `1s`, `250ns`, `2min`, `1h`, `0`). The one duration
/// grammar of the project ([`mpquic_wire::units`]): path specs, scenario files and every
/// command-line option use it.
pub fn parse_duration(s: &str) -> Option<SimTime> {
    mpquic_wire::units::parse_duration(s)
}

/// Canonical duration text.
pub(crate) fn format_duration(t: SimTime) -> String {
    format_exact(t)
}

/// Expected form of a queue size.
pub(crate) const QUEUE_EXPECTED: &str = "`<n>pkt` (packets), `<n>b` (bytes; also `kb`/`mb` = 10^3/10^6 bytes, `kib`/`mib` = 2^10/2^20 bytes, as every size), `<x>bdp` (multiple of the bandwidth-delay product) or `inf`";

/// Parses a queue size.
pub(crate) fn parse_queue(s: &str) -> Option<QueueSpec> {
    let t = s.trim().to_ascii_lowercase();
    if matches!(t.as_str(), "inf" | "infinite" | "unlimited") {
        return Some(QueueSpec::Infinite);
    }
    let (v, unit) = split_number(&t)?;
    match unit.as_str() {
        "pkt" | "pkts" | "packets" if v.fract() == 0.0 => to_u64(v).map(QueueSpec::Packets),
        "bdp" => Some(QueueSpec::Bdp(v)),
        // A bare number is ambiguous here (packets or bytes?): a unit is required.
        "" => None,
        u => to_u64(v * byte_multiplier(u)?).map(QueueSpec::Bytes),
    }
}

/// Canonical queue text.
pub(crate) fn format_queue(q: &QueueSpec) -> String {
    match q {
        QueueSpec::Packets(n) => format!("{n}pkt"),
        QueueSpec::Bytes(n) => format!("{n}b"),
        QueueSpec::Bdp(f) => format!("{f}bdp"),
        QueueSpec::Infinite => "inf".to_owned(),
    }
}

/// Expected form of a loss model.
pub(crate) const LOSS_EXPECTED: &str = "`none`, a probability as a percentage (`1%`) or fraction (`0.01`), or Gilbert–Elliott `ge:P,R[,H[,K]]` (P = good->bad, R = bad->good, H = loss in bad state, default 1, K = loss in good state, default 0)";

/// Parses a probability: `1%`, `0.5%` or a fraction in `[0, 1]`.
fn parse_probability(s: &str) -> Option<f64> {
    let s = s.trim();
    let v = if let Some(pct) = s.strip_suffix('%') {
        let (v, unit) = split_number(pct)?;
        if !unit.is_empty() {
            return None;
        }
        v / 100.0
    } else {
        let (v, unit) = split_number(s)?;
        if !unit.is_empty() {
            return None;
        }
        v
    };
    (0.0..=1.0).contains(&v).then_some(v)
}

/// Parses a loss model.
pub(crate) fn parse_loss(s: &str) -> Option<LossModel> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("none") {
        return Some(LossModel::None);
    }
    if let Some(rest) = t.strip_prefix("ge:") {
        let parts: Vec<&str> = rest.split(',').collect();
        if !(2..=4).contains(&parts.len()) {
            return None;
        }
        let p: Option<Vec<f64>> = parts.iter().map(|x| parse_probability(x)).collect();
        let p = p?;
        return Some(LossModel::GilbertElliott {
            p_good_to_bad: p[0],
            p_bad_to_good: p[1],
            loss_in_bad: p.get(2).copied().unwrap_or(1.0),
            loss_in_good: p.get(3).copied().unwrap_or(0.0),
        });
    }
    let p = parse_probability(t)?;
    Some(if p == 0.0 {
        LossModel::None
    } else {
        LossModel::Bernoulli { p }
    })
}

/// Canonical loss text.
pub(crate) fn format_loss(l: &LossModel) -> String {
    match *l {
        LossModel::None => "none".to_owned(),
        LossModel::Bernoulli { p } => format!("{p}"),
        LossModel::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good,
            loss_in_bad,
        } => format!("ge:{p_good_to_bad},{p_bad_to_good},{loss_in_bad},{loss_in_good}"),
    }
}

/// Expected form of a boolean.
pub(crate) const BOOL_EXPECTED: &str = "`true`/`false` (or `yes`/`no`, `1`/`0`)";

/// Parses a boolean.
pub(crate) fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" | "on" => Some(true),
        "false" | "no" | "0" | "off" => Some(false),
        _ => None,
    }
}

pub(crate) const MTU_EXPECTED: &str =
    "a packet size in bytes of at least 64, e.g. `1500` or `1500b`, or `inf` for no limit";

/// Parses a link MTU: bytes (optionally suffixed `b`/`B`), or `inf`/`none` for no limit.
pub(crate) fn parse_mtu(s: &str) -> Option<Option<u64>> {
    let t = s.trim();
    if t.eq_ignore_ascii_case("inf") || t.eq_ignore_ascii_case("none") {
        return Some(None);
    }
    let digits = t.strip_suffix(['b', 'B']).unwrap_or(t);
    let n: u64 = digits.parse().ok()?;
    (n >= 64).then_some(Some(n))
}

/// Formats a link MTU as [`parse_mtu`] reads it.
pub(crate) fn format_mtu(m: Option<u64>) -> String {
    m.map_or_else(|| "inf".to_owned(), |n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::{MICROSECOND, MILLISECOND, SECOND};

    #[test]
    fn rates() {
        assert_eq!(parse_rate("20mbit"), Some(20_000_000));
        assert_eq!(parse_rate("100Mbit"), Some(100_000_000));
        assert_eq!(parse_rate("1.5gbit"), Some(1_500_000_000));
        assert_eq!(parse_rate("64kbps"), Some(64_000));
        assert_eq!(parse_rate("12 mbps"), Some(12_000_000));
        assert_eq!(parse_rate("800bit"), Some(800));
        for bad in [
            "20", "20mb", "mbit", "-1mbit", "0mbit", "1e6bit", ".5mbit", "20mbit/s",
        ] {
            assert_eq!(parse_rate(bad), None, "{bad}");
        }
        assert_eq!(format_rate(20_000_000), "20mbit");
        assert_eq!(format_rate(1_500_000), "1500kbit");
        assert_eq!(format_rate(3_000_000_000), "3gbit");
        assert_eq!(format_rate(7), "7bit");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("10ms"), Some(10 * MILLISECOND));
        assert_eq!(parse_duration("500us"), Some(500 * MICROSECOND));
        assert_eq!(parse_duration("1s"), Some(SECOND));
        assert_eq!(parse_duration("2.5ms"), Some(2_500_000));
        assert_eq!(parse_duration("0"), Some(0));
        assert_eq!(parse_duration("2min"), Some(120 * SECOND));
        for bad in ["10", "10m", "ms", "-1ms", "1.2.3ms"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn queues() {
        assert_eq!(parse_queue("100pkt"), Some(QueueSpec::Packets(100)));
        assert_eq!(parse_queue("64kb"), Some(QueueSpec::Bytes(64_000)));
        assert_eq!(parse_queue("64KiB"), Some(QueueSpec::Bytes(65_536)));
        assert_eq!(parse_queue("150000B"), Some(QueueSpec::Bytes(150_000)));
        assert_eq!(parse_queue("1.5bdp"), Some(QueueSpec::Bdp(1.5)));
        assert_eq!(parse_queue("inf"), Some(QueueSpec::Infinite));
        for bad in ["100", "1.5pkt", "10kbit", "bdp"] {
            assert_eq!(parse_queue(bad), None, "{bad}");
        }
    }

    #[test]
    fn losses() {
        assert_eq!(parse_loss("1%"), Some(LossModel::bernoulli(0.01)));
        assert_eq!(parse_loss("0.02"), Some(LossModel::bernoulli(0.02)));
        assert_eq!(parse_loss("0"), Some(LossModel::None));
        assert_eq!(parse_loss("none"), Some(LossModel::None));
        assert_eq!(
            parse_loss("ge:1%,30%"),
            Some(LossModel::gilbert_elliott(0.01, 0.3, 0.0, 1.0))
        );
        assert_eq!(
            parse_loss("ge:0.01,0.3,0.5,0.001"),
            Some(LossModel::gilbert_elliott(0.01, 0.3, 0.001, 0.5))
        );
        for bad in ["1.5", "150%", "x", "ge:0.1", "ge:1,2,3,4,5", "-1%"] {
            assert_eq!(parse_loss(bad), None, "{bad}");
        }
    }

    #[test]
    fn bools() {
        assert_eq!(parse_bool("Yes"), Some(true));
        assert_eq!(parse_bool("0"), Some(false));
        assert_eq!(parse_bool("maybe"), None);
    }
}
