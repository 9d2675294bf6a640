//! What an emulator measured: release jitter and per-path counters.
//!
//! The report types are `#[non_exhaustive]`: only the emulator builds them, so a new counter
//! is not a breaking change for the programs that read them (the CLI, the lab).

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use mpquic_netsim::stats::{Counter, DropCounters, LinkSummary};
use mpquic_netsim::LinkModel;
use serde::{Deserialize, Serialize};

/// Width of the histogram's buckets (ns).
const BUCKET_NS: u64 = 1_000;
/// Buckets below the overflow bucket: 1 µs resolution up to 20 ms.
const BUCKETS: usize = 20_000;

/// How late datagrams left compared with their scheduled release times,
/// in 1 µs buckets (later than 20 ms counts in one overflow bucket; the
/// maximum is exact).
#[derive(Debug, Clone)]
pub(crate) struct JitterHistogram {
    buckets: Vec<u64>,
    count: u64,
    sum_ns: u128,
    max_ns: u64,
}

impl Default for JitterHistogram {
    fn default() -> Self {
        Self {
            buckets: vec![0; BUCKETS + 1],
            count: 0,
            sum_ns: 0,
            max_ns: 0,
        }
    }
}

impl JitterHistogram {
    /// Records one datagram that left `late_ns` after its scheduled time.
    pub(crate) fn record(&mut self, late_ns: u64) {
        let i = usize::try_from(late_ns / BUCKET_NS).map_or(BUCKETS, |i| i.min(BUCKETS));
        self.buckets[i] += 1;
        self.count += 1;
        self.sum_ns += u128::from(late_ns);
        self.max_ns = self.max_ns.max(late_ns);
    }

    /// The upper edge (µs) of the bucket holding quantile `q` (0 without samples).
    fn quantile_us(&self, q: f64) -> f64 {
        if self.count == 0 {
            return 0.0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                if i == BUCKETS {
                    return self.max_ns as f64 / 1e3;
                }
                let edge = (i as u64 + 1) * BUCKET_NS;
                return edge.min(self.max_ns) as f64 / 1e3;
            }
        }
        self.max_ns as f64 / 1e3
    }

    /// The summary figures.
    pub(crate) fn stats(&self) -> JitterStats {
        JitterStats {
            datagrams: self.count,
            p50_us: self.quantile_us(0.5),
            p99_us: self.quantile_us(0.99),
            max_us: self.max_ns as f64 / 1e3,
            mean_us: if self.count == 0 {
                0.0
            } else {
                self.sum_ns as f64 / self.count as f64 / 1e3
            },
        }
    }
}

/// Release jitter: how late datagrams left compared with the time their
/// link model scheduled (µs; quantiles at 1 µs resolution).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct JitterStats {
    /// Datagrams released.
    pub datagrams: u64,
    /// Median lateness.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// Largest lateness.
    pub max_us: f64,
    /// Mean lateness.
    pub mean_us: f64,
}

/// Counters of one direction of a path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DirectionReport {
    /// Datagrams that crossed the link and were sent on.
    pub forwarded: Counter,
    /// Datagrams the link dropped, by cause.
    pub dropped: DropCounters,
    /// Largest queue occupancy in bytes.
    pub queue_peak_bytes: u64,
    /// Largest queue occupancy in packets.
    pub queue_peak_packets: u64,
    /// The link's ground truth as the simulator reports it (link index
    /// `2 * path` up, `2 * path + 1` down).
    pub link: LinkSummary,
}

impl DirectionReport {
    /// The counters of a link model.
    pub(crate) fn of(model: &LinkModel, index: usize) -> Self {
        let link = model.summary(index);
        Self {
            forwarded: link.delivered,
            dropped: link.dropped,
            queue_peak_bytes: link.max_queue_bytes,
            queue_peak_packets: model.max_queue_packets() as u64,
            link,
        }
    }
}

/// Counters of one path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PathReport {
    /// Position of the path (0-based).
    pub index: usize,
    /// Source IP the path takes (`None`: every source no other path names).
    pub from: Option<IpAddr>,
    /// The spec as given.
    pub spec: String,
    /// Client addresses seen on the path (one relay socket each).
    pub clients: u64,
    /// Client to server.
    pub up: DirectionReport,
    /// Server to client.
    pub down: DirectionReport,
}

/// Everything an emulator measured, at exit or on request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Report {
    /// Where clients sent.
    pub listen: SocketAddr,
    /// Where datagrams went.
    pub server: SocketAddr,
    /// Seed of the links' random streams.
    pub seed: u64,
    /// Time since the emulator started (s).
    pub elapsed_s: f64,
    /// Release jitter over every forwarded datagram.
    pub jitter: JitterStats,
    /// Per path.
    pub paths: Vec<PathReport>,
    /// Datagrams from sources no path takes (dropped).
    pub unmatched: Counter,
    /// Datagrams of new clients refused because the relay has too many.
    pub refused_clients: Counter,
    /// Datagrams the system refused to send (e.g. nothing listens at the server).
    pub send_errors: u64,
}

fn mb(bytes: u64) -> String {
    format!("{:.2} MB", bytes as f64 / 1e6)
}

impl fmt::Display for DirectionReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.dropped;
        write!(
            f,
            "forwarded {} datagrams ({}), dropped {} (queue {}, loss {}, down {}), queue peak {} packets / {} bytes",
            self.forwarded.packets,
            mb(self.forwarded.bytes),
            d.total().packets,
            d.queue_overflow.packets,
            d.random_loss.packets,
            d.link_down.packets,
            self.queue_peak_packets,
            self.queue_peak_bytes
        )
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let j = &self.jitter;
        writeln!(
            f,
            "emulated {:.1} s; release jitter over {} datagrams: p50 {:.0} us, p99 {:.0} us, max {:.0} us",
            self.elapsed_s, j.datagrams, j.p50_us, j.p99_us, j.max_us
        )?;
        for p in &self.paths {
            let from = p
                .from
                .map_or("any other source".to_owned(), |ip| ip.to_string());
            writeln!(
                f,
                "path {} from {from} ({}), {} client(s)",
                p.index, p.spec, p.clients
            )?;
            writeln!(f, "  up:   {}", p.up)?;
            writeln!(f, "  down: {}", p.down)?;
        }
        write!(
            f,
            "unmatched sources: {} datagrams; refused clients: {} datagrams; send errors: {}",
            self.unmatched.packets, self.refused_clients.packets, self.send_errors
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_the_buckets() {
        let mut h = JitterHistogram::default();
        assert_eq!(h.stats().p50_us, 0.0);
        for us in 0..100u64 {
            h.record(us * 1000 + 500);
        }
        let s = h.stats();
        assert_eq!(s.datagrams, 100);
        assert_eq!(s.p50_us, 50.0);
        assert_eq!(s.p99_us, 99.0);
        assert_eq!(s.max_us, 99.5);
        h.record(u64::MAX);
        assert_eq!(h.stats().max_us, u64::MAX as f64 / 1e3);
    }
}
