//! Backup-aware: available paths by min-RTT; backup paths only when no available path is
//! usable (failed, abandoned or unvalidated), even if the available ones are merely
//! window-limited.

use super::{lowest_rtt, Backlog, PathView, Scheduler};
use crate::path::PathId;

#[derive(Debug, Default)]
/// Min-RTT over the available paths; backup paths only when no available path works (RFC 10069 §3.3).
pub struct BackupAware;

impl Scheduler for BackupAware {
    fn select(&mut self, paths: &[PathView], _: &Backlog) -> Option<PathId> {
        if paths.iter().any(|p| p.usable && !p.backup) {
            lowest_rtt(paths, false)
        } else {
            lowest_rtt(paths, true)
        }
    }
    fn name(&self) -> &'static str {
        "backup-aware"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::{backlog, view};

    #[test]
    fn backup_only_when_nothing_else_works() {
        let mut s = BackupAware;
        // Available path is full: wait for it rather than use the backup.
        assert_eq!(
            s.select(
                &[view(0, 40, false, false), view(1, 10, true, true)],
                &backlog(0)
            ),
            None
        );
        let mut failed = view(0, 40, true, false);
        failed.usable = false;
        assert_eq!(
            s.select(&[failed, view(1, 10, true, true)], &backlog(0)),
            Some(PathId::new(1))
        );
    }
}
