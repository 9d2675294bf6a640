//! The connection's side of path MTU discovery (RFC 9000 §14.3, RFC 8899; the per-path state
//! machine is [`crate::mtud`]): the datagram size limits of a path, sending probes, feeding
//! acknowledgements and losses to each path's search, and applying a new size to the path's
//! congestion controller and pacer (RFC 9002 §7.2: windows are counted in datagrams of the
//! path's size).

use super::send::PacketPlan;
use super::{Connection, Transmit};
use crate::crypto::Epoch;
use crate::mtud::BASE_PLPMTU;
use crate::path::PathId;
use crate::recovery::SentPacket;
use crate::time::Timestamp;

impl Connection {
    /// The peer's max_udp_payload_size (RFC 9000 §18.2); unlimited before its parameters.
    pub(crate) fn peer_udp_limit(&self) -> u64 {
        self.peer_params
            .as_ref()
            .map_or(u64::MAX, |p| p.max_udp_payload_size)
    }

    /// Our maximum UDP payload on a path: its current path MTU (its own, found by discovery, or
    /// the configured fixed size) within the peer's max_udp_payload_size (RFC 9000 §18.2).
    pub(crate) fn max_udp_payload(&self, path: PathId) -> usize {
        let own = self.paths.get(&path).map_or_else(
            || crate::mtud::Mtud::for_config(&self.config, self.socket_mtu).current(),
            |p| p.mtu.current(),
        );
        let peer = usize::try_from(self.peer_udp_limit()).unwrap_or(usize::MAX);
        usize::from(own).min(peer)
    }

    /// Maximum UDP payload on a path: our setting, the peer's limit, the amplification budget.
    pub(crate) fn send_budget(&self, path: PathId) -> Option<usize> {
        let max = self.max_udp_payload(path);
        let budget = self
            .paths
            .get(&path)?
            .amplification_budget()
            .map_or(max, |b| (b as usize).min(max));
        (budget >= 64).then_some(budget)
    }

    /// The largest datagram size among the usable paths (the scheduler's backlog is counted in
    /// packets of it; with discovery off every path has the configured size).
    pub(crate) fn largest_usable_mtu(&self) -> u64 {
        let peer = self.peer_udp_limit();
        self.paths
            .values()
            .filter(|p| p.is_usable())
            .map(|p| u64::from(p.mtu.current()).min(peer))
            .max()
            .unwrap_or_else(|| self.max_udp_payload(PathId::ZERO) as u64)
    }

    /// The size of a PTO probe on `path` whose budget is `max`: the base size once a PTO has
    /// fired on a path using a discovered larger size. If the path's MTU shrank, larger probes
    /// would be lost too; a base-size probe gets through and its acknowledgement declares the
    /// large packets lost, which detects the black hole (RFC 8899 §4.3).
    pub(crate) fn pto_probe_size(&self, path: PathId, max: usize) -> usize {
        match self.paths.get(&path) {
            Some(p) if p.mtu.is_enabled() && p.pto_count > 0 => max.min(usize::from(BASE_PLPMTU)),
            _ => max,
        }
    }

    /// A path MTU probe (RFC 9000 §14.4: PING + PADDING of the candidate size) on the first path
    /// whose search wants one and whose congestion window has room for it. Probes go only on
    /// validated paths (the base size is confirmed, RFC 8899 §5.2) once the handshake is
    /// confirmed (the peer's max_udp_payload_size is known).
    pub(super) fn send_mtu_probe(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        if !self.handshake.is_confirmed() || !self.paths.values().any(|p| p.mtu.probe_due(now)) {
            return None;
        }
        let peer = self.peer_udp_limit();
        let mut next = PathId::ZERO;
        while let Some((&id, _)) = self.paths.range(next..).next() {
            next = id.next()?;
            if !self.can_address(id) {
                continue;
            }
            let p = self.paths.get_mut(&id)?;
            if !p.is_usable() || !p.mtu.probe_due(now) {
                continue;
            }
            p.mtu.set_peer_limit(peer);
            let Some(size) = p.mtu.poll_probe(now) else {
                continue;
            };
            // Probes are congestion controlled like any packet (RFC 9000 §14.4); only their
            // loss is no congestion signal.
            if !p.cwnd_allows(u64::from(size)) {
                continue;
            }
            let plan = PacketPlan {
                data: false,
                probe: true,
                pad_to: Some(usize::from(size)),
                mtu_probe: true,
                lone_probe: None,
            };
            if self
                .build_packet(now, id, Epoch::Data, buf, usize::from(size), plan)
                .is_some()
            {
                if let Some(p) = self.paths.get_mut(&id) {
                    p.mtu.on_probe_sent(size);
                }
                return self.finish_datagram(id, buf);
            }
        }
        None
    }

    /// Acknowledged packets of `path_id` for its MTU search: a probe confirms its size; any
    /// larger-than-base packet clears black-hole evidence sent before it.
    pub(crate) fn mtu_on_acked(&mut self, now: Timestamp, path_id: PathId, packets: &[SentPacket]) {
        let Some(path) = self.paths.get_mut(&path_id) else {
            return;
        };
        if !path.mtu.is_enabled() {
            return;
        }
        for p in packets {
            if p.frames.mtu_probe {
                path.mtu.on_probe_acked(now, size16(p.size), p.time_sent);
            } else if p.in_flight && !p.old_route {
                path.mtu.on_packet_acked(p.size, p.time_sent);
            }
        }
        self.apply_mtu_update(now, path_id);
    }

    /// Lost packets of `path_id` for its MTU search: probes (not congestion, RFC 9000 §14.4),
    /// and large packets as black-hole evidence (RFC 8899 §4.3).
    pub(crate) fn mtu_on_lost(&mut self, now: Timestamp, path_id: PathId, packets: &[SentPacket]) {
        let Some(path) = self.paths.get_mut(&path_id) else {
            return;
        };
        if !path.mtu.is_enabled() {
            return;
        }
        for p in packets {
            if p.frames.mtu_probe {
                path.mtu.on_probe_lost(now, size16(p.size));
            } else if p.in_flight
                && !p.old_route
                && path.mtu.on_packet_lost(now, p.size, p.time_sent)
            {
                tracing::debug!(path = %path_id, "black hole: path MTU back to the base size");
            }
        }
        self.apply_mtu_update(now, path_id);
    }

    /// A changed path MTU reaches the path's controller and pacer, and qlog (§"mtu_updated").
    fn apply_mtu_update(&mut self, now: Timestamp, path_id: PathId) {
        let Some(path) = self.paths.get_mut(&path_id) else {
            return;
        };
        let Some((old, new)) = path.mtu.take_update() else {
            return;
        };
        path.cc.on_mtu_update(u64::from(new));
        path.pacer.set_max_datagram_size(u64::from(new));
        let done = path.mtu.search_done();
        self.qlog_mtu_updated(now, path_id, (old, new), done);
    }
}

fn size16(size: u64) -> u16 {
    u16::try_from(size).unwrap_or(u16::MAX)
}
