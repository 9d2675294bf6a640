//! qlog files: one JSON-SEQ file per connection in a directory (docs/QLOG.md).
//!
//! Files are named `<odcid>_<client|server>.sqlog`: the original destination connection ID in
//! hex followed by the vantage point, as draft-ietf-quic-qlog-main-schema §"Set file output
//! destination via an environment variable" recommends for QLOGDIR, with the `.sqlog` suffix
//! of §"qlog to JSON Text Sequences mapping". A client and a server logging into one directory
//! (the simulator, a loopback test) thus do not overwrite each other.

use std::io::BufWriter;
use std::path::{Path, PathBuf};

use mpquic_proto::qlog::{QlogConfig, QlogContext, QlogHeader, QlogSink, QlogWriter};
use mpquic_proto::wire::cid::ConnectionId;
use mpquic_proto::wire::stream_id::Side;

/// The environment variable naming the qlog directory (main schema §"Set file output
/// destination via an environment variable").
pub const QLOGDIR: &str = "QLOGDIR";

/// The file name of a connection's qlog.
pub fn file_name(odcid: &ConnectionId, side: Side) -> String {
    let side = match side {
        Side::Client => "client",
        Side::Server => "server",
    };
    format!("{odcid}_{side}.sqlog")
}

/// How the trace's clock relates to real time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QlogClock {
    /// The runtime's monotonic clock; the header records the wall-clock start time.
    Real,
    /// The simulator's virtual clock: no wall-clock time, so a run's files are reproducible.
    Virtual,
}

/// A [`QlogConfig`] writing one file per connection into `dir` (created if missing). Event
/// times count from the connection's creation, in the clock of the timestamps the connection
/// is driven with. A file that cannot be created is logged and the connection goes unlogged.
pub fn dir_config(dir: impl Into<PathBuf>, clock: QlogClock) -> std::io::Result<QlogConfig> {
    let dir = dir.into();
    std::fs::create_dir_all(&dir)?;
    Ok(QlogConfig::new(move |ctx| open_sink(&dir, ctx, clock)))
}

fn open_sink(dir: &Path, ctx: &QlogContext, clock: QlogClock) -> Option<Box<dyn QlogSink>> {
    let path = dir.join(file_name(&ctx.odcid, ctx.side));
    let file = match std::fs::File::create(&path) {
        Ok(f) => f,
        Err(e) => {
            tracing::warn!("qlog: cannot create {}: {e}", path.display());
            return None;
        }
    };
    let header = QlogHeader {
        side: ctx.side,
        odcid: ctx.odcid.to_string(),
        description: Some(match clock {
            QlogClock::Real => "mpquic runtime, monotonic clock".to_owned(),
            QlogClock::Virtual => "mpquic simulator, virtual time".to_owned(),
        }),
        wall_clock_time: (clock == QlogClock::Real).then(rfc3339_now),
    };
    match QlogWriter::new(BufWriter::new(file), &header, ctx.start) {
        Ok(w) => Some(Box::new(w)),
        Err(e) => {
            tracing::warn!("qlog: cannot write {}: {e}", path.display());
            None
        }
    }
}

/// The qlog directory: `flag` if given, else `$QLOGDIR` if set and not empty.
pub fn dir_from_flag_or_env(flag: Option<PathBuf>) -> Option<PathBuf> {
    flag.or_else(|| {
        std::env::var_os(QLOGDIR)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
}

/// The current UTC time as RFC 3339 with milliseconds (`2024-10-10T10:10:10.000Z`).
fn rfc3339_now() -> String {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    rfc3339(since.as_secs(), since.subsec_millis())
}

/// RFC 3339 UTC time of `secs` seconds (plus `millis`) after 1970-01-01T00:00:00Z.
fn rfc3339(secs: u64, millis: u32) -> String {
    let (days, rem) = (secs / 86_400, secs % 86_400);
    let (y, m, d) = civil_from_days(days as i64);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (400-year eras of 146097 days,
/// years counted from March so the leap day ends the year).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_dates() {
        assert_eq!(rfc3339(0, 0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29 (a leap day of a century year) 12:34:56.789.
        assert_eq!(rfc3339(951_827_696, 789), "2000-02-29T12:34:56.789Z");
        assert_eq!(rfc3339(1_735_689_599, 999), "2024-12-31T23:59:59.999Z");
    }

    #[test]
    fn files_are_named_by_odcid_and_vantage_point() {
        let cid = ConnectionId::new(&[0xde, 0xad, 0x01]).unwrap();
        assert_eq!(file_name(&cid, Side::Server), "dead01_server.sqlog");
        assert_eq!(file_name(&cid, Side::Client), "dead01_client.sqlog");
    }
}
