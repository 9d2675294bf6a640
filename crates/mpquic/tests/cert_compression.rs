//! Certificate compression (RFC 8879) against quinn 0.11 with rustls' own defaults (what a
//! quinn user gets): a large certificate goes compressed in both directions, and the handshake
//! carries several kilobytes less. Over loopback UDP.

mod common;

use std::sync::Arc;

use common::{accepted, addr, connect_with, transport, within};
use mpquic::{config, hq, tls, MultipathMode};
use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// Names besides "localhost": a certificate of about 10 kB.
const EXTRA_NAMES: u32 = 300;

/// A self-signed certificate for "localhost" and [`EXTRA_NAMES`] varied names.
fn large_certificate() -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let names: Vec<String> = std::iter::once("localhost".to_owned())
        .chain((0..EXTRA_NAMES).map(|i| {
            format!(
                "{:08x}.shard-{}.example.net",
                i.wrapping_mul(2_654_435_761),
                i % 7
            )
        }))
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    tls::self_signed(&names).expect("certificate")
}

fn ring() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A quinn client with rustls' default client settings, trusting `cert`.
fn quinn_default_client(cert: CertificateDer<'static>) -> quinn::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).expect("trust anchor");
    let mut tls = rustls::ClientConfig::builder_with_provider(ring())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![hq::ALPN.to_vec()];
    assert!(
        !tls.cert_decompressors.is_empty(),
        "rustls offers certificate decompression by default"
    );
    quinn::ClientConfig::new(Arc::new(
        QuicClientConfig::try_from(tls).expect("quinn client crypto"),
    ))
}

/// Our server on 127.0.0.1 presenting the large certificate, compressing it or not, with its
/// side of the next connection accepted in a task; and the certificate, for the client to trust.
fn our_server(
    compression: bool,
) -> (
    mpquic::Endpoint,
    tokio::task::JoinHandle<mpquic::Connection>,
    CertificateDer<'static>,
) {
    let (cert, key) = large_certificate();
    let server_tls = tls::server_config(&[hq::ALPN], vec![cert.clone()], key).expect("tls");
    let server_tls = tls::server_cert_compression(server_tls, compression);
    // The handshake's bytes are measured: no 16 kB path MTU probe of a loopback path may land
    // in them (it goes out as soon as the handshake is confirmed and 1452 bytes work).
    let mut transport = transport(MultipathMode::Auto);
    if let Some(mtud) = transport.mtu_discovery.as_mut() {
        mtud.same_host_ceiling = 0;
    }
    let server = mpquic::Endpoint::server(
        config::server(server_tls, transport),
        &[addr("127.0.0.1:0")],
    )
    .expect("server");
    let serving = {
        let server = server.clone();
        tokio::spawn(async move { accepted(&server).await })
    };
    (server, serving, cert)
}

/// Compression must save at least 3,000 of the handshake's bytes.
fn assert_saved(what: &str, plain: u64, compressed: u64) {
    println!("{what}: {plain} bytes uncompressed, {compressed} compressed");
    assert!(
        compressed + 3_000 < plain,
        "{what}: {compressed} bytes compressed vs {plain} plain"
    );
}

/// Bytes a quinn client has received when its handshake with our server (presenting the
/// large certificate, compressing it or not) completes.
async fn quinn_client_handshake_bytes(compression: bool) -> u64 {
    let (server, serving, cert) = our_server(compression);
    let mut client = quinn::Endpoint::client(addr("127.0.0.1:0")).expect("quinn client");
    client.set_default_client_config(quinn_default_client(cert));
    let conn = within(
        "quinn handshake",
        client
            .connect(server.local_addr(), "localhost")
            .expect("connect"),
    )
    .await
    .expect("quinn's handshake with our large certificate");
    let received = conn.stats().udp_rx.bytes;
    let ours = serving.await.expect("our side of the handshake");
    conn.close(0u32.into(), b"done");
    ours.close(0, b"done");
    within("quinn idle", client.wait_idle()).await;
    received
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_client_gets_our_large_certificate_compressed() {
    let plain = quinn_client_handshake_bytes(false).await;
    let compressed = quinn_client_handshake_bytes(true).await;
    assert_saved("quinn client received", plain, compressed);
}

/// Bytes a quinn server (rustls' default server settings: compression on) has sent when its
/// handshake with our client, offering compression or not, completes.
async fn quinn_server_handshake_bytes(compression: bool) -> u64 {
    let (cert, key) = large_certificate();
    let mut server_tls = rustls::ServerConfig::builder_with_provider(ring())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .expect("TLS 1.3")
        .with_no_client_auth()
        .with_single_cert(vec![cert.clone()], key)
        .expect("certificate and key");
    server_tls.alpn_protocols = vec![hq::ALPN.to_vec()];
    assert!(
        !server_tls.cert_compressors.is_empty(),
        "rustls compresses certificates by default"
    );
    let crypto = QuicServerConfig::try_from(server_tls).expect("quinn server crypto");
    let server = quinn::Endpoint::server(
        quinn::ServerConfig::with_crypto(Arc::new(crypto)),
        addr("127.0.0.1:0"),
    )
    .expect("quinn server");
    let serving = {
        let server = server.clone();
        tokio::spawn(async move {
            let conn = server.accept().await.expect("incoming").await;
            conn.expect("quinn's handshake with us")
        })
    };
    let client_tls =
        tls::client_config(&[hq::ALPN], tls::ServerTrust::Roots(vec![cert])).expect("client tls");
    let client_tls = tls::client_cert_compression(client_tls, compression);
    let server_addr = server.local_addr().expect("address");
    let (client, conn) = connect_with(
        &["127.0.0.1:0"],
        server_addr,
        config::client(client_tls, transport(MultipathMode::Auto)),
    )
    .await;
    let theirs = serving.await.expect("quinn's side");
    let sent = theirs.stats().udp_tx.bytes;
    conn.close(0, b"done");
    within("idle", client.wait_idle()).await;
    theirs.close(0u32.into(), b"done");
    sent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_client_takes_a_compressed_certificate_from_quinn() {
    let plain = quinn_server_handshake_bytes(false).await;
    let compressed = quinn_server_handshake_bytes(true).await;
    assert_saved("quinn server sent", plain, compressed);
}

/// Bytes our server (compression on, the default) has sent when its handshake with our
/// client, offering compression or not, completes on the server.
async fn our_server_handshake_bytes(client_offers: bool) -> u64 {
    let (server, serving, cert) = our_server(true);
    let client_tls =
        tls::client_config(&[hq::ALPN], tls::ServerTrust::Roots(vec![cert])).expect("client tls");
    let client_tls = tls::client_cert_compression(client_tls, client_offers);
    let (client, conn) = connect_with(
        &["127.0.0.1:0"],
        server.local_addr(),
        config::client(client_tls, transport(MultipathMode::Auto)),
    )
    .await;
    let ours = serving.await.expect("server side");
    let sent = ours.stats().bytes_sent;
    conn.close(0, b"done");
    within("idle", client.wait_idle()).await;
    sent
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_server_sends_uncompressed_to_a_client_that_does_not_offer() {
    let plain = our_server_handshake_bytes(false).await;
    let compressed = our_server_handshake_bytes(true).await;
    assert_saved(
        "our server sent (client offering or not)",
        plain,
        compressed,
    );
}
