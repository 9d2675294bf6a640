//! Receiving: splitting coalesced datagrams, removing packet protection, duplicate detection,
//! dispatching frames, and recording what to acknowledge (RFC 9000 §12, RFC 9001 §5).

use std::net::SocketAddr;

use bytes::{Bytes, BytesMut};
use mpquic_wire::cid::ConnectionId;
use mpquic_wire::frame::{allowed_in, Frame};
use mpquic_wire::header::{
    decode_packet_number, read_truncated_pn, reserved_bits_zero, PacketKind, PartialDecode, QUIC_V1,
};
use mpquic_wire::stream_id::Side;

use super::paths::Arrival;
use super::{Connection, EarlyDatagram, State};

/// 1-RTT datagrams a server holds before its handshake completes (RFC 9001 §5.7).
const MAX_EARLY_DATAGRAMS: usize = 8;
use crate::ack::AckPolicy;
use crate::crypto::{open_payload, remove_header_protection, Epoch, KeyUpdateOutcome};
use crate::error::TransportError;
use crate::path::PathId;
use crate::qlog::PacketMeta;
use crate::space::SpaceId;
use crate::time::{Duration, Timestamp};

/// A decrypted packet ready for frame processing.
struct Decrypted {
    epoch: Epoch,
    kind: PacketKind,
    space: SpaceId,
    path: PathId,
    pn: u64,
    payload: Bytes,
    len: usize,
    /// What qlog shows of the header: CIDs, header and packet number lengths.
    dcid: ConnectionId,
    scid: Option<ConnectionId>,
    header_len: usize,
    pn_len: usize,
}

impl Decrypted {
    fn qlog_meta(&self) -> PacketMeta {
        PacketMeta {
            path: self.path,
            epoch: self.epoch,
            pn: self.pn,
            dcid: self.dcid,
            scid: self.scid,
            size: self.len,
            header_len: self.header_len,
            pn_len: self.pn_len,
        }
    }
}

impl Connection {
    /// Process one datagram whose first packet the endpoint already parsed and routed here.
    /// `path_hint` is the path ID of the destination CID (RFC 10069 §5), if known.
    pub fn handle_datagram(
        &mut self,
        now: Timestamp,
        local: SocketAddr,
        remote: SocketAddr,
        first: PartialDecode,
        rest: Option<BytesMut>,
        path_hint: Option<PathId>,
    ) {
        self.handle_datagram_inner(now, local, remote, first, rest, path_hint);
        self.qlog_sync(now);
    }

    fn handle_datagram_inner(
        &mut self,
        now: Timestamp,
        local: SocketAddr,
        remote: SocketAddr,
        first: PartialDecode,
        rest: Option<BytesMut>,
        path_hint: Option<PathId>,
    ) {
        let Some(first) = self.hold_until_handshake_complete(local, remote, first, path_hint)
        else {
            return;
        };
        let dcid = first.dcid();
        let datagram_len = first.packet_len() + rest.as_ref().map_or(0, |r| r.len());
        // Long-header packets travel on the handshake path (path 0).
        let path_id = match first.kind() {
            PacketKind::Short => path_hint.unwrap_or(PathId::ZERO),
            _ => PathId::ZERO,
        };
        self.stats.datagrams_received += 1;
        let mut next = Some(first);
        let mut rest = rest;
        while let Some(packet) = next.take() {
            if packet.dcid() != dcid {
                // RFC 9000 §12.2: coalesced packets with another DCID are ignored.
                self.stats.packets_dropped += 1;
                break;
            }
            self.handle_packet(now, local, remote, packet, path_hint);
            if self.is_drained() {
                return;
            }
            if let Some(bytes) = rest.take() {
                match PartialDecode::new(bytes, self.cid_len) {
                    Ok((p, r)) => {
                        next = Some(p);
                        rest = r;
                    }
                    Err(_) => self.stats.packets_dropped += 1,
                }
            }
        }
        self.count_for_amplification(path_id, local, remote, datagram_len);
        if self.is_established() && !self.early_datagrams.is_empty() {
            for early in std::mem::take(&mut self.early_datagrams) {
                self.rx_ecn = early.ecn;
                self.handle_datagram(
                    now,
                    early.local,
                    early.remote,
                    early.first,
                    None,
                    early.path_hint,
                );
            }
        }
    }

    /// RFC 9001 §5.7: a server MUST NOT process 1-RTT packets before its handshake completes
    /// (the client's Finished is not yet verified); it may buffer them. A client that opens a
    /// second path as soon as its own handshake completes (with the CIDs the server sent in
    /// 0.5-RTT) reaches the server on a faster path before its Finished does on the initial one;
    /// holding those packets saves it a probe timeout. A client without 1-RTT keys holds them
    /// too (§5.7 lets it buffer them): on a network that reorders, the server's 0.5-RTT
    /// packets (CIDs for more paths, session tickets) can overtake the Handshake packets whose
    /// Finished gives the keys, and dropping them costs a retransmission. Short-header packets
    /// are the last in a datagram (RFC 9000 §12.2), so the datagram is held whole; at most
    /// [`MAX_EARLY_DATAGRAMS`], the rest dropped (counted) as without keys. Returns the datagram
    /// when it is to be processed now.
    fn hold_until_handshake_complete(
        &mut self,
        local: SocketAddr,
        remote: SocketAddr,
        first: PartialDecode,
        path_hint: Option<PathId>,
    ) -> Option<PartialDecode> {
        let unreadable_yet = match self.side {
            Side::Server => true,
            Side::Client => !self.keys.has(Epoch::Data),
        };
        if !unreadable_yet
            || !matches!(self.state, State::Handshaking)
            || first.kind() != PacketKind::Short
        {
            return Some(first);
        }
        if self.early_datagrams.len() >= MAX_EARLY_DATAGRAMS {
            self.stats.packets_dropped += 1;
            // Still counted toward the sender's anti-amplification budget (RFC 9000 §8.1).
            let len = first.packet_len();
            self.count_for_amplification(path_hint.unwrap_or(PathId::ZERO), local, remote, len);
            return None;
        }
        self.early_datagrams.push(EarlyDatagram {
            local,
            remote,
            first,
            path_hint,
            ecn: self.rx_ecn,
        });
        None
    }

    /// RFC 9000 §8.1: before the path is validated, every byte of every datagram attributed to
    /// the connection counts toward the anti-amplification limit: padding after the last packet
    /// and packets that were discarded included. Counted after processing, so a packet that
    /// opened or migrated the path counts toward the path's new address.
    fn count_for_amplification(
        &mut self,
        path_id: PathId,
        local: SocketAddr,
        remote: SocketAddr,
        datagram_len: usize,
    ) {
        if let Some(path) = self.paths.get_mut(&path_id) {
            // Bytes from another address prove nothing about the path's address.
            if path.remote == remote && path.local == local {
                path.anti_amp_received += datagram_len as u64;
            }
        }
    }

    fn handle_packet(
        &mut self,
        now: Timestamp,
        local: SocketAddr,
        remote: SocketAddr,
        packet: PartialDecode,
        path_hint: Option<PathId>,
    ) {
        match &self.state {
            State::Drained | State::Draining { .. } => return,
            State::Closing { .. } => {
                // RFC 9000 §10.2.1: answer packets with the closing frame again (rate limited
                // by sending at most one per received datagram).
                if let State::Closing { resend, .. } = &mut self.state {
                    *resend = true;
                }
                return;
            }
            _ => {}
        }
        match packet.kind() {
            PacketKind::VersionNegotiation => return self.on_vn_packet(&packet),
            PacketKind::Retry => return self.on_retry_packet(&packet),
            PacketKind::ZeroRtt if !self.can_open_zero_rtt() => {
                // RFC 9001 §4.6.2, §5.7: without accepted early data (or on a client) 0-RTT
                // packets are dropped; a rejecting server's client resends the data in 1-RTT.
                self.stats.packets_dropped += 1;
                return;
            }
            _ => {}
        }
        let path_id = if packet.kind() == PacketKind::Short {
            path_hint.unwrap_or(PathId::ZERO)
        } else {
            PathId::ZERO
        };
        let scid = packet.scid();
        let decrypted = match self.decrypt(now, packet, path_id) {
            Ok(Some(d)) => d,
            Ok(None) => {
                self.stats.packets_dropped += 1;
                return;
            }
            Err(e) => return self.close_with_error(now, e),
        };
        if decrypted.epoch != Epoch::Data
            && self.side == Side::Client
            && !self.handshake.peer_scid_known()
        {
            // RFC 9000 §7.2: the client switches to the server's chosen CID.
            if let Some(scid) = scid {
                self.handshake.record_peer_scid(scid);
                self.remote_cids
                    .insert(PathId::ZERO, crate::cid::RemoteCids::with_initial(scid));
            }
        }
        if let Err(e) = self.on_decrypted(now, local, remote, decrypted) {
            self.close_with_error(now, e);
        }
    }

    fn on_vn_packet(&mut self, packet: &PartialDecode) {
        // RFC 9000 §6.2: a client abandons the attempt if VN lists no version it supports and
        // does not contain the version it used; VN after any valid packet is ignored.
        if self.side == Side::Client
            && !self.handshake.peer_scid_known()
            && !packet.versions().contains(&QUIC_V1)
        {
            self.on_version_negotiation();
        }
    }

    /// Remove header and packet protection. Ok(None): drop the packet silently.
    fn decrypt(
        &mut self,
        now: Timestamp,
        mut packet: PartialDecode,
        path: PathId,
    ) -> Result<Option<Decrypted>, TransportError> {
        let kind = packet.kind();
        let (dcid, scid) = (packet.dcid(), packet.scid());
        let (epoch, space) = match kind {
            PacketKind::Initial => (Epoch::Initial, SpaceId::Initial),
            PacketKind::Handshake => (Epoch::Handshake, SpaceId::Handshake),
            _ => (Epoch::Data, self.layout.space_for(path)),
        };
        let pn_offset = packet.pn_offset();
        let len = packet.packet_len();
        let hp = match epoch {
            // 0-RTT packets: application-data space, their own keys (zero_rtt.rs).
            Epoch::Data if kind == PacketKind::ZeroRtt => {
                self.zero_rtt.keys.as_ref().map(|k| k.header.as_ref())
            }
            epoch => self.keys.remote_header(epoch),
        };
        let Some(hp) = hp else { return Ok(None) };
        let Ok((first, pn_len)) = remove_header_protection(hp, packet.packet_mut(), pn_offset)
        else {
            return Ok(None);
        };
        let largest = self
            .records
            .get(&space)
            .and_then(|r| r.largest())
            .map(|(pn, _)| pn);
        let truncated = read_truncated_pn(&packet.packet()[pn_offset..], pn_len);
        let pn = decode_packet_number(truncated, pn_len, largest);
        let header_len = pn_offset + pn_len;
        let mut buf = packet.into_packet();
        // Keep the last 16 bytes before decryption touches them: a stateless reset ends with its
        // token (RFC 9000 §10.3.1).
        let tail = (epoch == Epoch::Data && buf.len() >= 21).then(|| {
            let mut token = [0u8; 16];
            token.copy_from_slice(&buf[buf.len() - 16..]);
            token
        });
        let key_phase = first & crate::crypto::one_rtt::KEY_PHASE_BIT != 0;
        let opened = if kind == PacketKind::ZeroRtt {
            // RFC 9001 §5.3: the RFC 9001 nonce (no path ID), no key phase in a long header.
            self.zero_rtt.keys.as_ref().map(|k| {
                open_payload(k.packet.as_ref(), None, pn, &mut buf, header_len)
                    .map(|r| (r, KeyUpdateOutcome::Current))
            })
        } else {
            // RFC 10069 §2.4: the 1-RTT nonce carries the path ID in per-path spaces.
            let nonce_path = if epoch == Epoch::Data {
                self.layout.nonce_path_id(path)
            } else {
                None
            };
            self.keys
                .open(epoch, nonce_path, pn, &mut buf, header_len, key_phase)
        };
        let Some(opened) = opened else {
            return Ok(None);
        };
        let (range, outcome) = match opened {
            Ok(ok) => ok,
            Err(e) => {
                if matches!(e, crate::crypto::CryptoError::Decrypt) {
                    self.stats.auth_failures += 1;
                }
                if let Some(code) = e.transport_error_code() {
                    return Err(TransportError::new(code, e.to_string()));
                }
                if tail.is_some_and(|t| self.is_stateless_reset(t)) {
                    self.on_stateless_reset(now);
                }
                return Ok(None);
            }
        };
        if matches!(
            outcome,
            KeyUpdateOutcome::PeerUpdated | KeyUpdateOutcome::PeerFollowed
        ) {
            // RFC 9001 §6.5 / RFC 10069: keep the old key for three times the largest PTO.
            let drop_previous_at = now + self.key_retention_pto() * 3;
            self.keys.on_peer_key_update(drop_previous_at);
            self.stats.key_updates += 1;
            self.qlog_key_update(now, "remote_update");
        }
        // RFC 9000 §17.2/§17.3.1: reserved bits must be zero once protection is removed.
        if !reserved_bits_zero(first) {
            return Err(TransportError::protocol_violation(
                "reserved header bits are not zero",
            ));
        }
        if self.records.get(&space).is_some_and(|r| r.is_duplicate(pn)) {
            self.stats.duplicate_packets += 1;
            return Ok(None);
        }
        let payload = buf.freeze().slice(range);
        Ok(Some(Decrypted {
            epoch,
            kind,
            space,
            path,
            pn,
            payload,
            len,
            dcid,
            scid,
            header_len,
            pn_len,
        }))
    }

    fn on_decrypted(
        &mut self,
        now: Timestamp,
        local: SocketAddr,
        remote: SocketAddr,
        packet: Decrypted,
    ) -> Result<(), TransportError> {
        if packet.payload.is_empty() {
            // RFC 9000 §12.4: a packet with no frames is a PROTOCOL_VIOLATION.
            return Err(TransportError::protocol_violation("packet without frames"));
        }
        // The usual case, a packet on its path's own addresses, needs none of ensure_path's
        // work.
        let on_its_path = self
            .paths
            .get(&packet.path)
            .is_some_and(|p| p.local == local && p.remote == remote);
        let off_path = if on_its_path {
            None
        } else {
            self.ensure_path(
                now,
                Arrival {
                    path: packet.path,
                    space: packet.space,
                    pn: packet.pn,
                    dcid: packet.dcid,
                    payload: &packet.payload,
                    local,
                    remote,
                    datagram_len: packet.len,
                },
            )?
        };
        self.qlog_packet_received(now, || packet.qlog_meta(), &packet.payload);
        if packet.epoch == Epoch::Handshake && self.side == Side::Server {
            // RFC 9001 §4.9.1: the server drops Initial keys on its first Handshake packet, and
            // RFC 9000 §8.1: such a packet validates the client's address.
            self.discard_keys(now, Epoch::Initial);
            self.validate_handshake_path();
        }
        match packet.kind {
            PacketKind::ZeroRtt => self.stats.zero_rtt_packets_received += 1,
            PacketKind::Short => self.on_one_rtt_received(),
            _ => {}
        }
        let mut ack_eliciting = false;
        let mut frames = Frame::iter(packet.payload.clone());
        loop {
            let before = frames.remaining();
            let Some(frame) = frames.next() else {
                break;
            };
            let frame = frame?;
            let wire_len = before - frames.remaining();
            let ty = frame.frame_type();
            if !allowed_in(ty, packet.kind) {
                return Err(TransportError::for_frame(
                    mpquic_wire::error::TransportErrorCode::PROTOCOL_VIOLATION,
                    ty,
                    "frame not allowed in this packet type",
                ));
            }
            ack_eliciting |= frame.is_ack_eliciting();
            if let Frame::PathChallenge(data) = frame {
                self.on_path_challenge(packet.path, data, off_path);
                continue;
            }
            self.handle_frame(now, packet.epoch, packet.path, frame, wire_len)?;
            if self.is_closed() {
                return Ok(());
            }
        }
        self.note_received(now, &packet, ack_eliciting);
        Ok(())
    }

    /// Bookkeeping after a packet was processed: receive record, ACK state, idle timer, counters.
    fn note_received(&mut self, now: Timestamp, packet: &Decrypted, ack_eliciting: bool) {
        let keys_kept = match packet.epoch {
            Epoch::Data => true,
            epoch => self.keys.has(epoch),
        };
        if !keys_kept {
            // Processing this packet discarded its keys (the server's Handshake packet that
            // completed and confirmed the handshake, RFC 9001 §4.9.2): its space is gone and
            // is never acknowledged again. Recording it would recreate an ACK state that
            // stays due forever and make every later poll_transmit send a packet (an ACK
            // for each packet received).
            self.count_received(now, packet);
            return;
        }
        self.count_received_ecn(packet.space, packet.path);
        // Report §2.2: each path's largest received packet of the space; below the smallest
        // of them no gap waits for a packet in flight on an in-order path.
        let settled = self
            .paths
            .values()
            .filter_map(|p| p.acks.get(&packet.space)?.largest())
            .map(|(pn, _)| pn)
            .min();
        let record = self.record(packet.space);
        if let Some(settled) = settled {
            record.set_settled(settled);
        }
        let gap = record.on_received(packet.pn, now);
        // draft-ietf-quic-ack-frequency: the peer's Reordering Threshold may hold back the
        // immediate ACK RFC 9000 §13.2.1 asks for.
        let frequency = *self.ack_frequency.peer();
        let reorder_acks = frequency.reordering_calls_for_ack(self.record(packet.space), packet.pn);
        let immediate = packet.epoch != Epoch::Data;
        let max_ack_delay = if immediate {
            Duration::ZERO
        } else {
            self.max_ack_delay()
        };
        let rules = *self.layout.report_rules();
        let ack_config = self.ack_frequency.peer().apply(&self.config.ack);
        let policy = AckPolicy::new(&ack_config, &rules, self.layout.gaps_signal_loss());
        // Report §2.2: the path whose threshold and timer count this packet.
        let counting = if packet.epoch == Epoch::Data {
            let candidates = self
                .paths
                .values()
                .filter(|p| p.is_usable())
                .map(|p| (p.id, p.rtt.smoothed()));
            policy.counting_path(packet.path, candidates)
        } else {
            packet.path
        };
        if let Some(path) = self.paths.get_mut(&packet.path) {
            let state = path.ack_state(packet.space);
            // Reordered on its own path, or (where gaps mean loss) a gap in the space.
            let below_path_largest = state.largest().is_some_and(|(l, _)| packet.pn < l);
            let out_of_order = reorder_acks && policy.is_out_of_order(below_path_largest, gap);
            state.on_arrival(packet.pn, now);
            if counting == packet.path {
                policy.count(state, now, ack_eliciting, out_of_order, max_ack_delay);
            } else if let Some(other) = self.paths.get_mut(&counting) {
                let state = other.ack_state(packet.space);
                policy.count(state, now, ack_eliciting, out_of_order, max_ack_delay);
            }
        }
        self.count_received(now, packet);
    }

    fn count_received(&mut self, now: Timestamp, packet: &Decrypted) {
        if let Some(path) = self.paths.get_mut(&packet.path) {
            path.counters.packets_received += 1;
            path.counters.bytes_received += packet.len as u64;
            path.last_activity = now;
        }
        // RFC 9000 §10.1: any successfully processed packet restarts the idle timer.
        self.idle_since = now;
        self.stats.packets_received += 1;
    }

    /// Server side: the handshake path is validated once the client proves it received our
    /// Initial (RFC 9000 §8.1).
    fn validate_handshake_path(&mut self) {
        if let Some(path) = self.paths.get_mut(&PathId::ZERO) {
            path.validate();
        }
    }

    /// Whether a packet that failed to decrypt is a stateless reset from the peer (RFC 9000 §10.3.1).
    /// Whether `token` is a stateless reset token the peer issued to us (RFC 9000 §10.3.1).
    pub fn is_reset_token(&self, token: &[u8; 16]) -> bool {
        !self.is_drained() && self.is_stateless_reset(*token)
    }

    /// The endpoint detected a stateless reset for this connection.
    pub fn handle_stateless_reset(&mut self, now: Timestamp) {
        self.on_stateless_reset(now);
    }

    fn is_stateless_reset(&self, tail: [u8; 16]) -> bool {
        let token = mpquic_wire::cid::ResetToken(tail);
        self.remote_cids
            .values()
            .any(|pool| pool.has_reset_token(&token))
    }
}
