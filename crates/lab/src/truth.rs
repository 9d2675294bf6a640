//! Ground-truth checks of a run: what the endpoints believe against what the simulator knows.
//!
//! * **True losses** of a path: the packets its download link dropped (queue overflow, random
//!   loss, link down), to compare with the losses the sender declared (Alibaba report §2.1:
//!   a loss declared for a packet that arrived is a phantom loss).
//! * **Minimum-RTT floor** of a path: the smallest one-way delay any packet had on its
//!   download route plus the smallest on its upload route. An RTT sample of a round trip on
//!   the path itself (data down, ACK up the same path) can never be below it, so a path's
//!   minimum RTT below the floor means a sample mixed paths (report §2.2). The check applies
//!   while the §2.2 RTT rule is on, in both designs; with the rule off (naive SPNS) samples
//!   mix paths by design and the comparison is only reported.

use mpquic_proto::PathId;

use crate::result::{PathResult, RunResult};

/// Slack for rounding: RTTs are nanoseconds turned into milliseconds.
const FLOOR_SLACK_MS: f64 = 1e-6;

/// One endpoint's minimum RTT of a path, when it does not come from the RFC 10069 §5.4
/// fallback (samples from other paths' ACKs while a path had none of its own; the first own
/// sample restarts the estimator). With the §2.2 rule on it then holds own round trips only.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MinRtt {
    /// `server` (the sender) or `client`.
    pub side: &'static str,
    /// QUIC path ID.
    pub path: PathId,
    /// The endpoint's minimum RTT of the path (ms).
    pub min_rtt_ms: f64,
}

/// The message for a minimum RTT below the path's floor, None when it is not below.
pub fn below_floor(min: MinRtt, floor_ms: Option<f64>) -> Option<String> {
    let floor = floor_ms?;
    (min.min_rtt_ms < floor - FLOOR_SLACK_MS).then(|| {
        format!(
            "{} path {}: min RTT {:.3} ms below the path's propagation floor {:.3} ms \
             (an RTT sample mixed paths)",
            min.side, min.path, min.min_rtt_ms, floor
        )
    })
}

/// Both endpoints' own-sample minimum RTTs of a path result.
fn min_rtts(p: &PathResult) -> impl Iterator<Item = MinRtt> + '_ {
    let fallback_only = p.own_rtt_samples == 0 && p.borrowed_rtt_samples > 0;
    let server = (p.rtt_samples > 0 && !fallback_only).then_some(MinRtt {
        side: "server",
        path: p.id,
        min_rtt_ms: p.min_rtt_ms,
    });
    let client = p.receiver_min_rtt_ms.map(|ms| MinRtt {
        side: "client",
        path: p.id,
        min_rtt_ms: ms,
    });
    server.into_iter().chain(client)
}

/// Every minimum RTT of the run below its path's floor, whatever the rules.
pub fn min_rtts_below_floor(paths: &[PathResult]) -> Vec<String> {
    paths
        .iter()
        .flat_map(|p| min_rtts(p).filter_map(|m| below_floor(m, p.min_rtt_floor_ms)))
        .collect()
}

/// The invariants a run must satisfy under its configuration: no minimum RTT below its
/// path's floor while the §2.2 RTT rule is on (`per_path_rtt_samples`).
pub fn violations(result: &RunResult, per_path_rtt_samples: bool) -> Vec<String> {
    if per_path_rtt_samples {
        min_rtts_below_floor(&result.paths)
    } else {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_min_rtt_below_the_floor_is_reported() {
        let m = |ms| MinRtt {
            side: "server",
            path: PathId::new(1),
            min_rtt_ms: ms,
        };
        assert_eq!(below_floor(m(81.2), Some(81.1)), None);
        assert_eq!(below_floor(m(81.1), Some(81.1)), None, "equal is fine");
        let msg = below_floor(m(52.0), Some(60.0)).expect("below");
        assert!(
            msg.contains("server path 1") && msg.contains("52.000"),
            "{msg}"
        );
        assert_eq!(below_floor(m(1.0), None), None, "no floor without traffic");
    }
}
