//! Path ID limits of a connection (RFC 10069 §2.1, §7.7): ours, the peer's, and whether we owe
//! the peer a MAX_PATH_ID frame.

use mpquic_wire::range_set::RangeSet;

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
    /// Closed path IDs, as ranges. Each close raises `local` by one, so at most the initial
    /// limit plus one IDs up to `local` are not closed, and the ranges stay as few however many
    /// paths came and went, even while path 0 or another early path stays open (paths need not
    /// close in order).
    closed: RangeSet,
}

impl PathIdLimits {
    /// Before the peer's transport parameters: it allows nothing beyond path 0.
    pub(crate) fn new(local: PathId) -> Self {
        Self {
            local,
            remote: PathId::ZERO,
            grant_pending: false,
            closed: RangeSet::new(),
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
        if !self.closed.insert_one(u64::from(id.as_u32())) {
            return false;
        }
        self.replace_closed()
    }

    /// Whether path ID `id` was closed for good ([`Self::close`]).
    pub(crate) fn is_closed(&self, id: PathId) -> bool {
        self.closed.contains(u64::from(id.as_u32()))
    }

    /// The path IDs above 0 up to [`Self::usable`] that are not closed: those that may still be
    /// in use or opened. The closed ranges are skipped, so a connection whose paths came and
    /// went many times does not walk its whole history on each scan.
    pub(crate) fn open_ids(&self) -> impl Iterator<Item = PathId> + '_ {
        let end = u64::from(self.usable().as_u32()) + 1;
        let mut from = 1;
        // The gaps between closed ranges, then what follows the last one.
        let closed = self.closed.iter().map(|r| (r.start, r.end));
        closed
            .chain(std::iter::once((end, end)))
            .flat_map(move |(start, resume)| {
                let gap = from..start.min(end).max(from);
                from = from.max(resume);
                gap
            })
            .map(|id| PathId::new(id as u32))
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
        assert_eq!(limits.closed.len(), 1, "compacted into one range");
        let open: Vec<PathId> = limits.open_ids().collect();
        assert_eq!(
            open,
            [3, 4, 5].map(PathId::new),
            "each close allowed one more"
        );
        let mut top = PathIdLimits::new(PathId::new(u32::MAX));
        assert!(!top.close(PathId::new(3)), "no path ID above 2^32-1");
        assert!(!top.grant_pending());
        assert!(top.is_closed(PathId::new(3)));
    }

    /// Class 5 of tests/hostile_peer.rs: a peer that keeps path 0 (or any early path) open and
    /// opens and closes paths in a loop. The closed IDs stay a few ranges and scans skip them.
    #[test]
    fn closed_path_ids_stay_a_few_ranges_while_path_zero_is_open() {
        let mut limits = PathIdLimits::new(PathId::new(4));
        limits.set_remote(PathId::new(u32::MAX));
        // Paths 0 and 2 stay open; every other ID is opened and closed in turn.
        for id in (1..10_000).filter(|&id| id != 2) {
            assert!(limits.close(PathId::new(id)));
        }
        assert!(limits.closed.len() <= 3, "{} ranges", limits.closed.len());
        let open: Vec<PathId> = limits.open_ids().collect();
        assert_eq!(open.len(), 4, "{open:?}");
        assert_eq!(open[0], PathId::new(2));
        assert!(!limits.is_closed(PathId::ZERO) && limits.is_closed(PathId::new(9_999)));
    }
}
