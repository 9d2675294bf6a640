//! Closing (RFC 9000 §10): immediate close with CONNECTION_CLOSE, stateless reset, key updates.

use bytes::Bytes;
use mpquic_wire::frame::{ConnectionClose, Frame};

use super::{Connection, ConnectionError, Event, State};
use crate::error::TransportError;
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
            until: now + self.largest_pto() * 3,
            frame: Bytes::from(frame),
            epoch_hint: 0,
            resend: true,
        };
    }

    /// RFC 9000 §10.3.1: a stateless reset ends the connection at once.
    pub(crate) fn on_stateless_reset(&mut self, _now: Timestamp) {
        self.error = Some(ConnectionError::Reset);
        self.events
            .push_back(Event::ConnectionLost(ConnectionError::Reset));
        self.drain();
    }

    /// RFC 9001 §6: initiate a key update when configured or near the AEAD limits, once the
    /// previous update was acknowledged.
    pub(crate) fn maybe_update_keys(&mut self) {
        let interval = self.config.key_update_interval;
        let Some(keys) = self.one_rtt.as_mut() else {
            return;
        };
        let due =
            keys.needs_key_update() || interval.is_some_and(|n| self.packets_since_key_update >= n);
        if !due || self.drop_previous_key_at.is_some() {
            return;
        }
        let acked = self.key_update_acked_pn.is_none();
        if keys.can_initiate_update(acked) && keys.initiate_update(acked).is_ok() {
            self.packets_since_key_update = 0;
            self.stats.key_updates += 1;
            let space = self.layout.space_for(0);
            let pn = self.send_spaces.get(&space).map_or(0, |s| s.peek_pn());
            self.key_update_acked_pn = Some((space, pn));
        }
    }
}
