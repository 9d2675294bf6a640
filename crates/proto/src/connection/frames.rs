//! Dispatching received frames (RFC 9000 §19, RFC 10069 §7) to the owning module.

use mpquic_wire::error::TransportErrorCode;
use mpquic_wire::frame::{ty, Frame, NewConnectionId, PathStatus};
use mpquic_wire::stream_id::Side;

use super::{Connection, ConnectionError, Event, State};
use crate::crypto::Epoch;
use crate::error::TransportError;
use crate::path::PathId;
use crate::time::Timestamp;

impl Connection {
    /// Apply one received frame, `wire_len` bytes on the wire, that arrived on `path` at level
    /// `epoch`.
    pub(crate) fn handle_frame(
        &mut self,
        now: Timestamp,
        epoch: Epoch,
        path: PathId,
        frame: Frame,
        wire_len: usize,
    ) -> Result<(), TransportError> {
        if frame.is_multipath() {
            return self.handle_multipath_frame(now, path, frame);
        }
        match frame {
            Frame::Padding(_) | Frame::Ping => {}
            Frame::Ack(ack) => self.on_ack_frame(now, epoch, path, ack)?,
            Frame::Crypto { offset, data } => self.on_crypto_data(now, epoch, offset, data)?,
            Frame::Stream(f) => self.streams.on_stream_frame(f)?,
            Frame::ResetStream {
                id,
                error_code,
                final_size,
            } => self.streams.on_reset_stream(id, error_code, final_size)?,
            Frame::StopSending { id, error_code } => {
                self.streams.on_stop_sending(id, error_code)?
            }
            Frame::MaxData(max) => self.streams.on_max_data(max),
            Frame::MaxStreamData { id, max } => self.streams.on_max_stream_data(id, max)?,
            Frame::MaxStreams { dir, count } => self.streams.on_max_streams(dir, count)?,
            Frame::DataBlocked { limit } => self.streams.on_data_blocked(limit),
            Frame::StreamDataBlocked { id, limit } => {
                self.streams.on_stream_data_blocked(id, limit)?
            }
            Frame::StreamsBlocked { dir, limit } => self.streams.on_streams_blocked(dir, limit)?,
            Frame::NewToken { token } => self.on_new_token_frame(token)?,
            Frame::NewConnectionId(ncid) => self.on_new_connection_id(ncid)?,
            Frame::RetireConnectionId { path_id, sequence } => {
                self.on_retire_connection_id(now, path_id, sequence)?
            }
            // on_decrypted answers PATH_CHALLENGE: it knows the 4-tuple the packet came on.
            Frame::PathChallenge(data) => self.on_path_challenge(path, data, None),
            Frame::PathResponse(data) => self.on_path_response(now, path, data),
            Frame::ConnectionClose(close) => self.on_connection_close(now, close),
            Frame::HandshakeDone => {
                // RFC 9000 §19.20: a server receiving HANDSHAKE_DONE closes with PROTOCOL_VIOLATION.
                if self.side == Side::Server {
                    return Err(TransportError::for_frame(
                        TransportErrorCode::PROTOCOL_VIOLATION,
                        ty::HANDSHAKE_DONE,
                        "client sent HANDSHAKE_DONE",
                    ));
                }
                self.on_handshake_confirmed(now);
            }
            Frame::ImmediateAck => {
                for p in self.paths.values_mut() {
                    for state in p.acks.values_mut() {
                        state.request_immediate();
                    }
                }
            }
            Frame::AckFrequency {
                sequence,
                ack_eliciting_threshold,
                request_max_ack_delay_us,
                reordering_threshold,
            } => {
                let violation = |why| {
                    TransportError::for_frame(
                        TransportErrorCode::PROTOCOL_VIOLATION,
                        ty::ACK_FREQUENCY,
                        why,
                    )
                };
                // draft-ietf-quic-ack-frequency §"Negotiating Extension Use": only valid if we
                // advertised min_ack_delay.
                let Some(our_min) = self.config.ack.min_ack_delay_us else {
                    return Err(violation("ACK_FREQUENCY without min_ack_delay"));
                };
                let request = crate::ack::AckFrequencyRequest {
                    ack_eliciting_threshold,
                    max_ack_delay_us: request_max_ack_delay_us,
                    reordering_threshold,
                };
                self.ack_frequency
                    .on_peer_frame(sequence, request, our_min)
                    .map_err(violation)?;
            }
            Frame::Datagram(datagram) => self.on_datagram_frame(path, datagram, wire_len)?,
            Frame::QoeControlSignal(signal) => {
                if !self.qoe.negotiated {
                    return Err(TransportError::for_frame(
                        TransportErrorCode::PROTOCOL_VIOLATION,
                        ty::QOE_CONTROL_SIGNAL,
                        "QoE feedback was not negotiated",
                    ));
                }
                self.qoe.on_signal(signal);
            }
            other => unreachable_multipath(&other)?,
        }
        Ok(())
    }

    /// RFC 10069 §7: multipath frames need the extension, a 1-RTT packet (checked by the
    /// caller), and path IDs within our limit.
    fn handle_multipath_frame(
        &mut self,
        now: Timestamp,
        path: PathId,
        frame: Frame,
    ) -> Result<(), TransportError> {
        let ty = frame.frame_type();
        if !self.layout.is_multipath() {
            return Err(TransportError::for_frame(
                TransportErrorCode::PROTOCOL_VIOLATION,
                ty,
                "multipath frame without multipath negotiated",
            ));
        }
        let over_limit = |id: u64| self.path_ids.exceeds_local(id);
        let violation = |reason: &str| {
            Err(TransportError::for_frame(
                TransportErrorCode::PROTOCOL_VIOLATION,
                ty,
                reason,
            ))
        };
        match frame {
            Frame::Ack(ack) => {
                if ack.path_id.is_some_and(over_limit) {
                    return violation("PATH_ACK for a path ID above our limit");
                }
                self.on_ack_frame(now, Epoch::Data, path, ack)?;
            }
            Frame::NewConnectionId(ncid) => {
                if ncid.path_id.is_some_and(over_limit) {
                    return violation("PATH_NEW_CONNECTION_ID above our maximum path ID");
                }
                self.on_new_connection_id(ncid)?;
            }
            Frame::RetireConnectionId { path_id, sequence } => {
                if path_id.is_some_and(over_limit) {
                    return violation("PATH_RETIRE_CONNECTION_ID above our maximum path ID");
                }
                self.on_retire_connection_id(now, path_id, sequence)?;
            }
            Frame::PathAbandon {
                path_id,
                error_code,
            } => {
                if over_limit(path_id) {
                    return violation("PATH_ABANDON above our maximum path ID");
                }
                self.on_path_abandon(now, PathId::from_wire_saturating(path_id), error_code);
            }
            Frame::PathStatus {
                path_id,
                sequence,
                status,
            } => {
                if over_limit(path_id) {
                    return violation("PATH_STATUS above our maximum path ID");
                }
                self.on_path_status(
                    PathId::from_wire_saturating(path_id),
                    sequence,
                    status == PathStatus::Backup,
                );
            }
            Frame::MaxPathId(max) => self.on_max_path_id(max)?,
            Frame::PathsBlocked(max) => {
                if over_limit(max) {
                    return violation("PATHS_BLOCKED above our maximum path ID");
                }
            }
            Frame::PathCidsBlocked {
                path_id,
                next_sequence,
            } => {
                if over_limit(path_id) {
                    return violation("PATH_CIDS_BLOCKED above our maximum path ID");
                }
                let issued = self
                    .local_cids
                    .get(&PathId::from_wire_saturating(path_id))
                    .map_or(0, |c| c.next_seq());
                if next_sequence > issued {
                    return violation("PATH_CIDS_BLOCKED names a sequence number never issued");
                }
            }
            other => unreachable_multipath(&other)?,
        }
        Ok(())
    }

    fn on_new_connection_id(&mut self, ncid: NewConnectionId) -> Result<(), TransportError> {
        let path = PathId::from_wire_saturating(ncid.path_id.unwrap_or(0));
        let limit = self.local_params.active_connection_id_limit;
        // RFC 10069 §3.4: CIDs of an abandoned path are retired; late frames are ignored, also
        // once the path is gone (its ID is never used again, §2.1).
        if self.paths.get(&path).is_some_and(|p| !p.is_active()) || self.path_ids.is_closed(path) {
            return Ok(());
        }
        self.remote_cids.entry(path).or_default().on_new_cid(
            ncid.sequence,
            ncid.retire_prior_to,
            ncid.cid,
            ncid.reset_token,
            limit,
        )?;
        self.endpoint_events
            .push_back(super::EndpointEvent::PeerResetToken(ncid.reset_token));
        Ok(())
    }

    fn on_connection_close(&mut self, now: Timestamp, close: mpquic_wire::frame::ConnectionClose) {
        let reason = String::from_utf8_lossy(&close.reason).into_owned();
        let error = match close.frame_type {
            Some(frame_type) => ConnectionError::PeerTransportClose {
                code: close.error_code,
                frame_type: Some(frame_type),
                reason,
            },
            None => ConnectionError::PeerApplicationClose {
                code: close.error_code,
                reason,
            },
        };
        if self.error.is_none() {
            self.error = Some(error.clone());
            self.events.push_back(Event::ConnectionLost(error));
        }
        // RFC 9000 §10.2.2: enter draining for three times the (largest, RFC 10069) PTO.
        self.state = State::Draining {
            until: now + self.largest_base_pto() * 3,
        };
    }
}

fn unreachable_multipath(frame: &Frame) -> Result<(), TransportError> {
    Err(TransportError::for_frame(
        TransportErrorCode::FRAME_ENCODING_ERROR,
        frame.frame_type(),
        "unexpected frame",
    ))
}
