//! A fixed TLS identity for the simulator, tests and examples: a self-signed certificate whose
//! key comes from a fixed seed, and rustls configurations that present and trust it.
//!
//! Ed25519 keeps the handshake size fixed (64-byte signatures; Ed25519 signing is deterministic),
//! and the key is derived from a fixed seed, so the certificate bytes are identical on every run.
//! Only the TLS randoms and key shares (from the rustls provider) vary between runs. These keys
//! are public: never use them outside tests.
//!
//! Certificate compression (RFC 8879) is off in these configurations unless asked for
//! ([`LabIdentity::cert_compression`]): rustls would otherwise offer and use it whenever the
//! workspace enables its `brotli`/`zlib` features, changing the handshake's bytes and so every
//! simulated figure recorded before it existed.

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

/// A TLS 1.3-only client config (ring provider) that trusts exactly `trusted` and offers `alpn`;
/// it offers no certificate compression.
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
    config.cert_decompressors = Vec::new();
    Arc::new(config)
}

/// A TLS 1.3-only server config (ring provider) presenting `cert`/`key` and accepting `alpn`,
/// without certificate compression. Session tickets are disabled, which keeps post-handshake
/// CRYPTO data out of 1-RTT and the simulator's byte counts as they were; [`super::resumption::server_allow_0rtt`] turns on
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
    config.cert_compressors = Vec::new();
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

/// The simulator's TLS identity with its options: how large the server's certificate is and
/// whether the endpoints compress it (RFC 8879). The default is [`fixed_tls_configs`]'s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LabIdentity {
    /// Subject alternative names the certificate carries besides "localhost": a stand-in for
    /// the large certificates of shared hosting and CDNs, whose first server flight does not
    /// fit the server's anti-amplification budget (RFC 9000 §8.1: three times the client's
    /// 1,200-byte Initial). Each name is a 10-letter pseudo-random label under one of four
    /// domains (`q3k9x0m1ab.example.com`, ...), so that the list does not compress as well as a
    /// numbered series would.
    pub extra_names: usize,
    /// Certificate compression (RFC 8879): the client offers, and the server uses, zlib and
    /// brotli ([`super::cert_compression`]).
    pub cert_compression: bool,
}

impl LabIdentity {
    /// Most extra names (the certificate stays under 64 KB, a TLS handshake message's
    /// practical limit).
    pub const MAX_EXTRA_NAMES: usize = 1_000;

    /// The names the certificate carries: "localhost" first.
    pub fn names(&self) -> Vec<String> {
        let mut names = vec!["localhost".to_owned()];
        names.extend((1..=self.extra_names as u64).map(extra_name));
        names
    }

    /// Matching client and server configs, both offering `alpn` (see [`fixed_tls_configs`]).
    pub fn tls_configs(&self, alpn: &[&[u8]]) -> (Arc<ClientConfig>, Arc<ServerConfig>) {
        let names = self.names();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let (cert, key) = self_signed_ed25519(&names);
        let mut client = Arc::unwrap_or_clone(client_config(cert.clone(), alpn));
        let mut server = Arc::unwrap_or_clone(server_config(cert, key, alpn));
        if self.cert_compression {
            client.cert_decompressors = super::cert_compression::decompressors();
            server.cert_compressors = super::cert_compression::compressors();
        }
        (Arc::new(client), Arc::new(server))
    }
}

/// The `i`th extra name of [`LabIdentity::names`]: a label of 10 letters and digits from a
/// SplitMix64 step of `i` (fixed: the certificate is the same on every run) and one of four
/// domains.
fn extra_name(i: u64) -> String {
    const DOMAINS: [&str; 4] = [
        "example.com",
        "example.net",
        "cdn.example.org",
        "shop.example",
    ];
    const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut z = i.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    let label: String = (0..10)
        .map(|_| {
            let c = ALPHABET[(z % 36) as usize] as char;
            z /= 36;
            c
        })
        .collect();
    format!("{label}.{}", DOMAINS[(i % 4) as usize])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extra_names_are_distinct_and_fixed() {
        let identity = LabIdentity {
            extra_names: 200,
            cert_compression: false,
        };
        let names = identity.names();
        assert_eq!(names.len(), 201);
        assert_eq!(names[0], "localhost");
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "names repeat");
        assert_eq!(identity.names(), names, "names differ between calls");
        assert!(names[1..].iter().all(|n| n.len() > 20 && n.is_ascii()));
        for extra_names in [0, 100, 200, 300, 500] {
            let names = LabIdentity {
                extra_names,
                cert_compression: false,
            }
            .names();
            let names: Vec<&str> = names.iter().map(String::as_str).collect();
            let size = self_signed_ed25519(&names).0.len();
            println!("{extra_names} extra names: certificate of {size} bytes");
            assert!(size < 400 + 30 * extra_names, "{extra_names}: {size} bytes");
        }
    }

    #[test]
    fn compression_is_off_unless_asked_for() {
        let (client, server) = fixed_tls_configs(&[b"x"]);
        assert!(client.cert_decompressors.is_empty());
        assert!(server.cert_compressors.is_empty());
        let (client, server) = LabIdentity {
            extra_names: 0,
            cert_compression: true,
        }
        .tls_configs(&[b"x"]);
        assert!(!client.cert_decompressors.is_empty());
        assert!(!server.cert_compressors.is_empty());
    }
}
