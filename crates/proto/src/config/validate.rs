//! Range and consistency checks of the configuration, in one place: the API (connect, server
//! setup), the command line and the lab's scenario files all refuse an invalid value through
//! [`TransportConfig::validate`], each with one line naming the field. A value the core or the
//! peer would refuse otherwise only shows up in the middle of a run (a transport parameter out
//! of range is a failed handshake; a zero threshold or limit a stalled connection).

use super::{ClientConfig, EndpointConfig, ServerConfig, TransportConfig};
use crate::reinjection::ReinjectionMode;
use crate::time::Duration;

/// Most ranges an ACK frame may carry (`ack.max_range_limit`): this many ranges (two varints
/// each, up to 8 bytes apiece) still fit, with the frame's header, in a 1200-byte datagram, so
/// a larger frame could not always be sent. The Alibaba report's Maximum_Limit is 64 (§2.4).
pub const MAX_ACK_RANGES: usize = 64;

/// RFC 9000 §18.2: max_ack_delay values of 2^14 ms or more are invalid.
pub(super) const MAX_ACK_DELAY_MS: u64 = (1 << 14) - 1;

/// RFC 9000 §18.2: ack_delay_exponent values above 20 are invalid.
pub(super) const MAX_ACK_DELAY_EXPONENT: u8 = 20;

/// RFC 9000 §14 (smallest datagram a QUIC path must carry) and §18.2 (largest
/// max_udp_payload_size).
pub(super) const DATAGRAM_SIZES: std::ops::RangeInclusive<u16> = 1200..=65527;

/// The largest initial RTT accepted (a minute; RFC 9002 §6.2.2 recommends 333 ms).
pub(super) const MAX_INITIAL_RTT: Duration = Duration::from_secs(60);

/// RFC 9000 §4.6: stream counts above 2^60 cannot be encoded in a stream ID.
const MAX_STREAMS: u64 = crate::streams::MAX_STREAM_COUNT;

/// RFC 9000 §16: largest varint, the bound of every flow-control limit.
const MAX_VARINT: u64 = (1 << 62) - 1;

/// A configuration value that cannot be used: `field` is the setting's path in
/// [`TransportConfig`] (`ack.default_range_limit`, `idle_timeout`, ...), `problem` says why.
/// Displayed as one line, `FIELD: PROBLEM`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
#[non_exhaustive]
pub struct ConfigError {
    /// The offending setting, as a path of field names.
    pub field: String,
    /// What is wrong with its value.
    pub problem: String,
}

impl ConfigError {
    /// An error about `field`.
    pub fn new(field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            problem: problem.into(),
        }
    }

    fn out_of_range(field: &str, value: impl std::fmt::Display, expected: &str) -> Self {
        Self::new(
            field,
            format!("{value} is out of range: expected {expected}"),
        )
    }

    /// The same error under another name for the field (a file's or a flag's name for it).
    pub fn renamed(self, field: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            ..self
        }
    }
}

/// `Err(out_of_range)` unless `range` contains `value`.
fn check_range<T: PartialOrd + std::fmt::Display>(
    field: &str,
    value: T,
    range: std::ops::RangeInclusive<T>,
    why: &str,
) -> Result<(), ConfigError> {
    if range.contains(&value) {
        return Ok(());
    }
    let expected = format!("{}..={}{why}", range.start(), range.end());
    Err(ConfigError::out_of_range(field, value, &expected))
}

impl TransportConfig {
    /// Checks every setting against what the protocol allows and what this implementation
    /// needs; the error names the first invalid field. [`crate::Endpoint::connect`] and
    /// [`ServerConfig::validate`] call it, so an invalid configuration never starts a
    /// connection.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.validate_timing()?;
        self.validate_sizes()?;
        self.validate_ack()?;
        self.validate_paths()?;
        self.validate_streams()
    }

    fn validate_timing(&self) -> Result<(), ConfigError> {
        // RFC 9000 §18.2: max_idle_timeout is sent in milliseconds; a fraction would be sent
        // rounded down (a sub-millisecond value as 0, "disabled") while this endpoint still
        // timed out at the exact value.
        if self.idle_timeout.subsec_nanos() % 1_000_000 != 0 {
            return Err(ConfigError::new(
                "idle_timeout",
                format!(
                    "{:?} is not a whole number of milliseconds (0 disables the idle timeout)",
                    self.idle_timeout
                ),
            ));
        }
        if self.initial_rtt.is_zero() || self.initial_rtt > MAX_INITIAL_RTT {
            return Err(ConfigError::out_of_range(
                "initial_rtt",
                format!("{:?}", self.initial_rtt),
                "more than 0 and at most 60s",
            ));
        }
        if self.key_update_interval == Some(0) {
            return Err(ConfigError::out_of_range(
                "key_update_interval",
                0,
                "at least 1 packet (None: only at the AEAD limits)",
            ));
        }
        if self.path_idle_timeout.is_some_and(|t| t.is_zero()) {
            return Err(ConfigError::out_of_range(
                "path_idle_timeout",
                "0s",
                "more than 0 (None: never)",
            ));
        }
        Ok(())
    }

    fn validate_sizes(&self) -> Result<(), ConfigError> {
        check_range(
            "max_datagram_size",
            self.max_datagram_size,
            DATAGRAM_SIZES,
            " (RFC 9000 §14, §18.2)",
        )?;
        if let Some(mtud) = &self.mtu_discovery {
            check_range(
                "mtu_discovery.ceiling",
                mtud.ceiling,
                DATAGRAM_SIZES,
                " (RFC 9000 §14, §18.2)",
            )?;
            // Up to the ceiling it is off, so only the top of the range matters.
            check_range(
                "mtu_discovery.same_host_ceiling",
                mtud.same_host_ceiling,
                0..=*DATAGRAM_SIZES.end(),
                " (RFC 9000 §18.2; at most `ceiling` turns it off)",
            )?;
            if mtud.max_probes == 0 {
                return Err(ConfigError::out_of_range(
                    "mtu_discovery.max_probes",
                    0,
                    "at least 1 (RFC 8899 §5.1.2 MAX_PROBES)",
                ));
            }
            if mtud.min_step == 0 {
                return Err(ConfigError::out_of_range(
                    "mtu_discovery.min_step",
                    0,
                    "at least 1 byte",
                ));
            }
        }
        Ok(())
    }

    fn validate_ack(&self) -> Result<(), ConfigError> {
        let ack = &self.ack;
        if ack.ack_eliciting_threshold == 0 {
            return Err(ConfigError::out_of_range(
                "ack.ack_eliciting_threshold",
                0,
                "at least 1 (1 acknowledges every ack-eliciting packet at once)",
            ));
        }
        check_range(
            "ack.max_ack_delay_ms",
            ack.max_ack_delay_ms,
            0..=MAX_ACK_DELAY_MS,
            " (RFC 9000 §18.2)",
        )?;
        check_range(
            "ack.ack_delay_exponent",
            ack.ack_delay_exponent,
            0..=MAX_ACK_DELAY_EXPONENT,
            " (RFC 9000 §18.2)",
        )?;
        // The one check of the ACK range limits: the encoder (`ack::select_ranges`) relies on
        // 1 <= default_range_limit <= max_range_limit <= MAX_ACK_RANGES.
        check_range(
            "ack.max_range_limit",
            ack.max_range_limit,
            1..=MAX_ACK_RANGES,
            " (Alibaba report §2.4 Maximum_Limit)",
        )?;
        check_range(
            "ack.default_range_limit",
            ack.default_range_limit,
            1..=ack.max_range_limit,
            " (ack.max_range_limit)",
        )?;
        if let Some(us) = ack.min_ack_delay_us {
            // draft-ietf-quic-ack-frequency §3: min_ack_delay above max_ack_delay is a
            // TRANSPORT_PARAMETER_ERROR at the peer.
            check_range(
                "ack.min_ack_delay_us",
                us,
                0..=ack.max_ack_delay_ms.saturating_mul(1000),
                " (at most ack.max_ack_delay_ms)",
            )?;
        }
        Ok(())
    }

    fn validate_paths(&self) -> Result<(), ConfigError> {
        // RFC 9000 §18.2: an active_connection_id_limit below 2 is invalid.
        if self.active_connection_id_limit < 2 {
            return Err(ConfigError::out_of_range(
                "active_connection_id_limit",
                self.active_connection_id_limit,
                "at least 2 (RFC 9000 §18.2)",
            ));
        }
        // RFC 9002 §6.1.1: the packet threshold SHOULD NOT be below 3; above 2^16 a path
        // could not hold that many packets in flight anyway.
        if !(crate::recovery::ledger::PACKET_THRESHOLD..=65_536)
            .contains(&self.max_packet_threshold)
        {
            return Err(ConfigError::out_of_range(
                "max_packet_threshold",
                self.max_packet_threshold,
                "3 (fixed, RFC 9002 §6.1.1) to 65536",
            ));
        }
        // RFC 9002 §6.1.2: the time threshold SHOULD NOT be below 9/8; beyond 8 RTTs the PTO
        // would always come first.
        if !(1.125..=8.0).contains(&self.max_time_threshold) {
            return Err(ConfigError::out_of_range(
                "max_time_threshold",
                self.max_time_threshold,
                "1.125 (fixed, RFC 9002 §6.1.2) to 8 RTTs",
            ));
        }
        if self.path_failure_ptos == 0 {
            return Err(ConfigError::out_of_range(
                "path_failure_ptos",
                0,
                "at least 1",
            ));
        }
        if let ReinjectionMode::Qoe { lower_ms, upper_ms } = self.reinjection {
            // XLINK Alg. 1: the lower play-time threshold is below the upper one.
            if lower_ms >= upper_ms {
                return Err(ConfigError::new(
                    "reinjection",
                    format!("lower_ms ({lower_ms}) must be below upper_ms ({upper_ms})"),
                ));
            }
        }
        Ok(())
    }

    fn validate_streams(&self) -> Result<(), ConfigError> {
        let s = &self.streams;
        check_range(
            "streams.max_streams_bidi",
            s.max_streams_bidi,
            0..=MAX_STREAMS,
            " (RFC 9000 §4.6)",
        )?;
        check_range(
            "streams.max_streams_uni",
            s.max_streams_uni,
            0..=MAX_STREAMS,
            " (RFC 9000 §4.6)",
        )?;
        for (field, value) in [
            ("streams.max_data", s.max_data),
            (
                "streams.max_stream_data_bidi_local",
                s.max_stream_data_bidi_local,
            ),
            (
                "streams.max_stream_data_bidi_remote",
                s.max_stream_data_bidi_remote,
            ),
            ("streams.max_stream_data_uni", s.max_stream_data_uni),
            ("streams.max_window", s.max_window),
        ] {
            check_range(field, value, 0..=MAX_VARINT, " (RFC 9000 §16)")?;
        }
        Ok(())
    }
}

impl ClientConfig {
    /// Checks the transport settings ([`TransportConfig::validate`]).
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.transport.validate()
    }
}

impl ServerConfig {
    /// Checks the transport settings ([`TransportConfig::validate`]) and the server's limits.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.transport.validate()?;
        if self.max_handshakes == 0 {
            return Err(ConfigError::out_of_range("max_handshakes", 0, "at least 1"));
        }
        if self.max_connections == 0 {
            return Err(ConfigError::out_of_range(
                "max_connections",
                0,
                "at least 1",
            ));
        }
        // RFC 9000 §18.2: an all-zero address encodes "no address of this family", so an
        // unspecified IP or port 0 cannot be advertised.
        for addr in self.preferred_addresses() {
            if addr.ip().is_unspecified() || addr.port() == 0 {
                return Err(ConfigError::new(
                    "preferred_address",
                    format!("{addr} is not an address clients can reach"),
                ));
            }
        }
        Ok(())
    }
}

impl EndpointConfig {
    /// Checks the connection ID length (RFC 9000 §17.2: at most 20 bytes; at least 4 here, so
    /// that connection IDs route and do not collide).
    pub fn validate(&self) -> Result<(), ConfigError> {
        check_range("cid_len", self.cid_len, 4..=20, " (RFC 9000 §17.2)")
    }
}

#[cfg(test)]
mod tests;
