//! BLEST, blocking estimation: S. Ferlin, Ö. Alay, O. Mehani, R. Boreli, "BLEST: Blocking
//! Estimation-based MPTCP Scheduler for Heterogeneous Networks", IFIP Networking 2016, §III.
//!
//! A packet sent on the slow path holds its share of the receiver's window for a whole slow-path
//! RTT. If the fast path would need that room in the meantime, it blocks on the window
//! (head-of-line blocking at the receiver). BLEST estimates how much the fast path sends during
//! one slow-path RTT and skips the slow path when that would not fit into the window left.
//!
//! In QUIC the receiver's window is the peer's flow control (RFC 9000 §4): the room left is
//! [`Backlog::send_window`], which already discounts everything sent on any path.

use super::{fast_or_slow, Backlog, FastOrSlow, PathView, Scheduler};
use crate::path::PathId;
use crate::time::{Duration, Timestamp};

/// λ in thousandths. The paper scales its estimate by λ and adapts λ by a step δλ: up when the
/// connection was blocked by the window anyway (the estimate was too small), down otherwise.
/// Start, bounds and steps are ours (the paper leaves them to the implementation).
const LAMBDA_START: u64 = 1_000;
const LAMBDA_MIN: u64 = 500;
const LAMBDA_MAX: u64 = 2_000;
const LAMBDA_UP: u64 = 100;
const LAMBDA_DOWN: u64 = 25;

#[derive(Debug)]
/// BLEST (Ferlin et al., IFIP Networking 2016): skips a slow path whose packets would block the receive window.
pub struct Blest {
    /// Correction factor λ (thousandths).
    lambda: u64,
    /// Start of the current adaptation interval (one fast-path RTT).
    interval_start: Option<Timestamp>,
    /// The window blocked sending (backlog left, no room) during the current interval.
    blocked: bool,
}

impl Default for Blest {
    fn default() -> Self {
        Self {
            lambda: LAMBDA_START,
            interval_start: None,
            blocked: false,
        }
    }
}

/// X of §III: the bytes the fast path sends during one slow-path RTT, its window growing by one
/// packet per round (congestion avoidance): with r = RTT_s / RTT_f rounds,
/// `X = MSS_f · (CWND_f + (r − 1) / 2) · r`, CWND_f in packets.
fn fast_bytes_during_slow_rtt(fast: &PathView, slow: &PathView, mtu: u64) -> f64 {
    let r = slow.srtt.as_secs_f64() / fast.srtt.as_secs_f64().max(1e-9);
    let cwnd_f = (fast.cwnd / mtu.max(1)) as f64;
    mtu as f64 * (cwnd_f + (r - 1.0) / 2.0) * r
}

impl Blest {
    /// λ adaptation, once per fast-path RTT: up by δλ if the window blocked the sender during
    /// the interval, down otherwise. Writes reserve flow-control credit, so the backlog always
    /// fits into the window; the sender is window-limited when the credit left beyond the
    /// backlog (what the application may still write) is under one packet.
    fn adapt(&mut self, backlog: &Backlog, fast_rtt: Duration) {
        if backlog.send_window.saturating_sub(backlog.bytes) < backlog.mtu {
            self.blocked = true;
        }
        let start = *self.interval_start.get_or_insert(backlog.now);
        if backlog.now.saturating_duration_since(start) < fast_rtt {
            return;
        }
        self.lambda = if self.blocked {
            (self.lambda + LAMBDA_UP).min(LAMBDA_MAX)
        } else {
            self.lambda.saturating_sub(LAMBDA_DOWN).max(LAMBDA_MIN)
        };
        self.blocked = false;
        self.interval_start = Some(backlog.now);
    }

    /// §III's rule: do not send on s if `λ·X > W − MSS_s`, W being the window left before this
    /// packet (the paper's `|rwnd|` minus the data in flight on both paths).
    fn decide(&self, fast: &PathView, slow: &PathView, backlog: &Backlog) -> Option<PathId> {
        let x = fast_bytes_during_slow_rtt(fast, slow, fast.mtu);
        let room = backlog.send_window.saturating_sub(slow.mtu) as f64;
        if x * self.lambda as f64 / 1_000.0 > room {
            None
        } else {
            Some(slow.id)
        }
    }
}

impl Scheduler for Blest {
    fn select(&mut self, paths: &[PathView], backlog: &Backlog) -> Option<PathId> {
        if let Some(fast) = paths.iter().filter(|p| p.rtt_known).min_by_key(|p| p.srtt) {
            self.adapt(backlog, fast.srtt);
        }
        match fast_or_slow(paths) {
            FastOrSlow::Decided(pick) => pick,
            FastOrSlow::Blocked { fast, slow } => self.decide(fast, slow, backlog),
        }
    }
    fn name(&self) -> &'static str {
        "blest"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scheduler::backlog;

    /// The paper's setting: a fast path (10 ms, 10 packets, window full) and a slow one (40 ms,
    /// room). Over one slow RTT (r = 4) the fast path sends (10 + 1.5)·4 = 46 packets = 46,000
    /// bytes of 1,000.
    fn fast_full_and_slow() -> [PathView; 2] {
        crate::scheduler::fast_full_and_slow(40)
    }

    fn with_window(send_window: u64) -> Backlog {
        Backlog {
            send_window,
            ..backlog(1_000_000)
        }
    }

    #[test]
    fn estimate_includes_window_growth() {
        let [f, s] = fast_full_and_slow();
        assert_eq!(fast_bytes_during_slow_rtt(&f, &s, 1_000), 46_000.0);
    }

    #[test]
    fn small_window_skips_the_slow_path() {
        let mut s = Blest::default();
        // 46,000 > 40,000 − 1,000: the fast path would block on the window; wait.
        assert_eq!(s.select(&fast_full_and_slow(), &with_window(40_000)), None);
    }

    #[test]
    fn large_window_uses_the_slow_path() {
        let mut s = Blest::default();
        // 46,000 ≤ 100,000 − 1,000.
        assert_eq!(
            s.select(&fast_full_and_slow(), &with_window(100_000)),
            Some(PathId::new(1))
        );
    }

    #[test]
    fn fast_path_with_room_is_used() {
        let mut s = Blest::default();
        let mut paths = fast_full_and_slow();
        paths[0].can_send = true;
        assert_eq!(s.select(&paths, &with_window(1_000)), Some(PathId::new(0)));
    }

    #[test]
    fn lambda_shrinks_while_the_window_has_room() {
        let mut s = Blest::default();
        let roomy = |t_ms: u64| Backlog {
            now: Timestamp::from_nanos(t_ms * 1_000_000),
            ..with_window(2_000_000)
        };
        s.select(&fast_full_and_slow(), &roomy(0));
        s.select(&fast_full_and_slow(), &roomy(10));
        assert_eq!(s.lambda, LAMBDA_START - LAMBDA_DOWN);
        // A backlog that fills the window is blocking even though the window is not zero.
        let mut t = Blest::default();
        t.select(&fast_full_and_slow(), &with_window(1_000_500));
        t.select(
            &fast_full_and_slow(),
            &Backlog {
                now: Timestamp::from_nanos(10_000_000),
                ..with_window(1_000_500)
            },
        );
        assert_eq!(t.lambda, LAMBDA_START + LAMBDA_UP);
    }

    #[test]
    fn lambda_grows_after_blocking_and_then_applies() {
        let mut s = Blest::default();
        // Window exhausted with data left, then one fast RTT later: λ = 1.1.
        s.select(&fast_full_and_slow(), &with_window(0));
        let later = Backlog {
            now: Timestamp::from_nanos(10_000_000),
            ..with_window(51_000)
        };
        // λ·X = 1.1·46,000 = 50,600 > 51,000 − 1,000: wait. With λ = 1 (46,000) the same
        // window admits the packet.
        assert_eq!(s.select(&fast_full_and_slow(), &later), None);
        assert_eq!(s.lambda, 1_100);
        assert_eq!(
            Blest::default().select(&fast_full_and_slow(), &with_window(51_000)),
            Some(PathId::new(1))
        );
    }
}
