//! CUBIC congestion control (RFC 9438) with QUIC's recovery period (RFC 9002 §7.3.2) and,
//! optionally, HyStart++ slow start (RFC 9406).
//!
//! Windows are kept in bytes as `f64`; the RFC's segment-based formulas are converted by scaling
//! with the maximum datagram size (MSS): W_cubic(t) = C·MSS·(t−K)³ + W_max with W_max in bytes and
//! K = ∛((W_max − cwnd_epoch) / (C·MSS)), which is RFC 9438 §4.2 figures 1 and 2 in bytes.
//!
//! RTT: RFC 9438 §4.2 computes the target "after the next RTT" with the *smoothed* RTT, which is
//! what [`Cubic`] uses (`AckEvent::rtt.smoothed()`); HyStart++ uses the latest sample
//! (RFC 9406 §4.2 currRTT).

use super::{
    AckEvent, CcConfig, CcStats, CongestionController, Coupling, CouplingState, LossEvent,
    MINIMUM_WINDOW_PACKETS,
};
use crate::recovery::rtt::RttEstimator;
use crate::time::{Duration, Timestamp};

/// RFC 9438 §4.1.1 C, in segments per second cubed.
pub const C: f64 = 0.4;
/// RFC 9438 §4.1.1 β_cubic, the multiplicative decrease factor.
pub const BETA_CUBIC: f64 = 0.7;
/// RFC 9438 §4.3 α_cubic = 3·(1 − β_cubic) / (1 + β_cubic), the Reno-friendly additive increase.
pub const ALPHA_CUBIC: f64 = 3.0 * (1.0 - BETA_CUBIC) / (1.0 + BETA_CUBIC);

/// RFC 9406 §4.3 MIN_RTT_THRESH.
const HYSTART_MIN_RTT_THRESH: Duration = Duration::from_millis(4);
/// RFC 9406 §4.3 MAX_RTT_THRESH.
const HYSTART_MAX_RTT_THRESH: Duration = Duration::from_millis(16);
/// RFC 9406 §4.3 MIN_RTT_DIVISOR.
const HYSTART_MIN_RTT_DIVISOR: u32 = 8;
/// RFC 9406 §4.3 N_RTT_SAMPLE.
const HYSTART_N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3 CSS_GROWTH_DIVISOR.
const HYSTART_CSS_GROWTH_DIVISOR: f64 = 4.0;
/// RFC 9406 §4.3 CSS_ROUNDS.
const HYSTART_CSS_ROUNDS: u32 = 5;

/// Tunables of [`Cubic`]; `Default` is the RFC-recommended configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CubicOptions {
    /// RFC 9438 §4.7 fast convergence (default on).
    pub fast_convergence: bool,
    /// RFC 9406 HyStart++ for the initial slow start (default on; RFC 9438 §4.10 says CUBIC
    /// SHOULD use it). The pacer is assumed to be in use, so L = infinity (RFC 9406 §4.3).
    pub hystart: bool,
}

impl Default for CubicOptions {
    fn default() -> Self {
        Self {
            fast_convergence: true,
            hystart: true,
        }
    }
}

/// RFC 9406 §4.2 state of HyStart++.
#[derive(Debug, Clone, Default)]
struct HyStart {
    /// Turned off after the first congestion event (RFC 9406 §4.2: only the initial slow start).
    enabled: bool,
    /// Start of the current round: the round ends once the RTT of a packet sent at or after
    /// this instant is sampled (the time-based equivalent of windowEnd = SND.NXT). Rounds
    /// follow the samples, not every acknowledgement: in SPNS a path's packets are
    /// acknowledged by other paths' ACKs a path-delay difference before its own ACKs sample
    /// them (report §2.2), and rounds cut by those early ACKs held samples of packets sent two
    /// rounds back, whose lower delay looked like a spurious exit and resumed slow start.
    round_start: Option<Timestamp>,
    last_round_min_rtt: Option<Duration>,
    current_round_min_rtt: Option<Duration>,
    rtt_sample_count: u32,
    /// `Some` while in Conservative Slow Start (cssBaselineMinRtt).
    css_baseline_min_rtt: Option<Duration>,
    /// CSS rounds begun, counting a partial first round.
    css_rounds: u32,
}

/// What an RTT sample did to HyStart++'s rounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RoundOutcome {
    Counted,
    /// CSS_ROUNDS rounds of Conservative Slow Start are over: congestion avoidance begins.
    CssDone,
}

impl HyStart {
    /// RFC 9406 §4.2 per RTT sample: end the round if the sampled packet (sent at `sent`) was
    /// sent after it began, then count the sample.
    fn on_sample(&mut self, now: Timestamp, sent: Timestamp, rtt: Duration) -> RoundOutcome {
        if self.round_start.is_none_or(|start| sent >= start) {
            if self.css_baseline_min_rtt.is_some() {
                if self.css_rounds >= HYSTART_CSS_ROUNDS {
                    self.enabled = false;
                    return RoundOutcome::CssDone;
                }
                self.css_rounds += 1;
            }
            self.start_round(now);
        }
        self.observe(rtt);
        RoundOutcome::Counted
    }

    /// RFC 9406 §4.2: at the start of each round.
    fn start_round(&mut self, now: Timestamp) {
        self.round_start = Some(now);
        self.last_round_min_rtt = self.current_round_min_rtt.take();
        self.rtt_sample_count = 0;
    }

    fn observe(&mut self, rtt: Duration) {
        self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.rtt_sample_count += 1;
    }

    /// RFC 9406 §4.2: delay increase that makes slow start exit to CSS.
    fn delay_increased(&self) -> Option<Duration> {
        let (Some(current), Some(last)) = (self.current_round_min_rtt, self.last_round_min_rtt)
        else {
            return None;
        };
        if self.rtt_sample_count < HYSTART_N_RTT_SAMPLE {
            return None;
        }
        let thresh = (last / HYSTART_MIN_RTT_DIVISOR)
            .min(HYSTART_MAX_RTT_THRESH)
            .max(HYSTART_MIN_RTT_THRESH);
        (current >= last + thresh).then_some(current)
    }
}

/// RFC 9438 CUBIC for one path. Build with [`Cubic::new`] or [`Cubic::with_options`].
#[derive(Debug, Clone)]
pub struct Cubic {
    options: CubicOptions,
    /// Maximum datagram size in bytes (at least 1).
    mss: f64,
    /// Congestion window, bytes.
    cwnd: f64,
    /// Slow start threshold, bytes; infinite initially.
    ssthresh: f64,
    /// RFC 9438 §4.1.2 W_max, bytes; 0 until the first congestion event.
    w_max: f64,
    /// RFC 9438 §4.1.2 cwnd_prior: the window just before the last reduction, bytes.
    cwnd_prior: f64,
    /// RFC 9438 §4.2 K, seconds.
    k: f64,
    /// RFC 9438 §4.1.2 t_epoch, shifted forward by application-limited periods (§5.8); `None`
    /// until the current congestion avoidance stage begins.
    epoch_start: Option<Timestamp>,
    /// RFC 9438 §4.1.2 cwnd_epoch, bytes.
    cwnd_epoch: f64,
    /// RFC 9438 §4.3 W_est, bytes.
    w_est: f64,
    /// RFC 9438 §4.3 α in use: α_cubic, or 1 once W_est has reached cwnd_prior.
    alpha: f64,
    /// RFC 9438 §4.8: the next congestion avoidance stage follows persistent congestion.
    after_timeout: bool,
    /// RFC 9002 §7.3.2 congestion_recovery_start_time.
    recovery_start: Option<Timestamp>,
    in_recovery: bool,
    /// Instant up to which elapsed time has been accounted to the epoch (§5.8 bookkeeping).
    epoch_clock: Option<Timestamp>,
    /// The state before the most recent reduction, for RFC 9438 §4.9 (its own `undo` is None).
    undo: Option<Box<Cubic>>,
    hystart: HyStart,
    srtt: Duration,
    congestion_events: u64,
}

impl Cubic {
    /// CUBIC with the default [`CubicOptions`] (fast convergence and HyStart++ on).
    pub fn new(config: CcConfig) -> Self {
        Self::with_options(config, CubicOptions::default())
    }

    /// CUBIC with explicit options.
    pub fn with_options(config: CcConfig, options: CubicOptions) -> Self {
        let mss = config.max_datagram_size.max(1) as f64;
        let cwnd = (config.initial_window as f64).max(MINIMUM_WINDOW_PACKETS as f64 * mss);
        Self {
            options,
            mss,
            cwnd,
            ssthresh: f64::INFINITY,
            w_max: 0.0,
            cwnd_prior: 0.0,
            k: 0.0,
            epoch_start: None,
            cwnd_epoch: 0.0,
            w_est: 0.0,
            alpha: ALPHA_CUBIC,
            after_timeout: false,
            recovery_start: None,
            in_recovery: false,
            epoch_clock: None,
            undo: None,
            hystart: HyStart {
                enabled: options.hystart,
                ..HyStart::default()
            },
            srtt: Duration::ZERO,
            congestion_events: 0,
        }
    }

    /// The slow start threshold in bytes, `None` while infinite.
    pub fn ssthresh(&self) -> Option<u64> {
        self.ssthresh.is_finite().then_some(self.ssthresh as u64)
    }

    /// RFC 9438 §4.1.2 W_max in bytes (0 before the first congestion event).
    pub fn w_max(&self) -> u64 {
        self.w_max as u64
    }

    /// RFC 9438 §4.2 K of the current congestion avoidance stage.
    pub fn k(&self) -> Duration {
        Duration::try_from_secs_f64(self.k).unwrap_or(Duration::ZERO)
    }

    fn minimum_window(&self) -> f64 {
        MINIMUM_WINDOW_PACKETS as f64 * self.mss
    }

    /// RFC 9002 Appendix B.5 InCongestionRecovery(sent_time).
    fn in_congestion_recovery(&self, sent_time: Timestamp) -> bool {
        self.recovery_start.is_some_and(|start| sent_time <= start)
    }

    /// RFC 9438 §4.2 figure 1, in bytes, `t` in seconds since the epoch.
    fn w_cubic(&self, t: f64) -> f64 {
        let d = t - self.k;
        C * self.mss * d * d * d + self.w_max
    }

    /// Begins a congestion avoidance stage (RFC 9438 §4.1.2 t_epoch, cwnd_epoch; §4.2 K;
    /// §4.3 W_est = cwnd_epoch).
    fn start_epoch(&mut self, now: Timestamp) -> Timestamp {
        self.epoch_start = Some(now);
        self.cwnd_epoch = self.cwnd;
        self.w_est = self.cwnd;
        if self.after_timeout || self.w_max <= self.cwnd {
            // §4.8: after a timeout (here: persistent congestion) K = 0 and W_max = cwnd_epoch.
            // The same applies when no congestion event has set W_max yet (a stage entered from
            // HyStart++'s CSS, RFC 9406 §4.2), or if W_max is below the window: the curve then
            // starts at its plateau and probes upwards, as §4.5 intends.
            self.w_max = self.cwnd;
            self.k = 0.0;
            self.after_timeout = false;
        } else {
            // §4.2 figure 2.
            self.k = ((self.w_max - self.cwnd_epoch) / (C * self.mss)).cbrt();
        }
        now
    }

    /// RFC 9438 §4.2–§4.5: one ACK of `acked` bytes in congestion avoidance.
    fn congestion_avoidance(&mut self, now: Timestamp, acked: f64, srtt: Duration) {
        if acked <= 0.0 || self.cwnd <= 0.0 || !self.cwnd.is_finite() {
            return;
        }
        let epoch_start = match self.epoch_start {
            Some(start) => start,
            None => self.start_epoch(now),
        };
        let t = (now - epoch_start).as_secs_f64();
        // §4.2: target for one (smoothed) RTT ahead, clamped to [cwnd, 1.5·cwnd].
        // (f64::max/min rather than clamp: they never panic and drop a NaN operand.)
        let target = self
            .w_cubic(t + srtt.as_secs_f64())
            .max(self.cwnd)
            .min(1.5 * self.cwnd);
        // §4.3: W_est grows by α_cubic·segments_acked/cwnd segments per ACK; α becomes 1 once
        // W_est reaches cwnd_prior.
        self.w_est += self.alpha * acked * self.mss / self.cwnd;
        if self.w_est >= self.cwnd_prior {
            self.alpha = 1.0;
        }
        if self.w_cubic(t) < self.w_est {
            // §4.3 Reno-friendly region: cwnd = W_est (never reduced by this rule).
            self.cwnd = self.cwnd.max(self.w_est);
        } else {
            // §4.4 concave and §4.5 convex regions: (target − cwnd)/cwnd per segment acked.
            self.cwnd += (target - self.cwnd) / self.cwnd * acked;
        }
    }

    /// RFC 9002 §7.3.1 slow start with RFC 9406 HyStart++. Returns the bytes left over for
    /// congestion avoidance when the window reaches ssthresh (or CSS ends) during this ACK.
    fn slow_start(&mut self, ack: &AckEvent<'_>, acked: f64) -> f64 {
        let room = (self.ssthresh - self.cwnd).max(0.0);
        let in_slow_start = acked.min(room);
        if !self.hystart.enabled {
            self.cwnd += in_slow_start;
            return acked - in_slow_start;
        }
        let hs = &mut self.hystart;
        // RFC 9406 §4.2 takes "the RTT sample" of each ACK: an ACK that gave this path none
        // (SPNS, report §2.2) must not count its stale latest RTT again, which made a spurious
        // CSS exit look like a lower round minimum and sent the path back to slow start.
        if ack.rtt_sampled
            && hs.on_sample(ack.now, ack.largest_acked_sent_time, ack.rtt.latest())
                == RoundOutcome::CssDone
        {
            // RFC 9406 §4.2: after CSS_ROUNDS, enter congestion avoidance with ssthresh = cwnd.
            self.ssthresh = self.cwnd;
            return acked;
        }
        match hs.css_baseline_min_rtt {
            None => {
                self.cwnd += in_slow_start;
                if let Some(baseline) = hs.delay_increased() {
                    // RFC 9406 §4.2: exit slow start into Conservative Slow Start; the partial
                    // round counts towards CSS_ROUNDS.
                    hs.css_baseline_min_rtt = Some(baseline);
                    hs.css_rounds = 1;
                }
            }
            Some(baseline) => {
                self.cwnd += in_slow_start / HYSTART_CSS_GROWTH_DIVISOR;
                let enough = hs.rtt_sample_count >= HYSTART_N_RTT_SAMPLE;
                if enough && hs.current_round_min_rtt.is_some_and(|rtt| rtt < baseline) {
                    // RFC 9406 §4.2: the exit was spurious; resume slow start.
                    hs.css_baseline_min_rtt = None;
                    hs.css_rounds = 0;
                }
            }
        }
        acked - in_slow_start
    }

    /// RFC 9438 §4.6 multiplicative decrease and §4.7 fast convergence, entering the RFC 9002
    /// §7.3.2 recovery period.
    fn reduce(&mut self, now: Timestamp) {
        self.undo = None;
        self.undo = Some(Box::new(self.clone()));
        self.congestion_events += 1;
        self.recovery_start = Some(now);
        self.in_recovery = true;
        // RFC 9406 §4.2: a congestion event ends HyStart++ for the rest of the connection.
        self.hystart.enabled = false;
        // §4.7: remember a lower W_max when the flow lost ground since the last event.
        self.w_max = if self.options.fast_convergence && self.cwnd < self.w_max {
            self.cwnd * (1.0 + BETA_CUBIC) / 2.0
        } else {
            self.cwnd
        };
        // §4.6. cwnd rather than flight size is reduced, which §4.6 allows because the window
        // never grows while application-limited (§5.8).
        self.cwnd_prior = self.cwnd;
        self.ssthresh = (self.cwnd * BETA_CUBIC).max(self.minimum_window());
        self.cwnd = self.ssthresh;
        self.epoch_start = None;
        self.alpha = ALPHA_CUBIC;
    }

    /// §5.8: t in figure 1 excludes application-limited periods. Shifts t_epoch forward by the
    /// time elapsed since the last accounted instant.
    fn exclude_from_epoch(&mut self, now: Timestamp) {
        if let (Some(start), Some(since)) = (self.epoch_start, self.epoch_clock) {
            self.epoch_start = Some(start + (now - since));
        }
        self.epoch_clock = Some(now);
    }
}

impl CongestionController for Cubic {
    fn on_packet_sent(&mut self, now: Timestamp, bytes: u64, bytes_in_flight: u64) {
        // §5.8: a send with nothing else in flight ends an idle period, which must not count
        // towards t (the behaviour of Linux's CUBIC after idle).
        if bytes_in_flight <= bytes {
            self.exclude_from_epoch(now);
        }
    }

    fn on_rtt_sample_without_ack(&mut self, now: Timestamp, rtt: &RttEstimator) {
        // RFC 9406 §4.2 counts every RTT sample of the round. An SPNS path whose packets other
        // paths' ACKs acknowledge first gets its samples this way only; without them its round
        // minimum came from rare, unqueued samples and never rose, so slow start overshot.
        if !self.hystart.enabled || self.cwnd >= self.ssthresh {
            return;
        }
        // The sampled packet left `latest` ago (latest_rtt includes the peer's ACK delay).
        let sent = now.saturating_sub(rtt.latest());
        if self.hystart.on_sample(now, sent, rtt.latest()) == RoundOutcome::CssDone {
            self.ssthresh = self.cwnd;
        }
    }

    fn on_rtt_restart(&mut self) {
        // RFC 9406 §4.2 compares round minima: a round measured on another route (an SPNS or
        // MPNS path's first samples, borrowed from ACKs that came back on a faster path) made
        // the path's own, longer RTT look like a delay increase, and slow start ended at a few
        // tens of kilobytes on a path of megabytes. Rounds start over; an exit to CSS they
        // caused is undone.
        if self.hystart.enabled {
            self.hystart = HyStart {
                enabled: true,
                ..HyStart::default()
            };
        }
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>, _coupling: Coupling<'_>) {
        self.srtt = ack.rtt.smoothed();
        // RFC 9002 §7.3.2: no growth until a packet sent during recovery is acknowledged.
        if self.in_congestion_recovery(ack.largest_acked_sent_time) {
            self.epoch_clock = Some(ack.now);
            return;
        }
        self.in_recovery = false;
        // RFC 9438 §5.8 (and RFC 9002 §7.8): no growth when application-limited, and the time
        // does not count towards the epoch.
        if ack.app_limited {
            self.exclude_from_epoch(ack.now);
            return;
        }
        self.epoch_clock = Some(ack.now);
        let mut acked = ack.bytes_acked as f64;
        if self.cwnd < self.ssthresh {
            acked = self.slow_start(ack, acked);
        }
        if self.cwnd >= self.ssthresh {
            self.congestion_avoidance(ack.now, acked, ack.rtt.smoothed());
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent<'_>, _coupling: Coupling<'_>) {
        self.srtt = loss.rtt.smoothed();
        if (loss.lost_bytes > 0 || loss.ecn_ce)
            && !self.in_congestion_recovery(loss.largest_lost_sent_time)
        {
            self.reduce(loss.now);
        }
        if loss.persistent_congestion {
            // RFC 9002 §7.6.2 and RFC 9438 §4.8: collapse to the minimum window and restart slow
            // start; the next congestion avoidance stage uses K = 0, W_max = cwnd_epoch.
            self.cwnd = self.minimum_window();
            self.recovery_start = None;
            self.in_recovery = false;
            self.after_timeout = true;
            self.epoch_start = None;
            self.hystart.enabled = false;
        }
    }

    /// RFC 9438 §4.9: restore the state saved before the most recent reduction. The window and
    /// ssthresh never go below their current values, so growth since the event is kept. Only one
    /// reduction is remembered and a second call does nothing; the caller should signal a
    /// spurious event only when the loss that caused the reduction turned out not to be one.
    fn on_spurious_congestion_event(&mut self) {
        let Some(prior) = self.undo.take() else {
            return;
        };
        self.cwnd = self.cwnd.max(prior.cwnd);
        self.ssthresh = self.ssthresh.max(prior.ssthresh);
        self.w_max = prior.w_max;
        self.cwnd_prior = prior.cwnd_prior;
        self.k = prior.k;
        self.epoch_start = prior.epoch_start;
        self.cwnd_epoch = prior.cwnd_epoch;
        self.w_est = self.w_est.max(prior.w_est);
        self.alpha = prior.alpha;
        self.after_timeout = prior.after_timeout;
        self.recovery_start = prior.recovery_start;
        self.in_recovery = false;
    }

    fn on_mtu_update(&mut self, max_datagram_size: u64) {
        let mss = max_datagram_size.max(1) as f64;
        // RFC 9002 §7.2: an initial window is recomputed with the new size.
        let initial = super::initial_window(self.mss as u64) as f64;
        if self.cwnd == initial && self.congestion_events == 0 {
            self.cwnd = super::initial_window(mss as u64) as f64;
        }
        self.mss = mss;
        self.cwnd = self.cwnd.max(self.minimum_window());
    }

    fn window(&self) -> u64 {
        let cwnd = if self.cwnd.is_finite() {
            self.cwnd
        } else {
            self.minimum_window()
        };
        cwnd.max(self.minimum_window()) as u64
    }

    fn coupling_state(&self) -> CouplingState {
        CouplingState {
            cwnd: self.window(),
            srtt: self.srtt,
            inter_loss_bytes: 0,
            active: true,
        }
    }

    fn name(&self) -> &'static str {
        "cubic"
    }

    fn stats(&self) -> CcStats {
        let state = if self.in_recovery {
            "recovery"
        } else if self.cwnd < self.ssthresh {
            if self.hystart.css_baseline_min_rtt.is_some() && self.hystart.enabled {
                "conservative_slow_start"
            } else {
                "slow_start"
            }
        } else {
            "congestion_avoidance"
        };
        CcStats {
            cwnd: self.window(),
            ssthresh: self.ssthresh(),
            pacing_rate: None,
            bandwidth_estimate: None,
            state,
            congestion_events: self.congestion_events,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_sim::{self as sim, ms, Harness};

    const MSS: u64 = 1200;
    const MSS_F: f64 = MSS as f64;

    type H = Harness<Cubic>;

    fn harness(options: CubicOptions) -> H {
        Harness::new(Cubic::with_options(CcConfig::new(MSS), options))
    }

    fn plain() -> H {
        harness(CubicOptions {
            hystart: false,
            ..CubicOptions::default()
        })
    }

    fn segments(h: &H) -> f64 {
        h.cc.window() as f64 / MSS_F
    }

    /// Ack-clocked congestion avoidance: every millisecond from `from_ms` for `dur_ms`, one window
    /// is acknowledged per smoothed RTT, for packets sent one RTT earlier. Calls
    /// `observe(now_ms, harness)` after each tick.
    fn ack_clock(h: &mut H, from_ms: u64, dur_ms: u64, mut observe: impl FnMut(u64, &H)) {
        let rtt_ms = h.rtt.smoothed().as_millis() as u64;
        let mut carry = 0.0;
        for now in from_ms..from_ms + dur_ms {
            carry += h.cc.cwnd / rtt_ms as f64;
            let bytes = carry.floor();
            carry -= bytes;
            h.ack(now, now - rtt_ms, bytes as u64);
            observe(now, h);
        }
    }

    /// Slow start to `segments` datagrams, then a loss at 1000 ms (recovery ends for packets sent
    /// after that instant).
    fn after_loss_at(h: &mut H, segments: u64) {
        let grow = segments * MSS - h.cc.window();
        h.ack(500, 400, grow);
        assert_eq!(h.cc.window(), segments * MSS);
        h.lose(1000, 990, false);
    }

    #[test]
    fn loss_sets_window_to_beta_w_max() {
        let mut h = plain();
        after_loss_at(&mut h, 100);
        assert_eq!(h.cc.w_max(), 100 * MSS);
        assert!((segments(&h) - 70.0).abs() < 1e-9);
        assert_eq!(h.cc.ssthresh(), Some(84_000));
        assert_eq!(h.cc.stats().state, "recovery");
        // A second loss in the same recovery period does nothing.
        h.lose(1050, 1000, false);
        assert_eq!(h.cc.window(), 70 * MSS);
        assert_eq!(h.cc.stats().congestion_events, 1);
    }

    #[test]
    fn window_follows_cubic_function() {
        let mut h = plain();
        after_loss_at(&mut h, 1000);
        assert_eq!(h.cc.window(), 700 * MSS);
        let mut checked = 0;
        let (w_max, k_expected) = (1000.0, (300.0f64 / C).cbrt());
        let mut samples = Vec::new();
        ack_clock(&mut h, 1101, 20_000, |now, h| {
            let epoch = h.cc.epoch_start.expect("congestion avoidance started");
            assert_eq!(epoch, ms(1101));
            assert!((h.cc.k - k_expected).abs() < 1e-9, "K = {}", h.cc.k);
            let t = (ms(now) - epoch).as_secs_f64();
            let expected = C * (t - k_expected).powi(3) + w_max;
            if (now - 1101) % 1000 == 0 {
                assert!(
                    (segments(h) - expected).abs() <= 1.0,
                    "t={t}: {} vs {expected}",
                    segments(h)
                );
                checked += 1;
                samples.push(segments(h));
            }
        });
        assert_eq!(checked, 20);
        assert!((h.cc.k().as_secs_f64() - 9.0856).abs() < 1e-3);
        // Concave before K (shrinking increments), convex after (growing increments).
        let steps: Vec<f64> = samples.windows(2).map(|w| w[1] - w[0]).collect();
        for i in 1..8 {
            assert!(steps[i] < steps[i - 1], "concave at {i}: {steps:?}");
        }
        for i in 11..steps.len() {
            assert!(steps[i] > steps[i - 1], "convex at {i}: {steps:?}");
        }
        assert!(samples[8] < w_max && samples[10] > w_max - 1.0);
    }

    #[test]
    fn fast_convergence_reduces_w_max() {
        for fast_convergence in [true, false] {
            let mut h = harness(CubicOptions {
                fast_convergence,
                hystart: false,
            });
            after_loss_at(&mut h, 1000);
            ack_clock(&mut h, 1100, 3_000, |_, _| {});
            let before = h.cc.cwnd;
            assert!(before < 1000.0 * MSS_F && before > 700.0 * MSS_F);
            h.lose(4200, 4150, false);
            let expected_w_max = if fast_convergence {
                before * (1.0 + BETA_CUBIC) / 2.0
            } else {
                before
            };
            assert!((h.cc.w_max - expected_w_max).abs() < 1e-6);
            assert!((h.cc.cwnd - before * BETA_CUBIC).abs() < 1e-6);
        }
    }

    #[test]
    fn reno_friendly_region_dominates_small_bdp() {
        let mut h = plain();
        for _ in 0..50 {
            h.set_rtt(Duration::from_millis(10));
        }
        after_loss_at(&mut h, 20);
        let mut in_reno_region = 0;
        let mut alpha_one_at = None;
        ack_clock(&mut h, 1100, 1_000, |now, h| {
            let t = (ms(now) - h.cc.epoch_start.unwrap()).as_secs_f64();
            if h.cc.w_cubic(t) < h.cc.w_est {
                in_reno_region += 1;
                assert!((h.cc.cwnd - h.cc.w_est).abs() < 1e-6);
            }
            if h.cc.alpha == 1.0 && alpha_one_at.is_none() {
                alpha_one_at = Some(segments(h));
            }
        });
        assert!(in_reno_region > 900, "{in_reno_region}");
        // α switched to 1 once W_est reached cwnd_prior = 20 segments.
        let at = alpha_one_at.expect("alpha became 1");
        assert!((20.0..21.5).contains(&at), "{at}");
        // Then about one datagram per RTT, as Reno: ~100 RTTs in the rest of the second.
        assert!(
            segments(&h) > 90.0 && segments(&h) < 125.0,
            "{}",
            segments(&h)
        );
        assert!(h.cc.w_cubic(1.0) < segments(&h) * MSS_F);
    }

    #[test]
    fn target_is_clamped_to_one_and_a_half_cwnd() {
        let mut h = plain();
        after_loss_at(&mut h, 100);
        h.ack(1100, 1050, MSS);
        // Far in the convex region W_cubic is enormous; one full window of ACKs can at most
        // add half a window.
        let before = h.cc.cwnd;
        h.ack(100_000, 99_000, before as u64);
        assert!(
            h.cc.cwnd <= 1.5 * before + 1e-6 && h.cc.cwnd > 1.49 * before,
            "{}",
            h.cc.cwnd
        );
    }

    #[test]
    fn spurious_congestion_event_is_undone() {
        let mut h = plain();
        after_loss_at(&mut h, 100);
        ack_clock(&mut h, 1100, 2_000, |_, _| {});
        let (cwnd, w_max, k, epoch) = (h.cc.cwnd, h.cc.w_max, h.cc.k, h.cc.epoch_start);
        let ssthresh = h.cc.ssthresh();
        h.lose(3200, 3150, false);
        assert!(h.cc.cwnd < cwnd);
        h.cc.on_spurious_congestion_event();
        assert_eq!(h.cc.cwnd, cwnd);
        assert_eq!(h.cc.w_max, w_max);
        assert_eq!(h.cc.k, k);
        assert_eq!(h.cc.epoch_start, epoch);
        assert_eq!(h.cc.ssthresh(), ssthresh);
        assert_eq!(h.cc.stats().state, "congestion_avoidance");
        // Growth resumes immediately; a second undo is a no-op.
        h.ack(3210, 3205, MSS);
        assert!(h.cc.cwnd > cwnd);
        let grown = h.cc.cwnd;
        h.cc.on_spurious_congestion_event();
        assert_eq!(h.cc.cwnd, grown);
    }

    #[test]
    fn persistent_congestion_restarts_with_k_zero() {
        let mut h = plain();
        after_loss_at(&mut h, 100);
        h.lose(2000, 1900, true);
        assert_eq!(h.cc.window(), 2 * MSS);
        assert_eq!(h.cc.stats().state, "slow_start");
        assert!((h.cc.ssthresh - 49.0 * MSS_F).abs() < 1e-6);
        // 47 datagrams of slow start to ssthresh, the remaining 53 in congestion avoidance.
        h.ack(2100, 2000, 100 * MSS);
        assert!(h.cc.window() > 49 * MSS && h.cc.window() < 50 * MSS + MSS / 2);
        // §4.8: K = 0 and W_max = cwnd_epoch for the first stage after the timeout.
        assert_eq!(h.cc.k, 0.0);
        assert!((h.cc.w_max - 49.0 * MSS_F).abs() < 1e-6);
    }

    #[test]
    fn no_growth_and_frozen_epoch_while_app_limited() {
        let mut h = plain();
        after_loss_at(&mut h, 100);
        h.ack(1100, 1050, MSS);
        let epoch = h.cc.epoch_start.unwrap();
        let cwnd = h.cc.cwnd;
        for now in (1200..6200).step_by(100) {
            h.ack_at(ms(now), ms(now - 100), 10 * MSS, true);
        }
        assert_eq!(h.cc.cwnd, cwnd);
        assert_eq!(h.cc.epoch_start, Some(epoch + Duration::from_millis(5000)));
        // Idle: nothing in flight for 10 s, then a send: the idle time is excluded too.
        h.cc.on_packet_sent(ms(16_100), MSS, MSS);
        assert_eq!(
            h.cc.epoch_start,
            Some(epoch + Duration::from_millis(15_000))
        );
        assert_eq!(h.cc.stats().state, "congestion_avoidance");
    }

    /// One HyStart++ round: the whole window is acknowledged at `*now + rtt` for packets sent at
    /// `*now`, with latest RTT `rtt`.
    fn round(h: &mut H, now: &mut u64, rtt_ms: u64) {
        let sent = *now;
        *now += rtt_ms;
        let segments = h.cc.window() / MSS;
        for _ in 0..segments {
            h.set_rtt(Duration::from_millis(rtt_ms));
            h.ack(*now, sent, MSS);
        }
    }

    #[test]
    fn hystart_keeps_doubling_at_constant_rtt() {
        let mut h = harness(CubicOptions::default());
        let mut now = 1000;
        for _ in 0..6 {
            let before = h.cc.window();
            round(&mut h, &mut now, 100);
            assert_eq!(h.cc.window(), 2 * before);
            assert_eq!(h.cc.stats().state, "slow_start");
        }
    }

    /// A path's first rounds measured another route (samples borrowed from ACKs that came
    /// back on a faster path, 60 ms); its own RTT is 150 ms. Without the restart HyStart++ takes
    /// the jump for a delay increase and leaves slow start; after it, rounds start over at the
    /// path's own RTT and slow start goes on doubling.
    #[test]
    fn an_rtt_restart_forgets_rounds_measured_on_another_route() {
        for restart in [false, true] {
            let mut h = harness(CubicOptions::default());
            let mut now = 1000;
            round(&mut h, &mut now, 60);
            round(&mut h, &mut now, 60);
            if restart {
                h.cc.on_rtt_restart();
            }
            for _ in 0..2 {
                round(&mut h, &mut now, 150);
            }
            let state = h.cc.stats().state;
            match restart {
                true => assert_eq!(state, "slow_start"),
                false => assert_eq!(state, "conservative_slow_start"),
            }
        }
    }

    #[test]
    fn hystart_delay_increase_enters_css_then_congestion_avoidance() {
        let mut h = harness(CubicOptions::default());
        let mut now = 1000;
        round(&mut h, &mut now, 100);
        round(&mut h, &mut now, 100);
        // RTT up by 13 ms >= max(4, min(100/8, 16)) = 12.5 ms: exit to CSS after 8 samples.
        let before = h.cc.window();
        round(&mut h, &mut now, 113);
        assert_eq!(h.cc.stats().state, "conservative_slow_start");
        assert_eq!(
            h.cc.hystart.css_baseline_min_rtt,
            Some(Duration::from_millis(113))
        );
        // 8 ACKs of slow start then the rest at a quarter.
        let segments = before / MSS;
        assert_eq!(h.cc.window(), before + 8 * MSS + (segments - 8) * MSS / 4);
        // CSS grows by a quarter of the bytes acknowledged per round.
        for _ in 0..4 {
            let before = h.cc.window();
            round(&mut h, &mut now, 113);
            assert_eq!(h.cc.stats().state, "conservative_slow_start");
            assert!(h.cc.window() - before <= before / 4 + MSS);
        }
        // The partial round counted: five rounds done, the next round enters CA.
        let before = h.cc.window();
        round(&mut h, &mut now, 113);
        assert_eq!(h.cc.stats().state, "congestion_avoidance");
        assert_eq!(h.cc.ssthresh(), Some(before));
        assert!(h.cc.window() < before + 2 * MSS);
        assert_eq!(h.cc.w_max(), before);
    }

    #[test]
    fn hystart_resumes_slow_start_when_rtt_drops() {
        let mut h = harness(CubicOptions::default());
        let mut now = 1000;
        round(&mut h, &mut now, 100);
        round(&mut h, &mut now, 100);
        round(&mut h, &mut now, 120);
        assert_eq!(h.cc.stats().state, "conservative_slow_start");
        round(&mut h, &mut now, 110);
        assert_eq!(h.cc.stats().state, "slow_start");
        let before = h.cc.window();
        round(&mut h, &mut now, 110);
        assert_eq!(h.cc.window(), 2 * before);
    }

    /// RFC 9406 §4.2 counts RTT samples. In SPNS an ACK can acknowledge a path's packets
    /// without giving it a sample (report §2.2); its stale latest RTT must not count, or an old,
    /// lower sample looks like a new round's minimum and ends CSS spuriously.
    #[test]
    fn hystart_ignores_acks_without_a_fresh_rtt_sample() {
        let mut h = harness(CubicOptions::default());
        let mut now = 1000;
        round(&mut h, &mut now, 100);
        round(&mut h, &mut now, 100);
        round(&mut h, &mut now, 120);
        assert_eq!(h.cc.stats().state, "conservative_slow_start");
        // The estimator's latest sample is lower than the baseline, but this round's ACKs
        // bring no sample of their own.
        h.set_rtt(Duration::from_millis(105));
        h.rtt_sampled = false;
        let sent = now;
        now += 120;
        for _ in 0..h.cc.window() / MSS {
            h.ack(now, sent, MSS);
        }
        assert_eq!(h.cc.stats().state, "conservative_slow_start");
        // With samples, the same lower RTT is a spurious exit: back to slow start.
        h.rtt_sampled = true;
        round(&mut h, &mut now, 105);
        assert_eq!(h.cc.stats().state, "slow_start");
    }

    #[test]
    fn hystart_counts_rtt_samples_that_acknowledge_nothing() {
        let mut h = harness(CubicOptions::default());
        let mut now = 1000;
        round(&mut h, &mut now, 100);
        round(&mut h, &mut now, 100);
        // SPNS: the next round's packets are acknowledged by another path's ACKs (no sample
        // for this path) ...
        h.rtt_sampled = false;
        let sent = now;
        now += 130;
        h.ack(now, sent, MSS);
        // ... and the path's own ACKs, arriving later, sample its grown round trip.
        for _ in 0..HYSTART_N_RTT_SAMPLE {
            h.set_rtt(Duration::from_millis(130));
            h.cc.on_rtt_sample_without_ack(ms(now), &h.rtt);
        }
        h.ack(now, sent, MSS);
        assert_eq!(h.cc.stats().state, "conservative_slow_start");
    }

    #[test]
    fn hystart_disabled_ignores_delay() {
        let mut h = plain();
        let mut now = 1000;
        for rtt in [100, 100, 150, 200, 250] {
            let before = h.cc.window();
            round(&mut h, &mut now, rtt);
            assert_eq!(h.cc.window(), 2 * before);
        }
        assert_eq!(h.cc.stats().state, "slow_start");
    }

    #[test]
    fn degenerate_inputs_never_panic() {
        let config = CcConfig {
            max_datagram_size: 0,
            initial_window: 0,
        };
        let mut h = Harness {
            cc: Cubic::new(config),
            rtt: RttEstimator::new(Duration::ZERO),
            rtt_sampled: true,
        };
        for i in 0..100u64 {
            h.ack(i, i, u64::MAX / 2);
            if i % 10 == 0 {
                h.lose(i, i, i % 20 == 0);
            }
            assert!(h.cc.window() >= 2);
            let _ = h.cc.pacing_rate(Duration::ZERO);
        }
    }

    #[test]
    fn closed_loop_utilisation() {
        let link = sim::Link::mbps(10, 50);
        for (hystart, paced) in [(false, false), (true, false), (true, true)] {
            let mut cc = Cubic::with_options(
                CcConfig::new(MSS),
                CubicOptions {
                    hystart,
                    fast_convergence: true,
                },
            );
            let out = sim::run(&mut cc, &link, Duration::from_secs(40), paced);
            assert!(
                out.utilisation > 0.85,
                "hystart {hystart} paced {paced}: {out:?}"
            );
            assert!(
                out.max_cwnd < 4 * (link.bdp() + link.buffer_bytes),
                "{out:?}"
            );
            assert!(out.losses > 0, "{out:?}");
        }
    }
}
