//! Round-robin over usable paths with window space.

use super::{Backlog, PathView, Scheduler};
use crate::path::PathId;

#[derive(Debug, Default)]
/// Each usable path with congestion window space in turn.
pub struct RoundRobin {
    last: Option<PathId>,
}

impl Scheduler for RoundRobin {
    fn select(&mut self, paths: &[PathView], _: &Backlog) -> Option<PathId> {
        let eligible = |p: &&PathView| p.usable && p.can_send && !p.backup;
        let next = paths
            .iter()
            .filter(eligible)
            .find(|p| self.last.is_none_or(|l| p.id > l))
            .or_else(|| paths.iter().find(eligible))
            .map(|p| p.id);
        if next.is_some() {
            self.last = next;
        }
        next
    }
    fn name(&self) -> &'static str {
        "round-robin"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::{backlog, view};

    #[test]
    fn alternates() {
        let mut s = RoundRobin::default();
        let paths = [view(0, 40, true, false), view(1, 20, true, false)];
        let picks: Vec<_> = (0..4)
            .map(|_| s.select(&paths, &backlog(0)).unwrap().as_u32())
            .collect();
        assert_eq!(picks, vec![0, 1, 0, 1]);
    }
}
