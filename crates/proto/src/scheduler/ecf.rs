//! ECF, Earliest Completion First: Y. Lim, E. M. Nahum, D. Towsley, R. J. Gibbens, "ECF: An MPTCP
//! Path Scheduler to Manage Heterogeneous Paths", ACM CoNEXT 2017, §3 and Algorithm 1.
//!
//! Min-RTT sends on a slower path whenever the fastest one has no window room. At the end of a
//! transfer that is a loss: the last packets wait a whole slow-path RTT while the fast path, a
//! few of its RTTs later, could have carried them sooner. ECF compares the two completion times
//! for the data left in the send buffer and idles the slow path when the fast one wins.

use super::{fast_or_slow, packets, time_to_ack, Backlog, FastOrSlow, PathView, Scheduler};
use crate::path::PathId;

/// Hysteresis β of Algorithm 1 as a fraction (the paper uses β = 0.25): once ECF decided to wait
/// for the fast path, the slow one must look better by this margin before it is used again.
const BETA_NUM: u128 = 1;
const BETA_DEN: u128 = 4;

#[derive(Debug, Default)]
/// ECF, Earliest Completion First (Lim et al., CoNEXT 2017): waits for the fastest path when that completes the backlog sooner.
pub struct Ecf {
    /// Algorithm 1's `waiting`: the previous decision was to wait for the fastest path.
    waiting: bool,
}

impl Ecf {
    /// Algorithm 1 for fastest path `f` (blocked) and second path `s` (can send), with `k`
    /// packets left, `δ = max(σ_f, σ_s)` (σ = rttvar), `n = 1 + k / CWND_f`:
    ///
    /// ```text
    /// if n·RTT_f < (1 + waiting·β)·(RTT_s + δ):      -- f alone finishes within about one RTT_s
    ///     if (k / CWND_s)·RTT_s ≥ 2·RTT_f + δ:        -- and s would take longer than waiting
    ///         waiting = 1; send nothing (wait for f)
    ///     else: send on s
    /// else: waiting = 0; send on s
    /// ```
    ///
    /// The first test asks whether waiting for f's window (about one RTT_f) and then sending
    /// everything on f, n rounds of RTT_f, beats the slow path's RTT; the second whether sending
    /// on s would itself finish later than f's `2·RTT_f + δ`. CWNDs and k are in packets.
    ///
    /// RTT_s is [`time_to_ack`]: the smoothed RTT, or the time s needs to drain the bytes it
    /// already carries, if longer (issue 15: data put on a 2.5 Mbit/s path whose smoothed RTT
    /// said 160 ms sat behind 105 kB, 340 ms of queue, and arrived after the fast path had
    /// finished everything else).
    ///
    /// Another change to the paper: s's completion time is `max(k, CWND_s) / CWND_s · RTT_s`, not
    /// `k / CWND_s · RTT_s`. A packet sent on s is acknowledged one RTT_s later however few
    /// packets are left; the paper's term tends to zero with k, so with a small backlog (the
    /// last packets of a transfer, or a sender held to a few packets by the peer's flow
    /// control) Algorithm 1 sends them on a path that takes 20 times longer than waiting for
    /// the fast one (issue 15: the last 5 kB of a 20 MB download waited 95 ms on a
    /// 200 ms-RTT path that ECF had judged `4/13·206 ms < 2·14 ms + 82 ms`).
    fn decide(&mut self, f: &PathView, s: &PathView, backlog: &Backlog) -> Option<PathId> {
        // k in packets of the fast path, each window in packets of its own path's size.
        let (mtu_f, mtu_s) = (f.mtu.max(1), s.mtu.max(1));
        let k = u128::from(packets(backlog.bytes, mtu_f));
        let cwnd_f = u128::from((f.cwnd / mtu_f).max(1));
        let cwnd_s = u128::from((s.cwnd / mtu_s).max(1));
        let rtt_f = f.srtt.as_nanos();
        let rtt_s = time_to_ack(s, mtu_s).as_nanos();
        let delta = f.rttvar.max(s.rttvar).as_nanos();
        let n = 1 + k / cwnd_f;
        // n·RTT_f < (1 + waiting·β)(RTT_s + δ), multiplied through by BETA_DEN.
        let beta = if self.waiting { BETA_NUM } else { 0 };
        if n * rtt_f * BETA_DEN < (BETA_DEN + beta) * (rtt_s + delta) {
            // (max(k, CWND_s) / CWND_s)·RTT_s ≥ 2·RTT_f + δ, multiplied through by CWND_s.
            if k.max(cwnd_s) * rtt_s >= cwnd_s * (2 * rtt_f + delta) {
                self.waiting = true;
                return None;
            }
            Some(s.id)
        } else {
            self.waiting = false;
            Some(s.id)
        }
    }
}

impl Scheduler for Ecf {
    fn select(&mut self, paths: &[PathView], backlog: &Backlog) -> Option<PathId> {
        match fast_or_slow(paths) {
            FastOrSlow::Decided(pick) => pick,
            FastOrSlow::Blocked { fast, slow } => self.decide(fast, slow, backlog),
        }
    }
    fn name(&self) -> &'static str {
        "ecf"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::{backlog, view};
    use crate::time::Duration;

    /// The paper's motivating case (§2, Fig. 2): a fast path (10 ms, 10 packets of window, all
    /// in flight) and a slow one (100 ms, 10 packets, room). Packets are 1,000 bytes.
    fn fast_full_and_slow() -> [PathView; 2] {
        crate::scheduler::fast_full_and_slow(100)
    }

    #[test]
    fn fast_path_with_room_is_used() {
        let mut s = Ecf::default();
        let mut paths = fast_full_and_slow();
        paths[0].can_send = true;
        assert_eq!(s.select(&paths, &backlog(1_000_000)), Some(PathId::new(0)));
    }

    #[test]
    fn little_data_left_waits_for_the_fast_path() {
        let mut s = Ecf::default();
        // k = 20: n = 3, 3·10 ms < 100 ms, and 20/10·100 ms = 200 ms ≥ 2·10 ms: wait.
        assert_eq!(s.select(&fast_full_and_slow(), &backlog(20_000)), None);
        assert!(s.waiting);
    }

    #[test]
    fn lots_of_data_left_uses_the_slow_path() {
        let mut s = Ecf::default();
        // k = 1000: n = 101, 1010 ms > 100 ms: the fast path alone would finish later.
        assert_eq!(
            s.select(&fast_full_and_slow(), &backlog(1_000_000)),
            Some(PathId::new(1))
        );
        assert!(!s.waiting);
    }

    #[test]
    fn one_packet_on_a_slow_path_that_is_quick_enough_is_sent() {
        let mut s = Ecf::default();
        let mut paths = fast_full_and_slow();
        paths[1].srtt = Duration::from_millis(15);
        paths[1].cwnd = 100_000;
        // k = 2: n = 1, 10 ms < 15 ms, but 2/100·15 ms = 0.3 ms < 20 ms: s finishes first.
        assert_eq!(s.select(&paths, &backlog(2_000)), Some(PathId::new(1)));
    }

    #[test]
    fn rttvar_and_hysteresis_widen_the_waiting_region() {
        // k = 95: n = 10, n·RTT_f = 100 ms, not below RTT_s = 100 ms: use s.
        let mut s = Ecf::default();
        assert_eq!(
            s.select(&fast_full_and_slow(), &backlog(95_000)),
            Some(PathId::new(1))
        );
        // With δ = 5 ms: 100 ms < 105 ms, and 9.5·100 ms ≥ 25 ms: wait.
        let mut paths = fast_full_and_slow();
        paths[1].rttvar = Duration::from_millis(5);
        assert_eq!(s.select(&paths, &backlog(95_000)), None);
        // k = 110 (n = 12, 120 ms): not below 100 ms, but below 1.25·100 ms once waiting.
        let mut waiting = Ecf { waiting: true };
        assert_eq!(
            waiting.select(&fast_full_and_slow(), &backlog(110_000)),
            None
        );
        let mut fresh = Ecf::default();
        assert_eq!(
            fresh.select(&fast_full_and_slow(), &backlog(110_000)),
            Some(PathId::new(1))
        );
    }

    #[test]
    fn slow_path_without_rtt_sample_gets_no_data_while_the_fast_one_works() {
        let mut paths = fast_full_and_slow();
        paths[1].rtt_known = false;
        paths[1].srtt = Duration::from_millis(333);
        // Min-RTT would probe the new path at once; ECF waits for its first sample, even with
        // a backlog that would make a known 333 ms path worth using.
        assert_eq!(Ecf::default().select(&paths, &backlog(20_000)), None);
        assert_eq!(Ecf::default().select(&paths, &backlog(1_000_000)), None);
        paths[1].rtt_known = true;
        assert_eq!(
            Ecf::default().select(&paths, &backlog(1_000_000)),
            Some(PathId::new(1))
        );
        // The only usable path left (the fast one failed): used without a sample.
        paths[1].rtt_known = false;
        paths[0].usable = false;
        assert_eq!(
            Ecf::default().select(&paths, &backlog(20_000)),
            Some(PathId::new(1))
        );
    }

    /// Issue 15's measured case, rounded: the 50 Mbit/s, 5 ms path (srtt 14 ms, blocked) and
    /// the 5 Mbit/s, 100 ms one (srtt 206 ms, rttvar 82 ms, 16 kB of window) with 4 packets
    /// left. Algorithm 1 as published sends them on the slow path (4/13·206 ms = 63 ms is
    /// below 2·14 + 82 = 110 ms); they arrive 100 ms after the fast path could have delivered
    /// them. A packet on s takes at least RTT_s: wait.
    #[test]
    fn a_short_tail_waits_even_when_it_fits_the_slow_window() {
        let mut fast = view(0, 14, false, false);
        fast.cwnd = 94_000;
        fast.bytes_in_flight = 94_000;
        let mut slow = view(1, 206, true, false);
        slow.rttvar = Duration::from_millis(82);
        slow.cwnd = 13_000;
        let mut s = Ecf::default();
        assert_eq!(s.select(&[fast, slow], &backlog(4_000)), None);
        // A slow path quicker than 2·RTT_f + δ (25 ms < 28 ms) still carries a short tail.
        slow.srtt = Duration::from_millis(25);
        slow.rttvar = Duration::ZERO;
        assert_eq!(
            Ecf::default().select(&[fast, slow], &backlog(4_000)),
            Some(PathId::new(1))
        );
    }

    /// Issue 15's 50 + 2.5 Mbit/s pair in Cubic's slow start: the slow path's smoothed RTT
    /// (160 ms) lags its queue; 105 kB are in flight and it delivers 312.5 kB/s, so a packet
    /// sent now is acknowledged after 339 ms. With 1,000 packets left the fast path alone needs
    /// 11 rounds of 16 ms = 176 ms: longer than the smoothed RTT (use s, as the paper would),
    /// shorter than the real wait on s (wait).
    #[test]
    fn a_queue_building_on_the_slow_path_counts() {
        let mut fast = view(0, 16, false, false);
        fast.cwnd = 100_000;
        fast.bytes_in_flight = 100_000;
        let mut slow = view(1, 160, true, false);
        slow.cwnd = 130_000;
        slow.bytes_in_flight = 105_000;
        assert_eq!(
            Ecf::default().select(&[fast, slow], &backlog(1_000_000)),
            Some(PathId::new(1)),
            "without a rate estimate: the smoothed RTT"
        );
        slow.delivery_rate = 312_500;
        assert_eq!(
            crate::scheduler::time_to_ack(&slow, 1_000),
            Duration::from_micros(339_200)
        );
        assert_eq!(
            Ecf::default().select(&[fast, slow], &backlog(1_000_000)),
            None
        );
        // The queue drained (in flight 10 kB, 35 ms at that rate): the smoothed RTT again.
        slow.bytes_in_flight = 10_000;
        assert_eq!(
            Ecf::default().select(&[fast, slow], &backlog(1_000_000)),
            Some(PathId::new(1))
        );
    }

    #[test]
    fn nothing_can_send_gives_none() {
        let mut s = Ecf::default();
        let mut paths = fast_full_and_slow();
        paths[1].can_send = false;
        assert_eq!(s.select(&paths, &backlog(1_000_000)), None);
    }
}
