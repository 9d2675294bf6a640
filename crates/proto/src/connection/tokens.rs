//! Address validation on the connection: the client following a Retry (RFC 9000 §8.1.2,
//! §17.2.5.2) and keeping NEW_TOKEN tokens (§8.1.3, §19.7); the server handing one out.

use bytes::Bytes;
use mpquic_wire::error::TransportErrorCode;
use mpquic_wire::frame::{ty, Frame};
use mpquic_wire::header::PartialDecode;
use mpquic_wire::stream_id::Side;

use super::{Connection, State};
use crate::cid::RemoteCids;
use crate::crypto::{initial_keys, verify_retry_integrity, Epoch};
use crate::error::TransportError;
use crate::sent_frames::SentFrames;

impl Connection {
    /// A Retry reached the client. RFC 9000 §17.2.5.2: accept at most one, only before any
    /// other packet from the server, only with a valid integrity tag (RFC 9001 §5.8) and a
    /// non-empty token; then send Initials to the Retry's Source CID, keys derived from it,
    /// carrying the token, with the packet numbers continuing (§17.2.5.3).
    pub(super) fn on_retry_packet(&mut self, packet: &PartialDecode) {
        let acceptable = self.side == Side::Client
            && self.handshake.may_follow_retry()
            && matches!(self.state, State::Handshaking)
            && !packet.token().is_empty()
            && verify_retry_integrity(self.handshake.original_dcid().as_slice(), packet.packet());
        let Some(retry_scid) = packet.scid().filter(|_| acceptable) else {
            self.stats.packets_dropped += 1;
            return;
        };
        self.handshake
            .follow_retry(retry_scid, Bytes::copy_from_slice(packet.token()));
        self.remote_cids.insert(
            crate::path::PathId::ZERO,
            RemoteCids::with_initial(retry_scid),
        );
        self.keys
            .install_initial(initial_keys(retry_scid.as_slice(), Side::Client));
        // Everything sent in Initial packets so far must be sent again under the new keys; the
        // Retry says those packets were not processed, so this is no congestion signal.
        if let Some(path) = self.paths.get_mut(&crate::path::PathId::ZERO) {
            let packets = path.ledger(Epoch::Initial).drain();
            path.pto_count = 0;
            for p in packets {
                self.requeue_frames(Epoch::Initial, &p.frames);
            }
        }
        // RFC 9000 §17.2.5.3: 0-RTT packets sent before the Retry were not processed either;
        // the client "MAY attempt 0-RTT after receiving a Retry" to the new connection ID, so
        // their data goes out again in 0-RTT (new packet numbers: they are never reset).
        self.requeue_zero_rtt();
    }

    /// A NEW_TOKEN frame (RFC 9000 §19.7): only servers send it; a client keeps the token for
    /// its next connection to the same server.
    pub(super) fn on_new_token_frame(&mut self, token: Bytes) -> Result<(), TransportError> {
        if self.side == Side::Server {
            return Err(TransportError::for_frame(
                TransportErrorCode::PROTOCOL_VIOLATION,
                ty::NEW_TOKEN,
                "client sent NEW_TOKEN",
            ));
        }
        if token.is_empty() {
            // §19.7: an empty token is a FRAME_ENCODING_ERROR.
            return Err(TransportError::for_frame(
                TransportErrorCode::FRAME_ENCODING_ERROR,
                ty::NEW_TOKEN,
                "empty NEW_TOKEN",
            ));
        }
        self.handshake.store_new_token(token);
        Ok(())
    }

    /// Server, handshake confirmed: send the NEW_TOKEN token once (again if the packet that
    /// carried it is lost, §13.3).
    pub(crate) fn write_new_token(
        &mut self,
        packet: &mut Vec<u8>,
        limit: usize,
        sent: &mut SentFrames,
    ) -> bool {
        if self.side != Side::Server {
            return false;
        }
        let Some(token) = self.handshake.new_token_to_send() else {
            return false;
        };
        let frame = Frame::NewToken {
            token: token.clone(),
        };
        if packet.len() + frame.encoded_len() > limit {
            return false;
        }
        frame.encode(packet);
        sent.new_token = true;
        self.handshake.new_token_sent();
        true
    }

    /// The Reordering Threshold our ACK_FREQUENCY request carries for a configured one
    /// ([`super::ack_frequency::reordering_to_request`]).
    pub(crate) fn reordering_to_request(&self, configured: u64) -> u64 {
        let lowest = self
            .paths
            .values()
            .filter(|p| p.is_active())
            .map(|p| p.loss_thresholds.packet.get())
            .min()
            .unwrap_or(crate::recovery::ledger::PACKET_THRESHOLD);
        super::ack_frequency::reordering_to_request(configured, lowest)
    }

    /// Our ACK_FREQUENCY request (draft-ietf-quic-ack-frequency), once the handshake is
    /// confirmed, to a peer that advertised min_ack_delay; a resend gets a new sequence number.
    pub(crate) fn write_ack_frequency(
        &mut self,
        packet: &mut Vec<u8>,
        limit: usize,
        sent: &mut SentFrames,
    ) -> bool {
        if !self.ack_frequency.is_pending() {
            return false;
        }
        let peer_min = self.peer_params.as_ref().and_then(|p| p.min_ack_delay_us);
        let (Some(request), Some(peer_min)) = (self.config.ack.request_ack_frequency, peer_min)
        else {
            self.ack_frequency.cancel();
            return false;
        };
        let mut request = request.for_peer(peer_min);
        request.reordering_threshold = self.reordering_to_request(request.reordering_threshold);
        let sequence = self.ack_frequency.next_sequence();
        let frame = Frame::AckFrequency {
            sequence,
            ack_eliciting_threshold: request.ack_eliciting_threshold,
            request_max_ack_delay_us: request.max_ack_delay_us,
            reordering_threshold: request.reordering_threshold,
        };
        if packet.len() + frame.encoded_len() > limit {
            return false;
        }
        frame.encode(packet);
        self.ack_frequency
            .on_sent(sequence, request.reordering_threshold);
        sent.ack_frequency = Some(sequence);
        true
    }
}
