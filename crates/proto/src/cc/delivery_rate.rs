//! Delivery rate estimation per draft-cheng-iccrg-delivery-rate-estimation-02 ("DRE"), in the
//! form BBR (draft-ietf-ccwg-bbr §4.5.2) consumes it, including the BBRv2/v3 per-packet
//! `tx_in_flight` and `lost` snapshots.
//!
//! # Call protocol (one estimator per path)
//!
//! 1. For every packet counted in flight, call [`DeliveryRateEstimator::on_packet_sent`] with the
//!    path's bytes in flight *before* the packet, and store the returned
//!    [`PacketDeliveryState`] with the sent packet.
//! 2. When the sender runs out of data to send while the window has room, call
//!    [`DeliveryRateEstimator::on_app_limited`] (DRE §3.4), before sending anything else.
//! 3. For one ACK frame: call [`DeliveryRateEstimator::on_packet_acked`] for each newly
//!    acknowledged in-flight packet (any order), [`DeliveryRateEstimator::on_packets_lost`] for
//!    packets that loss detection declared lost while processing it, then
//!    [`DeliveryRateEstimator::generate_sample`] exactly once, with the minimum RTT *after* the
//!    ACK's RTT sample was taken. The sample goes into `AckEvent::rate_sample`.
//!
//! Packets acknowledged after being declared lost (spurious loss) may still be passed to
//! `on_packet_acked`: their data was delivered.

use crate::time::{Duration, Timestamp};

/// What the estimator remembers about one sent packet (DRE §3.1.2 per-packet state).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PacketDeliveryState {
    /// P.delivered: C.delivered when the packet was sent.
    pub delivered: u64,
    /// P.delivered_time: C.delivered_time when the packet was sent.
    pub delivered_time: Timestamp,
    /// P.first_sent_time: C.first_sent_time when the packet was sent.
    pub first_sent_time: Timestamp,
    /// P.is_app_limited: whether C.app_limited was set when the packet was sent.
    pub is_app_limited: bool,
    /// BBR P.tx_in_flight, without the packet itself: bytes in flight just before it was sent.
    pub tx_in_flight: u64,
    /// BBR P.lost: C.lost when the packet was sent.
    pub lost: u64,
}

/// The rate sample produced for one ACK (DRE §3.1.3, plus BBR's loss fields).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateSample {
    /// rs.delivery_rate in bytes per second: `delivered / interval`.
    pub delivery_rate: u64,
    /// rs.interval: max(send_elapsed, ack_elapsed), at least the minimum RTT.
    pub interval: Duration,
    /// rs.delivered: bytes delivered over `interval`.
    pub delivered: u64,
    /// rs.prior_delivered: C.delivered when the newest acknowledged packet was sent.
    pub prior_delivered: u64,
    /// rs.prior_time: C.delivered_time when the newest acknowledged packet was sent.
    pub prior_time: Timestamp,
    /// rs.send_elapsed: send time of the newest packet minus its P.first_sent_time.
    pub send_elapsed: Duration,
    /// rs.ack_elapsed: this ACK's time minus the newest packet's P.delivered_time.
    pub ack_elapsed: Duration,
    /// rs.is_app_limited: the newest acknowledged packet was sent in an application-limited phase.
    pub is_app_limited: bool,
    /// RTT of the newest acknowledged packet (BBR rs.rtt): ACK time minus its send time.
    pub rtt: Duration,
    /// rs.newly_acked: bytes newly acknowledged by this ACK.
    pub newly_acked: u64,
    /// rs.newly_lost: bytes declared lost since the previous sample.
    pub newly_lost: u64,
    /// BBR rs.tx_in_flight: bytes in flight when the newest acknowledged packet was sent,
    /// *including* that packet.
    pub tx_in_flight: u64,
    /// BBR rs.lost: bytes declared lost between the newest acknowledged packet's send and now.
    pub lost: u64,
}

/// The per-ACK sample being assembled (DRE `rs` before GenerateRateSample).
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    has_data: bool,
    prior_delivered: u64,
    prior_time: Timestamp,
    is_app_limited: bool,
    send_elapsed: Duration,
    newest_sent_time: Timestamp,
    tx_in_flight: u64,
    lost_at_send: u64,
    newly_acked: u64,
}

/// Per-path delivery rate estimator (DRE §3.1.1 per-connection state). See the module
/// documentation for the call protocol.
#[derive(Debug, Clone, Default)]
pub struct DeliveryRateEstimator {
    /// C.delivered: total bytes acknowledged.
    delivered: u64,
    /// C.delivered_time: time `delivered` was last updated (or the start of a flight).
    delivered_time: Timestamp,
    /// C.first_sent_time: send time of the newest acknowledged packet (or start of a flight).
    first_sent_time: Timestamp,
    /// C.app_limited: 0, or the `delivered` mark after which the application-limited bubble is
    /// gone.
    app_limited: u64,
    /// BBR C.lost: total bytes declared lost.
    lost: u64,
    /// Bytes lost since the last sample.
    newly_lost: u64,
    pending: Pending,
}

impl DeliveryRateEstimator {
    /// An estimator for a path on which nothing has been sent.
    pub fn new() -> Self {
        Self::default()
    }

    /// DRE §3.2: snapshot taken when a packet is sent. `bytes_in_flight_before_send` excludes the
    /// packet; when it is 0 a new flight starts and the send/ACK clocks restart at `now`.
    pub fn on_packet_sent(
        &mut self,
        now: Timestamp,
        bytes_in_flight_before_send: u64,
    ) -> PacketDeliveryState {
        if bytes_in_flight_before_send == 0 {
            self.first_sent_time = now;
            self.delivered_time = now;
        }
        PacketDeliveryState {
            delivered: self.delivered,
            delivered_time: self.delivered_time,
            first_sent_time: self.first_sent_time,
            is_app_limited: self.app_limited != 0,
            tx_in_flight: bytes_in_flight_before_send,
            lost: self.lost,
        }
    }

    /// DRE §3.3 UpdateRateSample: a packet of `bytes` sent at `sent_time` with snapshot `packet`
    /// was newly acknowledged at `now`. Call at most once per packet.
    pub fn on_packet_acked(
        &mut self,
        now: Timestamp,
        packet: &PacketDeliveryState,
        bytes: u64,
        sent_time: Timestamp,
    ) {
        self.delivered = self.delivered.saturating_add(bytes);
        self.delivered_time = now;
        let rs = &mut self.pending;
        rs.newly_acked = rs.newly_acked.saturating_add(bytes);
        // The newest packet (latest send, then most delivered) defines the sample.
        let newest = !rs.has_data
            || sent_time > rs.newest_sent_time
            || (sent_time == rs.newest_sent_time && packet.delivered >= rs.prior_delivered);
        if newest {
            rs.has_data = true;
            rs.prior_delivered = packet.delivered;
            rs.prior_time = packet.delivered_time;
            rs.is_app_limited = packet.is_app_limited;
            rs.send_elapsed = sent_time - packet.first_sent_time;
            rs.newest_sent_time = sent_time;
            rs.tx_in_flight = packet.tx_in_flight.saturating_add(bytes);
            rs.lost_at_send = packet.lost;
            self.first_sent_time = sent_time;
        }
    }

    /// Bytes declared lost (BBR C.lost, rs.newly_lost).
    pub fn on_packets_lost(&mut self, bytes: u64) {
        self.lost = self.lost.saturating_add(bytes);
        self.newly_lost = self.newly_lost.saturating_add(bytes);
    }

    /// DRE §3.3 GenerateRateSample, once per ACK after its packets were passed to
    /// [`on_packet_acked`](Self::on_packet_acked) and [`on_packets_lost`](Self::on_packets_lost).
    /// `now` must be the time of those calls. Returns `None` when nothing was delivered or the
    /// interval is shorter than `min_rtt` (DRE: "no reliable sample"); the per-ACK state is reset
    /// either way.
    pub fn generate_sample(&mut self, now: Timestamp, min_rtt: Duration) -> Option<RateSample> {
        // DRE §3.4: the application-limited bubble is gone once its data is delivered.
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let rs = std::mem::take(&mut self.pending);
        let newly_lost = std::mem::take(&mut self.newly_lost);
        if !rs.has_data {
            return None;
        }
        // ack_elapsed = C.delivered_time - P.delivered_time, C.delivered_time being this ACK.
        let ack_elapsed = now - rs.prior_time;
        // Use the longer of the two intervals: a rate cannot exceed either the send or the ACK
        // rate of the flight.
        let interval = rs.send_elapsed.max(ack_elapsed);
        if interval < min_rtt || interval.is_zero() {
            return None;
        }
        let delivered = self.delivered - rs.prior_delivered;
        let rate = delivered as u128 * 1_000_000_000 / interval.as_nanos();
        Some(RateSample {
            delivery_rate: u64::try_from(rate).unwrap_or(u64::MAX),
            interval,
            delivered,
            prior_delivered: rs.prior_delivered,
            prior_time: rs.prior_time,
            send_elapsed: rs.send_elapsed,
            ack_elapsed,
            is_app_limited: rs.is_app_limited,
            rtt: now - rs.newest_sent_time,
            newly_acked: rs.newly_acked,
            newly_lost,
            tx_in_flight: rs.tx_in_flight,
            lost: self.lost - rs.lost_at_send,
        })
    }

    /// DRE §3.4: the sender is application-limited (no data to send, window not full) with
    /// `bytes_in_flight` in flight. Samples of packets sent until that data is delivered are
    /// flagged application-limited.
    pub fn on_app_limited(&mut self, bytes_in_flight: u64) {
        self.app_limited = self.delivered.saturating_add(bytes_in_flight).max(1);
    }

    /// Whether an application-limited phase is in progress (C.app_limited != 0).
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// C.delivered: total bytes delivered (BBR round counting uses it).
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// C.lost: total bytes declared lost.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;

    const MSS: u64 = 1200;

    fn ms(v: u64) -> Timestamp {
        Timestamp::from_nanos(v * 1_000_000)
    }

    struct Flight {
        est: DeliveryRateEstimator,
        in_flight: VecDeque<(Timestamp, PacketDeliveryState)>,
    }

    impl Flight {
        fn new() -> Self {
            Self {
                est: DeliveryRateEstimator::new(),
                in_flight: VecDeque::new(),
            }
        }

        fn send(&mut self, now: Timestamp) {
            let state = self
                .est
                .on_packet_sent(now, self.in_flight.len() as u64 * MSS);
            self.in_flight.push_back((now, state));
        }

        /// Acknowledges the oldest `n` packets in one ACK.
        fn ack(&mut self, now: Timestamp, n: usize) -> Option<RateSample> {
            for _ in 0..n {
                let (sent, state) = self.in_flight.pop_front().expect("in flight");
                self.est.on_packet_acked(now, &state, MSS, sent);
            }
            self.est.generate_sample(now, Duration::from_millis(50))
        }
    }

    #[test]
    fn steady_sender_samples_its_rate() {
        // One 1200-byte packet per millisecond (1.2 MB/s), ACKed 50 ms later.
        let mut f = Flight::new();
        let mut samples = Vec::new();
        for t in 0..2_000u64 {
            if t >= 50 {
                let s = f.ack(ms(t), 1);
                if t >= 100 {
                    let s = s.expect("sample after the first RTT");
                    assert_eq!(s.delivery_rate, 1_200_000, "t={t}: {s:?}");
                    assert_eq!(s.interval, Duration::from_millis(50));
                    assert_eq!(s.rtt, Duration::from_millis(50));
                    assert_eq!(s.newly_acked, MSS);
                    assert_eq!(s.tx_in_flight, 50 * MSS);
                    assert!(!s.is_app_limited);
                }
                samples.extend(s);
            }
            f.send(ms(t));
        }
        // The first flight's samples are conservative (interval counts from the flight start).
        assert!(samples.iter().all(|s| s.delivery_rate <= 1_200_000));
    }

    #[test]
    fn stretch_acks_sample_the_same_rate() {
        // Packets every 1 ms, ACKs every 4 ms covering 4 packets.
        let mut f = Flight::new();
        for t in 0..1_000u64 {
            if t >= 60 && t % 4 == 0 {
                let s = f.ack(ms(t), 4);
                if t >= 200 {
                    let s = s.expect("sample");
                    let err = (s.delivery_rate as f64 - 1.2e6).abs() / 1.2e6;
                    assert!(err < 0.1, "{s:?}");
                }
            }
            f.send(ms(t));
        }
    }

    #[test]
    fn app_limited_phase_is_flagged_until_delivered() {
        let mut f = Flight::new();
        for t in 0..200u64 {
            if t >= 50 {
                f.ack(ms(t), 1);
            }
            f.send(ms(t));
        }
        // The application runs dry: one packet every 10 ms for a while.
        f.est.on_app_limited(f.in_flight.len() as u64 * MSS);
        assert!(f.est.is_app_limited());
        let mark = f.est.delivered() + f.in_flight.len() as u64 * MSS;
        let (mut flagged, mut slowest) = (0, u64::MAX);
        for t in 200..600u64 {
            if !f.in_flight.is_empty() && f.in_flight[0].0 + Duration::from_millis(50) <= ms(t) {
                if let Some(s) = f.ack(ms(t), 1) {
                    if s.is_app_limited {
                        flagged += 1;
                        slowest = slowest.min(s.delivery_rate);
                    }
                }
            }
            if t % 10 == 0 {
                if t < 400 {
                    f.est.on_app_limited(f.in_flight.len() as u64 * MSS);
                }
                f.send(ms(t));
            }
        }
        // The bubble's samples underestimate the bottleneck, which is why they are flagged.
        assert!(flagged > 0 && slowest < 300_000, "{flagged} {slowest}");
        // After the application resumed, once the bubble's data was delivered, the flag cleared.
        assert!(f.est.delivered() > mark);
        assert!(!f.est.is_app_limited());
        for t in 600..800u64 {
            f.send(ms(t));
        }
        let s = loop {
            let sent = f.in_flight[0].0;
            if let Some(s) = f.ack(sent + Duration::from_millis(50), 1) {
                if sent >= ms(600) {
                    break s;
                }
            }
        };
        assert!(!s.is_app_limited);
    }

    #[test]
    fn losses_and_short_intervals() {
        let mut est = DeliveryRateEstimator::new();
        let _a = est.on_packet_sent(ms(0), 0);
        let b = est.on_packet_sent(ms(1), MSS);
        let _c = est.on_packet_sent(ms(2), 2 * MSS);
        let d = est.on_packet_sent(ms(3), 3 * MSS);
        est.on_packets_lost(MSS); // a
        est.on_packet_acked(ms(30), &b, MSS, ms(1));
        // Interval 30 ms < min RTT 50 ms: no reliable sample, but the per-ACK state is reset.
        assert_eq!(est.generate_sample(ms(30), Duration::from_millis(50)), None);
        est.on_packets_lost(MSS); // c
        est.on_packet_acked(ms(33), &d, MSS, ms(3));
        let s = est
            .generate_sample(ms(33), Duration::from_millis(10))
            .expect("sample");
        assert_eq!(s.newly_lost, MSS);
        assert_eq!(s.lost, 2 * MSS);
        assert_eq!(s.newly_acked, MSS);
        assert_eq!(s.tx_in_flight, 4 * MSS);
        assert_eq!(s.rtt, Duration::from_millis(30));
        assert_eq!(s.send_elapsed, Duration::from_millis(3));
        assert_eq!(s.ack_elapsed, Duration::from_millis(33));
        assert_eq!(s.delivered, 2 * MSS);
        assert_eq!(s.delivery_rate, 2 * MSS * 1000 / 33);
        assert_eq!(est.lost(), 2 * MSS);
        // Nothing acknowledged: no sample. Zero interval with zero min RTT: no division by zero.
        assert_eq!(est.generate_sample(ms(34), Duration::ZERO), None);
        let e = est.on_packet_sent(ms(40), 0);
        est.on_packet_acked(ms(40), &e, MSS, ms(40));
        assert_eq!(est.generate_sample(ms(40), Duration::ZERO), None);
    }
}
