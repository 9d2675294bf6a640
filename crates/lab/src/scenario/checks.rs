//! Range checks of the transport settings, so that a scenario file with a value the core or
//! the peer would refuse fails when it is loaded, naming the key, instead of in the middle of
//! a run (a transport parameter out of range only shows up as a failed handshake).

use mpquic_proto::reinjection::ReinjectionMode;
use mpquic_proto::AckConfig;

use crate::error::LabError;
use crate::units::SimDuration;

/// Largest `ack.max_range_limit`: an ACK frame of this many ranges (two varints each, up to
/// 8 bytes apiece) still fits, with its header, in a 1200-byte datagram; a larger frame could
/// not be sent at all. The Alibaba report's Maximum_Limit is 64.
pub const MAX_ACK_RANGES: usize = 64;

/// RFC 9000 §18.2: max_ack_delay values of 2^14 ms or more are invalid.
const MAX_ACK_DELAY_MS: u64 = (1 << 14) - 1;

/// RFC 9000 §18.2: ack_delay_exponent values above 20 are invalid.
const MAX_ACK_DELAY_EXPONENT: u8 = 20;

fn out_of_range(key: &str, value: impl std::fmt::Display, expected: &str) -> LabError {
    LabError::invalid(key, format!("{value} is out of range: expected {expected}"))
}

/// The `[transport.ack]` table as written (before `ack_range_limit` overrides its default).
pub(super) fn check_ack(ack: &AckConfig) -> Result<(), LabError> {
    if ack.ack_eliciting_threshold == 0 {
        return Err(out_of_range(
            "transport.ack.ack_eliciting_threshold",
            0,
            "at least 1 (1 acknowledges every ack-eliciting packet at once)",
        ));
    }
    if ack.max_ack_delay_ms > MAX_ACK_DELAY_MS {
        return Err(out_of_range(
            "transport.ack.max_ack_delay_ms",
            ack.max_ack_delay_ms,
            &format!("0..={MAX_ACK_DELAY_MS} (RFC 9000 §18.2)"),
        ));
    }
    if ack.ack_delay_exponent > MAX_ACK_DELAY_EXPONENT {
        return Err(out_of_range(
            "transport.ack.ack_delay_exponent",
            ack.ack_delay_exponent,
            &format!("0..={MAX_ACK_DELAY_EXPONENT} (RFC 9000 §18.2)"),
        ));
    }
    if !(1..=MAX_ACK_RANGES).contains(&ack.max_range_limit) {
        return Err(out_of_range(
            "transport.ack.max_range_limit",
            ack.max_range_limit,
            &format!("1..={MAX_ACK_RANGES}"),
        ));
    }
    if !(1..=ack.max_range_limit).contains(&ack.default_range_limit) {
        return Err(out_of_range(
            "transport.ack.default_range_limit",
            ack.default_range_limit,
            &format!("1..={} (ack.max_range_limit)", ack.max_range_limit),
        ));
    }
    Ok(())
}

/// `idle_timeout`: zero disables it (RFC 9000 §10.1); otherwise whole milliseconds, the unit
/// of the max_idle_timeout transport parameter (a sub-millisecond value would be sent as 0,
/// "disabled", while this endpoint still timed out).
pub(super) fn check_idle_timeout(t: SimDuration) -> Result<(), LabError> {
    const MS: u64 = 1_000_000;
    let nanos = t.nanos();
    if nanos % MS != 0 {
        return Err(LabError::invalid(
            "transport.idle_timeout",
            format!("{t} is not a whole number of milliseconds (0 disables the idle timeout)"),
        ));
    }
    Ok(())
}

/// `reinjection`: the QoE thresholds must be ordered (XLINK Alg. 1: lower < upper).
pub(super) fn check_reinjection(mode: ReinjectionMode) -> Result<(), LabError> {
    if let ReinjectionMode::Qoe { lower_ms, upper_ms } = mode {
        if lower_ms >= upper_ms {
            return Err(LabError::invalid(
                "transport.reinjection",
                format!("lower_ms ({lower_ms}) must be below upper_ms ({upper_ms})"),
            ));
        }
    }
    Ok(())
}

/// `reinjection` as written: `{ mode = "off" | "always" | "tail" }` or
/// `{ mode = "qoe", lower_ms = N, upper_ms = N }`. Parsed here rather than by the core's
/// derived format, which ignores unknown keys and thresholds given to other modes.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ReinjectionToml {
    mode: String,
    lower_ms: Option<u64>,
    upper_ms: Option<u64>,
}

/// Deserializes `transport.reinjection` strictly (see [`ReinjectionToml`]).
pub(super) fn de_reinjection<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<ReinjectionMode, D::Error> {
    use serde::de::Error;
    let r = <ReinjectionToml as serde::Deserialize>::deserialize(d)?;
    match (r.mode.as_str(), r.lower_ms, r.upper_ms) {
        ("off", None, None) => Ok(ReinjectionMode::Off),
        ("always", None, None) => Ok(ReinjectionMode::Always),
        ("tail", None, None) => Ok(ReinjectionMode::Tail),
        ("qoe", Some(lower_ms), Some(upper_ms)) => Ok(ReinjectionMode::Qoe { lower_ms, upper_ms }),
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

/// A TOML error as one line, `ORIGIN:LINE:COLUMN: KEY: MESSAGE`: the parser's own rendering
/// quotes the offending line over several lines (which does not fit the command line's
/// one-line errors), and its message alone does not always name the key.
pub(super) fn toml_error(origin: &str, text: &str, e: &toml::de::Error) -> LabError {
    let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
    let Some(span) = e.span() else {
        return LabError::Parse {
            origin: origin.to_owned(),
            message,
        };
    };
    let before = &text[..span.start.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count() + 1;
    let column = before.len() - line_start + 1;
    let message = match key_before(&before[line_start..]) {
        Some(key) => {
            // A key at the start of its line belongs to the last [table] header above it.
            let first = before[line_start..].trim_start().starts_with(key);
            match table_above(&text[..line_start]) {
                Some(table) if first => format!("{table}.{key}: {message}"),
                _ => format!("{key}: {message}"),
            }
        }
        None => message,
    };
    LabError::Parse {
        origin: format!("{origin}:{line}:{column}"),
        message,
    }
}

/// The key of `KEY = ` just before an error's position on its line, if any.
fn key_before(line: &str) -> Option<&str> {
    let head = line.trim_end().strip_suffix('=')?.trim_end();
    let start = head
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .map_or(0, |i| i + 1);
    let key = &head[start..];
    (!key.is_empty()).then_some(key)
}

/// The name of the last `[table]` header in `text`.
fn table_above(text: &str) -> Option<&str> {
    text.lines().rev().find_map(|l| {
        let l = l.trim();
        l.strip_prefix('[')?.strip_suffix(']').map(str::trim)
    })
}
