//! A fixed TLS identity for the simulator, tests and examples: a self-signed certificate whose
//! key comes from a fixed seed, and rustls configurations that present and trust it.
//!
//! Ed25519 keeps the handshake size fixed (64-byte signatures; Ed25519 signing is deterministic),
//! and the key is derived from a fixed seed, so the certificate bytes are identical on every run.
//! Only the TLS randoms and key shares (from the rustls provider) vary between runs. These keys
//! are public: never use them outside tests.

use std::sync::Arc;

use rustls::crypto::CryptoProvider;
use rustls::{ClientConfig, RootCertStore, ServerConfig};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

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
pub fn fixed_tls_configs(alpn: &[&[u8]]) -> (Arc<ClientConfig>, Arc<ServerConfig>) {
    let (cert, key) = self_signed_ed25519(&["localhost"]);
    (
        client_config(cert.clone(), alpn),
        server_config(cert, key, alpn),
    )
}
