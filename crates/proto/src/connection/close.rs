//! Closing (RFC 9000 §10): immediate close with CONNECTION_CLOSE, stateless reset, key updates.

use bytes::Bytes;
use mpquic_wire::frame::{ConnectionClose, Frame};
use mpquic_wire::stream_id::Side;

use super::send::{MIN_INITIAL_SIZE, TAG_LEN};
use super::{Connection, ConnectionError, Event, State, Transmit};
use crate::crypto::Epoch;
use crate::error::TransportError;
use crate::path::PathId;
use crate::space::SpaceId;
use crate::time::Timestamp;

impl Connection {
    /// Close because of a local protocol error (sends CONNECTION_CLOSE 0x1c with the code).
    pub(crate) fn close_with_error(&mut self, now: Timestamp, error: TransportError) {
        if self.is_closed() {
            return;
        }
        tracing::debug!("closing connection: {error}");
        let lost = ConnectionError::TransportError(error.clone());
        self.error = Some(lost.clone());
        self.events.push_back(Event::ConnectionLost(lost));
        self.enter_closing(
            now,
            error.code.0,
            Some(error.frame_type.unwrap_or(0)),
            Bytes::from(error.reason.into_bytes()),
        );
    }

    /// RFC 9000 §10.2.1: the closing state lasts three times the (largest, RFC 10069) PTO.
    pub(crate) fn enter_closing(
        &mut self,
        now: Timestamp,
        code: u64,
        frame_type: Option<u64>,
        reason: Bytes,
    ) {
        let mut frame = Vec::new();
        let reason = reason.slice(..reason.len().min(256));
        Frame::ConnectionClose(ConnectionClose {
            error_code: code,
            frame_type,
            reason,
        })
        .encode(&mut frame);
        self.state = State::Closing {
            until: now + self.largest_base_pto() * 3,
            frame: Bytes::from(frame),
            resend: true,
        };
    }

    /// RFC 9000 §10.3.1: a stateless reset ends the connection at once.
    pub(crate) fn on_stateless_reset(&mut self, now: Timestamp) {
        self.error = Some(ConnectionError::Reset);
        self.events
            .push_back(Event::ConnectionLost(ConnectionError::Reset));
        self.drain();
        self.qlog_sync(now);
    }

    /// RFC 9001 §6: initiate a key update when configured or near the AEAD limits, once the
    /// previous update was acknowledged.
    pub(crate) fn maybe_update_keys(&mut self, now: Timestamp) {
        let interval = self.config.key_update_interval;
        let (paths, layout, spaces) = (&self.paths, &self.layout, &self.send_spaces);
        // A path still being validated may have packets in flight under the current keys that
        // the peer has not seen; the peer's key retention (three PTOs of the paths it knows)
        // does not cover a path it has not received on yet, so an update now could make them
        // undecryptable. Wait for the validation (or its failure).
        let path_pending = || paths.values().any(|p| p.is_active() && !p.is_validated());
        let next_pn = || {
            let space = layout.space_for(PathId::ZERO);
            (space, spaces.get(&space).map_or(0, |s| s.peek_pn()))
        };
        if self
            .keys
            .initiate_update_if_due(now, interval, path_pending, next_pn)
        {
            self.stats.key_updates += 1;
            self.qlog_key_update(now, "local_update");
        }
    }
    /// CONNECTION_CLOSE in the closing state (RFC 9000 §10.2.1), once per trigger. Before the
    /// handshake is confirmed the peer may lack some keys, so the frame goes in every level we
    /// have keys for, coalesced (RFC 9000 §10.2.3).
    pub(crate) fn send_close(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        let State::Closing { frame, resend, .. } = &mut self.state else {
            return None;
        };
        if !*resend {
            return None;
        }
        *resend = false;
        let frame = frame.clone();
        let path = self.any_active_path().unwrap_or(PathId::ZERO);
        let mut epochs = Vec::new();
        if self.keys.has(Epoch::Initial) {
            epochs.push(Epoch::Initial);
        }
        if self.keys.has(Epoch::Handshake) {
            epochs.push(Epoch::Handshake);
        }
        // RFC 9000 §10.2.3: also in 1-RTT, the peer may have dropped lower keys already (a
        // server confirms at completion while our client still waits for HANDSHAKE_DONE).
        if self.keys.has(Epoch::Data) && (self.side == Side::Server || !self.tls.is_handshaking()) {
            epochs.push(Epoch::Data);
        }
        let datagram_path = if epochs.last() == Some(&Epoch::Data) {
            path
        } else {
            PathId::ZERO
        };
        // RFC 9000 §8.1: the anti-amplification limit covers every datagram, closes included. A
        // budget too small for the close now means waiting: each datagram the peer sends both
        // raises the budget and asks for the close again (§10.2.1).
        let max = self.send_budget(datagram_path)?;
        for (i, &epoch) in epochs.iter().enumerate() {
            let last = i + 1 == epochs.len();
            let pad = (last && epochs[0] == Epoch::Initial && self.side == Side::Client)
                .then_some(MIN_INITIAL_SIZE);
            let room = max.saturating_sub(buf.len());
            self.build_close_packet(
                now,
                epoch,
                if epoch == Epoch::Data {
                    path
                } else {
                    PathId::ZERO
                },
                &frame,
                buf,
                room,
                pad.map(|p| p.saturating_sub(buf.len())),
            );
        }
        self.finish_datagram(datagram_path, buf)
    }

    #[allow(clippy::too_many_arguments)]
    fn build_close_packet(
        &mut self,
        now: Timestamp,
        epoch: Epoch,
        path: PathId,
        frame: &Bytes,
        buf: &mut Vec<u8>,
        room: usize,
        pad_to: Option<usize>,
    ) -> Option<()> {
        let space = match epoch {
            Epoch::Initial => SpaceId::Initial,
            Epoch::Handshake => SpaceId::Handshake,
            Epoch::Data => self.layout.space_for(path),
        };
        let header = self.header_for(epoch, path)?;
        let pn = self.send_space(space).peek_pn();
        let pn_len = self.packet_number_len(now, space, path, pn);
        self.send_space(space).next_pn();
        let mut packet = Vec::with_capacity(256);
        let enc = header.encode_with_pn_len(pn, pn_len, &mut packet);
        packet.extend_from_slice(&close_frame_for_epoch(frame, epoch));
        let limit = room.checked_sub(TAG_LEN)?;
        if packet.len() > limit {
            return None;
        }
        self.pad_packet(&mut packet, &enc, pad_to, limit);
        let length = packet.len() - enc.pn_offset + TAG_LEN;
        enc.set_length(&mut packet, length);
        let qlog = self.qlog_frames(&header, &enc, &packet);
        self.seal(epoch, path, pn, &mut packet, &enc)?;
        self.qlog_packet_sent(now, (path, epoch, pn), packet.len(), qlog);
        buf.extend_from_slice(&packet);
        Some(())
    }
}

/// RFC 9000 §10.2.3: an application close cannot be sent in Initial or Handshake packets; it
/// becomes a transport close with APPLICATION_ERROR there.
fn close_frame_for_epoch(encoded_1rtt: &Bytes, epoch: Epoch) -> Vec<u8> {
    if epoch == Epoch::Data {
        return encoded_1rtt.to_vec();
    }
    let mut out = Vec::new();
    if let Some(Ok(Frame::ConnectionClose(close))) = Frame::iter(encoded_1rtt.clone()).next() {
        if close.frame_type.is_none() {
            Frame::ConnectionClose(ConnectionClose {
                error_code: mpquic_wire::error::TransportErrorCode::APPLICATION_ERROR.0,
                frame_type: Some(0),
                reason: Bytes::new(),
            })
            .encode(&mut out);
            return out;
        }
    }
    encoded_1rtt.to_vec()
}
