//! Certificates and rustls configurations for tests, the simulator and examples, and packet
//! helpers that let tests reshape or inspect Initial packets the way other stacks send them.
//!
//! Ed25519 keeps the handshake size fixed (64-byte signatures; Ed25519 signing is deterministic),
//! and the key is derived from a fixed seed, so the certificate bytes are identical on every run.
//! Only the TLS randoms and key shares (from the rustls provider) vary between runs. These keys
//! are public: never use them outside tests.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use mpquic_wire::frame::Frame;
use mpquic_wire::header::PartialDecode;
use rustls::client::{
    ClientSessionMemoryCache, ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue,
};
use rustls::crypto::CryptoProvider;
use rustls::{ClientConfig, NamedGroup, RootCertStore, ServerConfig};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};

use super::{initial_keys, seal_initial, DirectionalKeys, Side};

/// The seed of the key [`self_signed_ed25519`] uses.
pub const TEST_KEY_SEED: [u8; 32] = *b"mpquic test key, not for real!!!";

/// PKCS#8 v1 prefix of an Ed25519 private key (RFC 8410 §7): SEQUENCE { INTEGER 0,
/// AlgorithmIdentifier { id-Ed25519 }, OCTET STRING { OCTET STRING seed } }.
const ED25519_PKCS8_PREFIX: [u8; 16] = [
    0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
];

/// A self-signed Ed25519 certificate for `names` (DNS names or IP addresses as subject
/// alternative names) with the key of [`TEST_KEY_SEED`].
///
/// Panics if rcgen rejects a name (test helper).
pub fn self_signed_ed25519(names: &[&str]) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    self_signed_ed25519_with_seed(names, TEST_KEY_SEED)
}

/// [`self_signed_ed25519`] with the key derived from `seed` (different seeds give different,
/// mutually untrusted certificates).
pub fn self_signed_ed25519_with_seed(
    names: &[&str],
    seed: [u8; 32],
) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let mut pkcs8 = ED25519_PKCS8_PREFIX.to_vec();
    pkcs8.extend_from_slice(&seed);
    let pkcs8 = PrivatePkcs8KeyDer::from(pkcs8);
    let key_pair = rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&pkcs8, &rcgen::PKCS_ED25519)
        .expect("a 32-byte seed is a valid Ed25519 key");
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let mut params = rcgen::CertificateParams::new(names).expect("valid certificate names");
    // A fixed serial (rcgen would otherwise hash the key) keeps the size fixed across seeds.
    params.serial_number = Some(rcgen::SerialNumber::from(1u64));
    let cert = params
        .self_signed(&key_pair)
        .expect("self-signing with Ed25519");
    (cert.der().clone(), PrivateKeyDer::Pkcs8(pkcs8))
}

/// The ring provider rustls uses here.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A TLS 1.3-only client config (ring provider) that trusts exactly `trusted` and offers `alpn`.
pub fn client_config(trusted: CertificateDer<'static>, alpn: &[&[u8]]) -> Arc<ClientConfig> {
    let mut roots = RootCertStore::empty();
    roots
        .add(trusted)
        .expect("test certificate is a valid trust anchor");
    let mut config = ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("ring supports TLS 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Arc::new(config)
}

/// A TLS 1.3-only server config (ring provider) presenting `cert`/`key` and accepting `alpn`.
/// Session tickets are disabled, which keeps post-handshake CRYPTO data out of 1-RTT and the
/// simulator's byte counts as they were; [`super::resumption::server_allow_0rtt`] turns on
/// resumption and 0-RTT.
pub fn server_config(
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
    alpn: &[&[u8]],
) -> Arc<ServerConfig> {
    let mut config = ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("ring supports TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("test certificate and key match");
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config.send_tls13_tickets = 0;
    Arc::new(config)
}

/// Matching client and server configs: the server presents [`self_signed_ed25519`] for
/// "localhost", the client trusts it; TLS 1.3 only, ring provider, both with `alpn`.
pub fn test_tls_configs(alpn: &[&[u8]]) -> (Arc<ClientConfig>, Arc<ServerConfig>) {
    let (cert, key) = self_signed_ed25519(&["localhost"]);
    (
        client_config(cert.clone(), alpn),
        server_config(cert, key, alpn),
    )
}

/// The Initial packet at the start of `datagram`, opened with `keys` (e.g. the `remote` half of
/// [`initial_keys`] for the DCID of the client's first Initial): its packet number and frames.
/// None if the datagram does not start with an Initial packet these keys open.
pub fn open_initial(datagram: &[u8], keys: &DirectionalKeys) -> Option<(u64, Vec<Frame>)> {
    let (first, _) = PartialDecode::new(BytesMut::from(datagram), 8).ok()?;
    let (pn, plain) = super::open_initial(keys, &first)?;
    Frame::iter(Bytes::from(plain))
        .collect::<Result<Vec<_>, _>>()
        .ok()
        .map(|frames| (pn, frames))
}

/// A client's first datagram reshaped the way picoquic sends it: an Initial packet of exactly
/// `packet_len` bytes carrying the same CRYPTO frames (same packet number and connection IDs,
/// PADDING frames inside up to the size, sealed again with the client Initial keys of RFC 9001
/// §5.2), then zero bytes after the packet up to `datagram_len`.
///
/// Panics if `datagram` is not a client Initial or its ClientHello does not fit (test helper).
pub fn reshape_client_initial(datagram: &[u8], packet_len: usize, datagram_len: usize) -> Vec<u8> {
    let (first, _) = PartialDecode::new(BytesMut::from(datagram), 8).expect("a long header");
    let (dcid, scid) = (first.dcid(), first.scid().expect("a long header"));
    // The server's view of the Initial keys opens what the client sealed.
    let opener = initial_keys(dcid.as_slice(), Side::Server);
    let (pn, frames) = open_initial(datagram, &opener.remote).expect("a client Initial");
    let mut crypto = Vec::with_capacity(packet_len);
    for frame in frames.iter().filter(|f| matches!(f, Frame::Crypto { .. })) {
        frame.encode(&mut crypto);
    }
    let sealer = initial_keys(dcid.as_slice(), Side::Client);
    let mut packet = seal_initial(
        &sealer.local,
        (dcid, scid),
        Bytes::new(),
        pn,
        &crypto,
        packet_len,
    )
    .expect("sealing an Initial packet");
    assert_eq!(
        packet.len(),
        packet_len,
        "the ClientHello needs a larger packet"
    );
    packet.resize(datagram_len.max(packet.len()), 0);
    packet
}

/// A client session store (rustls' in-memory cache) that counts the TLS 1.3 tickets it hands
/// out, i.e. the connections that offered resumption.
#[derive(Debug)]
pub struct CountingSessionStore {
    inner: ClientSessionMemoryCache,
    taken: AtomicUsize,
}

impl CountingSessionStore {
    /// A store keeping up to `size` sessions.
    pub fn new(size: usize) -> Self {
        Self {
            inner: ClientSessionMemoryCache::new(size),
            taken: AtomicUsize::new(0),
        }
    }

    /// How many tickets were handed out for resumption.
    pub fn tickets_taken(&self) -> usize {
        self.taken.load(Ordering::Relaxed)
    }
}

impl ClientSessionStore for CountingSessionStore {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        self.inner.set_kx_hint(name, group)
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.inner.kx_hint(name)
    }

    fn set_tls12_session(&self, name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.inner.set_tls12_session(name, value)
    }

    fn tls12_session(&self, name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.inner.tls12_session(name)
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.inner.remove_tls12_session(name)
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.inner.insert_tls13_ticket(name, value)
    }

    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        let ticket = self.inner.take_tls13_ticket(name);
        if ticket.is_some() {
            self.taken.fetch_add(1, Ordering::Relaxed);
        }
        ticket
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificates_are_deterministic() {
        let (a, _) = self_signed_ed25519(&["localhost"]);
        let (b, _) = self_signed_ed25519(&["localhost"]);
        assert_eq!(a, b);
        let (c, _) = self_signed_ed25519_with_seed(&["localhost"], [7; 32]);
        assert_ne!(a, c);
        assert_eq!(a.len(), c.len());
    }
}
