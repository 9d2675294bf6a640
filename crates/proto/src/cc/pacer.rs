//! Token-bucket pacer for one path (RFC 9002 §7.7: "a leaky bucket algorithm, where the capacity
//! of the bucket is limited to the maximum burst size and the rate the bucket fills is determined
//! by" the controller's pacing rate).
//!
//! # Design
//!
//! * **Tokens** are bytes. They accrue at the pacing rate passed to [`Pacer::delay`], with the
//!   sub-byte remainder carried between refills, so that over a long run the bytes released equal
//!   `rate × time` exactly (plus at most one bucket).
//! * **Capacity** (maximum burst) is `min(cwnd, max(rate × 2 ms, 2 × MSS))`, and never less than
//!   one packet. Two milliseconds of data is what the timer granularity below requires to sustain
//!   the rate; bounding it by the congestion window keeps a burst within what the controller
//!   allows in flight anyway, and the 2-datagram floor keeps slow paths from degenerating into
//!   single-packet wake-ups. RFC 9002 §7.7 asks to limit bursts to the initial window unless the
//!   path is known to absorb more: with the RFC's pacing rate of 1.25·cwnd/srtt, 2 ms of data is
//!   2.5 ms/srtt of the window (5 % at a 50 ms RTT), which exceeds ten datagrams only on fast
//!   paths, where sustaining the rate with ~1 ms timers requires it.
//! * **Timer granularity**: when the bucket cannot cover the next packet, [`Pacer::delay`] does
//!   not return the instant at which exactly one packet's worth is available, but the instant at
//!   which `min(capacity, max(packet, rate × 1 ms))` is, so the send loop is woken at most about
//!   once per millisecond and then sends the ~1 ms of data as a small burst. The trade-off: fewer
//!   timer wake-ups (OS timers are rarely more precise than ~1 ms, and each wake-up costs a
//!   syscall) against slightly burstier output; the extra burst is bounded by 1 ms of data at the
//!   pacing rate, well below a typical bottleneck buffer. At low rates (under one packet per
//!   millisecond) every packet is individually paced.
//! * A **rate of 0** disables pacing (`delay` returns `None`): the controller has no rate.
//! * Sending more than the tokens allow (e.g. PTO probes, which RFC 9002 §7.5 says must not be
//!   blocked) empties the bucket without creating debt.
//!
//! All arithmetic is in `u128` or saturating, so neither zero nor huge rates, windows or times
//! can panic or overflow.

use crate::time::{Duration, Timestamp};

/// Maximum burst expressed as time at the pacing rate.
pub const BURST_INTERVAL: Duration = Duration::from_millis(2);
/// Smallest maximum burst, in datagrams (further limited by the congestion window).
pub const MIN_BURST_PACKETS: u64 = 2;
/// The pacer does not ask to be woken for less than this much debt when it can avoid it.
pub const TIMER_GRANULARITY: Duration = Duration::from_millis(1);

const NANOS_PER_SEC: u128 = 1_000_000_000;

/// The token-bucket pacer of one path. See the [module documentation](self) for the policy.
#[derive(Debug, Clone)]
pub struct Pacer {
    max_datagram_size: u64,
    /// Whole bytes available for sending.
    tokens: u64,
    /// Fraction of a byte accrued but not yet credited, in units of 1/10⁹ byte (< 10⁹).
    remainder: u128,
    /// Time up to which tokens have been credited.
    last_refill: Timestamp,
    /// Whether the bucket has been filled once (on the first call to [`Pacer::delay`]).
    primed: bool,
}

impl Pacer {
    /// A pacer for a path whose datagrams are at most `max_datagram_size` bytes. The bucket is
    /// filled to its capacity on the first call to [`Pacer::delay`], so a new path may start with
    /// one burst.
    pub fn new(max_datagram_size: u64, now: Timestamp) -> Self {
        Self {
            max_datagram_size: max_datagram_size.max(1),
            tokens: 0,
            remainder: 0,
            last_refill: now,
            primed: false,
        }
    }

    /// The path's datagram size changed (path MTU discovery): the burst floor follows it.
    pub fn set_max_datagram_size(&mut self, max_datagram_size: u64) {
        self.max_datagram_size = max_datagram_size.max(1);
    }

    /// Maximum burst in bytes for a packet of `packet_bytes` at `rate_bytes_per_sec` with a
    /// congestion window of `cwnd` bytes (see the module documentation).
    pub fn capacity(&self, packet_bytes: u64, rate_bytes_per_sec: u64, cwnd: u64) -> u64 {
        let burst = rate_bytes_per_sec as u128 * BURST_INTERVAL.as_nanos() / NANOS_PER_SEC;
        let burst = u64::try_from(burst).unwrap_or(u64::MAX);
        let floor = MIN_BURST_PACKETS.saturating_mul(self.max_datagram_size);
        burst
            .max(floor)
            .min(cwnd)
            .max(self.max_datagram_size)
            .max(packet_bytes)
    }

    /// When a packet of `packet_bytes` may be sent: `None` for now, or the instant at which the
    /// send loop should try again (then call this again; it is not a reservation).
    /// `rate_bytes_per_sec` is the controller's pacing rate (0 disables pacing) and `cwnd` its
    /// congestion window, both as of now; tokens accrued since the previous call are credited at
    /// this rate.
    pub fn delay(
        &mut self,
        now: Timestamp,
        packet_bytes: u64,
        rate_bytes_per_sec: u64,
        cwnd: u64,
    ) -> Option<Timestamp> {
        if rate_bytes_per_sec == 0 {
            return None;
        }
        let capacity = self.capacity(packet_bytes, rate_bytes_per_sec, cwnd);
        if !self.primed {
            self.primed = true;
            self.tokens = capacity;
            self.remainder = 0;
            self.last_refill = now;
        }
        self.refill(now, rate_bytes_per_sec, capacity);
        if self.tokens >= packet_bytes {
            return None;
        }
        // Wake when ~1 ms worth of data (bounded by the bucket) is available, not just one packet.
        let granule = rate_bytes_per_sec as u128 * TIMER_GRANULARITY.as_nanos() / NANOS_PER_SEC;
        let granule = u64::try_from(granule).unwrap_or(u64::MAX);
        let target = granule.max(packet_bytes).min(capacity);
        let needed = (target - self.tokens) as u128 * NANOS_PER_SEC - self.remainder;
        let wait = needed.div_ceil(rate_bytes_per_sec as u128);
        let wait = Duration::from_nanos(u64::try_from(wait).unwrap_or(u64::MAX));
        Some(now + wait)
    }

    /// A packet of `bytes` was sent at `now` (call for paced packets; ACK-only packets are not
    /// paced, RFC 9002 §7.7).
    pub fn on_sent(&mut self, now: Timestamp, bytes: u64) {
        if !self.primed {
            // Tokens start accruing from the first send if `delay` was never called.
            self.last_refill = self.last_refill.max(now);
        }
        self.tokens = self.tokens.saturating_sub(bytes);
    }

    /// Bytes currently available without waiting, as of the last call to [`Pacer::delay`].
    pub fn tokens(&self) -> u64 {
        self.tokens
    }

    /// Credits tokens for the time since the last refill, up to `capacity`.
    fn refill(&mut self, now: Timestamp, rate: u64, capacity: u64) {
        if now <= self.last_refill {
            // No time passed (or the caller's clock went backwards): only apply the capacity.
            self.tokens = self.tokens.min(capacity);
            return;
        }
        let elapsed = (now - self.last_refill).as_nanos();
        self.last_refill = now;
        let accrued = (rate as u128)
            .saturating_mul(elapsed)
            .saturating_add(self.remainder);
        let whole = accrued / NANOS_PER_SEC;
        self.remainder = accrued % NANOS_PER_SEC;
        let tokens = (self.tokens as u128).saturating_add(whole);
        if tokens >= capacity as u128 {
            self.tokens = capacity;
            self.remainder = 0;
        } else {
            self.tokens = tokens as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u64 = 1200;

    fn start() -> Timestamp {
        Timestamp::from_nanos(5_000_000_000)
    }

    /// A send loop that always has data and obeys the pacer. Returns the send times of packets.
    fn run(rate: u64, cwnd: u64, duration: Duration) -> (Vec<Timestamp>, usize) {
        let mut now = start();
        let end = now + duration;
        let mut pacer = Pacer::new(MSS, now);
        let mut sends = Vec::new();
        let mut wakeups = 0;
        while now < end {
            match pacer.delay(now, MSS, rate, cwnd) {
                None => {
                    pacer.on_sent(now, MSS);
                    sends.push(now);
                }
                Some(at) => {
                    assert!(at > now, "asked to wake in the past");
                    now = at;
                    wakeups += 1;
                }
            }
        }
        (sends, wakeups)
    }

    #[test]
    fn long_run_rate_matches_configured_rate() {
        let cwnd = 1 << 40;
        // Long enough for the last partial packet to weigh < 1 %, short enough to stay cheap.
        for (rate, secs) in [
            (10_000u64, 60),
            (123_457, 20),
            (1_250_000, 10),
            (12_500_000, 10),
            (125_000_000, 2),
            (1_250_000_000, 1),
        ] {
            let duration = Duration::from_secs(secs);
            let (sends, _) = run(rate, cwnd, duration);
            let capacity = Pacer::new(MSS, start()).capacity(MSS, rate, cwnd);
            // Exclude the initial full bucket; what remains was earned at the rate.
            let earned = sends.len() as u64 * MSS - capacity;
            let achieved = earned as f64 / duration.as_secs_f64();
            let error = (achieved - rate as f64).abs() / rate as f64;
            assert!(error < 0.01, "rate {rate}: achieved {achieved} ({error})");
        }
    }

    #[test]
    fn bursts_never_exceed_capacity() {
        for (rate, cwnd) in [
            (1_250_000u64, 1 << 30),
            (125_000_000, 1 << 30),
            (125_000_000, 30_000),
        ] {
            let (sends, _) = run(rate, cwnd, Duration::from_secs(2));
            let capacity = Pacer::new(MSS, start()).capacity(MSS, rate, cwnd);
            // Token-bucket conformance: in every window [t_i, t_j], bytes ≤ capacity + rate·Δt.
            for i in 0..sends.len() {
                for j in i..sends.len().min(i + 400) {
                    let bytes = (j - i + 1) as u64 * MSS;
                    let dt = (sends[j] - sends[i]).as_nanos();
                    let allowed = capacity as u128 + rate as u128 * dt / NANOS_PER_SEC + 1;
                    assert!(bytes as u128 <= allowed, "rate {rate}: {bytes} > {allowed}");
                }
            }
            let max_same_instant = sends.chunk_by(|a, b| a == b).map(<[_]>::len).max().unwrap();
            assert!(max_same_instant as u64 * MSS <= capacity);
        }
    }

    #[test]
    fn wakeups_are_not_finer_than_granularity_when_possible() {
        // 125 MB/s is ~104 packets per millisecond: wake about once per millisecond.
        let (_, wakeups) = run(125_000_000, 1 << 30, Duration::from_secs(1));
        assert!(wakeups <= 1_010, "{wakeups}");
        // 1.25 MB/s is ~1 packet per millisecond: one wake-up per packet, no more.
        let (sends, wakeups) = run(1_250_000, 1 << 30, Duration::from_secs(1));
        assert!(wakeups <= sends.len(), "{wakeups} > {}", sends.len());
        // At a slow rate packets are spaced individually.
        let (sends, _) = run(12_000, 1 << 30, Duration::from_secs(5));
        let gaps: Vec<_> = sends.windows(2).skip(2).map(|w| w[1] - w[0]).collect();
        assert!(
            gaps.iter().all(|&g| g == Duration::from_millis(100)),
            "{gaps:?}"
        );
    }

    #[test]
    fn idle_accrues_at_most_one_burst() {
        let rate = 12_500_000;
        let cwnd = 1 << 30;
        let mut pacer = Pacer::new(MSS, start());
        let capacity = pacer.capacity(MSS, rate, cwnd);
        assert_eq!(capacity, 25_000);
        let mut now = start();
        let mut sent = 0;
        while pacer.delay(now, MSS, rate, cwnd).is_none() {
            pacer.on_sent(now, MSS);
            sent += MSS;
        }
        assert!(sent <= capacity && sent + MSS > capacity);
        now += Duration::from_secs(60);
        let mut burst = 0;
        while pacer.delay(now, MSS, rate, cwnd).is_none() {
            pacer.on_sent(now, MSS);
            burst += MSS;
        }
        assert!(burst <= capacity && burst + MSS > capacity);
        // A smaller window shrinks the bucket.
        assert_eq!(pacer.capacity(MSS, rate, 5_000), 5_000);
        assert_eq!(pacer.capacity(MSS, 1, 1 << 30), 2 * MSS);
    }

    #[test]
    fn extreme_inputs_never_panic() {
        let mut pacer = Pacer::new(0, Timestamp::ZERO);
        assert_eq!(pacer.delay(Timestamp::ZERO, MSS, 0, 0), None);
        for (rate, cwnd, bytes) in [
            (u64::MAX, u64::MAX, u64::MAX),
            (1, 0, MSS),
            (1, u64::MAX, u64::MAX),
            (u64::MAX, 0, 0),
            (7, 3, 65_535),
        ] {
            let mut pacer = Pacer::new(MSS, Timestamp::from_nanos(u64::MAX - 10));
            let mut now = Timestamp::from_nanos(u64::MAX - 10);
            for _ in 0..5 {
                match pacer.delay(now, bytes, rate, cwnd) {
                    None => pacer.on_sent(now, bytes),
                    Some(at) => now = at,
                }
            }
            // Clock going backwards.
            let _ = pacer.delay(Timestamp::ZERO, bytes, rate, cwnd);
            pacer.on_sent(Timestamp::ZERO, u64::MAX);
        }
        // A tiny rate asks to wait a long (but representable) time.
        let mut pacer = Pacer::new(MSS, start());
        assert_eq!(pacer.delay(start(), MSS, 1, 1 << 20), None);
        pacer.on_sent(start(), MSS);
        pacer.on_sent(start(), MSS);
        let at = pacer.delay(start(), MSS, 1, 1 << 20).expect("must wait");
        assert_eq!(at - start(), Duration::from_secs(MSS));
    }

    #[test]
    fn packet_larger_than_window_is_eventually_released() {
        let mut pacer = Pacer::new(MSS, start());
        let at = pacer.delay(start(), 10 * MSS, 1_000_000, 2 * MSS);
        assert_eq!(
            at, None,
            "a full bucket covers one packet even above the window"
        );
        pacer.on_sent(start(), 10 * MSS);
        let at = pacer
            .delay(start(), 10 * MSS, 1_000_000, 2 * MSS)
            .expect("wait");
        assert_eq!(at - start(), Duration::from_millis(12));
        assert_eq!(pacer.delay(at, 10 * MSS, 1_000_000, 2 * MSS), None);
    }
}
