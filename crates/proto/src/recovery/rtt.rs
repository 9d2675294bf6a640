//! Round-trip time estimation, RFC 9002 §5. One estimator per path: in both multipath designs the
//! RTT belongs to a path, never to a packet number space (Alibaba report §2.2; RFC 10069 §5.1).

use crate::time::Duration;

/// RFC 9002 §6.1.2: kGranularity.
pub(crate) const GRANULARITY: Duration = Duration::from_millis(1);
/// RFC 9002 §6.2.2: kInitialRtt.
pub(crate) const INITIAL_RTT: Duration = Duration::from_millis(333);

/// Smoothed RTT, RTT variance and minimum RTT of one path.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    latest: Duration,
    smoothed: Duration,
    var: Duration,
    min: Duration,
    has_sample: bool,
    /// [`Self::pto_base`] in nanoseconds, kept up to date by `new` and `update`: the
    /// connection's timer asks for it after every datagram, and `Duration` arithmetic
    /// (seconds and nanoseconds, normalised and overflow-checked per operation) is several
    /// times dearer than reading one integer.
    pto_base_ns: u64,
}

impl RttEstimator {
    /// An estimator that has seen no sample yet (RFC 9002 §5.3: smoothed = initial, var = initial/2).
    pub fn new(initial_rtt: Duration) -> Self {
        let mut rtt = Self {
            latest: initial_rtt,
            smoothed: initial_rtt,
            var: initial_rtt / 2,
            min: initial_rtt,
            has_sample: false,
            pto_base_ns: 0,
        };
        rtt.pto_base_ns = crate::time::duration_nanos(rtt.pto_base());
        rtt
    }

    /// Feed one RTT sample. `ack_delay` is the peer-reported delay, already limited to
    /// max_ack_delay by the caller once the handshake is confirmed (RFC 9002 §5.3).
    pub fn update(&mut self, ack_delay: Duration, sample: Duration) {
        self.take_sample(ack_delay, sample);
        self.pto_base_ns = crate::time::duration_nanos(self.pto_base());
    }

    fn take_sample(&mut self, ack_delay: Duration, sample: Duration) {
        self.latest = sample;
        if !self.has_sample {
            // RFC 9002 §5.3: the first sample initialises the estimator.
            self.has_sample = true;
            self.min = sample;
            self.smoothed = sample;
            self.var = sample / 2;
            return;
        }
        self.min = self.min.min(sample);
        // RFC 9002 §5.3: subtract the ack delay only if it leaves at least min_rtt.
        let adjusted = if sample >= self.min + ack_delay {
            sample - ack_delay
        } else {
            sample
        };
        let diff = self.smoothed.abs_diff(adjusted);
        self.var = (self.var * 3 + diff) / 4;
        self.smoothed = (self.smoothed * 7 + adjusted) / 8;
    }

    /// The most recent sample.
    pub fn latest(&self) -> Duration {
        self.latest
    }

    /// The smoothed RTT.
    pub fn smoothed(&self) -> Duration {
        self.smoothed
    }

    /// The RTT variance.
    pub fn var(&self) -> Duration {
        self.var
    }

    /// The minimum RTT seen (the initial RTT before any sample).
    pub fn min(&self) -> Duration {
        self.min
    }

    /// Whether at least one sample has been taken.
    pub fn has_sample(&self) -> bool {
        self.has_sample
    }

    /// RFC 9002 §6.2.1: smoothed_rtt + max(4*rttvar, kGranularity), without max_ack_delay.
    pub fn pto_base(&self) -> Duration {
        self.smoothed + (self.var * 4).max(GRANULARITY)
    }

    /// [`Self::pto_base`] in nanoseconds (saturating).
    pub(crate) fn pto_base_nanos(&self) -> u64 {
        self.pto_base_ns
    }

    /// RFC 9002 §6.1.2: max(kTimeThreshold * max(smoothed_rtt, latest_rtt), kGranularity),
    /// with kTimeThreshold = 9/8.
    pub fn loss_delay(&self) -> Duration {
        (self.smoothed.max(self.latest) * 9 / 8).max(GRANULARITY)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    #[test]
    fn first_sample_initialises() {
        let mut rtt = RttEstimator::new(INITIAL_RTT);
        assert!(!rtt.has_sample());
        rtt.update(ms(0), ms(100));
        assert_eq!(rtt.smoothed(), ms(100));
        assert_eq!(rtt.var(), ms(50));
        assert_eq!(rtt.min(), ms(100));
    }

    #[test]
    fn ack_delay_is_subtracted_only_above_min() {
        let mut rtt = RttEstimator::new(INITIAL_RTT);
        rtt.update(ms(0), ms(100));
        // 120 - 10 = 110 >= min: adjusted.
        rtt.update(ms(10), ms(120));
        assert_eq!(rtt.smoothed(), (ms(100) * 7 + ms(110)) / 8);
        let mut rtt2 = RttEstimator::new(INITIAL_RTT);
        rtt2.update(ms(0), ms(100));
        // 105 - 10 < min: not adjusted.
        rtt2.update(ms(10), ms(105));
        assert_eq!(rtt2.smoothed(), (ms(100) * 7 + ms(105)) / 8);
    }

    #[test]
    fn converges_to_constant_samples() {
        let mut rtt = RttEstimator::new(INITIAL_RTT);
        for _ in 0..200 {
            rtt.update(ms(0), ms(40));
        }
        assert_eq!(rtt.smoothed(), ms(40));
        assert!(rtt.var() < ms(1));
        assert_eq!(rtt.loss_delay(), ms(45));
    }

    proptest::proptest! {
        /// The timer's nanosecond PTO (base, max_ack_delay, backoff) is the `Duration` one.
        #[test]
        fn pto_in_nanoseconds_matches_durations(
            initial_us in 1u64..2_000_000,
            samples in proptest::collection::vec((0u64..50_000, 1u64..3_000_000_000), 0..20),
            max_ack_delay_us in 0u64..(1 << 24),
            pto_count in 0u32..40,
        ) {
            let mut rtt = RttEstimator::new(Duration::from_micros(initial_us));
            for (ack_delay_us, sample_ns) in samples {
                rtt.update(Duration::from_micros(ack_delay_us), Duration::from_nanos(sample_ns));
                proptest::prop_assert_eq!(
                    Duration::from_nanos(rtt.pto_base_nanos()),
                    rtt.pto_base()
                );
            }
            // `Path::pto` as it was, in `Duration`s, and as `Path::pto_nanos` computes it.
            let mad = Duration::from_micros(max_ack_delay_us);
            let old = (rtt.pto_base() + mad) * 2u32.saturating_pow(pto_count.min(16));
            let new = (rtt.pto_base_nanos() + crate::time::duration_nanos(mad))
                .saturating_mul(1 << pto_count.min(16));
            proptest::prop_assert_eq!(Duration::from_nanos(new), old);
        }
    }
}
