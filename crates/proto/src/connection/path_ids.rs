//! Path ID limits of a connection (RFC 10069 §2.1, §7.7): ours, the peer's, and whether we owe
//! the peer a MAX_PATH_ID frame.

use std::collections::BTreeSet;

use crate::path::PathId;

/// Both sides' highest allowed path IDs, and the path IDs closed for good.
#[derive(Debug, Clone)]
pub(crate) struct PathIdLimits {
    /// Highest path ID we allow the peer to use (we advertised it).
    local: PathId,
    /// Highest path ID the peer allows us to use.
    remote: PathId,
    /// Our limit is still to be sent in a MAX_PATH_ID frame.
    grant_pending: bool,
    /// Every path ID below this one is closed.
    closed_below: u32,
    /// Closed path IDs above `closed_below` (paths need not close in order).
    closed_above: BTreeSet<u32>,
}

impl PathIdLimits {
    /// Before the peer's transport parameters: it allows nothing beyond path 0.
    pub(crate) fn new(local: PathId) -> Self {
        Self {
            local,
            remote: PathId::ZERO,
            grant_pending: false,
            closed_below: 0,
            closed_above: BTreeSet::new(),
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

    /// Path `id` was closed for good. RFC 10069 §2.1: a path ID is used for one path only, so
    /// it is never used again: no connection IDs are issued for it, no path is opened with it.
    /// Allow the peer one path ID more instead, so that as many stay open to it as we first
    /// allowed (§5.1: an endpoint that cannot open a path for want of unused path IDs gets a
    /// MAX_PATH_ID frame), and owe it the new limit. Returns whether the limit rose (not past
    /// 2^32-1).
    pub(crate) fn close(&mut self, id: PathId) -> bool {
        if self.is_closed(id) {
            return false;
        }
        self.closed_above.insert(id.as_u32());
        while self.closed_above.remove(&self.closed_below) {
            self.closed_below += 1;
        }
        self.replace_closed()
    }

    /// Whether path ID `id` was closed for good ([`Self::close`]).
    pub(crate) fn is_closed(&self, id: PathId) -> bool {
        id.as_u32() < self.closed_below || self.closed_above.contains(&id.as_u32())
    }

    /// The path IDs above 0 that may still be in use or opened, from the first not closed up
    /// to [`Self::usable`] (closed ones above the first are in it: check [`Self::is_closed`]).
    /// Scans start there, so a connection whose paths came and went many times does not walk
    /// its whole history on each.
    pub(crate) fn open_range(&self) -> std::ops::RangeInclusive<u32> {
        self.closed_below.max(1)..=self.usable().as_u32()
    }

    fn replace_closed(&mut self) -> bool {
        let Some(next) = self.local.as_u32().checked_add(1) else {
            return false;
        };
        self.local = PathId::new(next);
        self.grant_pending = true;
        true
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

    #[test]
    fn a_closed_path_id_is_never_used_again_and_is_replaced_by_the_next_one() {
        let mut limits = PathIdLimits::new(PathId::new(2));
        limits.set_remote(PathId::new(5));
        assert_eq!(limits.usable(), PathId::new(2));
        assert!(limits.close(PathId::new(2)));
        assert!(!limits.close(PathId::new(2)), "closed once");
        assert!(limits.grant_pending());
        assert_eq!(limits.usable(), PathId::new(3));
        assert_eq!(limits.take_grant(), PathId::new(3));
        assert!(limits.close(PathId::new(1)));
        assert!(limits.close(PathId::ZERO));
        let closed: Vec<u32> = (0..5)
            .filter(|&i| limits.is_closed(PathId::new(i)))
            .collect();
        assert_eq!(closed, [0, 1, 2]);
        assert!(
            limits.closed_above.is_empty(),
            "compacted into closed_below"
        );
        assert_eq!(limits.open_range(), 3..=5, "each close allowed one more");
        let mut top = PathIdLimits::new(PathId::new(u32::MAX));
        assert!(!top.close(PathId::new(3)), "no path ID above 2^32-1");
        assert!(!top.grant_pending());
        assert!(top.is_closed(PathId::new(3)));
    }
}
