//! Connection and path statistics in the runtime's units: durations as [`Duration`], points
//! in time as [`tokio::time::Instant`], counts as integers.
//!
//! The core reports times in its own units (floating-point milliseconds, and `Timestamp`s
//! counted from the endpoint's creation); [`crate::Connection::core_stats`] gives that raw
//! snapshot to tools that record it (the lab's JSON results).

use std::net::SocketAddr;
use std::time::Duration;

use tokio::time::Instant;

use crate::state::Shared;
use crate::PathId;
use mpquic_proto::{cc::CcStats, EcnPathStats, MtuCounters, MtuPhase};
use mpquic_proto::{PathCounters, Validation};

/// The core's counters of one connection (packets, bytes, ACK frames, 0-RTT, ...); its
/// `handshake_completed_at` is in the core's clock: use [`ConnectionStats::handshake_completed_at`].
pub use mpquic_proto::ConnectionStats as ConnectionCounters;

/// Statistics of one connection.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct ConnectionStats {
    /// When the handshake completed (RFC 9001 §4.1.1), if it has.
    pub handshake_completed_at: Option<Instant>,
    /// Counters: datagrams, packets, bytes, losses, ACK frames, DATAGRAM frames, 0-RTT.
    pub counters: ConnectionCounters,
}

impl std::ops::Deref for ConnectionStats {
    type Target = ConnectionCounters;

    /// The counters are read as fields of the statistics (`stats.packets_sent`).
    fn deref(&self) -> &ConnectionCounters {
        &self.counters
    }
}

/// Statistics of one path.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PathStats {
    /// The path's ID (RFC 10069 §2; 0 is the handshake path).
    pub id: PathId,
    /// Our address on the path.
    pub local: SocketAddr,
    /// The peer's address on the path.
    pub remote: SocketAddr,
    /// Path validation (RFC 9000 §8.2): pending, validated or failed.
    pub validation: Validation,
    /// Whether either side marked the path as backup (RFC 10069 §3.3).
    pub backup: bool,
    /// PATH_ABANDON was sent or received (RFC 10069 §3.4).
    pub abandoned: bool,
    /// Smoothed round-trip time (RFC 9002 §5.3).
    pub rtt: Duration,
    /// Minimum round-trip time seen (RFC 9002 §5.2).
    pub min_rtt: Duration,
    /// Round-trip time variation (RFC 9002 §5.3).
    pub rtt_var: Duration,
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Bytes sent and neither acknowledged nor declared lost.
    pub bytes_in_flight: u64,
    /// Current largest UDP payload of the path in bytes (path MTU discovery, RFC 9000 §14.3).
    pub mtu: u64,
    /// Path MTU discovery state (RFC 8899 §5.2) and counters.
    pub mtu_phase: MtuPhase,
    /// Path MTU discovery probes and black holes.
    pub mtu_counters: MtuCounters,
    /// The congestion controller's state.
    pub congestion: CcStats,
    /// Packets, bytes, losses, RTT samples, DATAGRAM frames on this path.
    pub counters: PathCounters,
    /// ECN validation state and counts (RFC 9000 §13.4).
    pub ecn: EcnPathStats,
    /// Loss detection's packet threshold on the path (RFC 9002 §6.1.1): 3, raised by
    /// reordering up to `TransportConfig::max_packet_threshold`.
    pub packet_threshold: u64,
    /// Loss detection's time threshold on the path in RTTs (RFC 9002 §6.1.2): 1.125, raised
    /// by reordering up to `TransportConfig::max_time_threshold`.
    pub time_threshold: f64,
}

impl From<mpquic_proto::PathStats> for PathStats {
    fn from(p: mpquic_proto::PathStats) -> Self {
        let ms = |v: f64| Duration::from_secs_f64(v.max(0.0) / 1e3);
        Self {
            id: p.id,
            local: p.local,
            remote: p.remote,
            validation: p.validation,
            backup: p.backup,
            abandoned: p.abandoned,
            rtt: ms(p.srtt_ms),
            min_rtt: ms(p.min_rtt_ms),
            rtt_var: ms(p.rttvar_ms),
            cwnd: p.cwnd,
            bytes_in_flight: p.bytes_in_flight,
            mtu: p.mtu,
            mtu_phase: p.mtu_phase,
            mtu_counters: p.mtu_counters,
            congestion: p.cc,
            counters: p.counters,
            ecn: p.ecn,
            packet_threshold: p.packet_threshold,
            time_threshold: p.time_threshold,
        }
    }
}

impl ConnectionStats {
    pub(crate) fn from_core(shared: &Shared, counters: ConnectionCounters) -> Self {
        Self {
            handshake_completed_at: counters.handshake_completed_at.map(|t| shared.instant(t)),
            counters,
        }
    }
}
