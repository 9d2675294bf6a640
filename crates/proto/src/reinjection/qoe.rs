//! XLINK Algorithm 1: QoE control of re-injection with double thresholds on the player's
//! play-time left, plus first-frame acceleration.

use super::{ReinjectionContext, ReinjectionFactory, ReinjectionPolicy};
use crate::time::Duration;

/// Re-inject when the buffer is nearly empty; never when it is comfortably full; in between only
/// when the other path would deliver the tail sooner.
#[derive(Debug, Clone, Copy)]
pub struct QoeControlled {
    lower: Duration,
    upper: Duration,
}

impl QoeControlled {
    /// A policy with play-time-left thresholds `lower` and `upper` (swapped if given in the wrong
    /// order): re-inject below `lower`, never above `upper`.
    pub fn new(lower: Duration, upper: Duration) -> Self {
        Self {
            lower: lower.min(upper),
            upper: upper.max(lower),
        }
    }
}

impl ReinjectionPolicy for QoeControlled {
    fn should_reinject(&self, ctx: &ReinjectionContext) -> bool {
        // First-frame acceleration (XLINK §4.3): the start of a stream always goes twice.
        if ctx.stream_start {
            return true;
        }
        match ctx.play_time_left {
            Some(left) if left < self.lower => true,
            Some(left) if left > self.upper => false,
            // Between the thresholds, or no feedback yet: only if the other path is faster.
            _ => ctx.est_delivery_current > ctx.est_delivery_other,
        }
    }
    fn name(&self) -> &'static str {
        "qoe"
    }
}

/// The policy with its thresholds makes the same policy for every connection.
impl ReinjectionFactory for QoeControlled {
    fn name(&self) -> &str {
        "qoe"
    }
    fn build(&self) -> Box<dyn ReinjectionPolicy> {
        Box::new(*self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx(left_ms: Option<u64>, current_ms: u64, other_ms: u64) -> ReinjectionContext {
        ReinjectionContext {
            play_time_left: left_ms.map(Duration::from_millis),
            est_delivery_current: Duration::from_millis(current_ms),
            est_delivery_other: Duration::from_millis(other_ms),
            stream_start: false,
            age: Duration::ZERO,
            ahead: 0,
            current_path: Default::default(),
        }
    }

    #[test]
    fn double_thresholds() {
        let p = QoeControlled::new(Duration::from_millis(500), Duration::from_millis(2000));
        assert!(
            p.should_reinject(&ctx(Some(100), 10, 50)),
            "below lower: always"
        );
        assert!(
            !p.should_reinject(&ctx(Some(3000), 90, 10)),
            "above upper: never"
        );
        assert!(
            p.should_reinject(&ctx(Some(1000), 90, 10)),
            "between, other path faster"
        );
        assert!(
            !p.should_reinject(&ctx(Some(1000), 10, 90)),
            "between, current path faster"
        );
        let first = ReinjectionContext {
            stream_start: true,
            ..ctx(Some(3000), 10, 90)
        };
        assert!(
            p.should_reinject(&first),
            "first frame regardless of thresholds"
        );
    }
}
