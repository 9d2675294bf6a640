//! 1-RTT keys and key update (RFC 9001 §6), AEAD usage limits (RFC 9001 §6.6), over all paths of
//! a multipath connection (RFC 10069 §"Key Phase Update Process").
//!
//! # Calling protocol
//!
//! Sending a short-header packet: build it with the Key Phase bit of [`OneRttKeys::key_phase`]
//! (or let [`OneRttKeys::seal`] set it), then [`OneRttKeys::seal`]. Before sending, check
//! [`OneRttKeys::needs_key_update`]: when true, call [`OneRttKeys::initiate_update`] if
//! [`OneRttKeys::can_initiate_update`] allows; when the confidentiality limit is reached anyway,
//! `seal` fails with [`CryptoError::ConfidentialityLimitReached`] and the connection must close
//! with AEAD_LIMIT_REACHED (RFC 9001 §6.6: better before, so the close can still be sent).
//!
//! Receiving: [`super::remove_header_protection`] with [`OneRttKeys::remote_header`], read the Key
//! Phase bit (0x04 of the unprotected first byte), decode the packet number against the largest
//! one received *on that path*, then [`OneRttKeys::open`]. Act on the [`KeyUpdateOutcome`]:
//! after `PeerUpdated` or `PeerFollowed`, arm a timer of three times the largest PTO among all
//! paths (RFC 9001 §6.5, RFC 10069 §"Key Phase Update Process") and call
//! [`OneRttKeys::drop_previous_remote`] when it fires. A `PeerUpdated` packet must be acknowledged
//! in a packet sent with the updated keys, which `seal` does automatically (RFC 9001 §6.2).
//!
//! The key phase is connection-wide: one [`OneRttKeys`] serves all paths, and `path_id` only
//! changes the nonce (RFC 10069 §"Nonce Calculation"). Packet numbers are compared per path
//! (each path has its own packet number space), so the path-0 space of a single-path connection
//! (`path_id` `None`) and path 0 of a multipath one (`Some(0)`) are the same space.

use std::fmt;
use std::mem;
use std::ops::Range;

use rustls::quic::{HeaderProtectionKey, PacketKey, PacketKeySet, Secrets};

use super::protect::{open_payload, seal_with, Layout};
use super::sim::{self, PacketProtection, SimHeaderKey};
use super::{CryptoError, DirectionalKeys};
use crate::small_map::SmallMap;

/// Initiate a key update this many packets before the confidentiality limit (at most half the
/// limit), so that it is acknowledged before the limit is hit (RFC 9001 §6.6: "Endpoints MUST
/// initiate a key update before sending more protected packets than the confidentiality limit").
pub(crate) const KEY_UPDATE_MARGIN: u64 = 10_000;

/// The Key Phase bit of a short header (RFC 9000 §17.3.1).
pub(crate) const KEY_PHASE_BIT: u8 = 0x04;

/// What [`OneRttKeys::open`] did with the key phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyUpdateOutcome {
    /// Decrypted with the current keys; nothing changed.
    Current,
    /// Decrypted with the previous keys (a packet sent before the last key update, delivered
    /// late, RFC 9001 §6.5).
    Previous,
    /// The peer initiated a key update: the packet decrypted with the next keys, and we updated
    /// our send keys and key phase in response (RFC 9001 §6.2). Arm the 3×PTO timer that ends in
    /// [`OneRttKeys::drop_previous_remote`].
    PeerUpdated,
    /// First packet from the peer under the keys of our own key update: the peer has followed
    /// it (RFC 9001 §6.1). Arm the 3×PTO timer that ends in [`OneRttKeys::drop_previous_remote`].
    PeerFollowed,
}

/// Packet numbers received with the current keys on one path.
#[derive(Debug, Clone, Copy)]
struct PhaseSpan {
    lowest: u64,
    largest: u64,
}

/// The 1-RTT keys of a connection, with key update (RFC 9001 §6).
///
/// Holds: the header protection keys (never updated, RFC 9001 §6.1), the current send and
/// receive packet keys, the precomputed next generation of both (RFC 9001 §6.3: "Endpoints are
/// generally expected to have current and next receive packet protection keys available"), the
/// previous receive key until [`Self::drop_previous_remote`], the rustls [`Secrets`] that derive
/// later generations ("quic ku", RFC 9001 §6.1), and the AEAD usage counters (RFC 9001 §6.6).
pub(crate) struct OneRttKeys {
    local_header: Box<dyn HeaderProtectionKey>,
    remote_header: Box<dyn HeaderProtectionKey>,
    local: Box<dyn PacketKey>,
    remote: Box<dyn PacketKey>,
    next: PacketKeySet,
    previous_remote: Option<Box<dyn PacketKey>>,
    /// Boxed: `OkmBlock`s are large, and this struct travels inside `HandshakeOutput`.
    secrets: Box<Secrets>,
    key_phase: bool,
    /// Number of key updates done (generation of `local`/`remote`).
    generation: u64,
    /// Per path (`None` counts as path 0): packet numbers received with the current keys.
    /// A sorted vector: one entry per path that received with these keys (a B-tree's first
    /// node alone is 232 bytes; issue 19, memory per connection).
    received: SmallMap<u32, PhaseSpan>,
    /// We initiated the current key phase and have not yet received a packet under it.
    awaiting_peer: bool,
    handshake_confirmed: bool,
    sent_with_current: u64,
    auth_failures: u64,
    confidentiality_limit: u64,
    integrity_limit: u64,
    /// Real keys, or the simulator's stand-ins for every generation (see [`super::sim`]).
    protection: PacketProtection,
}

impl OneRttKeys {
    /// Builds the 1-RTT keys from rustls' `KeyChange::OneRtt { keys, next }`: `keys` are key
    /// phase 0, `next` derives phase 1 and later.
    pub(crate) fn new(keys: rustls::quic::Keys, mut next: Secrets) -> Self {
        let next_keys = next.next_packet_keys();
        let local: DirectionalKeys = keys.local.into();
        let remote: DirectionalKeys = keys.remote.into();
        let confidentiality_limit = local.packet.confidentiality_limit();
        let integrity_limit = remote.packet.integrity_limit();
        Self {
            local_header: local.header,
            remote_header: remote.header,
            local: local.packet,
            remote: remote.packet,
            next: next_keys,
            previous_remote: None,
            secrets: Box::new(next),
            key_phase: false,
            generation: 0,
            received: SmallMap::new(),
            awaiting_peer: false,
            handshake_confirmed: false,
            sent_with_current: 0,
            auth_failures: 0,
            confidentiality_limit,
            integrity_limit,
            protection: PacketProtection::Real,
        }
    }

    /// **Not secure; simulator only.** Replaces every key (this generation, the precomputed
    /// next one and all later ones) with the stand-ins of [`super::sim`]: plaintext payloads,
    /// checksum tags of the real size, the real AEAD limits. Both endpoints must do it (the
    /// stand-ins are derived from the real keys, so they agree); reached only through
    /// [`crate::Endpoint::new_for_simulation`].
    pub(crate) fn into_simulation_only(mut self) -> Self {
        if self.protection == PacketProtection::SimulationOnly {
            return self;
        }
        let p = PacketProtection::SimulationOnly;
        self.local_header = Box::new(SimHeaderKey::from_real_packet_key(self.local.as_ref()));
        self.remote_header = Box::new(SimHeaderKey::from_real_packet_key(self.remote.as_ref()));
        self.local = sim::packet_key(self.local, p);
        self.remote = sim::packet_key(self.remote, p);
        self.previous_remote = self.previous_remote.map(|k| sim::packet_key(k, p));
        self.next = PacketKeySet {
            local: sim::packet_key(self.next.local, p),
            remote: sim::packet_key(self.next.remote, p),
        };
        self.protection = p;
        self
    }

    /// Whether these are the simulator's stand-in keys ([`Self::into_simulation_only`]).
    #[cfg(test)]
    pub(crate) fn protection(&self) -> PacketProtection {
        self.protection
    }

    /// Lowers the AEAD limits below the cipher suite's (RFC 9001 §6.6 allows stricter limits;
    /// used by tests and simulations to exercise key updates and AEAD_LIMIT_REACHED). Values
    /// above the suite's limits are ignored.
    #[cfg(test)]
    pub(crate) fn set_limits(&mut self, confidentiality: u64, integrity: u64) {
        self.confidentiality_limit = confidentiality.min(self.local.confidentiality_limit());
        self.integrity_limit = integrity.min(self.remote.integrity_limit());
    }

    /// The Key Phase bit to put in short headers we send (RFC 9001 §6: starts at 0, toggles on
    /// each update).
    pub(crate) fn key_phase(&self) -> bool {
        self.key_phase
    }

    /// How many key updates happened so far.
    pub(crate) fn generation(&self) -> u64 {
        self.generation
    }

    /// Header protection key for packets we receive (never changes, RFC 9001 §6.1).
    pub(crate) fn remote_header(&self) -> &dyn HeaderProtectionKey {
        self.remote_header.as_ref()
    }

    /// The receive key for a packet with Key Phase `phase`, selecting by the key phase bit alone
    /// (the two-key scheme of RFC 9001 §6.5, which RFC 10069 §"Key Phase Update Process" relies
    /// on): the current key if `phase` is the current phase, else the previous key while it is
    /// retained, else `None` (the packet may start a peer-initiated update: use [`Self::open`],
    /// which also tries the next key and commits the update). Prefer [`Self::open`].
    #[cfg(test)]
    pub(crate) fn remote_key_for(&self, phase: bool) -> Option<&dyn PacketKey> {
        if phase == self.key_phase {
            Some(self.remote.as_ref())
        } else {
            self.previous_remote.as_deref()
        }
    }

    /// Whether the previous receive key is still retained.
    #[cfg(test)]
    pub(crate) fn has_previous_remote(&self) -> bool {
        self.previous_remote.is_some()
    }

    /// Tells the keys the handshake is confirmed (RFC 9001 §4.1.2); until then no key update may
    /// be initiated (RFC 9001 §6.1).
    pub(crate) fn set_handshake_confirmed(&mut self) {
        self.handshake_confirmed = true;
    }

    /// Encrypts and header-protects a short-header packet with the current keys (see
    /// [`super::seal_packet`] for the buffer layout). Sets the Key Phase bit of `packet[0]` to
    /// [`Self::key_phase`] before sealing, and counts the packet against the confidentiality
    /// limit (RFC 9001 §6.6; RFC 10069 §"Security Considerations": the limit counts packets on
    /// all paths together).
    pub(crate) fn seal(
        &mut self,
        path_id: Option<u32>,
        pn: u64,
        packet: &mut Vec<u8>,
        header_len: usize,
        pn_offset: usize,
        pn_len: usize,
    ) -> Result<(), CryptoError> {
        let Some(first) = packet.first_mut() else {
            return Err(CryptoError::PacketTooShort { needed: 1, have: 0 });
        };
        if *first & 0x80 != 0 {
            return Err(CryptoError::InvalidArgument(
                "1-RTT packets use the short header",
            ));
        }
        if self.sent_with_current >= self.confidentiality_limit {
            return Err(CryptoError::ConfidentialityLimitReached);
        }
        *first = (*first & !KEY_PHASE_BIT) | if self.key_phase { KEY_PHASE_BIT } else { 0 };
        let layout = Layout {
            header_len,
            pn_offset,
            pn_len,
        };
        seal_with(
            self.local_header.as_ref(),
            self.local.as_ref(),
            path_id,
            pn,
            packet,
            layout,
        )?;
        self.sent_with_current += 1;
        Ok(())
    }

    /// Packets that may still be sent with the current keys before the confidentiality limit.
    #[cfg(test)]
    pub(crate) fn remaining_before_confidentiality_limit(&self) -> u64 {
        self.confidentiality_limit
            .saturating_sub(self.sent_with_current)
    }

    /// True once the current keys are within [`KEY_UPDATE_MARGIN`] (at most half the limit) of
    /// the confidentiality limit: initiate a key update now (RFC 9001 §6.6), or close with
    /// AEAD_LIMIT_REACHED if one is not possible.
    pub(crate) fn needs_key_update(&self) -> bool {
        let margin = KEY_UPDATE_MARGIN.min(self.confidentiality_limit / 2);
        self.sent_with_current >= self.confidentiality_limit - margin
    }

    /// The confidentiality limit in force (packets per key).
    #[cfg(test)]
    pub(crate) fn confidentiality_limit(&self) -> u64 {
        self.confidentiality_limit
    }

    /// The integrity limit in force (failed authentications per connection).
    #[cfg(test)]
    pub(crate) fn integrity_limit(&self) -> u64 {
        self.integrity_limit
    }

    /// Packets that failed authentication so far (1-RTT, plus any recorded with
    /// [`Self::record_auth_failure`]).
    #[cfg(test)]
    pub(crate) fn auth_failures(&self) -> u64 {
        self.auth_failures
    }

    /// Counts one packet that failed authentication (RFC 9001 §6.6: "across all keys" of the
    /// connection, so the caller may add Initial/Handshake failures here). Returns
    /// [`CryptoError::IntegrityLimitReached`] once the count exceeds the integrity limit: close
    /// the connection with AEAD_LIMIT_REACHED and process no more packets.
    pub(crate) fn record_auth_failure(&mut self) -> Result<(), CryptoError> {
        self.auth_failures = self.auth_failures.saturating_add(1);
        if self.auth_failures > self.integrity_limit {
            Err(CryptoError::IntegrityLimitReached)
        } else {
            Ok(())
        }
    }

    /// Whether a locally initiated key update is allowed now (RFC 9001 §6.1): the handshake is
    /// confirmed ([`Self::set_handshake_confirmed`]); `current_phase_acked` — maintained by the
    /// caller — says a packet sent with the current keys has been acknowledged (track the lowest
    /// packet number sent in this phase per path, RFC 9001 §6.1); the peer has sent with the
    /// current keys; and the previous receive key has been dropped, which the caller does three
    /// times the largest PTO after [`KeyUpdateOutcome::PeerUpdated`]/[`KeyUpdateOutcome::PeerFollowed`]
    /// (RFC 9001 §6.5 and RFC 10069: "SHOULD wait for at least three times the largest PTO").
    pub(crate) fn can_initiate_update(&self, current_phase_acked: bool) -> bool {
        self.handshake_confirmed
            && current_phase_acked
            && !self.awaiting_peer
            && self.previous_remote.is_none()
    }

    /// Initiates a key update (RFC 9001 §6.1): new send and receive keys, Key Phase toggled; the
    /// current receive key is kept as the previous one for late packets. Fails with
    /// [`CryptoError::KeyUpdateNotAllowed`] unless [`Self::can_initiate_update`] holds.
    pub(crate) fn initiate_update(&mut self, current_phase_acked: bool) -> Result<(), CryptoError> {
        if !self.can_initiate_update(current_phase_acked) {
            return Err(CryptoError::KeyUpdateNotAllowed);
        }
        self.rotate();
        self.awaiting_peer = true;
        Ok(())
    }

    /// Discards the previous receive key (RFC 9001 §6.5: "An endpoint SHOULD retain old read
    /// keys for no more than three times the PTO after having received a packet protected using
    /// the new keys"). Afterwards a packet with the other key phase is taken as a new update.
    pub(crate) fn drop_previous_remote(&mut self) {
        self.previous_remote = None;
    }

    /// Moves to the next key generation: next becomes current, current receive becomes previous.
    fn rotate(&mut self) {
        let fresh = self.secrets.next_packet_keys();
        let fresh = PacketKeySet {
            local: sim::packet_key(fresh.local, self.protection),
            remote: sim::packet_key(fresh.remote, self.protection),
        };
        let next = mem::replace(&mut self.next, fresh);
        self.local = next.local;
        self.previous_remote = Some(mem::replace(&mut self.remote, next.remote));
        self.key_phase = !self.key_phase;
        self.generation += 1;
        self.received = SmallMap::new();
        self.sent_with_current = 0;
    }

    fn note_received(&mut self, path: u32, pn: u64) {
        match self.received.get_mut(&path) {
            Some(s) => {
                s.lowest = s.lowest.min(pn);
                s.largest = s.largest.max(pn);
            }
            None => {
                self.received.insert(
                    path,
                    PhaseSpan {
                        lowest: pn,
                        largest: pn,
                    },
                );
            }
        }
    }

    /// Decrypts a 1-RTT packet whose header protection was removed (see [`super::open_payload`]
    /// for the buffer layout), choosing the key by Key Phase and packet number (RFC 9001 §6.3,
    /// §6.5), per path:
    ///
    /// - `key_phase_bit` equal to [`Self::key_phase`]: the current key.
    /// - otherwise, while the previous key is retained and the packet number is below every
    ///   packet number received with the current keys on this path (or none was received on this
    ///   path yet): the previous key ([`KeyUpdateOutcome::Previous`]). If that fails and this path
    ///   has no current-phase packet yet, the next key is tried too.
    /// - otherwise: the next key. Success means the peer updated its keys: we update ours
    ///   ([`KeyUpdateOutcome::PeerUpdated`]). If its packet number is lower than one already
    ///   received with the current keys on this path, the peer used newer keys for a lower packet
    ///   number: [`CryptoError::KeyUpdate`] (RFC 9001 §6.4, KEY_UPDATE_ERROR).
    ///
    /// A packet that fails authentication leaves the key state unchanged and counts against the
    /// integrity limit: [`CryptoError::Decrypt`] (drop it), or
    /// [`CryptoError::IntegrityLimitReached`] (close with AEAD_LIMIT_REACHED).
    pub(crate) fn open(
        &mut self,
        path_id: Option<u32>,
        pn: u64,
        packet: &mut [u8],
        header_len: usize,
        key_phase_bit: bool,
    ) -> Result<(Range<usize>, KeyUpdateOutcome), CryptoError> {
        let path = path_id.unwrap_or(0);
        let span = self.received.get(&path).copied();
        let result = if key_phase_bit == self.key_phase {
            open_payload(self.remote.as_ref(), path_id, pn, packet, header_len)
                .map(|r| (r, KeyUpdateOutcome::Current))
        } else if self.previous_remote.is_some() && span.is_none_or(|s| pn < s.lowest) {
            self.open_previous_or_next(path_id, pn, packet, header_len, span.is_none())
        } else {
            open_payload(self.next.remote.as_ref(), path_id, pn, packet, header_len)
                .map(|r| (r, KeyUpdateOutcome::PeerUpdated))
        };
        let (range, mut outcome) = match result {
            Ok(ok) => ok,
            Err(CryptoError::Decrypt) => {
                self.record_auth_failure()?;
                return Err(CryptoError::Decrypt);
            }
            Err(e) => return Err(e),
        };
        match outcome {
            KeyUpdateOutcome::Current => {
                if mem::take(&mut self.awaiting_peer) {
                    outcome = KeyUpdateOutcome::PeerFollowed;
                }
                self.note_received(path, pn);
            }
            KeyUpdateOutcome::Previous => {}
            KeyUpdateOutcome::PeerUpdated | KeyUpdateOutcome::PeerFollowed => {
                if span.is_some_and(|s| pn < s.largest) {
                    return Err(CryptoError::KeyUpdate(
                        "newer keys used for a lower packet number",
                    ));
                }
                self.rotate();
                self.awaiting_peer = false;
                self.note_received(path, pn);
            }
        }
        Ok((range, outcome))
    }

    /// The previous key; when `may_be_next` (no current-phase packet on this path, so the packet
    /// number cannot disambiguate), falls back to the next key on a copy of the ciphertext.
    fn open_previous_or_next(
        &self,
        path_id: Option<u32>,
        pn: u64,
        packet: &mut [u8],
        header_len: usize,
        may_be_next: bool,
    ) -> Result<(Range<usize>, KeyUpdateOutcome), CryptoError> {
        let Some(previous) = self.previous_remote.as_deref() else {
            return Err(CryptoError::KeyUnavailable);
        };
        let backup = may_be_next.then(|| packet.to_vec());
        match open_payload(previous, path_id, pn, packet, header_len) {
            Ok(r) => Ok((r, KeyUpdateOutcome::Previous)),
            Err(CryptoError::Decrypt) if backup.is_some() => {
                packet.copy_from_slice(backup.as_deref().unwrap_or_default());
                open_payload(self.next.remote.as_ref(), path_id, pn, packet, header_len)
                    .map(|r| (r, KeyUpdateOutcome::PeerUpdated))
            }
            Err(e) => Err(e),
        }
    }
}

impl fmt::Debug for OneRttKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OneRttKeys")
            .field("key_phase", &self.key_phase)
            .field("generation", &self.generation)
            .field("has_previous_remote", &self.previous_remote.is_some())
            .field("awaiting_peer", &self.awaiting_peer)
            .field("sent_with_current", &self.sent_with_current)
            .field("auth_failures", &self.auth_failures)
            .finish_non_exhaustive()
    }
}
