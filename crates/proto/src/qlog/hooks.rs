//! The connection's qlog hooks: one-line calls from the connection modules land here. Each
//! returns at once when no sink is set, before building anything.

use bytes::Bytes;
use mpquic_wire::cid::ConnectionId;
use mpquic_wire::header::{Header, PartialEncode};
use mpquic_wire::stream_id::StreamId;
use mpquic_wire::transport_params::TransportParameters;

use super::events::{
    hex, CongestionStateUpdated, ConnectionClosed, ConnectionStarted, ConnectionStateUpdated,
    KeyEvent, PacketEvent, PacketHeader, PacketLost, ParametersSet, RawInfo, RecoveryMetrics,
    StreamDataMoved, TupleEndpointInfo,
};
use super::{MetricValues, Qlog, QlogContext, QlogEvent, QlogFrame, QlogSink};
use crate::connection::{Connection, ConnectionError, State};
use crate::crypto::Epoch;
use crate::path::{Path, PathId};
use crate::recovery::LossCause;
use crate::space::SpaceId;
use crate::time::Timestamp;

/// A packet's header and frames, taken before it is sealed.
pub(crate) struct SentLog {
    frames: Vec<QlogFrame>,
    dcid: ConnectionId,
    scid: Option<ConnectionId>,
    header_len: usize,
    pn_len: usize,
}

/// What packet_sent / packet_received log of a packet's header.
#[derive(Debug, Clone)]
pub(crate) struct PacketMeta {
    pub path: PathId,
    pub epoch: Epoch,
    pub pn: u64,
    pub dcid: ConnectionId,
    pub scid: Option<ConnectionId>,
    /// The whole packet, AEAD tag included.
    pub size: usize,
    /// Bytes before the payload (packet number included), and the packet number's length.
    pub header_len: usize,
    pub pn_len: usize,
}

fn packet_type(epoch: Epoch) -> &'static str {
    match epoch {
        Epoch::Initial => "initial",
        Epoch::Handshake => "handshake",
        Epoch::Data => "1RTT",
    }
}

fn space_packet_type(space: SpaceId) -> &'static str {
    match space {
        SpaceId::Initial => "initial",
        SpaceId::Handshake => "handshake",
        _ => "1RTT",
    }
}

impl PacketMeta {
    fn header(&self) -> PacketHeader {
        // An application-data packet with a Source CID has a long header: 0-RTT.
        let zero_rtt = self.epoch == Epoch::Data && self.scid.is_some();
        let long = self.epoch != Epoch::Data || zero_rtt;
        PacketHeader {
            packet_type: if zero_rtt {
                "0RTT"
            } else {
                packet_type(self.epoch)
            },
            packet_number: self.pn,
            // §"PacketHeader": for long headers, the length of the packet number plus payload.
            length: long.then(|| (self.size - self.header_len + self.pn_len) as u64),
            scid: self.scid.as_ref().map(|c| hex(c.as_slice())),
            dcid: Some(hex(self.dcid.as_slice())),
        }
    }

    fn event(&self, frames: Vec<QlogFrame>) -> PacketEvent {
        PacketEvent {
            header: self.header(),
            frames,
            raw: RawInfo {
                length: Some(self.size as u64),
                payload_length: Some(self.size.saturating_sub(self.header_len) as u64),
            },
            path_id: Some(u64::from(self.path)),
        }
    }
}

fn key_types(epoch: Epoch) -> [&'static str; 2] {
    match epoch {
        Epoch::Initial => ["client_initial_secret", "server_initial_secret"],
        Epoch::Handshake => ["client_handshake_secret", "server_handshake_secret"],
        Epoch::Data => ["client_1rtt_secret", "server_1rtt_secret"],
    }
}

/// §"parameters_set" of one side's transport parameters.
fn parameters_set(initiator: &'static str, p: &TransportParameters) -> ParametersSet {
    let cid = |c: &Option<ConnectionId>| c.as_ref().map(|c| hex(c.as_slice()));
    ParametersSet {
        initiator,
        original_destination_connection_id: cid(&p.original_destination_connection_id),
        initial_source_connection_id: cid(&p.initial_source_connection_id),
        retry_source_connection_id: cid(&p.retry_source_connection_id),
        stateless_reset_token: p.stateless_reset_token.map(|t| hex(&t.0)),
        disable_active_migration: p.disable_active_migration,
        max_idle_timeout: p.max_idle_timeout_ms,
        max_udp_payload_size: p.max_udp_payload_size,
        ack_delay_exponent: p.ack_delay_exponent,
        max_ack_delay: p.max_ack_delay_ms,
        active_connection_id_limit: p.active_connection_id_limit,
        initial_max_data: p.initial_max_data,
        initial_max_stream_data_bidi_local: p.initial_max_stream_data_bidi_local,
        initial_max_stream_data_bidi_remote: p.initial_max_stream_data_bidi_remote,
        initial_max_stream_data_uni: p.initial_max_stream_data_uni,
        initial_max_streams_bidi: p.initial_max_streams_bidi,
        initial_max_streams_uni: p.initial_max_streams_uni,
        initial_max_path_id: p.initial_max_path_id,
        enable_multipath: p.enable_multipath,
        spns_max_path_id: p.spns_max_path_id,
        min_ack_delay: p.min_ack_delay_us,
    }
}

/// §"connection_closed" from why the connection ended.
fn connection_closed(error: Option<&ConnectionError>) -> ConnectionClosed {
    let transport = |code: u64| super::frames::transport_error_name(code);
    let mut c = ConnectionClosed::default();
    match error {
        Some(ConnectionError::TransportError(e)) => {
            let (name, code) = transport(e.code.0);
            (c.connection_error, c.error_code) = (Some(name), code);
            (c.initiator, c.trigger) = (Some("local"), Some("error"));
            c.reason = Some(e.reason.clone());
        }
        Some(ConnectionError::PeerTransportClose { code, reason, .. }) => {
            let (name, code) = transport(*code);
            (c.connection_error, c.error_code) = (Some(name), code);
            (c.initiator, c.trigger) = (Some("remote"), Some("error"));
            c.reason = Some(reason.clone());
        }
        Some(ConnectionError::PeerApplicationClose { code, reason }) => {
            (c.application_error, c.error_code) = (Some("unknown"), Some(*code));
            (c.initiator, c.trigger) = (Some("remote"), Some("application"));
            c.reason = Some(reason.clone());
        }
        Some(ConnectionError::LocallyClosed { code }) => {
            (c.application_error, c.error_code) = (Some("unknown"), Some(*code));
            (c.initiator, c.trigger) = (Some("local"), Some("application"));
        }
        Some(ConnectionError::TimedOut) => {
            (c.initiator, c.trigger) = (Some("local"), Some("idle_timeout"));
        }
        Some(ConnectionError::Reset) => {
            (c.initiator, c.trigger) = (Some("remote"), Some("stateless_reset"));
        }
        Some(ConnectionError::VersionMismatch) => c.trigger = Some("version_mismatch"),
        None => c.trigger = Some("unspecified"),
    }
    c
}

impl MetricValues {
    fn of(path: &Path) -> (Self, &'static str) {
        let stats = path.cc.stats();
        let srtt = path.rtt.smoothed();
        let sampled = path.rtt.has_sample();
        let values = MetricValues {
            min_rtt_ns: sampled.then(|| path.rtt.min().as_nanos() as u64),
            smoothed_rtt_ns: srtt.as_nanos() as u64,
            latest_rtt_ns: sampled.then(|| path.rtt.latest().as_nanos() as u64),
            rtt_variance_ns: path.rtt.var().as_nanos() as u64,
            pto_count: u16::try_from(path.pto_count).unwrap_or(u16::MAX),
            congestion_window: path.cc.window(),
            bytes_in_flight: path.bytes_in_flight(),
            ssthresh: stats.ssthresh,
            // §"recovery_metrics_updated": bits per second.
            pacing_rate: path.cc.pacing_rate(srtt).saturating_mul(8),
        };
        // RFC 9002 §7.8: a sender that does not fill its window is application-limited; the
        // delivery-rate estimator tracks that phase.
        let app_limited = path.delivery.is_app_limited()
            && matches!(stats.state, "slow_start" | "congestion_avoidance");
        let state = if app_limited {
            "application_limited"
        } else {
            stats.state
        };
        (values, state)
    }

    /// The metrics that differ from `old` (all of them when there is no `old`).
    fn changes(&self, old: Option<&MetricValues>, path: PathId) -> Option<RecoveryMetrics> {
        fn pick<T: PartialEq + Copy>(new: T, old: Option<T>) -> Option<T> {
            (old != Some(new)).then_some(new)
        }
        let nanos = |n: u64| n as f64 / 1e6;
        let m = RecoveryMetrics {
            min_rtt: pick(self.min_rtt_ns, old.map(|o| o.min_rtt_ns))
                .flatten()
                .map(nanos),
            smoothed_rtt: pick(self.smoothed_rtt_ns, old.map(|o| o.smoothed_rtt_ns)).map(nanos),
            latest_rtt: pick(self.latest_rtt_ns, old.map(|o| o.latest_rtt_ns))
                .flatten()
                .map(nanos),
            rtt_variance: pick(self.rtt_variance_ns, old.map(|o| o.rtt_variance_ns)).map(nanos),
            pto_count: pick(self.pto_count, old.map(|o| o.pto_count)),
            congestion_window: pick(self.congestion_window, old.map(|o| o.congestion_window)),
            bytes_in_flight: pick(self.bytes_in_flight, old.map(|o| o.bytes_in_flight)),
            ssthresh: self
                .ssthresh
                .filter(|_| old.map(|o| o.ssthresh) != Some(self.ssthresh)),
            pacing_rate: pick(self.pacing_rate, old.map(|o| o.pacing_rate)),
            path_id: Some(u64::from(path)),
        };
        (m != RecoveryMetrics {
            path_id: m.path_id,
            ..Default::default()
        })
        .then_some(m)
    }
}

impl Connection {
    /// Set (or replace) the qlog sink of this connection and log its start: connection_started,
    /// local parameters_set and the current state. `now` is the trace's time origin for the
    /// caller's sink.
    pub fn set_qlog(&mut self, now: Timestamp, sink: Box<dyn QlogSink>) {
        self.qlog = Some(Box::new(Qlog::new(sink, now)));
        let path = self.paths.get(&PathId::ZERO);
        let local_cid = self
            .local_cids
            .get(&PathId::ZERO)
            .and_then(|c| c.all().next());
        let remote_cid = self
            .remote_cids
            .get(&PathId::ZERO)
            .and_then(|c| c.current());
        let started = path.map(|p| ConnectionStarted {
            local: TupleEndpointInfo::new(p.local, local_cid.as_ref().map(|c| c.as_slice())),
            remote: TupleEndpointInfo::new(p.remote, remote_cid.as_ref().map(|c| c.as_slice())),
        });
        let params = parameters_set("local", &self.local_params);
        if let Some(q) = self.qlog.as_mut() {
            if let Some(started) = started {
                q.emit(now, QlogEvent::ConnectionStarted(started));
            }
            q.emit(now, QlogEvent::ParametersSet(Box::new(params)));
        }
        self.qlog_sync(now);
    }

    /// At creation: ask the configured factory for a sink.
    pub(crate) fn qlog_start(&mut self, now: Timestamp) {
        let Some(config) = self.config.qlog.clone() else {
            return;
        };
        let context = QlogContext {
            side: self.side,
            odcid: self.handshake.original_dcid(),
            start: now,
        };
        if let Some(sink) = config.make(&context) {
            self.set_qlog(now, sink);
        }
    }

    /// Header and frames of a packet about to be sealed (`packet` holds its plaintext), when
    /// logging.
    pub(crate) fn qlog_frames(
        &self,
        header: &Header,
        enc: &PartialEncode,
        packet: &[u8],
    ) -> Option<SentLog> {
        self.qlog.as_ref()?;
        let exponent = self.local_params.ack_delay_exponent;
        let payload = packet.get(enc.start + enc.header_len..)?;
        Some(SentLog {
            frames: QlogFrame::parse_payload(Bytes::copy_from_slice(payload), exponent),
            dcid: *header.dcid(),
            scid: header.scid().copied(),
            header_len: enc.header_len,
            pn_len: enc.pn_len,
        })
    }

    /// §"packet_sent": the packet of `log` went out, `size` bytes with its AEAD tag.
    pub(crate) fn qlog_packet_sent(
        &mut self,
        now: Timestamp,
        (path, epoch, pn): (PathId, Epoch, u64),
        size: usize,
        log: Option<SentLog>,
    ) {
        let (Some(q), Some(log)) = (self.qlog.as_mut(), log) else {
            return;
        };
        let meta = PacketMeta {
            path,
            epoch,
            pn,
            dcid: log.dcid,
            scid: log.scid,
            size,
            header_len: log.header_len,
            pn_len: log.pn_len,
        };
        q.emit(now, QlogEvent::PacketSent(meta.event(log.frames)));
    }

    /// §"packet_received", with the frames of the decrypted `payload`.
    pub(crate) fn qlog_packet_received(
        &mut self,
        now: Timestamp,
        meta: impl FnOnce() -> PacketMeta,
        payload: &Bytes,
    ) {
        if self.qlog.is_none() {
            return;
        }
        let meta = meta();
        let exponent = self
            .peer_params
            .as_ref()
            .map_or(3, |p| p.ack_delay_exponent);
        let frames = QlogFrame::parse_payload(payload.clone(), exponent);
        if let Some(q) = self.qlog.as_mut() {
            q.emit(now, QlogEvent::PacketReceived(meta.event(frames)));
        }
    }

    /// §"packet_lost"; `cause` None when the packet's path went away.
    pub(crate) fn qlog_packet_lost(
        &mut self,
        now: Timestamp,
        path: PathId,
        space: SpaceId,
        pn: u64,
        cause: Option<LossCause>,
    ) {
        let Some(q) = self.qlog.as_mut() else {
            return;
        };
        let trigger = match cause {
            Some(LossCause::PacketThreshold) => Some("reordering_threshold"),
            Some(LossCause::TimeThreshold) => Some("time_threshold"),
            Some(LossCause::PathGone) | None => None,
        };
        let lost = PacketLost {
            header: PacketHeader {
                packet_type: space_packet_type(space),
                packet_number: pn,
                length: None,
                scid: None,
                dcid: None,
            },
            trigger,
            path_id: Some(u64::from(path)),
        };
        q.emit(now, QlogEvent::PacketLost(lost));
    }

    /// §"mtu_updated": `path`'s datagram size went from `old` to `new` bytes.
    pub(crate) fn qlog_mtu_updated(
        &mut self,
        now: Timestamp,
        path: PathId,
        (old, new): (u16, u16),
        done: bool,
    ) {
        let Some(q) = self.qlog.as_mut() else {
            return;
        };
        let event = super::events::MtuUpdated {
            old: Some(old),
            new,
            done,
            path_id: Some(u64::from(path)),
        };
        q.emit(now, QlogEvent::MtuUpdated(event));
    }

    /// Reordering raised a loss threshold of `path`: §"recovery_parameters_set" with both.
    pub(crate) fn qlog_loss_thresholds(&mut self, now: Timestamp, path: PathId) {
        let Some(q) = self.qlog.as_mut() else {
            return;
        };
        let Some(thresholds) = self.paths.get(&path).map(|p| p.loss_thresholds) else {
            return;
        };
        let event = super::events::RecoveryParametersSet {
            reordering_threshold: thresholds.packet.get(),
            time_threshold: f64::from(thresholds.time.eighths()) / 8.0,
            path_id: Some(u64::from(path)),
        };
        q.emit(now, QlogEvent::RecoveryParametersSet(event));
    }

    /// The peer's transport parameters were accepted: remote §"parameters_set".
    pub(crate) fn qlog_peer_params(&mut self) {
        let (Some(q), Some(p)) = (self.qlog.as_mut(), self.peer_params.as_ref()) else {
            return;
        };
        let event = QlogEvent::ParametersSet(Box::new(parameters_set("remote", p)));
        let now = q.last_time;
        q.emit(now, event);
    }

    /// A 1-RTT key update (RFC 9001 §6): `trigger` is local_update or remote_update.
    pub(crate) fn qlog_key_update(&mut self, now: Timestamp, trigger: &'static str) {
        let Some(q) = self.qlog.as_mut() else {
            return;
        };
        let phase = self.keys.one_rtt_generation();
        for key_type in key_types(Epoch::Data) {
            let event = KeyEvent {
                key_type,
                key_phase: phase,
                trigger,
            };
            q.emit(now, QlogEvent::KeyUpdated(event));
        }
    }

    /// §"stream_data_moved" between the application and the transport; `n` bytes.
    pub(crate) fn qlog_stream_moved(&mut self, id: StreamId, n: usize, to_app: bool, fin: bool) {
        let Some(q) = self.qlog.as_mut() else {
            return;
        };
        if n == 0 && !fin {
            return;
        }
        let (from, to) = if to_app {
            ("transport", "application")
        } else {
            ("application", "transport")
        };
        let event = StreamDataMoved {
            stream_id: id.0,
            from,
            to,
            additional_info: fin.then_some("fin_set"),
            raw: RawInfo::length(n as u64),
        };
        let now = q.last_time;
        q.emit(now, QlogEvent::StreamDataMoved(event));
    }

    /// At the end of every connection call: report what changed (connection state, keys,
    /// per-path recovery metrics and congestion state).
    pub(crate) fn qlog_sync(&mut self, now: Timestamp) {
        if self.qlog.is_none() {
            return;
        }
        self.qlog_sync_keys(now);
        self.qlog_sync_state(now);
        self.qlog_sync_paths(now);
    }

    fn qlog_sync_keys(&mut self, now: Timestamp) {
        let installed = [
            self.keys.has(Epoch::Initial),
            self.keys.has(Epoch::Handshake),
            self.keys.has(Epoch::Data),
        ];
        let Some(q) = self.qlog.as_mut() else {
            return;
        };
        for (i, epoch) in [Epoch::Initial, Epoch::Handshake, Epoch::Data]
            .into_iter()
            .enumerate()
        {
            if installed[i] == q.keys[i] {
                continue;
            }
            for key_type in key_types(epoch) {
                let event = KeyEvent {
                    key_type,
                    key_phase: (epoch == Epoch::Data).then_some(0),
                    trigger: "tls",
                };
                q.emit(
                    now,
                    if installed[i] {
                        QlogEvent::KeyUpdated(event)
                    } else {
                        QlogEvent::KeyDiscarded(event)
                    },
                );
            }
            q.keys[i] = installed[i];
        }
    }

    /// §"connection_state_updated" names of the connection's state.
    fn qlog_state_name(&self) -> &'static str {
        match self.state {
            State::Handshaking if self.keys.has(Epoch::Handshake) || self.keys.has(Epoch::Data) => {
                "handshake_started"
            }
            State::Handshaking => "attempted",
            State::Established if self.handshake.is_confirmed() => "handshake_confirmed",
            State::Established => "handshake_complete",
            State::Closing { .. } => "closing",
            State::Draining { .. } => "draining",
            State::Drained => "closed",
        }
    }

    fn qlog_sync_state(&mut self, now: Timestamp) {
        let new = self.qlog_state_name();
        let closing = matches!(new, "closing" | "draining" | "closed");
        let closed = closing.then(|| connection_closed(self.error.as_ref()));
        let Some(q) = self.qlog.as_mut() else {
            return;
        };
        if let Some(closed) = closed.filter(|_| !q.closed_logged) {
            q.closed_logged = true;
            q.emit(now, QlogEvent::ConnectionClosed(closed));
        }
        if q.state == Some(new) {
            return;
        }
        // A server completes and confirms the handshake at once (RFC 9001 §4.1.2).
        if new == "handshake_confirmed" && q.state == Some("handshake_started") {
            let complete = ConnectionStateUpdated {
                old: q.state,
                new: "handshake_complete",
            };
            q.emit(now, QlogEvent::ConnectionStateUpdated(complete));
            q.state = Some("handshake_complete");
        }
        let update = ConnectionStateUpdated { old: q.state, new };
        q.state = Some(new);
        q.emit(now, QlogEvent::ConnectionStateUpdated(update));
    }

    fn qlog_sync_paths(&mut self, now: Timestamp) {
        let Some(q) = self.qlog.as_mut() else {
            return;
        };
        q.paths.retain(|id, _| self.paths.contains_key(id));
        for (&id, path) in &self.paths {
            let (values, state) = MetricValues::of(path);
            let snapshot = q.paths.entry(id).or_default();
            let metrics = values.changes(snapshot.metrics.as_ref(), id);
            snapshot.metrics = Some(values);
            let old_state = snapshot.congestion_state.replace(state);
            if let Some(m) = metrics {
                q.emit(now, QlogEvent::RecoveryMetricsUpdated(m));
            }
            if old_state != Some(state) {
                let update = CongestionStateUpdated {
                    old: old_state,
                    new: state,
                    path_id: Some(u64::from(id)),
                };
                q.emit(now, QlogEvent::CongestionStateUpdated(update));
            }
        }
    }
}
