//! Transport parameters (RFC 9000 §18), plus extensions:
//! - `max_datagram_frame_size` (0x20, RFC 9221 §3),
//! - `initial_max_path_id` (0x3e, RFC 10069 §"initial_max_path_id Transport
//!   Parameter", suggested codepoint),
//! - `enable_multipath` (0xbabf, draft-ietf-quic-multipath-01 §"Multipath
//!   Negotiation", experimental codepoint),
//! - `min_ack_delay` (0xff04de1b, draft-ietf-quic-ack-frequency §"Negotiating
//!   Extension Use"),
//! - `enable_qoe_feedback` (0x3f5154, XLINK; an experimental, unregistered id
//!   chosen by this crate next to the QoE frame type 0x3f5153; zero-length
//!   value, like `disable_active_migration`).

use crate::cid::{ConnectionId, ResetToken, MAX_CID_LEN};
use crate::codec::Reader;
use crate::error::TransportErrorCode;
use crate::stream_id::Side;
use crate::varint::{varint_size, write_varint};
use bytes::{BufMut, Bytes};
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddrV4, SocketAddrV6};

/// Transport parameter identifiers.
pub mod id {
    /// original_destination_connection_id (server only).
    pub const ORIGINAL_DESTINATION_CONNECTION_ID: u64 = 0x00;
    /// max_idle_timeout (ms).
    pub const MAX_IDLE_TIMEOUT: u64 = 0x01;
    /// stateless_reset_token (server only).
    pub const STATELESS_RESET_TOKEN: u64 = 0x02;
    /// max_udp_payload_size.
    pub const MAX_UDP_PAYLOAD_SIZE: u64 = 0x03;
    /// initial_max_data.
    pub const INITIAL_MAX_DATA: u64 = 0x04;
    /// initial_max_stream_data_bidi_local.
    pub const INITIAL_MAX_STREAM_DATA_BIDI_LOCAL: u64 = 0x05;
    /// initial_max_stream_data_bidi_remote.
    pub const INITIAL_MAX_STREAM_DATA_BIDI_REMOTE: u64 = 0x06;
    /// initial_max_stream_data_uni.
    pub const INITIAL_MAX_STREAM_DATA_UNI: u64 = 0x07;
    /// initial_max_streams_bidi.
    pub const INITIAL_MAX_STREAMS_BIDI: u64 = 0x08;
    /// initial_max_streams_uni.
    pub const INITIAL_MAX_STREAMS_UNI: u64 = 0x09;
    /// ack_delay_exponent.
    pub const ACK_DELAY_EXPONENT: u64 = 0x0a;
    /// max_ack_delay (ms).
    pub const MAX_ACK_DELAY: u64 = 0x0b;
    /// disable_active_migration (zero-length).
    pub const DISABLE_ACTIVE_MIGRATION: u64 = 0x0c;
    /// preferred_address (server only).
    pub const PREFERRED_ADDRESS: u64 = 0x0d;
    /// active_connection_id_limit.
    pub const ACTIVE_CONNECTION_ID_LIMIT: u64 = 0x0e;
    /// initial_source_connection_id.
    pub const INITIAL_SOURCE_CONNECTION_ID: u64 = 0x0f;
    /// retry_source_connection_id (server only).
    pub const RETRY_SOURCE_CONNECTION_ID: u64 = 0x10;
    /// max_datagram_frame_size (RFC 9221 §3).
    pub const MAX_DATAGRAM_FRAME_SIZE: u64 = 0x20;
    /// initial_max_path_id (RFC 10069).
    pub const INITIAL_MAX_PATH_ID: u64 = 0x3e;
    /// enable_multipath (draft-ietf-quic-multipath-01).
    pub const ENABLE_MULTIPATH: u64 = 0xbabf;
    /// min_ack_delay (ack-frequency), microseconds.
    pub const MIN_ACK_DELAY: u64 = 0xff04_de1b;
    /// enable_qoe_feedback (XLINK, experimental id chosen by this crate).
    pub const ENABLE_QOE_FEEDBACK: u64 = 0x3f_5154;
    /// spns_max_path_id (mpquic's SPNS: the path-ID limit, as initial_max_path_id is for
    /// MPNS; experimental id chosen by this crate, docs/MULTIPATH.md).
    pub const SPNS_MAX_PATH_ID: u64 = 0x3f_5350;
}

/// A transport parameter validation or encoding failure; always a
/// TRANSPORT_PARAMETER_ERROR (RFC 9000 §7.4, §18.2).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("transport parameter error: {reason}")]
pub struct TransportParamError {
    /// What was wrong.
    pub reason: String,
}

impl TransportParamError {
    fn new(reason: impl Into<String>) -> Self {
        TransportParamError {
            reason: reason.into(),
        }
    }

    /// The error code to close the connection with: TRANSPORT_PARAMETER_ERROR.
    pub fn code(&self) -> TransportErrorCode {
        TransportErrorCode::TRANSPORT_PARAMETER_ERROR
    }
}

/// The server's preferred address (RFC 9000 §18.2, §9.6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreferredAddress {
    /// IPv4 address (`None` encodes as 0.0.0.0:0).
    pub address_v4: Option<SocketAddrV4>,
    /// IPv6 address (`None` encodes as `[::]:0`).
    pub address_v6: Option<SocketAddrV6>,
    /// Connection ID to use on the preferred address (non-empty).
    pub connection_id: ConnectionId,
    /// Stateless reset token for `connection_id`.
    pub stateless_reset_token: ResetToken,
}

impl PreferredAddress {
    /// Exact encoded length of the parameter value.
    pub fn encoded_len(&self) -> usize {
        4 + 2 + 16 + 2 + 1 + self.connection_id.len() + 16
    }

    /// Appends the parameter value (RFC 9000 §18.2, Figure 22).
    pub fn encode(&self, out: &mut impl BufMut) {
        let v4 = self
            .address_v4
            .unwrap_or(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0));
        out.put_slice(&v4.ip().octets());
        out.put_u16(v4.port());
        let v6 = self
            .address_v6
            .unwrap_or(SocketAddrV6::new(Ipv6Addr::UNSPECIFIED, 0, 0, 0));
        out.put_slice(&v6.ip().octets());
        out.put_u16(v6.port());
        out.put_u8(self.connection_id.len() as u8);
        out.put_slice(self.connection_id.as_slice());
        out.put_slice(&self.stateless_reset_token.0);
    }

    /// Decodes a parameter value; it must be consumed exactly. A zero-length
    /// connection ID is a TRANSPORT_PARAMETER_ERROR (RFC 9000 §18.2).
    pub fn decode(value: &[u8]) -> Result<PreferredAddress, TransportParamError> {
        let bad = |_| TransportParamError::new("malformed preferred_address");
        let mut r = Reader::new(value);
        let ip4 = Ipv4Addr::from(r.array::<4>().map_err(bad)?);
        let port4 = r.u16().map_err(bad)?;
        let ip6 = Ipv6Addr::from(r.array::<16>().map_err(bad)?);
        let port6 = r.u16().map_err(bad)?;
        let cid_len = usize::from(r.u8().map_err(bad)?);
        if cid_len == 0 || cid_len > MAX_CID_LEN {
            return Err(TransportParamError::new(
                "preferred_address connection ID length not in 1..=20",
            ));
        }
        let connection_id = ConnectionId::new(r.bytes(cid_len).map_err(bad)?)
            .map_err(|_| TransportParamError::new("preferred_address CID too long"))?;
        let stateless_reset_token = ResetToken(r.array().map_err(bad)?);
        if !r.is_empty() {
            return Err(TransportParamError::new(
                "trailing bytes in preferred_address",
            ));
        }
        // An all-zero address and port means "no address of this family".
        let address_v4 =
            (!ip4.is_unspecified() || port4 != 0).then(|| SocketAddrV4::new(ip4, port4));
        let address_v6 =
            (!ip6.is_unspecified() || port6 != 0).then(|| SocketAddrV6::new(ip6, port6, 0, 0));
        Ok(PreferredAddress {
            address_v4,
            address_v6,
            connection_id,
            stateless_reset_token,
        })
    }
}

/// QUIC transport parameters (RFC 9000 §18.2) with multipath, ack-frequency
/// and XLINK extensions. [`Default`] gives the RFC defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransportParameters {
    /// original_destination_connection_id (server only).
    pub original_destination_connection_id: Option<ConnectionId>,
    /// max_idle_timeout in ms (0 = disabled).
    pub max_idle_timeout_ms: u64,
    /// stateless_reset_token (server only).
    pub stateless_reset_token: Option<ResetToken>,
    /// max_udp_payload_size (default 65527, must be >= 1200).
    pub max_udp_payload_size: u64,
    /// initial_max_data.
    pub initial_max_data: u64,
    /// initial_max_stream_data_bidi_local.
    pub initial_max_stream_data_bidi_local: u64,
    /// initial_max_stream_data_bidi_remote.
    pub initial_max_stream_data_bidi_remote: u64,
    /// initial_max_stream_data_uni.
    pub initial_max_stream_data_uni: u64,
    /// initial_max_streams_bidi (<= 2^60).
    pub initial_max_streams_bidi: u64,
    /// initial_max_streams_uni (<= 2^60).
    pub initial_max_streams_uni: u64,
    /// ack_delay_exponent (default 3, <= 20).
    pub ack_delay_exponent: u64,
    /// max_ack_delay in ms (default 25, < 2^14).
    pub max_ack_delay_ms: u64,
    /// disable_active_migration.
    pub disable_active_migration: bool,
    /// preferred_address (server only).
    pub preferred_address: Option<PreferredAddress>,
    /// active_connection_id_limit (default 2, >= 2).
    pub active_connection_id_limit: u64,
    /// initial_source_connection_id.
    pub initial_source_connection_id: Option<ConnectionId>,
    /// retry_source_connection_id (server only).
    pub retry_source_connection_id: Option<ConnectionId>,
    /// max_datagram_frame_size (RFC 9221 §3): the largest DATAGRAM frame (type, length and
    /// payload) the sender accepts; 0 (the default, also when absent) = no DATAGRAM support.
    pub max_datagram_frame_size: u64,
    /// initial_max_path_id (RFC 10069; presence enables multipath; <= 2^32-1).
    pub initial_max_path_id: Option<u64>,
    /// enable_multipath (draft-01; 0..=3).
    pub enable_multipath: Option<u64>,
    /// spns_max_path_id (mpquic SPNS path-ID limit; <= 2^32-1).
    pub spns_max_path_id: Option<u64>,
    /// min_ack_delay in microseconds (ack-frequency).
    pub min_ack_delay_us: Option<u64>,
    /// enable_qoe_feedback (XLINK, zero-length flag).
    pub enable_qoe_feedback: bool,
    /// Unknown / grease parameters as received (never encoded).
    pub unknown: Vec<(u64, Bytes)>,
}

impl Default for TransportParameters {
    fn default() -> Self {
        TransportParameters {
            original_destination_connection_id: None,
            max_idle_timeout_ms: 0,
            stateless_reset_token: None,
            max_udp_payload_size: 65527,
            initial_max_data: 0,
            initial_max_stream_data_bidi_local: 0,
            initial_max_stream_data_bidi_remote: 0,
            initial_max_stream_data_uni: 0,
            initial_max_streams_bidi: 0,
            initial_max_streams_uni: 0,
            ack_delay_exponent: 3,
            max_ack_delay_ms: 25,
            disable_active_migration: false,
            preferred_address: None,
            active_connection_id_limit: 2,
            initial_source_connection_id: None,
            retry_source_connection_id: None,
            max_datagram_frame_size: 0,
            initial_max_path_id: None,
            enable_multipath: None,
            spns_max_path_id: None,
            min_ack_delay_us: None,
            enable_qoe_feedback: false,
            unknown: Vec::new(),
        }
    }
}

fn put_param(out: &mut impl BufMut, id: u64, value: &[u8]) {
    write_varint(out, id);
    write_varint(out, value.len() as u64);
    out.put_slice(value);
}

fn put_varint_param(out: &mut impl BufMut, id: u64, v: u64) {
    write_varint(out, id);
    write_varint(out, varint_size(v) as u64);
    write_varint(out, v);
}

/// Bit used for duplicate detection of known parameters.
fn known_bit(id: u64) -> Option<u32> {
    match id {
        0..=0x10 => Some(id as u32),
        id::INITIAL_MAX_PATH_ID => Some(17),
        id::ENABLE_MULTIPATH => Some(18),
        id::MIN_ACK_DELAY => Some(19),
        id::ENABLE_QOE_FEEDBACK => Some(20),
        id::MAX_DATAGRAM_FRAME_SIZE => Some(21),
        _ => None,
    }
}

impl TransportParameters {
    /// Appends the encoded parameters (RFC 9000 §18): parameters equal to
    /// their default are omitted; `unknown` is never encoded. Values must be
    /// `<= 2^62-1`.
    pub fn encode(&self, out: &mut impl BufMut) {
        let d = TransportParameters::default();
        let cid = |out: &mut _, id, c: &Option<ConnectionId>| {
            if let Some(c) = c {
                put_param(out, id, c.as_slice());
            }
        };
        cid(
            out,
            id::ORIGINAL_DESTINATION_CONNECTION_ID,
            &self.original_destination_connection_id,
        );
        let varints = [
            (
                id::MAX_IDLE_TIMEOUT,
                self.max_idle_timeout_ms,
                d.max_idle_timeout_ms,
            ),
            (
                id::MAX_UDP_PAYLOAD_SIZE,
                self.max_udp_payload_size,
                d.max_udp_payload_size,
            ),
            (id::INITIAL_MAX_DATA, self.initial_max_data, 0),
            (
                id::INITIAL_MAX_STREAM_DATA_BIDI_LOCAL,
                self.initial_max_stream_data_bidi_local,
                0,
            ),
            (
                id::INITIAL_MAX_STREAM_DATA_BIDI_REMOTE,
                self.initial_max_stream_data_bidi_remote,
                0,
            ),
            (
                id::INITIAL_MAX_STREAM_DATA_UNI,
                self.initial_max_stream_data_uni,
                0,
            ),
            (
                id::INITIAL_MAX_STREAMS_BIDI,
                self.initial_max_streams_bidi,
                0,
            ),
            (id::INITIAL_MAX_STREAMS_UNI, self.initial_max_streams_uni, 0),
            (
                id::ACK_DELAY_EXPONENT,
                self.ack_delay_exponent,
                d.ack_delay_exponent,
            ),
            (id::MAX_ACK_DELAY, self.max_ack_delay_ms, d.max_ack_delay_ms),
            (
                id::ACTIVE_CONNECTION_ID_LIMIT,
                self.active_connection_id_limit,
                d.active_connection_id_limit,
            ),
            (
                id::MAX_DATAGRAM_FRAME_SIZE,
                self.max_datagram_frame_size,
                d.max_datagram_frame_size,
            ),
        ];
        if let Some(t) = &self.stateless_reset_token {
            put_param(out, id::STATELESS_RESET_TOKEN, &t.0);
        }
        for (id, v, default) in varints {
            if v != default {
                put_varint_param(out, id, v);
            }
        }
        if self.disable_active_migration {
            put_param(out, id::DISABLE_ACTIVE_MIGRATION, &[]);
        }
        if let Some(pa) = &self.preferred_address {
            write_varint(out, id::PREFERRED_ADDRESS);
            write_varint(out, pa.encoded_len() as u64);
            pa.encode(out);
        }
        cid(
            out,
            id::INITIAL_SOURCE_CONNECTION_ID,
            &self.initial_source_connection_id,
        );
        cid(
            out,
            id::RETRY_SOURCE_CONNECTION_ID,
            &self.retry_source_connection_id,
        );
        let optional = [
            (id::INITIAL_MAX_PATH_ID, self.initial_max_path_id),
            (id::ENABLE_MULTIPATH, self.enable_multipath),
            (id::SPNS_MAX_PATH_ID, self.spns_max_path_id),
            (id::MIN_ACK_DELAY, self.min_ack_delay_us),
        ];
        for (id, v) in optional {
            if let Some(v) = v {
                put_varint_param(out, id, v);
            }
        }
        if self.enable_qoe_feedback {
            put_param(out, id::ENABLE_QOE_FEEDBACK, &[]);
        }
    }

    /// Decodes and validates parameters sent by `sender` (RFC 9000 §7.4,
    /// §18.2). Unknown and grease parameters are skipped (kept in `unknown`,
    /// RFC 9000 §18.1). Every failure is a TRANSPORT_PARAMETER_ERROR.
    pub fn decode(bytes: &[u8], sender: Side) -> Result<TransportParameters, TransportParamError> {
        let mut tp = TransportParameters::default();
        let mut seen = 0u32;
        let mut r = Reader::new(bytes);
        let trunc = |_| TransportParamError::new("truncated transport parameter");
        while !r.is_empty() {
            let id = r.varint().map_err(trunc)?;
            let len = r.varint().map_err(trunc)?;
            let value = r.bytes_u64(len).map_err(trunc)?;
            if let Some(bit) = known_bit(id) {
                if seen & (1 << bit) != 0 {
                    // RFC 9000 §7.4: duplicates SHOULD be an error.
                    return Err(TransportParamError::new(format!(
                        "duplicate parameter {id:#x}"
                    )));
                }
                seen |= 1 << bit;
            }
            tp.apply(id, value, sender)?;
        }
        tp.validate()?;
        Ok(tp)
    }

    /// Stores one parameter, checking its encoding and who may send it.
    fn apply(&mut self, id: u64, value: &[u8], sender: Side) -> Result<(), TransportParamError> {
        let server_only = matches!(
            id,
            id::ORIGINAL_DESTINATION_CONNECTION_ID
                | id::STATELESS_RESET_TOKEN
                | id::PREFERRED_ADDRESS
                | id::RETRY_SOURCE_CONNECTION_ID
        );
        if server_only && sender.is_client() {
            // RFC 9000 §18.2: a server MUST treat these from a client as an error.
            return Err(TransportParamError::new(format!(
                "server-only parameter {id:#x} sent by client"
            )));
        }
        let v = || varint_value(id, value);
        match id {
            id::ORIGINAL_DESTINATION_CONNECTION_ID => {
                self.original_destination_connection_id = Some(cid_value(id, value)?)
            }
            id::MAX_IDLE_TIMEOUT => self.max_idle_timeout_ms = v()?,
            id::STATELESS_RESET_TOKEN => {
                let t: [u8; 16] = value.try_into().map_err(|_| {
                    TransportParamError::new("stateless_reset_token must be 16 bytes")
                })?;
                self.stateless_reset_token = Some(ResetToken(t));
            }
            id::MAX_UDP_PAYLOAD_SIZE => self.max_udp_payload_size = v()?,
            id::INITIAL_MAX_DATA => self.initial_max_data = v()?,
            id::INITIAL_MAX_STREAM_DATA_BIDI_LOCAL => {
                self.initial_max_stream_data_bidi_local = v()?
            }
            id::INITIAL_MAX_STREAM_DATA_BIDI_REMOTE => {
                self.initial_max_stream_data_bidi_remote = v()?
            }
            id::INITIAL_MAX_STREAM_DATA_UNI => self.initial_max_stream_data_uni = v()?,
            id::INITIAL_MAX_STREAMS_BIDI => self.initial_max_streams_bidi = v()?,
            id::INITIAL_MAX_STREAMS_UNI => self.initial_max_streams_uni = v()?,
            id::ACK_DELAY_EXPONENT => self.ack_delay_exponent = v()?,
            id::MAX_ACK_DELAY => self.max_ack_delay_ms = v()?,
            id::DISABLE_ACTIVE_MIGRATION => self.disable_active_migration = flag_value(id, value)?,
            id::PREFERRED_ADDRESS => {
                self.preferred_address = Some(PreferredAddress::decode(value)?)
            }
            id::ACTIVE_CONNECTION_ID_LIMIT => self.active_connection_id_limit = v()?,
            id::INITIAL_SOURCE_CONNECTION_ID => {
                self.initial_source_connection_id = Some(cid_value(id, value)?)
            }
            id::RETRY_SOURCE_CONNECTION_ID => {
                self.retry_source_connection_id = Some(cid_value(id, value)?)
            }
            // RFC 9221 §3: a varint; any value is valid (0 = not supported).
            id::MAX_DATAGRAM_FRAME_SIZE => self.max_datagram_frame_size = v()?,
            id::INITIAL_MAX_PATH_ID => self.initial_max_path_id = Some(v()?),
            id::ENABLE_MULTIPATH => self.enable_multipath = Some(v()?),
            id::SPNS_MAX_PATH_ID => self.spns_max_path_id = Some(v()?),
            id::MIN_ACK_DELAY => self.min_ack_delay_us = Some(v()?),
            id::ENABLE_QOE_FEEDBACK => self.enable_qoe_feedback = flag_value(id, value)?,
            _ => self.unknown.push((id, Bytes::copy_from_slice(value))),
        }
        Ok(())
    }

    /// Value constraints of RFC 9000 §18.2 and the extensions.
    fn validate(&self) -> Result<(), TransportParamError> {
        let fail = |why: &str| Err(TransportParamError::new(why));
        if self.max_udp_payload_size < 1200 {
            return fail("max_udp_payload_size below 1200");
        }
        if self.ack_delay_exponent > 20 {
            return fail("ack_delay_exponent above 20");
        }
        if self.max_ack_delay_ms >= 1 << 14 {
            return fail("max_ack_delay of 2^14 ms or more");
        }
        if self.active_connection_id_limit < 2 {
            return fail("active_connection_id_limit below 2");
        }
        if self.initial_max_streams_bidi > 1 << 60 || self.initial_max_streams_uni > 1 << 60 {
            // RFC 9000 §19.11 / §18.2.
            return fail("initial_max_streams above 2^60");
        }
        if self
            .initial_max_path_id
            .is_some_and(|v| v > u64::from(u32::MAX))
        {
            // RFC 10069 §"initial_max_path_id Transport Parameter".
            return fail("initial_max_path_id above 2^32-1");
        }
        if self
            .spns_max_path_id
            .is_some_and(|v| v > u64::from(u32::MAX))
        {
            return fail("spns_max_path_id above 2^32-1");
        }
        if self.enable_multipath.is_some_and(|v| v > 3) {
            // draft-ietf-quic-multipath-01 §"Multipath Negotiation".
            return fail("enable_multipath above 3");
        }
        let max_ack_delay_us = self.max_ack_delay_ms.saturating_mul(1000);
        if self.min_ack_delay_us.is_some_and(|v| v > max_ack_delay_us) {
            // ack-frequency §"Negotiating Extension Use".
            return fail("min_ack_delay greater than max_ack_delay");
        }
        Ok(())
    }
}

/// A varint that must fill the whole value (RFC 9000 §18).
fn varint_value(id: u64, value: &[u8]) -> Result<u64, TransportParamError> {
    let mut r = Reader::new(value);
    match r.varint() {
        Ok(v) if r.is_empty() => Ok(v),
        _ => Err(TransportParamError::new(format!(
            "parameter {id:#x}: malformed varint value"
        ))),
    }
}

fn cid_value(id: u64, value: &[u8]) -> Result<ConnectionId, TransportParamError> {
    ConnectionId::new(value).map_err(|_| {
        TransportParamError::new(format!("parameter {id:#x}: connection ID longer than 20"))
    })
}

fn flag_value(id: u64, value: &[u8]) -> Result<bool, TransportParamError> {
    if value.is_empty() {
        Ok(true)
    } else {
        Err(TransportParamError::new(format!(
            "parameter {id:#x}: must be zero-length"
        )))
    }
}

#[cfg(test)]
#[path = "transport_params_tests.rs"]
mod tests;
