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
    use super::sim::Harness;
    use super::*;

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

/// A packet-level model of flows through drop-tail bottlenecks, shared by the closed-loop tests
/// of all controllers. It is deliberately small: one ACK per packet, RFC 9002 packet- and
/// time-threshold loss detection, a simple PTO, an optional [`Pacer`](super::Pacer), a
/// [`DeliveryRateEstimator`](super::DeliveryRateEstimator) feeding `AckEvent::rate_sample`, and
/// [`Coupling`](super::Coupling) among the flows of one connection. Every flow always has data.
#[cfg(test)]
pub(crate) mod sim {
    use std::collections::{BTreeMap, VecDeque};

    use crate::cc::{
        AckEvent, CongestionController, Coupling, CouplingState, DeliveryRateEstimator, LossEvent,
        Pacer, PacketDeliveryState,
    };
    use crate::recovery::rtt::{RttEstimator, INITIAL_RTT};
    use crate::time::{Duration, Timestamp};

    /// Datagram size used by the model.
    pub(crate) const MSS: u64 = 1200;

    /// `v` milliseconds after the epoch.
    pub(crate) fn ms(v: u64) -> Timestamp {
        Timestamp::from_nanos(v.saturating_mul(1_000_000))
    }

    /// A controller and the RTT estimator its hand-made events borrow (unit tests).
    pub(crate) struct Harness<C> {
        pub(crate) cc: C,
        pub(crate) rtt: RttEstimator,
        /// What the events say of `rtt` (see [`AckEvent::rtt_sampled`]); true by default.
        pub(crate) rtt_sampled: bool,
    }

    impl<C: CongestionController> Harness<C> {
        /// `cc` on a path whose RTT estimator has one 100 ms sample.
        pub(crate) fn new(cc: C) -> Self {
            let mut rtt = RttEstimator::new(INITIAL_RTT);
            rtt.update(Duration::ZERO, Duration::from_millis(100));
            Self {
                cc,
                rtt,
                rtt_sampled: true,
            }
        }

        /// Feeds one RTT sample.
        pub(crate) fn set_rtt(&mut self, rtt: Duration) {
            self.rtt.update(Duration::ZERO, rtt);
        }

        /// An ACK at `now` of `bytes`, the newest of which was sent at `sent`.
        pub(crate) fn ack_at(
            &mut self,
            now: Timestamp,
            sent: Timestamp,
            bytes: u64,
            app_limited: bool,
        ) {
            let single = [CouplingState::default()];
            let event = AckEvent {
                now,
                bytes_acked: bytes,
                largest_acked_sent_time: sent,
                bytes_in_flight: 0,
                app_limited,
                rtt: &self.rtt,
                rtt_sampled: self.rtt_sampled,
                rate_sample: None,
            };
            self.cc.on_ack(&event, Coupling::single(&single));
        }

        /// [`Harness::ack_at`] with times in milliseconds.
        pub(crate) fn ack_with(
            &mut self,
            now_ms: u64,
            sent_ms: u64,
            bytes: u64,
            app_limited: bool,
        ) {
            self.ack_at(ms(now_ms), ms(sent_ms), bytes, app_limited);
        }

        /// A non-application-limited ACK, times in milliseconds.
        pub(crate) fn ack(&mut self, now_ms: u64, sent_ms: u64, bytes: u64) {
            self.ack_with(now_ms, sent_ms, bytes, false);
        }

        /// The loss of one datagram sent at `sent_ms`, detected at `now_ms`.
        pub(crate) fn lose(&mut self, now_ms: u64, sent_ms: u64, persistent: bool) {
            let single = [CouplingState::default()];
            let event = LossEvent {
                now: ms(now_ms),
                lost_bytes: MSS,
                largest_lost_sent_time: ms(sent_ms),
                persistent_congestion: persistent,
                ecn_ce: false,
                bytes_in_flight: 0,
                rtt: &self.rtt,
            };
            self.cc
                .on_congestion_event(&event, Coupling::single(&single));
        }
    }

    /// A bottleneck: rate, two-way propagation delay, buffer, and a random loss probability
    /// applied to every packet it accepts (drawn from a fixed-seed generator).
    #[derive(Debug, Clone)]
    pub(crate) struct Link {
        pub(crate) bytes_per_sec: u64,
        pub(crate) rtt: Duration,
        pub(crate) buffer_bytes: u64,
        pub(crate) random_loss: f64,
    }

    impl Link {
        /// `mbit` Mbit/s, `rtt_ms` ms of propagation RTT, a buffer of one bandwidth-delay product.
        pub(crate) fn mbps(mbit: u64, rtt_ms: u64) -> Self {
            let mut link = Link {
                bytes_per_sec: mbit * 125_000,
                rtt: Duration::from_millis(rtt_ms),
                buffer_bytes: 0,
                random_loss: 0.0,
            };
            link.buffer_bytes = link.bdp();
            link
        }

        /// Bandwidth-delay product in bytes.
        pub(crate) fn bdp(&self) -> u64 {
            (self.bytes_per_sec as u128 * self.rtt.as_nanos() / 1_000_000_000) as u64
        }
    }

    /// One flow of a multi-flow run.
    pub(crate) struct Flow<'a> {
        pub(crate) cc: &'a mut dyn CongestionController,
        /// Index of the bottleneck link it crosses.
        pub(crate) link: usize,
        /// Propagation delay added to the link's.
        pub(crate) extra_rtt: Duration,
        /// Flows with the same connection number are coupled (one `Coupling` of all of them).
        pub(crate) connection: usize,
        pub(crate) paced: bool,
    }

    /// What a run measured for one flow.
    #[derive(Debug, Clone)]
    pub(crate) struct Outcome {
        /// Throughput in the second half of the run over the rate of the flow's link.
        pub(crate) utilisation: f64,
        /// Throughput in the second half, bytes per second.
        pub(crate) throughput: f64,
        pub(crate) max_cwnd: u64,
        pub(crate) final_cwnd: u64,
        pub(crate) losses: u64,
        /// Mean queueing delay of the flow's packets in the second half.
        pub(crate) mean_queue_delay: Duration,
    }

    struct Sent {
        size: u64,
        sent: Timestamp,
        delivery: PacketDeliveryState,
    }

    /// Per-flow simulation state.
    struct State {
        rtt: RttEstimator,
        rate: DeliveryRateEstimator,
        pacer: Pacer,
        outstanding: BTreeMap<u64, Sent>,
        /// (packet number, ACK arrival) of packets the bottleneck accepted, in order.
        acks: VecDeque<(u64, Timestamp)>,
        next_pn: u64,
        in_flight: u64,
        last_send: Timestamp,
        pto_count: u32,
        pace_at: Option<Timestamp>,
        measured: u64,
        queue_delay: (Duration, u32),
        out: Outcome,
    }

    struct LinkState {
        spec: Link,
        departures: VecDeque<Timestamp>,
        free_at: Timestamp,
        /// SplitMix64 state for random losses.
        rng: u64,
    }

    impl LinkState {
        /// Whether the next accepted packet is randomly lost.
        fn random_drop(&mut self) -> bool {
            if self.spec.random_loss <= 0.0 {
                return false;
            }
            self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64 <= self.spec.random_loss
        }
    }

    /// Runs one always-backlogged flow for `duration` over `link`.
    pub(crate) fn run(
        cc: &mut dyn CongestionController,
        link: &Link,
        duration: Duration,
        paced: bool,
    ) -> Outcome {
        let flow = Flow {
            cc,
            link: 0,
            extra_rtt: Duration::ZERO,
            connection: 0,
            paced,
        };
        run_flows(
            vec![flow],
            std::slice::from_ref(link),
            duration,
            &mut |_, _, _| {},
        )
        .remove(0)
    }

    /// A paced flow on `link` without extra delay.
    pub(crate) fn flow<'a>(
        cc: &'a mut dyn CongestionController,
        link: usize,
        connection: usize,
    ) -> Flow<'a> {
        Flow {
            cc,
            link,
            extra_rtt: Duration::ZERO,
            connection,
            paced: true,
        }
    }

    /// Two coupled subflows `a` and `b` (one connection) and a NewReno flow over one `link`.
    pub(crate) fn two_subflows_and_reno(
        a: &mut dyn CongestionController,
        b: &mut dyn CongestionController,
        link: &Link,
        duration: Duration,
    ) -> Vec<Outcome> {
        let mut reno = super::NewReno::new(crate::cc::CcConfig::new(MSS));
        let flows = vec![flow(a, 0, 0), flow(b, 0, 0), flow(&mut reno, 0, 1)];
        run_flows(
            flows,
            std::slice::from_ref(link),
            duration,
            &mut |_, _, _| {},
        )
    }

    /// Two coupled subflows over two disjoint bottlenecks.
    pub(crate) fn two_disjoint_subflows(
        a: &mut dyn CongestionController,
        b: &mut dyn CongestionController,
        links: &[Link; 2],
        duration: Duration,
    ) -> Vec<Outcome> {
        run_flows(
            vec![flow(a, 0, 0), flow(b, 1, 0)],
            links,
            duration,
            &mut |_, _, _| {},
        )
    }

    /// Runs `flows` over `links` for `duration`; `observe(flow, now, cc)` is called after every
    /// ACK a flow processes.
    pub(crate) fn run_flows(
        mut flows: Vec<Flow<'_>>,
        links: &[Link],
        duration: Duration,
        observe: &mut dyn FnMut(usize, Timestamp, &dyn CongestionController),
    ) -> Vec<Outcome> {
        let start = Timestamp::from_nanos(1_000_000_000);
        let (end, measure_from) = (start + duration, start + duration / 2);
        let mut links: Vec<LinkState> = links
            .iter()
            .map(|l| LinkState {
                spec: l.clone(),
                departures: VecDeque::new(),
                free_at: start,
                rng: 7,
            })
            .collect();
        let mut states: Vec<State> = flows.iter().map(|_| new_state(start)).collect();
        let mut now = start;
        while now < end {
            for i in 0..flows.len() {
                while states[i].acks.front().is_some_and(|&(_, at)| at <= now) {
                    let coupling = coupling_of(&flows, i);
                    let own = coupling.iter().position(|(j, _)| *j == i).unwrap_or(0);
                    let paths: Vec<CouplingState> = coupling.iter().map(|(_, c)| *c).collect();
                    let coupling = Coupling { paths: &paths, own };
                    on_ack(
                        &mut *flows[i].cc,
                        &mut states[i],
                        now,
                        coupling,
                        measure_from,
                    );
                    observe(i, now, &*flows[i].cc);
                }
            }
            for i in 0..flows.len() {
                let link = &mut links[flows[i].link];
                send(&mut flows[i], &mut states[i], link, now, measure_from);
            }
            let mut next = end;
            for st in &states {
                let pto = (!st.outstanding.is_empty()).then(|| pto_deadline(st));
                for at in [st.acks.front().map(|a| a.1), st.pace_at, pto]
                    .into_iter()
                    .flatten()
                {
                    next = next.min(at);
                }
            }
            now = next.max(now + Duration::from_nanos(1));
        }
        let secs = (end - measure_from).as_secs_f64();
        flows
            .iter()
            .zip(states)
            .map(|(flow, st)| {
                let mut out = st.out;
                out.throughput = st.measured as f64 / secs;
                out.utilisation = out.throughput / links[flow.link].spec.bytes_per_sec as f64;
                out.final_cwnd = flow.cc.window();
                out.mean_queue_delay = st.queue_delay.0 / st.queue_delay.1.max(1);
                out
            })
            .collect()
    }

    fn new_state(start: Timestamp) -> State {
        State {
            rtt: RttEstimator::new(INITIAL_RTT),
            rate: DeliveryRateEstimator::new(),
            pacer: Pacer::new(MSS, start),
            outstanding: BTreeMap::new(),
            acks: VecDeque::new(),
            next_pn: 0,
            in_flight: 0,
            last_send: start,
            pto_count: 0,
            pace_at: None,
            measured: 0,
            queue_delay: (Duration::ZERO, 0),
            out: Outcome {
                utilisation: 0.0,
                throughput: 0.0,
                max_cwnd: 0,
                final_cwnd: 0,
                losses: 0,
                mean_queue_delay: Duration::ZERO,
            },
        }
    }

    /// (flow index, state) of every flow of flow `i`'s connection.
    fn coupling_of(flows: &[Flow<'_>], i: usize) -> Vec<(usize, CouplingState)> {
        let conn = flows[i].connection;
        flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.connection == conn)
            .map(|(j, f)| (j, f.cc.coupling_state()))
            .collect()
    }

    fn pto_deadline(st: &State) -> Timestamp {
        st.last_send + st.rtt.pto_base() * 2u32.pow(st.pto_count.min(10))
    }

    /// One ACK arrival (one packet): RFC 9002 §6.1 loss detection before the acknowledgement is
    /// handed to the controller (Appendix A.7 order), then the rate sample.
    fn on_ack(
        cc: &mut dyn CongestionController,
        st: &mut State,
        now: Timestamp,
        coupling: Coupling<'_>,
        measure_from: Timestamp,
    ) {
        let (pn, _) = st.acks.pop_front().expect("due ACK");
        let Some(packet) = st.outstanding.remove(&pn) else {
            return;
        };
        st.pto_count = 0;
        st.rtt.update(Duration::ZERO, now - packet.sent);
        st.in_flight -= packet.size;
        st.rate
            .on_packet_acked(now, &packet.delivery, packet.size, packet.sent);
        let loss_delay = st.rtt.loss_delay();
        let lost: Vec<u64> = st
            .outstanding
            .range(..pn)
            .filter(|(&lpn, p)| lpn + 3 <= pn || p.sent + loss_delay <= now)
            .map(|(&lpn, _)| lpn)
            .collect();
        if !lost.is_empty() {
            let (mut bytes, mut newest) = (0, Timestamp::ZERO);
            for lpn in lost {
                let p = st.outstanding.remove(&lpn).expect("present");
                bytes += p.size;
                newest = newest.max(p.sent);
            }
            st.in_flight -= bytes;
            st.out.losses += bytes / MSS;
            st.rate.on_packets_lost(bytes);
            let loss = LossEvent {
                now,
                lost_bytes: bytes,
                largest_lost_sent_time: newest,
                persistent_congestion: false,
                ecn_ce: false,
                bytes_in_flight: st.in_flight,
                rtt: &st.rtt,
            };
            cc.on_congestion_event(&loss, coupling);
        }
        let event = AckEvent {
            now,
            bytes_acked: packet.size,
            largest_acked_sent_time: packet.sent,
            bytes_in_flight: st.in_flight,
            app_limited: false,
            rtt: &st.rtt,
            rtt_sampled: true,
            rate_sample: st.rate.generate_sample(now, st.rtt.min()),
        };
        cc.on_ack(&event, coupling);
        if now >= measure_from {
            st.measured += packet.size;
        }
    }

    /// Sends while the window (and the pacer) allow; a due PTO sends one probe regardless.
    fn send(
        flow: &mut Flow<'_>,
        st: &mut State,
        link: &mut LinkState,
        now: Timestamp,
        measure_from: Timestamp,
    ) {
        let cc = &mut *flow.cc;
        let mut probe = !st.outstanding.is_empty() && now >= pto_deadline(st);
        if probe {
            st.pto_count += 1;
        }
        st.pace_at = None;
        while probe || st.in_flight + MSS <= cc.window() {
            if flow.paced && !probe {
                let rate = cc.pacing_rate(st.rtt.smoothed());
                if let Some(at) = st.pacer.delay(now, MSS, rate, cc.window()) {
                    st.pace_at = Some(at.max(now + Duration::from_nanos(1)));
                    break;
                }
            }
            probe = false;
            st.pacer.on_sent(now, MSS);
            let delivery = st.rate.on_packet_sent(now, st.in_flight);
            st.in_flight += MSS;
            cc.on_packet_sent(now, MSS, st.in_flight);
            st.outstanding.insert(
                st.next_pn,
                Sent {
                    size: MSS,
                    sent: now,
                    delivery,
                },
            );
            st.last_send = now;
            while link.departures.front().is_some_and(|&d| d <= now) {
                link.departures.pop_front();
            }
            if (link.departures.len() as u64) * MSS < link.spec.buffer_bytes.max(MSS) {
                if now >= measure_from {
                    st.queue_delay.0 += link.free_at.max(now) - now;
                    st.queue_delay.1 += 1;
                }
                let serialisation =
                    Duration::from_nanos(MSS * 1_000_000_000 / link.spec.bytes_per_sec);
                link.free_at = link.free_at.max(now) + serialisation;
                link.departures.push_back(link.free_at);
                if !link.random_drop() {
                    let ack_at = link.free_at + link.spec.rtt + flow.extra_rtt;
                    st.acks.push_back((st.next_pn, ack_at));
                }
            }
            st.next_pn += 1;
            st.out.max_cwnd = st.out.max_cwnd.max(cc.window());
        }
    }
}
