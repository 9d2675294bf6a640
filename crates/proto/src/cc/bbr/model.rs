//! BBRv3 model updates (§5.5), Startup and Drain exits (§5.3.1, §5.3.2) and the control
//! parameters derived from the model (§5.6).

use super::*;

/// Model updates (§5.5) and control parameters (§5.6).
impl Bbr {
    /// §5.2.3 BBRUpdateModelAndState.
    pub(super) fn update_model_and_state(&mut self, now: Timestamp, rs: &RateSample) {
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
    pub(super) fn update_latest_delivery_signals(&mut self, rs: &RateSample) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(rs.delivery_rate);
        self.inflight_latest = self.inflight_latest.max(rs.delivered);
        if rs.prior_delivered >= self.loss_round_delivered {
            self.loss_round_delivered = self.delivered;
            self.loss_round_start = true;
        }
    }

    /// §5.5.10.3 BBRUpdateCongestionSignals, with §5.5.5 BBRUpdateMaxBw.
    pub(super) fn update_congestion_signals(&mut self, rs: &RateSample) {
        self.update_round(rs.prior_delivered);
        if rs.delivery_rate > 0 && (rs.delivery_rate >= self.max_bw || !rs.is_app_limited) {
            self.max_bw = self
                .max_bw_filter
                .update(self.cycle_count, rs.delivery_rate);
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
    pub(super) fn reset_congestion_signals(&mut self) {
        self.loss_in_round = false;
        self.bw_latest = 0;
        self.inflight_latest = 0;
    }

    /// §5.5.10.3 BBRResetShortTermModel.
    pub(super) fn reset_short_term_model(&mut self) {
        self.bw_shortterm = INF;
        self.inflight_shortterm = INF;
    }

    /// §5.5.9 BBRUpdateACKAggregation.
    pub(super) fn update_ack_aggregation(&mut self, now: Timestamp, newly_acked: u64) {
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
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// §5.3.1.2 BBRCheckFullBWReached.
    pub(super) fn check_full_bw_reached(&mut self, rs: &RateSample) {
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
    pub(super) fn check_startup_done(&mut self, rs: &RateSample) {
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
    pub(super) fn update_min_rtt(&mut self, now: Timestamp, rtt: Duration) {
        self.probe_rtt_expired = self
            .probe_rtt_min_stamp
            .is_none_or(|stamp| now > stamp + PROBE_RTT_INTERVAL);
        if self.probe_rtt_min_delay.is_none_or(|d| rtt < d) || self.probe_rtt_expired {
            self.probe_rtt_min_delay = Some(rtt);
            self.probe_rtt_min_stamp = Some(now);
        }
        let min_rtt_expired = self
            .min_rtt_stamp
            .is_none_or(|stamp| now > stamp + MIN_RTT_FILTER_LEN);
        let probe_min = self.probe_rtt_min_delay;
        let lower = match (probe_min, self.min_rtt) {
            (Some(p), Some(m)) => p < m,
            (p, m) => p.is_some() && m.is_none(), // BBR.min_rtt starts at Infinity
        };
        if min_rtt_expired || lower {
            self.min_rtt = probe_min;
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
    }

    /// §5.6.2 BBRSetPacingRateWithGain.
    pub(super) fn set_pacing_rate_with_gain(&mut self, gain: f64) {
        let rate = gain * self.bw as f64 * (100.0 - PACING_MARGIN_PERCENT) / 100.0;
        if self.full_bw_reached || rate > self.pacing_rate {
            self.pacing_rate = rate;
        }
    }

    /// §5.2.3 BBRUpdateControlParameters: §5.6.2 pacing rate, §5.6.3 send quantum, §5.6.4 cwnd.
    pub(super) fn update_control_parameters(&mut self, newly_acked: u64) {
        self.set_pacing_rate_with_gain(self.pacing_gain);
        let quantum = (self.pacing_rate * 0.001) as u64;
        self.send_quantum = quantum.min(64 * 1024).max(2 * self.mss);
        self.set_cwnd(newly_acked);
    }

    /// §5.6.4.6 BBRSetCwnd, with §5.6.4.4 packet conservation in the first round of recovery.
    pub(super) fn set_cwnd(&mut self, newly_acked: u64) {
        // §5.6.4.2 BBRUpdateMaxInflight.
        let cap = self
            .bdp_multiple(self.bw, self.cwnd_gain)
            .saturating_add(self.extra_acked);
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
