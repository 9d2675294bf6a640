//! JSON-SEQ serialization (draft-ietf-quic-qlog-main-schema §"qlog to JSON Text Sequences
//! mapping", RFC 7464): every record starts with RS (0x1e) and ends with a line feed. The first
//! record is the QlogFileSeq header (§"QlogFileSeq schema"), then one record per event.
//!
//! The writer only writes to the [`std::io::Write`] its caller hands it; opening files is the
//! runtime's and the lab's business.

use std::io::Write;
use std::sync::{Arc, Mutex};

use mpquic_wire::stream_id::Side;
use serde::Serialize;

use super::events::QlogEvent;
use super::QlogSink;
use crate::time::Timestamp;

/// RFC 7464 record separator.
pub const RS: u8 = 0x1e;

/// Event schema URI of the draft the events follow (§"Draft Event Schema Identification": the
/// draft number is appended; the spec files are draft-ietf-quic-qlog-quic-events-13).
pub const EVENT_SCHEMA: &str = "urn:ietf:params:qlog:events:quic-13";

/// What the header record says about the trace.
#[derive(Debug, Clone)]
pub struct QlogHeader {
    /// Vantage point: the connection's side.
    pub side: Side,
    /// Original destination connection ID (hex), the trace's `group_id`
    /// (draft-ietf-quic-qlog-quic-events §"Use of group IDs").
    pub odcid: String,
    /// Free-text description of the trace (e.g. "simulated, virtual time").
    pub description: Option<String>,
    /// RFC 3339 time at which logging started, when the clock is a real one.
    pub wall_clock_time: Option<String>,
}

#[derive(Serialize)]
struct FileSeq<'a> {
    file_schema: &'static str,
    serialization_format: &'static str,
    /// The pre-draft-10 header fields (qlog 0.3) that qvis and older tools look for to tell a
    /// JSON-SEQ file; the draft's own are the two above.
    qlog_version: &'static str,
    qlog_format: &'static str,
    title: String,
    trace: TraceSeq<'a>,
}

#[derive(Serialize)]
struct TraceSeq<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<&'a str>,
    vantage_point: VantagePoint,
    common_fields: CommonFields<'a>,
    event_schemas: [&'static str; 1],
}

#[derive(Serialize)]
struct VantagePoint {
    name: &'static str,
    #[serde(rename = "type")]
    ty: &'static str,
}

#[derive(Serialize)]
struct CommonFields<'a> {
    group_id: &'a str,
    time_format: &'static str,
    reference_time: ReferenceTime<'a>,
}

/// §"Timestamps": times count from the start of logging on a monotonic clock (the runtime's
/// or the simulator's virtual one), so the epoch is "unknown".
#[derive(Serialize)]
struct ReferenceTime<'a> {
    clock_type: &'static str,
    epoch: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_clock_time: Option<&'a str>,
}

#[derive(Serialize)]
struct Record<'a> {
    /// Milliseconds since the trace started.
    time: f64,
    #[serde(flatten)]
    event: &'a QlogEvent,
}

/// Writes a connection's qlog as JSON-SEQ to `W`; a [`QlogSink`].
///
/// Times are relative to `start` (the connection's creation), in milliseconds. After a write
/// error the writer stays silent (logging never disturbs the connection).
pub struct QlogWriter<W: Write> {
    out: W,
    start: Timestamp,
    failed: bool,
    /// One record, serialized whole before it is written (see [`write_record`]).
    record: Vec<u8>,
}

impl<W: Write> std::fmt::Debug for QlogWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QlogWriter")
            .field("start", &self.start)
            .field("failed", &self.failed)
            .finish_non_exhaustive()
    }
}

impl<W: Write> QlogWriter<W> {
    /// Writes the header record and returns the writer for the events.
    pub fn new(mut out: W, header: &QlogHeader, start: Timestamp) -> std::io::Result<Self> {
        let side = match header.side {
            Side::Client => "client",
            Side::Server => "server",
        };
        let file = FileSeq {
            file_schema: "urn:ietf:params:qlog:file:sequential",
            serialization_format: "application/qlog+json-seq",
            qlog_version: "0.3",
            qlog_format: "JSON-SEQ",
            title: format!("mpquic {side} {}", header.odcid),
            trace: TraceSeq {
                description: header.description.as_deref(),
                vantage_point: VantagePoint {
                    name: "mpquic",
                    ty: side,
                },
                common_fields: CommonFields {
                    group_id: &header.odcid,
                    time_format: "relative_to_epoch",
                    reference_time: ReferenceTime {
                        clock_type: "monotonic",
                        epoch: "unknown",
                        wall_clock_time: header.wall_clock_time.as_deref(),
                    },
                },
                event_schemas: [EVENT_SCHEMA],
            },
        };
        let mut record = Vec::new();
        write_record(&mut out, &mut record, &file)?;
        Ok(QlogWriter {
            out,
            start,
            failed: false,
            record,
        })
    }

    /// Appends one event record.
    pub fn write_event(&mut self, time: Timestamp, event: &QlogEvent) -> std::io::Result<()> {
        let nanos = time.saturating_duration_since(self.start).as_nanos();
        let record = Record {
            time: nanos as f64 / 1e6,
            event,
        };
        write_record(&mut self.out, &mut self.record, &record)?;
        // Flush at the connection's milestones so a file is complete once it closes, even if
        // the process exits without dropping the connection.
        if matches!(
            event,
            QlogEvent::ConnectionClosed(_) | QlogEvent::ConnectionStateUpdated(_)
        ) {
            self.out.flush()?;
        }
        Ok(())
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}

/// Writes `value` as one record with a single `write_all`, serialized into `buf` first: a
/// buffered writer then flushes whole records only, so a file whose process is killed (a
/// server stopped by a signal) still ends at a record boundary.
fn write_record<W: Write, T: Serialize>(
    out: &mut W,
    buf: &mut Vec<u8>,
    value: &T,
) -> std::io::Result<()> {
    buf.clear();
    buf.push(RS);
    serde_json::to_writer(&mut *buf, value)?;
    buf.push(b'\n');
    out.write_all(buf)
}

impl<W: Write + Send> QlogSink for QlogWriter<W> {
    fn emit(&mut self, time: Timestamp, event: QlogEvent) {
        if self.failed {
            return;
        }
        if let Err(e) = self.write_event(time, &event) {
            tracing::warn!("qlog: writing failed, no more events: {e}");
            self.failed = true;
        }
    }
}

/// An in-memory [`Write`] whose clones share one buffer: tests and the simulator collect a
/// connection's qlog with it.
#[derive(Debug, Clone, Default)]
pub struct SharedBuffer(Arc<Mutex<Vec<u8>>>);

impl SharedBuffer {
    /// A copy of everything written so far.
    pub fn contents(&self) -> Vec<u8> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Write for SharedBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        v.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Splits JSON-SEQ bytes into records (RFC 7464 §2.4: RS starts each record; empty ones are
/// skipped), for readers and tests.
pub fn split_records(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.split(|&b| b == RS).filter(|r| !r.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::qlog::events::{ConnectionStateUpdated, PacketHeader, PacketLost};

    fn header() -> QlogHeader {
        QlogHeader {
            side: Side::Server,
            odcid: "0a0b".to_owned(),
            description: None,
            wall_clock_time: None,
        }
    }

    #[test]
    fn header_then_records_each_framed_by_rs_and_newline() {
        let start = Timestamp::from_nanos(5_000_000);
        let mut w = QlogWriter::new(Vec::new(), &header(), start).unwrap();
        let lost = QlogEvent::PacketLost(PacketLost {
            header: PacketHeader {
                packet_type: "1RTT",
                packet_number: 7,
                length: None,
                scid: None,
                dcid: None,
            },
            trigger: Some("time_threshold"),
            path_id: Some(1),
        });
        w.emit(Timestamp::from_nanos(6_500_000), lost);
        let state = ConnectionStateUpdated {
            old: None,
            new: "closed",
        };
        w.emit(start, QlogEvent::ConnectionStateUpdated(state));
        let bytes = w.into_inner();
        assert_eq!(bytes[0], RS);
        assert_eq!(*bytes.last().unwrap(), b'\n');
        let records: Vec<serde_json::Value> = split_records(&bytes)
            .map(|r| {
                assert_eq!(*r.last().unwrap(), b'\n');
                serde_json::from_slice(r).unwrap()
            })
            .collect();
        assert_eq!(records.len(), 3);
        let head = &records[0];
        assert_eq!(head["qlog_format"], "JSON-SEQ");
        assert_eq!(head["serialization_format"], "application/qlog+json-seq");
        assert_eq!(head["trace"]["vantage_point"]["type"], "server");
        assert_eq!(head["trace"]["common_fields"]["group_id"], "0a0b");
        assert_eq!(records[1]["time"], 1.5);
        assert_eq!(records[1]["name"], "quic:packet_lost");
        assert_eq!(records[1]["data"]["path_id"], 1);
        assert_eq!(records[1]["data"]["header"]["packet_number"], 7);
        assert_eq!(records[2]["time"], 0.0);
        assert_eq!(records[2]["data"], serde_json::json!({"new": "closed"}));
    }
}
