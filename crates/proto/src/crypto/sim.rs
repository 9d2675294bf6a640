//! **Simulation-only, NOT SECURE** packet protection for the 1-RTT level.
//!
//! The network simulator spends a large share of its time in AES-GCM and header protection.
//! [`PacketProtection::SimulationOnly`] swaps the 1-RTT packet and header protection keys for
//! cheap stand-ins right after the real TLS 1.3 handshake (rustls) derived the real ones:
//!
//! - the payload is **left in plaintext**;
//! - the 16-byte AEAD tag is a keyed, non-cryptographic 128-bit checksum (sums of the bytes in
//!   eight lanes, then folded multiplications with the key) of the key, the nonce (path ID and packet
//!   number), the header (associated data) and the payload, so packets keep exactly their real
//!   sizes and a misdirected packet, or one with any single bit changed, still fails to open
//!   and is dropped, as with AES-GCM;
//! - header protection XORs a mask computed from the sample with a key of its own, so it still
//!   round-trips and the packet number stays masked on the wire.
//!
//! The stand-in keys are derived from the real 1-RTT keys (each is the real AEAD's output on a
//! fixed block), so both endpoints agree on them without any extra exchange, every key update
//! (RFC 9001 §6) yields new stand-ins from the real next-generation keys, and an endpoint using
//! real protection cannot talk to one using simulation keys. The AEAD limits (RFC 9001 §6.6) are
//! those of the real suite, so key updates happen at the same packets.
//!
//! Nothing here resists an attacker: anyone can forge a tag or read the payload. The only way
//! to enable it is [`crate::Endpoint::new_for_simulation`], which only the simulator adapter
//! (`mpquic-lab`) calls; the tokio runtime (`mpquic`) and the command-line client and server
//! never do. Initial and Handshake packets always use the real keys.

use rustls::quic::{HeaderProtectionKey, PacketKey, Tag};

/// How 1-RTT packets are protected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum PacketProtection {
    /// The negotiated cipher suite (AES-GCM or ChaCha20-Poly1305 through rustls): the only
    /// choice outside the simulator.
    #[default]
    Real,
    /// **Not secure.** The simulator's stand-in: same sizes, plaintext payload, checksum tag
    /// (see the module documentation).
    SimulationOnly,
}

/// AEAD tag length (the same as every QUIC v1 suite's, RFC 9001 §5.3).
const TAG_LEN: usize = 16;
/// Header-protection sample length (RFC 9001 §5.4.2: 16 bytes for every QUIC v1 suite).
const SAMPLE_LEN: usize = 16;

/// Labels of the two derivations (associated data of the real AEAD's fixed-block encryption).
const PACKET_LABEL: &[u8] = b"mpquic simulation-only packet key";
const HEADER_LABEL: &[u8] = b"mpquic simulation-only header key";

/// Odd 64-bit constants (digits of well-known irrationals) that keep the lanes apart.
const C0: u64 = 0x9e37_79b9_7f4a_7c15;
const C1: u64 = 0xbf58_476d_1ce4_e5b9;
const C2: u64 = 0x94d0_49bb_1331_11eb;
const C3: u64 = 0xd6e8_feb8_6659_fd93;

/// 64×64→128-bit multiply, high and low halves XORed: every input bit reaches many output bits.
#[inline(always)]
fn fold(a: u64, b: u64) -> u64 {
    let m = u128::from(a) * u128::from(b);
    (m as u64) ^ ((m >> 64) as u64)
}

#[inline(always)]
fn word(bytes: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(w)
}

/// A 256-bit key of the checksum.
#[derive(Clone, Copy)]
struct HashKey([u64; 4]);

impl HashKey {
    /// The real AEAD's encryption of a zero block under `label`: 16 bytes of ciphertext and a
    /// 16-byte tag, the same on both ends of one direction.
    fn derive(real: &dyn PacketKey, label: &[u8]) -> Self {
        let mut block = [0u8; 16];
        let tag = real
            .encrypt_in_place(0, label, &mut block)
            .map(|t| {
                let mut out = [0u8; TAG_LEN];
                out.copy_from_slice(t.as_ref());
                out
            })
            // A 16-byte plaintext is far below every AEAD's length limit; should the real key
            // refuse anyway, the stand-in still works, keyed by the label alone.
            .unwrap_or([0x5a; TAG_LEN]);
        let mut k = [0u64; 4];
        k[0] = word(&block[..8]);
        k[1] = word(&block[8..]);
        k[2] = word(&tag[..8]);
        k[3] = word(&tag[8..]);
        // Never zero (a zero multiplier would ignore its other operand).
        Self(k.map(|x| x | 1))
    }

    /// The 128-bit checksum of `nonce`, `aad` and `data`.
    ///
    /// The bytes are added up in eight 64-bit lanes, and only the eight lane sums go through
    /// the keyed multiplications: the additions are vector additions (16 bytes each), where a
    /// multiplication per 16 bytes cost about three times as many instructions, twice for every
    /// packet the simulator carries. Any single changed bit changes a lane's sum, so a
    /// corrupted packet still fails to open; the key, the nonce and the header are mixed in as
    /// before, so a packet opened with the wrong key (across a key update), under the wrong
    /// packet number or on the wrong path fails as with a real AEAD.
    fn tag(&self, nonce: (u32, u64), aad: &[u8], data: &[u8]) -> [u8; TAG_LEN] {
        let k = &self.0;
        let n0 = u64::from(nonce.0).wrapping_mul(C0);
        let n1 = nonce.1.wrapping_mul(C1);
        let mut sums = LaneSums::default();
        sums.absorb(aad);
        sums.absorb(data);
        let s = sums.0;
        // Eight lane sums folded to two words under the key and the nonce.
        let f0 = fold(s[0] ^ k[0] ^ n0, s[1] ^ C1);
        let f1 = fold(s[2] ^ k[1] ^ n1, s[3] ^ C2);
        let g0 = fold(s[4] ^ k[2], s[5] ^ C3);
        let g1 = fold(s[6] ^ k[3], s[7] ^ C0);
        let t0 = fold(f0 ^ g1 ^ k[3], f1 ^ g0 ^ n0 ^ C3);
        let t1 = fold(f1 ^ k[2], t0 ^ g0 ^ n1 ^ C1);
        let t0 = fold(t0 ^ C0 ^ k[1], t1 ^ f0 ^ g1);
        let mut out = [0u8; TAG_LEN];
        out[..8].copy_from_slice(&t0.to_le_bytes());
        out[8..].copy_from_slice(&t1.to_le_bytes());
        out
    }

    /// The header-protection mask of a 16-byte sample: two keyed folds (what the mask needs is
    /// that it depends on the key and on every bit of the sample, RFC 9001 §5.4.1).
    fn mask(&self, sample: &[u8; SAMPLE_LEN]) -> [u8; SAMPLE_LEN] {
        let k = &self.0;
        let a = fold(word(&sample[..8]) ^ k[0], word(&sample[8..]) ^ k[1]);
        let b = fold(a ^ k[2], word(&sample[..8]) ^ k[3] ^ C0);
        let mut out = [0u8; SAMPLE_LEN];
        out[..8].copy_from_slice(&a.to_le_bytes());
        out[8..].copy_from_slice(&b.to_le_bytes());
        out
    }
}

/// Bytes per step of [`LaneSums::absorb`]: eight 64-bit lanes.
const STEP: usize = 64;

/// The running sums of [`HashKey::tag`]: lane `i` adds up bytes `8i..8i + 8` of every 64-byte
/// step (wrapping).
#[derive(Default)]
struct LaneSums([u64; 8]);

impl LaneSums {
    /// Add `part`, its last step zero-padded, then its length (so that zero padding and part
    /// boundaries are unambiguous).
    // Not inlined: inlined into `tag`, the compiler keeps the sums in general registers (one
    // scalar addition per 8 bytes) instead of vector registers (one per 16 bytes).
    #[inline(never)]
    fn absorb(&mut self, part: &[u8]) {
        // A local copy, and the loads apart from the additions: the shape the compiler vectorizes.
        let mut sums = self.0;
        let mut steps = part.chunks_exact(STEP);
        for step in &mut steps {
            add_step(&mut sums, step);
        }
        // The last step zero-padded, word by word: lane `i` takes bytes `8i..8i + 8` as a full
        // step would, without a padded copy (a header is only a part step).
        let rest = steps.remainder();
        let mut words = rest.chunks_exact(8);
        for (sum, w) in sums.iter_mut().zip(&mut words) {
            *sum = sum.wrapping_add(word(w));
        }
        let tail = words.remainder();
        if !tail.is_empty() {
            let lane = rest.len() / 8;
            sums[lane] = sums[lane].wrapping_add(last_word(part, tail.len()));
        }
        self.0 = sums;
        self.0[7] = self.0[7].wrapping_add((part.len() as u64).wrapping_mul(C2) | 1);
    }
}

/// The last `n` bytes of `part` (1 to 7) as a little-endian word, zero-padded above: from
/// the part's last 8 bytes shifted down when it has them (one load instead of a byte loop).
#[inline(always)]
fn last_word(part: &[u8], n: usize) -> u64 {
    match part.len().checked_sub(8) {
        Some(start) => word(&part[start..]) >> (8 * (8 - n)),
        None => part[part.len() - n..]
            .iter()
            .rev()
            .fold(0u64, |acc, &b| acc << 8 | u64::from(b)),
    }
}

/// One 64-byte step of [`LaneSums::absorb`].
#[inline(always)]
fn add_step(sums: &mut [u64; 8], step: &[u8]) {
    let mut words = [0u64; 8];
    for (lane, w) in words.iter_mut().enumerate() {
        *w = word(&step[8 * lane..8 * lane + 8]);
    }
    for (s, w) in sums.iter_mut().zip(words) {
        *s = s.wrapping_add(w);
    }
}

/// The stand-in AEAD (see the module documentation). **Not secure.**
pub(crate) struct SimPacketKey {
    key: HashKey,
    confidentiality_limit: u64,
    integrity_limit: u64,
}

impl SimPacketKey {
    /// The stand-in for `real`, with its AEAD limits.
    pub(crate) fn from_real(real: &dyn PacketKey) -> Self {
        Self {
            key: HashKey::derive(real, PACKET_LABEL),
            confidentiality_limit: real.confidentiality_limit(),
            integrity_limit: real.integrity_limit(),
        }
    }

    fn seal(&self, nonce: (u32, u64), header: &[u8], payload: &[u8]) -> Tag {
        Tag::from(&self.key.tag(nonce, header, payload)[..])
    }

    fn open<'a>(
        &self,
        nonce: (u32, u64),
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], rustls::Error> {
        let Some(split) = payload.len().checked_sub(TAG_LEN) else {
            return Err(rustls::Error::DecryptError);
        };
        let (plain, tag) = payload.split_at(split);
        // Not constant time: nothing here is secret anyway.
        if self.key.tag(nonce, header, plain)[..] != tag[..] {
            return Err(rustls::Error::DecryptError);
        }
        Ok(&payload[..split])
    }
}

impl PacketKey for SimPacketKey {
    fn encrypt_in_place(
        &self,
        packet_number: u64,
        header: &[u8],
        payload: &mut [u8],
    ) -> Result<Tag, rustls::Error> {
        // Path 0's nonce equals the single-path one (RFC 10069 §"Nonce Calculation").
        Ok(self.seal((0, packet_number), header, payload))
    }

    fn encrypt_in_place_for_path(
        &self,
        path_id: u32,
        packet_number: u64,
        header: &[u8],
        payload: &mut [u8],
    ) -> Result<Tag, rustls::Error> {
        Ok(self.seal((path_id, packet_number), header, payload))
    }

    fn decrypt_in_place<'a>(
        &self,
        packet_number: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], rustls::Error> {
        self.open((0, packet_number), header, payload)
    }

    fn decrypt_in_place_for_path<'a>(
        &self,
        path_id: u32,
        packet_number: u64,
        header: &[u8],
        payload: &'a mut [u8],
    ) -> Result<&'a [u8], rustls::Error> {
        self.open((path_id, packet_number), header, payload)
    }

    fn tag_len(&self) -> usize {
        TAG_LEN
    }

    fn confidentiality_limit(&self) -> u64 {
        self.confidentiality_limit
    }

    fn integrity_limit(&self) -> u64 {
        self.integrity_limit
    }
}

/// The stand-in header protection (RFC 9001 §5.4.1 with a checksum instead of AES/ChaCha20 as
/// the mask function). **Not secure.**
pub(crate) struct SimHeaderKey {
    key: HashKey,
}

impl SimHeaderKey {
    /// Keyed from a packet key of the same direction (header protection keys never change, so
    /// this is done once, from the first 1-RTT generation).
    pub(crate) fn from_real_packet_key(real: &dyn PacketKey) -> Self {
        Self {
            key: HashKey::derive(real, HEADER_LABEL),
        }
    }

    fn xor(
        &self,
        sample: &[u8],
        first: &mut u8,
        packet_number: &mut [u8],
        masked: bool,
    ) -> Result<(), rustls::Error> {
        let (Ok(sample), true) = (
            <&[u8; SAMPLE_LEN]>::try_from(sample),
            packet_number.len() <= 4,
        ) else {
            return Err(rustls::Error::General(
                "sample or packet number length".into(),
            ));
        };
        let mask = self.key.mask(sample);
        // RFC 9001 §5.4.1: 4 bits of a long header's first byte, 5 of a short header's.
        let bits = if *first & 0x80 != 0 { 0x0f } else { 0x1f };
        let first_plain = if masked {
            *first ^ (mask[0] & bits)
        } else {
            *first
        };
        let pn_len = usize::from(first_plain & 0x03) + 1;
        *first ^= mask[0] & bits;
        for (b, m) in packet_number.iter_mut().zip(&mask[1..]).take(pn_len) {
            *b ^= m;
        }
        Ok(())
    }
}

impl HeaderProtectionKey for SimHeaderKey {
    fn encrypt_in_place(
        &self,
        sample: &[u8],
        first: &mut u8,
        packet_number: &mut [u8],
    ) -> Result<(), rustls::Error> {
        self.xor(sample, first, packet_number, false)
    }

    fn decrypt_in_place(
        &self,
        sample: &[u8],
        first: &mut u8,
        packet_number: &mut [u8],
    ) -> Result<(), rustls::Error> {
        self.xor(sample, first, packet_number, true)
    }

    fn sample_len(&self) -> usize {
        SAMPLE_LEN
    }
}

/// A packet key in the form `protection` asks for: `real` itself, or its stand-in.
pub(crate) fn packet_key(
    real: Box<dyn PacketKey>,
    protection: PacketProtection,
) -> Box<dyn PacketKey> {
    match protection {
        PacketProtection::Real => real,
        PacketProtection::SimulationOnly => Box::new(SimPacketKey::from_real(real.as_ref())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::protect::{open_payload, remove_header_protection};
    use crate::crypto::{initial_keys, seal_packet, DirectionalKeys, Side};

    const CID: [u8; 8] = [7, 6, 5, 4, 3, 2, 1, 0];

    fn sim(real: &DirectionalKeys) -> DirectionalKeys {
        DirectionalKeys {
            header: Box::new(SimHeaderKey::from_real_packet_key(real.packet.as_ref())),
            packet: Box::new(SimPacketKey::from_real(real.packet.as_ref())),
        }
    }

    /// (client send keys, server receive keys), both simulation-only.
    fn pair() -> (DirectionalKeys, DirectionalKeys) {
        let c = initial_keys(&CID, Side::Client);
        let s = initial_keys(&CID, Side::Server);
        (sim(&c.local), sim(&s.remote))
    }

    fn packet(pn: u64, pn_len: usize, payload: &[u8]) -> (Vec<u8>, usize, usize) {
        let mut p = vec![0x40 | (pn_len as u8 - 1)];
        p.extend_from_slice(&CID);
        let pn_offset = p.len();
        p.extend_from_slice(&pn.to_be_bytes()[8 - pn_len..]);
        let header_len = p.len();
        p.extend_from_slice(payload);
        (p, header_len, pn_offset)
    }

    fn unprotect(
        keys: &DirectionalKeys,
        path: Option<u32>,
        pn: u64,
        p: &mut [u8],
        pn_offset: usize,
    ) -> Result<Vec<u8>, crate::crypto::CryptoError> {
        let (_, pn_len) = remove_header_protection(keys.header.as_ref(), p, pn_offset)?;
        let range = open_payload(keys.packet.as_ref(), path, pn, p, pn_offset + pn_len)?;
        Ok(p[range].to_vec())
    }

    #[test]
    fn same_sizes_and_round_trip() {
        let (client, server) = pair();
        let real = initial_keys(&CID, Side::Client);
        for path in [None, Some(0), Some(3)] {
            for pn_len in 1..=4 {
                let pn = 0xabcdu64 & ((1 << (8 * pn_len)) - 1);
                let (mut p, hl, po) = packet(pn, pn_len, b"a simulated payload");
                let mut q = p.clone();
                seal_packet(&client, path, pn, &mut p, hl, po, pn_len).unwrap();
                seal_packet(&real.local, path, pn, &mut q, hl, po, pn_len).unwrap();
                assert_eq!(p.len(), q.len(), "same size as the real AEAD");
                let sealed = p.clone();
                let plain = unprotect(&server, path, pn, &mut p, po).unwrap();
                assert_eq!(plain, b"a simulated payload");
                assert_ne!(sealed[..hl], p[..hl], "header protection masks the header");
            }
        }
    }

    #[test]
    fn tampering_any_bit_fails() {
        let (client, server) = pair();
        let (mut p, hl, po) = packet(77, 2, &[0u8; 100]);
        seal_packet(&client, Some(1), 77, &mut p, hl, po, 2).unwrap();
        for i in 0..p.len() {
            for bit in 0..8 {
                let mut t = p.clone();
                t[i] ^= 1 << bit;
                assert!(
                    unprotect(&server, Some(1), 77, &mut t, po).is_err(),
                    "byte {i} bit {bit}"
                );
            }
        }
        assert!(unprotect(&server, Some(2), 77, &mut p.clone(), po).is_err());
        assert!(unprotect(&server, Some(1), 78, &mut p.clone(), po).is_err());
        assert!(unprotect(&server, Some(1), 77, &mut p, po).is_ok());
    }

    /// [`LaneSums::absorb`] as it was: the last step zero-padded into a 64-byte block.
    fn padded_absorb(sums: &mut [u64; 8], part: &[u8]) {
        for step in part.chunks(STEP) {
            let mut block = [0u8; STEP];
            block[..step.len()].copy_from_slice(step);
            add_step(sums, &block);
        }
        sums[7] = sums[7].wrapping_add((part.len() as u64).wrapping_mul(C2) | 1);
    }

    proptest::proptest! {
        /// The word-by-word last step sums exactly what the zero-padded block did.
        #[test]
        fn lane_sums_match_a_padded_last_step(
            parts in proptest::collection::vec(
                proptest::collection::vec(proptest::prelude::any::<u8>(), 0..200), 1..3),
        ) {
            let mut sums = LaneSums::default();
            let mut reference = [0u64; 8];
            for part in &parts {
                sums.absorb(part);
                padded_absorb(&mut reference, part);
            }
            proptest::prop_assert_eq!(sums.0, reference);
        }
    }

    proptest::proptest! {
        /// Payloads of every length up to a full datagram (from the shortest that can be sampled), in every 64-byte step and lane
        /// position: a packet opens, and any single flipped bit (header, payload or tag) makes
        /// it fail.
        #[test]
        fn any_flipped_bit_fails(
            // At least the 2 bytes the header-protection sample needs past a 2-byte number.
            payload in proptest::collection::vec(proptest::prelude::any::<u8>(), 2..1500),
            pn in 0u64..(1 << 16),
            flip in proptest::prelude::any::<proptest::sample::Index>(),
            bit in 0u8..8,
        ) {
            let (client, server) = pair();
            let (mut p, hl, po) = packet(pn, 2, &payload);
            seal_packet(&client, Some(1), pn, &mut p, hl, po, 2).unwrap();
            let opened = unprotect(&server, Some(1), pn, &mut p.clone(), po).unwrap();
            proptest::prop_assert_eq!(opened, payload);
            let i = flip.index(p.len());
            p[i] ^= 1 << bit;
            proptest::prop_assert!(unprotect(&server, Some(1), pn, &mut p, po).is_err());
        }
    }

    #[test]
    fn keys_differ_by_direction_and_from_real() {
        let c = initial_keys(&CID, Side::Client);
        let (client, _) = pair();
        let (mut p, hl, po) = packet(5, 1, &[1u8; 40]);
        seal_packet(&client, None, 5, &mut p, hl, po, 1).unwrap();
        // The client's own receive keys (the other direction) and real keys reject it.
        assert!(unprotect(&sim(&c.remote), None, 5, &mut p.clone(), po).is_err());
        assert!(unprotect(&c.local, None, 5, &mut p.clone(), po).is_err());
        let s = initial_keys(&CID, Side::Server);
        assert!(unprotect(&s.remote, None, 5, &mut p, po).is_err());
    }

    #[test]
    fn limits_are_the_real_ones() {
        let c = initial_keys(&CID, Side::Client);
        let k = SimPacketKey::from_real(c.local.packet.as_ref());
        assert_eq!(
            k.confidentiality_limit(),
            c.local.packet.confidentiality_limit()
        );
        assert_eq!(k.integrity_limit(), c.local.packet.integrity_limit());
        assert_eq!(k.tag_len(), c.local.packet.tag_len());
    }
}
