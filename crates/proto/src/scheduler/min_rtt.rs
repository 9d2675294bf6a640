//! Min-RTT: the default of MPTCP and of the seeds' multipath QUIC implementations.

use super::{lowest_rtt, Backlog, PathView, Scheduler};
use crate::path::PathId;

/// Lowest smoothed RTT among usable paths with window space, backup paths included only when
/// no available path is usable at all (RFC 10069 §3.3 recommends not using backup paths while
/// available ones work).
#[derive(Debug, Default)]
pub struct MinRtt;

impl Scheduler for MinRtt {
    fn select(&mut self, paths: &[PathView], _: &Backlog) -> Option<PathId> {
        let any_available = paths.iter().any(|p| p.usable && !p.backup);
        lowest_rtt(paths, !any_available)
    }
    fn name(&self) -> &'static str {
        "min-rtt"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::{backlog, view};

    #[test]
    fn picks_lowest_rtt_with_window() {
        let mut s = MinRtt;
        assert_eq!(
            s.select(
                &[view(0, 40, true, false), view(1, 20, true, false)],
                &backlog(0)
            ),
            Some(PathId::new(1))
        );
        assert_eq!(
            s.select(
                &[view(0, 40, true, false), view(1, 20, false, false)],
                &backlog(0)
            ),
            Some(PathId::new(0))
        );
        assert_eq!(
            s.select(
                &[view(0, 40, false, false), view(1, 20, false, false)],
                &backlog(0)
            ),
            None
        );
    }
}
