//! The receiver's ACK decisions in one place: connection code asks an [`AckPolicy`] instead of
//! testing [`AckConfig`] switches and the report's rules itself.

use super::{ack_state_path, is_out_of_order, plan_ack, AckConfig, AckPathChoice, AckPlan};
use super::{PathAckState, ReceiveRecord};
use crate::path::PathId;
use crate::space::SpaceId;
use crate::spns_rules::SpnsRules;
use crate::time::{Duration, Timestamp};

/// A connection's ACK policy: its settings, the report's rules of its space layout, and whether
/// gaps in a space's packet numbers signal loss there (a layout property).
#[derive(Debug, Clone, Copy)]
pub(crate) struct AckPolicy<'a> {
    config: &'a AckConfig,
    rules: &'a SpnsRules,
    gaps_signal_loss: bool,
}

impl<'a> AckPolicy<'a> {
    pub(crate) fn new(config: &'a AckConfig, rules: &'a SpnsRules, gaps_signal_loss: bool) -> Self {
        Self {
            config,
            rules,
            gaps_signal_loss,
        }
    }

    /// The path whose ack-eliciting threshold and ACK timer count a packet of the
    /// application space received on `recv_path` (report §2.2); `paths` are the usable paths
    /// with their smoothed RTTs.
    pub(crate) fn counting_path(
        &self,
        recv_path: PathId,
        paths: impl IntoIterator<Item = (PathId, Duration)>,
    ) -> PathId {
        ack_state_path(self.rules, recv_path, paths)
    }

    /// Whether a received packet is out of order for the immediate-ACK rule (RFC 9000
    /// §13.2.1): below its path's largest, or leaving a gap in its space where gaps mean loss.
    pub(crate) fn is_out_of_order(&self, below_path_largest: bool, space_gap: bool) -> bool {
        is_out_of_order(
            below_path_largest,
            space_gap,
            self.gaps_signal_loss,
            self.rules,
        )
    }

    /// Count a received packet in `state` (threshold, timer, immediate ACK).
    pub(crate) fn count(
        &self,
        state: &mut PathAckState,
        now: Timestamp,
        ack_eliciting: bool,
        out_of_order: bool,
        max_ack_delay: Duration,
    ) {
        state.count(now, ack_eliciting, out_of_order, self.config, max_ack_delay);
    }

    /// The ACK frame to send for `state` from `record` (see [`plan_ack`]).
    pub(crate) fn plan(
        &self,
        record: &ReceiveRecord,
        state: &PathAckState,
        largest_override: Option<(u64, Timestamp)>,
        now: Timestamp,
    ) -> Option<AckPlan> {
        plan_ack(
            record,
            state,
            largest_override,
            now,
            self.config,
            self.rules,
        )
    }

    /// Whether an ACK of `space` sent on one path is also owed on the other paths of the
    /// space (the picoquic fix, CCR 2022; application data only).
    pub(crate) fn copies_on_other_paths(&self, space: SpaceId) -> bool {
        self.config.ack_on_all_paths && matches!(space, SpaceId::Data(_))
    }

    /// Whether ACKs go on the path with the lowest smoothed RTT (XLINK §5.3) rather than the
    /// receiving one.
    pub(crate) fn on_lowest_rtt_path(&self) -> bool {
        self.config.ack_path == AckPathChoice::LowestRtt
    }

    /// Whether ranges the peer has seen acknowledged stop being reported (RFC 9000 §13.2.4).
    pub(crate) fn prunes_acked_ranges(&self) -> bool {
        self.config.prune_acked_ranges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_count_only_where_the_layout_says_they_signal_loss() {
        let config = AckConfig::default();
        let rules = SpnsRules::report();
        let own_spaces = AckPolicy::new(&config, &rules, true);
        let shared = AckPolicy::new(&config, &rules, false);
        assert!(own_spaces.is_out_of_order(false, true));
        assert!(!shared.is_out_of_order(false, true));
        assert!(shared.is_out_of_order(true, false));
        let naive = SpnsRules::naive();
        assert!(AckPolicy::new(&config, &naive, false).is_out_of_order(false, true));
    }

    #[test]
    fn copies_and_path_choice_follow_the_settings() {
        let mut config = AckConfig::default();
        let rules = SpnsRules::report();
        let policy = AckPolicy::new(&config, &rules, true);
        assert!(!policy.copies_on_other_paths(SpaceId::Data(PathId::ZERO)));
        assert!(!policy.on_lowest_rtt_path());
        assert!(policy.prunes_acked_ranges());
        config.ack_on_all_paths = true;
        config.ack_path = AckPathChoice::LowestRtt;
        let policy = AckPolicy::new(&config, &rules, true);
        assert!(policy.copies_on_other_paths(SpaceId::Data(PathId::new(2))));
        assert!(!policy.copies_on_other_paths(SpaceId::Handshake));
        assert!(policy.on_lowest_rtt_path());
    }
}
