//! NewReno congestion control exactly as specified by RFC 9002 §7 and its pseudocode in
//! Appendix B.
//!
//! The controller works in bytes. It has the three states of RFC 9002 §7.3 (figure 3): slow start,
//! a recovery period and congestion avoidance. Bytes in flight are tracked by the caller (loss
//! recovery), not here; the controller only sees [`AckEvent`]s and [`LossEvent`]s.
//!
//! Events aggregate all packets newly acknowledged (or lost) by one ACK frame, so the
//! per-packet decisions of Appendix B.5 are taken once per event using the most recently sent
//! packet of the event (`largest_acked_sent_time`): if it was sent after the recovery period
//! began, the period is over and all of the event's bytes count towards growth.

use super::{
    AckEvent, CcConfig, CcStats, CongestionController, Coupling, CouplingState, LossEvent,
    MINIMUM_WINDOW_PACKETS,
};
use crate::time::{Duration, Timestamp};

/// RFC 9002 Appendix B.1 kLossReductionFactor = 0.5, applied as a division by this value.
const LOSS_REDUCTION_DIVISOR: u64 = 2;

/// RFC 9002 NewReno for one path. Build with [`NewReno::new`].
#[derive(Debug, Clone)]
pub struct NewReno {
    /// Maximum datagram size (at least 1, so arithmetic never degenerates).
    mss: u64,
    /// RFC 9002 Appendix B.2 congestion_window, bytes.
    cwnd: u64,
    /// RFC 9002 Appendix B.2 ssthresh, bytes; `u64::MAX` stands for "infinite" (Appendix B.3).
    ssthresh: u64,
    /// RFC 3465 §2.1 byte counter for congestion avoidance (suggested by RFC 9002 Appendix B.5):
    /// bytes acknowledged since the window last grew by one datagram.
    bytes_acked: u64,
    /// RFC 9002 Appendix B.2 congestion_recovery_start_time; `None` is the initial value 0 and the
    /// value after persistent congestion (Appendix B.8).
    recovery_start: Option<Timestamp>,
    /// Whether no packet sent after `recovery_start` has been acknowledged yet (statistics only:
    /// the recovery decisions themselves compare send times, as Appendix B.5 does).
    in_recovery: bool,
    /// Latest smoothed RTT seen, exported through [`CongestionController::coupling_state`].
    srtt: Duration,
    congestion_events: u64,
}

impl NewReno {
    /// A controller in slow start with `config.initial_window` (RFC 9002 §7.2, Appendix B.3).
    pub fn new(config: CcConfig) -> Self {
        let mss = config.max_datagram_size.max(1);
        let min_window = MINIMUM_WINDOW_PACKETS * mss;
        Self {
            mss,
            cwnd: config.initial_window.max(min_window),
            ssthresh: u64::MAX,
            bytes_acked: 0,
            recovery_start: None,
            in_recovery: false,
            srtt: Duration::ZERO,
            congestion_events: 0,
        }
    }

    /// RFC 9002 §7.2 kMinimumWindow.
    fn minimum_window(&self) -> u64 {
        MINIMUM_WINDOW_PACKETS * self.mss
    }

    /// RFC 9002 Appendix B.5 InCongestionRecovery(sent_time).
    fn in_congestion_recovery(&self, sent_time: Timestamp) -> bool {
        self.recovery_start.is_some_and(|start| sent_time <= start)
    }

    /// The slow start threshold, `None` while infinite.
    pub fn ssthresh(&self) -> Option<u64> {
        (self.ssthresh != u64::MAX).then_some(self.ssthresh)
    }

    /// RFC 9002 Appendix B.6 OnCongestionEvent(sent_time); true if a recovery period began.
    fn on_new_congestion_event(&mut self, now: Timestamp, sent_time: Timestamp) -> bool {
        // §7.3.2: a sender already in a recovery period does not react again.
        if self.in_congestion_recovery(sent_time) {
            return false;
        }
        self.recovery_start = Some(now);
        self.in_recovery = true;
        self.congestion_events += 1;
        self.ssthresh = self.cwnd / LOSS_REDUCTION_DIVISOR;
        self.cwnd = self.ssthresh.max(self.minimum_window());
        self.bytes_acked = 0;
        true
    }

    /// RFC 9002 Appendix B.5 up to the congestion avoidance increase: the end of the recovery
    /// period, the application-limited check and slow start. Returns the bytes acknowledged in
    /// congestion avoidance, 0 when the window must not grow. The coupled controllers (LIA, OLIA)
    /// share everything but the congestion avoidance increase (RFC 6356 §4).
    pub(crate) fn ack_before_avoidance(&mut self, ack: &AckEvent<'_>) -> u64 {
        self.srtt = ack.rtt.smoothed();
        // §7.3.2: the recovery period ends when a packet sent during it is acknowledged.
        if self.in_congestion_recovery(ack.largest_acked_sent_time) {
            return 0;
        }
        self.in_recovery = false;
        // §7.8: do not increase the window when application or flow-control limited.
        if ack.app_limited {
            return 0;
        }
        let mut acked = ack.bytes_acked;
        // §7.3.1 slow start: grow by the bytes acknowledged while below ssthresh. Bytes that
        // would carry the window past ssthresh count towards congestion avoidance instead,
        // which is what the per-packet loop of Appendix B.5 does for an aggregated ACK.
        if self.cwnd < self.ssthresh {
            let slow_start = acked.min(self.ssthresh - self.cwnd);
            self.cwnd = self.cwnd.saturating_add(slow_start);
            acked -= slow_start;
        }
        acked
    }

    /// RFC 9002 Appendix B.8 OnPacketsLost; true if a new recovery period began.
    pub(crate) fn handle_loss(&mut self, loss: &LossEvent<'_>) -> bool {
        self.srtt = loss.rtt.smoothed();
        let new_event = (loss.lost_bytes > 0 || loss.ecn_ce)
            && self.on_new_congestion_event(loss.now, loss.largest_lost_sent_time);
        // §7.6.2: persistent congestion collapses the window to kMinimumWindow and ends the
        // recovery period (congestion_recovery_start_time = 0), re-entering slow start since
        // the window is now below ssthresh.
        if loss.persistent_congestion {
            self.cwnd = self.minimum_window();
            self.recovery_start = None;
            self.in_recovery = false;
            self.bytes_acked = 0;
        }
        new_event
    }

    /// Adds `bytes` to the congestion window (a coupled controller's avoidance increase).
    pub(crate) fn grow_window(&mut self, bytes: u64) {
        self.cwnd = self.cwnd.saturating_add(bytes);
    }

    /// Removes `bytes` from the congestion window, not below `floor` (OLIA's negative α).
    pub(crate) fn shrink_window(&mut self, bytes: u64, floor: u64) {
        self.cwnd = self.cwnd.saturating_sub(bytes).max(floor).min(self.cwnd);
    }

    /// The maximum datagram size in use (at least 1).
    pub(crate) fn mss(&self) -> u64 {
        self.mss
    }
}

impl CongestionController for NewReno {
    fn on_packet_sent(&mut self, _now: Timestamp, _bytes: u64, _bytes_in_flight: u64) {
        // Appendix B.4 only increments bytes_in_flight, which the caller tracks.
    }

    /// RFC 9002 Appendix B.5 OnPacketsAcked.
    fn on_ack(&mut self, ack: &AckEvent<'_>, _coupling: Coupling<'_>) {
        let acked = self.ack_before_avoidance(ack);
        // §7.3.3 congestion avoidance: at most one datagram per congestion window acknowledged,
        // counted in bytes (RFC 3465 §2.1, as suggested by Appendix B.5).
        if acked > 0 {
            self.bytes_acked = self.bytes_acked.saturating_add(acked);
            while self.cwnd > 0 && self.bytes_acked >= self.cwnd {
                self.bytes_acked -= self.cwnd;
                self.cwnd = self.cwnd.saturating_add(self.mss);
            }
        }
    }

    /// RFC 9002 Appendix B.8 OnPacketsLost.
    fn on_congestion_event(&mut self, loss: &LossEvent<'_>, _coupling: Coupling<'_>) {
        self.handle_loss(loss);
    }

    fn on_mtu_update(&mut self, max_datagram_size: u64) {
        let mss = max_datagram_size.max(1);
        // RFC 9002 §7.2: an initial window is recomputed with the new size.
        if self.cwnd == super::initial_window(self.mss) && self.congestion_events == 0 {
            self.cwnd = super::initial_window(mss);
        }
        self.mss = mss;
        self.cwnd = self.cwnd.max(self.minimum_window());
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn coupling_state(&self) -> CouplingState {
        CouplingState {
            cwnd: self.cwnd,
            srtt: self.srtt,
            inter_loss_bytes: 0,
            active: true,
        }
    }

    fn name(&self) -> &'static str {
        "newreno"
    }

    fn stats(&self) -> CcStats {
        let state = if self.in_recovery {
            "recovery"
        } else if self.cwnd < self.ssthresh {
            "slow_start"
        } else {
            "congestion_avoidance"
        };
        CcStats {
            cwnd: self.cwnd,
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
    use crate::cc::test_sim::{self as sim, Harness};

    const MSS: u64 = 1200;

    #[test]
    fn slow_start_doubles_per_rtt() {
        let mut h = Harness::new(NewReno::new(CcConfig::new(MSS)));
        assert_eq!(h.cc.window(), 12_000);
        assert_eq!(h.cc.stats().state, "slow_start");
        for round in 0..5u64 {
            let before = h.cc.window();
            // One RTT: the whole window is acknowledged, one datagram per ACK.
            for i in 0..before / MSS {
                h.ack(100 * (round + 1) + i, 100 * round, MSS);
            }
            assert_eq!(h.cc.window(), 2 * before);
        }
    }

    #[test]
    fn loss_halves_once_per_recovery_period() {
        let mut h = Harness::new(NewReno::new(CcConfig::new(MSS)));
        h.ack(100, 0, 28_000);
        assert_eq!(h.cc.window(), 40_000);
        h.lose(200, 150, false);
        assert_eq!(h.cc.window(), 20_000);
        assert_eq!(h.cc.ssthresh(), Some(20_000));
        assert_eq!(h.cc.stats().state, "recovery");
        // Further losses of packets sent before the recovery period began: no reaction.
        h.lose(210, 190, false);
        h.lose(250, 200, false);
        assert_eq!(h.cc.window(), 20_000);
        // ACKs of packets sent before the period began: no growth, still in recovery.
        h.ack(260, 199, 10_000);
        assert_eq!(h.cc.window(), 20_000);
        assert_eq!(h.cc.stats().state, "recovery");
        // An ACK of a packet sent during recovery ends it; the window then grows linearly.
        h.ack(320, 201, 10_000);
        assert_eq!(h.cc.stats().state, "congestion_avoidance");
        assert_eq!(h.cc.window(), 20_000);
        h.ack(330, 210, 10_000);
        assert_eq!(h.cc.window(), 21_200);
        // A new loss of a packet sent after the recovery start halves again.
        h.lose(400, 300, false);
        assert_eq!(h.cc.window(), 10_600);
        assert_eq!(h.cc.stats().congestion_events, 2);
    }

    #[test]
    fn congestion_avoidance_adds_one_datagram_per_window() {
        let mut h = Harness::new(NewReno::new(CcConfig::new(MSS)));
        h.lose(10, 5, false);
        assert_eq!(h.cc.window(), 6_000);
        let mut now = 100;
        for _ in 0..10 {
            let before = h.cc.window();
            let mut acked = 0;
            while acked < before {
                h.ack(now, now - 50, MSS.min(before - acked));
                acked += MSS.min(before - acked);
                now += 1;
            }
            assert_eq!(h.cc.window(), before + MSS);
        }
    }

    #[test]
    fn persistent_congestion_collapses_to_minimum_window() {
        let mut h = Harness::new(NewReno::new(CcConfig::new(MSS)));
        h.ack(100, 0, 48_000);
        h.lose(500, 400, true);
        assert_eq!(h.cc.window(), 2 * MSS);
        assert_eq!(h.cc.ssthresh(), Some(30_000));
        // Slow start again, even for packets sent just before the collapse.
        assert_eq!(h.cc.stats().state, "slow_start");
        h.ack(600, 450, MSS);
        assert_eq!(h.cc.window(), 3 * MSS);
    }

    #[test]
    fn no_growth_while_app_limited() {
        let mut h = Harness::new(NewReno::new(CcConfig::new(MSS)));
        h.ack_with(100, 0, 50_000, true);
        assert_eq!(h.cc.window(), 12_000);
        h.lose(150, 120, false);
        h.ack_with(300, 200, 50_000, true);
        assert_eq!(h.cc.window(), 6_000);
        assert_eq!(h.cc.stats().state, "congestion_avoidance");
    }

    #[test]
    fn window_never_below_minimum() {
        let mut h = Harness::new(NewReno::new(CcConfig::new(MSS)));
        for i in 0..20 {
            h.lose(100 * (i + 1), 100 * (i + 1) - 1, i % 3 == 0);
            assert!(h.cc.window() >= 2 * MSS);
        }
        assert_eq!(h.cc.window(), 2 * MSS);
        // A degenerate datagram size does not panic either.
        let mut h = Harness::new(NewReno::new(CcConfig {
            max_datagram_size: 0,
            initial_window: 0,
        }));
        h.ack(100, 0, 1_000);
        h.lose(200, 150, true);
        assert!(h.cc.window() >= 2);
    }

    #[test]
    fn closed_loop_utilisation() {
        let link = sim::Link::mbps(10, 50);
        for paced in [false, true] {
            let mut cc = NewReno::new(CcConfig::new(MSS));
            let out = sim::run(&mut cc, &link, Duration::from_secs(40), paced);
            assert!(out.utilisation > 0.85, "paced {paced}: {out:?}");
            assert!(
                out.max_cwnd < 4 * (link.bdp() + link.buffer_bytes),
                "{out:?}"
            );
            assert!(out.losses > 0, "{out:?}");
        }
    }
}
