//! One network path of a connection: its 4-tuple, validation, status, per-path loss recovery,
//! congestion controller, pacer and statistics (RFC 9000 §8–9; RFC 10069 §3).

use std::net::SocketAddr;

use crate::ack::PathAckState;
use crate::cc::{CcStats, CongestionController, DeliveryRateEstimator, Pacer};
use crate::crypto::Epoch;
use crate::recovery::rtt::RttEstimator;
use crate::recovery::Ledger;
use crate::small_map::SmallMap;
use crate::space::SpaceId;
use crate::time::{Duration, Timestamp};

mod id;
pub use id::{PathId, PathIdOutOfRange};

/// RFC 9000 §8.1: an unvalidated peer may be sent at most three times what it sent.
pub(crate) const AMPLIFICATION_FACTOR: u64 = 3;

/// Validation state of a path (RFC 9000 §8.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Validation {
    /// PATH_CHALLENGE outstanding (or to be sent).
    Pending,
    /// A PATH_RESPONSE matched our challenge (RFC 9000 §8.2.3).
    Validated,
    /// No response within the validation timeout (RFC 9000 §8.2.4), or the path was abandoned.
    Failed,
}

/// Lifecycle of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PathState {
    Active,
    /// PATH_ABANDON sent or received; state is dropped at `until` (RFC 10069 §3.4: 3 PTOs
    /// after the peer's PATH_ABANDON).
    Closing {
        until: Timestamp,
        /// The peer's PATH_ABANDON arrived (it answered ours, or it started the abandon).
        peer_abandoned: bool,
    },
}

/// Per-path counters.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct PathCounters {
    /// Packets sent on the path.
    pub packets_sent: u64,
    /// Bytes of those packets (UDP payload).
    pub bytes_sent: u64,
    /// Packets received on the path (authenticated).
    pub packets_received: u64,
    /// Bytes of those packets (UDP payload).
    pub bytes_received: u64,
    /// Packets sent on the path and declared lost (RFC 9002 §6.1).
    pub packets_lost: u64,
    /// Bytes of those packets.
    pub bytes_lost: u64,
    /// Of `packets_lost`, acknowledged later: the loss declaration was spurious.
    pub spurious_losses: u64,
    /// Of `packets_lost`, declared by the time threshold (RFC 9002 §6.1.2); the rest by the
    /// packet threshold (§6.1.1).
    pub time_threshold_losses: u64,
    /// Of `spurious_losses`, declared by the time threshold.
    pub time_threshold_spurious: u64,
    /// Window reductions undone because every loss behind them was spurious (RFC 9438 §4.9).
    pub congestion_undos: u64,
    /// ACK frames sent on the path.
    pub ack_frames_sent: u64,
    /// Bytes of those ACK frames.
    pub ack_frame_bytes: u64,
    /// Stream payload bytes sent on the path, retransmissions included.
    pub stream_bytes_sent: u64,
    /// Of `stream_bytes_sent`, bytes sent again after a loss (or re-injected).
    pub retransmitted_bytes: u64,
    /// Probe timeouts that fired on the path (RFC 9002 §6.2).
    pub pto_count_total: u64,
    /// RTT samples taken for the path (RFC 9002 §5.1).
    pub rtt_samples: u64,
    /// Of `rtt_samples`, round trips on the path itself (an ACK received on the path for a
    /// packet sent on it). Once there is one, the minimum RTT comes from such samples only.
    pub own_rtt_samples: u64,
    /// Of `rtt_samples`, taken from another path's ACK while the path had none of its own
    /// (RFC 10069 §5.4 fallback; the first own sample restarts the estimator).
    pub borrowed_rtt_samples: u64,
    /// DATAGRAM frames (RFC 9221) sent on the path (each datagram once), received on it, and
    /// of the sent ones, in packets declared lost.
    pub datagram_frames_sent: u64,
    /// DATAGRAM frames received on the path.
    pub datagram_frames_received: u64,
    /// DATAGRAM frames sent on the path in packets declared lost.
    pub datagram_frames_lost: u64,
}

/// Snapshot of a path for the API and the lab.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PathStats {
    /// The path ID (0 for the handshake path; RFC 10069 §2).
    pub id: PathId,
    /// Our address of the path.
    pub local: SocketAddr,
    /// The peer's address of the path.
    pub remote: SocketAddr,
    /// Path validation state (RFC 9000 §8.2).
    pub validation: Validation,
    /// Whether either side marked the path as backup (RFC 10069 §3.3).
    pub backup: bool,
    /// Whether the path was abandoned (RFC 10069 §3.4).
    pub abandoned: bool,
    /// Smoothed RTT in milliseconds (RFC 9002 §5.3).
    pub srtt_ms: f64,
    /// Minimum RTT in milliseconds (RFC 9002 §5.2).
    pub min_rtt_ms: f64,
    /// RTT variation in milliseconds (RFC 9002 §5.3).
    pub rttvar_ms: f64,
    /// Congestion window in bytes.
    pub cwnd: u64,
    /// Bytes sent on the path and neither acknowledged nor declared lost.
    pub bytes_in_flight: u64,
    /// Current maximum UDP payload of the path in bytes (path MTU discovery, RFC 9000 §14.3).
    pub mtu: u64,
    /// Path MTU discovery state (RFC 8899 §5.2).
    pub mtu_phase: crate::mtud::Phase,
    /// Path MTU discovery probes sent, acknowledged and lost.
    pub mtu_counters: crate::mtud::MtuCounters,
    /// The congestion controller's own statistics.
    pub cc: CcStats,
    /// Packet, byte, loss and frame counters of the path.
    pub counters: PathCounters,
    /// ECN validation state and counts (RFC 9000 §13.4).
    pub ecn: crate::ecn::EcnPathStats,
    /// The packet threshold of the path's loss detection (RFC 9002 §6.1.1): 3, or higher once
    /// reordering made losses it declared spurious
    /// ([`TransportConfig::max_packet_threshold`](crate::TransportConfig::max_packet_threshold)).
    pub packet_threshold: u64,
    /// The time threshold of the path's loss detection in RTTs (RFC 9002 §6.1.2): 1.125, or
    /// more once reordering made losses it declared spurious
    /// ([`TransportConfig::max_time_threshold`](crate::TransportConfig::max_time_threshold)).
    pub time_threshold: f64,
}

/// A delivery-rate sample older than this many smoothed RTTs no longer stands for the path.
pub(crate) const RATE_SAMPLE_LIFETIME_RTTS: u32 = 4;

/// One path.
#[derive(Debug)]
pub(crate) struct Path {
    pub id: PathId,
    pub local: SocketAddr,
    pub remote: SocketAddr,
    /// Validation, life cycle, status and failure change only through the transition methods
    /// below, so every rule about them is in this file.
    validation: Validation,
    state: PathState,
    /// Our view of the status we advertised (RFC 10069 §3.3): true = backup.
    local_backup: bool,
    /// The status the peer advertised for this path.
    remote_backup: bool,
    /// Highest PATH_STATUS sequence number received from the peer.
    remote_status_seq: Option<u64>,
    /// Sequence number for our next PATH_STATUS frame.
    pub local_status_seq: u64,
    /// A PATH_STATUS frame with our status is to be sent (RFC 10069 §3.3).
    status_pending: bool,
    pub rtt: RttEstimator,
    /// Sent-packet ledgers per encryption level (Initial/Handshake only on the first path).
    pub ledgers: crate::recovery::ledgers::Ledgers,
    pub pto_count: u32,
    pub cc: Box<dyn CongestionController>,
    pub pacer: Pacer,
    pub delivery: DeliveryRateEstimator,
    /// The latest delivery-rate sample in bytes per second (DRE §3.3) and when it was taken,
    /// kept when the sample was not application-limited or exceeds the one kept (an
    /// application-limited sample is a lower bound, DRE §3.4). None before the first.
    pub delivery_rate: Option<(u64, Timestamp)>,
    /// Receiver ACK state per packet number space on this path (boxed: a B-tree leaf has room
    /// for 11 values, and a path has one to three spaces).
    pub acks: SmallMap<SpaceId, Box<PathAckState>>,
    /// Whether the 3x anti-amplification limit applies until validation: only where we did not
    /// choose the peer's address ourselves (server side, RFC 9000 §8.1; RFC 10069 §3.1).
    pub amplification_limited: bool,
    /// Anti-amplification accounting until validated (RFC 9000 §8.1).
    pub anti_amp_received: u64,
    pub anti_amp_sent: u64,
    /// Our outstanding PATH_CHALLENGE data and when it was sent.
    pub challenge: Option<([u8; 8], Option<Timestamp>)>,
    /// PATH_CHALLENGE frames of the current validation that went unanswered for their timeout
    /// (the validation fails after a few, RFC 9000 §8.2.4). Counted apart from the path's
    /// PTOs: probes of the path's other packets are not challenges.
    pub challenge_timeouts: u32,
    /// "ACK on all paths": an ACK sent on another path is owed once on this one.
    pub ack_copy_pending: bool,
    /// PATH_RESPONSE frames owed for PATH_CHALLENGE frames that arrived on this path.
    pub pending_responses: Vec<PendingResponse>,
    /// While a migration is being validated (ours, or the peer's that we follow): the validated
    /// (local, remote) addresses the path left, to go back to if the new ones do not answer
    /// (RFC 9000 §9.2, §9.3.2).
    pub migrated_from: Option<MigratedFrom>,
    /// Last time a packet was received on this path (per-path idle timeout, RFC 10069 §3.5).
    pub last_activity: Timestamp,
    /// Last time an ACK for this path's packets arrived on this path itself (RTT sampling).
    pub last_own_ack: Option<Timestamp>,
    /// Packet number of the last same-path RTT sample (samples only move forward).
    pub last_sampled_pn: Option<u64>,
    /// Declared failed after repeated PTOs: no new data is scheduled on it.
    failed: bool,
    /// An abandoned path whose 3 PTOs passed without the peer's PATH_ABANDON is kept a while
    /// longer, once (`Connection::close_abandoned_path`).
    pub(crate) waited_for_peer_abandon: bool,
    /// A PTO fired: send probes on this path.
    pub probes_pending: u8,
    /// A PATH_ABANDON frame with this error code is to be sent (RFC 10069 §3.4).
    abandon_pending: Option<u64>,
    pub counters: PathCounters,
    /// The losses behind the controller's last window reduction (RFC 9438 §4.9 undo).
    pub loss_episode: crate::recovery::LossEpisode,
    /// Loss detection's packet and time thresholds, raised by reordering (RFC 9002 §6.1).
    pub loss_thresholds: crate::recovery::reordering::LossThresholds,
    /// Path MTU discovery: the path's current datagram size and its search (RFC 9000 §14.3).
    pub mtu: crate::mtud::Mtud,
    /// ECN validation and counters of this path (RFC 9000 §13.4).
    pub ecn: crate::ecn::EcnPath,
}

impl Path {
    /// A new path. `validated` is true for the handshake path (the handshake validates it,
    /// RFC 9000 §8.1) once address validation completes.
    pub(crate) fn new(
        id: PathId,
        local: SocketAddr,
        remote: SocketAddr,
        cc: Box<dyn CongestionController>,
        initial_rtt: Duration,
        mtu: crate::mtud::Mtud,
        now: Timestamp,
    ) -> Self {
        Self {
            id,
            local,
            remote,
            validation: Validation::Pending,
            state: PathState::Active,
            local_backup: false,
            remote_backup: false,
            remote_status_seq: None,
            local_status_seq: 0,
            status_pending: false,
            rtt: RttEstimator::new(initial_rtt),
            ledgers: Default::default(),
            pto_count: 0,
            cc,
            pacer: Pacer::new(u64::from(mtu.current()), now),
            delivery: DeliveryRateEstimator::default(),
            delivery_rate: None,
            acks: SmallMap::new(),
            amplification_limited: true,
            anti_amp_received: 0,
            anti_amp_sent: 0,
            challenge: None,
            challenge_timeouts: 0,
            ack_copy_pending: false,
            pending_responses: Vec::new(),
            migrated_from: None,
            last_activity: now,
            last_own_ack: None,
            last_sampled_pn: None,
            failed: false,
            waited_for_peer_abandon: false,
            probes_pending: 0,
            abandon_pending: None,
            counters: PathCounters::default(),
            loss_episode: Default::default(),
            loss_thresholds: Default::default(),
            mtu,
            ecn: Default::default(),
        }
    }

    /// The path is validated (RFC 9000 §8.2: a PATH_RESPONSE, or the handshake for the first
    /// path). Returns whether it was not before.
    pub(crate) fn validate(&mut self) -> bool {
        let newly = self.validation != Validation::Validated;
        self.validation = Validation::Validated;
        newly
    }

    /// The local address the path's packets leave from: its own, or during a server's move to
    /// its preferred address the original one until the new path is validated (§9.6.2).
    pub(crate) fn sends_from(&self) -> SocketAddr {
        match self.migrated_from {
            Some(from) if from.hold_old_local => from.local,
            _ => self.local,
        }
    }

    /// Start (or restart, after the peer's address changed: RFC 9000 §9.3) validating the path
    /// with a PATH_CHALLENGE carrying `challenge`; the anti-amplification count starts over.
    pub(crate) fn start_validation(&mut self, challenge: [u8; 8]) {
        self.validation = Validation::Pending;
        self.anti_amp_received = 0;
        self.anti_amp_sent = 0;
        self.challenge = Some((challenge, None));
        self.challenge_timeouts = 0;
    }

    /// No PATH_RESPONSE came back for the last challenge (RFC 9000 §8.2.4). Returns whether
    /// the path failed validation now (a validated path stays validated).
    pub(crate) fn fail_validation(&mut self) -> bool {
        if self.validation == Validation::Validated {
            return false;
        }
        self.validation = Validation::Failed;
        self.challenge = None;
        true
    }

    /// Declare the path failed after repeated PTOs (handover). Returns whether it was not
    /// failed before.
    pub(crate) fn mark_failed(&mut self) -> bool {
        !std::mem::replace(&mut self.failed, true)
    }

    /// An acknowledgement for this path's packets arrived: the PTO backoff restarts (RFC 9002
    /// §6.2.1) and a failed path is alive again.
    pub(crate) fn on_acknowledged(&mut self) {
        self.pto_count = 0;
        self.failed = false;
    }

    /// Whether the path was declared failed and not heard from since.
    pub(crate) fn is_failed(&self) -> bool {
        self.failed
    }

    /// Abandon the path (RFC 10069 §3.4): it closes at `until` and a PATH_ABANDON with
    /// `error_code` is owed to the peer.
    pub(crate) fn abandon(&mut self, until: Timestamp, error_code: u64) {
        self.state = PathState::Closing {
            until,
            peer_abandoned: false,
        };
        self.abandon_pending = Some(error_code);
    }

    /// When an abandoned path is forgotten (or, before the peer's PATH_ABANDON came, looked at
    /// again); None while it is active.
    pub(crate) fn closing_until(&self) -> Option<Timestamp> {
        match self.state {
            PathState::Closing { until, .. } => Some(until),
            PathState::Active => None,
        }
    }

    /// Whether the peer's PATH_ABANDON for this closing path arrived.
    pub(crate) fn peer_abandoned(&self) -> bool {
        matches!(
            self.state,
            PathState::Closing {
                peer_abandoned: true,
                ..
            }
        )
    }

    /// A closing path's state is kept until `until`; `peer_abandoned` records the peer's
    /// PATH_ABANDON.
    pub(crate) fn keep_closing_until(&mut self, until: Timestamp, peer_abandoned: bool) {
        if let PathState::Closing {
            until: u,
            peer_abandoned: p,
        } = &mut self.state
        {
            *u = until;
            *p |= peer_abandoned;
        }
    }

    /// We mark the path backup or available (RFC 10069 §3.3); a PATH_STATUS frame is owed.
    pub(crate) fn set_local_backup(&mut self, backup: bool) {
        self.local_backup = backup;
        self.status_pending = true;
    }

    /// Whether a PATH_STATUS or PATH_ABANDON frame waits to be sent for this path.
    pub(crate) fn has_path_frames_pending(&self) -> bool {
        self.status_pending || self.abandon_pending.is_some()
    }

    /// The error code of the PATH_ABANDON frame waiting to be sent, if any.
    pub(crate) fn pending_abandon(&self) -> Option<u64> {
        self.abandon_pending
    }

    /// The PATH_ABANDON frame went out in a packet.
    pub(crate) fn abandon_sent(&mut self) {
        self.abandon_pending = None;
    }

    /// The packet carrying our PATH_ABANDON was lost: send it again (with `error_code` unless
    /// another one is already waiting).
    pub(crate) fn requeue_abandon(&mut self, error_code: u64) {
        self.abandon_pending.get_or_insert(error_code);
    }

    /// Whether our PATH_STATUS frame waits to be sent (only while the path is active).
    pub(crate) fn status_frame_pending(&self) -> bool {
        self.status_pending && self.is_active()
    }

    /// The PATH_STATUS frame went out in a packet.
    pub(crate) fn status_sent(&mut self) {
        self.status_pending = false;
    }

    /// The packet carrying our PATH_STATUS was lost: send the current status again.
    pub(crate) fn requeue_status(&mut self) {
        self.status_pending = true;
    }

    /// The status we advertise for the path: true = backup.
    pub(crate) fn local_backup(&self) -> bool {
        self.local_backup
    }

    /// The peer's PATH_STATUS with `sequence` (RFC 10069 §3.3: only a sequence number larger
    /// than any seen before counts). Returns whether the peer's status changed.
    pub(crate) fn on_peer_status(&mut self, sequence: u64, backup: bool) -> bool {
        if self.remote_status_seq.is_some_and(|s| sequence <= s) {
            return false;
        }
        self.remote_status_seq = Some(sequence);
        std::mem::replace(&mut self.remote_backup, backup) != backup
    }

    pub(crate) fn ledger(&mut self, epoch: Epoch) -> &mut Ledger {
        &mut self.ledgers[epoch_index(epoch)]
    }

    pub(crate) fn bytes_in_flight(&self) -> u64 {
        self.ledgers.bytes_in_flight()
    }

    pub(crate) fn is_validated(&self) -> bool {
        self.validation == Validation::Validated
    }

    pub(crate) fn is_active(&self) -> bool {
        matches!(self.state, PathState::Active)
    }

    /// Bytes we may still send before validation (RFC 9000 §8.1); None = unlimited.
    pub(crate) fn amplification_budget(&self) -> Option<u64> {
        if self.is_validated() || !self.amplification_limited {
            return None;
        }
        Some((self.anti_amp_received * AMPLIFICATION_FACTOR).saturating_sub(self.anti_amp_sent))
    }

    /// Whether the path is (or is treated as) backup.
    pub(crate) fn is_backup(&self) -> bool {
        self.local_backup || self.remote_backup
    }

    /// Usable for new data: validated, active, not failed.
    pub(crate) fn is_usable(&self) -> bool {
        self.is_validated() && self.is_active() && !self.failed
    }

    /// Bytes per second the path delivers: its latest delivery-rate sample
    /// ([`Path::delivery_rate`]) if taken within the last [`RATE_SAMPLE_LIFETIME_RTTS`]
    /// smoothed RTTs, else the congestion window per smoothed RTT. A path carrying only a few
    /// packets per round trip gives no samples (DRE discards intervals under the minimum RTT),
    /// and a sample kept from its first packets would make it look slower than it is for good.
    pub(crate) fn delivery_rate_estimate(&self, now: Timestamp) -> u64 {
        let srtt = self.rtt.smoothed();
        match self.delivery_rate {
            Some((rate, at))
                if now.saturating_duration_since(at) <= srtt * RATE_SAMPLE_LIFETIME_RTTS =>
            {
                rate
            }
            _ => {
                let rate = u128::from(self.cc.window()) * 1_000_000_000 / srtt.as_nanos().max(1);
                u64::try_from(rate).unwrap_or(u64::MAX)
            }
        }
    }

    /// Congestion window space for one more packet of `size` bytes.
    pub(crate) fn cwnd_allows(&self, size: u64) -> bool {
        self.bytes_in_flight() + size <= self.cc.window()
    }

    /// RFC 9002 §6.2.1 PTO duration for this path at the given level.
    pub(crate) fn pto(&self, max_ack_delay: Duration, include_ack_delay: bool) -> Duration {
        let mad = crate::time::duration_nanos(max_ack_delay);
        Duration::from_nanos(self.pto_nanos(mad, include_ack_delay))
    }

    /// The PTO period before any backoff (RFC 9002 §6.2.1), max_ack_delay included.
    pub(crate) fn pto_without_backoff(&self, max_ack_delay: Duration) -> Duration {
        let mad = crate::time::duration_nanos(max_ack_delay);
        Duration::from_nanos(self.rtt.pto_base_nanos().saturating_add(mad))
    }

    /// [`Self::pto`] in nanoseconds (saturating), `max_ack_delay_ns` too: the connection's
    /// timer computes it for every path after every datagram.
    pub(crate) fn pto_nanos(&self, max_ack_delay_ns: u64, include_ack_delay: bool) -> u64 {
        let base = self
            .rtt
            .pto_base_nanos()
            .saturating_add(if include_ack_delay {
                max_ack_delay_ns
            } else {
                0
            });
        // The backoff: at most 2^16.
        base.saturating_mul(1 << self.pto_count.min(16))
    }

    /// An RTT sample from an ACK that arrived on this path for a packet sent on it. The first
    /// one restarts an estimator fed so far only by other paths' ACKs (RFC 10069 §5.4: restart
    /// the minimum RTT when the acknowledgment path changes). Returns whether it was taken (a
    /// packet number at or below the last sampled one gives none).
    pub(crate) fn on_own_rtt_sample(
        &mut self,
        now: Timestamp,
        pn: u64,
        sample: Duration,
        ack_delay: Duration,
    ) -> bool {
        if self.last_sampled_pn.is_some_and(|l| pn <= l) {
            return false;
        }
        if self.last_own_ack.is_none() && self.rtt.has_sample() {
            self.rtt = RttEstimator::new(self.rtt.smoothed());
            self.cc.on_rtt_restart();
        }
        self.last_sampled_pn = Some(pn);
        self.last_own_ack = Some(now);
        self.rtt.update(ack_delay, sample);
        self.counters.rtt_samples += 1;
        self.counters.own_rtt_samples += 1;
        true
    }

    /// Ack state of this path for `space`, created on first use.
    pub(crate) fn ack_state(&mut self, space: SpaceId) -> &mut PathAckState {
        self.acks.entry(space).or_default()
    }

    pub(crate) fn stats(&self) -> PathStats {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        PathStats {
            id: self.id,
            local: self.local,
            remote: self.remote,
            validation: self.validation,
            backup: self.is_backup(),
            abandoned: !self.is_active(),
            srtt_ms: ms(self.rtt.smoothed()),
            min_rtt_ms: ms(self.rtt.min()),
            rttvar_ms: ms(self.rtt.var()),
            cwnd: self.cc.window(),
            bytes_in_flight: self.bytes_in_flight(),
            mtu: u64::from(self.mtu.current()),
            mtu_phase: self.mtu.phase(),
            mtu_counters: self.mtu.counters,
            packet_threshold: self.loss_thresholds.packet.get(),
            time_threshold: f64::from(self.loss_thresholds.time.eighths()) / 8.0,
            cc: self.cc.stats(),
            counters: self.counters.clone(),
            ecn: self.ecn.stats(),
        }
    }
}

/// Index of an encryption level's ledger.
pub(crate) fn epoch_index(epoch: Epoch) -> usize {
    match epoch {
        Epoch::Initial => 0,
        Epoch::Handshake => 1,
        Epoch::Data => 2,
    }
}

/// A PATH_RESPONSE owed for a PATH_CHALLENGE (RFC 9000 §8.2.2: it goes back on the 4-tuple the
/// challenge came in on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PendingResponse {
    /// The challenge's data, echoed.
    pub data: [u8; 8],
    /// Set when the challenge came from addresses the path does not use (a probe the path has
    /// not moved for, RFC 9000 §9.3): the response goes there in a packet of its own.
    pub off_path: Option<OffPath>,
}

/// The 4-tuple of a probe the path did not move for, and what may be sent there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OffPath {
    /// Our address the probe reached.
    pub local: SocketAddr,
    /// The address it came from.
    pub remote: SocketAddr,
    /// Bytes we may send to an address nobody has validated: three times what came from it
    /// (RFC 9000 §8.1, §8.2.2).
    pub budget: usize,
}

/// Where a path was before a move now being validated, to go back to if the new addresses do
/// not answer (RFC 9000 §9.2, §9.3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MigratedFrom {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    /// When the move took a fresh CID of the peer's (our own move, or a server following a
    /// peer that took a fresh CID of ours): the sequence number of the one used there, retired
    /// once the move is validated and used again if it fails (RFC 9000 §9.5).
    pub cid_seq: Option<u64>,
    /// A server whose client moved to its preferred address: until the new path is validated
    /// its non-probing packets still leave from `local` (RFC 9000 §9.6.2).
    pub hold_old_local: bool,
}
