//! OLIA, the Opportunistic Linked-Increases Algorithm (R. Khalili, N. Gast, M. Popovic,
//! J.-Y. Le Boudec, "MPTCP is not Pareto-optimal: performance issues and a possible solution",
//! ACM CoNEXT 2012, §5; also draft-khalili-mptcp-congestion-control-05 §3).
//!
//! Windows in bytes. For each ACK of `bytes_acked` on path r in congestion avoidance:
//!
//! ```text
//! w_r += ( (w_r / rtt_r²) / (Σ_p w_p / rtt_p)²  +  α_r / w_r ) · bytes_acked · MSS
//! ```
//!
//! where, with R the set of coupled paths, M ⊆ R the paths with the largest window and
//! B ⊆ R the "best" paths, those maximising l_p / rtt_p² (the Reno throughput model ∝ √l / rtt):
//!
//! * α_r = 1 / (|R| · |B \ M|) if r ∈ B \ M ≠ ∅,
//! * α_r = −1 / (|R| · |M|) if r ∈ M and B \ M ≠ ∅,
//! * α_r = 0 otherwise.
//!
//! l_r is the larger of the bytes acknowledged between the last two losses on path r and the bytes
//! acknowledged since the last loss; every path exports its own through
//! [`CouplingState::inter_loss_bytes`]. A loss (one per RFC 9002 recovery period) halves w_r;
//! slow start, persistent congestion and the application-limited rule are [`NewReno`]'s, which this
//! controller wraps. Because α_r can be negative, an ACK may shrink the window, never below the
//! RFC 9002 minimum.

use super::lia::{siblings, MIN_COUPLING_RTT};
use super::new_reno::NewReno;
use super::{
    AckEvent, CcConfig, CcStats, CongestionController, Coupling, CouplingState, LossEvent,
    MINIMUM_WINDOW_PACKETS,
};
use crate::time::Timestamp;

/// One path as OLIA sees it: window (bytes), RTT (seconds) and l (bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OliaPath {
    /// Congestion window in bytes.
    pub cwnd: f64,
    /// Smoothed round-trip time in seconds.
    pub rtt: f64,
    /// OLIA's l_r in bytes: acknowledged between the last two losses (or since the last loss, if larger).
    pub inter_loss_bytes: f64,
}

/// Khalili et al. §5: α of `paths[own]` among `paths`.
pub fn alpha(paths: &[OliaPath], own: usize) -> f64 {
    let n = paths.len() as f64;
    let max_cwnd = paths.iter().map(|p| p.cwnd).fold(0.0, f64::max);
    let quality = |p: &OliaPath| p.inter_loss_bytes / (p.rtt * p.rtt);
    let best_quality = paths.iter().map(quality).fold(0.0, f64::max);
    let in_m = |p: &OliaPath| p.cwnd >= max_cwnd;
    let in_b = |p: &OliaPath| quality(p) >= best_quality;
    let m = paths.iter().filter(|p| in_m(p)).count() as f64;
    let b_minus_m = paths.iter().filter(|p| in_b(p) && !in_m(p)).count() as f64;
    let Some(path) = paths.get(own) else {
        return 0.0;
    };
    if b_minus_m == 0.0 {
        0.0
    } else if in_b(path) && !in_m(path) {
        1.0 / (n * b_minus_m)
    } else if in_m(path) {
        -1.0 / (n * m)
    } else {
        0.0
    }
}

/// Khalili et al. §5: the window increase per byte acknowledged, times MSS, for `paths[own]`.
pub fn increase_per_byte(paths: &[OliaPath], own: usize, mss: f64) -> f64 {
    let Some(path) = paths.get(own) else {
        return 0.0;
    };
    let sum: f64 = paths.iter().map(|p| p.cwnd / p.rtt).sum();
    let coupled = (path.cwnd / (path.rtt * path.rtt)) / (sum * sum);
    let increase = (coupled + alpha(paths, own) / path.cwnd) * mss;
    if increase.is_finite() {
        increase
    } else {
        0.0
    }
}

/// OLIA for one path of a multipath connection. Build with [`Olia::new`].
#[derive(Debug, Clone)]
pub struct Olia {
    reno: NewReno,
    /// l1: bytes acknowledged between the last two losses.
    between_losses: u64,
    /// l2: bytes acknowledged since the last loss.
    since_loss: u64,
    /// Signed fractional bytes of window change not yet applied.
    pending: f64,
    last_alpha: f64,
}

impl Olia {
    /// An OLIA controller starting in slow start (RFC 9002 §7.2 initial window).
    pub fn new(config: CcConfig) -> Self {
        Self {
            reno: NewReno::new(config),
            between_losses: 0,
            since_loss: 0,
            pending: 0.0,
            last_alpha: 0.0,
        }
    }

    /// l_r = max(l1, l2) in bytes.
    pub fn inter_loss_bytes(&self) -> u64 {
        self.between_losses.max(self.since_loss)
    }

    /// α of the latest congestion avoidance increase.
    pub fn alpha(&self) -> f64 {
        self.last_alpha
    }

    /// The coupled paths, own first, with the inter-loss distances of the coupling snapshot.
    fn paths(&self, coupling: &Coupling<'_>, rtt: f64) -> Vec<OliaPath> {
        let own = OliaPath {
            cwnd: self.reno.window() as f64,
            rtt,
            inter_loss_bytes: self.inter_loss_bytes() as f64,
        };
        let others = siblings(coupling).map(|s| OliaPath {
            cwnd: s.cwnd as f64,
            rtt: s.srtt.as_secs_f64(),
            inter_loss_bytes: s.inter_loss_bytes as f64,
        });
        std::iter::once(own).chain(others).collect()
    }
}

impl CongestionController for Olia {
    fn on_packet_sent(&mut self, now: Timestamp, bytes: u64, bytes_in_flight: u64) {
        self.reno.on_packet_sent(now, bytes, bytes_in_flight);
    }

    fn on_ack(&mut self, ack: &AckEvent<'_>, coupling: Coupling<'_>) {
        self.since_loss = self.since_loss.saturating_add(ack.bytes_acked);
        let acked = self.reno.ack_before_avoidance(ack);
        if acked == 0 {
            return;
        }
        let rtt = ack.rtt.smoothed().max(MIN_COUPLING_RTT).as_secs_f64();
        let paths = self.paths(&coupling, rtt);
        self.last_alpha = alpha(&paths, 0);
        self.pending += increase_per_byte(&paths, 0, self.reno.mss() as f64) * acked as f64;
        let whole = self.pending.trunc();
        self.pending -= whole;
        if whole > 0.0 {
            self.reno.grow_window(whole as u64);
        } else if whole < 0.0 {
            let floor = MINIMUM_WINDOW_PACKETS * self.reno.mss();
            self.reno.shrink_window((-whole) as u64, floor);
        }
    }

    fn on_congestion_event(&mut self, loss: &LossEvent<'_>, _coupling: Coupling<'_>) {
        if self.reno.handle_loss(loss) {
            // A new loss: l1 becomes the distance between the last two losses.
            self.between_losses = self.since_loss;
            self.since_loss = 0;
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
        CouplingState {
            inter_loss_bytes: self.inter_loss_bytes(),
            ..self.reno.coupling_state()
        }
    }

    fn name(&self) -> &'static str {
        "olia"
    }

    fn stats(&self) -> CcStats {
        self.reno.stats()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::test_sim::{self as sim, Harness};
    use crate::time::Duration;

    const MSS: u64 = 1200;

    fn path(cwnd: f64, rtt_ms: f64, l: f64) -> OliaPath {
        OliaPath {
            cwnd,
            rtt: rtt_ms / 1000.0,
            inter_loss_bytes: l,
        }
    }

    #[test]
    fn alpha_favours_best_paths_without_the_largest_window() {
        // Path 0: small window but the best l/rtt²; path 1: the largest window.
        let paths = [
            path(10_000.0, 100.0, 100_000.0),
            path(20_000.0, 100.0, 50_000.0),
        ];
        assert_eq!(alpha(&paths, 0), 0.5);
        assert_eq!(alpha(&paths, 1), -0.5);
        // The best path also has the largest window: B \ M is empty, every α is 0.
        let paths = [
            path(30_000.0, 100.0, 100_000.0),
            path(20_000.0, 100.0, 50_000.0),
        ];
        assert_eq!((alpha(&paths, 0), alpha(&paths, 1)), (0.0, 0.0));
        // Three paths, two of them best but not maximal: 1/(3·2) each, −1/(3·1) for the largest.
        let paths = [
            path(10_000.0, 100.0, 100_000.0),
            path(10_000.0, 100.0, 100_000.0),
            path(40_000.0, 100.0, 10_000.0),
        ];
        assert!((alpha(&paths, 0) - 1.0 / 6.0).abs() < 1e-12);
        assert!((alpha(&paths, 2) + 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(alpha(&paths[..1], 0), 0.0);
        assert_eq!(alpha(&[], 0), 0.0);
    }

    #[test]
    fn increase_reduces_to_reno_on_one_path() {
        let one = [path(12_000.0, 50.0, 0.0)];
        let inc = increase_per_byte(&one, 0, MSS as f64);
        assert!((inc - MSS as f64 / 12_000.0).abs() < 1e-12);
        // Two equal paths: (w/r²)/(2w/r)² = 1/(4w), a quarter of Reno.
        let two = [path(12_000.0, 50.0, 0.0), path(12_000.0, 50.0, 0.0)];
        let inc = increase_per_byte(&two, 0, MSS as f64);
        assert!((inc - MSS as f64 / 48_000.0).abs() < 1e-12);
        assert_eq!(
            increase_per_byte(&[path(0.0, 0.0, 0.0)], 0, MSS as f64),
            0.0
        );
    }

    #[test]
    fn inter_loss_distance_is_exported() {
        let mut h = Harness::new(Olia::new(CcConfig::new(MSS)));
        h.ack(100, 0, 30_000);
        assert_eq!(h.cc.coupling_state().inter_loss_bytes, 30_000);
        h.lose(150, 120, false);
        assert_eq!(h.cc.coupling_state().inter_loss_bytes, 30_000);
        h.ack(300, 200, 10_000);
        assert_eq!(h.cc.inter_loss_bytes(), 30_000, "l1 = 30 000 > l2 = 10 000");
        h.lose(400, 350, false);
        h.ack(500, 450, 1_000);
        assert_eq!(h.cc.inter_loss_bytes(), 10_000);
        // A loss inside the same recovery period is not a new loss.
        h.lose(510, 400, false);
        assert_eq!(h.cc.inter_loss_bytes(), 10_000);
        assert_eq!(h.cc.name(), "olia");
    }

    /// Congestion avoidance acknowledgements on path 0 with the given sibling.
    fn ack_in_avoidance(sibling: CouplingState, acks: u64) -> Harness<Olia> {
        let mut h = Harness::new(Olia::new(CcConfig::new(MSS)));
        h.ack(100, 0, 100 * MSS); // 110 datagrams, l2 = 120 000
        h.lose(150, 120, false); // 55 datagrams, l1 = 120 000
        for i in 0..acks {
            let states = [h.cc.coupling_state(), sibling];
            let event = AckEvent {
                now: sim::ms(300 + i),
                bytes_acked: MSS,
                largest_acked_sent_time: sim::ms(200 + i),
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
        h
    }

    #[test]
    fn window_moves_towards_the_better_path() {
        let rtt = Duration::from_millis(100);
        // The sibling has a slightly smaller window and a better loss record: this path is in M
        // only, α = −1/2 outweighs the coupled increase, and the window shrinks (never below the
        // minimum).
        let better = CouplingState {
            cwnd: 60_000,
            srtt: rtt,
            inter_loss_bytes: 10_000_000,
            active: true,
        };
        let h = ack_in_avoidance(better, 2_000);
        assert!(h.cc.alpha() < 0.0, "{}", h.cc.alpha());
        assert!(h.cc.window() < 66_000, "{}", h.cc.window());
        assert!(h.cc.window() >= 2 * MSS);
        // The sibling is worse and smaller: α = 0 for both, a coupled (sub-Reno) increase.
        let worse = CouplingState {
            cwnd: 12_000,
            srtt: rtt,
            inter_loss_bytes: 1_000,
            active: true,
        };
        let h = ack_in_avoidance(worse, 550);
        assert_eq!(h.cc.alpha(), 0.0);
        assert!(
            h.cc.window() > 66_000 && h.cc.window() < 66_000 + 10 * MSS,
            "{}",
            h.cc.window()
        );
    }

    #[test]
    fn closed_loop_two_paths() {
        let olia = || Olia::new(CcConfig::new(MSS));
        let links = [sim::Link::mbps(10, 50), sim::Link::mbps(5, 80)];
        let out =
            sim::two_disjoint_subflows(&mut olia(), &mut olia(), &links, Duration::from_secs(60));
        assert!(out.iter().all(|o| o.utilisation > 0.85), "{out:?}");
        let link = sim::Link::mbps(10, 50);
        let out =
            sim::two_subflows_and_reno(&mut olia(), &mut olia(), &link, Duration::from_secs(60));
        let total: f64 = out.iter().map(|o| o.utilisation).sum();
        assert!(total > 0.85, "{out:?}");
        // Fairness to a NewReno flow under independent random losses (see the LIA test).
        let mut link = sim::Link::mbps(50, 50);
        link.random_loss = 0.005;
        let out =
            sim::two_subflows_and_reno(&mut olia(), &mut olia(), &link, Duration::from_secs(120));
        let ratio = (out[0].throughput + out[1].throughput) / out[2].throughput;
        assert!((0.7..1.4).contains(&ratio), "OLIA/Reno = {ratio}: {out:?}");
    }
}
