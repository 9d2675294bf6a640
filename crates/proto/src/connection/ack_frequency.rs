//! ACK_FREQUENCY state of a connection (draft-ietf-quic-ack-frequency): the peer's request we
//! follow, and our own request to the peer (its sequence number, whether it waits to be sent).

use crate::ack::{AckFrequencyRequest, PeerAckFrequency};

/// Both directions of ACK_FREQUENCY.
#[derive(Debug, Default)]
pub(crate) struct AckFrequencyState {
    /// The peer's latest request.
    peer: PeerAckFrequency,
    /// Sequence number of the last request we sent.
    sent: Option<u64>,
    /// Our request waits to be sent (again, if lost).
    pending: bool,
    /// The Reordering Threshold of the last request we sent.
    sent_reordering: Option<u64>,
}

/// The Reordering Threshold to request: the configured one, raised to the packet threshold our
/// loss detection uses once reordering raised it (the draft's "Setting the Reordering Threshold
/// Value": "senders SHOULD implement adaptive packet threshold loss detection and communicate
/// the increased Reordering Threshold value to the receiver"). `path_threshold` is the lowest
/// packet threshold of the active paths (a request applies to every path); 0 (no immediate
/// ACK on reordering) is kept.
pub(crate) fn reordering_to_request(configured: u64, path_threshold: u64) -> u64 {
    if configured == 0 || path_threshold <= crate::recovery::ledger::PACKET_THRESHOLD {
        configured
    } else {
        configured.max(path_threshold)
    }
}

impl AckFrequencyState {
    /// The peer's request in force.
    pub(crate) fn peer(&self) -> &PeerAckFrequency {
        &self.peer
    }

    /// An ACK_FREQUENCY frame from the peer (see [`PeerAckFrequency::on_frame`]).
    pub(crate) fn on_peer_frame(
        &mut self,
        sequence: u64,
        request: AckFrequencyRequest,
        our_min_us: u64,
    ) -> Result<(), &'static str> {
        self.peer.on_frame(sequence, request, our_min_us)
    }

    /// At handshake confirmation: whether we send a request (we want one, the peer supports it).
    pub(crate) fn request(&mut self, wanted: bool) {
        self.pending = wanted;
    }

    /// Whether our request waits to be sent.
    pub(crate) fn is_pending(&self) -> bool {
        self.pending
    }

    /// Sequence number for the request written next: a resend gets a new one.
    pub(crate) fn next_sequence(&self) -> u64 {
        self.sent.map_or(0, |s| s + 1)
    }

    /// Our request went out with `sequence` and Reordering Threshold `reordering`.
    pub(crate) fn on_sent(&mut self, sequence: u64, reordering: u64) {
        self.sent = Some(sequence);
        self.sent_reordering = Some(reordering);
        self.pending = false;
    }

    /// The Reordering Threshold we would request now: after a request went out with another
    /// one, send a new request.
    pub(crate) fn on_reordering_threshold(&mut self, reordering: u64) {
        if self.sent_reordering.is_some_and(|sent| sent != reordering) {
            self.pending = true;
        }
    }

    /// Nothing to send after all (no request configured, or the peer has no min_ack_delay).
    pub(crate) fn cancel(&mut self) {
        self.pending = false;
    }

    /// Whether we sent a request (the peer may use its max_ack_delay).
    pub(crate) fn has_requested(&self) -> bool {
        self.sent.is_some()
    }

    /// The packet with request `sequence` was lost: resend unless a newer one went out.
    pub(crate) fn on_lost(&mut self, sequence: u64) {
        if self.sent == Some(sequence) {
            self.pending = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lost_request_is_resent_unless_a_newer_one_went_out() {
        let mut state = AckFrequencyState::default();
        assert!(!state.is_pending() && !state.has_requested());
        state.request(true);
        assert!(state.is_pending());
        assert_eq!(state.next_sequence(), 0);
        state.on_sent(0, 1);
        assert!(!state.is_pending() && state.has_requested());
        state.on_lost(0);
        assert!(state.is_pending());
        assert_eq!(
            state.next_sequence(),
            1,
            "a resend gets a new sequence number"
        );
        state.on_sent(1, 1);
        state.on_lost(0);
        assert!(!state.is_pending(), "request 1 replaced the lost request 0");
        state.request(true);
        state.cancel();
        assert!(!state.is_pending());
    }

    #[test]
    fn a_raised_packet_threshold_is_requested_as_the_reordering_threshold() {
        assert_eq!(
            reordering_to_request(1, 3),
            1,
            "no reordering seen: as configured"
        );
        assert_eq!(reordering_to_request(1, 12), 12);
        assert_eq!(
            reordering_to_request(20, 12),
            20,
            "never below the configuration"
        );
        assert_eq!(reordering_to_request(0, 12), 0, "never immediately: kept");
        let mut state = AckFrequencyState::default();
        state.on_reordering_threshold(12);
        assert!(!state.is_pending(), "nothing requested yet");
        state.request(true);
        state.on_sent(0, 1);
        state.on_reordering_threshold(1);
        assert!(!state.is_pending(), "unchanged");
        state.on_reordering_threshold(12);
        assert!(state.is_pending());
        assert_eq!(state.next_sequence(), 1);
    }
}
