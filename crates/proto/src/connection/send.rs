//! Sending: choosing the path and level of the next datagram, assembling and protecting packets,
//! and recording them for loss recovery (RFC 9000 §12–14, RFC 9002 §7.7, RFC 10069 §4–5).

use std::net::SocketAddr;

use mpquic_wire::frame::Frame;
use mpquic_wire::header::{Header, PartialEncode, QUIC_V1};
use mpquic_wire::stream_id::Side;

use super::{Connection, State, Transmit};

use crate::crypto::{seal_packet, Epoch};
use crate::path::PathId;
use crate::recovery::SentPacket;
use crate::scheduler::Backlog;
use crate::sent_frames::SentFrames;
use crate::space::SpaceId;
use crate::time::Timestamp;

/// AEAD tag length of every QUIC v1 cipher suite (RFC 9001 §5.3).
pub(crate) const TAG_LEN: usize = 16;
/// One ACK-only packet in this many carries a PING so the peer acknowledges our ACKs.
const ACK_ONLY_PING_INTERVAL: u32 = 20;
/// RFC 9000 §14.1: minimum size of datagrams carrying ack-eliciting Initial packets, and of
/// path-validation datagrams (§8.2.1).
pub(crate) const MIN_INITIAL_SIZE: usize = 1200;

/// What a packet under construction should contain beyond what is pending anyway.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PacketPlan {
    /// Include new stream data (the scheduler chose this path, or a probe).
    pub data: bool,
    /// A PTO probe: must be ack-eliciting, may exceed the congestion window.
    pub probe: bool,
    /// Pad the datagram to this size.
    pub pad_to: Option<usize>,
    /// A path MTU probe (RFC 9000 §14.4): PADDING + PING only, its loss no congestion signal.
    pub mtu_probe: bool,
    /// A probing packet of its own (this frame and PADDING only), sent from or to addresses
    /// other than those of the path's other packets; not counted in flight.
    pub lone_probe: Option<LoneProbe>,
}

/// The frame of a probing packet sent apart from the path's other packets.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LoneProbe {
    /// A PATH_RESPONSE to a probe from addresses the path does not use (RFC 9000 §8.2.2).
    Response([u8; 8]),
    /// A server's PATH_CHALLENGE from its preferred address while its other packets still
    /// leave from the original one (RFC 9000 §9.6.2).
    Challenge([u8; 8]),
}

impl Connection {
    /// Write the next datagram into `buf` (cleared first). None when nothing is to be sent now;
    /// call [`Connection::poll_timeout`] to learn when to try again.
    pub fn poll_transmit(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        let transmit = self.poll_transmit_inner(now, buf);
        self.qlog_sync(now);
        transmit
    }

    fn poll_transmit_inner(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        buf.clear();
        match self.state {
            State::Drained | State::Draining { .. } => return None,
            State::Closing { .. } => return self.send_close(now, buf),
            _ => {}
        }
        self.maybe_update_keys(now);
        if self.keys.has_handshake_levels() {
            if let Some(t) = self.send_handshake_datagram(now, buf) {
                return Some(t);
            }
        }
        if !self.keys.has(Epoch::Data) {
            // A resuming client's early stream data (zero_rtt.rs).
            return self.send_zero_rtt_datagram(now, buf);
        }
        self.pacing_wakeup = None;
        if let Some(t) = self.send_probe_elsewhere(now, buf) {
            return Some(t);
        }
        if let Some(t) = self.send_urgent(now, buf) {
            return Some(t);
        }
        if let Some(t) = self.send_mtu_probe(now, buf) {
            return Some(t);
        }
        if let Some(t) = self.send_copy(now, buf) {
            return Some(t);
        }
        if let Some(t) = self.send_scheduled(now, buf) {
            return Some(t);
        }
        self.send_reinjection(now, buf)
    }

    /// Initial and Handshake packets (plus 1-RTT if ready) coalesced on the handshake path.
    fn send_handshake_datagram(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        let epochs: &[Epoch] = match (
            self.epoch_wants_send(now, Epoch::Initial),
            self.epoch_wants_send(now, Epoch::Handshake),
        ) {
            (true, true) => &[Epoch::Initial, Epoch::Handshake],
            (true, false) => &[Epoch::Initial],
            (false, true) => &[Epoch::Handshake],
            (false, false) => return None,
        };
        let max = self.max_udp_payload(PathId::ZERO);
        let budget = self
            .paths
            .get(&PathId::ZERO)?
            .amplification_budget()
            .map_or(max, |b| (b as usize).min(max));
        if budget < 64 {
            return None;
        }
        let probe = self
            .paths
            .get(&PathId::ZERO)
            .is_some_and(|p| p.probes_pending > 0);
        // RFC 9000 §14.1: the client pads every datagram carrying an Initial packet; the server
        // pads datagrams with ack-eliciting Initial packets (CRYPTO data, or a probe's PING).
        let include_initial_padding = epochs[0] == Epoch::Initial
            && (self.side == Side::Client || self.crypto_pending(Epoch::Initial) || probe);
        if include_initial_padding && budget < MIN_INITIAL_SIZE.min(max) {
            // RFC 9000 §8.1 and §14.1: a short datagram would break the 1200-byte rule and
            // peers drop it; wait until the client's next datagram raises the budget.
            return None;
        }
        for (i, &epoch) in epochs.iter().enumerate() {
            let last = i + 1 == epochs.len();
            // Padding goes into the last packet of the datagram.
            let pad_to = (last && include_initial_padding).then_some(MIN_INITIAL_SIZE.min(budget));
            let room = budget.saturating_sub(buf.len());
            let plan = PacketPlan {
                data: false,
                probe,
                pad_to: pad_to.map(|p| p - buf.len().min(p)),
                mtu_probe: false,
                lone_probe: None,
            };
            if self
                .build_packet(now, PathId::ZERO, epoch, buf, room, plan)
                .is_none()
                && last
                && include_initial_padding
                && !buf.is_empty()
            {
                // The last packet had nothing to say: pad with a PING-free PADDING-only packet is
                // not allowed (RFC 9000 §12.4), so pad the datagram through a 1-byte PING.
                let plan = PacketPlan {
                    probe: true,
                    ..plan
                };
                self.build_packet(now, PathId::ZERO, epoch, buf, room, plan);
            }
        }
        if let Some(path) = self.paths.get_mut(&PathId::ZERO) {
            path.probes_pending = path.probes_pending.saturating_sub(1);
        }
        if self.side == Side::Client && epochs.contains(&Epoch::Handshake) {
            // RFC 9001 §4.9.1: a client discards Initial keys when it first sends a Handshake packet.
            self.discard_keys(now, Epoch::Initial);
        }
        self.finish_datagram(PathId::ZERO, buf)
    }

    fn epoch_wants_send(&self, now: Timestamp, epoch: Epoch) -> bool {
        if !self.keys.has(epoch) {
            return false;
        }
        let space = if epoch == Epoch::Initial {
            SpaceId::Initial
        } else {
            SpaceId::Handshake
        };
        let path = self.paths.get(&PathId::ZERO);
        self.crypto_pending(epoch)
            || path.is_some_and(|p| {
                p.acks.get(&space).is_some_and(|a| {
                    a.ack_due(now) || (a.has_unacked() && self.crypto_pending(epoch))
                })
            })
            || path.is_some_and(|p| {
                p.probes_pending > 0
                    && (p.ledgers[epoch.index()].bytes_in_flight() > 0
                        || self.anti_deadlock_epoch() == Some(epoch))
            })
    }

    /// RFC 9002 §6.2.2.1 and §6.2.4: a client without 1-RTT keys and with nothing in flight
    /// still probes when its PTO fires, so a server stuck at its amplification limit (or whose
    /// first flight was lost) hears from it: a Handshake packet if it has Handshake keys,
    /// otherwise a padded Initial. The probe also acknowledges what the server sent meanwhile.
    fn anti_deadlock_epoch(&self) -> Option<Epoch> {
        if self.side != Side::Client || self.handshake.is_confirmed() || self.keys.has(Epoch::Data)
        {
            return None;
        }
        let path = self.paths.get(&PathId::ZERO)?;
        let in_flight = [Epoch::Initial, Epoch::Handshake]
            .iter()
            .any(|&e| path.ledgers[e.index()].ack_eliciting_in_flight() > 0);
        if in_flight {
            return None;
        }
        if self.keys.has(Epoch::Handshake) {
            Some(Epoch::Handshake)
        } else {
            self.keys.has(Epoch::Initial).then_some(Epoch::Initial)
        }
    }

    /// Path-specific work that cannot wait for the scheduler: PATH_RESPONSE/PATH_CHALLENGE,
    /// PTO probes, due ACKs (RFC 9000 §13.2.1), and path-management frames.
    fn send_urgent(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        // Round robin from the cursor, wrapping around once.
        let mut cursor = self.next_urgent_path;
        for _ in 0..self.paths.len() {
            let next = self
                .paths
                .range(cursor..)
                .next()
                .or(self.paths.iter().next());
            let Some((&id, path)) = next else {
                break;
            };
            cursor = id.next().unwrap_or(PathId::ZERO);
            // Any application-data space's ACK counted on this path (its own space's, or with
            // the report's §2.2 rule off another path's too).
            let ack_due = path
                .acks
                .iter()
                .any(|(s, a)| matches!(s, SpaceId::Data(_)) && a.ack_due(now));
            let validating = path.pending_responses.iter().any(|r| r.off_path.is_none())
                || path.challenge.is_some_and(|(_, sent)| sent.is_none());
            let probe = path.probes_pending > 0;
            let ack_due = ack_due || (path.ack_copy_pending && path.is_usable());
            if !(ack_due || validating || probe) {
                continue;
            }
            // An ACK owed on an abandoned path goes out on another path (RFC 10069 §3.4.2).
            let send_on = if self.can_address(id) {
                id
            } else {
                self.any_active_path().unwrap_or(id)
            };
            // A failed path is probed for liveness with PINGs only: data must not be trapped on
            // it (issue 4 handover).
            let failed = self.paths.get(&send_on).is_some_and(|p| p.is_failed());
            let can_data = !failed && (probe || self.path_can_send_data(now, send_on));
            let pad = validating.then_some(MIN_INITIAL_SIZE);
            let Some(max) = self.send_budget(send_on) else {
                continue;
            };
            // A path whose packets of the discovered size go unanswered may have shrunk: PTO
            // probes of the base size get through and their ACKs reveal the losses that detect
            // the black hole (RFC 8899 §4.3).
            let max = if probe {
                self.pto_probe_size(send_on, max)
            } else {
                max
            };
            let plan = PacketPlan {
                data: can_data,
                probe,
                pad_to: pad.map(|p| p.min(max)),
                mtu_probe: false,
                lone_probe: None,
            };
            if self
                .build_packet(now, send_on, Epoch::Data, buf, max, plan)
                .is_some()
            {
                if let Some(p) = self.paths.get_mut(&id) {
                    p.probes_pending = p.probes_pending.saturating_sub(1);
                }
                self.next_urgent_path = id.next().unwrap_or(PathId::ZERO);
                return self.finish_datagram(send_on, buf);
            }
        }
        None
    }

    /// New data and connection-level control frames on the path the scheduler picks.
    fn send_scheduled(&mut self, now: Timestamp, buf: &mut Vec<u8>) -> Option<Transmit> {
        if !self.has_connection_data(now) {
            self.mark_app_limited();
            return None;
        }
        let views = self.path_views(now);
        let (bytes, send_window) = self.streams.send_backlog();
        // Queued datagrams (RFC 9221) are new data too; flow control does not apply to them
        // (§5.3), so they are not part of `send_window`.
        let backlog = Backlog {
            now,
            bytes: bytes + self.pending_datagram_bytes(),
            send_window,
            mtu: self.largest_usable_mtu(),
        };
        let picked = self.scheduler.select(&views, &backlog);
        self.views_buf = views;
        let path = picked?;
        let max = self.send_budget(path)?;
        let plan = PacketPlan {
            data: true,
            probe: false,
            pad_to: None,
            mtu_probe: false,
            lone_probe: None,
        };
        self.build_packet(now, path, Epoch::Data, buf, max, plan)?;
        if self.scheduler.duplicates() {
            self.queue_copies(path);
        }
        self.finish_datagram(path, buf)
    }

    /// Whether anything not tied to a path waits: stream data or control, connection-level frames.
    fn has_connection_data(&self, now: Timestamp) -> bool {
        self.streams.has_pending_data()
            || self.has_pending_datagrams()
            || !self.raw_frames.is_empty()
            || self.has_pending_qoe()
            || self.streams.has_pending_control()
            || self.handshake.handshake_done_pending()
            || self.handshake.new_token_to_send().is_some()
            || self.ack_frequency.is_pending()
            || self.path_ids.grant_pending()
            || self.local_cids.values().any(|c| c.has_pending())
            || self.remote_cids.values().any(|c| c.has_pending_retire())
            || self.paths.values().any(|p| p.has_path_frames_pending())
            || self
                .paths
                .values()
                .any(|p| p.acks.values().any(|a| a.ack_due(now)))
    }

    /// The round-trip time receive-window auto-tuning ([`crate::streams`] `flow.rs`) measures
    /// the window against: the largest smoothed RTT of the usable paths with a sample (else
    /// `path`'s). With several paths a stream's data arrives with the largest delay of the paths
    /// carrying it (RFC 10069 §5.5, "Packet Scheduling"), so the window must cover the slowest
    /// path's round trip; sized by the path that happens to carry the MAX_DATA frame, it stays
    /// at a fast path's BDP and a loss on the slow path blocks the sender on flow control until
    /// its retransmission arrives (issue 15: 240 ms blocked in a 3.4 s download).
    fn flow_control_rtt(&self, path: PathId) -> crate::time::Duration {
        let own = self.paths.get(&path).map(|p| p.rtt.smoothed());
        self.paths
            .values()
            .filter(|p| p.is_usable() && p.rtt.has_sample())
            .map(|p| p.rtt.smoothed())
            .chain(own)
            .max()
            .unwrap_or_default()
    }

    pub(crate) fn any_active_path(&self) -> Option<PathId> {
        self.paths
            .values()
            .filter(|p| p.is_active() && p.is_validated())
            .map(|p| p.id)
            .find(|&id| self.can_address(id))
    }

    /// Whether packets can be sent on a path: active, with a destination CID from the peer.
    pub(crate) fn can_address(&self, id: PathId) -> bool {
        self.paths.get(&id).is_some_and(|p| p.is_active())
            && self
                .remote_cids
                .get(&id)
                .is_some_and(|c| c.current().is_some())
    }

    /// Count the datagram and return its addressing.
    pub(crate) fn finish_datagram(&mut self, path: PathId, buf: &[u8]) -> Option<Transmit> {
        let local = self.paths.get(&path)?.sends_from();
        self.finish_datagram_from(path, local, buf)
    }

    /// [`Connection::finish_datagram`] from the local address `local`: a server's challenge
    /// from its preferred address while the path's other packets leave from the original one.
    pub(crate) fn finish_datagram_from(
        &mut self,
        path: PathId,
        local: SocketAddr,
        buf: &[u8],
    ) -> Option<Transmit> {
        if buf.is_empty() {
            return None;
        }
        let ecn = self.ecn_codepoint(path);
        let p = self.paths.get_mut(&path)?;
        if !p.is_validated() {
            p.anti_amp_sent += buf.len() as u64;
        }
        let remote = p.remote;
        Some(self.counted_transmit(local, remote, buf.len(), ecn))
    }

    /// The transmit of a datagram of `size` bytes, counted in the connection's statistics.
    pub(crate) fn counted_transmit(
        &mut self,
        local: SocketAddr,
        remote: SocketAddr,
        size: usize,
        ecn: Option<crate::ecn::EcnCodepoint>,
    ) -> Transmit {
        self.stats.datagrams_sent += 1;
        self.stats.bytes_sent += size as u64;
        Transmit {
            local,
            remote,
            size,
            ecn,
        }
    }

    /// Assemble, protect and record one packet at the end of `buf`, at most `max_len` bytes.
    pub(crate) fn build_packet(
        &mut self,
        now: Timestamp,
        path: PathId,
        epoch: Epoch,
        buf: &mut Vec<u8>,
        max_len: usize,
        plan: PacketPlan,
    ) -> Option<()> {
        if buf.is_empty() {
            // The first packet of a datagram is built in place: no copy.
            let built = self.build_packet_in(now, path, epoch, buf, max_len, plan);
            if built.is_none() {
                buf.clear();
            }
            return built;
        }
        // Coalesced packets go through one reused buffer per connection (sealing needs the
        // packet alone in its buffer).
        let mut packet = std::mem::take(&mut self.scratch);
        packet.clear();
        let built = self.build_packet_in(now, path, epoch, &mut packet, max_len, plan);
        if built.is_some() {
            buf.extend_from_slice(&packet);
        }
        self.scratch = packet;
        built
    }

    #[allow(clippy::too_many_arguments)]
    fn build_packet_in(
        &mut self,
        now: Timestamp,
        path: PathId,
        epoch: Epoch,
        packet: &mut Vec<u8>,
        max_len: usize,
        plan: PacketPlan,
    ) -> Option<()> {
        let space = match epoch {
            Epoch::Initial => SpaceId::Initial,
            Epoch::Handshake => SpaceId::Handshake,
            Epoch::Data => self.layout.space_for(path),
        };
        let header = self.header_for(epoch, path)?;
        let pn = self.send_space(space).peek_pn();
        // RFC 9000 §17.1: long enough to decode even behind packets of faster paths (pn_len.rs).
        let pn_len = self.packet_number_len(now, space, path, pn);
        let enc = header.encode_with_pn_len(pn, pn_len, packet);
        let limit = max_len.checked_sub(TAG_LEN)?;
        if packet.len() + 4 > limit {
            return None;
        }
        let mut sent = SentFrames {
            mtu_probe: plan.mtu_probe,
            ..SentFrames::default()
        };
        let mut ack_eliciting = false;
        // RFC 9221 §4-5: DATAGRAM frames go only into 1-RTT packets that may carry new data
        // (the scheduler's path, or a path whose window has room), so congestion control
        // applies to them. One that did not fit behind the ACKs of the last such packet
        // goes first now.
        let datagrams = epoch == Epoch::Data && plan.data && self.state_allows_data();
        if datagrams && self.datagram_head_deferred() {
            ack_eliciting |=
                self.write_datagrams(path, packet, enc.header_len, limit, &mut sent, true);
        }
        // A path MTU probe carries PING and PADDING only (RFC 9000 §14.4): it is likely lost,
        // and nothing else should be lost with it. A PATH_RESPONSE to addresses the peer has
        // not moved to goes alone: a server sends no non-probing packet to an address before
        // the peer does (RFC 9000 §9.3).
        let frames = !plan.mtu_probe && plan.lone_probe.is_none();
        if let Some(probe) = plan.lone_probe {
            if packet.len() + 9 > limit {
                return None;
            }
            match probe {
                LoneProbe::Response(data) => Frame::PathResponse(data).encode(packet),
                LoneProbe::Challenge(data) => Frame::PathChallenge(data).encode(packet),
            }
            ack_eliciting = true;
        }
        if frames {
            self.write_ack(now, path, space, packet, limit, &mut sent);
        }
        if epoch == Epoch::Data && frames {
            ack_eliciting |= self.write_qoe(packet, limit);
            for raw in std::mem::take(&mut self.raw_frames) {
                packet.extend_from_slice(&raw);
                ack_eliciting = true;
            }
            ack_eliciting |= self.write_path_frames(now, path, packet, limit);
            ack_eliciting |= self.write_connection_control(packet, limit, &mut sent);
        }
        if frames {
            ack_eliciting |= self.write_crypto(epoch, packet, limit, &mut sent);
        }
        if epoch == Epoch::Data && self.state_allows_data() && plan.data {
            let rtt = self.flow_control_rtt(path);
            let before = packet.len();
            let room = limit.saturating_sub(packet.len());
            self.streams
                .write_control_frames(now, rtt, packet, room, &mut sent.streams);
            // Datagrams before stream data: they are not retransmitted, and a stream's data
            // waits for its gaps anyway.
            self.write_datagrams(path, packet, enc.header_len, limit, &mut sent, false);
            let room = limit.saturating_sub(packet.len());
            let retransmitted = self.streams.stats().bytes_retransmitted;
            self.streams
                .write_stream_frames(packet, room, &mut sent.streams);
            // Per path: the stream bytes this packet carries again (lost or re-injected).
            let again = self.streams.stats().bytes_retransmitted - retransmitted;
            if let Some(p) = self.paths.get_mut(&path) {
                p.counters.retransmitted_bytes += again;
            }
            ack_eliciting |= packet.len() > before;
        }
        // RFC 9000 §13.2.4: a receiver that only sends ACKs never sees them acknowledged, so
        // its ranges are never pruned; every ACK_ONLY_PING_INTERVAL-th ACK-only packet asks for
        // an acknowledgement with a PING.
        let ack_only = !sent.acks.is_empty() && !ack_eliciting;
        let solicit =
            ack_only && epoch == Epoch::Data && self.ack_only_packets + 1 >= ACK_ONLY_PING_INTERVAL;
        if (plan.probe || solicit) && !ack_eliciting {
            Frame::Ping.encode(packet);
            ack_eliciting = true;
        }
        if epoch == Epoch::Data {
            self.ack_only_packets = if ack_eliciting {
                0
            } else {
                self.ack_only_packets + u32::from(ack_only)
            };
        }
        if packet.len() == enc.header_len && sent.acks.is_empty() {
            return None;
        }
        let padded = self.pad_packet(packet, &enc, plan.pad_to, limit);
        let length = packet.len() - enc.pn_offset + TAG_LEN;
        enc.set_length(packet, length);
        let qlog = self.qlog_frames(&header, &enc, packet);
        self.seal(epoch, path, pn, packet, &enc)?;
        self.qlog_packet_sent(now, (path, epoch, pn), packet.len(), qlog);
        self.send_space(space).next_pn();
        let in_flight = (ack_eliciting || padded) && plan.lone_probe.is_none();
        self.record_sent(
            now,
            path,
            epoch,
            space,
            pn,
            packet.len(),
            ack_eliciting,
            in_flight,
            sent,
        );
        Some(())
    }

    pub(crate) fn header_for(&self, epoch: Epoch, path: PathId) -> Option<Header> {
        let dcid = self.remote_cids.get(&path)?.current()?;
        let scid = *self
            .local_cids
            .get(&PathId::ZERO)?
            .get(0)
            .or_else(|| self.local_cids.get(&PathId::ZERO)?.all().next())?;
        Some(match epoch {
            Epoch::Initial => Header::Initial {
                version: QUIC_V1,
                dcid,
                scid,
                token: self.handshake.initial_token().clone(),
            },
            Epoch::Handshake => Header::Long {
                kind: mpquic_wire::header::PacketKind::Handshake,
                version: QUIC_V1,
                dcid,
                scid,
            },
            Epoch::Data => Header::Short {
                spin: false,
                key_phase: self.keys.key_phase(),
                dcid,
            },
        })
    }

    /// CRYPTO frames of `epoch` (RFC 9000 §19.6).
    fn write_crypto(
        &mut self,
        epoch: Epoch,
        packet: &mut Vec<u8>,
        limit: usize,
        sent: &mut SentFrames,
    ) -> bool {
        let mut wrote = false;
        loop {
            let room = limit.saturating_sub(packet.len());
            let Some(stream) = self.crypto[epoch.index()].as_mut() else {
                break;
            };
            let header = mpquic_wire::frame::crypto_frame_header_len(stream.send.end(), room);
            if room <= header + 1 {
                break;
            }
            let Some((offset, data)) = stream.send.next_chunk(room - header) else {
                break;
            };
            let len = data.len() as u64;
            Frame::Crypto { offset, data }.encode(packet);
            sent.crypto.push(offset..offset + len);
            wrote = true;
        }
        wrote
    }

    /// Pad for the minimum datagram size and for the header-protection sample (RFC 9001 §5.4.2:
    /// packet number + payload at least 4 bytes). Returns whether PADDING was added for size.
    pub(crate) fn pad_packet(
        &self,
        packet: &mut Vec<u8>,
        enc: &PartialEncode,
        pad_to: Option<usize>,
        limit: usize,
    ) -> bool {
        let min_for_sample = enc.pn_offset + 4;
        let target = pad_to
            .map_or(0, |t| t.saturating_sub(TAG_LEN).min(limit))
            .max(min_for_sample);
        if packet.len() < target {
            let padded_for_size =
                pad_to.is_some_and(|t| t.saturating_sub(TAG_LEN) > min_for_sample);
            packet.resize(target, 0);
            return padded_for_size;
        }
        false
    }

    pub(crate) fn seal(
        &mut self,
        epoch: Epoch,
        path: PathId,
        pn: u64,
        packet: &mut Vec<u8>,
        enc: &PartialEncode,
    ) -> Option<()> {
        // RFC 10069 §2.4: the 1-RTT nonce carries the path ID in per-path spaces.
        let nonce_path = if epoch == Epoch::Data {
            self.layout.nonce_path_id(path)
        } else {
            None
        };
        let result = self.keys.seal(epoch, nonce_path, pn, packet, enc)?;
        match result {
            Ok(()) => Some(()),
            Err(e) => {
                // RFC 9001 §6.6: past the confidentiality limit the connection must close.
                if let Some(code) = e.transport_error_code() {
                    if !self.is_closed() {
                        // The last activity time stands in for now: the closing period is 3 PTOs.
                        let now = self.idle_since;
                        self.close_with_error(
                            now,
                            crate::error::TransportError::new(code, e.to_string()),
                        );
                    }
                } else {
                    tracing::warn!("failed to seal a packet: {e}");
                }
                None
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record_sent(
        &mut self,
        now: Timestamp,
        path_id: PathId,
        epoch: Epoch,
        space: SpaceId,
        pn: u64,
        size: usize,
        ack_eliciting: bool,
        in_flight: bool,
        frames: SentFrames,
    ) {
        self.stats.packets_sent += 1;
        if epoch == Epoch::Data {
            self.keys.count_one_rtt_sent();
        }
        let stream_bytes: u64 = frames.streams.stream.iter().map(|c| c.len).sum();
        let Some(path) = self.paths.get_mut(&path_id) else {
            return;
        };
        path.counters.packets_sent += 1;
        path.counters.bytes_sent += size as u64;
        path.counters.stream_bytes_sent += stream_bytes;
        // RFC 9002 §A.5: every packet is remembered, but only ack-eliciting or padded ones are
        // in flight. ACK-only packets are kept in the Initial and Handshake spaces so that the
        // peer's ACKs of them reveal an earlier lost packet by the packet threshold (§6.1.1):
        // otherwise a lost first flight waits for a PTO. In the application space ack-eliciting
        // packets flow both ways, and a bulk receiver's many ACK-only packets are left out.
        if !ack_eliciting && !in_flight && epoch == Epoch::Data {
            return;
        }
        let delivery = if in_flight {
            path.delivery.on_packet_sent(now, path.bytes_in_flight())
        } else {
            Default::default()
        };
        let ecn = self.config.ecn && path.ecn.is_marking();
        let packet = SentPacket {
            ecn,
            pn,
            space,
            time_sent: now,
            size: size as u64,
            ack_eliciting,
            in_flight,
            delivery,
            frames,
            reinjected: false,
            old_route: false,
        };
        let seq = path.ledger(epoch).on_sent(packet);
        if in_flight {
            let in_flight_now = path.bytes_in_flight();
            path.cc.on_packet_sent(now, size as u64, in_flight_now);
            path.pacer.on_sent(now, size as u64);
        }
        self.send_space(space).on_sent(pn, path_id, seq);
    }
}

/// Seals a long-header packet (Initial, 0-RTT, Handshake) encoded as `enc` with `keys`:
/// no path ID in the nonce (RFC 10069 uses it for 1-RTT packets only).
pub(crate) fn seal_long(
    keys: &crate::crypto::DirectionalKeys,
    pn: u64,
    packet: &mut Vec<u8>,
    enc: &PartialEncode,
) -> Result<(), crate::crypto::CryptoError> {
    seal_packet(
        keys,
        None,
        pn,
        packet,
        enc.header_len,
        enc.pn_offset,
        enc.pn_len,
    )
}
