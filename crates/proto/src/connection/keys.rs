//! Packet protection keys of a connection, one set per encryption level (RFC 9001 §4), their
//! discarding (§4.9) and the bookkeeping of 1-RTT key updates (§6): when we may initiate one,
//! when our update counts as confirmed, and when the previous receive key is dropped.

use std::ops::Range;

use mpquic_wire::header::PartialEncode;
use rustls::quic::HeaderProtectionKey;

use crate::crypto::{
    open_payload, CryptoError, Epoch, KeyPair, KeyUpdateOutcome, OneRttKeys, PacketProtection,
};
use crate::space::SpaceId;
use crate::time::Timestamp;

/// The keys of every encryption level and the key update state of the 1-RTT level.
#[derive(Debug)]
pub(crate) struct Keys {
    initial: Option<KeyPair>,
    handshake: Option<KeyPair>,
    one_rtt: Option<OneRttKeys>,
    /// Real 1-RTT keys, or the simulator's stand-ins (`crypto::sim`; not secure).
    protection: PacketProtection,
    /// When the previous 1-RTT receive key may be dropped after a key update (RFC 9001 §6.5).
    drop_previous_at: Option<Timestamp>,
    /// Packets sent with the current 1-RTT key (for configured key updates).
    sent_since_update: u64,
    /// Our key update waits for an acknowledgement of this packet (space, packet number) or a
    /// later one before the next may start (RFC 9001 §6.1).
    update_acked_pn: Option<(SpaceId, u64)>,
    /// No key update is initiated before this (RFC 10069 §"Key Phase Update Process").
    next_update_at: Option<Timestamp>,
}

impl Keys {
    /// No keys yet; 1-RTT keys, once TLS produces them, are protected as `protection` says.
    pub(crate) fn new(protection: PacketProtection) -> Self {
        Self {
            initial: None,
            handshake: None,
            one_rtt: None,
            protection,
            drop_previous_at: None,
            sent_since_update: 0,
            update_acked_pn: None,
            next_update_at: None,
        }
    }

    /// Install (or, after a Retry, replace: RFC 9001 §5.2) the Initial keys.
    pub(crate) fn install_initial(&mut self, keys: KeyPair) {
        self.initial = Some(keys);
    }

    /// Install the Handshake keys TLS produced.
    pub(crate) fn install_handshake(&mut self, keys: KeyPair) {
        self.handshake = Some(keys);
    }

    /// Install the 1-RTT keys TLS produced.
    pub(crate) fn install_one_rtt(&mut self, keys: OneRttKeys) {
        self.one_rtt = Some(match self.protection {
            PacketProtection::Real => keys,
            // Simulator only, not secure (crypto::sim): the handshake was real; only the
            // derived 1-RTT keys are swapped.
            PacketProtection::SimulationOnly => keys.into_simulation_only(),
        });
    }

    /// Whether the level's keys are installed (and not discarded).
    #[inline]
    pub(crate) fn has(&self, epoch: Epoch) -> bool {
        match epoch {
            Epoch::Initial => self.initial.is_some(),
            Epoch::Handshake => self.handshake.is_some(),
            Epoch::Data => self.one_rtt.is_some(),
        }
    }

    /// Whether Initial or Handshake keys are still installed: the handshake levels are in use.
    #[inline]
    pub(crate) fn has_handshake_levels(&self) -> bool {
        self.initial.is_some() || self.handshake.is_some()
    }

    /// RFC 9001 §4.9: discard the Initial or Handshake keys. Returns whether they were
    /// installed. 1-RTT keys are never discarded: they live as long as the connection.
    pub(crate) fn discard(&mut self, epoch: Epoch) -> bool {
        match epoch {
            Epoch::Initial => self.initial.take().is_some(),
            Epoch::Handshake => self.handshake.take().is_some(),
            Epoch::Data => false,
        }
    }

    /// The key that removes the peer's header protection at this level.
    #[inline]
    pub(crate) fn remote_header(&self, epoch: Epoch) -> Option<&dyn HeaderProtectionKey> {
        match epoch {
            Epoch::Initial => self.initial.as_ref().map(|k| k.remote.header.as_ref()),
            Epoch::Handshake => self.handshake.as_ref().map(|k| k.remote.header.as_ref()),
            Epoch::Data => self.one_rtt.as_ref().map(|k| k.remote_header()),
        }
    }

    /// Decrypt a payload whose header protection was removed (1-RTT: by key phase, with key
    /// update, RFC 9001 §6). `nonce_path` is the path ID in the 1-RTT nonce (RFC 10069 §2.4),
    /// unused for the long-header levels. None when the level has no keys.
    #[inline]
    pub(crate) fn open(
        &mut self,
        epoch: Epoch,
        nonce_path: Option<u32>,
        pn: u64,
        buf: &mut [u8],
        header_len: usize,
        key_phase: bool,
    ) -> Option<Result<(Range<usize>, KeyUpdateOutcome), CryptoError>> {
        let keys = match epoch {
            Epoch::Initial => self.initial.as_ref()?,
            Epoch::Handshake => self.handshake.as_ref()?,
            Epoch::Data => {
                return Some(
                    self.one_rtt
                        .as_mut()?
                        .open(nonce_path, pn, buf, header_len, key_phase),
                )
            }
        };
        Some(
            open_payload(keys.remote.packet.as_ref(), None, pn, buf, header_len)
                .map(|r| (r, KeyUpdateOutcome::Current)),
        )
    }

    /// Protect a packet at this level (see [`Keys::open`] for `nonce_path`). None when the level
    /// has no keys.
    #[inline]
    pub(crate) fn seal(
        &mut self,
        epoch: Epoch,
        nonce_path: Option<u32>,
        pn: u64,
        packet: &mut Vec<u8>,
        enc: &PartialEncode,
    ) -> Option<Result<(), CryptoError>> {
        let keys = match epoch {
            Epoch::Initial => self.initial.as_ref()?,
            Epoch::Handshake => self.handshake.as_ref()?,
            Epoch::Data => {
                return Some(self.one_rtt.as_mut()?.seal(
                    nonce_path,
                    pn,
                    packet,
                    enc.header_len,
                    enc.pn_offset,
                    enc.pn_len,
                ))
            }
        };
        Some(super::send::seal_long(&keys.local, pn, packet, enc))
    }

    /// The Key Phase bit of our next 1-RTT packet (RFC 9000 §17.3.1).
    #[inline]
    pub(crate) fn key_phase(&self) -> bool {
        self.one_rtt.as_ref().is_some_and(|k| k.key_phase())
    }

    /// How many key updates the 1-RTT keys went through (None before they are installed).
    pub(crate) fn one_rtt_generation(&self) -> Option<u64> {
        self.one_rtt.as_ref().map(|k| k.generation())
    }

    /// RFC 9001 §6.1: key updates are allowed once the handshake is confirmed.
    pub(crate) fn on_handshake_confirmed(&mut self) {
        if let Some(keys) = self.one_rtt.as_mut() {
            keys.set_handshake_confirmed();
        }
    }

    /// A 1-RTT packet was sent with the current key.
    #[inline]
    pub(crate) fn count_one_rtt_sent(&mut self) {
        self.sent_since_update += 1;
    }

    /// Initiate a key update (RFC 9001 §6.1) when one is due: forced by the AEAD limits
    /// (§6.6), or after `interval` packets with the current key. Not while the previous receive
    /// key is kept, nor before our last update was acknowledged. An update the limits do not
    /// force also waits for `next_update_at` and while `path_pending()` (a path being
    /// validated may carry packets the peer has not seen). `next_pn()` names the first packet
    /// of the new phase, whose acknowledgement confirms the update. Returns whether it started.
    pub(crate) fn initiate_update_if_due(
        &mut self,
        now: Timestamp,
        interval: Option<u64>,
        path_pending: impl FnOnce() -> bool,
        next_pn: impl FnOnce() -> (SpaceId, u64),
    ) -> bool {
        let waiting = self.next_update_at.is_some_and(|t| now < t);
        let Some(keys) = self.one_rtt.as_mut() else {
            return false;
        };
        let forced = keys.needs_key_update();
        let due = forced || interval.is_some_and(|n| self.sent_since_update >= n);
        if !due || self.drop_previous_at.is_some() {
            return false;
        }
        // AEAD limits (RFC 9001 §6.6) are not deferred: they protect confidentiality.
        if !forced && (waiting || path_pending()) {
            return false;
        }
        let acked = self.update_acked_pn.is_none();
        if !(keys.can_initiate_update(acked) && keys.initiate_update(acked).is_ok()) {
            return false;
        }
        self.sent_since_update = 0;
        self.update_acked_pn = Some(next_pn());
        true
    }

    /// A packet was acknowledged. Returns true when it confirms our key update (it is the
    /// first packet of the new phase or a later one in that space); the caller then sets when
    /// the next update may start ([`Keys::defer_next_update`]).
    #[inline]
    pub(crate) fn update_confirmed_by(&mut self, space: SpaceId, pn: u64) -> bool {
        match self.update_acked_pn {
            Some((s, first)) if s == space && pn >= first => {
                self.update_acked_pn = None;
                true
            }
            _ => false,
        }
    }

    /// No key update is initiated before `at` (RFC 10069 §"Key Phase Update Process": three
    /// times the largest PTO after the previous one was confirmed).
    pub(crate) fn defer_next_update(&mut self, at: Timestamp) {
        self.next_update_at = Some(at);
    }

    /// The peer updated its keys or followed our update (a packet opened under the new keys):
    /// keep the previous receive key until `drop_previous_at` (RFC 9001 §6.5) and count packets
    /// of the new phase from zero.
    pub(crate) fn on_peer_key_update(&mut self, drop_previous_at: Timestamp) {
        self.drop_previous_at = Some(drop_previous_at);
        self.sent_since_update = 0;
    }

    /// When the previous receive key is to be dropped, if one is kept.
    pub(crate) fn drop_previous_deadline(&self) -> Option<Timestamp> {
        self.drop_previous_at
    }

    /// Drop the previous receive key once its time has come.
    pub(crate) fn on_timeout(&mut self, now: Timestamp) {
        if self.drop_previous_at.is_some_and(|t| now >= t) {
            self.drop_previous_at = None;
            if let Some(keys) = self.one_rtt.as_mut() {
                keys.drop_previous_remote();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use mpquic_wire::stream_id::Side;

    use super::*;
    use crate::crypto::initial_keys;
    use crate::crypto::one_rtt::KEY_PHASE_BIT;
    use crate::crypto::remove_header_protection;
    use crate::path::PathId;
    use crate::time::Duration;

    /// Short header: first byte 0x43 (4-byte packet number), 8-byte DCID, packet number, payload.
    fn short(pn: u64) -> Vec<u8> {
        let mut p = vec![0x43];
        p.extend_from_slice(&[0xaa; 8]);
        p.extend_from_slice(&(pn as u32).to_be_bytes());
        p.extend_from_slice(b"some payload");
        p
    }

    fn enc() -> PartialEncode {
        PartialEncode {
            header_len: 13,
            pn_offset: 9,
            pn_len: 4,
            length_offset: None,
            start: 0,
        }
    }

    /// Seal `pn` at `epoch` with `tx`, open it with `rx` (None: a side lacks the keys).
    fn pass(tx: &mut Keys, rx: &mut Keys, epoch: Epoch, pn: u64) -> Option<KeyUpdateOutcome> {
        let mut p = short(pn);
        if epoch != Epoch::Data {
            p[0] = 0xc3; // a long header: 4 protected bits
        }
        tx.seal(epoch, Some(0), pn, &mut p, &enc())?.unwrap();
        let (first, _) = remove_header_protection(rx.remote_header(epoch)?, &mut p, 9).unwrap();
        let phase = first & KEY_PHASE_BIT != 0;
        let (r, outcome) = rx.open(epoch, Some(0), pn, &mut p, 13, phase)?.unwrap();
        assert_eq!(&p[r], b"some payload");
        Some(outcome)
    }

    #[test]
    fn levels_are_installed_used_and_discarded() {
        let mut client = Keys::new(PacketProtection::Real);
        let mut server = Keys::new(PacketProtection::Real);
        assert!(!client.has_handshake_levels() && !client.has(Epoch::Initial));
        assert!(pass(&mut client, &mut server, Epoch::Initial, 0).is_none());
        client.install_initial(initial_keys(&[1, 2, 3, 4], Side::Client));
        server.install_initial(initial_keys(&[1, 2, 3, 4], Side::Server));
        assert!(client.has(Epoch::Initial) && client.has_handshake_levels());
        assert_eq!(
            pass(&mut client, &mut server, Epoch::Initial, 7),
            Some(KeyUpdateOutcome::Current)
        );
        // RFC 9001 §4.9: discarded keys neither seal nor open; 1-RTT keys are never discarded.
        assert!(client.discard(Epoch::Initial));
        assert!(!client.discard(Epoch::Initial) && !client.discard(Epoch::Data));
        assert!(!client.has_handshake_levels());
        assert!(pass(&mut client, &mut server, Epoch::Initial, 8).is_none());
        assert!(pass(&mut server, &mut client, Epoch::Initial, 8).is_none());
        assert!(!client.key_phase() && client.one_rtt_generation().is_none());
    }

    /// Both sides' 1-RTT keys, handshake confirmed.
    fn confirmed_pair(protection: PacketProtection) -> (Keys, Keys) {
        let (c, s) = crate::crypto::tls::tests::one_rtt_pair();
        let (mut client, mut server) = (Keys::new(protection), Keys::new(protection));
        client.install_one_rtt(c);
        server.install_one_rtt(s);
        client.on_handshake_confirmed();
        server.on_handshake_confirmed();
        (client, server)
    }

    fn t(ms: u64) -> Timestamp {
        Timestamp::from_nanos(0) + Duration::from_millis(ms)
    }

    #[test]
    fn a_key_update_waits_for_its_interval_acknowledgement_and_the_previous_key() {
        for protection in [PacketProtection::Real, PacketProtection::SimulationOnly] {
            let (mut client, mut server) = confirmed_pair(protection);
            let (never, next) = (|| false, || (SpaceId::Data(PathId::ZERO), 3));
            assert!(!client.initiate_update_if_due(t(0), None, never, next));
            client.count_one_rtt_sent();
            assert!(!client.initiate_update_if_due(t(0), Some(2), never, next));
            client.count_one_rtt_sent();
            // A path under validation defers an update the AEAD limits do not force.
            assert!(!client.initiate_update_if_due(t(0), Some(2), || true, next));
            assert!(client.initiate_update_if_due(t(0), Some(2), never, next));
            assert_eq!(client.one_rtt_generation(), Some(1));
            assert!(client.key_phase());
            // The server follows when it opens a packet of the new phase (RFC 9001 §6.2).
            let outcome = pass(&mut client, &mut server, Epoch::Data, 3);
            assert_eq!(outcome, Some(KeyUpdateOutcome::PeerUpdated));
            server.on_peer_key_update(t(30));
            assert_eq!(server.drop_previous_deadline(), Some(t(30)));
            let outcome = pass(&mut server, &mut client, Epoch::Data, 1);
            assert_eq!(outcome, Some(KeyUpdateOutcome::PeerFollowed));
            client.on_peer_key_update(t(40));
            // No second update before our first is acknowledged, nor while a previous key is kept.
            for _ in 0..2 {
                client.count_one_rtt_sent();
            }
            assert!(!client.initiate_update_if_due(t(50), Some(2), never, next));
            assert!(!client.update_confirmed_by(SpaceId::Data(PathId::ZERO), 2));
            assert!(!client.update_confirmed_by(SpaceId::Initial, 3));
            assert!(client.update_confirmed_by(SpaceId::Data(PathId::ZERO), 4));
            assert!(
                !client.update_confirmed_by(SpaceId::Data(PathId::ZERO), 5),
                "confirmed once"
            );
            client.defer_next_update(t(100));
            client.on_timeout(t(39));
            assert_eq!(client.drop_previous_deadline(), Some(t(40)));
            client.on_timeout(t(40));
            assert_eq!(client.drop_previous_deadline(), None);
            assert!(!client.initiate_update_if_due(t(99), Some(2), never, next));
            assert!(client.initiate_update_if_due(t(100), Some(2), never, next));
            assert_eq!(client.one_rtt_generation(), Some(2));
        }
    }
}
