//! Path ID limits of a connection (RFC 10069 §2.1, §7.7): ours, the peer's, and whether we owe
//! the peer a MAX_PATH_ID frame.

use crate::path::PathId;

/// Both sides' highest allowed path IDs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PathIdLimits {
    /// Highest path ID we allow the peer to use (we advertised it).
    local: PathId,
    /// Highest path ID the peer allows us to use.
    remote: PathId,
    /// Our limit is still to be sent in a MAX_PATH_ID frame.
    grant_pending: bool,
}

impl PathIdLimits {
    /// Before the peer's transport parameters: it allows nothing beyond path 0.
    pub(crate) fn new(local: PathId) -> Self {
        Self {
            local,
            remote: PathId::ZERO,
            grant_pending: false,
        }
    }

    /// The highest path ID both sides allow: new paths are opened below it.
    pub(crate) fn usable(&self) -> PathId {
        self.remote.min(self.local)
    }

    /// Whether a path ID the peer used is above what we allowed (RFC 10069 §2.1).
    pub(crate) fn exceeds_local(&self, id: u64) -> bool {
        id > u64::from(self.local)
    }

    /// The peer's limit from its transport parameters.
    pub(crate) fn set_remote(&mut self, max: PathId) {
        self.remote = max;
    }

    /// A MAX_PATH_ID frame from the peer. RFC 10069 §7.7: lower values than before are ignored
    /// (reordering). Returns whether the limit rose.
    pub(crate) fn raise_remote(&mut self, max: PathId) -> bool {
        let raised = max > self.remote;
        if raised {
            self.remote = max;
        }
        raised
    }

    /// Owe the peer a MAX_PATH_ID frame (again, if the last one was lost).
    pub(crate) fn queue_grant(&mut self) {
        self.grant_pending = true;
    }

    /// Whether a MAX_PATH_ID frame is owed.
    pub(crate) fn grant_pending(&self) -> bool {
        self.grant_pending
    }

    /// The limit to send in the owed MAX_PATH_ID frame, which is then no longer owed.
    pub(crate) fn take_grant(&mut self) -> PathId {
        self.grant_pending = false;
        self.local
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_rise_only_and_the_grant_is_sent_once() {
        let mut limits = PathIdLimits::new(PathId::new(7));
        assert_eq!(limits.usable(), PathId::ZERO);
        assert!(limits.raise_remote(PathId::new(3)));
        assert!(
            !limits.raise_remote(PathId::new(2)),
            "a reordered smaller value is ignored"
        );
        assert_eq!(limits.usable(), PathId::new(3));
        assert!(limits.exceeds_local(8) && !limits.exceeds_local(7));
        limits.queue_grant();
        assert!(limits.grant_pending());
        assert_eq!(limits.take_grant(), PathId::new(7));
        assert!(!limits.grant_pending());
    }
}
