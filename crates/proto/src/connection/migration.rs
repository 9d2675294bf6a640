//! Connection migration started by the client (RFC 9000 §9): a path moves to another local
//! address, as when a device leaves Wi-Fi for cellular. With a peer that negotiated multipath
//! a new path is the better tool (RFC 10069 §3.1); against the many servers that did not,
//! migrating path 0 is the only way to change networks without a new connection.
//!
//! The move is "probe first": the path keeps its 4-tuple's new local address, sends a
//! PATH_CHALLENGE from it and carries no new data until the PATH_RESPONSE arrives (RFC 9000
//! §8.2, §9.1). If none does, the path goes back to the address it left, which still works.
//! A server follows its peer the same way (RFC 9000 §9.3): to the new address, validated, with
//! the old one kept in case the new one does not answer; only the highest-numbered non-probing
//! packet moves it, and a probe from elsewhere is answered where it came from.

use std::net::SocketAddr;

use mpquic_wire::cid::ConnectionId;
use mpquic_wire::stream_id::Side;
use rand_core::RngCore;

use super::api::PathError;
use super::send::{LoneProbe, PacketPlan, MIN_INITIAL_SIZE};
use super::{Connection, PathEvent, Transmit};
use crate::cc::{CcConfig, Pacer};
use crate::crypto::Epoch;
use crate::path::{MigratedFrom, PathId};
use crate::recovery::rtt::RttEstimator;
use crate::time::Timestamp;

impl Connection {
    /// Client: move path `id` (path 0 when multipath was not negotiated) to the local address
    /// `local`. From now on the path sends from `local` with a connection ID it has not used
    /// (RFC 9000 §9.5), to the same remote; its congestion controller, RTT estimate and MTU
    /// start over unless only the port changed (RFC 9000 §9.4). The path carries no new data
    /// until validated: [`PathEvent::Validated`] then, or [`PathEvent::Failed`] after the
    /// validation timeout, when the path is back on its old address.
    ///
    /// Refused on a server ([`PathError::ServerCannotMigrate`]), before the handshake is
    /// confirmed ([`PathError::NotEstablished`], RFC 9000 §9), when the peer sent
    /// disable_active_migration ([`PathError::MigrationDisabled`], §18.2), for a path that is
    /// not open, and when the peer has issued no spare connection ID for the path
    /// ([`PathError::NoConnectionId`], §9.5). Moving to the address in use does nothing.
    pub fn migrate_path(
        &mut self,
        now: Timestamp,
        id: PathId,
        local: SocketAddr,
    ) -> Result<(), PathError> {
        self.check_client_may_move()?;
        if self
            .peer_params
            .as_ref()
            .is_some_and(|p| p.disable_active_migration)
        {
            return Err(PathError::MigrationDisabled);
        }
        let remote = self.open_path_tuple(id)?.1;
        self.move_path(now, id, local, remote)
    }

    /// Client: move path 0 to the address the server advertised in its preferred_address
    /// transport parameter (RFC 9000 §9.6), the one of the family path 0 uses, and return it.
    /// The move works as [`Connection::migrate_path`]'s: a connection ID not used before (the
    /// parameter's own, sequence 1, unless a move already took it), validation before any new
    /// data, and back to the original address if the preferred one does not answer (§9.6.1:
    /// "the client MUST continue sending all future packets to the server's original IP
    /// address"). Allowed under disable_active_migration (§18.2: it "does not prohibit the
    /// client from migrating to a preferred address"). [`PathError::NoPreferredAddress`] when
    /// the server advertised none of that family; refused like `migrate_path` otherwise.
    pub fn migrate_to_preferred_address(
        &mut self,
        now: Timestamp,
    ) -> Result<SocketAddr, PathError> {
        self.check_client_may_move()?;
        let (local, remote) = self.open_path_tuple(PathId::ZERO)?;
        let preferred = self
            .peer_preferred_address()
            .into_iter()
            .find(|a| a.is_ipv4() == remote.is_ipv4())
            .ok_or(PathError::NoPreferredAddress)?;
        self.move_path(now, PathId::ZERO, local, preferred)?;
        Ok(preferred)
    }

    /// Only a client moves its paths, and only once the handshake is confirmed (RFC 9000 §9).
    fn check_client_may_move(&self) -> Result<(), PathError> {
        if self.side == Side::Server {
            return Err(PathError::ServerCannotMigrate);
        }
        if !self.handshake.is_confirmed() {
            return Err(PathError::NotEstablished);
        }
        Ok(())
    }

    /// The (local, remote) addresses of open path `id`.
    fn open_path_tuple(&self, id: PathId) -> Result<(SocketAddr, SocketAddr), PathError> {
        self.paths
            .get(&id)
            .filter(|p| p.is_active())
            .map(|p| (p.local, p.remote))
            .ok_or(PathError::UnknownPath(id))
    }

    /// Client: path `id` moves to (`local`, `remote`) with a fresh CID and is validated there.
    fn move_path(
        &mut self,
        now: Timestamp,
        id: PathId,
        local: SocketAddr,
        remote: SocketAddr,
    ) -> Result<(), PathError> {
        let (from_local, from_remote) = self.open_path_tuple(id)?;
        if (from_local, from_remote) == (local, remote) {
            return Ok(());
        }
        let left = self
            .remote_cids
            .get_mut(&id)
            .and_then(|c| c.switch_to_spare())
            .ok_or(PathError::NoConnectionId)?;
        let mut challenge = [0u8; 8];
        self.rng.with(|rng| rng.fill_bytes(&mut challenge));
        if from_local.ip() != local.ip() || from_remote.ip() != remote.ip() {
            // RFC 9000 §9.4: another network, so nothing learned about the old one holds.
            self.restart_path_estimates(now, id, (local, remote));
        }
        let path = self.paths.get_mut(&id).ok_or(PathError::UnknownPath(id))?;
        // A migration already in progress keeps its original fallback; the CID of the address
        // it passed through is not needed again.
        let unsettled = path.migrated_from.replace(MigratedFrom {
            local: from_local,
            remote: from_remote,
            cid_seq: Some(left),
            hold_old_local: false,
        });
        if let Some(first) = unsettled {
            path.migrated_from = Some(first);
            if let Some(pool) = self.remote_cids.get_mut(&id) {
                pool.retire(left);
            }
        }
        let path = self.paths.get_mut(&id).ok_or(PathError::UnknownPath(id))?;
        path.local = local;
        path.remote = remote;
        path.start_validation(challenge);
        // We chose the server's address ourselves: no anti-amplification limit (RFC 9000 §8.1).
        path.amplification_limited = false;
        Ok(())
    }

    /// Server: the peer's packets on a validated path come from a new address (RFC 9000 §9.3),
    /// or reach another of ours (its preferred address, §9.6). The path follows and validates
    /// the new addresses, keeping the ones it left to go back to if the new ones do not answer
    /// — an attacker that rewrote a packet's source must not take the connection away from its
    /// client (§9.3.2, §9.3.3). A peer that moved to a CID of ours it had not used (a deliberate
    /// move, not a NAT rebinding) gets a fresh CID from us too: "an endpoint MUST NOT reuse a
    /// connection ID when sending to more than one destination address" (§9.5).
    pub(crate) fn follow_peer(
        &mut self,
        id: PathId,
        (local, remote): (SocketAddr, SocketAddr),
        dcid: ConnectionId,
    ) {
        let confirmed = self.handshake.is_confirmed();
        let mut challenge = [0u8; 8];
        if confirmed {
            self.rng.with(|rng| rng.fill_bytes(&mut challenge));
        }
        // Peers take our CIDs in order: one above the lowest still active is a new one.
        let peer_switched = self
            .local_cids
            .get(&id)
            .and_then(|pool| pool.all().next())
            .is_some_and(|lowest| *lowest != dcid);
        let Some(path) = self.paths.get_mut(&id) else {
            return;
        };
        if confirmed && path.is_validated() && path.migrated_from.is_none() {
            let cid_seq = match peer_switched {
                true => self
                    .remote_cids
                    .get_mut(&id)
                    .and_then(|pool| pool.switch_to_spare()),
                false => None,
            };
            // The client came to another address of ours (the preferred address): "The server
            // MUST send non-probing packets from its original address until ... the server has
            // validated the new path" (RFC 9000 §9.6.2).
            let hold_old_local = local != path.local && remote == path.remote;
            path.migrated_from = Some(MigratedFrom {
                local: path.local,
                remote: path.remote,
                cid_seq,
                hold_old_local,
            });
            self.probes_elsewhere |= hold_old_local;
        }
        path.remote = remote;
        path.local = local;
        if confirmed {
            path.start_validation(challenge);
        }
    }

    /// A new congestion controller, RTT estimate, pacer and MTU search for path `id`, which
    /// now runs between `local` and `remote`.
    fn restart_path_estimates(
        &mut self,
        now: Timestamp,
        id: PathId,
        (local, remote): (SocketAddr, SocketAddr),
    ) {
        let mtu = crate::mtud::Mtud::for_path(&self.config, self.socket_mtu, local, remote);
        let cc = self
            .config
            .controller_factory_for(id)
            .build(CcConfig::new(u64::from(mtu.current())));
        if let Some(path) = self.paths.get_mut(&id) {
            path.pacer = Pacer::new(u64::from(mtu.current()), now);
            path.mtu = mtu;
            path.cc = cc;
            path.delivery = crate::cc::DeliveryRateEstimator::default();
            path.delivery_rate = None;
            path.ledgers[Epoch::Data.index()].leave_old_route();
        }
        self.restart_rtt_estimate(id);
    }

    /// A new RTT estimate for path `id`. Acknowledgements of what was sent before measure
    /// another route: only packets numbered from here on give the new estimator samples.
    fn restart_rtt_estimate(&mut self, id: PathId) {
        let initial_rtt = self.config.initial_rtt;
        let space = self.layout.space_for(id);
        let next_pn = self.send_space(space).peek_pn();
        if let Some(path) = self.paths.get_mut(&id) {
            path.rtt = RttEstimator::new(initial_rtt);
            path.last_sampled_pn = next_pn.checked_sub(1);
            path.cc.on_rtt_restart();
        }
    }

    /// A PATH_RESPONSE validated path `id`: a migration in progress is complete. A server whose
    /// peer moved to another IP address starts its estimates over now (RFC 9000 §9.4: "on
    /// confirming a peer's ownership of its new address", not on a packet anyone could forge);
    /// a client did so when it moved.
    pub(crate) fn complete_migration(&mut self, now: Timestamp, id: PathId) {
        let Some(path) = self.paths.get_mut(&id) else {
            return;
        };
        let Some(from) = path.migrated_from.take() else {
            return;
        };
        // Either end's address on another network (a client's own move, the server's
        // preferred address, a peer that moved).
        let new_ip = from.remote.ip() != path.remote.ip() || from.local.ip() != path.local.ip();
        let tuple = (path.local, path.remote);
        if let (Some(seq), Some(pool)) = (from.cid_seq, self.remote_cids.get_mut(&id)) {
            // RFC 9000 §9.5: the CID of the address left is not used again.
            pool.retire(seq);
        }
        if !new_ip {
            return;
        }
        if self.side == Side::Server {
            self.restart_path_estimates(now, id, tuple);
        } else {
            // Our own move: until the server followed (on our first non-probing packet from
            // the new address, RFC 9000 §9.3) it acknowledged our probes on the old route, so
            // samples so far mix the two networks.
            self.restart_rtt_estimate(id);
        }
    }

    /// A migration's validation failed: back to the address the path left, which was
    /// validated. Returns whether the path was migrating.
    pub(crate) fn revert_migration(&mut self, id: PathId) -> bool {
        let Some(path) = self.paths.get_mut(&id) else {
            return false;
        };
        let Some(from) = path.migrated_from.take() else {
            return false;
        };
        path.local = from.local;
        path.remote = from.remote;
        path.challenge = None;
        path.validate();
        if let (Some(seq), Some(pool)) = (from.cid_seq, self.remote_cids.get_mut(&id)) {
            // Back with the CID used there before: the one of the failed move would link the
            // two addresses (RFC 9000 §9.5).
            pool.switch_back(seq);
        }
        self.push_path_event(PathEvent::Failed { id });
        true
    }

    /// Probing packets that leave apart from their path's other packets: a PATH_RESPONSE to a
    /// probe from elsewhere, or a server's PATH_CHALLENGE from its preferred address.
    pub(crate) fn send_probe_elsewhere(
        &mut self,
        now: Timestamp,
        buf: &mut Vec<u8>,
    ) -> Option<Transmit> {
        if !self.probes_elsewhere {
            return None;
        }
        if let Some(t) = self.send_off_path_response(now, buf) {
            return Some(t);
        }
        if let Some(t) = self.send_held_challenge(now, buf) {
            return Some(t);
        }
        // Nothing owed now; a held move may still resend its challenge later.
        self.probes_elsewhere = self.paths.values().any(|p| {
            p.migrated_from.is_some_and(|m| m.hold_old_local)
                || p.pending_responses.iter().any(|r| r.off_path.is_some())
        });
        None
    }

    /// A server whose client moved to its preferred address validates the new path with a
    /// PATH_CHALLENGE from that address, in a probing packet of its own, while its other
    /// packets still leave from the original address (RFC 9000 §9.6.2: "The server MUST probe
    /// on the path toward the client from its preferred address").
    fn send_held_challenge(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        let (id, data) = self.paths.iter().find_map(|(id, p)| {
            let held = p.migrated_from.is_some_and(|m| m.hold_old_local);
            match p.challenge {
                Some((data, None)) if held => Some((*id, data)),
                _ => None,
            }
        })?;
        let max = self.send_budget(id)?;
        let plan = PacketPlan {
            pad_to: Some(MIN_INITIAL_SIZE.min(max)),
            lone_probe: Some(LoneProbe::Challenge(data)),
            ..PacketPlan::default()
        };
        self.build_packet(now, id, Epoch::Data, buf, max, plan)?;
        let path = self.paths.get_mut(&id)?;
        if let Some((_, sent)) = path.challenge.as_mut() {
            *sent = Some(now);
        }
        let preferred = path.local;
        self.finish_datagram_from(id, preferred, buf)
    }

    /// A PATH_RESPONSE owed to addresses its path does not use (a probe the path did not move
    /// for), in a datagram of its own sent there (RFC 9000 §8.2.2), padded to 1200 bytes unless
    /// that would send more than three times what came from there (§8.1).
    fn send_off_path_response(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        let (id, index) = self.paths.iter().find_map(|(id, p)| {
            let i = p
                .pending_responses
                .iter()
                .position(|r| r.off_path.is_some())?;
            Some((*id, i))
        })?;
        let response = self.paths.get_mut(&id)?.pending_responses.remove(index);
        let to = response.off_path?;
        let max = self.max_udp_payload(id).min(to.budget);
        let plan = PacketPlan {
            pad_to: Some(MIN_INITIAL_SIZE.min(max)),
            lone_probe: Some(LoneProbe::Response(response.data)),
            ..PacketPlan::default()
        };
        // Without room (a tiny probe) or a connection ID the response is dropped, as a lost
        // one would be; the peer challenges again.
        self.build_packet(now, id, Epoch::Data, buf, max, plan)?;
        // Not the path's own addresses: no ECN (its validation is the path's), no anti-
        // amplification count of the path (the budget above is this address's).
        Some(self.counted_transmit(to.local, to.remote, buf.len(), None))
    }
}
