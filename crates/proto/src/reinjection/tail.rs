//! Stranded-tail re-injection (issue 15): the end of a transfer must not wait on a slow path.
//!
//! ECF (Lim et al., CoNEXT 2017, §3) keeps new data off a slow path once the fast path alone
//! finishes sooner, but the packets the slow path already carries stay there: when the rest of
//! the transfer has gone out on the fast path, the receiver still waits up to one slow-path
//! delay for them. XLINK (SIGCOMM 2021, §4.1) answers multipath head-of-line blocking at the
//! tail by re-injecting in-flight packets on another path; its QoE control decides *when*
//! from the player's buffer. Here the decision is the completion time alone: a packet is copied
//! when a copy sent now on the best other path would arrive before the packet itself.

use super::{ReinjectionContext, ReinjectionPolicy, SourcePath};
use crate::time::Duration;

/// Re-inject a tail packet when its copy on the other path arrives first.
#[derive(Debug, Default, Clone, Copy)]
pub struct StrandedTail;

/// Time until a packet in flight on its path reaches the peer, at the latest.
///
/// Its acknowledgement is due one smoothed RTT after it was sent, or once the bytes ahead of
/// it (and itself) have drained at the path's delivery rate, whichever is later: a path whose
/// queue is growing (a slow path in slow start) delivers later than its smoothed RTT, which
/// lags by several round trips. The ACK then needs about half the minimum RTT to come back
/// (queues build in the data direction), so the packet arrives that much before its ACK.
///
/// A packet that should have arrived by then and is still unacknowledged may have been lost (a
/// slow path's drop-tail queue overflowing under Cubic's slow start loses a fifth of its
/// packets in our runs). Loss detection would tell only a packet threshold or 9/8 RTT later
/// (RFC 9002 §6.1), and the retransmission needs the path's one-way time again; that one-way
/// time is what such a packet is charged. RFC 10069 §5.7 suggests retransmitting delayed
/// packets' content on other paths; at the tail a copy costs the other path only idle room.
fn time_to_arrival(ctx: &ReinjectionContext) -> Duration {
    let p = ctx.current_path;
    let drain = if p.delivery_rate == 0 {
        Duration::ZERO
    } else if let Some(n) = ctx.ahead.checked_mul(1_000_000_000) {
        // The same quotient in 64-bit arithmetic whenever it fits (always, in practice): the
        // 128-bit division is a library call, made for every candidate packet of every poll.
        Duration::from_nanos(n / p.delivery_rate)
    } else {
        let ns = u128::from(ctx.ahead) * 1_000_000_000 / u128::from(p.delivery_rate);
        Duration::from_nanos(u64::try_from(ns).unwrap_or(u64::MAX))
    };
    let ack_due = p.srtt.saturating_sub(ctx.age).max(drain);
    let back = p.min_rtt / 2;
    if ack_due > back {
        ack_due - back
    } else {
        p.srtt.saturating_sub(back)
    }
}

impl ReinjectionPolicy for StrandedTail {
    fn should_reinject(&self, ctx: &ReinjectionContext) -> bool {
        time_to_arrival(ctx) > ctx.est_delivery_other
    }
    fn name(&self) -> &'static str {
        "tail"
    }
    fn tail_cutoff(&self, other: Duration, path: SourcePath) -> Option<TailCutoff> {
        Some(TailCutoff::new(other, path))
    }
}

/// [`StrandedTail`]'s decision for the packets of one path, with the divisions done once.
///
/// Writing `due` for the packet's `ack_due` and `back` for half the minimum RTT,
/// [`time_to_arrival`] exceeds `other` exactly when `due > back + other`, or when `due <=
/// back` and the possibly-lost charge `srtt - back` exceeds `other`. Each `due > k` test is
/// `srtt - age > k` (an age bound) or `drain > k` (a bound on the bytes ahead), in integers.
#[derive(Debug, Clone, Copy)]
pub struct TailCutoff {
    /// `due > back + other`: the copy arrives first.
    copy: DueAfter,
    /// `due > back`, when the possibly-lost charge exceeds `other` (then every packet not due
    /// after `back` is copied too); `None` otherwise.
    lost: Option<DueAfter>,
}

impl TailCutoff {
    fn new(other: Duration, p: SourcePath) -> Self {
        let back = (p.min_rtt / 2).as_nanos();
        let charge = p.srtt.saturating_sub(p.min_rtt / 2);
        TailCutoff {
            copy: DueAfter::new(back + other.as_nanos(), p),
            lost: (charge > other).then(|| DueAfter::new(back, p)),
        }
    }

    /// Whether a packet sent `age_nanos` ago with `ahead` bytes to drain is copied.
    pub(crate) fn copies(&self, age_nanos: u64, ahead: u64) -> bool {
        self.copy.holds(age_nanos, ahead) || self.lost.is_some_and(|l| !l.holds(age_nanos, ahead))
    }

    /// Whether no packet with at most `max_ahead` bytes to drain is copied, whatever its age:
    /// no age makes a copy arrive first, no possibly-lost charge applies, and the bytes bound
    /// lies beyond `max_ahead`. Typical of a fast path's tail against a slower other path;
    /// the connection then skips the scan of the path's packets.
    pub(crate) fn copies_none_within(&self, max_ahead: u64) -> bool {
        self.copy.age_below.is_none()
            && self.lost.is_none()
            && self.copy.ahead_from.is_none_or(|a| max_ahead < a)
    }
}

/// `ack_due > k` for a packet on one path, as bounds on its age and the bytes ahead of it.
#[derive(Debug, Clone, Copy)]
struct DueAfter {
    /// `srtt - age > k` exactly when `age < age_below` (`None`: never, srtt <= k).
    age_below: Option<u128>,
    /// `drain > k` exactly when `ahead >= ahead_from` (`None`: never).
    ahead_from: Option<u64>,
}

impl DueAfter {
    fn new(k: u128, p: SourcePath) -> Self {
        let srtt = p.srtt.as_nanos();
        let age_below = (srtt > k).then(|| srtt - k);
        // drain = floor(ahead * 1e9 / rate) nanoseconds (clamped to u64), so drain > k exactly
        // when ahead * 1e9 >= (k + 1) * rate, i.e. ahead >= ceil((k + 1) * rate / 1e9).
        let ahead_from = if p.delivery_rate == 0 || k >= u128::from(u64::MAX) {
            None
        } else {
            let need = (k + 1) * u128::from(p.delivery_rate);
            u64::try_from(need.div_ceil(1_000_000_000)).ok()
        };
        DueAfter {
            age_below,
            ahead_from,
        }
    }

    fn holds(&self, age_nanos: u64, ahead: u64) -> bool {
        self.age_below.is_some_and(|b| u128::from(age_nanos) < b)
            || self.ahead_from.is_some_and(|a| ahead >= a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reinjection::SourcePath;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    /// A packet `age_ms` old with `ahead` bytes to drain (itself included) on a path with the
    /// given srtt / min RTT (ms) and delivery rate (bytes/s), against a copy delivered in
    /// `other_ms` on the best other path.
    fn ctx(path: (u64, u64, u64), age_ms: u64, ahead: u64, other_ms: u64) -> ReinjectionContext {
        let (srtt, min, rate) = path;
        ReinjectionContext {
            play_time_left: None,
            est_delivery_current: ms(srtt / 2),
            est_delivery_other: ms(other_ms),
            stream_start: false,
            age: ms(age_ms),
            ahead,
            current_path: SourcePath {
                srtt: ms(srtt),
                min_rtt: ms(min),
                delivery_rate: rate,
            },
        }
    }

    /// Issue 15's slow path: 5 Mbit/s (625,000 bytes/s), 100 ms one-way, srtt 206 ms.
    const SLOW: (u64, u64, u64) = (206, 203, 625_000);

    #[test]
    fn tail_on_the_slow_path_is_copied_to_the_fast_one() {
        // A copy on the 50 Mbit/s, 5 ms path arrives in 7 ms. Just sent, alone: it arrives in
        // 206 − 101.5 = 104.5 ms.
        let fresh = ctx(SLOW, 0, 1_350, 7);
        assert_eq!(time_to_arrival(&fresh), Duration::from_micros(104_500));
        assert!(StrandedTail.should_reinject(&fresh));
        // 100 ms old: 4.5 ms to go, the copy needs 7: leave it.
        assert_eq!(
            time_to_arrival(&ctx(SLOW, 100, 1_350, 7)),
            Duration::from_micros(4_500)
        );
        assert!(!StrandedTail.should_reinject(&ctx(SLOW, 100, 1_350, 7)));
        // 150 ms old and unacknowledged: due, so possibly lost; a retransmission on the slow
        // path would need 104.5 ms more: copy it.
        assert_eq!(
            time_to_arrival(&ctx(SLOW, 150, 1_350, 7)),
            Duration::from_micros(104_500)
        );
        assert!(StrandedTail.should_reinject(&ctx(SLOW, 150, 1_350, 7)));
        // A copy slower than that is not sent.
        assert!(!StrandedTail.should_reinject(&ctx(SLOW, 150, 1_350, 110)));
    }

    #[test]
    fn a_queue_the_smoothed_rtt_has_not_seen_counts() {
        // 150 ms old, but 125,000 bytes are still ahead of it: 200 ms to drain at 5 Mbit/s,
        // ACK in 200 ms, arrival in 98.5 ms. The smoothed RTT alone says it has arrived.
        let queued = ctx(SLOW, 150, 125_000, 7);
        assert_eq!(time_to_arrival(&queued), Duration::from_micros(98_500));
        assert!(StrandedTail.should_reinject(&queued));
        // However old it is, it is not due while the bytes ahead drain.
        assert_eq!(
            time_to_arrival(&ctx(SLOW, 400, 125_000, 7)),
            Duration::from_micros(98_500)
        );
    }

    #[test]
    fn fast_tail_is_not_copied_to_the_slow_path() {
        // The fast path's own tail (arrives in 9 ms) against the slow path's 103 ms, even when
        // overdue: its retransmission on the fast path wins.
        let fast = (14, 10, 6_250_000);
        assert!(!StrandedTail.should_reinject(&ctx(fast, 0, 1_350, 103)));
        assert!(!StrandedTail.should_reinject(&ctx(fast, 50, 1_350, 103)));
    }

    #[test]
    fn equal_paths_do_not_duplicate() {
        // Two 20 ms paths without queues: the copy arrives no sooner than the original.
        let path = (20, 20, 2_500_000);
        assert!(!StrandedTail.should_reinject(&ctx(path, 0, 1_350, 10)));
        // Nor when overdue: a retransmission on either path takes as long.
        assert!(!StrandedTail.should_reinject(&ctx(path, 30, 1_350, 10)));
        // With a standing queue on the source only (srtt 60 ms, min 20): the copy wins.
        assert!(StrandedTail.should_reinject(&ctx((60, 20, 2_500_000), 0, 1_350, 10)));
    }

    proptest::proptest! {
        /// The cutoff answers as `should_reinject` does, on values around its boundaries
        /// (microsecond-scale times so that ages, drains and thresholds meet) and far off.
        #[test]
        fn cutoff_matches_the_policy(
            srtt in 0u64..400_000, min in 0u64..400_000, rate in 0u64..20_000_000,
            age in 0u64..600_000, ahead in 0u64..2_000_000, other in 0u64..400_000,
            huge in proptest::bool::ANY,
        ) {
            let us = Duration::from_micros;
            let rate = if huge { u64::MAX - rate } else { rate };
            let ahead = if huge { u64::MAX - ahead } else { ahead };
            let c = ReinjectionContext {
                play_time_left: None,
                est_delivery_current: Duration::ZERO,
                est_delivery_other: us(other),
                stream_start: false,
                age: us(age),
                ahead,
                current_path: SourcePath { srtt: us(srtt), min_rtt: us(min), delivery_rate: rate },
            };
            let cutoff = StrandedTail.tail_cutoff(c.est_delivery_other, c.current_path).unwrap();
            let age_nanos = u64::try_from(c.age.as_nanos()).unwrap();
            proptest::prop_assert_eq!(cutoff.copies(age_nanos, ahead), StrandedTail.should_reinject(&c));
            // One nanosecond either side of the age, where the age bound cuts.
            for a in [age_nanos.saturating_sub(1), age_nanos + 1] {
                let c = ReinjectionContext { age: Duration::from_nanos(a), ..c };
                proptest::prop_assert_eq!(cutoff.copies(a, ahead), StrandedTail.should_reinject(&c));
            }
            // A path whose scan is skipped has no packet the policy copies, at any age and at
            // any number of bytes ahead up to the bound (the bound itself included).
            for max_ahead in [ahead, ahead.saturating_add(1), u64::MAX] {
                if cutoff.copies_none_within(max_ahead) {
                    for (a, b) in [(0, 0), (age_nanos, ahead.min(max_ahead)), (u64::MAX, max_ahead)] {
                        let c = ReinjectionContext { age: Duration::from_nanos(a), ahead: b, ..c };
                        proptest::prop_assert!(!StrandedTail.should_reinject(&c));
                    }
                }
            }
        }
    }
}
