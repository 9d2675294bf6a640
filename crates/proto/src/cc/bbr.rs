//! BBRv3 congestion control per draft-ietf-ccwg-bbr (section numbers below are those of
//! draft-ietf-ccwg-bbr-05), driven by the delivery-rate samples of
//! [`DeliveryRateEstimator`](super::DeliveryRateEstimator) carried in `AckEvent::rate_sample`.
//!
//! The state machine (§5.3) is Startup → Drain → ProbeBW {DOWN, CRUISE, REFILL, UP} with
//! ProbeRTT excursions; the model (§5.5) is a windowed max-bandwidth filter over two ProbeBW
//! cycles, a 10 s min-RTT filter, the long-term `inflight_longterm` bound and the short-term
//! `bw_shortterm` / `inflight_shortterm` bounds; pacing rate and cwnd are derived from it (§5.6).
//!
//! Where the seam differs from the draft's transport interface:
//! * Losses arrive aggregated in a [`LossEvent`], without per-packet state, so the per-lost-packet
//!   `IsInflightTooHigh` check of §5.5.10.2 (BBRHandleLostPacket) is made at ACK time from the
//!   rate sample's `lost` and `tx_in_flight` (the bytes lost since, and in flight at, the send of
//!   the newest acknowledged packet), as Linux's BBRv3 does in `bbr_adapt_upper_bounds`.
//! * The end of a bandwidth probe's ACK phase (ACKS_PROBE_STOPPING) is consumed once per cycle, as
//!   in Linux, so that the max-bandwidth filter advances once per ProbeBW cycle (§5.5.6).
//! * ACKs without a rate sample (interval below min RTT, DRE §3.3) update only the window.
//! * Loss recovery (§5.6.4.4: save the cwnd, conserve packets for a round, restore the cwnd on
//!   exit) uses RFC 9002 §7.3.2 recovery periods; persistent congestion collapses the window to
//!   RFC 9002's minimum.
//! * Startup's high-loss exit (§5.3.1.3) counts loss events (one per [`LossEvent`]) in place of
//!   discontiguous lost ranges.
//! * ProbeRTT should mark the connection application-limited (§5.3.4.3); the estimator belongs to
//!   the caller, which can do so while `stats().state == "probe_rtt"`.
//! * Randomness (§5.3.3.5.3 BBRPickProbeWait) comes from a seeded SplitMix64 generator (`rand_xoshiro`): no global
//!   RNG. [`Bbr::new`] uses a fixed seed; use [`Bbr::with_seed`] to decorrelate flows.

use std::collections::VecDeque;

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::SplitMix64;

use super::{
    AckEvent, CcConfig, CcStats, CongestionController, Coupling, CouplingState, LossEvent,
    RateSample, MINIMUM_WINDOW_PACKETS,
};
use crate::time::{Duration, Timestamp};

/// §5.6.1 BBRStartupPacingGain = 4·ln(2).
const STARTUP_PACING_GAIN: f64 = 2.77;
/// §5.3.2 BBRDrainPacingGain: 0.35, as in Linux BBRv3 (any value ≤ 1/BBRStartupCwndGain = 0.5
/// drains Startup's queue within a round).
const DRAIN_PACING_GAIN: f64 = 0.35;
/// §5.6.1 BBRDefaultCwndGain.
const DEFAULT_CWND_GAIN: f64 = 2.0;
/// §5.3.3.1 ProbeBW_DOWN pacing gain.
const PROBE_BW_DOWN_PACING_GAIN: f64 = 0.9;
/// §5.3.3.4 ProbeBW_UP pacing and cwnd gains.
const PROBE_BW_UP_PACING_GAIN: f64 = 1.25;
const PROBE_BW_UP_CWND_GAIN: f64 = 2.25;
/// §5.6.4.5 BBRProbeRTTCwndGain.
const PROBE_RTT_CWND_GAIN: f64 = 0.5;
/// §5.6.2 BBRPacingMarginPercent.
const PACING_MARGIN_PERCENT: f64 = 1.0;
/// §5.5.10.2 BBRLossThresh, BBRBeta; §5.3.3.6 BBRHeadroom.
const LOSS_THRESH: f64 = 0.02;
const BETA: f64 = 0.7;
const HEADROOM: f64 = 0.15;
/// §5.3.1.2: Startup ends after 3 rounds without 25 % bandwidth growth.
const FULL_BW_GROWTH: f64 = 1.25;
const FULL_BW_COUNT: u32 = 3;
/// §5.3.1.3 BBRStartupFullLossCnt.
const STARTUP_FULL_LOSS_CNT: u32 = 6;
/// §5.5.6 MaxBwFilterLen (ProbeBW cycles); §5.5.9 ExtraAckedFilterLen (rounds).
const MAX_BW_FILTER_LEN: u64 = 2;
const EXTRA_ACKED_FILTER_LEN: u64 = 10;
/// §5.3.4 ProbeRTTDuration, ProbeRTTInterval, MinRTTFilterLen.
const PROBE_RTT_DURATION: Duration = Duration::from_millis(200);
const PROBE_RTT_INTERVAL: Duration = Duration::from_secs(5);
const MIN_RTT_FILTER_LEN: Duration = Duration::from_secs(10);
/// §2.7 BBRMinPipeCwnd, in datagrams.
const MIN_PIPE_CWND_PACKETS: u64 = 4;
/// §5.3.3.5.3: Reno coexistence probes at most every 63 rounds; §5.3.3.6: slope cap.
const MAX_RENO_ROUNDS: u64 = 63;
const MAX_PROBE_UP_ROUNDS: u32 = 30;
/// Sentinel for the draft's "Infinity" in byte and rate quantities.
const INF: u64 = u64::MAX;

/// §5.3 states, ProbeBW split into its four phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Startup,
    Drain,
    Down,
    Cruise,
    Refill,
    Up,
    ProbeRtt,
}

impl State {
    fn is_probe_bw(self) -> bool {
        matches!(
            self,
            State::Down | State::Cruise | State::Refill | State::Up
        )
    }
}

/// §5.3.3.6 BBR.ack_phase, plus `Init` once a probe's samples are consumed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AckPhase {
    Init,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
    Refilling,
}

/// A windowed running maximum of `(time, value)` samples (§5.5.5, §5.5.9).
#[derive(Debug, Clone)]
struct MaxFilter {
    window: u64,
    samples: VecDeque<(u64, u64)>,
}

impl MaxFilter {
    fn new(window: u64) -> Self {
        Self {
            window,
            samples: VecDeque::new(),
        }
    }

    /// Adds `value` at `time` and returns the maximum of the samples less than `window` old.
    fn update(&mut self, time: u64, value: u64) -> u64 {
        while self.samples.back().is_some_and(|&(_, v)| v <= value) {
            self.samples.pop_back();
        }
        self.samples.push_back((time, value));
        while self
            .samples
            .front()
            .is_some_and(|&(t, _)| t.saturating_add(self.window) <= time)
        {
            self.samples.pop_front();
        }
        self.samples.front().map_or(value, |&(_, v)| v)
    }
}

/// BBRv3 for one path. Build with [`Bbr::new`] or [`Bbr::with_seed`].
#[derive(Debug, Clone)]
pub struct Bbr {
    mss: u64,
    initial_cwnd: u64,
    min_pipe_cwnd: u64,
    cwnd: u64,
    /// C.pacing_rate, bytes per second.
    pacing_rate: f64,
    send_quantum: u64,
    state: State,
    pacing_gain: f64,
    cwnd_gain: f64,
    rng: SplitMix64,
    /// C.delivered, C.inflight (as of the last event).
    delivered: u64,
    inflight: u64,
    /// C.is_cwnd_limited over this and the previous round.
    cwnd_limited: (bool, bool),
    round_count: u64,
    round_start: bool,
    next_round_delivered: u64,
    idle_restart: bool,
    last_sample_app_limited: bool,
    // Model (§5.5); bandwidths in bytes per second.
    max_bw: u64,
    max_bw_filter: MaxFilter,
    cycle_count: u64,
    bw_shortterm: u64,
    bw: u64,
    bw_latest: u64,
    inflight_latest: u64,
    inflight_longterm: u64,
    inflight_shortterm: u64,
    min_rtt: Option<Duration>,
    min_rtt_stamp: Option<Timestamp>,
    probe_rtt_min_delay: Option<Duration>,
    probe_rtt_min_stamp: Option<Timestamp>,
    probe_rtt_expired: bool,
    bdp: u64,
    extra_acked: u64,
    extra_acked_filter: MaxFilter,
    extra_acked_interval_start: Option<Timestamp>,
    extra_acked_delivered: u64,
    max_inflight: u64,
    // Startup (§5.3.1).
    full_bw_reached: bool,
    full_bw_now: bool,
    full_bw: u64,
    full_bw_count: u32,
    loss_events_in_round: u32,
    // ProbeBW (§5.3.3).
    rounds_since_bw_probe: u64,
    bw_probe_wait: Duration,
    bw_probe_up_rounds: u32,
    bw_probe_up_acks: u64,
    probe_up_cnt: u64,
    cycle_stamp: Timestamp,
    ack_phase: AckPhase,
    bw_probe_samples: bool,
    // Congestion signals (§5.5.10).
    loss_round_delivered: u64,
    loss_in_round: bool,
    loss_round_start: bool,
    // ProbeRTT (§5.3.4) and cwnd save/restore (§5.6.4.4).
    probe_rtt_done_stamp: Option<Timestamp>,
    probe_rtt_round_done: bool,
    prior_cwnd: u64,
    // Loss recovery (§5.6.4.4, with RFC 9002 §7.3.2 recovery periods).
    recovery_start: Option<Timestamp>,
    in_recovery: bool,
    packet_conservation_until: Option<u64>,
    // Undo (§5.5.11).
    undo: (State, u64, u64, u64),
    congestion_events: u64,
}

impl Bbr {
    /// BBRv3 with a fixed random seed (see [`Bbr::with_seed`]).
    pub fn new(config: CcConfig) -> Self {
        Self::with_seed(config, 0x6262_7233_5eed_0001)
    }

    /// BBRv3 whose probe timing randomisation (§5.3.3.5.3) is drawn from `seed`.
    pub fn with_seed(config: CcConfig, seed: u64) -> Self {
        let mss = config.max_datagram_size.max(1);
        let initial_cwnd = config.initial_window.max(MINIMUM_WINDOW_PACKETS * mss);
        // §5.6.2 BBRInitPacingRate, before any RTT sample: nominal bandwidth over 1 ms.
        let pacing_rate = STARTUP_PACING_GAIN * initial_cwnd as f64 / 0.001;
        let mut bbr = Self {
            mss,
            initial_cwnd,
            min_pipe_cwnd: MIN_PIPE_CWND_PACKETS * mss,
            cwnd: initial_cwnd,
            pacing_rate,
            send_quantum: 2 * mss,
            state: State::Startup,
            pacing_gain: STARTUP_PACING_GAIN,
            cwnd_gain: DEFAULT_CWND_GAIN,
            rng: SplitMix64::seed_from_u64(seed),
            delivered: 0,
            inflight: 0,
            cwnd_limited: (false, false),
            round_count: 0,
            round_start: false,
            next_round_delivered: 0,
            idle_restart: false,
            last_sample_app_limited: false,
            max_bw: 0,
            max_bw_filter: MaxFilter::new(MAX_BW_FILTER_LEN),
            cycle_count: 0,
            bw_shortterm: INF,
            bw: 0,
            bw_latest: 0,
            inflight_latest: 0,
            inflight_longterm: INF,
            inflight_shortterm: INF,
            min_rtt: None,
            min_rtt_stamp: None,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: None,
            probe_rtt_expired: false,
            bdp: 0,
            extra_acked: 0,
            extra_acked_filter: MaxFilter::new(EXTRA_ACKED_FILTER_LEN),
            extra_acked_interval_start: None,
            extra_acked_delivered: 0,
            max_inflight: 0,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw: 0,
            full_bw_count: 0,
            loss_events_in_round: 0,
            rounds_since_bw_probe: 0,
            bw_probe_wait: Duration::ZERO,
            bw_probe_up_rounds: 0,
            bw_probe_up_acks: 0,
            probe_up_cnt: INF,
            cycle_stamp: Timestamp::ZERO,
            ack_phase: AckPhase::Init,
            bw_probe_samples: false,
            loss_round_delivered: 0,
            loss_in_round: false,
            loss_round_start: false,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0,
            recovery_start: None,
            in_recovery: false,
            packet_conservation_until: None,
            undo: (State::Startup, INF, INF, INF),
            congestion_events: 0,
        };
        bbr.enter_startup();
        bbr
    }

    /// BBR.bw, the bandwidth the model currently allows, bytes per second.
    pub fn bandwidth(&self) -> u64 {
        self.bw
    }

    /// BBR.min_rtt, if any sample has been seen.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// The next 64 random bits of this flow's generator.
    fn next_random(&mut self) -> u64 {
        self.rng.next_u64()
    }

    fn set_state(&mut self, state: State, pacing_gain: f64, cwnd_gain: f64) {
        self.state = state;
        self.pacing_gain = pacing_gain;
        self.cwnd_gain = cwnd_gain;
    }

    /// §5.3.1.1 BBREnterStartup.
    fn enter_startup(&mut self) {
        self.set_state(State::Startup, STARTUP_PACING_GAIN, DEFAULT_CWND_GAIN);
    }

    /// §5.3.2 BBREnterDrain.
    fn enter_drain(&mut self) {
        self.set_state(State::Drain, DRAIN_PACING_GAIN, DEFAULT_CWND_GAIN);
    }

    /// §5.5.1 BBRStartRound.
    fn start_round(&mut self) {
        self.next_round_delivered = self.delivered;
    }

    /// §5.5.1 BBRUpdateRound, for the newest acknowledged packet's P.delivered.
    fn update_round(&mut self, prior_delivered: u64) {
        self.round_start = prior_delivered >= self.next_round_delivered;
        if self.round_start {
            self.start_round();
            self.round_count += 1;
            self.rounds_since_bw_probe += 1;
            // (previous round, this round)
            self.cwnd_limited = (self.cwnd_limited.1, false);
        }
    }

    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited.0 || self.cwnd_limited.1
    }

    /// §5.5.10.2 IsInflightTooHigh.
    fn is_inflight_too_high(rs: &RateSample) -> bool {
        rs.lost as f64 > rs.tx_in_flight as f64 * LOSS_THRESH
    }

    /// §5.6.4.2 BBRBDPMultiple.
    fn bdp_multiple(&mut self, bw: u64, gain: f64) -> u64 {
        let Some(min_rtt) = self.min_rtt else {
            return self.initial_cwnd;
        };
        self.bdp = (bw as f64 * min_rtt.as_secs_f64()) as u64;
        (gain * self.bdp as f64) as u64
    }

    /// §5.6.4.2 BBRQuantizationBudget, with §5.5.8 BBRUpdateOffloadBudget.
    fn quantization_budget(&self, inflight_cap: u64) -> u64 {
        let offload_budget = 3 * self.send_quantum;
        let cap = inflight_cap.max(offload_budget).max(self.min_pipe_cwnd);
        if self.state == State::Up {
            cap.saturating_add(2 * self.mss)
        } else {
            cap
        }
    }

    /// §5.6.4.2 BBRInflight(bw, gain).
    fn inflight_for(&mut self, bw: u64, gain: f64) -> u64 {
        let cap = self.bdp_multiple(bw, gain);
        self.quantization_budget(cap)
    }

    /// §5.3.3.6 BBRInflightWithHeadroom.
    fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_longterm == INF {
            return INF;
        }
        let headroom = ((HEADROOM * self.inflight_longterm as f64) as u64).max(self.mss);
        self.inflight_longterm
            .saturating_sub(headroom)
            .max(self.min_pipe_cwnd)
    }

    /// §5.3.3.5.3 BBRTargetInflight.
    fn target_inflight(&self) -> u64 {
        self.bdp.min(self.cwnd)
    }
}

mod model;
mod state_machine;
#[cfg(test)]
mod tests;

impl Bbr {
    /// RFC 9002 Appendix B.5 InCongestionRecovery(sent_time).
    fn in_congestion_recovery(&self, sent_time: Timestamp) -> bool {
        self.recovery_start.is_some_and(|start| sent_time <= start)
    }

    /// §5.2.1 BBROnInit's clock-dependent part, on the first event (the constructor has no
    /// clock): the min-RTT filters start now.
    fn init_clock(&mut self, now: Timestamp) {
        if self.probe_rtt_min_stamp.is_none() {
            self.probe_rtt_min_stamp = Some(now);
            self.min_rtt_stamp = Some(now);
            self.cycle_stamp = now;
        }
    }

    /// RFC 9002 §7.2 kMinimumWindow: the floor of every loss response.
    fn min_window(&self) -> u64 {
        MINIMUM_WINDOW_PACKETS * self.mss
    }

    /// Leaves loss recovery (§5.6.4.4: restore the cwnd saved on entry).
    fn exit_recovery(&mut self) {
        self.in_recovery = false;
        self.packet_conservation_until = None;
        self.restore_cwnd();
    }

    fn state_name(&self) -> &'static str {
        match self.state {
            State::Startup => "startup",
            State::Drain => "drain",
            State::Down => "probe_bw_down",
            State::Cruise => "probe_bw_cruise",
            State::Refill => "probe_bw_refill",
            State::Up => "probe_bw_up",
            State::ProbeRtt => "probe_rtt",
        }
    }
}

impl CongestionController for Bbr {
    fn on_packet_sent(&mut self, now: Timestamp, bytes: u64, bytes_in_flight: u64) {
        self.init_clock(now);
        self.inflight = bytes_in_flight;
        if bytes_in_flight.saturating_add(self.mss) > self.cwnd {
            self.cwnd_limited.1 = true;
        }
        // §5.4.1 BBRHandleRestartFromIdle: first send after an application-limited idle period.
        if bytes_in_flight <= bytes && self.last_sample_app_limited {
            self.idle_restart = true;
            self.extra_acked_interval_start = Some(now);
            if self.state.is_probe_bw() {
                self.set_pacing_rate_with_gain(1.0);
            } else if self.state == State::ProbeRtt {
                self.check_probe_rtt_done(now);
            }
        }
    }

    /// §5.2.3 BBRUpdateOnACK.
    fn on_ack(&mut self, ack: &AckEvent<'_>, _coupling: Coupling<'_>) {
        self.init_clock(ack.now);
        self.inflight = ack.bytes_in_flight;
        self.delivered = self.delivered.saturating_add(ack.bytes_acked);
        if self.in_recovery && !self.in_congestion_recovery(ack.largest_acked_sent_time) {
            self.exit_recovery();
        }
        if self
            .packet_conservation_until
            .is_some_and(|end| self.delivered >= end)
        {
            self.packet_conservation_until = None; // one round of packet conservation is over
        }
        if let Some(rs) = &ack.rate_sample {
            self.last_sample_app_limited = rs.is_app_limited;
            self.update_model_and_state(ack.now, rs);
        }
        self.update_control_parameters(ack.bytes_acked);
    }

    fn on_congestion_event(&mut self, loss: &LossEvent<'_>, _coupling: Coupling<'_>) {
        self.inflight = loss.bytes_in_flight;
        if loss.lost_bytes > 0 {
            // §5.5.10.2 BBRNoteLoss with §5.5.11.1 BBRSaveStateUponLoss.
            if !self.loss_in_round {
                self.loss_round_delivered = self.delivered;
                self.undo = (
                    self.state,
                    self.bw_shortterm,
                    self.inflight_shortterm,
                    self.inflight_longterm,
                );
            }
            self.loss_in_round = true;
            self.loss_events_in_round = self.loss_events_in_round.saturating_add(1);
            if !self.in_congestion_recovery(loss.largest_lost_sent_time) {
                // §5.6.4.4 entering recovery (one per RFC 9002 §7.3.2 period): save the cwnd and
                // conserve packets for one round.
                self.congestion_events += 1;
                self.recovery_start = Some(loss.now);
                self.save_cwnd();
                self.in_recovery = true;
                self.cwnd = loss
                    .bytes_in_flight
                    .saturating_add(self.mss)
                    .max(self.min_window());
                self.packet_conservation_until =
                    Some(self.delivered.saturating_add(loss.bytes_in_flight));
            } else {
                // §5.6.4.4 BBRModulateCwndForRecovery: lost bytes leave the window.
                self.cwnd = self
                    .cwnd
                    .saturating_sub(loss.lost_bytes)
                    .max(self.min_window());
            }
        }
        if loss.persistent_congestion {
            // RFC 9002 §7.6.2 (the draft's RTO response): save, then collapse the window.
            self.save_cwnd();
            self.cwnd = self.min_window();
            self.recovery_start = None;
            self.in_recovery = false;
            self.packet_conservation_until = None;
        }
    }

    /// §5.5.11.2 BBRHandleSpuriousLossDetection, and the end of the loss recovery it caused.
    fn on_spurious_congestion_event(&mut self) {
        self.loss_in_round = false;
        self.reset_full_bw();
        let (state, bw_shortterm, inflight_shortterm, inflight_longterm) = self.undo;
        self.bw_shortterm = self.bw_shortterm.max(bw_shortterm);
        self.inflight_shortterm = self.inflight_shortterm.max(inflight_shortterm);
        self.inflight_longterm = self.inflight_longterm.max(inflight_longterm);
        if self.state != State::ProbeRtt && self.state != state {
            if state == State::Startup {
                // The exit from Startup was caused by the loss: probe again from the start.
                self.full_bw_reached = false;
                self.enter_startup();
            } else if state == State::Up {
                self.start_probe_bw_up(self.max_bw);
            }
        }
        if self.in_recovery {
            self.exit_recovery();
        }
    }

    fn on_mtu_update(&mut self, max_datagram_size: u64) {
        let mss = max_datagram_size.max(1);
        self.mss = mss;
        self.min_pipe_cwnd = MIN_PIPE_CWND_PACKETS * mss;
        self.send_quantum = self.send_quantum.max(2 * mss);
        self.cwnd = self.cwnd.max(MINIMUM_WINDOW_PACKETS * mss);
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn pacing_rate(&self, _srtt: Duration) -> u64 {
        self.pacing_rate as u64
    }

    fn coupling_state(&self) -> CouplingState {
        let srtt = self.min_rtt.unwrap_or_default();
        CouplingState {
            cwnd: self.cwnd,
            srtt,
            inter_loss_bytes: 0,
            active: true,
        }
    }

    fn name(&self) -> &'static str {
        "bbr"
    }

    fn stats(&self) -> CcStats {
        CcStats {
            cwnd: self.cwnd,
            ssthresh: None,
            pacing_rate: Some(self.pacing_rate as u64),
            bandwidth_estimate: Some(self.bw),
            state: self.state_name(),
            congestion_events: self.congestion_events,
        }
    }
}
