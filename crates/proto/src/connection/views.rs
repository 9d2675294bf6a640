//! What the scheduler sees of each path (`PathView`): window and pacing room for a packet of the
//! path's own size (its path MTU, RFC 9000 §14.3), RTTs and rates; and application-limited
//! marking (RFC 9002 §7.8).

use mpquic_wire::stream_id::Side;

use super::{Connection, State};
use crate::path::PathId;
use crate::scheduler::PathView;
use crate::time::Timestamp;

impl Connection {
    /// The application has nothing to send: paths whose window has room are application-limited
    /// (RFC 9002 §7.8; delivery-rate estimation marks the samples).
    pub(super) fn mark_app_limited(&mut self) {
        for path in self.paths.values_mut() {
            let mtu = u64::from(path.mtu.current());
            let in_flight = path.bytes_in_flight();
            if in_flight + mtu <= path.cc.window() {
                path.delivery.on_app_limited(in_flight);
            }
        }
    }

    /// What the scheduler sees of each path; also records the earliest pacing release.
    pub(crate) fn path_views(&mut self, now: Timestamp) -> Vec<PathView> {
        let peer = self.peer_udp_limit();
        let pacing = self.config.pacing && !self.zero_rtt_half_rtt_burst();
        let mut wake: Option<Timestamp> = None;
        // Reuses the buffer the previous caller handed back (one per packet otherwise).
        let mut views = std::mem::take(&mut self.views_buf);
        views.clear();
        views.extend(
            self.paths
                .values_mut()
                .map(|p| path_view(p, now, peer, pacing, &mut wake)),
        );
        if self.side == Side::Server && matches!(self.state, State::Handshaking) {
            // 0.5-RTT (RFC 9001 §4.1.1): before the client's address is validated the
            // handshake path carries 1-RTT frames within the anti-amplification budget (RFC
            // 9000 §8.1, enforced by `send_budget`), e.g. the CIDs a second path needs.
            for v in views.iter_mut().filter(|v| v.id == PathId::ZERO) {
                v.usable = self
                    .paths
                    .get(&PathId::ZERO)
                    .is_some_and(|p| p.is_active() && !p.is_failed());
            }
        }
        self.pacing_wakeup = wake;
        views
    }

    /// The pacing wake-up of [`Self::path_views`] alone, for a poll that needs no view (no
    /// packet to re-inject): the same pacer calls in the same order (each refills its path's
    /// token bucket, so they cannot be skipped), without the RTTs, rates and the list.
    pub(super) fn refresh_pacing_wakeup(&mut self, now: Timestamp) {
        let peer = self.peer_udp_limit();
        let pacing = self.config.pacing && !self.zero_rtt_half_rtt_burst();
        let mut wake: Option<Timestamp> = None;
        if pacing {
            for p in self.paths.values_mut() {
                let mtu = u64::from(p.mtu.current()).min(peer);
                let cwnd = p.cc.window();
                if window_room(p, mtu, cwnd, p.bytes_in_flight()) {
                    let rate = p.cc.pacing_rate(p.rtt.smoothed());
                    held_by_pacer(p, now, mtu, rate, cwnd, &mut wake);
                }
            }
        }
        self.pacing_wakeup = wake;
    }

    /// Server that accepted 0-RTT, still handshaking, before any RTT sample: its 0.5-RTT
    /// answer (RFC 9001 §4.1.1) is not paced, like the client's 0-RTT data (`zero_rtt.rs`):
    /// before a sample the pacer spreads a window over the initial RTT (333 ms), which would
    /// hold most of the answer until the handshake completes. The congestion window and the
    /// anti-amplification limit still apply (RFC 9002 §7.7 allows bursts up to the initial
    /// window). Connections without 0-RTT are unaffected.
    fn zero_rtt_half_rtt_burst(&self) -> bool {
        self.side == Side::Server
            && matches!(self.state, State::Handshaking)
            && self.zero_rtt.accepted == Some(true)
            && self
                .paths
                .get(&PathId::ZERO)
                .is_some_and(|p| !p.rtt.has_sample())
    }

    /// Whether one path may carry new data now (the other paths are not looked at).
    pub(super) fn path_can_send_data(&mut self, now: Timestamp, id: PathId) -> bool {
        let peer = self.peer_udp_limit();
        let pacing = self.config.pacing;
        let mut wake = None;
        let Some(p) = self.paths.get_mut(&id) else {
            return false;
        };
        let view = path_view(p, now, peer, pacing, &mut wake);
        if let Some(t) = wake {
            self.pacing_wakeup = Some(self.pacing_wakeup.map_or(t, |w| w.min(t)));
        }
        view.can_send && view.usable
    }
}

/// What the scheduler sees of one path; a usable path held back only by pacing lowers `wake`
/// to its release time. `peer` is the peer's max_udp_payload_size (RFC 9000 §18.2).
fn path_view(
    p: &mut crate::path::Path,
    now: Timestamp,
    peer: u64,
    pacing: bool,
    wake: &mut Option<Timestamp>,
) -> PathView {
    // The path's own datagram size (path MTU discovery, RFC 9000 §14.3).
    let mtu = u64::from(p.mtu.current()).min(peer);
    // Asked once (the controller's state does not change below); `Path::cwnd_allows` inline.
    let cwnd = p.cc.window();
    let bytes_in_flight = p.bytes_in_flight();
    let mut can_send = window_room(p, mtu, cwnd, bytes_in_flight);
    // Computed once: a 128-bit division.
    let pacing_rate = p.cc.pacing_rate(p.rtt.smoothed());
    if can_send && pacing && held_by_pacer(p, now, mtu, pacing_rate, cwnd, wake) {
        can_send = false;
    }
    PathView {
        id: p.id,
        srtt: p.rtt.smoothed(),
        rttvar: p.rtt.var(),
        rtt_known: p.rtt.has_sample(),
        cwnd,
        bytes_in_flight,
        pacing_rate,
        delivery_rate: p.delivery_rate_estimate(now),
        can_send,
        mtu,
        backup: p.is_backup(),
        usable: p.is_usable(),
    }
}

/// Whether the congestion window (and, before validation, the anti-amplification budget) has
/// room for a packet of `mtu` bytes (`Path::cwnd_allows` inline, with the window read once).
fn window_room(p: &crate::path::Path, mtu: u64, cwnd: u64, bytes_in_flight: u64) -> bool {
    bytes_in_flight + mtu <= cwnd && p.amplification_budget().is_none_or(|b| b >= mtu)
}

/// Whether the pacer holds back a packet of `mtu` bytes now (asking refills its bucket); a
/// usable path held back lowers `wake` to its release time.
fn held_by_pacer(
    p: &mut crate::path::Path,
    now: Timestamp,
    mtu: u64,
    rate: u64,
    cwnd: u64,
    wake: &mut Option<Timestamp>,
) -> bool {
    let Some(t) = p.pacer.delay(now, mtu, rate, cwnd) else {
        return false;
    };
    if p.is_usable() {
        *wake = Some(wake.map_or(t, |w| w.min(t)));
    }
    true
}
