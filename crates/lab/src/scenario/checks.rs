//! Strict parsing of the scenario text: `transport.reinjection` as written, and TOML errors as
//! one line naming the key. Range checks of the transport settings are
//! `mpquic_proto::TransportConfig::validate`'s (see `super::transport`).

use mpquic_proto::reinjection::ReinjectionMode;

use crate::error::LabError;

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
