//! Acknowledgement policy (RFC 9000 §13.2; Alibaba report §2.2 and §2.4; De Coninck CCR 2022).
//!
//! Receiver state is kept per (packet number space, path): the path a packet arrived on owns the
//! ACK timer, the ack-eliciting count and the "largest received on this path" that becomes the
//! Largest Acknowledged of the ACK sent back on that path. The ranges below it come from the
//! space's [`ReceiveRecord`](crate::space::ReceiveRecord) — connection-wide in SPNS, per path in MPNS.
//! Connection code asks an [`AckPolicy`] for every decision these settings make.

mod frequency;
mod policy;
mod ranges;

use std::ops::RangeInclusive;

pub use frequency::AckFrequencyRequest;
pub(crate) use frequency::PeerAckFrequency;
pub(crate) use policy::AckPolicy;
pub(crate) use ranges::select_ranges;

use crate::space::ReceiveRecord;
use crate::spns_rules::SpnsRules;
use crate::time::{Duration, Timestamp};

/// Which ranges to keep when an ACK frame has more ranges than its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RangeOrder {
    /// RFC 9000: the ranges nearest the largest acknowledged packet.
    #[default]
    HighestFirst,
    /// The picoquic fix (CCR 2022): after the first range, the lowest ranges.
    LowestFirst,
}

/// On which path an ACK is sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AckPathChoice {
    /// The path the acknowledged packets arrived on (Alibaba report §2.2).
    #[default]
    ReceivingPath,
    /// The path with the lowest smoothed RTT (XLINK §5.3, Fig. 8).
    LowestRtt,
}

/// ACK policy settings (checked by [`crate::TransportConfig::validate`]).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct AckConfig {
    /// Ack-eliciting packets received on a path before an ACK is sent at once (RFC 9000 §13.2.2: 2).
    pub ack_eliciting_threshold: u32,
    /// Our max_ack_delay (RFC 9000 §18.2), in milliseconds.
    pub max_ack_delay_ms: u64,
    /// Our ack_delay_exponent (RFC 9000 §18.2).
    pub ack_delay_exponent: u8,
    /// Default_Limit of ranges per ACK frame (Alibaba report §2.4).
    pub default_range_limit: usize,
    /// Maximum_Limit of ranges per ACK frame: never exceeded (Alibaba report §2.4: 64).
    pub max_range_limit: usize,
    /// Send an ACK at once when a packet arrives out of order (RFC 9000 §13.2.1 SHOULD).
    pub immediate_ack_on_reorder: bool,
    /// Range selection when capped.
    pub range_order: RangeOrder,
    /// Also send the shared space's ACK on paths other than the receiving one (picoquic fix).
    pub ack_on_all_paths: bool,
    /// Stop repeating ranges the peer has seen acknowledged (RFC 9000 §13.2.4).
    pub prune_acked_ranges: bool,
    /// Path choice for ACKs.
    pub ack_path: AckPathChoice,
    /// Our min_ack_delay in microseconds (draft-ietf-quic-ack-frequency), advertised so that
    /// the peer may send ACK_FREQUENCY and IMMEDIATE_ACK; None: not advertised.
    pub min_ack_delay_us: Option<u64>,
    /// ACK_FREQUENCY to send the peer once the handshake is confirmed (if it advertised
    /// min_ack_delay); None: we leave its ACK policy alone.
    pub request_ack_frequency: Option<AckFrequencyRequest>,
}

impl Default for AckConfig {
    fn default() -> Self {
        Self {
            ack_eliciting_threshold: 2,
            max_ack_delay_ms: 25,
            ack_delay_exponent: 3,
            default_range_limit: 32,
            max_range_limit: 64,
            immediate_ack_on_reorder: true,
            range_order: RangeOrder::HighestFirst,
            ack_on_all_paths: false,
            prune_acked_ranges: true,
            ack_path: AckPathChoice::ReceivingPath,
            min_ack_delay_us: Some(1000),
            request_ack_frequency: None,
        }
    }
}

impl AckConfig {
    /// The largest ACK delay we promise the peer (`max_ack_delay_ms` as a duration, RFC 9000 §18.2).
    pub fn max_ack_delay(&self) -> Duration {
        Duration::from_millis(self.max_ack_delay_ms)
    }
}

/// Receiver-side ACK state of one (space, path).
#[derive(Debug, Default, Clone)]
pub(crate) struct PathAckState {
    /// Largest packet number received on this path in this space, and when.
    largest: Option<(u64, Timestamp)>,
    eliciting_since_ack: u32,
    /// Any packet (eliciting or not) arrived since the last ACK.
    unacked: bool,
    /// When the delayed ACK is due.
    deadline: Option<Timestamp>,
    immediate: bool,
}

impl PathAckState {
    /// RFC 9000 §13.2.1–13.2.2: record a received packet and decide when to acknowledge.
    /// `max_ack_delay` is ours; Initial and Handshake packets are acknowledged at once (pass zero).
    #[cfg(test)]
    pub(crate) fn on_packet(
        &mut self,
        pn: u64,
        now: Timestamp,
        ack_eliciting: bool,
        out_of_order: bool,
        config: &AckConfig,
        max_ack_delay: Duration,
    ) {
        self.on_arrival(pn, now);
        self.count(now, ack_eliciting, out_of_order, config, max_ack_delay);
    }

    /// A packet arrived on this path: track the path's largest received packet.
    pub(crate) fn on_arrival(&mut self, pn: u64, now: Timestamp) {
        if self.largest.is_none_or(|(l, _)| pn > l) {
            self.largest = Some((pn, now));
        }
    }

    /// Count a received packet towards the ack-eliciting threshold and the ACK timer of this
    /// state (report §2.2: the state of the path it arrived on; with
    /// [`SpnsRules::ack_on_receiving_path`] off, one state for the space).
    pub(crate) fn count(
        &mut self,
        now: Timestamp,
        ack_eliciting: bool,
        out_of_order: bool,
        config: &AckConfig,
        max_ack_delay: Duration,
    ) {
        self.unacked = true;
        if !ack_eliciting {
            return;
        }
        self.eliciting_since_ack += 1;
        if self.eliciting_since_ack >= config.ack_eliciting_threshold
            || (out_of_order && config.immediate_ack_on_reorder)
            || max_ack_delay.is_zero()
        {
            self.immediate = true;
        } else if self.deadline.is_none() {
            self.deadline = Some(now + max_ack_delay);
        }
    }

    /// Whether an ACK must be sent now.
    pub(crate) fn ack_due(&self, now: Timestamp) -> bool {
        self.immediate || self.deadline.is_some_and(|d| d <= now)
    }

    /// Whether there is anything to acknowledge (to piggyback on an outgoing packet).
    pub(crate) fn has_unacked(&self) -> bool {
        self.unacked
    }

    /// Whether an ack-eliciting packet awaits acknowledgement.
    pub(crate) fn has_unacked_eliciting(&self) -> bool {
        self.eliciting_since_ack > 0
    }

    /// The delayed-ACK timer.
    pub(crate) fn deadline(&self) -> Option<Timestamp> {
        if self.immediate {
            None
        } else {
            self.deadline
        }
    }

    /// Largest packet received on this path, with its arrival time.
    pub(crate) fn largest(&self) -> Option<(u64, Timestamp)> {
        self.largest
    }

    /// An ACK covering this path's packets was sent.
    pub(crate) fn on_ack_sent(&mut self) {
        self.eliciting_since_ack = 0;
        self.unacked = false;
        self.deadline = None;
        self.immediate = false;
    }

    /// The peer asked for an immediate ACK (IMMEDIATE_ACK, draft-ietf-quic-ack-frequency §5).
    pub(crate) fn request_immediate(&mut self) {
        if self.unacked {
            self.immediate = true;
        }
    }
}

/// Whether a received packet counts as out of order for the immediate-ACK rule (RFC 9000
/// §13.2.1): below its own path's largest packet, or leaving a gap in its space where gaps
/// mean loss (`layout_gaps_signal_loss`: one space per path). Report §2.4
/// ([`SpnsRules::ack_threshold_despite_gaps`]): gaps between the paths of a shared space do not
/// count; with the rule off they do.
pub(crate) fn is_out_of_order(
    below_path_largest: bool,
    space_gap: bool,
    layout_gaps_signal_loss: bool,
    rules: &SpnsRules,
) -> bool {
    below_path_largest
        || (space_gap && (layout_gaps_signal_loss || !rules.ack_threshold_despite_gaps))
}

/// The path whose ACK state counts a packet received on `recv_path` (report §2.2): the
/// receiving path itself, or with [`SpnsRules::ack_on_receiving_path`] off the path a
/// min-RTT scheduler would send the ACK on: the usable path with the lowest smoothed RTT
/// among `paths` (`(path, smoothed RTT)`; ties to the lowest path ID).
pub(crate) fn ack_state_path(
    rules: &SpnsRules,
    recv_path: crate::path::PathId,
    paths: impl IntoIterator<Item = (crate::path::PathId, Duration)>,
) -> crate::path::PathId {
    if rules.ack_on_receiving_path {
        return recv_path;
    }
    paths
        .into_iter()
        .min_by_key(|&(id, srtt)| (srtt, id))
        .map_or(recv_path, |(id, _)| id)
}

/// Contents of an ACK frame about to be sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AckPlan {
    pub largest: u64,
    /// Encoded ACK Delay (microseconds >> exponent).
    pub ack_delay: u64,
    /// Descending ranges; the first contains `largest`. Exactly what the frame reports, so
    /// exactly what may be pruned once it is acknowledged.
    pub ranges: Vec<RangeInclusive<u64>>,
}

/// Build the ACK for `path_state` from `record`: Largest Acknowledged is the path's largest
/// received packet and ACK Delay is measured from its arrival (Alibaba report §2.2; with
/// [`SpnsRules::ack_from_path_largest`] off, the space's largest received packet).
/// `largest_override` replaces the path's largest (ACK copies of a path that received nothing).
pub(crate) fn plan_ack(
    record: &ReceiveRecord,
    path_state: &PathAckState,
    largest_override: Option<(u64, Timestamp)>,
    now: Timestamp,
    config: &AckConfig,
    rules: &SpnsRules,
) -> Option<AckPlan> {
    let path_largest = if rules.ack_from_path_largest {
        path_state.largest
    } else {
        record.largest()
    };
    let (largest, received_at) = largest_override.or(path_largest)?;
    let ranges = select_ranges(record, largest, config, rules);
    if ranges.is_empty() {
        return None;
    }
    let delay_us = u64::try_from((now - received_at).as_micros()).unwrap_or(u64::MAX);
    let largest = *ranges[0].end();
    Some(AckPlan {
        largest,
        ack_delay: delay_us >> config.ack_delay_exponent,
        ranges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Alibaba report Figures 1–2, through the per-path receiver state: packets {1,2,6,7,11,12}
    /// travel on path 0 and {0,3,4,5,8,9,10,13,14,15} on path 1, all in one space.
    #[test]
    fn acks_start_from_the_receiving_paths_largest() {
        let config = AckConfig::default();
        let mut record = ReceiveRecord::default();
        let mut paths = [PathAckState::default(), PathAckState::default()];
        let t = |ms: u64| Timestamp::from_nanos(ms * 1_000_000);
        let arrivals: [(u64, usize); 11] = [
            (0, 1),
            (3, 1),
            (1, 0),
            (4, 1),
            (2, 0),
            (5, 1),
            (8, 1),
            (6, 0),
            (9, 1),
            (10, 1),
            (7, 0),
        ];
        for (i, &(pn, path)) in arrivals.iter().enumerate() {
            let ooo = record.on_received(pn, t(i as u64));
            paths[path].on_packet(pn, t(i as u64), true, ooo, &config, config.max_ack_delay());
        }
        // #7 just arrived on path 0: ACK on path 0 = single range 7-0, delay from #7's arrival.
        let plan = plan_ack(
            &record,
            &paths[0],
            None,
            t(12),
            &config,
            &SpnsRules::report(),
        )
        .unwrap();
        assert_eq!(plan.largest, 7);
        assert_eq!(plan.ranges, vec![0..=7]);
        assert_eq!(plan.ack_delay, 2_000 >> 3);
        // #13 arrives on path 1 while 11 and 12 are still in flight on path 0.
        let ooo = record.on_received(13, t(13));
        paths[1].on_packet(13, t(13), true, ooo, &config, config.max_ack_delay());
        assert!(paths[1].ack_due(t(13)), "a gap triggers an immediate ACK");
        let plan = plan_ack(
            &record,
            &paths[1],
            None,
            t(13),
            &config,
            &SpnsRules::report(),
        )
        .unwrap();
        assert_eq!(plan.largest, 13);
        assert_eq!(plan.ranges, vec![13..=13, 0..=10]);
    }

    /// Report §2.2 as a switch: path 0's ACK starts at path 0's largest packet (7), or with
    /// the rule off at the space's largest (10, a path-1 packet), with that packet's delay.
    #[test]
    fn ack_from_path_largest_switch() {
        let config = AckConfig::default();
        let t = |ms: u64| Timestamp::from_nanos(ms * 1_000_000);
        let mut record = ReceiveRecord::default();
        let mut path0 = PathAckState::default();
        for (pn, at, on_path0) in [(6, 1, true), (7, 2, true), (9, 3, false), (10, 4, false)] {
            let ooo = record.on_received(pn, t(at));
            if on_path0 {
                path0.on_packet(pn, t(at), true, ooo, &config, config.max_ack_delay());
            }
        }
        let report = plan_ack(&record, &path0, None, t(6), &config, &SpnsRules::report());
        let report = report.unwrap();
        assert_eq!((report.largest, report.ranges.clone()), (7, vec![6..=7]));
        assert_eq!(report.ack_delay, 4_000 >> 3);
        let naive = plan_ack(&record, &path0, None, t(6), &config, &SpnsRules::naive());
        let naive = naive.unwrap();
        assert_eq!((naive.largest, naive.ranges), (10, vec![9..=10, 6..=7]));
        assert_eq!(naive.ack_delay, 2_000 >> 3);
    }

    /// Report §2.2 and §2.4 receiver rules as switches.
    #[test]
    fn receiver_rules_choose_the_ack_path_and_what_is_out_of_order() {
        let report = SpnsRules::report();
        let naive = SpnsRules::naive();
        let ms = Duration::from_millis;
        let p = crate::path::PathId::new;
        let paths = [(p(0), ms(80)), (p(1), ms(20)), (p(2), ms(20))];
        assert_eq!(
            ack_state_path(&report, p(0), paths),
            p(0),
            "the receiving path"
        );
        assert_eq!(
            ack_state_path(&naive, p(0), paths),
            p(1),
            "the lowest RTT, lowest ID"
        );
        assert_eq!(ack_state_path(&naive, p(2), []), p(2));
        // SPNS (gaps do not signal loss): a gap between paths is not reordering...
        assert!(!is_out_of_order(false, true, false, &report));
        // ... unless the rule is off; reordering on the path itself always is.
        assert!(is_out_of_order(false, true, false, &naive));
        assert!(is_out_of_order(true, false, false, &report));
        // One space per path (MPNS): a gap is a loss either way.
        assert!(is_out_of_order(false, true, true, &report));
    }

    #[test]
    fn delayed_ack_after_one_eliciting_packet() {
        let config = AckConfig::default();
        let mut state = PathAckState::default();
        state.on_packet(
            0,
            Timestamp::ZERO,
            true,
            false,
            &config,
            config.max_ack_delay(),
        );
        assert!(!state.ack_due(Timestamp::ZERO));
        assert_eq!(
            state.deadline(),
            Some(Timestamp::ZERO + config.max_ack_delay())
        );
        state.on_packet(
            1,
            Timestamp::ZERO,
            true,
            false,
            &config,
            config.max_ack_delay(),
        );
        assert!(
            state.ack_due(Timestamp::ZERO),
            "second eliciting packet: threshold 2 reached"
        );
        state.on_ack_sent();
        assert!(!state.has_unacked());
    }
}
