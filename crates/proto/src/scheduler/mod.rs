//! The scheduler seam: which path carries the next packet of new data (CoNEXT 2017 §4.2 "packet
//! scheduling"; RFC 10069 leaves it to implementations, §1). Retransmitted frames go through the
//! same choice, so they may move to any path.

mod backup;
mod min_rtt;
mod redundant;
mod round_robin;

pub use backup::BackupAware;
pub use min_rtt::MinRtt;
pub use redundant::Redundant;
pub use round_robin::RoundRobin;

use crate::path::PathId;
use crate::time::Duration;

/// What a scheduler may know about one path.
#[derive(Debug, Clone, Copy)]
pub struct PathView {
    pub id: PathId,
    pub srtt: Duration,
    /// Whether an RTT sample exists (otherwise `srtt` is the initial guess).
    pub rtt_known: bool,
    pub cwnd: u64,
    pub bytes_in_flight: u64,
    /// The congestion window (and pacing) admit one more full-sized packet now.
    pub can_send: bool,
    /// The peer or we marked the path as backup (RFC 10069 §3.3).
    pub backup: bool,
    /// Validated and not failed or abandoned: eligible for data.
    pub usable: bool,
}

/// Chooses the path of the next data packet.
pub trait Scheduler: std::fmt::Debug + Send {
    /// Pick a path among `paths` for new data, or None if no path may send now.
    fn select(&mut self, paths: &[PathView]) -> Option<PathId>;
    /// Whether each data packet should also be duplicated on every other usable path.
    fn duplicates(&self) -> bool {
        false
    }
    fn name(&self) -> &'static str;
}

/// Available schedulers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SchedulerKind {
    /// Lowest smoothed RTT among paths with congestion window space (default).
    #[default]
    MinRtt,
    RoundRobin,
    /// Every packet on every path.
    Redundant,
    /// Min-RTT over available paths; backup paths only when no available path works.
    BackupAware,
}

impl SchedulerKind {
    pub fn build(self) -> Box<dyn Scheduler> {
        match self {
            SchedulerKind::MinRtt => Box::new(MinRtt),
            SchedulerKind::RoundRobin => Box::new(RoundRobin::default()),
            SchedulerKind::Redundant => Box::new(Redundant),
            SchedulerKind::BackupAware => Box::new(BackupAware),
        }
    }
}

impl std::str::FromStr for SchedulerKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.to_ascii_lowercase().replace('_', "-").as_str() {
            "min-rtt" | "minrtt" => Ok(Self::MinRtt),
            "round-robin" | "rr" => Ok(Self::RoundRobin),
            "redundant" => Ok(Self::Redundant),
            "backup-aware" | "backup" => Ok(Self::BackupAware),
            _ => Err(format!("unknown scheduler '{s}' (expected min-rtt, round-robin, redundant or backup-aware)")),
        }
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
pub(crate) fn view(id: PathId, srtt_ms: u64, can_send: bool, backup: bool) -> PathView {
    PathView {
        id,
        srtt: Duration::from_millis(srtt_ms),
        rtt_known: true,
        cwnd: 12_000,
        bytes_in_flight: 0,
        can_send,
        backup,
        usable: true,
    }
}
