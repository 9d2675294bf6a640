//! Typed qlog event records (draft-ietf-quic-qlog-quic-events, the `quic` namespace; the
//! `name` values are `quic:<event>` per §"QUIC Event Overview").
//!
//! Every event that happens on one path carries `path_id` in its data: the multipath extension
//! field (draft-ietf-quic-multipath defines no qlog events, so mpquic adds it through the
//! `$$quic-*-extension` group sockets each event definition has). Fields the draft marks
//! optional are left out when unknown.

use serde::Serialize;

use super::frames::QlogFrame;

/// One qlog event: its `name` and `data` (the record's `time` is added by the sink).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "name", content = "data")]
pub enum QlogEvent {
    /// §"connection_started".
    #[serde(rename = "quic:connection_started")]
    ConnectionStarted(ConnectionStarted),
    /// §"connection_closed".
    #[serde(rename = "quic:connection_closed")]
    ConnectionClosed(ConnectionClosed),
    /// §"connection_state_updated".
    #[serde(rename = "quic:connection_state_updated")]
    ConnectionStateUpdated(ConnectionStateUpdated),
    /// §"parameters_set" (boxed: the largest record).
    #[serde(rename = "quic:parameters_set")]
    ParametersSet(Box<ParametersSet>),
    /// §"packet_sent".
    #[serde(rename = "quic:packet_sent")]
    PacketSent(PacketEvent),
    /// §"packet_received".
    #[serde(rename = "quic:packet_received")]
    PacketReceived(PacketEvent),
    /// §"packet_lost".
    #[serde(rename = "quic:packet_lost")]
    PacketLost(PacketLost),
    /// §"recovery_metrics_updated".
    #[serde(rename = "quic:recovery_metrics_updated")]
    RecoveryMetricsUpdated(RecoveryMetrics),
    /// §"congestion_state_updated".
    #[serde(rename = "quic:congestion_state_updated")]
    CongestionStateUpdated(CongestionStateUpdated),
    /// §"stream_data_moved".
    #[serde(rename = "quic:stream_data_moved")]
    StreamDataMoved(StreamDataMoved),
    /// §"key_updated".
    #[serde(rename = "quic:key_updated")]
    KeyUpdated(KeyEvent),
    /// §"key_discarded".
    #[serde(rename = "quic:key_discarded")]
    KeyDiscarded(KeyEvent),
    /// §"mtu_updated" (path MTU discovery, RFC 9000 §14.3), per path.
    #[serde(rename = "quic:mtu_updated")]
    MtuUpdated(MtuUpdated),
    /// §"recovery_parameters_set", per path, when reordering raised a loss threshold.
    #[serde(rename = "quic:recovery_parameters_set")]
    RecoveryParametersSet(RecoveryParametersSet),
}

impl QlogEvent {
    /// The event's `name` field.
    pub fn name(&self) -> &'static str {
        match self {
            QlogEvent::ConnectionStarted(_) => "quic:connection_started",
            QlogEvent::ConnectionClosed(_) => "quic:connection_closed",
            QlogEvent::ConnectionStateUpdated(_) => "quic:connection_state_updated",
            QlogEvent::ParametersSet(_) => "quic:parameters_set",
            QlogEvent::PacketSent(_) => "quic:packet_sent",
            QlogEvent::PacketReceived(_) => "quic:packet_received",
            QlogEvent::PacketLost(_) => "quic:packet_lost",
            QlogEvent::RecoveryMetricsUpdated(_) => "quic:recovery_metrics_updated",
            QlogEvent::CongestionStateUpdated(_) => "quic:congestion_state_updated",
            QlogEvent::StreamDataMoved(_) => "quic:stream_data_moved",
            QlogEvent::KeyUpdated(_) => "quic:key_updated",
            QlogEvent::KeyDiscarded(_) => "quic:key_discarded",
            QlogEvent::MtuUpdated(_) => "quic:mtu_updated",
            QlogEvent::RecoveryParametersSet(_) => "quic:recovery_parameters_set",
        }
    }

    /// The path the event belongs to, for path-level events.
    pub fn path_id(&self) -> Option<u64> {
        match self {
            QlogEvent::PacketSent(p) | QlogEvent::PacketReceived(p) => p.path_id,
            QlogEvent::PacketLost(p) => p.path_id,
            QlogEvent::RecoveryMetricsUpdated(m) => m.path_id,
            QlogEvent::CongestionStateUpdated(c) => c.path_id,
            QlogEvent::MtuUpdated(m) => m.path_id,
            QlogEvent::RecoveryParametersSet(r) => r.path_id,
            _ => None,
        }
    }
}

/// Lowercase hex of `bytes` (the drafts' `hexstring`, used for connection IDs and tokens).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

/// §"TupleEndpointInfo": one half of a four-tuple.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TupleEndpointInfo {
    /// The IPv4 address, when the endpoint is IPv4 (§"TupleEndpointInfo" `ip_v4`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_v4: Option<String>,
    /// The UDP port, when the endpoint is IPv4 (`port_v4`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_v4: Option<u16>,
    /// The IPv6 address, when the endpoint is IPv6 (`ip_v6`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ip_v6: Option<String>,
    /// The UDP port, when the endpoint is IPv6 (`port_v6`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub port_v6: Option<u16>,
    /// Connection IDs, hex (`connection_ids`); empty when none is known.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub connection_ids: Vec<String>,
}

impl TupleEndpointInfo {
    /// The address `addr` with the connection ID used towards it.
    pub fn new(addr: std::net::SocketAddr, cid: Option<&[u8]>) -> Self {
        let mut info = TupleEndpointInfo {
            connection_ids: cid.map(hex).into_iter().collect(),
            ..Default::default()
        };
        match addr {
            std::net::SocketAddr::V4(a) => {
                info.ip_v4 = Some(a.ip().to_string());
                info.port_v4 = Some(a.port());
            }
            std::net::SocketAddr::V6(a) => {
                info.ip_v6 = Some(a.ip().to_string());
                info.port_v6 = Some(a.port());
            }
        }
        info
    }
}

/// §"connection_started".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionStarted {
    /// Path 0's local address and a connection ID this endpoint issued (`local`).
    pub local: TupleEndpointInfo,
    /// Path 0's peer address and the connection ID in use towards the peer (`remote`).
    pub remote: TupleEndpointInfo,
}

/// §"connection_closed".
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ConnectionClosed {
    /// "local" or "remote" (§"Initiator").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initiator: Option<&'static str>,
    /// A `$TransportError` name or `crypto_error_0x1XX`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection_error: Option<String>,
    /// Always "unknown": mpquic's applications define no error names.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub application_error: Option<&'static str>,
    /// The raw code when an error above is "unknown".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<u64>,
    /// The reason phrase of the CONNECTION_CLOSE (`reason`), when there was one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// idle_timeout, application, error, version_mismatch, stateless_reset, unspecified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<&'static str>,
}

/// §"connection_state_updated" (BaseConnectionStates and GranularConnectionStates).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ConnectionStateUpdated {
    /// The previously logged state (`old`); absent for the first update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<&'static str>,
    /// The new state (`new`): attempted, handshake_started, handshake_complete,
    /// handshake_confirmed, closing, draining or closed.
    pub new: &'static str,
}

/// §"parameters_set": transport parameters of one side, plus the multipath ones as extension
/// fields (RFC 10069 `initial_max_path_id`, draft-01 `enable_multipath`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ParametersSet {
    /// "local" or "remote".
    pub initiator: &'static str,
    /// The client's original Destination Connection ID, hex (RFC 9000 §18.2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub original_destination_connection_id: Option<String>,
    /// The sender's initial Source Connection ID, hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_source_connection_id: Option<String>,
    /// The Retry packet's Source Connection ID, hex (server only, after a Retry).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_source_connection_id: Option<String>,
    /// The stateless reset token, hex (server only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stateless_reset_token: Option<String>,
    /// disable_active_migration (RFC 9000 §18.2).
    pub disable_active_migration: bool,
    /// max_idle_timeout, in milliseconds (0: no idle timeout).
    pub max_idle_timeout: u64,
    /// max_udp_payload_size, in bytes.
    pub max_udp_payload_size: u64,
    /// ack_delay_exponent (the ACK Delay field is scaled by 2^exponent microseconds).
    pub ack_delay_exponent: u64,
    /// max_ack_delay, in milliseconds.
    pub max_ack_delay: u64,
    /// active_connection_id_limit, in connection IDs.
    pub active_connection_id_limit: u64,
    /// initial_max_data: the connection-level flow control limit, in bytes.
    pub initial_max_data: u64,
    /// initial_max_stream_data_bidi_local: limit for locally initiated bidirectional streams,
    /// in bytes.
    pub initial_max_stream_data_bidi_local: u64,
    /// initial_max_stream_data_bidi_remote: limit for peer-initiated bidirectional streams,
    /// in bytes.
    pub initial_max_stream_data_bidi_remote: u64,
    /// initial_max_stream_data_uni: limit for unidirectional streams, in bytes.
    pub initial_max_stream_data_uni: u64,
    /// initial_max_streams_bidi: the number of bidirectional streams the peer may open.
    pub initial_max_streams_bidi: u64,
    /// initial_max_streams_uni: the number of unidirectional streams the peer may open.
    pub initial_max_streams_uni: u64,
    /// Multipath extension: RFC 10069 initial_max_path_id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_max_path_id: Option<u64>,
    /// Multipath extension: draft-01 enable_multipath (SPNS/MPNS negotiation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enable_multipath: Option<u64>,
    /// mpquic's SPNS path-ID limit (spns_max_path_id).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spns_max_path_id: Option<u64>,
    /// draft-ietf-quic-ack-frequency min_ack_delay, in microseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_ack_delay: Option<u64>,
}

/// §"RawInfo" of the main schema: byte counts (the data itself is never logged).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RawInfo {
    /// `length`: the whole item's size, in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length: Option<u64>,
    /// `payload_length`: the size of its payload, in bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub payload_length: Option<u64>,
}

impl RawInfo {
    /// `raw.length` only.
    pub fn length(n: u64) -> Self {
        RawInfo {
            length: Some(n),
            payload_length: None,
        }
    }
}

/// §"PacketHeader".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PacketHeader {
    /// initial, handshake, 0RTT, 1RTT (§"PacketType").
    pub packet_type: &'static str,
    /// The packet number (`packet_number`); the full number, not its truncated wire encoding.
    pub packet_number: u64,
    /// "only if packet_type === initial || handshake || 0RTT": packet number plus payload.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub length: Option<u64>,
    /// Source Connection ID, hex (`scid`); long headers only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scid: Option<String>,
    /// Destination Connection ID, hex (`dcid`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dcid: Option<String>,
}

/// §"packet_sent" and §"packet_received".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PacketEvent {
    /// §"PacketHeader" (`header`).
    pub header: PacketHeader,
    /// The packet's frames in order (`frames`).
    pub frames: Vec<QlogFrame>,
    /// The whole packet (header, payload, AEAD tag) and its payload.
    pub raw: RawInfo,
    /// Multipath extension: the path the packet was sent or received on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_id: Option<u64>,
}

/// §"packet_lost".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PacketLost {
    /// §"PacketHeader" of the lost packet (`header`); connection IDs and `length` are not logged.
    pub header: PacketHeader,
    /// reordering_threshold, time_threshold or pto_expired; absent when the packet's path went
    /// away (handover, abandon) and its data moved to other paths.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger: Option<&'static str>,
    /// Multipath extension: the path the packet was sent on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_id: Option<u64>,
}

/// §"recovery_metrics_updated": only the metrics that changed since the path's previous event.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RecoveryMetrics {
    /// Milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min_rtt: Option<f64>,
    /// Smoothed RTT (`smoothed_rtt`), milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smoothed_rtt: Option<f64>,
    /// Latest RTT sample (`latest_rtt`), milliseconds; absent until the path has a sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latest_rtt: Option<f64>,
    /// RTT variation (`rtt_variance`), milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_variance: Option<f64>,
    /// Consecutive PTO expirations on the path (`pto_count`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pto_count: Option<u16>,
    /// Bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub congestion_window: Option<u64>,
    /// Bytes in flight on the path (`bytes_in_flight`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes_in_flight: Option<u64>,
    /// Slow start threshold (`ssthresh`), bytes; absent while the controller has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ssthresh: Option<u64>,
    /// Bits per second.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pacing_rate: Option<u64>,
    /// Multipath extension: the path the metrics belong to.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_id: Option<u64>,
}

/// §"congestion_state_updated".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CongestionStateUpdated {
    /// The previously logged state (`old`); absent for the path's first update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<&'static str>,
    /// The congestion controller's state (`new`), e.g. slow_start, congestion_avoidance,
    /// recovery, application_limited.
    pub new: &'static str,
    /// Multipath extension: the path whose controller changed state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_id: Option<u64>,
}

/// §"stream_data_moved".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StreamDataMoved {
    /// The stream (`stream_id`).
    pub stream_id: u64,
    /// application, transport or network (§"$DataLocation").
    pub from: &'static str,
    /// Where the data went (`to`): application or transport.
    pub to: &'static str,
    /// fin_set or stream_reset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_info: Option<&'static str>,
    /// Bytes moved, in `raw.length`.
    pub raw: RawInfo,
}

/// §"key_updated" and §"key_discarded".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KeyEvent {
    /// §"KeyType", e.g. client_1rtt_secret.
    pub key_type: &'static str,
    /// The full 1-RTT key phase (RFC 9001 §6: the number of updates so far).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_phase: Option<u64>,
    /// tls, remote_update or local_update.
    pub trigger: &'static str,
}

/// §"recovery_parameters_set": the loss-detection thresholds of a path after reordering raised
/// one (RFC 9002 §6.1.1, §6.1.2; `recovery::reordering`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecoveryParametersSet {
    /// The packet threshold (`reordering_threshold`), packets.
    pub reordering_threshold: u64,
    /// The time threshold (`time_threshold`), in RTTs.
    pub time_threshold: f64,
    /// Multipath extension: the path whose thresholds changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_id: Option<u64>,
}

/// §"mtu_updated": the path's maximum datagram size changed; `done` when the search ended.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MtuUpdated {
    /// The previous maximum datagram size (`old`), bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old: Option<u16>,
    /// The new maximum datagram size (`new`), bytes.
    pub new: u16,
    /// Whether path MTU discovery has finished on this path (`done`).
    pub done: bool,
    /// Multipath extension: the path whose MTU changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path_id: Option<u64>,
}
