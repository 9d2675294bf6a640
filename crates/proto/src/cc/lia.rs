//! LIA, the Linked Increases Algorithm of RFC 6356, coupling the congestion avoidance increase of
//! all active paths of a connection.
//!
//! RFC 6356 §3 changes only the increase in congestion avoidance: slow start, the loss response
//! (halving, here with RFC 9002's recovery period), persistent congestion and the
//! application-limited rule are those of [`NewReno`], which this controller wraps. The coupled
//! state of the sibling paths (congestion window and smoothed RTT) comes from the [`Coupling`]
//! passed with every ACK; paths that are inactive or have no RTT estimate yet are left out.

use super::new_reno::NewReno;
use super::{
    AckEvent, CcConfig, CcStats, CongestionController, Coupling, CouplingState, LossEvent,
};
use crate::time::{Duration, Timestamp};

/// A path's congestion window (bytes) and RTT (seconds), as RFC 6356 §3 uses them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathWindow {
    /// Congestion window in bytes.
    pub cwnd: f64,
    /// Smoothed round-trip time in seconds.
    pub rtt: f64,
}

/// The sibling paths of `coupling` that take part in the coupling: active, with a window and an
/// RTT estimate. The caller's own entry is left out: it uses its live values instead, since the
/// coupling snapshot may predate the current event.
pub(crate) fn siblings<'a>(coupling: &Coupling<'a>) -> impl Iterator<Item = &'a CouplingState> {
    let own = coupling.own;
    coupling
        .paths
        .iter()
        .enumerate()
        .filter(move |(i, s)| *i != own && s.active && s.cwnd > 0 && !s.srtt.is_zero())
        .map(|(_, s)| s)
}

/// RFC 6356 §3: alpha = cwnd_total · max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)².
/// Returns 1 (uncoupled Reno) when the inputs are degenerate.
pub fn alpha(paths: &[PathWindow]) -> f64 {
    let total: f64 = paths.iter().map(|p| p.cwnd).sum();
    let best = paths
        .iter()
        .map(|p| p.cwnd / (p.rtt * p.rtt))
        .fold(0.0, f64::max);
    let sum: f64 = paths.iter().map(|p| p.cwnd / p.rtt).sum();
    let alpha = total * best / (sum * sum);
    if alpha.is_finite() && alpha > 0.0 {
        alpha
    } else {
        1.0
    }
}

/// The smallest RTT used in the coupling formulas, so that a zero estimate cannot divide by 0.
pub(crate) const MIN_COUPLING_RTT: Duration = Duration::from_micros(1);

/// RFC 6356 LIA for one path of a multipath connection. Build with [`Lia::new`].
#[derive(Debug, Clone)]
pub struct Lia {
    reno: NewReno,
    /// Fractional bytes of increase not yet added to the window.
    pending: f64,
    /// alpha used by the latest increase (statistics and tests).
    last_alpha: f64,
}

impl Lia {
    /// A LIA controller starting in slow start (RFC 9002 §7.2 initial window).
    pub fn new(config: CcConfig) -> Self {
        Self {
            reno: NewReno::new(config),
            pending: 0.0,
            last_alpha: 1.0,
        }
    }

    /// The alpha of the latest congestion avoidance increase.
    pub fn alpha(&self) -> f64 {
        self.last_alpha
    }
}

impl CongestionController for Lia {
    fn on_packet_sent(&mut self, now: Timestamp, bytes: u64, bytes_in_flight: u64) {
        self.reno.on_packet_sent(now, bytes, bytes_in_flight);
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>, coupling: Coupling<'_>) {
        let acked = self.reno.ack_before_avoidance(ack);
        if acked == 0 {
            return;
        }
        let rtt = ack.rtt.smoothed().max(MIN_COUPLING_RTT).as_secs_f64();
        let own = PathWindow {
            cwnd: self.reno.window() as f64,
            rtt,
        };
        let others = siblings(&coupling).map(|s| PathWindow {
            cwnd: s.cwnd as f64,
            rtt: s.srtt.as_secs_f64(),
        });
        let paths: Vec<PathWindow> = std::iter::once(own).chain(others).collect();
        let total: f64 = paths.iter().map(|p| p.cwnd).sum();
        self.last_alpha = alpha(&paths);
        // RFC 6356 §3: for each ACK on path i, increase cwnd_i by
        // min(alpha · bytes_acked · MSS_i / cwnd_total, bytes_acked · MSS_i / cwnd_i).
        let (acked, mss) = (acked as f64, self.reno.mss() as f64);
        let coupled = self.last_alpha * acked * mss / total;
        let uncoupled = acked * mss / own.cwnd;
        let increase = coupled.min(uncoupled);
        if increase.is_finite() && increase > 0.0 {
            self.pending += increase;
            let whole = self.pending.floor();
            self.pending -= whole;
            self.reno.grow_window(whole as u64);
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent<'_>, _coupling: Coupling<'_>) {
        // RFC 6356 §3: on loss, cwnd_i is halved as in TCP.
        if self.reno.handle_loss(loss) {
            self.pending = 0.0;
        }
    }

    fn on_mtu_update(&mut self, max_datagram_size: u64) {
        self.reno.on_mtu_update(max_datagram_size);
    }

    fn window(&self) -> u64 {
        self.reno.window()
    }

    fn coupling_state(&self) -> CouplingState {
        self.reno.coupling_state()
    }

    fn name(&self) -> &'static str {
        "lia"
    }

    fn stats(&self) -> CcStats {
        self.reno.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_sim::{self as sim, Harness};

    const MSS: u64 = 1200;

    fn path(cwnd: f64, rtt_ms: f64) -> PathWindow {
        PathWindow {
            cwnd,
            rtt: rtt_ms / 1000.0,
        }
    }

    #[test]
    fn alpha_matches_rfc_6356_formula() {
        assert_eq!(alpha(&[path(50_000.0, 40.0)]), 1.0);
        // Two equal paths: alpha = 2w · (w/r²) / (2w/r)² = 1/2.
        assert!((alpha(&[path(50_000.0, 40.0), path(50_000.0, 40.0)]) - 0.5).abs() < 1e-12);
        // Unequal paths, by hand: total 30, max(10/0.01, 20/0.04) = 1000,
        // sum = 10/0.1 + 20/0.2 = 200 → 30 · 1000 / 40000 = 0.75.
        let a = alpha(&[path(10.0, 100.0), path(20.0, 200.0)]);
        assert!((a - 0.75).abs() < 1e-12, "{a}");
        assert_eq!(alpha(&[]), 1.0);
        assert_eq!(alpha(&[path(0.0, 0.0)]), 1.0);
    }

    /// Congestion avoidance on one path with `siblings` as the rest of the connection.
    fn grow_one_window(siblings: &[CouplingState]) -> (u64, f64) {
        let mut h = Harness::new(Lia::new(CcConfig::new(MSS)));
        h.lose(10, 5, false); // leave slow start: cwnd = ssthresh = 6000
        let mut states = vec![CouplingState {
            active: true,
            ..CouplingState::default()
        }];
        states.extend_from_slice(siblings);
        let before = h.cc.window();
        for now in 200..200 + before / MSS * 10 {
            states[0] = h.cc.coupling_state();
            let event = AckEvent {
                now: sim::ms(now),
                bytes_acked: MSS,
                largest_acked_sent_time: sim::ms(now - 100),
                bytes_in_flight: 0,
                app_limited: false,
                rtt: &h.rtt,
                rtt_sampled: true,
                rate_sample: None,
            };
            h.cc.on_ack(
                &event,
                Coupling {
                    paths: &states,
                    own: 0,
                },
            );
        }
        (h.cc.window() - before, h.cc.alpha())
    }

    #[test]
    fn single_path_is_reno() {
        // 50 datagrams acknowledged from a 5-datagram window: Reno's MSS·MSS/cwnd per ACK adds
        // about six datagrams.
        let (growth, alpha) = grow_one_window(&[]);
        assert!((alpha - 1.0).abs() < 1e-9, "{alpha}");
        assert!((5 * MSS..=7 * MSS).contains(&growth), "{growth}");
    }

    #[test]
    fn coupled_paths_grow_more_slowly() {
        let sibling = |cwnd, active| CouplingState {
            cwnd,
            srtt: Duration::from_millis(100),
            inter_loss_bytes: 0,
            active,
        };
        let (alone, _) = grow_one_window(&[]);
        // A sibling with the same initial window and RTT: alpha ≈ 1/2 and an increase of about
        // 1/4 of Reno's at first (less than half of it overall, as this path outgrows the sibling).
        let (coupled, alpha) = grow_one_window(&[sibling(6_000, true)]);
        assert!((0.5..0.8).contains(&alpha), "{alpha}");
        assert!(
            coupled * 2 < alone && coupled * 5 > alone,
            "{coupled} vs {alone}"
        );
        // An inactive sibling is ignored.
        let (ignored, alpha) = grow_one_window(&[sibling(6_000, false)]);
        assert_eq!(ignored, alone);
        assert!((alpha - 1.0).abs() < 1e-9);
        // A much larger sibling: the min() caps nothing, the increase shrinks further.
        let (small, _) = grow_one_window(&[sibling(600_000, true)]);
        assert!(small < coupled, "{small} vs {coupled}");
    }

    #[test]
    fn loss_halves_and_app_limited_does_not_grow() {
        let mut h = Harness::new(Lia::new(CcConfig::new(MSS)));
        h.ack(100, 0, 28_000);
        assert_eq!(h.cc.window(), 40_000);
        h.lose(200, 150, false);
        assert_eq!(h.cc.window(), 20_000);
        h.ack_with(400, 300, 40_000, true);
        assert_eq!(h.cc.window(), 20_000);
        h.lose(500, 450, true);
        assert_eq!(h.cc.window(), 2 * MSS);
        assert_eq!(h.cc.name(), "lia");
    }

    #[test]
    fn closed_loop_shared_bottleneck() {
        let lia = || Lia::new(CcConfig::new(MSS));
        // Drop-tail bottleneck shared with a NewReno flow: the link stays full.
        let link = sim::Link::mbps(10, 50);
        let out =
            sim::two_subflows_and_reno(&mut lia(), &mut lia(), &link, Duration::from_secs(60));
        let total: f64 = out.iter().map(|o| o.utilisation).sum();
        assert!(total > 0.85, "{out:?}");
        // RFC 6356 §2 goal 2, do no more harm than one TCP flow on a shared bottleneck, measured
        // where the fluid model behind it holds: independent random losses (0.5 %) and spare
        // capacity. Two uncoupled NewReno flows get about twice the third flow's throughput here.
        let mut link = sim::Link::mbps(50, 50);
        link.random_loss = 0.005;
        let out =
            sim::two_subflows_and_reno(&mut lia(), &mut lia(), &link, Duration::from_secs(120));
        let ratio = (out[0].throughput + out[1].throughput) / out[2].throughput;
        assert!((0.7..1.4).contains(&ratio), "LIA/Reno = {ratio}: {out:?}");
    }

    #[test]
    fn closed_loop_two_disjoint_paths_are_used() {
        let links = [sim::Link::mbps(10, 50), sim::Link::mbps(5, 80)];
        let (mut a, mut b) = (Lia::new(CcConfig::new(MSS)), Lia::new(CcConfig::new(MSS)));
        let out = sim::two_disjoint_subflows(&mut a, &mut b, &links, Duration::from_secs(60));
        assert!(out.iter().all(|o| o.utilisation > 0.85), "{out:?}");
    }

    #[test]
    fn phase_two_algorithms_are_registered() {
        use crate::cc::CcAlgorithm;
        for name in ["bbr", "lia", "olia", "BBR"] {
            let algorithm: CcAlgorithm = name.parse().expect("registered");
            let cc = algorithm.build(CcConfig::new(MSS));
            assert_eq!(cc.name(), name.to_ascii_lowercase());
            assert_eq!(cc.window(), 12_000);
        }
    }
}
