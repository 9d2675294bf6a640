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

use crate::time::{Duration, Timestamp};

/// A receive flow-control window (stream or connection level).
#[derive(Debug, Clone)]
pub struct RecvWindow {
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
    pub fn new(initial: u64, max_window: u64) -> Self {
        Self {
            advertised: initial,
            window: initial,
            max_window: max_window.max(initial),
            consumed: 0,
            last_update: None,
        }
    }

    /// The limit the peer must respect (the highest advertised).
    pub fn limit(&self) -> u64 {
        self.advertised
    }

    /// Current window size.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// Bytes consumed so far.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// Records `n` more bytes consumed. Returns whether an update is now due.
    pub fn consume(&mut self, n: u64) -> bool {
        self.consumed += n;
        self.should_update()
    }

    /// Whether half the window has been consumed since the last update.
    pub fn should_update(&self) -> bool {
        self.advertised.saturating_sub(self.consumed) <= self.window / 2
    }

    /// Raises the limit if an update is due (auto-tuning the window, see the module
    /// docs) and returns the limit to advertise.
    pub fn update(&mut self, now: Timestamp, rtt: Duration) -> u64 {
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
}
