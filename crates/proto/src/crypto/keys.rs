//! Encryption levels, key pairs, Initial keys (RFC 9001 §5.2) and the Retry integrity tag
//! (RFC 9001 §5.8).

use std::fmt;

use ring::aead;
use rustls::quic::{HeaderProtectionKey, PacketKey};
use rustls::Tls13CipherSuite;

use super::Side;

/// An encryption level with its own CRYPTO stream (RFC 9001 §4: Initial, Handshake and 1-RTT).
/// Each level except 1-RTT has its own packet number space (RFC 9000 §12.3); 0-RTT packets
/// belong to the application-data space too (`Data`), with their own keys
/// (`connection/zero_rtt.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Epoch {
    /// Initial packets, protected with keys derived from the client's first Destination
    /// Connection ID (RFC 9001 §5.2).
    Initial,
    /// Handshake packets, protected with the TLS handshake traffic secrets.
    Handshake,
    /// 1-RTT (short header) packets, protected with the TLS application traffic secrets.
    Data,
}

impl Epoch {
    /// All epochs, in the order the handshake reaches them.
    pub(crate) const ALL: [Epoch; 3] = [Epoch::Initial, Epoch::Handshake, Epoch::Data];

    /// A dense index (0, 1, 2), for per-epoch arrays.
    pub(crate) const fn index(self) -> usize {
        match self {
            Epoch::Initial => 0,
            Epoch::Handshake => 1,
            Epoch::Data => 2,
        }
    }
}

impl fmt::Display for Epoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Epoch::Initial => "Initial",
            Epoch::Handshake => "Handshake",
            Epoch::Data => "1-RTT",
        })
    }
}

/// The keys protecting one direction of one encryption level: a header protection key
/// (RFC 9001 §5.4) and a packet protection key (RFC 9001 §5.3).
pub struct DirectionalKeys {
    /// Header protection key ("quic hp", RFC 9001 §5.1). Never changes on key update (§6).
    pub header: Box<dyn HeaderProtectionKey>,
    /// Packet protection key and IV ("quic key", "quic iv", RFC 9001 §5.1).
    pub packet: Box<dyn PacketKey>,
}

impl From<rustls::quic::DirectionalKeys> for DirectionalKeys {
    fn from(k: rustls::quic::DirectionalKeys) -> Self {
        Self {
            header: k.header,
            packet: k.packet,
        }
    }
}

impl fmt::Debug for DirectionalKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DirectionalKeys")
            .field("sample_len", &self.header.sample_len())
            .field("tag_len", &self.packet.tag_len())
            .finish_non_exhaustive()
    }
}

/// The keys of one encryption level in both directions.
#[derive(Debug)]
pub struct KeyPair {
    /// Protects packets we send.
    pub local: DirectionalKeys,
    /// Unprotects packets we receive.
    pub remote: DirectionalKeys,
}

impl From<rustls::quic::Keys> for KeyPair {
    fn from(k: rustls::quic::Keys) -> Self {
        Self {
            local: k.local.into(),
            remote: k.remote.into(),
        }
    }
}

/// The cipher suite Initial packets use: RFC 9001 §5.2, "Initial packets apply the packet
/// protection process, but use a secret derived from the Destination Connection ID field from
/// the client's first Initial packet ... the AEAD_AES_128_GCM ... with SHA-256".
fn initial_suite() -> &'static Tls13CipherSuite {
    rustls::crypto::ring::cipher_suite::TLS13_AES_128_GCM_SHA256
        .tls13()
        .expect("TLS13_AES_128_GCM_SHA256 is a TLS 1.3 suite")
}

pub(crate) fn to_rustls_side(side: Side) -> rustls::Side {
    match side {
        Side::Client => rustls::Side::Client,
        Side::Server => rustls::Side::Server,
    }
}

/// The Initial keys of QUIC version 1 (RFC 9001 §5.2), derived from the Destination Connection
/// ID of the client's first Initial packet (or, after a Retry, the Source Connection ID of the
/// Retry, RFC 9001 §5.2: "the client ... uses ... the Destination Connection ID ... chosen by the
/// server"). `side` is our role: `local` protects what we send.
pub fn initial_keys(client_dcid: &[u8], side: Side) -> KeyPair {
    let suite = initial_suite();
    let quic = suite.quic.expect("TLS13_AES_128_GCM_SHA256 supports QUIC");
    rustls::quic::Keys::initial(
        rustls::quic::Version::V1,
        suite,
        quic,
        client_dcid,
        to_rustls_side(side),
    )
    .into()
}

/// RFC 9001 §5.8: the fixed AEAD_AES_128_GCM key of the QUIC v1 Retry integrity tag.
const RETRY_KEY: [u8; 16] = [
    0xbe, 0x0c, 0x69, 0x0b, 0x9f, 0x66, 0x57, 0x5a, 0x1d, 0x76, 0x6b, 0x54, 0xe3, 0x68, 0xc8, 0x4e,
];
/// RFC 9001 §5.8: the fixed 96-bit nonce of the QUIC v1 Retry integrity tag.
const RETRY_NONCE: [u8; 12] = [
    0x46, 0x15, 0x99, 0xd3, 0x5d, 0x63, 0x2b, 0xf2, 0x23, 0x98, 0x25, 0xbb,
];
/// Length of the Retry Integrity Tag (RFC 9000 §17.2.5).
pub(crate) const RETRY_TAG_LEN: usize = 16;

fn retry_key() -> aead::LessSafeKey {
    let key = aead::UnboundKey::new(&aead::AES_128_GCM, &RETRY_KEY)
        .expect("a 16-byte key is valid for AES-128-GCM");
    aead::LessSafeKey::new(key)
}

/// The Retry Pseudo-Packet of RFC 9001 §5.8: ODCID Length, ODCID, then the Retry packet without
/// its tag. An ODCID longer than 255 bytes (never valid, RFC 9000 §17.2) is truncated to 255,
/// which yields a tag that will not verify.
fn retry_pseudo_packet(original_dcid: &[u8], retry_without_tag: &[u8]) -> Vec<u8> {
    let odcid = &original_dcid[..original_dcid.len().min(255)];
    let mut pseudo = Vec::with_capacity(1 + odcid.len() + retry_without_tag.len());
    pseudo.push(odcid.len() as u8);
    pseudo.extend_from_slice(odcid);
    pseudo.extend_from_slice(retry_without_tag);
    pseudo
}

/// The Retry Integrity Tag (RFC 9001 §5.8): AEAD_AES_128_GCM with the fixed v1 key and nonce,
/// empty plaintext, and the Retry Pseudo-Packet as associated data. `original_dcid` is the
/// Destination Connection ID of the client Initial the Retry answers; `retry_packet_without_tag`
/// is the Retry packet from its first byte up to (excluding) the tag.
pub(crate) fn retry_integrity_tag(
    original_dcid: &[u8],
    retry_packet_without_tag: &[u8],
) -> [u8; 16] {
    let pseudo = retry_pseudo_packet(original_dcid, retry_packet_without_tag);
    let nonce = aead::Nonce::assume_unique_for_key(RETRY_NONCE);
    let tag = retry_key()
        .seal_in_place_separate_tag(nonce, aead::Aad::from(&pseudo[..]), &mut [])
        .expect("sealing an empty plaintext cannot exceed the AEAD limits");
    let mut out = [0u8; RETRY_TAG_LEN];
    out.copy_from_slice(tag.as_ref());
    out
}

/// Checks the Retry Integrity Tag of a complete Retry packet (RFC 9001 §5.8; RFC 9000 §17.2.5.2:
/// "Clients MUST discard Retry packets that have a Retry Integrity Tag that cannot be
/// validated"). The comparison is done by the AEAD (constant time). Short packets return false.
pub(crate) fn verify_retry_integrity(original_dcid: &[u8], retry_packet: &[u8]) -> bool {
    let Some(split) = retry_packet.len().checked_sub(RETRY_TAG_LEN) else {
        return false;
    };
    let (without_tag, tag) = retry_packet.split_at(split);
    let pseudo = retry_pseudo_packet(original_dcid, without_tag);
    let nonce = aead::Nonce::assume_unique_for_key(RETRY_NONCE);
    let mut in_out = tag.to_vec();
    retry_key()
        .open_in_place(nonce, aead::Aad::from(&pseudo[..]), &mut in_out)
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epochs_are_ordered() {
        assert!(Epoch::Initial < Epoch::Handshake && Epoch::Handshake < Epoch::Data);
        for (i, e) in Epoch::ALL.iter().enumerate() {
            assert_eq!(e.index(), i);
        }
    }

    #[test]
    fn initial_keys_are_symmetric() {
        let cid = [1u8, 2, 3, 4, 5, 6, 7, 8];
        let client = initial_keys(&cid, Side::Client);
        let server = initial_keys(&cid, Side::Server);
        let header = [0xc0u8, 1, 2, 3];
        let mut payload = b"hello initial".to_vec();
        let tag = client
            .local
            .packet
            .encrypt_in_place(7, &header, &mut payload)
            .unwrap();
        payload.extend_from_slice(tag.as_ref());
        let plain = server
            .remote
            .packet
            .decrypt_in_place(7, &header, &mut payload)
            .unwrap();
        assert_eq!(plain, b"hello initial");
    }

    #[test]
    fn retry_verification_rejects_short_and_modified() {
        let odcid = [9u8; 8];
        let mut retry = vec![0xf0, 0, 0, 0, 1, 0, 0, b't', b'o', b'k'];
        let tag = retry_integrity_tag(&odcid, &retry);
        retry.extend_from_slice(&tag);
        assert!(verify_retry_integrity(&odcid, &retry));
        assert!(!verify_retry_integrity(&[8u8; 8], &retry));
        assert!(!verify_retry_integrity(&odcid, &retry[..10]));
        assert!(!verify_retry_integrity(&odcid, &[]));
        retry[7] ^= 1;
        assert!(!verify_retry_integrity(&odcid, &retry));
        // Overlong ODCIDs do not panic.
        let _ = retry_integrity_tag(&[0u8; 300], &retry);
    }
}
