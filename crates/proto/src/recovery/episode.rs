//! When a congestion window reduction may be undone (RFC 9438 §4.9).
//!
//! A controller's reduction answers every packet declared lost in its recovery period (RFC
//! 9002 §7.3.2), so it was spurious only when *all* of them were later acknowledged. One late
//! acknowledgement of one phantom loss among real drops must not restore the window: the
//! sender would then ignore the real drops and keep overflowing the queue.

use std::collections::BTreeSet;

/// The packets declared lost on one path since its controller's last reduction.
#[derive(Debug, Default, Clone)]
pub(crate) struct LossEpisode {
    /// Packet numbers (of the path's space) declared lost and not acknowledged since.
    unconfirmed: BTreeSet<u64>,
    /// The controller's reduction count the episode belongs to.
    reductions: u64,
    /// Whether packets were added since the last undo (an undo happens once per episode).
    open: bool,
}

impl LossEpisode {
    /// Packets `lost` were reported to the controller in one congestion event, after which it
    /// had made `reductions` reductions in all. A new reduction starts a new episode; a loss
    /// within the same recovery period joins the current one.
    pub(crate) fn on_congestion_event(
        &mut self,
        lost: impl IntoIterator<Item = u64>,
        reductions: u64,
    ) {
        if reductions != self.reductions {
            self.unconfirmed.clear();
            self.reductions = reductions;
            self.open = true;
        }
        if self.open {
            self.unconfirmed.extend(lost);
        }
    }

    /// The controller reduced its window for ECN CE marks (RFC 9002 §7.1), reaching
    /// `reductions`: marks are never spurious, so this reduction is never undone, even if the
    /// losses of its recovery period turn out spurious.
    pub(crate) fn on_ecn_congestion(&mut self, reductions: u64) {
        if reductions != self.reductions {
            self.unconfirmed.clear();
            self.reductions = reductions;
            self.open = false;
        }
    }

    /// Packet `pn`, declared lost, was acknowledged. Returns true when that leaves no loss of
    /// the episode unconfirmed: the reduction was spurious and may be undone (once).
    pub(crate) fn on_spurious(&mut self, pn: u64) -> bool {
        if !self.open || !self.unconfirmed.remove(&pn) {
            return false;
        }
        if self.unconfirmed.is_empty() {
            self.open = false;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undo_only_when_every_loss_of_the_episode_was_spurious() {
        let mut e = LossEpisode::default();
        e.on_congestion_event([10, 11], 1);
        // Within the same recovery period (no new reduction): joins the episode.
        e.on_congestion_event([15], 1);
        assert!(!e.on_spurious(10));
        assert!(!e.on_spurious(99), "not a loss of this episode");
        assert!(!e.on_spurious(15));
        assert!(e.on_spurious(11), "all three acknowledged: spurious");
        assert!(!e.on_spurious(11), "only once");
        // A new reduction with a real drop (20 never acknowledged): no undo.
        e.on_congestion_event([20, 21], 2);
        assert!(!e.on_spurious(21));
        // Losses of an older episode do not count for the new one.
        e.on_congestion_event([30], 3);
        assert!(!e.on_spurious(20));
        assert!(e.on_spurious(30));
    }
}
