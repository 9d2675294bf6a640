//! TOML errors of the scenario text as one line naming the key. Range checks of the transport
//! settings are `mpquic_proto::TransportConfig::validate`'s (see `super::transport`).

use crate::error::LabError;

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
