//! Path management (RFC 9000 §8–9, RFC 10069 §3 and §5): opening paths, validation, status,
//! abandoning, path-ID limits, and issuing connection IDs per path.

use std::net::SocketAddr;

use bytes::Bytes;
use mpquic_wire::cid::ConnectionId;
use mpquic_wire::frame::{Frame, NewConnectionId, PathStatus};
use mpquic_wire::stream_id::Side;
use rand_core::RngCore;

use super::api::PathError;
use super::handshake::random_cid;
use super::{Connection, EndpointEvent, PathEvent};
use crate::cc::CcConfig;
use crate::cid::LocalCids;
use crate::crypto::Epoch;
use crate::error::TransportError;
use crate::path::{OffPath, Path, PathId, PendingResponse, AMPLIFICATION_FACTOR};
use crate::recovery::LossCause;
use crate::sent_frames::PathFrame;
use crate::space::SpaceId;
use crate::time::Timestamp;

/// PATH_RESPONSE frames kept per path at most; a peer challenging faster than we answer gets
/// the newest answered on the next round trip anyway.
const MAX_PENDING_RESPONSES: usize = 4;

/// A decrypted packet's path, number and frames, and the 4-tuple and size of the datagram
/// that brought it: what deciding whether its path moves needs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Arrival<'a> {
    pub path: PathId,
    pub space: SpaceId,
    pub pn: u64,
    /// The destination CID (one of ours) the peer sent the packet to.
    pub dcid: ConnectionId,
    pub payload: &'a Bytes,
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub datagram_len: usize,
}

/// Whether a packet holds probing frames only (RFC 9000 §9.1). A frame that does not parse
/// makes it non-probing; the frame loop then closes the connection.
fn is_probing_packet(payload: &Bytes) -> bool {
    Frame::iter(payload.clone()).all(|f| f.is_ok_and(|f| f.is_probing()))
}

impl Connection {
    /// Open a new path from `local` to `remote` (client only, RFC 10069 §3.1). The path is
    /// validated with PATH_CHALLENGE before it carries data.
    pub fn open_path(
        &mut self,
        now: Timestamp,
        local: SocketAddr,
        remote: SocketAddr,
    ) -> Result<PathId, PathError> {
        if !self.is_established() {
            return Err(PathError::NotEstablished);
        }
        if !self.layout.is_multipath() {
            return Err(PathError::MultipathNotNegotiated);
        }
        if self.side == Side::Server {
            return Err(PathError::ServerCannotOpen);
        }
        // RFC 10069 §5: the smallest unused path ID with CIDs available on both sides (a closed
        // ID is never used again, §2.1).
        let unused = |id: &PathId| !self.paths.contains_key(id) && !self.path_ids.is_closed(*id);
        let id = self
            .path_ids
            .open_ids()
            .find(|id| {
                unused(id)
                    && self
                        .remote_cids
                        .get(id)
                        .is_some_and(|c| c.current().is_some())
                    && self.local_cids.contains_key(id)
            })
            .ok_or(if self.path_ids.open_ids().any(|id| unused(&id)) {
                PathError::NoConnectionId
            } else {
                PathError::PathIdLimit
            })?;
        self.create_path(now, id, local, remote);
        Ok(id)
    }

    /// Mark a path as backup or available and tell the peer (RFC 10069 §3.3).
    pub fn set_path_status(&mut self, id: PathId, backup: bool) -> Result<(), PathError> {
        if !self.layout.is_multipath() {
            return Err(PathError::MultipathNotNegotiated);
        }
        let path = self
            .paths
            .get_mut(&id)
            .filter(|p| p.is_active())
            .ok_or(PathError::UnknownPath(id))?;
        let changed = path.local_backup() != backup;
        path.set_local_backup(backup);
        if changed {
            self.push_path_event(PathEvent::LocalStatusChanged { id, backup });
        }
        Ok(())
    }

    /// Abandon a path (RFC 10069 §3.4) with an application error code.
    pub fn close_path(
        &mut self,
        now: Timestamp,
        id: PathId,
        error_code: u64,
    ) -> Result<(), PathError> {
        if !self.layout.is_multipath() {
            return Err(PathError::MultipathNotNegotiated);
        }
        if !self.paths.get(&id).is_some_and(|p| p.is_active()) {
            return Err(PathError::UnknownPath(id));
        }
        self.abandon_path(now, id, error_code);
        Ok(())
    }

    fn create_path(&mut self, now: Timestamp, id: PathId, local: SocketAddr, remote: SocketAddr) {
        // Each path finds its own MTU (RFC 9000 §14.3); it starts at the base size.
        let mtu = crate::mtud::Mtud::for_path(&self.config, self.socket_mtu, local, remote);
        let cc = self
            .config
            .controller_factory_for(id)
            .build(CcConfig::new(u64::from(mtu.current())));
        let mut path = Path::new(id, local, remote, cc, self.config.initial_rtt, mtu, now);
        let mut challenge = [0u8; 8];
        self.rng.with(|rng| rng.fill_bytes(&mut challenge));
        path.start_validation(challenge);
        // The client chose the server's address itself; only the server is limited (RFC 10069 §3.1).
        path.amplification_limited = self.side == Side::Server;
        self.paths.insert(id, Box::new(path));
        self.push_path_event(PathEvent::Opened { id });
        if id != PathId::ZERO && self.layout.is_multipath() {
            // A path in use gets a spare CID for migration (RFC 10069 §5.1).
            self.issue_cids_for(id, self.cids_wanted(id));
        }
    }

    /// CIDs to keep issued for a path ID (RFC 10069 §5.1): "at least one" for each unused path
    /// ID so the peer can open it, and one more for a path in use so it can migrate. One, not
    /// two, per unused ID keeps an idle multipath connection's CID state (pools, routes, reset
    /// tokens) half as large.
    fn cids_wanted(&self, id: PathId) -> usize {
        if self.paths.contains_key(&id) {
            2
        } else {
            1
        }
    }

    /// Make sure the path a packet arrived on exists, and move it if the packet says the peer
    /// moved. Returns the packet's 4-tuple when it arrived on addresses the path keeps not
    /// using: a PATH_CHALLENGE in it is answered there (RFC 9000 §8.2.2).
    pub(crate) fn ensure_path(
        &mut self,
        now: Timestamp,
        arrival: Arrival<'_>,
    ) -> Result<Option<OffPath>, TransportError> {
        let Arrival {
            path: id,
            local,
            remote,
            ..
        } = arrival;
        let Some(path) = self.paths.get(&id) else {
            // RFC 10069 §3.1: a packet on an unused path ID opens the path on the server.
            if self.layout.is_multipath() {
                self.create_path(now, id, local, remote);
            }
            return Ok(None);
        };
        if path.remote == remote && path.local == local {
            return Ok(None);
        }
        // RFC 9000 §9.3 / RFC 10069 §3.1.2: a peer address change is a migration of this path.
        // Only a server follows the peer (a client's paths move when it migrates them itself;
        // packets still reaching the address it left belong to the same path), and only for
        // "the highest-numbered non-probing packet": a probe does not move the path, nor does
        // a packet sent before the move and delivered after it.
        let newest = path
            .acks
            .get(&arrival.space)
            .and_then(|a| a.largest())
            .is_none_or(|(largest, _)| arrival.pn > largest);
        if self.side == Side::Server && newest && !is_probing_packet(arrival.payload) {
            self.follow_peer(id, (local, remote), arrival.dcid);
            return Ok(None);
        }
        Ok(Some(OffPath {
            local,
            remote,
            budget: arrival
                .datagram_len
                .saturating_mul(AMPLIFICATION_FACTOR as usize),
        }))
    }

    /// A PATH_CHALLENGE arrived on `path`, or (`off_path`) from addresses the path does not
    /// use; the response goes back the way the challenge came (RFC 9000 §8.2.2).
    pub(crate) fn on_path_challenge(
        &mut self,
        path: PathId,
        data: [u8; 8],
        off_path: Option<OffPath>,
    ) {
        let Some(p) = self.paths.get_mut(&path) else {
            return;
        };
        if let Some(to) = off_path {
            // One answer per probing address at a time: several challenges in one probe must
            // not multiply what its size allows us to send there (RFC 9000 §8.1, §21.5).
            p.pending_responses.retain(|r| {
                r.off_path
                    .is_none_or(|o| (o.local, o.remote) != (to.local, to.remote))
            });
        }
        if p.pending_responses.len() < MAX_PENDING_RESPONSES {
            p.pending_responses.push(PendingResponse { data, off_path });
            self.probes_elsewhere |= off_path.is_some();
        }
    }

    pub(crate) fn on_path_response(&mut self, now: Timestamp, _arrived_on: PathId, data: [u8; 8]) {
        let matched = self
            .paths
            .values_mut()
            .find(|p| p.challenge.is_some_and(|(c, _)| c == data));
        if let Some(path) = matched {
            path.challenge = None;
            let (id, newly) = (path.id, path.validate());
            self.complete_migration(now, id);
            if newly {
                self.push_path_event(PathEvent::Validated { id });
            }
        }
    }

    pub(crate) fn on_path_abandon(&mut self, now: Timestamp, id: PathId, error_code: u64) {
        let until = now + self.largest_base_pto() * 3;
        let Some(path) = self.paths.get_mut(&id) else {
            return;
        };
        if !path.is_active() {
            // The answer to our PATH_ABANDON: its packets may still be in transit for 3 PTOs
            // (RFC 10069 §3.4), after which the path's state and our CIDs for it can go.
            if !path.peer_abandoned() {
                path.keep_closing_until(until, true);
            }
            return;
        }
        // RFC 10069 §3.4: answer with our own PATH_ABANDON and retire the peer's CIDs for it.
        self.abandon_path(now, id, error_code);
        if let Some(path) = self.paths.get_mut(&id) {
            path.keep_closing_until(until, true);
        }
    }

    /// Enter the abandoned state: no new packets on the path, its data moves elsewhere, state
    /// is kept for 3 PTOs (RFC 10069 §3.4).
    pub(crate) fn abandon_path(&mut self, now: Timestamp, id: PathId, error_code: u64) {
        let until = now + self.largest_base_pto() * 3;
        let Some(path) = self.paths.get_mut(&id) else {
            return;
        };
        path.abandon(until, error_code);
        let packets = path.ledger(Epoch::Data).drain();
        for p in &packets {
            self.send_space(p.space)
                .on_lost(p.pn, now, LossCause::PathGone);
            self.qlog_packet_lost(now, id, p.space, p.pn, None);
            self.requeue_frames(Epoch::Data, &p.frames);
        }
        self.remote_cids.remove(&id);
        self.push_path_event(PathEvent::Abandoned { id, error_code });
        if self.paths.values().all(|p| !p.is_active()) {
            // RFC 10069 §3.4: abandoning the last path closes the connection.
            self.close_with_error(
                now,
                TransportError::new(
                    mpquic_wire::error::TransportErrorCode::NO_VIABLE_PATH,
                    "all paths abandoned",
                ),
            );
        }
    }

    pub(crate) fn on_path_status(&mut self, id: PathId, sequence: u64, backup: bool) {
        let Some(path) = self.paths.get_mut(&id) else {
            return;
        };
        if path.on_peer_status(sequence, backup) {
            self.push_path_event(PathEvent::StatusChanged { id, backup });
        }
    }

    pub(crate) fn on_max_path_id(&mut self, max: u64) -> Result<(), TransportError> {
        let max = PathId::from_wire(max)
            .ok_or_else(|| TransportError::protocol_violation("MAX_PATH_ID above 2^32-1"))?;
        // RFC 10069 §7.7: never below the peer's initial_max_path_id.
        let initial = self
            .peer_params
            .as_ref()
            .and_then(|p| self.layout.peer_max_path_id(p))
            .map_or(0, PathId::as_u64);
        if max.as_u64() < initial {
            return Err(TransportError::protocol_violation(
                "MAX_PATH_ID below initial_max_path_id",
            ));
        }
        // RFC 10069 §7.7: lower values than before are ignored (reordering).
        if self.path_ids.raise_remote(max) {
            self.issue_path_cids();
        }
        Ok(())
    }

    /// After the handshake: extra CIDs for path 0 (RFC 9000 §5.1.1) and, with multipath, one CID
    /// for each unused path ID up to both limits (RFC 10069 §5.1).
    pub(crate) fn issue_initial_cids(&mut self) {
        let peer_limit = self
            .peer_params
            .as_ref()
            .map_or(2, |p| p.active_connection_id_limit);
        let want = peer_limit
            .min(u64::from(self.config.active_connection_id_limit))
            .max(2) as usize;
        self.issue_cids_for(PathId::ZERO, want);
        self.issue_path_cids();
    }

    pub(super) fn issue_path_cids(&mut self) {
        if !self.layout.is_multipath() {
            return;
        }
        let ids: Vec<PathId> = self.path_ids.open_ids().collect();
        for id in ids {
            if self.paths.get(&id).is_some_and(|p| !p.is_active()) {
                continue;
            }
            self.issue_cids_for(id, self.cids_wanted(id));
        }
    }

    /// Issue CIDs for path `id` until `want` are active.
    pub(crate) fn issue_cids_for(&mut self, id: PathId, want: usize) {
        let have = self.local_cids.get(&id).map_or(0, LocalCids::active_count);
        for _ in have..want {
            let cid_len = self.cid_len;
            let cid = self.rng.with(|rng| random_cid(rng, cid_len));
            let reset_token = self.reset_key.token_for(&cid);
            self.local_cids.entry(id).or_default().issue(cid, true);
            self.endpoint_events.push_back(EndpointEvent::NewCid {
                cid,
                path: id,
                reset_token,
            });
        }
    }

    pub(crate) fn on_retire_connection_id(
        &mut self,
        _now: Timestamp,
        path_id: Option<u64>,
        sequence: u64,
    ) -> Result<(), TransportError> {
        let id = PathId::from_wire_saturating(path_id.unwrap_or(0));
        let Some(pool) = self.local_cids.get_mut(&id) else {
            return Ok(());
        };
        if let Some(cid) = pool.retire(sequence)? {
            self.endpoint_events
                .push_back(EndpointEvent::RetireCid(cid));
            if self.paths.get(&id).is_none_or(|p| p.is_active()) {
                self.issue_cids_for(id, self.cids_wanted(id));
            }
        }
        Ok(())
    }

    /// PATH_RESPONSE / PATH_CHALLENGE owed on `path` (RFC 9000 §8.2). Returns whether an
    /// ack-eliciting frame was written.
    pub(crate) fn write_path_frames(
        &mut self,
        now: Timestamp,
        path: PathId,
        packet: &mut Vec<u8>,
        limit: usize,
    ) -> bool {
        let Some(p) = self.paths.get_mut(&path) else {
            return false;
        };
        let mut wrote = false;
        // Responses owed elsewhere leave in packets of their own (`send_off_path_response`).
        while let Some(i) = p
            .pending_responses
            .iter()
            .position(|r| r.off_path.is_none())
        {
            if packet.len() + 9 > limit {
                break;
            }
            Frame::PathResponse(p.pending_responses.remove(i).data).encode(packet);
            wrote = true;
        }
        // A challenge from an address the path's other packets do not leave from goes alone
        // (`send_held_challenge`).
        let alone = p.migrated_from.is_some_and(|m| m.hold_old_local);
        if let Some((data, sent @ None)) = p.challenge.as_mut().map(|(d, s)| (*d, s)) {
            if packet.len() + 9 <= limit && !alone {
                Frame::PathChallenge(data).encode(packet);
                *sent = Some(now);
                wrote = true;
            }
        }
        wrote
    }

    /// Connection-level control frames: HANDSHAKE_DONE, CID management, MAX_PATH_ID, path status
    /// and abandon. Returns whether any was written.
    pub(crate) fn write_connection_control(
        &mut self,
        packet: &mut Vec<u8>,
        limit: usize,
        sent: &mut crate::sent_frames::SentFrames,
    ) -> bool {
        let start = packet.len();
        if self.side == Side::Server && packet.len() < limit && self.handshake.take_handshake_done()
        {
            Frame::HandshakeDone.encode(packet);
            sent.handshake_done = true;
        }
        self.write_new_token(packet, limit, sent);
        self.write_ack_frequency(packet, limit, sent);
        let multipath = self.layout.is_multipath();
        if self.path_ids.grant_pending() && multipath && packet.len() + 9 <= limit {
            Frame::MaxPathId(u64::from(self.path_ids.take_grant())).encode(packet);
            sent.path_frames.push(PathFrame::MaxPathId);
        }
        self.write_cid_frames(packet, limit, sent, multipath);
        for (&id, path) in self.paths.iter_mut() {
            if let Some(code) = path.pending_abandon() {
                let frame = Frame::PathAbandon {
                    path_id: u64::from(id),
                    error_code: code,
                };
                if packet.len() + frame.encoded_len() <= limit {
                    frame.encode(packet);
                    path.abandon_sent();
                    sent.path_frames.push(PathFrame::Abandon(id));
                }
            }
            if path.status_frame_pending() {
                let status = if path.local_backup() {
                    PathStatus::Backup
                } else {
                    PathStatus::Available
                };
                path.local_status_seq += 1;
                let frame = Frame::PathStatus {
                    path_id: u64::from(id),
                    sequence: path.local_status_seq,
                    status,
                };
                if packet.len() + frame.encoded_len() <= limit {
                    frame.encode(packet);
                    path.status_sent();
                    sent.path_frames.push(PathFrame::Status(id));
                }
            }
        }
        packet.len() > start
    }

    fn write_cid_frames(
        &mut self,
        packet: &mut Vec<u8>,
        limit: usize,
        sent: &mut crate::sent_frames::SentFrames,
        multipath: bool,
    ) {
        // Runs for every packet: look only at pools with something queued.
        let reset_key = &self.reset_key;
        for (&id, pool) in self.local_cids.iter_mut() {
            if !pool.has_pending() {
                continue;
            }
            for seq in pool.take_pending() {
                let Some(&cid) = pool.get(seq) else { continue };
                let frame = Frame::NewConnectionId(NewConnectionId {
                    // RFC 10069 §5: PATH_NEW_CONNECTION_ID for paths other than 0; plain frames for 0.
                    path_id: (multipath && id != PathId::ZERO).then_some(u64::from(id)),
                    sequence: seq,
                    retire_prior_to: pool.retire_prior_to(),
                    cid,
                    reset_token: reset_key.token_for(&cid),
                });
                if packet.len() + frame.encoded_len() > limit {
                    pool.requeue(seq);
                    continue;
                }
                frame.encode(packet);
                sent.path_frames.push(PathFrame::NewCid {
                    path: id,
                    sequence: seq,
                });
            }
        }
        for (&id, pool) in self.remote_cids.iter_mut() {
            if !pool.has_pending_retire() {
                continue;
            }
            for seq in pool.take_pending_retire() {
                let frame = Frame::RetireConnectionId {
                    path_id: (multipath && id != PathId::ZERO).then_some(u64::from(id)),
                    sequence: seq,
                };
                if packet.len() + frame.encoded_len() > limit {
                    pool.requeue_retire(seq);
                    continue;
                }
                frame.encode(packet);
                sent.path_frames.push(PathFrame::RetireCid {
                    path: id,
                    sequence: seq,
                });
            }
        }
    }
}
