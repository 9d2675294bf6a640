//! Packet-number length (RFC 9000 §17.1, Appendix A.2–A.3) when one space spans paths of
//! different delays.
//!
//! The receiver decodes a truncated packet number against the largest number it has received
//! in the space, within half the window (Appendix A.3). Appendix A.2's length covers only the
//! distance from the largest acknowledged packet, which assumes packets arrive roughly in
//! order. In one space shared by several paths, a packet on a slow path arrives after
//! every packet sent on faster paths during its transit: the receiver's largest has run ahead
//! of it by that many packets (issue 13: 5 ms + 100 ms one way, ~430 packets, beyond the 128
//! a one-byte number tolerates). RFC 9000 §17.1: "An endpoint SHOULD use a large enough packet
//! number encoding to allow the packet number to be recovered even if the packet arrives after
//! packets that are sent afterwards."
//!
//! Approach: for a packet on path P of a shared space, the packets that can overtake it are those
//! numbered during its one-way transit, which is shorter than P's round trip. With the window
//! `W = max(srtt, latest_rtt) + 4 * rttvar` of P (RFC 9002 §6.2.1's PTO base: an upper
//! estimate of the round trip), two estimates of what the space numbers during `W`:
//! - the past: packets the space numbered during the last `W` (ACK-only packets included,
//!   which no congestion window limits; [`crate::space::SendHistory`]);
//! - the allowance: for every path Q of the space, a congestion window now plus one more per
//!   minimum round trip of Q during `W` (`cwnd_Q * (1 + W / min_rtt_Q)`), which covers a burst
//!   after an idle period, when the past says nothing.
//!
//! The larger, doubled (the rate may grow while the packet is in transit: slow start doubles
//! per round trip), is the number of overtaking packets to cover;
//! [`mpquic_wire::header::pn_encode_len_overtaken`] then takes the shortest length that decodes
//! for any receiver largest between the largest acknowledged and that many packets beyond.
//!
//! Never one byte in a shared space: one byte tolerates only 126 overtaking packets, and what
//! the estimates cannot bound is how fast the *peer* makes us number packets: ACK-only packets
//! follow the peer's sending rate, which can jump by more than the margin within one transit
//! (end of recovery, new flow-control credit, restart after idle). The property test in
//! `crates/lab/tests/pn_decoding.rs` found one: a receiver that numbered 50 packets in the
//! 367 ms before sending a one-byte packet on a 183 ms path numbered 277 in the 183 ms after.
//! Two bytes tolerate 32766 overtaking packets; the estimate decides when more is needed.
//!
//! A space that several paths *may* share (SPNS's one application space) uses two bytes or more
//! even while one path uses it: packets sent before a second path opens (during the handshake,
//! or while the second path is validated) or after a path is abandoned are still in transit
//! when the other path's packets overtake them. A randomized campaign found it: with one-byte
//! numbers sent on a 1 Mbit/s path with a 20-packet queue before a 50 Mbit/s path was
//! validated, packets 10-12 arrived after packet 139-239 and decoded as 266-268 (they failed
//! authentication and were lost); `spns_packets_sent_before_a_second_path_opens_decode`.
//!
//! A space that only one path can ever use (single path, a path's own space in MPNS, Initial,
//! Handshake) keeps A.2's length: packets there overtake each other only through reordering
//! inside the network, and the distance from the largest acknowledged, about the packets in
//! flight, is what one round trip numbers. Reordering inside the network is measured: once a
//! spurious loss showed that N packets of a path overtook one of its packets
//! (`recovery::reordering`), that path's packet numbers cover twice N overtaking packets in
//! every space. A randomized campaign found the need: on a 100 Mbit/s path with 20 ms of
//! reordering jitter (about 185 packets) and a space of its own, one-byte numbers (126
//! overtaking packets at most) decoded wrongly at the receiver and failed authentication, 7
//! times in one download.

use mpquic_wire::header::{pn_encode_len, pn_encode_len_overtaken};

use super::Connection;
use crate::path::{Path, PathId};
use crate::recovery::rtt::GRANULARITY;
use crate::space::SpaceId;
use crate::time::{Duration, Timestamp};

/// Safety factor on the estimated overtaking packets (rate growth during the transit).
const OVERTAKING_MARGIN: u64 = 2;

/// Shortest packet number in a space shared by several paths (see the module documentation).
const SHARED_MIN_LEN: usize = 2;

/// Upper estimate of a path's round trip: RFC 9002 §6.2.1's PTO base with max(srtt, latest).
fn transit_bound(p: &Path) -> Duration {
    p.rtt.smoothed().max(p.rtt.latest()) + (p.rtt.var() * 4).max(GRANULARITY)
}

/// Packets path `p` may send during `window`: its congestion window now, plus one per minimum
/// round trip (RFC 9002 §7: at most a window in flight per round trip).
fn allowance(p: &Path, window: Duration, max_datagram_size: u64) -> u64 {
    let cwnd = p.cc.window().div_ceil(max_datagram_size.max(1));
    let rtt = p.rtt.min().max(GRANULARITY).as_nanos();
    // 64-bit division when both fit (always, but for durations of centuries): this runs for
    // every path on every packet of a shared space.
    let rounds = match (u64::try_from(window.as_nanos()), u64::try_from(rtt)) {
        (Ok(w), Ok(r)) => u128::from(w / r),
        _ => window.as_nanos() / rtt,
    };
    let total = u128::from(cwnd) * (1 + rounds);
    u64::try_from(total).unwrap_or(u64::MAX)
}

impl Connection {
    /// Bytes (1..=4) for packet number `pn` of `space` sent on `path` at `now` (see the module
    /// documentation). Also notes the numbering in the space's send history.
    pub(crate) fn packet_number_len(
        &mut self,
        now: Timestamp,
        space: SpaceId,
        path: PathId,
        pn: u64,
    ) -> usize {
        let largest_acked = self.send_space(space).largest_acked();
        // Reordering the path showed (0 until a spurious loss measured some).
        let reordered = self
            .paths
            .get(&path)
            .map_or(0, |p| p.loss_thresholds.packet.reordering_seen())
            .saturating_mul(OVERTAKING_MARGIN);
        // A space of one path: A.2's length (covering the reordering seen), and no numbering
        // history to keep (only a shared space reads it). This skips the per-path RTT
        // arithmetic on every packet sent.
        if !matches!(space, SpaceId::Data(_)) || !self.layout.shares_spaces() {
            return if reordered == 0 {
                pn_encode_len(pn, largest_acked)
            } else {
                pn_encode_len_overtaken(pn, largest_acked, reordered)
            };
        }
        let mds = self.max_udp_payload(path) as u64;
        let window = self
            .paths
            .get(&path)
            .map_or(Duration::ZERO, |p| transit_bound(p));
        // One pass over the space's paths (this runs for every packet sent); the allowance is
        // used only when the space has at least two paths.
        let (mut sharing, mut horizon, mut allowed) = (0usize, window, 0u64);
        for p in self.paths.values() {
            if self.layout.space_for(p.id) == space {
                sharing += 1;
                horizon = horizon.max(transit_bound(p));
                allowed = allowed.saturating_add(allowance(p, window, mds));
            }
        }
        let send_space = self.send_space(space);
        send_space.note_numbering(now, horizon);
        if sharing < 2 {
            // Alone in a space that other paths may join: a path opened (or validated) while
            // this packet is in transit can overtake it by more than one byte decodes.
            return pn_encode_len_overtaken(pn, largest_acked, reordered).max(SHARED_MIN_LEN);
        }
        let past = send_space.numbered_since(now, window);
        let overtaking = past
            .max(allowed)
            .saturating_mul(OVERTAKING_MARGIN)
            .max(reordered);
        pn_encode_len_overtaken(pn, largest_acked, overtaking).max(SHARED_MIN_LEN)
    }
}
