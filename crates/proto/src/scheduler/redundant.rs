//! Redundant: each data packet is sent on the min-RTT path and duplicated on every other
//! usable path (useful for latency-critical, low-volume traffic).

use super::{lowest_rtt, Backlog, PathView, Scheduler};
use crate::path::PathId;

#[derive(Debug, Default)]
/// Every packet on every usable path.
pub struct Redundant;

impl Scheduler for Redundant {
    fn select(&mut self, paths: &[PathView], _: &Backlog) -> Option<PathId> {
        lowest_rtt(paths, true)
    }
    fn duplicates(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "redundant"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::{backlog, view};

    /// CoNEXT 2017 slides (seed 004): duplicate on the other paths, the original on the lowest
    /// RTT. A backup path counts like any other (every copy helps).
    #[test]
    fn original_on_the_lowest_rtt_and_duplicated() {
        let mut s = Redundant;
        assert!(s.duplicates());
        let paths = [view(0, 40, true, false), view(1, 20, true, true)];
        assert_eq!(s.select(&paths, &backlog(1_000)), Some(PathId::new(1)));
        let blocked = [view(0, 40, true, false), view(1, 20, false, true)];
        assert_eq!(s.select(&blocked, &backlog(1_000)), Some(PathId::new(0)));
    }
}
