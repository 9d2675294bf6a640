//! The summary of a transfer: printed for people, written as JSON for scripts.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use mpquic::{Connection, Design, PathId, PathStats, Validation};
use serde::Serialize;

use crate::units::format_bytes;

/// What a transfer achieved.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub url: String,
    /// Application protocol (ALPN token): "h3" or "hq-interop".
    pub protocol: String,
    /// HTTP status of the response (HTTP/3 only: HTTP/0.9 has none).
    pub status: Option<u16>,
    /// Body bytes received.
    pub bytes: u64,
    /// From the request to the last byte.
    pub seconds: f64,
    pub goodput_mbps: f64,
    pub handshake_ms: f64,
    /// Multipath design negotiated with the server.
    pub design: String,
    /// Smoothed RTT of the initial path.
    pub srtt_ms: f64,
    pub packets_sent: u64,
    pub packets_received: u64,
    pub packets_lost: u64,
    /// From the start of the connection attempt to the first body byte.
    pub first_byte_ms: Option<f64>,
    /// 0-RTT packets the client sent (RFC 9000 §17.2.3); 0 without a resumed session.
    pub zero_rtt_packets_sent: u64,
    /// Whether the server accepted the 0-RTT data; null when none was attempted.
    pub zero_rtt_accepted: Option<bool>,
    pub paths: Vec<PathSummary>,
}

/// Per-path figures.
#[derive(Debug, Clone, Serialize)]
pub struct PathSummary {
    pub id: PathId,
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub bytes_received: u64,
    pub bytes_sent: u64,
    pub srtt_ms: f64,
    pub cwnd: u64,
    /// The path's current maximum UDP payload in bytes (path MTU discovery).
    pub mtu: u64,
    pub packets_lost: u64,
    pub abandoned: bool,
    /// Path validation (RFC 9000 §8.2): "pending", "validated" or "failed".
    pub validation: Validation,
}

impl PathSummary {
    fn new(p: &PathStats) -> Self {
        Self {
            id: p.id,
            local: p.local,
            remote: p.remote,
            bytes_received: p.counters.bytes_received,
            bytes_sent: p.counters.bytes_sent,
            srtt_ms: p.rtt.as_secs_f64() * 1000.0,
            cwnd: p.cwnd,
            mtu: p.mtu,
            packets_lost: p.counters.packets_lost,
            abandoned: p.abandoned,
            validation: p.validation,
        }
    }
}

impl Summary {
    /// Summarize a transfer of `bytes` over `elapsed` on `conn` (call before closing it), in
    /// `protocol`, answered with `status` if the protocol has one.
    pub fn new(
        url: &str,
        (protocol, status): (&str, Option<u16>),
        conn: &Connection,
        bytes: u64,
        elapsed: Duration,
        handshake: Duration,
    ) -> Self {
        let stats = conn.stats();
        let paths = conn.path_stats();
        let seconds = elapsed.as_secs_f64();
        let srtt_ms = paths
            .iter()
            .find(|p| p.id == PathId::ZERO)
            .or(paths.first())
            .map_or(0.0, |p| p.rtt.as_secs_f64() * 1000.0);
        let design = match conn.design() {
            Some(Design::Single) => "single",
            Some(Design::Spns) => "spns",
            Some(Design::Mpns) => "mpns",
            None => "unknown",
        };
        Self {
            url: url.to_owned(),
            protocol: protocol.to_owned(),
            status,
            bytes,
            seconds,
            goodput_mbps: if seconds > 0.0 {
                bytes as f64 * 8.0 / seconds / 1e6
            } else {
                0.0
            },
            handshake_ms: handshake.as_secs_f64() * 1000.0,
            design: design.to_owned(),
            srtt_ms,
            packets_sent: stats.packets_sent,
            packets_received: stats.packets_received,
            packets_lost: stats.packets_lost,
            first_byte_ms: None,
            zero_rtt_packets_sent: stats.zero_rtt_packets_sent,
            zero_rtt_accepted: stats.zero_rtt_accepted,
            paths: paths.iter().map(PathSummary::new).collect(),
        }
    }

    /// Take the 0-RTT outcome again (it is known only once the handshake completed, which a
    /// 0-RTT request may not have waited for).
    pub fn set_zero_rtt(&mut self, conn: &Connection) {
        let stats = conn.stats();
        self.zero_rtt_packets_sent = stats.zero_rtt_packets_sent;
        self.zero_rtt_accepted = stats.zero_rtt_accepted;
    }

    /// Lines for people; per-path lines only when there are several paths.
    pub fn lines(&self) -> Vec<String> {
        let status = self
            .status
            .map_or(String::new(), |s| format!(", status {s}"));
        let mut out = vec![
            format!("{} ({}{status}): {} in {:.3} s, goodput {:.1} Mbit/s", self.url, self.protocol, format_bytes(self.bytes), self.seconds, self.goodput_mbps),
            format!(
                "handshake {:.2} ms, srtt {:.3} ms, packets sent {}, received {}, lost {}, multipath {}",
                self.handshake_ms, self.srtt_ms, self.packets_sent, self.packets_received, self.packets_lost, self.design
            ),
        ];
        if let Some(ms) = self.first_byte_ms {
            let zero_rtt = match self.zero_rtt_accepted {
                Some(true) => format!(
                    "{} 0-RTT packets sent, accepted",
                    self.zero_rtt_packets_sent
                ),
                Some(false) => format!(
                    "{} 0-RTT packets sent, rejected (resent in 1-RTT)",
                    self.zero_rtt_packets_sent
                ),
                None => "no 0-RTT".to_owned(),
            };
            out.push(format!("first byte after {ms:.2} ms, {zero_rtt}"));
        }
        if let [only] = self.paths.as_slice() {
            out.push(format!(
                "  path {}: mtu {} bytes of UDP payload",
                only.id, only.mtu
            ));
        }
        if self.paths.len() > 1 {
            for p in &self.paths {
                out.push(format!(
                    "  path {} {} -> {}: received {}, sent {}, srtt {:.3} ms, cwnd {}, mtu {}, lost {}{}",
                    p.id,
                    p.local,
                    p.remote,
                    format_bytes(p.bytes_received),
                    format_bytes(p.bytes_sent),
                    p.srtt_ms,
                    format_bytes(p.cwnd),
                    p.mtu,
                    p.packets_lost,
                    match (p.validation, p.abandoned) {
                        (Validation::Failed, _) => " (validation failed)",
                        (_, true) => " (abandoned)",
                        (Validation::Pending, _) => " (not validated)",
                        _ => "",
                    }
                ));
            }
        }
        out
    }

    /// Print [`Summary::lines`] on stdout.
    pub fn print(&self) {
        for line in self.lines() {
            crate::say(line);
        }
    }

    /// Write the summary as JSON to `path`.
    pub fn write_json(&self, path: &Path) -> anyhow::Result<()> {
        let json = serde_json::to_string_pretty(self).context("serializing the summary")?;
        std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))
    }
}
