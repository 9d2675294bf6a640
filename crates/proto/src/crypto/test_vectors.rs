//! RFC 9001 Appendix A test vectors, and the RFC 10069 nonce example.
//!
//! The long inputs (the client's CRYPTO frame, the full protected packets) are in
//! `rfc9001_vectors.rs`; the short values checked here are the intermediate values the RFC prints
//! (keys, protected headers, samples). When the RFC text is beside the repository
//! (`../shared/specs/rfc9001.md`), `embedded_vectors_match_the_rfc_text` checks the embedded
//! inputs against it.

use rustls::crypto::cipher::{AeadKey, Iv};
use rustls::crypto::tls13::OkmBlock;
use rustls::Tls13CipherSuite;

use super::rfc9001_vectors::{
    A2_CLIENT_CRYPTO, A2_PROTECTED, A3_PROTECTED, A3_SERVER_PAYLOAD, A4_RETRY,
};
use super::*;

const CID: [u8; 8] = [0x83, 0x94, 0xc8, 0xf0, 0x3e, 0x51, 0x57, 0x08];

/// The RFC text, when the reference material sits beside the repository (not needed: the
/// vectors are in `rfc9001_vectors.rs`; with the text present they are checked against it).
fn rfc9001() -> Option<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/specs/rfc9001.md"
    );
    std::fs::read_to_string(path).ok()
}

/// Joins hex lines.
fn joined(lines: &[&str]) -> Vec<u8> {
    hex(&lines.concat())
}

/// The `~~~` blocks of the section with heading `heading` (optionally followed by an anchor).
fn blocks(spec: &str, heading: &str) -> Vec<String> {
    let anchored = format!("{heading} {{");
    let mut lines = spec
        .lines()
        .skip_while(|l| *l != heading && !l.starts_with(&anchored));
    assert!(lines.next().is_some(), "section {heading} not found");
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in lines.take_while(|l| !l.starts_with("# ") && !l.starts_with("## ")) {
        if line.starts_with("~~~") {
            match current.take() {
                Some(block) => out.push(block),
                None => current = Some(String::new()),
            }
        } else if let Some(block) = current.as_mut() {
            block.push_str(line);
            block.push('\n');
        }
    }
    out
}

pub(crate) fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_digit(16).unwrap_or_else(|| panic!("not hex: {c:?}")) as u8)
        .collect();
    assert!(digits.len() % 2 == 0, "odd number of hex digits");
    digits.chunks(2).map(|p| (p[0] << 4) | p[1]).collect()
}

/// Seals `header ‖ payload` with `keys` and checks it against `expected`, then unprotects it with
/// the peer's keys.
fn check_initial(
    keys: &KeyPair,
    peer: &KeyPair,
    header: &[u8],
    payload: &[u8],
    pn: u64,
    pn_len: usize,
    expected: &[u8],
) {
    let mut packet = [header, payload].concat();
    let pn_offset = header.len() - pn_len;
    seal_packet(
        &keys.local,
        None,
        pn,
        &mut packet,
        header.len(),
        pn_offset,
        pn_len,
    )
    .unwrap();
    assert_eq!(packet.len(), expected.len());
    assert_eq!(packet, expected);

    let (first, got_pn_len) =
        remove_header_protection(peer.remote.header.as_ref(), &mut packet, pn_offset).unwrap();
    assert_eq!((first, got_pn_len), (header[0], pn_len));
    assert_eq!(&packet[..header.len()], header);
    let range = open_payload(
        peer.remote.packet.as_ref(),
        None,
        pn,
        &mut packet,
        header.len(),
    )
    .unwrap();
    assert_eq!(&packet[range], payload);
}

/// The embedded inputs are the RFC's (checked when the RFC text is beside the repository).
#[test]
fn embedded_vectors_match_the_rfc_text() {
    let Some(spec) = rfc9001() else {
        println!("skipping: ../shared/specs/rfc9001.md is not beside the repository");
        return;
    };
    let client = blocks(&spec, "## Client Initial");
    assert_eq!(joined(A2_CLIENT_CRYPTO), hex(&client[0]));
    assert_eq!(
        hex(&client[1]),
        hex("c300000001088394c8f03e5157080000449e00000002")
    );
    assert_eq!(joined(A2_PROTECTED), hex(&client[3]));
    let server = blocks(&spec, "## Server Initial");
    assert_eq!(joined(A3_SERVER_PAYLOAD), hex(&server[0]));
    assert_eq!(
        hex(&server[1]),
        hex("c1000000010008f067a5502a4262b50040750001")
    );
    assert_eq!(joined(A3_PROTECTED), hex(&server[3]));
    assert_eq!(joined(A4_RETRY), hex(&blocks(&spec, "## Retry")[0]));
}

/// RFC 9001 §A.1 and §A.2: client Initial keys and the protected client Initial.
#[test]
fn a2_client_initial() {
    let mut payload = joined(A2_CLIENT_CRYPTO);
    payload.resize(1162, 0); // "plus enough PADDING frames to make a 1162-byte payload"
    let header = hex("c300000001088394c8f03e5157080000449e00000002");
    let expected = joined(A2_PROTECTED);
    assert_eq!(expected.len(), 1200);
    // The values printed in §A.2: protected header, sample, last bytes.
    assert_eq!(
        expected[..22],
        hex("c000000001088394c8f03e5157080000449e7b9aec34")[..]
    );
    assert_eq!(
        expected[22..38],
        hex("d1b1c98dd7689fb8ec11d242b123dc9b")[..]
    );
    assert_eq!(
        expected[1184..],
        hex("e221af44860018ab0856972e194cd934")[..]
    );

    let client = initial_keys(&CID, Side::Client);
    let server = initial_keys(&CID, Side::Server);
    check_initial(&client, &server, &header, &payload, 2, 4, &expected);
}

/// RFC 9001 §A.1 and §A.3: server Initial keys and the protected server Initial.
#[test]
fn a3_server_initial() {
    let payload = joined(A3_SERVER_PAYLOAD);
    let header = hex("c1000000010008f067a5502a4262b50040750001");
    let expected = joined(A3_PROTECTED);
    assert_eq!(
        expected[..20],
        hex("cf000000010008f067a5502a4262b5004075c0d9")[..]
    );
    assert_eq!(
        expected[22..38],
        hex("2cd0991cd25b0aac406a5816b6394100")[..]
    );

    let client = initial_keys(&CID, Side::Client);
    let server = initial_keys(&CID, Side::Server);
    check_initial(&server, &client, &header, &payload, 1, 2, &expected);
}

/// RFC 9001 §A.4: the Retry integrity tag.
#[test]
fn a4_retry() {
    let retry = joined(A4_RETRY);
    assert_eq!(retry.len(), 36);
    let tag = retry_integrity_tag(&CID, &retry[..20]);
    assert_eq!(tag[..], hex("04a265ba2eff4d829058fb3f0f2496ba")[..]);
    assert_eq!(tag[..], retry[20..]);
    assert!(keys::verify_retry_integrity(&CID, &retry));
}

fn chacha() -> &'static Tls13CipherSuite {
    rustls::crypto::ring::cipher_suite::TLS13_CHACHA20_POLY1305_SHA256
        .tls13()
        .unwrap()
}

/// HKDF-Expand-Label (RFC 8446 §7.1) through rustls' HKDF, for checking the §A.5 derivations.
fn expand_label(secret: &[u8], label: &[u8], len: usize) -> Vec<u8> {
    let expander = chacha()
        .hkdf_provider
        .expander_for_okm(&OkmBlock::new(secret));
    let mut out = vec![0u8; len];
    let info: [&[u8]; 5] = [
        &(len as u16).to_be_bytes(),
        &[6 + label.len() as u8],
        b"tls13 ",
        label,
        &[0],
    ];
    expander.expand_slice(&info, &mut out).unwrap();
    out
}

fn key32(bytes: &[u8]) -> AeadKey {
    AeadKey::from(<[u8; 32]>::try_from(bytes).unwrap())
}

/// RFC 9001 §A.5: ChaCha20-Poly1305 short header packet. rustls cannot build keys from a raw
/// secret through its public API, so the key, IV and header protection key are derived with
/// rustls' HKDF here, checked against the RFC, and turned into keys with the suite's QUIC
/// `Algorithm`.
#[test]
fn a5_chacha20_short_header() {
    let secret = hex("9ac312a7f877468ebe69422748ad00a15443f18203a07d6060f688f30f21632b");
    let key = expand_label(&secret, b"quic key", 32);
    let iv = expand_label(&secret, b"quic iv", 12);
    let hp = expand_label(&secret, b"quic hp", 32);
    let ku = expand_label(&secret, b"quic ku", 32);
    assert_eq!(
        key,
        hex("c6d98ff3441c3fe1b2182094f69caa2ed4b716b65488960a7a984979fb23e1c8")
    );
    assert_eq!(iv, hex("e0459b3474bdd0e44a41c144"));
    assert_eq!(
        hp,
        hex("25a282b9e82f06f21f488917a4fc8f1b73573685608597d0efcb076b0ab7a7a4")
    );
    assert_eq!(
        ku,
        hex("1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9")
    );

    let alg = chacha().quic.unwrap();
    let keys = DirectionalKeys {
        header: alg.header_protection_key(key32(&hp)),
        packet: alg.packet_key(
            key32(&key),
            Iv::from(<[u8; 12]>::try_from(&iv[..]).unwrap()),
        ),
    };
    let mut packet = hex("4200bff401");
    seal_packet(&keys, None, 654_360_564, &mut packet, 4, 1, 3).unwrap();
    assert_eq!(packet, hex("4cfe4189655e5cd55c41f69080575d7999c25a5bfb"));

    let (first, pn_len) = remove_header_protection(keys.header.as_ref(), &mut packet, 1).unwrap();
    assert_eq!((first, pn_len), (0x42, 3));
    let range = open_payload(keys.packet.as_ref(), None, 654_360_564, &mut packet, 4).unwrap();
    assert_eq!(&packet[range], &[0x01]);
}

/// RFC 10069 §"Nonce Calculation" example: IV 6b26114b9cba2b63a9e8dd4f, path ID 3, packet number
/// 54321 give the nonce 6b2611489cba2b63a9e8097e. Checked by sealing through rustls'
/// `encrypt_in_place_for_path` and through ring with the expected nonce.
#[test]
fn multipath_nonce_example() {
    let iv: [u8; 12] = hex("6b26114b9cba2b63a9e8dd4f").try_into().unwrap();
    let nonce: [u8; 12] = hex("6b2611489cba2b63a9e8097e").try_into().unwrap();
    let key = [0x42u8; 32];
    let packet_key = chacha()
        .quic
        .unwrap()
        .packet_key(AeadKey::from(key), Iv::from(iv));
    let header = [0x40u8, 1, 2, 3];
    let mut ours = b"multipath nonce".to_vec();
    let tag = packet_key
        .encrypt_in_place_for_path(3, 54321, &header, &mut ours)
        .unwrap();
    ours.extend_from_slice(tag.as_ref());

    let ring_key = ring::aead::LessSafeKey::new(
        ring::aead::UnboundKey::new(&ring::aead::CHACHA20_POLY1305, &key).unwrap(),
    );
    let mut theirs = b"multipath nonce".to_vec();
    ring_key
        .seal_in_place_append_tag(
            ring::aead::Nonce::assume_unique_for_key(nonce),
            ring::aead::Aad::from(header),
            &mut theirs,
        )
        .unwrap();
    assert_eq!(ours, theirs);
}
