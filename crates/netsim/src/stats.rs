//! Ground-truth statistics recorded by the simulator.
//!
//! Everything here is cheap and always on. Time series are downsampled to at
//! most one sample per `sample_interval` (1 ms by default); if a series grows
//! past [`MAX_SERIES_SAMPLES`] its interval doubles and existing samples are
//! merged, so memory stays bounded for arbitrarily long runs.
//!
//! The summaries and [`DropCause`] are `#[non_exhaustive]`: the simulator produces them and
//! callers read them, so a new counter or drop cause (as `mtu_exceeded` was) is not a
//! breaking change.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::time::SimTime;

/// Upper bound on the length of any recorded time series.
pub const MAX_SERIES_SAMPLES: usize = 1 << 18;

/// A packet and byte counter.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counter {
    /// Number of packets.
    pub packets: u64,
    /// Number of payload bytes.
    pub bytes: u64,
}

impl Counter {
    /// Nothing counted.
    pub fn is_zero(&self) -> bool {
        self.packets == 0 && self.bytes == 0
    }

    /// Counts one packet of `bytes` bytes.
    pub fn add(&mut self, bytes: u64) {
        self.packets += 1;
        self.bytes += bytes;
    }
}

/// Why a packet was dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum DropCause {
    /// The drop-tail queue was full.
    QueueOverflow,
    /// The link's random loss model dropped it (applied at link entry).
    RandomLoss,
    /// The link was down when the packet arrived, or went down while the
    /// packet was queued, being serialized or propagating.
    LinkDown,
    /// No route for `(src_ip, dst_ip)` or no node owns the destination IP.
    NoRoute,
    /// Larger than the link's MTU ([`crate::LinkConfig::mtu`]).
    MtuExceeded,
}

/// Drop counters, one per [`DropCause`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DropCounters {
    /// Drops because the queue was full.
    pub queue_overflow: Counter,
    /// Drops by the random loss model.
    pub random_loss: Counter,
    /// Drops because the link was down.
    pub link_down: Counter,
    /// Drops because the packet could not be routed.
    pub no_route: Counter,
    /// Drops because the packet exceeded the link's MTU (left out of serialized stats when
    /// zero, so runs without MTU limits record what they did before).
    #[serde(default, skip_serializing_if = "Counter::is_zero")]
    pub mtu_exceeded: Counter,
}

impl DropCounters {
    /// Counts a drop.
    pub fn record(&mut self, cause: DropCause, bytes: u64) {
        self.get_mut(cause).add(bytes);
    }

    /// The counter for one cause.
    pub fn get(&self, cause: DropCause) -> Counter {
        match cause {
            DropCause::QueueOverflow => self.queue_overflow,
            DropCause::RandomLoss => self.random_loss,
            DropCause::LinkDown => self.link_down,
            DropCause::NoRoute => self.no_route,
            DropCause::MtuExceeded => self.mtu_exceeded,
        }
    }

    fn get_mut(&mut self, cause: DropCause) -> &mut Counter {
        match cause {
            DropCause::QueueOverflow => &mut self.queue_overflow,
            DropCause::RandomLoss => &mut self.random_loss,
            DropCause::LinkDown => &mut self.link_down,
            DropCause::NoRoute => &mut self.no_route,
            DropCause::MtuExceeded => &mut self.mtu_exceeded,
        }
    }

    /// All drops together.
    pub fn total(&self) -> Counter {
        let all = [
            self.queue_overflow,
            self.random_loss,
            self.link_down,
            self.no_route,
            self.mtu_exceeded,
        ];
        all.iter().fold(Counter::default(), |acc, c| Counter {
            packets: acc.packets + c.packets,
            bytes: acc.bytes + c.bytes,
        })
    }
}

/// Aggregate delay statistics (nanoseconds).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DelayStats {
    /// Number of samples.
    pub count: u64,
    /// Sum of all samples (saturating).
    pub sum_ns: u64,
    /// Smallest sample (0 when `count == 0`).
    pub min_ns: u64,
    /// Largest sample (0 when `count == 0`).
    pub max_ns: u64,
}

impl DelayStats {
    /// Adds a sample.
    pub fn record(&mut self, d: SimTime) {
        if self.count == 0 {
            self.min_ns = d;
            self.max_ns = d;
        } else {
            self.min_ns = self.min_ns.min(d);
            self.max_ns = self.max_ns.max(d);
        }
        self.count += 1;
        self.sum_ns = self.sum_ns.saturating_add(d);
    }

    /// Mean in nanoseconds, `None` without samples.
    pub fn mean_ns(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum_ns as f64 / self.count as f64)
    }

    /// Minimum, `None` without samples.
    pub fn min(&self) -> Option<SimTime> {
        (self.count > 0).then_some(self.min_ns)
    }
}

/// Queue occupancy within one sampling bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct QueueSample {
    /// Start of the bucket.
    pub time: SimTime,
    /// Largest occupancy (bytes) during the bucket.
    pub max_bytes: u64,
    /// Occupancy (bytes) at the last change within the bucket.
    pub end_bytes: u64,
}

/// Queue occupancy over time for one link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct QueueOccupancy {
    /// Bucket width of `samples` (grows when the series is coarsened).
    pub sample_interval: SimTime,
    /// One sample per bucket in which the occupancy changed, in time order.
    pub samples: Vec<QueueSample>,
    /// Current occupancy in bytes.
    pub bytes: u64,
    /// Current occupancy in packets.
    pub packets: u64,
    /// Largest occupancy ever seen, in bytes.
    pub max_bytes: u64,
    /// Time of the last change.
    pub last_change: SimTime,
    /// Integral of occupancy over time (byte·ns) up to `last_change`.
    pub byte_ns: u128,
}

impl QueueOccupancy {
    pub(crate) fn new(sample_interval: SimTime) -> Self {
        Self {
            sample_interval: sample_interval.max(1),
            samples: Vec::new(),
            bytes: 0,
            packets: 0,
            max_bytes: 0,
            last_change: 0,
            byte_ns: 0,
        }
    }

    /// Records that the queue now holds `bytes`/`packets` at `now`.
    pub(crate) fn update(&mut self, now: SimTime, bytes: u64, packets: u64) {
        if bytes == self.bytes && packets == self.packets {
            return;
        }
        let dt = now.saturating_sub(self.last_change);
        self.byte_ns += u128::from(self.bytes) * u128::from(dt);
        let prev = self.bytes;
        self.last_change = self.last_change.max(now);
        self.bytes = bytes;
        self.packets = packets;
        self.max_bytes = self.max_bytes.max(bytes);
        let bucket = now - now % self.sample_interval;
        match self.samples.last_mut() {
            Some(s) if s.time == bucket => {
                s.max_bytes = s.max_bytes.max(bytes);
                s.end_bytes = bytes;
            }
            _ => {
                self.samples.push(QueueSample {
                    time: bucket,
                    max_bytes: prev.max(bytes),
                    end_bytes: bytes,
                });
                if self.samples.len() > MAX_SERIES_SAMPLES {
                    self.coarsen();
                }
            }
        }
    }

    fn coarsen(&mut self) {
        self.sample_interval = self.sample_interval.saturating_mul(2);
        let iv = self.sample_interval;
        let mut out: Vec<QueueSample> = Vec::with_capacity(self.samples.len() / 2 + 1);
        for s in self.samples.drain(..) {
            let bucket = s.time - s.time % iv;
            match out.last_mut() {
                Some(o) if o.time == bucket => {
                    o.max_bytes = o.max_bytes.max(s.max_bytes);
                    o.end_bytes = s.end_bytes;
                }
                _ => out.push(QueueSample { time: bucket, ..s }),
            }
        }
        self.samples = out;
    }

    /// Time-weighted mean occupancy in bytes over `[0, now]`.
    pub fn mean_bytes(&self, now: SimTime) -> f64 {
        if now == 0 {
            return self.bytes as f64;
        }
        let tail = u128::from(self.bytes) * u128::from(now.saturating_sub(self.last_change));
        (self.byte_ns + tail) as f64 / now as f64
    }
}

/// Ground truth of one link, updated live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LinkStats {
    /// Packets that arrived at the link (before loss, queue or down checks).
    pub entered: Counter,
    /// Packets that left the link (handed to the next link or the node).
    pub delivered: Counter,
    /// Packets dropped on this link, by cause.
    pub dropped: DropCounters,
    /// Time delivered packets spent waiting in this link's queue.
    pub queue_delay: DelayStats,
    /// Time delivered packets spent in this link (entry to exit).
    pub transit_delay: DelayStats,
    /// Queue occupancy over time.
    pub queue: QueueOccupancy,
    /// ECN-capable packets this link marked CE (step marking above
    /// [`LinkConfig::ecn_threshold`](crate::LinkConfig::ecn_threshold)).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ce_marked: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl LinkStats {
    pub(crate) fn new(sample_interval: SimTime) -> Self {
        Self {
            entered: Counter::default(),
            delivered: Counter::default(),
            dropped: DropCounters::default(),
            queue_delay: DelayStats::default(),
            transit_delay: DelayStats::default(),
            queue: QueueOccupancy::new(sample_interval),
            ce_marked: 0,
        }
    }
}

/// One-way delay of a packet sent at `send_time` on a route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DelaySample {
    /// When the packet entered the first link of the route.
    pub send_time: SimTime,
    /// Delivery time minus `send_time`.
    pub one_way_delay_ns: u64,
}

/// Ground truth of one `(src_ip, dst_ip)` route, updated live.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RouteStats {
    /// Source IP of the route.
    pub src: IpAddr,
    /// Destination IP of the route.
    pub dst: IpAddr,
    /// Packets injected into the route's first link.
    pub sent: Counter,
    /// Packets delivered to the destination node.
    pub delivered: Counter,
    /// One-way delay of delivered packets.
    pub one_way_delay: DelayStats,
    /// Bucket width of `series` in send time.
    pub sample_interval: SimTime,
    /// At most one sample per `sample_interval` of send time (the first
    /// delivered packet sent in that bucket), ordered by send time.
    pub series: Vec<DelaySample>,
}

impl RouteStats {
    pub(crate) fn new(src: IpAddr, dst: IpAddr, sample_interval: SimTime) -> Self {
        Self {
            src,
            dst,
            sent: Counter::default(),
            delivered: Counter::default(),
            one_way_delay: DelayStats::default(),
            sample_interval: sample_interval.max(1),
            series: Vec::new(),
        }
    }

    pub(crate) fn record_delivery(&mut self, send_time: SimTime, now: SimTime, bytes: u64) {
        let d = now.saturating_sub(send_time);
        self.delivered.add(bytes);
        self.one_way_delay.record(d);
        let bucket = send_time - send_time % self.sample_interval;
        let newer = self
            .series
            .last()
            .is_none_or(|s| s.send_time - s.send_time % self.sample_interval < bucket);
        if newer {
            self.series.push(DelaySample {
                send_time,
                one_way_delay_ns: d,
            });
            if self.series.len() > MAX_SERIES_SAMPLES {
                self.coarsen();
            }
        }
    }

    fn coarsen(&mut self) {
        self.sample_interval = self.sample_interval.saturating_mul(2);
        let iv = self.sample_interval;
        let mut last_bucket = None;
        self.series.retain(|s| {
            let b = s.send_time - s.send_time % iv;
            let keep = last_bucket != Some(b);
            last_bucket = Some(b);
            keep
        });
    }

    /// One-way delay of the latest sample sent at or before `t` (or the
    /// first sample if `t` precedes all samples); `None` without samples.
    pub fn delay_at(&self, t: SimTime) -> Option<SimTime> {
        let i = self.series.partition_point(|s| s.send_time <= t);
        let s = self.series.get(i.saturating_sub(1))?;
        Some(s.one_way_delay_ns)
    }
}

/// Compact per-link summary for reports and determinism checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LinkSummary {
    /// Link index ([`crate::LinkId::index`]).
    pub link: usize,
    /// Packets that arrived at the link.
    pub entered: Counter,
    /// Packets that left the link.
    pub delivered: Counter,
    /// Drops by cause.
    pub dropped: DropCounters,
    /// Queueing delay of delivered packets.
    pub queue_delay: DelayStats,
    /// Entry-to-exit delay of delivered packets.
    pub transit_delay: DelayStats,
    /// Time-weighted mean queue occupancy (bytes) up to the report time.
    pub mean_queue_bytes: f64,
    /// Largest queue occupancy (bytes).
    pub max_queue_bytes: u64,
    /// Packets marked CE by the link.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub ce_marked: u64,
}

/// Compact per-route summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RouteSummary {
    /// Source IP.
    pub src: IpAddr,
    /// Destination IP.
    pub dst: IpAddr,
    /// Packets injected.
    pub sent: Counter,
    /// Packets delivered.
    pub delivered: Counter,
    /// One-way delay of delivered packets.
    pub one_way_delay: DelayStats,
}

/// Snapshot of all ground truth (excluding the long time series).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct GroundTruth {
    /// Virtual time of the snapshot.
    pub now: SimTime,
    /// Events processed so far.
    pub events: u64,
    /// Per-link summaries, by link index.
    pub links: Vec<LinkSummary>,
    /// Per-route summaries, ordered by `(src, dst)`.
    pub routes: Vec<RouteSummary>,
    /// Packets dropped before entering any link ([`DropCause::NoRoute`]).
    pub unroutable: Counter,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    #[test]
    fn delay_stats() {
        let mut d = DelayStats::default();
        assert_eq!(d.mean_ns(), None);
        d.record(5);
        d.record(3);
        d.record(10);
        assert_eq!((d.min_ns, d.max_ns, d.count), (3, 10, 3));
        assert_eq!(d.mean_ns(), Some(6.0));
    }

    #[test]
    fn occupancy_mean_and_samples() {
        let mut q = QueueOccupancy::new(ms(1));
        q.update(0, 1000, 1);
        q.update(ms(1) / 2, 0, 0);
        q.update(ms(3), 2000, 1);
        // 1000 B for 0.5 ms, 2000 B for 1 ms over 4 ms.
        let mean = q.mean_bytes(ms(4));
        assert!((mean - 625.0).abs() < 1e-9, "{mean}");
        assert_eq!(q.samples.len(), 2);
        assert_eq!(q.samples[0].max_bytes, 1000);
        assert_eq!(q.samples[0].end_bytes, 0);
        assert_eq!(q.max_bytes, 2000);
    }

    #[test]
    fn occupancy_bounded() {
        let mut q = QueueOccupancy::new(1);
        for i in 0..(MAX_SERIES_SAMPLES as u64 * 3) {
            q.update(i, i % 7, 1);
        }
        assert!(q.samples.len() <= MAX_SERIES_SAMPLES);
        assert!(q.sample_interval >= 2);
        assert!(q.samples.windows(2).all(|w| w[0].time < w[1].time));
    }

    #[test]
    fn route_series_downsampled() {
        let ip: IpAddr = [10, 0, 0, 1].into();
        let mut r = RouteStats::new(ip, ip, ms(1));
        for i in 0..100u64 {
            r.record_delivery(i * ms(1) / 10, i * ms(1) / 10 + ms(5) + i, 100);
        }
        assert_eq!(r.series.len(), 10);
        assert_eq!(r.delay_at(0), Some(ms(5)));
        assert_eq!(r.delay_at(ms(1)), Some(ms(5) + 10));
        assert_eq!(r.one_way_delay.count, 100);
        for _ in 0..3 {
            r.coarsen();
        }
        assert_eq!(r.series.len(), 2);
    }

    #[test]
    fn drop_totals() {
        let mut d = DropCounters::default();
        d.record(DropCause::LinkDown, 10);
        d.record(DropCause::NoRoute, 5);
        assert_eq!(
            d.total(),
            Counter {
                packets: 2,
                bytes: 15
            }
        );
        assert_eq!(d.get(DropCause::LinkDown).bytes, 10);
    }
}
