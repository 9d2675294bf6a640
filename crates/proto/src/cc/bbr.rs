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
//! * Startup's high-loss exit (§5.3.1.3) counts loss events (one per [`LossEvent`]) in place of
//!   discontiguous lost ranges.
//! * ProbeRTT should mark the connection application-limited (§5.3.4.3); the estimator belongs to
//!   the caller, which can do so while `stats().state == "probe_rtt"`.
//! * Randomness (§5.3.3.5.3 BBRPickProbeWait) comes from a seeded SplitMix64 generator: no global
//!   RNG. [`Bbr::new`] uses a fixed seed; use [`Bbr::with_seed`] to decorrelate flows.

use std::collections::VecDeque;

use super::{
    AckEvent, CcConfig, CcStats, CongestionController, Coupling, CouplingState, LossEvent,
    RateSample, MINIMUM_WINDOW_PACKETS,
};
use crate::time::{Duration, Timestamp};

/// §5.6.1 BBRStartupPacingGain = 4·ln(2).
const STARTUP_PACING_GAIN: f64 = 2.77;
/// §5.3.2 BBRDrainPacingGain (0.35, as in Linux BBRv3 and draft-ietf-ccwg-bbr-00..02).
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
        matches!(self, State::Down | State::Cruise | State::Refill | State::Up)
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
        Self { window, samples: VecDeque::new() }
    }

    /// Adds `value` at `time` and returns the maximum of the samples less than `window` old.
    fn update(&mut self, time: u64, value: u64) -> u64 {
        while self.samples.back().is_some_and(|&(_, v)| v <= value) {
            self.samples.pop_back();
        }
        self.samples.push_back((time, value));
        while self.samples.front().is_some_and(|&(t, _)| t.saturating_add(self.window) <= time) {
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
    rng: u64,
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
            rng: seed,
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

    /// SplitMix64 step.
    fn next_random(&mut self) -> u64 {
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
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
        let Some(min_rtt) = self.min_rtt else { return self.initial_cwnd };
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
        self.inflight_longterm.saturating_sub(headroom).max(self.min_pipe_cwnd)
    }

    /// §5.3.3.5.3 BBRTargetInflight.
    fn target_inflight(&self) -> u64 {
        self.bdp.min(self.cwnd)
    }
}

/// ProbeBW (§5.3.3) and ProbeRTT (§5.3.4) transitions.
impl Bbr {
    /// §5.3.3.6 BBREnterProbeBW.
    fn enter_probe_bw(&mut self, now: Timestamp) {
        self.cwnd_gain = DEFAULT_CWND_GAIN;
        self.start_probe_bw_down(now);
    }

    /// §5.3.3.5.3 BBRPickProbeWait: 0 or 1 rounds, and 2 s plus up to 1 s.
    fn pick_probe_wait(&mut self) {
        self.rounds_since_bw_probe = self.next_random() & 1;
        let extra_ms = self.next_random() % 1001;
        self.bw_probe_wait = Duration::from_millis(2000 + extra_ms);
    }

    /// §5.3.3.6 BBRStartProbeBW_DOWN.
    fn start_probe_bw_down(&mut self, now: Timestamp) {
        self.reset_congestion_signals();
        self.probe_up_cnt = INF;
        self.pick_probe_wait();
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.set_state(State::Down, PROBE_BW_DOWN_PACING_GAIN, DEFAULT_CWND_GAIN);
    }

    /// §5.3.3.6 BBRStartProbeBW_CRUISE.
    fn start_probe_bw_cruise(&mut self) {
        self.set_state(State::Cruise, 1.0, DEFAULT_CWND_GAIN);
    }

    /// §5.3.3.6 BBRStartProbeBW_REFILL.
    fn start_probe_bw_refill(&mut self) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acks = 0;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.set_state(State::Refill, 1.0, DEFAULT_CWND_GAIN);
    }

    /// §5.3.3.6 BBRStartProbeBW_UP.
    fn start_probe_bw_up(&mut self, delivery_rate: u64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = delivery_rate;
        self.set_state(State::Up, PROBE_BW_UP_PACING_GAIN, PROBE_BW_UP_CWND_GAIN);
        self.raise_inflight_longterm_slope();
    }

    /// §5.3.3.6 BBRUpdateProbeBWCyclePhase.
    fn update_probe_bw_cycle_phase(&mut self, now: Timestamp, rs: &RateSample) {
        if !self.full_bw_reached {
            return;
        }
        self.adapt_long_term_model(now, rs);
        match self.state {
            State::Down => {
                if !self.is_time_to_probe_bw(now) && self.is_time_to_cruise() {
                    self.start_probe_bw_cruise();
                }
            }
            State::Cruise => {
                self.is_time_to_probe_bw(now);
            }
            State::Refill if self.round_start => {
                // After one round of REFILL, probe up.
                self.bw_probe_samples = true;
                self.start_probe_bw_up(rs.delivery_rate);
            }
            State::Up if self.is_time_to_go_down(rs) => self.start_probe_bw_down(now),
            _ => {}
        }
    }

    /// §5.3.3.6 BBRIsTimeToCruise.
    fn is_time_to_cruise(&mut self) -> bool {
        self.inflight <= self.inflight_with_headroom()
            && self.inflight <= self.inflight_for(self.max_bw, 1.0)
    }

    /// §5.3.3.6 BBRIsTimeToGoDown.
    fn is_time_to_go_down(&mut self, rs: &RateSample) -> bool {
        if self.is_cwnd_limited() && self.cwnd >= self.inflight_longterm {
            // The bandwidth is limited by inflight_longterm: keep probing.
            self.reset_full_bw();
            self.full_bw = rs.delivery_rate;
            false
        } else {
            self.full_bw_now
        }
    }

    /// §5.3.3.5.3 BBRIsTimeToProbeBW; starts REFILL when it is.
    fn is_time_to_probe_bw(&mut self, now: Timestamp) -> bool {
        let elapsed = now > self.cycle_stamp + self.bw_probe_wait;
        // BBRIsRenoCoexistenceProbeTime: the Reno round count is the target inflight in packets.
        let reno_rounds = (self.target_inflight() / self.mss).min(MAX_RENO_ROUNDS);
        if elapsed || self.rounds_since_bw_probe >= reno_rounds {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// §5.3.3.6 BBRRaiseInflightLongtermSlope: double the growth per round, up to 2^30 MSS.
    fn raise_inflight_longterm_slope(&mut self) {
        let growth_this_round = self.mss.checked_shl(self.bw_probe_up_rounds).unwrap_or(INF);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(MAX_PROBE_UP_ROUNDS);
        self.probe_up_cnt = (self.cwnd / growth_this_round.max(1)).max(1);
    }

    /// §5.3.3.6 BBRProbeInflightLongtermUpward.
    fn probe_inflight_longterm_upward(&mut self, newly_acked: u64) {
        if !self.is_cwnd_limited() || self.cwnd < self.inflight_longterm {
            return; // not fully using inflight_longterm, so don't grow it
        }
        self.bw_probe_up_acks = self.bw_probe_up_acks.saturating_add(newly_acked);
        if self.bw_probe_up_acks >= self.probe_up_cnt {
            let delta = self.bw_probe_up_acks / self.probe_up_cnt;
            self.bw_probe_up_acks -= delta * self.probe_up_cnt;
            self.inflight_longterm = self.inflight_longterm.saturating_add(delta);
        }
        if self.round_start {
            self.raise_inflight_longterm_slope();
        }
    }

    /// §5.3.3.6 BBRAdaptLongTermModel, with the inflight-too-high reaction of §5.5.10.2 taken
    /// on ACKs (see the module documentation).
    fn adapt_long_term_model(&mut self, now: Timestamp, rs: &RateSample) {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback; // starting to get bw probing samples
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // End of samples from the bandwidth probe.
            self.ack_phase = AckPhase::Init;
            self.bw_probe_samples = false;
            if self.state.is_probe_bw() && !rs.is_app_limited {
                self.cycle_count += 1; // §5.5.6 BBRAdvanceMaxBwFilter
            }
        }
        if Self::is_inflight_too_high(rs) {
            if self.bw_probe_samples {
                self.handle_inflight_too_high(now, rs);
            }
            return;
        }
        // Loss rate is safe: adjust the upper bound upward.
        if self.inflight_longterm == INF {
            return;
        }
        self.inflight_longterm = self.inflight_longterm.max(rs.tx_in_flight);
        if self.state == State::Up {
            self.probe_inflight_longterm_upward(rs.newly_acked);
        }
    }

    /// §5.5.10.2 BBRHandleInflightTooHigh.
    fn handle_inflight_too_high(&mut self, now: Timestamp, rs: &RateSample) {
        self.bw_probe_samples = false; // only react once per bw probe
        if !rs.is_app_limited {
            let target = (self.target_inflight() as f64 * BETA) as u64;
            self.inflight_longterm = rs.tx_in_flight.max(target);
        }
        if self.state == State::Up {
            self.start_probe_bw_down(now);
        }
    }

    /// §5.3.4.3 BBRCheckProbeRTT.
    fn check_probe_rtt(&mut self, now: Timestamp, rs: &RateSample) {
        if self.state != State::ProbeRtt && self.probe_rtt_expired && !self.idle_restart {
            self.set_state(State::ProbeRtt, 1.0, PROBE_RTT_CWND_GAIN); // BBREnterProbeRTT
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.state == State::ProbeRtt {
            self.handle_probe_rtt(now);
        }
        if rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// §5.3.4.3 BBRHandleProbeRTT.
    fn handle_probe_rtt(&mut self, now: Timestamp) {
        if self.probe_rtt_done_stamp.is_none() && self.inflight <= self.probe_rtt_cwnd() {
            // Wait for at least ProbeRTTDuration and one round.
            self.probe_rtt_done_stamp = Some(now + PROBE_RTT_DURATION);
            self.probe_rtt_round_done = false;
            self.start_round();
        } else if self.probe_rtt_done_stamp.is_some() {
            self.probe_rtt_round_done |= self.round_start;
            if self.probe_rtt_round_done {
                self.check_probe_rtt_done(now);
            }
        }
    }

    /// §5.3.4.3 BBRCheckProbeRTTDone and §5.3.4.4 BBRExitProbeRTT.
    fn check_probe_rtt_done(&mut self, now: Timestamp) {
        if self.probe_rtt_done_stamp.is_some_and(|done| now > done) {
            self.probe_rtt_min_stamp = Some(now); // schedule the next ProbeRTT
            self.restore_cwnd();
            self.reset_short_term_model();
            if self.full_bw_reached {
                self.start_probe_bw_down(now);
                self.start_probe_bw_cruise();
            } else {
                self.enter_startup();
            }
        }
    }

    /// §5.6.4.5 BBRProbeRTTCwnd.
    fn probe_rtt_cwnd(&mut self) -> u64 {
        self.bdp_multiple(self.bw, PROBE_RTT_CWND_GAIN).max(self.min_pipe_cwnd)
    }

    /// §5.6.4.4 BBRSaveCwnd.
    fn save_cwnd(&mut self) {
        self.prior_cwnd = if !self.in_recovery && self.state != State::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }

    /// §5.6.4.4 BBRRestoreCwnd.
    fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }
}

/// Model updates (§5.5) and control parameters (§5.6).
impl Bbr {
    /// §5.2.3 BBRUpdateModelAndState.
    fn update_model_and_state(&mut self, now: Timestamp, rs: &RateSample) {
        self.update_latest_delivery_signals(rs);
        self.update_congestion_signals(rs);
        self.update_ack_aggregation(now, rs.newly_acked);
        self.check_full_bw_reached(rs);
        self.check_startup_done(rs);
        // §5.3.2 BBRCheckDrainDone.
        if self.state == State::Drain && self.inflight <= self.inflight_for(self.bw, 1.0) {
            self.enter_probe_bw(now);
        }
        self.update_probe_bw_cycle_phase(now, rs);
        self.update_min_rtt(now, rs.rtt);
        self.check_probe_rtt(now, rs);
        // §5.5.10.3 BBRAdvanceLatestDeliverySignals.
        if self.loss_round_start {
            self.bw_latest = rs.delivery_rate;
            self.inflight_latest = rs.delivered;
        }
        // §5.5.10.3 BBRBoundBWForModel.
        self.bw = self.max_bw.min(self.bw_shortterm);
    }

    /// §5.5.10.3 BBRUpdateLatestDeliverySignals.
    fn update_latest_delivery_signals(&mut self, rs: &RateSample) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(rs.delivery_rate);
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
    }

    /// §5.5.10.3 BBRUpdateCongestionSignals, with §5.5.5 BBRUpdateMaxBw.
    fn update_congestion_signals(&mut self, rs: &RateSample) {
        self.update_round(rs.prior_delivered);
        if rs.delivery_rate > 0 && (rs.delivery_rate >= self.max_bw || !rs.is_app_limited) {
            self.max_bw = self.max_bw_filter.update(self.cycle_count, rs.delivery_rate);
        }
        if !self.loss_round_start {
            return; // wait until the end of the round trip
        }
        // BBRAdaptLowerBoundsFromCongestion: not while probing for bandwidth.
        let probing = matches!(self.state, State::Startup | State::Refill | State::Up);
        if !probing && self.loss_in_round {
            // BBRInitLowerBounds, BBRLossLowerBounds.
            if self.bw_shortterm == INF {
                self.bw_shortterm = self.max_bw;
            }
            if self.inflight_shortterm == INF {
                self.inflight_shortterm = self.cwnd;
            }
            let bw = (BETA * self.bw_shortterm as f64) as u64;
            self.bw_shortterm = self.bw_latest.max(bw);
            let inflight = (BETA * self.inflight_shortterm as f64) as u64;
            self.inflight_shortterm = self.inflight_latest.max(inflight);
        }
        self.loss_in_round = false;
    }

    /// §5.5.10.3 BBRResetCongestionSignals.
    fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// §5.5.10.3 BBRResetShortTermModel.
    fn reset_short_term_model(&mut self) {
        self.bw_shortterm = INF;
        self.inflight_shortterm = INF;
    }

    /// §5.5.9 BBRUpdateACKAggregation.
    fn update_ack_aggregation(&mut self, now: Timestamp, newly_acked: u64) {
        let start = *self.extra_acked_interval_start.get_or_insert(now);
        let mut expected = (self.bw as f64 * (now - start).as_secs_f64()) as u64;
        // Reset the interval if the ACK rate is below the expected rate.
        if self.extra_acked_delivered <= expected {
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start = Some(now);
            expected = 0;
        }
        self.extra_acked_delivered = self.extra_acked_delivered.saturating_add(newly_acked);
        let extra = (self.extra_acked_delivered - expected).min(self.cwnd);
        self.extra_acked = if self.full_bw_reached {
            self.extra_acked_filter.update(self.round_count, extra)
        } else {
            extra
        };
    }

    /// §5.3.1.2 BBRResetFullBW.
    fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// §5.3.1.2 BBRCheckFullBWReached.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_now || !self.round_start || rs.is_app_limited {
            return;
        }
        if rs.delivery_rate as f64 >= self.full_bw as f64 * FULL_BW_GROWTH {
            self.reset_full_bw();
            self.full_bw = rs.delivery_rate;
            return;
        }
        self.full_bw_count += 1;
        self.full_bw_now = self.full_bw_count >= FULL_BW_COUNT;
        self.full_bw_reached |= self.full_bw_now;
    }

    /// §5.3.1.1 BBRCheckStartupDone with §5.3.1.3 BBRCheckStartupHighLoss.
    fn check_startup_done(&mut self, rs: &RateSample) {
        if !self.full_bw_reached && self.loss_round_start {
            if self.in_recovery
                && self.loss_events_in_round >= STARTUP_FULL_LOSS_CNT
                && Self::is_inflight_too_high(rs)
            {
                self.inflight_longterm = self.bdp.max(self.inflight_latest);
                self.full_bw_reached = true;
            }
            self.loss_events_in_round = 0;
        }
        if self.state == State::Startup && self.full_bw_reached {
            self.enter_drain();
        }
    }

    /// §5.3.4.3 BBRUpdateMinRTT.
    fn update_min_rtt(&mut self, now: Timestamp, rtt: Duration) {
        self.probe_rtt_expired =
            self.probe_rtt_min_stamp.is_none_or(|stamp| now > stamp + PROBE_RTT_INTERVAL);
        if self.probe_rtt_min_delay.is_none_or(|d| rtt < d) || self.probe_rtt_expired {
            self.probe_rtt_min_delay = Some(rtt);
            self.probe_rtt_min_stamp = Some(now);
        }
        let min_rtt_expired =
            self.min_rtt_stamp.is_none_or(|stamp| now > stamp + MIN_RTT_FILTER_LEN);
        let probe_min = self.probe_rtt_min_delay;
        if min_rtt_expired || probe_min.zip(self.min_rtt).is_some_and(|(p, m)| p < m) {
            self.min_rtt = probe_min;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
    }

    /// §5.6.2 BBRSetPacingRateWithGain.
    fn set_pacing_rate_with_gain(&mut self, gain: f64) {
        let rate = gain * self.bw as f64 * (100.0 - PACING_MARGIN_PERCENT) / 100.0;
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// §5.2.3 BBRUpdateControlParameters: §5.6.2 pacing rate, §5.6.3 send quantum, §5.6.4 cwnd.
    fn update_control_parameters(&mut self, newly_acked: u64) {
        self.set_pacing_rate_with_gain(self.pacing_gain);
        let quantum = (self.pacing_rate * 0.001) as u64;
        self.send_quantum = quantum.min(64 * 1024).max(2 * self.mss);
        self.set_cwnd(newly_acked);
    }

    /// §5.6.4.6 BBRSetCwnd, with §5.6.4.4 packet conservation in the first round of recovery.
    fn set_cwnd(&mut self, newly_acked: u64) {
        // §5.6.4.2 BBRUpdateMaxInflight.
        let cap = self.bdp_multiple(self.bw, self.cwnd_gain).saturating_add(self.extra_acked);
        self.max_inflight = self.quantization_budget(cap);
        if self.packet_conservation_until.is_some() {
            self.cwnd = self.cwnd.max(self.inflight.saturating_add(newly_acked));
        } else if self.full_bw_reached {
            self.cwnd = self.cwnd.saturating_add(newly_acked).min(self.max_inflight);
        } else if self.cwnd < self.max_inflight || self.delivered < self.initial_cwnd {
            self.cwnd = self.cwnd.saturating_add(newly_acked);
        }
        self.cwnd = self.cwnd.max(self.min_pipe_cwnd);
        // §5.6.4.5 BBRBoundCwndForProbeRTT.
        if self.state == State::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
        // §5.6.4.7 BBRBoundCwndForModel.
        let cap = match self.state {
            State::Cruise | State::ProbeRtt => self.inflight_with_headroom(),
            s if s.is_probe_bw() => self.inflight_longterm,
            _ => INF,
        };
        let cap = cap.min(self.inflight_shortterm).max(self.min_pipe_cwnd);
        self.cwnd = self.cwnd.min(cap);
    }
}
