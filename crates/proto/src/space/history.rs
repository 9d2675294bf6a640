//! How many packets a space numbered recently: the packet-number length choice (RFC 9000 §17.1)
//! needs to know how many later packets may overtake one on a slow path, and the recent send
//! rate of the whole space (ACK-only packets included, which no congestion window limits) is
//! one estimate of that.

use std::collections::VecDeque;

use crate::time::{Duration, Timestamp};

/// Checkpoints kept per horizon: a count over a window overestimates by at most the packets
/// numbered in one step (a 1/STEPS of the horizon).
const STEPS: u32 = 128;

/// One step of the history: the first and the last note in it, each `(time, next packet
/// number at that time)`.
#[derive(Debug, Clone, Copy)]
struct Step {
    first: (Timestamp, u64),
    last: (Timestamp, u64),
}

/// Steps oldest first, starting at least `horizon / STEPS` apart and reaching back at least
/// `horizon`.
#[derive(Debug, Default)]
pub(crate) struct SendHistory {
    steps: VecDeque<Step>,
}

impl SendHistory {
    /// Note that `next_pn` is the next packet number at `now`; keep enough steps to answer
    /// [`Self::numbered_since`] for windows up to `horizon`.
    pub(crate) fn note(&mut self, now: Timestamp, next_pn: u64, horizon: Duration) {
        let step = horizon / STEPS;
        match self.steps.back_mut() {
            Some(s) if now.saturating_duration_since(s.first.0) < step => s.last = (now, next_pn),
            _ => self.steps.push_back(Step {
                first: (now, next_pn),
                last: (now, next_pn),
            }),
        }
        // Keep the newest step starting at or before the horizon's start, drop older ones.
        let start = now.saturating_sub(horizon);
        while self.steps.get(1).is_some_and(|s| s.first.0 <= start) {
            self.steps.pop_front();
        }
    }

    /// An upper bound on the packets numbered after `now - window` until now, `next_pn` being
    /// the next packet number: exact up to the packets of one step, and all packets since the
    /// oldest note if the history is younger than the window.
    pub(crate) fn numbered_since(&self, now: Timestamp, window: Duration, next_pn: u64) -> u64 {
        let start = now.saturating_sub(window);
        let newer = self.steps.partition_point(|s| s.first.0 <= start);
        let base = match self.steps.get(newer.saturating_sub(1)) {
            // The whole step is before the window: from its last note on.
            Some(s) if s.last.0 <= start => s.last.1,
            // The window starts inside this step (or before the whole history).
            Some(s) => s.first.1,
            None => next_pn,
        };
        next_pn.saturating_sub(base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: u64) -> Timestamp {
        Timestamp::ZERO + Duration::from_millis(ms)
    }

    #[test]
    fn counts_packets_in_the_window() {
        let mut h = SendHistory::default();
        let horizon = Duration::from_millis(128);
        // One packet per millisecond for a second.
        for ms in 0..1000 {
            h.note(at(ms), ms, horizon);
        }
        let now = at(999);
        let next = 1000;
        // Exact up to one step (1 ms here).
        let n = h.numbered_since(now, Duration::from_millis(100), next);
        assert!((101..=102).contains(&n), "{n}");
        let n = h.numbered_since(now, Duration::from_millis(10), next);
        assert!((11..=12).contains(&n), "{n}");
        assert!(h.steps.len() <= STEPS as usize + 2, "{}", h.steps.len());
    }

    #[test]
    fn idle_then_burst_counts_only_the_burst() {
        let mut h = SendHistory::default();
        let horizon = Duration::from_millis(200);
        for pn in 0..50 {
            h.note(at(0), pn, horizon);
        }
        // Idle for a second, then 30 packets within 5 ms.
        for pn in 50..80 {
            h.note(at(1000 + (pn - 50) / 6), pn, horizon);
        }
        // The note of packet 49 is before the window: it is counted, the others are not.
        let n = h.numbered_since(at(1005), Duration::from_millis(100), 80);
        assert_eq!(n, 31);
        // A younger history than the window: everything since its start.
        let mut young = SendHistory::default();
        young.note(at(10), 7, horizon);
        assert_eq!(young.numbered_since(at(20), horizon, 20), 13);
        assert_eq!(SendHistory::default().numbered_since(at(5), horizon, 9), 0);
    }
}
