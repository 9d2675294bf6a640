//! The scheduler seam: which path carries the next packet of new data (CoNEXT 2017 §4.2 "packet
//! scheduling"; RFC 10069 leaves it to implementations, §1). Retransmitted frames go through the
//! same choice, so they may move to any path.
//!
//! Schedulers are made by a [`SchedulerFactory`]; the built-in ones are registered by name in
//! [`registry`]; [`SchedulerKind`] names them in configuration files.

mod backup;
mod blest;
mod ecf;
mod min_rtt;
mod redundant;
pub mod registry;
mod round_robin;

pub use backup::BackupAware;
pub use blest::Blest;
pub use ecf::Ecf;
pub use min_rtt::MinRtt;
pub use redundant::Redundant;
pub use registry::SchedulerFactory;
pub use round_robin::RoundRobin;

use crate::path::PathId;
use crate::time::{Duration, Timestamp};

/// What a scheduler may know about one path.
#[derive(Debug, Clone, Copy)]
pub struct PathView {
    /// The path ID.
    pub id: PathId,
    /// Smoothed RTT (RFC 9002 §5.3).
    pub srtt: Duration,
    /// RTT variation (RFC 9002 §5.3 `rttvar`); ECF's σ.
    pub rttvar: Duration,
    /// Whether an RTT sample exists (otherwise `srtt` is the initial guess).
    pub rtt_known: bool,
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Bytes sent and neither acknowledged nor declared lost.
    pub bytes_in_flight: u64,
    /// The controller's pacing rate in bytes per second.
    pub pacing_rate: u64,
    /// Bytes per second the path delivers: its latest delivery-rate sample (DRE) while fresh,
    /// else cwnd per srtt (`Path::delivery_rate_estimate`).
    pub delivery_rate: u64,
    /// The congestion window (and pacing) admit one more full-sized packet now.
    pub can_send: bool,
    /// The path's datagram size in bytes (its own path MTU, RFC 9000 §14.3).
    pub mtu: u64,
    /// The peer or we marked the path as backup (RFC 10069 §3.3).
    pub backup: bool,
    /// Validated and not failed or abandoned: eligible for data.
    pub usable: bool,
}

/// What is left to send on the connection when a path is chosen; built with the path views,
/// the same way for SPNS and MPNS.
#[derive(Debug, Clone, Copy)]
pub struct Backlog {
    /// When the choice is made.
    pub now: Timestamp,
    /// Stream bytes written by the application and never sent (the send buffer backlog, ECF's
    /// `k` in bytes). Lost data waiting for retransmission is not counted.
    pub bytes: u64,
    /// Bytes the peer's flow control still admits beyond what was sent: the smaller of the
    /// connection credit (RFC 9000 §4.1 MAX_DATA) and the credit of the streams with pending
    /// data. BLEST's receive window.
    pub send_window: u64,
    /// Maximum datagram size: converts bytes into the papers' packets (segments).
    pub mtu: u64,
}

/// Chooses the path of the next data packet.
pub trait Scheduler: std::fmt::Debug + Send {
    /// Pick a path among `paths` for new data, or None if no path may send now (or, for ECF and
    /// BLEST, if waiting for a faster path is better).
    fn select(&mut self, paths: &[PathView], backlog: &Backlog) -> Option<PathId>;
    /// Whether each data packet should also be duplicated on every other usable path.
    fn duplicates(&self) -> bool {
        false
    }
    /// The scheduler's registered name.
    fn name(&self) -> &'static str;
}

/// The built-in schedulers by name, for configuration files and the command line; each names
/// a factory of [`registry::BUILTIN`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    /// Lowest smoothed RTT among paths with congestion window space.
    MinRtt,
    /// Each usable path with window space in turn.
    RoundRobin,
    /// Every packet on every path.
    Redundant,
    /// Min-RTT over available paths; backup paths only when no available path works.
    BackupAware,
    /// Earliest Completion First (Lim et al., CoNEXT 2017): min-RTT, but a slower path is
    /// skipped when the data left completes sooner by waiting for the fastest one. The default
    /// since issue 15 (measurements in docs/MULTIPATH.md, "Scheduler").
    #[default]
    Ecf,
    /// Blocking estimation (Ferlin et al., IFIP Networking 2016): min-RTT, but a slower path is
    /// skipped when its packets would make the fast path block on the peer's flow control.
    Blest,
}

impl SchedulerKind {
    /// Every kind with its registered name.
    pub const ALL: &'static [(&'static str, SchedulerKind)] = &[
        ("min-rtt", SchedulerKind::MinRtt),
        ("round-robin", SchedulerKind::RoundRobin),
        ("redundant", SchedulerKind::Redundant),
        ("backup-aware", SchedulerKind::BackupAware),
        ("ecf", SchedulerKind::Ecf),
        ("blest", SchedulerKind::Blest),
    ];

    /// The scheduler's registered name.
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, k)| *k == self)
            .map_or("", |(name, _)| name)
    }

    /// The registered factory of this scheduler.
    pub fn factory(self) -> std::sync::Arc<dyn SchedulerFactory> {
        registry::lookup(self.name()).expect("every SchedulerKind is registered")
    }

    /// A fresh scheduler of this kind.
    pub fn build(self) -> Box<dyn Scheduler> {
        self.factory().build()
    }
}

impl std::str::FromStr for SchedulerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let lower = s.to_ascii_lowercase().replace('_', "-");
        // Short spellings the command line has always accepted.
        let name = match lower.as_str() {
            "minrtt" => "min-rtt",
            "rr" => "round-robin",
            "backup" => "backup-aware",
            other => other,
        };
        Self::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, k)| *k)
            .ok_or_else(|| {
                let names: Vec<_> = Self::ALL.iter().map(|(n, _)| *n).collect();
                format!(
                    "unknown scheduler '{s}' (expected one of: {})",
                    names.join(", ")
                )
            })
    }
}

/// The usable path with the lowest smoothed RTT that can send now; paths without an RTT sample
/// count as slowest so a new path is probed only when others are full (CoNEXT 2017 slides:
/// lowest RTT first, duplicate on unknown paths is left to the redundant scheduler).
pub(crate) fn lowest_rtt(paths: &[PathView], include_backup: bool) -> Option<PathId> {
    paths
        .iter()
        .filter(|p| p.usable && p.can_send && (include_backup || !p.backup))
        .min_by_key(|p| (!p.rtt_known, p.srtt, p.id))
        .map(|p| p.id)
}

#[cfg(test)]
pub(crate) fn view(id: u32, srtt_ms: u64, can_send: bool, backup: bool) -> PathView {
    PathView {
        id: PathId::new(id),
        srtt: Duration::from_millis(srtt_ms),
        rttvar: Duration::ZERO,
        rtt_known: true,
        cwnd: 12_000,
        bytes_in_flight: 0,
        pacing_rate: 0,
        delivery_rate: 0,
        can_send,
        mtu: 1_000,
        backup,
        usable: true,
    }
}

/// The two-path state of the ECF and BLEST papers: a fast path (10 ms, 10 packets of 1,000
/// bytes of window, all in flight) and a slow one (`slow_ms`, 10 packets, room).
#[cfg(test)]
pub(crate) fn fast_full_and_slow(slow_ms: u64) -> [PathView; 2] {
    let mut fast = view(0, 10, false, false);
    fast.cwnd = 10_000;
    fast.bytes_in_flight = 10_000;
    let mut slow = view(1, slow_ms, true, false);
    slow.cwnd = 10_000;
    [fast, slow]
}

/// A backlog of `bytes` with an unlimited flow-control window and 1,000-byte packets.
#[cfg(test)]
pub(crate) fn backlog(bytes: u64) -> Backlog {
    Backlog {
        now: Timestamp::default(),
        bytes,
        send_window: u64::MAX,
        mtu: 1_000,
    }
}

/// The first step of ECF and BLEST: min-RTT's choice, unless the fastest path is blocked (no
/// window room or paced) and a slower path could send, in which case the two paths are returned
/// for the scheduler's own rule. Eligibility (backup paths) is the same as min-RTT's, so both
/// behave like min-RTT whenever the fastest path can send.
///
/// A path without an RTT sample gets no stream data while a path with one is usable: its
/// initial RTT (RFC 9002 §6.2.2, 333 ms unless configured) says nothing about it, and data
/// sent on a path slower than that guess strands the stream's tail and the peer's flow-control
/// window behind it (issue 15). Its first sample comes from the ACK of its PATH_CHALLENGE
/// (RFC 9000 §8.2), so it waits about one of its own RTTs. With no such path usable it is
/// min-RTT's choice as before (a handover onto a fresh path).
pub(crate) enum FastOrSlow<'a> {
    /// Send on this path (or nowhere), as min-RTT would.
    Decided(Option<PathId>),
    /// `fast` (lowest smoothed RTT) is blocked; `slow` is the fastest path that can send now.
    Blocked {
        fast: &'a PathView,
        slow: &'a PathView,
    },
}

pub(crate) fn fast_or_slow(paths: &[PathView]) -> FastOrSlow<'_> {
    let any_available = paths.iter().any(|p| p.usable && !p.backup);
    let pick = lowest_rtt(paths, !any_available);
    let fastest = paths
        .iter()
        .filter(|p| p.usable && p.rtt_known && (!any_available || !p.backup))
        .min_by_key(|p| (p.srtt, p.id));
    let slow = pick.and_then(|id| paths.iter().find(|p| p.id == id));
    match (fastest, slow) {
        (Some(_), Some(slow)) if !slow.rtt_known => FastOrSlow::Decided(None),
        (Some(fast), Some(slow)) if fast.id != slow.id => FastOrSlow::Blocked { fast, slow },
        _ => FastOrSlow::Decided(pick),
    }
}

/// When a packet sent on `path` now is acknowledged: one smoothed RTT, or the time the bytes in
/// flight ahead of it (and the packet) need to drain at the path's delivery rate, if longer.
/// The smoothed RTT lags a queue that is building (RFC 9002 §5.3 weighs each sample 1/8, and a
/// slow path gives few samples), as when Cubic's slow start overfills a slow path's buffer;
/// the bytes in flight do not lag.
pub(crate) fn time_to_ack(path: &PathView, mtu: u64) -> Duration {
    if path.delivery_rate == 0 {
        return path.srtt;
    }
    let ns =
        u128::from(path.bytes_in_flight + mtu) * 1_000_000_000 / u128::from(path.delivery_rate);
    path.srtt
        .max(Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX)))
}

/// `bytes` in whole packets of `mtu` bytes, rounded up.
pub(crate) fn packets(bytes: u64, mtu: u64) -> u64 {
    bytes.div_ceil(mtu.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ecf_and_blest_are_selectable_by_name() {
        assert_eq!("ecf".parse::<SchedulerKind>(), Ok(SchedulerKind::Ecf));
        assert_eq!("BLEST".parse::<SchedulerKind>(), Ok(SchedulerKind::Blest));
        assert!("ecf2".parse::<SchedulerKind>().is_err());
        assert_eq!(SchedulerKind::Ecf.build().name(), "ecf");
        assert_eq!(SchedulerKind::Blest.build().name(), "blest");
    }
}
