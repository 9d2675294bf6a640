//! BBRv3 ProbeBW (§5.3.3) and ProbeRTT (§5.3.4) transitions, and cwnd save/restore (§5.6.4.4).

use super::*;

/// ProbeBW (§5.3.3) and ProbeRTT (§5.3.4) transitions.
impl Bbr {
    /// §5.3.3.6 BBREnterProbeBW.
    pub(super) fn enter_probe_bw(&mut self, now: Timestamp) {
        self.cwnd_gain = DEFAULT_CWND_GAIN;
        self.start_probe_bw_down(now);
    }

    /// §5.3.3.5.3 BBRPickProbeWait: 0 or 1 rounds, and 2 s plus up to 1 s.
    pub(super) fn pick_probe_wait(&mut self) {
        self.rounds_since_bw_probe = self.next_random() & 1;
        let extra_ms = self.next_random() % 1001;
        self.bw_probe_wait = Duration::from_millis(2000 + extra_ms);
    }

    /// §5.3.3.6 BBRStartProbeBW_DOWN.
    pub(super) fn start_probe_bw_down(&mut self, now: Timestamp) {
        self.reset_congestion_signals();
        self.probe_up_cnt = INF;
        self.pick_probe_wait();
        self.cycle_stamp = now;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.set_state(State::Down, PROBE_BW_DOWN_PACING_GAIN, DEFAULT_CWND_GAIN);
    }

    /// §5.3.3.6 BBRStartProbeBW_CRUISE.
    pub(super) fn start_probe_bw_cruise(&mut self) {
        self.set_state(State::Cruise, 1.0, DEFAULT_CWND_GAIN);
    }

    /// §5.3.3.6 BBRStartProbeBW_REFILL.
    pub(super) fn start_probe_bw_refill(&mut self) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acks = 0;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.set_state(State::Refill, 1.0, DEFAULT_CWND_GAIN);
    }

    /// §5.3.3.6 BBRStartProbeBW_UP.
    pub(super) fn start_probe_bw_up(&mut self, delivery_rate: u64) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = delivery_rate;
        self.set_state(State::Up, PROBE_BW_UP_PACING_GAIN, PROBE_BW_UP_CWND_GAIN);
        self.raise_inflight_longterm_slope();
    }

    /// §5.3.3.6 BBRUpdateProbeBWCyclePhase.
    pub(super) fn update_probe_bw_cycle_phase(&mut self, now: Timestamp, rs: &RateSample) {
        if !self.full_bw_reached {
            return;
        }
        self.adapt_long_term_model(now, rs);
        // (A copy of the state: the guards below change `self`.)
        let state = self.state;
        match state {
            State::Down if !self.is_time_to_probe_bw(now) && self.is_time_to_cruise() => {
                self.start_probe_bw_cruise();
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
    pub(super) fn is_time_to_cruise(&mut self) -> bool {
        self.inflight <= self.inflight_with_headroom()
            && self.inflight <= self.inflight_for(self.max_bw, 1.0)
    }

    /// §5.3.3.6 BBRIsTimeToGoDown.
    pub(super) fn is_time_to_go_down(&mut self, rs: &RateSample) -> bool {
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
    pub(super) fn is_time_to_probe_bw(&mut self, now: Timestamp) -> bool {
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
    pub(super) fn raise_inflight_longterm_slope(&mut self) {
        let growth_this_round = self.mss.checked_shl(self.bw_probe_up_rounds).unwrap_or(INF);
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(MAX_PROBE_UP_ROUNDS);
        self.probe_up_cnt = (self.cwnd / growth_this_round.max(1)).max(1);
    }

    /// §5.3.3.6 BBRProbeInflightLongtermUpward.
    pub(super) fn probe_inflight_longterm_upward(&mut self, newly_acked: u64) {
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
    pub(super) fn adapt_long_term_model(&mut self, now: Timestamp, rs: &RateSample) {
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
    pub(super) fn handle_inflight_too_high(&mut self, now: Timestamp, rs: &RateSample) {
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
    pub(super) fn check_probe_rtt(&mut self, now: Timestamp, rs: &RateSample) {
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
    pub(super) fn handle_probe_rtt(&mut self, now: Timestamp) {
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
    pub(super) fn check_probe_rtt_done(&mut self, now: Timestamp) {
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
    pub(super) fn probe_rtt_cwnd(&mut self) -> u64 {
        self.bdp_multiple(self.bw, PROBE_RTT_CWND_GAIN)
            .max(self.min_pipe_cwnd)
    }

    /// §5.6.4.4 BBRSaveCwnd.
    pub(super) fn save_cwnd(&mut self) {
        self.prior_cwnd = if !self.in_recovery && self.state != State::ProbeRtt {
            self.cwnd
        } else {
            self.prior_cwnd.max(self.cwnd)
        };
    }

    /// §5.6.4.4 BBRRestoreCwnd.
    pub(super) fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }
}
