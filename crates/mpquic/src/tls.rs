//! rustls configurations for mpquic: TLS 1.3 only, ring provider, ALPN set.
//!
//! - [`self_signed`] makes a certificate and key with rcgen (ECDSA P-256).
//! - [`client_config`] trusts given roots, or nothing at all with [`ServerTrust::Insecure`]
//!   ([`InsecureVerifier`]: any certificate is accepted, but the handshake signature is still
//!   verified, so the peer must hold the key of the certificate it presents).
//! - [`server_config`] presents a certificate chain.
//! - [`load_certs`] and [`load_key`] read PEM files.
//!
//! Client and server configurations log TLS secrets for Wireshark when `SSLKEYLOGFILE` names a
//! file (NSS key log format; off when unset).

use std::path::Path;
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

/// Errors building TLS configurations or reading certificates.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// rustls refused the configuration.
    #[error("TLS: {0}")]
    Rustls(#[from] rustls::Error),
    /// The self-signed certificate could not be generated.
    #[error("certificate generation: {0}")]
    Rcgen(#[from] rcgen::Error),
    /// A PEM file could not be read or parsed.
    #[error("cannot read {path}: {message}")]
    Pem {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// A PEM file without a certificate.
    #[error("{0} contains no certificate")]
    NoCertificate(String),
}

/// Which servers a client trusts.
#[derive(Debug, Clone)]
pub enum ServerTrust {
    /// Certificates chaining to one of these roots (and valid for the server name).
    Roots(Vec<CertificateDer<'static>>),
    /// Any certificate (the handshake signature is still checked). For tests and `--insecure`.
    Insecure,
}

/// The crypto provider of every configuration here: ring, with TLS_AES_128_GCM_SHA256 preferred.
///
/// rustls lists TLS_AES_256_GCM_SHA384 first; we put the suite every TLS 1.3 stack must implement
/// (RFC 8446 §9.1) and QUIC's Initial packets already use (RFC 9001 §5.2) first. Its key schedule
/// runs on SHA-256, which current CPUs compute in hardware: with SHA-384 the HKDF work alone was
/// 10.6% of the CPU time of a loopback handshake (docs/LOAD.md). The other suites stay offered.
pub fn provider() -> Arc<CryptoProvider> {
    let mut provider = rustls::crypto::ring::default_provider();
    let preferred = rustls::CipherSuite::TLS13_AES_128_GCM_SHA256;
    provider
        .cipher_suites
        .sort_by_key(|suite| suite.suite() != preferred);
    Arc::new(provider)
}

/// The TLS secrets log of every configuration here: rustls' [`rustls::KeyLogFile`], which
/// appends the handshake and traffic secrets in the NSS key log format (what Wireshark reads to
/// decrypt QUIC) to the file named by the `SSLKEYLOGFILE` environment variable when the
/// configuration is built, and does nothing when it is unset (the default). Secrets in a file
/// decrypt every connection they cover: set it only for debugging.
fn key_log() -> Arc<dyn rustls::KeyLog> {
    Arc::new(rustls::KeyLogFile::new())
}

/// A self-signed certificate and its private key for `names` (DNS names or IP addresses).
pub fn self_signed(
    names: &[&str],
) -> Result<(CertificateDer<'static>, PrivateKeyDer<'static>), TlsError> {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let certified = rcgen::generate_simple_self_signed(names)?;
    let key =
        PrivateKeyDer::try_from(certified.key_pair.serialize_der()).map_err(|e| TlsError::Pem {
            path: "generated key".into(),
            message: e.to_string(),
        })?;
    Ok((certified.cert.der().clone(), key))
}

/// A TLS 1.3 client configuration offering `alpn` and trusting `trust`. Session resumption is
/// off (no tickets are stored or offered; tickets make a client's connections linkable):
/// [`client_config_0rtt`] turns on resumption and 0-RTT, see "Session resumption and 0-RTT" in
/// docs/ARCHITECTURE.md.
pub fn client_config(
    alpn: &[&[u8]],
    trust: ServerTrust,
) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let provider = provider();
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])?;
    let mut config = match trust {
        ServerTrust::Roots(roots) => {
            let mut store = RootCertStore::empty();
            for cert in roots {
                store.add(cert)?;
            }
            builder.with_root_certificates(store).with_no_client_auth()
        }
        ServerTrust::Insecure => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(InsecureVerifier::new(provider)))
            .with_no_client_auth(),
    };
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config.resumption = rustls::client::Resumption::disabled();
    config.key_log = key_log();
    config.cert_decompressors = mpquic_proto::crypto::cert_compression::decompressors();
    Ok(Arc::new(config))
}

/// A TLS 1.3 server configuration accepting `alpn` and presenting `chain` (leaf first) with
/// `key`. Session tickets are off; [`server_config_0rtt`] issues them and accepts 0-RTT.
/// Certificate compression (RFC 8879) is on: when the client offers zlib or brotli, the
/// certificate message goes compressed (made once and cached by rustls), which keeps a large
/// chain's first flight within the anti-amplification budget of three times the client's
/// first datagram (RFC 9000 §8.1) and saves a round trip; [`server_cert_compression`] turns
/// it off.
pub fn server_config(
    alpn: &[&[u8]],
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_no_client_auth()
        .with_single_cert(chain, key)?;
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config.send_tls13_tickets = 0;
    config.key_log = key_log();
    config.cert_compressors = mpquic_proto::crypto::cert_compression::compressors();
    Ok(Arc::new(config))
}

/// `config` with certificate compression (RFC 8879: zlib, then brotli) on or off; the
/// configurations made here have it on.
pub fn server_cert_compression(
    config: Arc<rustls::ServerConfig>,
    on: bool,
) -> Arc<rustls::ServerConfig> {
    let mut config = Arc::unwrap_or_clone(config);
    config.cert_compressors = if on {
        mpquic_proto::crypto::cert_compression::compressors()
    } else {
        Vec::new()
    };
    Arc::new(config)
}

/// `config` offering certificate compression (RFC 8879: zlib, then brotli) or not; the
/// configurations made here offer it.
pub fn client_cert_compression(
    config: Arc<rustls::ClientConfig>,
    on: bool,
) -> Arc<rustls::ClientConfig> {
    let mut config = Arc::unwrap_or_clone(config);
    config.cert_decompressors = if on {
        mpquic_proto::crypto::cert_compression::decompressors()
    } else {
        Vec::new()
    };
    Arc::new(config)
}

/// [`client_config`] with session resumption and 0-RTT (RFC 9001 §4.6): tickets, and the
/// server transport parameters rustls remembers with them (RFC 9000 §7.4.1), go to `store`
/// (rustls' `ClientSessionStore` trait, keyed by server name; `None`: an in-memory cache of
/// [`DEFAULT_SESSION_CACHE_SIZE`] sessions). Every connection made with the returned
/// configuration shares the store. rustls 0.23 cannot serialize tickets, so they do not
/// outlive the process.
pub fn client_config_0rtt(
    alpn: &[&[u8]],
    trust: ServerTrust,
    store: Option<Arc<dyn rustls::client::ClientSessionStore>>,
) -> Result<Arc<rustls::ClientConfig>, TlsError> {
    let mut config = Arc::unwrap_or_clone(client_config(alpn, trust)?);
    let store = store.unwrap_or_else(memory_session_store);
    mpquic_proto::crypto::resumption::client_enable_0rtt(&mut config, store);
    Ok(Arc::new(config))
}

/// [`server_config`] that issues session tickets and accepts 0-RTT (max_early_data_size
/// 0xffffffff, RFC 9001 §4.6.1). Anti-replay: rustls' stateful, single-use tickets (a
/// resumption takes its session out of the in-memory cache, RFC 8446 §8.1), so a replayed
/// ClientHello gets no early data from this server process; see
/// `mpquic_proto::crypto::resumption`.
pub fn server_config_0rtt(
    alpn: &[&[u8]],
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let mut config = Arc::unwrap_or_clone(server_config(alpn, chain, key)?);
    mpquic_proto::crypto::resumption::server_allow_0rtt(&mut config);
    Ok(Arc::new(config))
}

pub use mpquic_proto::crypto::resumption::{memory_session_store, DEFAULT_SESSION_CACHE_SIZE};

/// Every certificate in a PEM file.
pub fn load_certs(path: &Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let pem_error = |e: rustls_pki_types::pem::Error| TlsError::Pem {
        path: path.display().to_string(),
        message: e.to_string(),
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(pem_error)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_error)?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate(path.display().to_string()));
    }
    Ok(certs)
}

/// The first private key (PKCS#8, PKCS#1 or SEC1) in a PEM file.
pub fn load_key(path: &Path) -> Result<PrivateKeyDer<'static>, TlsError> {
    PrivateKeyDer::from_pem_file(path).map_err(|e| TlsError::Pem {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

/// PEM text of a certificate (for writing the generated certificate of a server to a file).
pub fn cert_pem(cert: &CertificateDer<'_>) -> String {
    let b64 = base64_encode(cert.as_ref());
    let mut out = String::from("-----BEGIN CERTIFICATE-----\n");
    for line in b64.as_bytes().chunks(64) {
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str("-----END CERTIFICATE-----\n");
    out
}

fn base64_encode(data: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A server certificate verifier that accepts any certificate but still checks the TLS 1.3
/// handshake signature with the provider's algorithms (so the server must hold the private key
/// of the certificate it presents). Never use it where the server's identity matters.
#[derive(Debug)]
pub struct InsecureVerifier {
    provider: Arc<CryptoProvider>,
}

impl InsecureVerifier {
    /// A verifier checking handshake signatures with `provider`'s algorithms.
    pub fn new(provider: Arc<CryptoProvider>) -> Self {
        Self { provider }
    }
}

impl ServerCertVerifier for InsecureVerifier {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_known_vectors() {
        assert_eq!(base64_encode(b""), "");
        assert_eq!(base64_encode(b"f"), "Zg==");
        assert_eq!(base64_encode(b"fo"), "Zm8=");
        assert_eq!(base64_encode(b"foo"), "Zm9v");
        assert_eq!(base64_encode(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn provider_prefers_aes_128_gcm_sha256_and_keeps_every_suite() {
        let suites: Vec<_> = provider().cipher_suites.iter().map(|s| s.suite()).collect();
        assert_eq!(suites[0], rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
        let defaults = rustls::crypto::ring::default_provider().cipher_suites;
        assert_eq!(suites.len(), defaults.len());
        assert!(defaults.iter().all(|d| suites.contains(&d.suite())));
    }

    #[test]
    fn generated_certificate_round_trips_through_pem() {
        let (cert, key) = self_signed(&["localhost", "127.0.0.1"]).expect("self-signed");
        let dir = std::env::temp_dir().join(format!("mpquic-tls-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("cert.pem");
        std::fs::write(&path, cert_pem(&cert)).expect("write");
        assert_eq!(load_certs(&path).expect("load"), vec![cert.clone()]);
        assert!(server_config(&[b"x"], vec![cert], key).is_ok());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
