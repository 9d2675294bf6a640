//! Receive-side flow-control windows with auto-tuning (RFC 9000 §4.1, §4.2).
//!
//! One [`RecvWindow`] exists per receiving stream part (MAX_STREAM_DATA) and one
//! per connection (MAX_DATA).
//!
//! **When to send an update.** A new limit is advertised once the application has
//! consumed at least half of the current window, i.e. when the credit left to the
//! peer (`advertised - consumed`) drops to `window / 2` or below. This keeps
//! updates infrequent (RFC 9000 §4.2: "frequently sending MAX_STREAM_DATA and
//! MAX_DATA frames with small changes is undesirable") while leaving half a window
//! of slack for the update to arrive. Updates are never delayed until a
//! `*_BLOCKED` frame arrives (RFC 9000 §4.2 MUST NOT wait).
//!
//! **Auto-tuning.** As in quinn and ngtcp2, if the previous window update was sent
//! less than two round-trip times before this one, the application consumes a
//! window in less than ~2 RTTs, so the window is smaller than the bandwidth-delay
//! product and would throttle the sender (RFC 9000 §4.3): the window doubles, up
//! to `max_window`. The new limit is `consumed + window`.
//!
//! **Blocked at our limit.** The RTT this heuristic compares against is the receiver's
//! estimate, which a receiver that sends almost only ACKs rarely refreshes, and with several
//! paths the window must also cover the time a loss on the slowest path holds back the
//! contiguous data. A DATA_BLOCKED / STREAM_DATA_BLOCKED frame at the limit currently
//! advertised says directly that the window held the sender back (RFC 9000 §19.12: "input
//! to tuning of flow control algorithms"): the window doubles, up to `max_window`, and the
//! update is sent without waiting for the application to consume half of it.

use crate::time::{Duration, Timestamp};

/// A receive flow-control window (stream or connection level).
#[derive(Debug, Clone)]
pub(crate) struct RecvWindow {
    /// Highest limit advertised so far (in transport parameters or frames).
    advertised: u64,
    /// Current window size.
    window: u64,
    /// Auto-tuning ceiling.
    max_window: u64,
    /// Bytes consumed by the application (or discarded on its behalf).
    consumed: u64,
    /// When the limit was last increased by a frame.
    last_update: Option<Timestamp>,
}

impl RecvWindow {
    /// A window of `initial` bytes (the initial advertised limit), growing to at most
    /// `max_window` (never below `initial`).
    pub(crate) fn new(initial: u64, max_window: u64) -> Self {
        Self {
            advertised: initial,
            window: initial,
            max_window: max_window.max(initial),
            consumed: 0,
            last_update: None,
        }
    }

    /// The limit the peer must respect (the highest advertised).
    pub(crate) fn limit(&self) -> u64 {
        self.advertised
    }

    /// Current window size.
    pub(crate) fn window(&self) -> u64 {
        self.window
    }

    /// Records `n` more bytes consumed. Returns whether an update is now due.
    pub(crate) fn consume(&mut self, n: u64) -> bool {
        self.consumed += n;
        self.should_update()
    }

    /// Whether half the window has been consumed since the last update.
    pub(crate) fn should_update(&self) -> bool {
        self.advertised.saturating_sub(self.consumed) <= self.window / 2
    }

    /// The peer reports being blocked at `limit` (see the module docs). Returns whether an
    /// update is now due. Reports of an older, lower limit change nothing.
    pub(crate) fn on_peer_blocked(&mut self, limit: u64) -> bool {
        if limit < self.advertised || self.window >= self.max_window {
            return false;
        }
        self.window = (self.window * 2).min(self.max_window);
        // This growth stands for the update that follows: it must not double again for
        // coming soon after the previous one.
        self.last_update = None;
        self.should_update()
    }

    /// Raises the limit if an update is due (auto-tuning the window, see the module
    /// docs) and returns the limit to advertise.
    pub(crate) fn update(&mut self, now: Timestamp, rtt: Duration) -> u64 {
        if !self.should_update() {
            return self.advertised;
        }
        if let Some(last) = self.last_update {
            if now.saturating_duration_since(last) < rtt * 2 {
                self.window = (self.window * 2).min(self.max_window);
            }
        }
        self.last_update = Some(now);
        self.advertised = self.advertised.max(self.consumed + self.window);
        self.advertised
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_at_half_window_and_doubles_when_fast() {
        let rtt = Duration::from_millis(100);
        let mut w = RecvWindow::new(1000, 4000);
        assert!(!w.consume(499));
        assert!(w.consume(1));
        let t0 = Timestamp::from_nanos(1_000_000_000);
        assert_eq!(w.update(t0, rtt), 1500); // first update: no history, no growth
        assert!(!w.should_update());
        w.consume(500);
        // Half a window consumed within 2 RTTs: the window doubles.
        assert_eq!(w.update(t0 + Duration::from_millis(150), rtt), 1000 + 2000);
        w.consume(1000);
        assert_eq!(w.update(t0 + Duration::from_millis(200), rtt), 2000 + 4000);
        w.consume(2000);
        // Capped at max_window.
        assert_eq!(w.update(t0 + Duration::from_millis(250), rtt), 4000 + 4000);
        w.consume(2000);
        // Slow consumption: no growth.
        assert_eq!(w.update(t0 + Duration::from_secs(10), rtt), 6000 + 4000);
        assert_eq!(w.window(), 4000);
    }

    #[test]
    fn a_peer_blocked_at_our_limit_doubles_the_window_once() {
        let rtt = Duration::from_millis(100);
        let t0 = Timestamp::from_nanos(1_000_000_000);
        let mut w = RecvWindow::new(1000, 8000);
        // The application has read only a quarter: no update due by consumption.
        assert!(!w.consume(250));
        // Blocked at an older limit: nothing changes.
        assert!(!w.on_peer_blocked(999));
        assert_eq!(w.window(), 1000);
        // Blocked at our limit: the window doubles and the update is due at once.
        assert!(w.on_peer_blocked(1000));
        assert_eq!(w.window(), 2000);
        assert_eq!(w.update(t0, rtt), 250 + 2000);
        // The same report again (delayed copy) is about a limit we have since raised.
        assert!(!w.on_peer_blocked(1000));
        // Soon after, a blocked report at the new limit doubles again; the update that
        // follows does not double a second time for coming within two RTTs.
        w.consume(1000);
        assert!(w.on_peer_blocked(2250));
        assert_eq!(w.update(t0 + Duration::from_millis(50), rtt), 1250 + 4000);
        assert_eq!(w.window(), 4000);
        // Never beyond max_window.
        assert!(w.on_peer_blocked(5250));
        assert!(!w.on_peer_blocked(5250 + 8000));
        assert_eq!(w.window(), 8000);
    }
}
