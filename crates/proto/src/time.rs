//! Virtual-or-real time as a plain value. The core never reads a clock: every entry point takes
//! the current [`Timestamp`] from its caller (the simulator's virtual clock, or the runtime's
//! monotonic clock converted to nanoseconds since the endpoint started).

use std::ops::{Add, AddAssign, Sub};
pub use std::time::Duration;

/// Nanoseconds since an arbitrary, caller-chosen epoch.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Default,
    serde::Serialize,
    serde::Deserialize,
)]
pub struct Timestamp(u64);

impl Timestamp {
    /// The epoch itself.
    pub const ZERO: Timestamp = Timestamp(0);

    /// A timestamp `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Self {
        Timestamp(nanos)
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time elapsed since `earlier`, or zero when `earlier` is later than `self`.
    pub fn saturating_duration_since(self, earlier: Timestamp) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + nanos`, saturating (the same as adding a `Duration` of `nanos`).
    pub(crate) fn saturating_add_nanos(self, nanos: u64) -> Timestamp {
        Timestamp(self.0.saturating_add(nanos))
    }

    /// `self - d`, clamped at the epoch.
    pub fn saturating_sub(self, d: Duration) -> Timestamp {
        Timestamp(self.0.saturating_sub(duration_nanos(d)))
    }
}

/// `d` in nanoseconds, saturating (beyond 584 years).
pub(crate) fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Timestamp {
    type Output = Timestamp;
    fn add(self, d: Duration) -> Timestamp {
        Timestamp(self.0.saturating_add(duration_nanos(d)))
    }
}

impl AddAssign<Duration> for Timestamp {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Timestamp> for Timestamp {
    type Output = Duration;
    /// Saturating: a later `rhs` gives zero rather than panicking.
    fn sub(self, rhs: Timestamp) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Timestamp::from_nanos(1_000);
        assert_eq!(t + Duration::from_nanos(500), Timestamp::from_nanos(1_500));
        assert_eq!(t - Timestamp::from_nanos(2_000), Duration::ZERO);
        assert_eq!(t.saturating_sub(Duration::from_secs(1)), Timestamp::ZERO);
        assert_eq!(
            Timestamp::from_nanos(3_000) - t,
            Duration::from_nanos(2_000)
        );
    }
}
