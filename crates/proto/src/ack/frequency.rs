//! ACK_FREQUENCY and IMMEDIATE_ACK (draft-ietf-quic-ack-frequency, "ack-frequency" below): what
//! the peer asked of our acknowledgements, and what we may ask of the peer's.
//!
//! We advertise `min_ack_delay` (§"Negotiating Extension Use") so that peers may send the frames;
//! until one arrives our ACK behaviour is RFC 9000 §13.2's. A request applies to every path and
//! packet number space (one ACK policy for the connection, in SPNS as in MPNS).

use serde::{Deserialize, Serialize};

use super::AckConfig;
use crate::space::ReceiveRecord;
use crate::time::Duration;

/// ack-frequency §"ACK_FREQUENCY Frame": Requested Max Ack Delay must be below 2^14 ms
/// (RFC 9000 §18.2's bound on max_ack_delay), in microseconds.
const MAX_REQUESTED_DELAY_US: u64 = (1 << 14) * 1000;

/// What our endpoint asks the peer for in one ACK_FREQUENCY frame, sent once the handshake is
/// confirmed if the peer advertised `min_ack_delay`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AckFrequencyRequest {
    /// Ack-eliciting packets the peer may receive without acknowledging (RFC 9000's default
    /// behaviour is 1: an ACK for every second packet).
    pub ack_eliciting_threshold: u64,
    /// The max_ack_delay the peer should use, in microseconds (raised to the peer's
    /// min_ack_delay if below it).
    pub max_ack_delay_us: u64,
    /// Reordering before the peer acknowledges at once (0: never; 1: RFC 9000's default).
    pub reordering_threshold: u64,
}

impl AckFrequencyRequest {
    /// The request as sent to a peer whose min_ack_delay is `peer_min_us`: the delay is never
    /// below it (ack-frequency §"ACK_FREQUENCY Frame": a smaller value is a PROTOCOL_VIOLATION)
    /// nor at 2^14 ms or above.
    pub fn for_peer(&self, peer_min_us: u64) -> AckFrequencyRequest {
        AckFrequencyRequest {
            max_ack_delay_us: self
                .max_ack_delay_us
                .max(peer_min_us)
                .min(MAX_REQUESTED_DELAY_US - 1),
            ..*self
        }
    }
}

/// The peer's latest ACK_FREQUENCY request, if any.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PeerAckFrequency {
    /// Largest sequence number processed (ack-frequency: older frames are ignored).
    sequence: Option<u64>,
    /// The request in force.
    request: Option<AckFrequencyRequest>,
}

impl PeerAckFrequency {
    /// Process an ACK_FREQUENCY frame; `our_min_us` is the min_ack_delay we advertised.
    /// Err: the PROTOCOL_VIOLATION reason (ack-frequency §"ACK_FREQUENCY Frame").
    pub(crate) fn on_frame(
        &mut self,
        sequence: u64,
        request: AckFrequencyRequest,
        our_min_us: u64,
    ) -> Result<(), &'static str> {
        if request.max_ack_delay_us >= MAX_REQUESTED_DELAY_US {
            return Err("Requested Max Ack Delay of 2^14 ms or more");
        }
        if request.max_ack_delay_us < our_min_us {
            return Err("Requested Max Ack Delay below our min_ack_delay");
        }
        // "MUST ignore ... unless the Sequence Number ... is greater than the largest processed".
        if self.sequence.is_some_and(|s| sequence <= s) {
            return Ok(());
        }
        self.sequence = Some(sequence);
        self.request = Some(request);
        Ok(())
    }

    /// The request in force, if the peer sent one.
    #[cfg(test)]
    pub(crate) fn request(&self) -> Option<AckFrequencyRequest> {
        self.request
    }

    /// Our ACK settings under the peer's request: an ACK once more than the requested number
    /// of ack-eliciting packets arrived (our threshold counts packets up to and including the
    /// one that triggers the ACK), and no immediate ACK on reordering when it asked for none.
    pub(crate) fn apply(&self, ours: &AckConfig) -> AckConfig {
        let Some(r) = self.request else {
            return ours.clone();
        };
        let threshold = r.ack_eliciting_threshold.saturating_add(1);
        AckConfig {
            ack_eliciting_threshold: u32::try_from(threshold).unwrap_or(u32::MAX),
            immediate_ack_on_reorder: ours.immediate_ack_on_reorder && r.reordering_threshold > 0,
            ..ours.clone()
        }
    }

    /// Our max_ack_delay: the requested one once a request arrived (ack-frequency: "SHOULD
    /// update its max_ack_delay"), ours otherwise.
    pub(crate) fn max_ack_delay(&self, ours: Duration) -> Duration {
        self.request
            .map_or(ours, |r| Duration::from_micros(r.max_ack_delay_us))
    }

    /// Whether an out-of-order packet `pn` calls for an immediate ACK under the peer's
    /// Reordering Threshold (ack-frequency §"Response to Out-of-Order Packets"): always with
    /// no request or a threshold of 1 (RFC 9000 §13.2.1), never with 0, and with a larger
    /// threshold only outside the peer's reordering window.
    pub(crate) fn reordering_calls_for_ack(&self, record: &ReceiveRecord, pn: u64) -> bool {
        let threshold = self.request.map_or(1, |r| r.reordering_threshold);
        match threshold {
            0 => false,
            1 => true,
            t => outside_reordering_window(record, pn, t),
        }
    }
}

/// ack-frequency §"Response to Out-of-Order Packets", threshold `t` > 1: the packet is at or
/// below Largest Acked − t (the sender may already have declared it lost), or the smallest
/// Unreported Missing packet is at least `t` below Largest Unacked (the sender can now declare
/// it lost).
fn outside_reordering_window(record: &ReceiveRecord, pn: u64, t: u64) -> bool {
    let Some((largest_unacked, _)) = record.largest() else {
        return false;
    };
    let largest_acked = record.largest_reported();
    if largest_acked.is_some_and(|acked| pn.saturating_add(t) <= acked) {
        return true;
    }
    // Largest Reported Missing = Largest Acked − t; unreported missing packets lie above it.
    let floor = largest_acked.map_or(0, |acked| acked.saturating_sub(t).saturating_add(1));
    record
        .first_missing_from(floor, largest_unacked)
        .is_some_and(|missing| largest_unacked - missing >= t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::Timestamp;

    fn request(threshold: u64, delay_us: u64, reordering: u64) -> AckFrequencyRequest {
        AckFrequencyRequest {
            ack_eliciting_threshold: threshold,
            max_ack_delay_us: delay_us,
            reordering_threshold: reordering,
        }
    }

    #[test]
    fn invalid_delays_are_protocol_violations_and_old_frames_are_ignored() {
        let mut f = PeerAckFrequency::default();
        assert!(f.on_frame(0, request(9, 500, 1), 1000).is_err());
        assert!(f.on_frame(0, request(9, 1 << 24, 1), 1000).is_err());
        f.on_frame(3, request(9, 40_000, 1), 1000).expect("valid");
        f.on_frame(2, request(1, 1_000, 1), 1000)
            .expect("obsolete, ignored");
        assert_eq!(f.request(), Some(request(9, 40_000, 1)));
        let config = f.apply(&AckConfig::default());
        assert_eq!(config.ack_eliciting_threshold, 10);
        assert_eq!(
            f.max_ack_delay(Duration::from_millis(25)),
            Duration::from_millis(40)
        );
    }

    #[test]
    fn requests_respect_the_peer_minimum() {
        let r = request(3, 100, 1).for_peer(1000);
        assert_eq!(r.max_ack_delay_us, 1000);
        assert!(request(3, u64::MAX, 1).for_peer(0).max_ack_delay_us < MAX_REQUESTED_DELAY_US);
    }

    #[test]
    fn reordering_threshold_zero_never_and_larger_only_outside_the_window() {
        let mut record = ReceiveRecord::default();
        for pn in [0, 1, 2, 3, 5, 6] {
            record.on_received(pn, Timestamp::ZERO);
        }
        let mut f = PeerAckFrequency::default();
        assert!(f.reordering_calls_for_ack(&record, 6), "RFC 9000 default");
        f.on_frame(0, request(1, 25_000, 0), 1000).expect("valid");
        assert!(!f.reordering_calls_for_ack(&record, 6));
        // Threshold 3: packet 4 missing, Largest Unacked 6, 6 - 4 = 2 < 3: wait.
        f.on_frame(1, request(1, 25_000, 3), 1000).expect("valid");
        assert!(!f.reordering_calls_for_ack(&record, 6));
        // Packet 7 arrives: 7 - 4 = 3 >= 3: the sender can declare 4 lost, acknowledge now.
        record.on_received(7, Timestamp::ZERO);
        assert!(f.reordering_calls_for_ack(&record, 7));
    }

    #[test]
    fn a_late_packet_below_largest_acked_minus_threshold_is_acknowledged_at_once() {
        let mut record = ReceiveRecord::default();
        for pn in 0..20 {
            if pn != 4 {
                record.on_received(pn, Timestamp::ZERO);
            }
        }
        record.on_ranges_reported(&[5..=19, 0..=3]);
        let mut f = PeerAckFrequency::default();
        f.on_frame(0, request(1, 25_000, 3), 1000).expect("valid");
        record.on_received(4, Timestamp::ZERO);
        assert!(f.reordering_calls_for_ack(&record, 4), "4 <= 19 - 3");
    }
}
