//! In-memory handshakes between two [`TlsSession`]s, per-epoch packet protection with the keys
//! they produce, and 1-RTT key updates.

use super::*;
use crate::crypto::one_rtt::{self, KeyUpdateOutcome};
use crate::crypto::testing::{
    client_config, self_signed_ed25519, self_signed_ed25519_with_seed, server_config,
    test_tls_configs,
};
use crate::crypto::{
    initial_keys, open_payload, remove_header_protection, seal_packet, DirectionalKeys,
};

const ALPN: &[u8] = b"mpquic-test";

/// One endpoint of an in-memory handshake.
struct Peer {
    session: TlsSession,
    handshake: Option<KeyPair>,
    one_rtt: Option<OneRttKeys>,
    /// What `write_handshake` produced, in order: "Data(epoch)", "HandshakeKeys", "OneRttKeys".
    log: Vec<String>,
}

impl Peer {
    fn new(session: TlsSession) -> Self {
        Self {
            session,
            handshake: None,
            one_rtt: None,
            log: Vec::new(),
        }
    }
}

/// Moves everything `from` writes into `to`, epoch by epoch; returns whether anything moved.
fn pump(from: &mut Peer, to: &mut Peer) -> Result<bool, TransportError> {
    let mut moved = false;
    for out in from.session.write_handshake() {
        match out {
            HandshakeOutput::Data(epoch, bytes) => {
                from.log.push(format!("Data({epoch})"));
                to.session.read_handshake_at(epoch, &bytes)?;
                moved = true;
            }
            HandshakeOutput::HandshakeKeys(keys) => {
                from.log.push("HandshakeKeys".into());
                assert!(from.handshake.replace(keys).is_none());
            }
            HandshakeOutput::OneRttKeys(keys) => {
                from.log.push("OneRttKeys".into());
                assert!(from.one_rtt.replace(keys).is_none());
            }
        }
    }
    Ok(moved)
}

/// Runs a handshake to quiescence. `Err((side, error))` names the side whose read failed.
fn run(client: &mut Peer, server: &mut Peer) -> Result<(), (Side, TransportError)> {
    for _ in 0..10 {
        let a = pump(client, server).map_err(|e| (Side::Server, e))?;
        let b = pump(server, client).map_err(|e| (Side::Client, e))?;
        if !a && !b {
            return Ok(());
        }
    }
    panic!("handshake did not settle");
}

fn sessions(alpn: &[&[u8]]) -> (Peer, Peer) {
    let (cc, sc) = test_tls_configs(alpn);
    let client = TlsSession::new_client(cc, "localhost", b"client params".to_vec()).unwrap();
    let server = TlsSession::new_server(sc, b"server params".to_vec()).unwrap();
    (Peer::new(client), Peer::new(server))
}

fn handshake() -> (Peer, Peer) {
    let (mut client, mut server) = sessions(&[ALPN]);
    run(&mut client, &mut server).unwrap();
    (client, server)
}

#[test]
fn full_handshake() {
    let (client, server) = handshake();
    for peer in [&client, &server] {
        assert!(!peer.session.is_handshaking());
        assert_eq!(peer.session.alpn_protocol(), Some(ALPN));
        assert_eq!(peer.session.read_epoch(), Epoch::Data);
        assert!(peer.handshake.is_some() && peer.one_rtt.is_some());
    }
    assert_eq!(client.session.side(), Side::Client);
    assert_eq!(server.session.side(), Side::Server);
    assert_eq!(
        client.session.peer_transport_params(),
        Some(&b"server params"[..])
    );
    assert_eq!(
        server.session.peer_transport_params(),
        Some(&b"client params"[..])
    );
    assert_eq!(server.session.server_name(), Some("localhost"));
    assert_eq!(client.session.server_name(), None);
    let (cert, _) = self_signed_ed25519(&["localhost"]);
    assert_eq!(client.session.peer_certificates().unwrap(), &[cert][..]);
    assert!(server.session.peer_certificates().is_none());
    // RFC 9001 §4.1.4: bytes before a key change belong to the old level.
    let expected = [
        "Data(Initial)",
        "HandshakeKeys",
        "Data(Handshake)",
        "OneRttKeys",
    ];
    assert_eq!(client.log, expected);
    assert_eq!(server.log, expected);
}

#[test]
fn data_at_wrong_epoch_is_protocol_violation() {
    let (mut client, mut server) = sessions(&[ALPN]);
    let out = client.session.write_handshake();
    let Some(HandshakeOutput::Data(Epoch::Initial, hello)) = out.first() else {
        panic!("client starts with Initial data: {out:?}");
    };
    let err = server
        .session
        .read_handshake_at(Epoch::Handshake, hello)
        .unwrap_err();
    assert_eq!(err.code, TransportErrorCode::PROTOCOL_VIOLATION);
    server
        .session
        .read_handshake_at(Epoch::Initial, hello)
        .unwrap();
    assert_eq!(server.session.read_epoch(), Epoch::Handshake);
}

#[test]
fn alpn_mismatch_is_crypto_error() {
    let (cert, key) = self_signed_ed25519(&["localhost"]);
    let cc = client_config(cert.clone(), &[b"one"]);
    let sc = server_config(cert, key, &[b"two"]);
    let mut client = Peer::new(TlsSession::new_client(cc, "localhost", vec![]).unwrap());
    let mut server = Peer::new(TlsSession::new_server(sc, vec![]).unwrap());
    let (side, err) = run(&mut client, &mut server).unwrap_err();
    // RFC 9001 §8.1: no_application_protocol (120) -> 0x0178.
    assert_eq!(side, Side::Server);
    assert_eq!(err.code, TransportErrorCode(0x178));
}

#[test]
fn untrusted_certificate_is_crypto_error() {
    let (other, _) = self_signed_ed25519_with_seed(&["localhost"], [7; 32]);
    let (cert, key) = self_signed_ed25519(&["localhost"]);
    let cc = client_config(other, &[ALPN]);
    let sc = server_config(cert, key, &[ALPN]);
    let mut client = Peer::new(TlsSession::new_client(cc, "localhost", vec![]).unwrap());
    let mut server = Peer::new(TlsSession::new_server(sc, vec![]).unwrap());
    let (side, err) = run(&mut client, &mut server).unwrap_err();
    assert_eq!(side, Side::Client);
    // Both test certificates have the same issuer name, so webpki finds the anchor and rejects
    // the signature: decrypt_error (51) -> 0x0133 (RFC 9001 §4.8).
    assert_eq!(err.code, TransportErrorCode::crypto(51), "{err}");
}

#[test]
fn wrong_server_name_is_crypto_error() {
    let (cc, sc) = test_tls_configs(&[ALPN]);
    let mut client = Peer::new(TlsSession::new_client(cc, "example.com", vec![]).unwrap());
    let mut server = Peer::new(TlsSession::new_server(sc, vec![]).unwrap());
    let (side, err) = run(&mut client, &mut server).unwrap_err();
    assert_eq!(side, Side::Client);
    assert!(err.code.crypto_alert().is_some(), "{err}");
}

#[test]
fn invalid_inputs_are_errors() {
    let (cc, _) = test_tls_configs(&[]);
    assert!(matches!(
        TlsSession::new_client(cc, "localhost", vec![]),
        Err(CryptoError::InvalidConfig(_))
    ));
    let (cc, _) = test_tls_configs(&[ALPN]);
    assert!(matches!(
        TlsSession::new_client(cc, "not a name!", vec![]),
        Err(CryptoError::InvalidServerName(_))
    ));
    let (_, mut server) = sessions(&[ALPN]);
    let err = server
        .session
        .read_handshake(&[0x01, 0x00, 0x00, 0x02, 0xff, 0xff])
        .unwrap_err();
    assert!(err.code.crypto_alert().is_some(), "{err}");
}

/// Short header packet: first byte 0x43 (4-byte pn), 8-byte DCID, pn, payload.
fn short(pn: u64, payload: &[u8]) -> Vec<u8> {
    let mut p = vec![0x43];
    p.extend_from_slice(&[0xaa; 8]);
    p.extend_from_slice(&(pn as u32).to_be_bytes());
    p.extend_from_slice(payload);
    p
}

fn round_trip(tx: &DirectionalKeys, rx: &DirectionalKeys, path_id: Option<u32>, long: bool) {
    let mut p = short(77, b"epoch round trip payload");
    if long {
        p[0] = 0xc3; // a long header: 4 protected bits
    }
    seal_packet(tx, path_id, 77, &mut p, 13, 9, 4).unwrap();
    let (_, pn_len) = remove_header_protection(rx.header.as_ref(), &mut p, 9).unwrap();
    assert_eq!(pn_len, 4);
    let r = open_payload(rx.packet.as_ref(), path_id, 77, &mut p, 13).unwrap();
    assert_eq!(&p[r], b"epoch round trip payload");
}

#[test]
fn every_epoch_round_trips() {
    let (client, server) = handshake();
    let ci = initial_keys(&[1, 2, 3, 4], Side::Client);
    let si = initial_keys(&[1, 2, 3, 4], Side::Server);
    let ch = client.handshake.as_ref().unwrap();
    let sh = server.handshake.as_ref().unwrap();
    for path_id in [None, Some(0), Some(5)] {
        round_trip(&ci.local, &si.remote, path_id, true);
        round_trip(&si.local, &ci.remote, path_id, true);
        round_trip(&ch.local, &sh.remote, path_id, true);
        round_trip(&sh.local, &ch.remote, path_id, true);
    }
    let (mut c1, mut s1) = (client.one_rtt.unwrap(), server.one_rtt.unwrap());
    for path_id in [None, Some(0), Some(5)] {
        for pn in [0u64, 1, 1000] {
            let p = send(&mut c1, path_id, pn);
            assert_eq!(
                recv(&mut s1, path_id, pn, p).unwrap().1,
                KeyUpdateOutcome::Current
            );
            let p = send(&mut s1, path_id, pn);
            assert_eq!(
                recv(&mut c1, path_id, pn, p).unwrap().1,
                KeyUpdateOutcome::Current
            );
        }
    }
}

/// Both sides' 1-RTT keys after an in-memory handshake, handshake confirmed (also used by
/// `connection::keys`).
pub(crate) fn one_rtt_pair() -> (OneRttKeys, OneRttKeys) {
    let (client, server) = handshake();
    let (mut c, mut s) = (client.one_rtt.unwrap(), server.one_rtt.unwrap());
    c.set_handshake_confirmed();
    s.set_handshake_confirmed();
    (c, s)
}

fn send(keys: &mut OneRttKeys, path_id: Option<u32>, pn: u64) -> Vec<u8> {
    let mut p = short(pn, &pn.to_be_bytes());
    keys.seal(path_id, pn, &mut p, 13, 9, 4).unwrap();
    p
}

/// Receives a packet sent by [`send`]; returns the key phase bit seen and the outcome.
fn recv(
    keys: &mut OneRttKeys,
    path_id: Option<u32>,
    pn: u64,
    mut p: Vec<u8>,
) -> Result<(bool, KeyUpdateOutcome), CryptoError> {
    let (first, pn_len) = remove_header_protection(keys.remote_header(), &mut p, 9)?;
    assert_eq!(pn_len, 4);
    let phase = first & one_rtt::KEY_PHASE_BIT != 0;
    let (r, outcome) = keys.open(path_id, pn, &mut p, 13, phase)?;
    assert_eq!(&p[r], &pn.to_be_bytes());
    Ok((phase, outcome))
}

fn state(k: &OneRttKeys) -> (bool, u64, bool) {
    (k.key_phase(), k.generation(), k.has_previous_remote())
}

/// Both sides' keys as the simulator's stand-ins (crypto::sim).
fn sim_one_rtt_pair() -> (OneRttKeys, OneRttKeys) {
    let (c, s) = one_rtt_pair();
    (c.into_simulation_only(), s.into_simulation_only())
}

#[test]
fn key_update_both_sides() {
    check_key_update_both_sides(one_rtt_pair());
}

#[test]
fn key_update_both_sides_with_simulation_keys() {
    check_key_update_both_sides(sim_one_rtt_pair());
}

#[test]
fn simulation_keys_do_not_talk_to_real_keys() {
    let (mut c, mut s) = one_rtt_pair();
    let (mut sc, mut ss) = sim_one_rtt_pair();
    assert_eq!(
        sc.protection(),
        crate::crypto::PacketProtection::SimulationOnly
    );
    assert_eq!(c.protection(), crate::crypto::PacketProtection::Real);
    // Whatever the other side's header protection makes of the first byte, the payload fails.
    let mut p = send(&mut sc, None, 0);
    let _ = remove_header_protection(s.remote_header(), &mut p, 9);
    assert!(s.open(None, 0, &mut p, 13, false).is_err());
    let mut p = send(&mut c, None, 1);
    let _ = remove_header_protection(ss.remote_header(), &mut p, 9);
    assert!(ss.open(None, 1, &mut p, 13, false).is_err());
    let p = send(&mut sc, Some(2), 2);
    assert_eq!(
        recv(&mut ss, Some(2), 2, p).unwrap(),
        (false, KeyUpdateOutcome::Current)
    );
}

fn check_key_update_both_sides((mut c, mut s): (OneRttKeys, OneRttKeys)) {
    let late_c2 = send(&mut c, None, 2); // phase 0, delivered after the previous key is dropped
    let late_c = send(&mut c, None, 3); // phase 0, delivered after the update
    let late_s = send(&mut s, None, 0);
    assert!(!c.can_initiate_update(false));
    assert!(c.initiate_update(false).is_err());
    c.initiate_update(true).unwrap();
    assert!(c.key_phase());
    assert!(!c.can_initiate_update(true), "must wait for the peer");

    let p = send(&mut c, None, 4);
    assert_eq!(
        recv(&mut s, None, 4, p).unwrap(),
        (true, KeyUpdateOutcome::PeerUpdated)
    );
    assert!(s.key_phase());
    assert_eq!(
        recv(&mut s, None, 3, late_c).unwrap(),
        (false, KeyUpdateOutcome::Previous)
    );

    let p = send(&mut s, None, 1);
    assert_eq!(
        recv(&mut c, None, 1, p).unwrap(),
        (true, KeyUpdateOutcome::PeerFollowed)
    );
    assert_eq!(
        recv(&mut c, None, 0, late_s).unwrap(),
        (false, KeyUpdateOutcome::Previous)
    );
    let p = send(&mut s, None, 2);
    assert_eq!(
        recv(&mut c, None, 2, p).unwrap(),
        (true, KeyUpdateOutcome::Current)
    );

    // Previous keys dropped (3 PTO later): old-phase packets no longer decrypt, state unchanged.
    c.drop_previous_remote();
    s.drop_previous_remote();
    let before = state(&s);
    assert!(matches!(
        recv(&mut s, None, 2, late_c2),
        Err(CryptoError::Decrypt)
    ));
    assert_eq!(state(&s), before);

    // A second update, initiated by the server this time.
    assert!(c.can_initiate_update(true) && s.can_initiate_update(true));
    s.initiate_update(true).unwrap();
    let p = send(&mut s, None, 3);
    assert_eq!(
        recv(&mut c, None, 3, p).unwrap(),
        (false, KeyUpdateOutcome::PeerUpdated)
    );
    let p = send(&mut c, None, 5);
    assert_eq!(
        recv(&mut s, None, 5, p).unwrap(),
        (false, KeyUpdateOutcome::PeerFollowed)
    );
    assert_eq!((c.generation(), s.generation()), (2, 2));
}

#[test]
fn flipped_phase_garbage_changes_nothing() {
    let (mut c, mut s) = one_rtt_pair();
    let p = send(&mut c, None, 0);
    recv(&mut s, None, 0, p).unwrap();
    for with_previous in [false, true] {
        if with_previous {
            s.initiate_update(true).unwrap();
        }
        let before = state(&s);
        let mut garbage = short(10, &[0x5a; 30]);
        let phase = !s.key_phase();
        assert!(matches!(
            s.open(None, 10, &mut garbage, 13, phase),
            Err(CryptoError::Decrypt)
        ));
        assert_eq!(state(&s), before);
    }
    assert_eq!(s.auth_failures(), 2);
}

#[test]
fn key_update_across_paths() {
    let (mut c, mut s) = one_rtt_pair();
    let p = send(&mut c, Some(1), 10);
    recv(&mut s, Some(1), 10, p).unwrap();
    let late_path2 = send(&mut c, Some(2), 500); // old phase, high pn on another path
    c.initiate_update(true).unwrap();
    let p = send(&mut c, Some(1), 11);
    assert_eq!(
        recv(&mut s, Some(1), 11, p).unwrap().1,
        KeyUpdateOutcome::PeerUpdated
    );
    // Path 2 has no packet in the new phase: the key phase bit alone selects the previous key.
    assert_eq!(
        recv(&mut s, Some(2), 500, late_path2).unwrap().1,
        KeyUpdateOutcome::Previous
    );
    let p = send(&mut c, Some(2), 501);
    assert_eq!(
        recv(&mut s, Some(2), 501, p).unwrap().1,
        KeyUpdateOutcome::Current
    );
    // Wrong path ID: authentication fails.
    let p = send(&mut c, Some(1), 12);
    assert!(recv(&mut s, Some(2), 12, p).is_err());
}

#[test]
fn newer_keys_for_lower_packet_number_is_key_update_error() {
    let (mut c, mut s) = one_rtt_pair();
    let p = send(&mut c, None, 20);
    recv(&mut s, None, 20, p).unwrap();
    c.initiate_update(true).unwrap();
    let p = send(&mut c, None, 10);
    let err = recv(&mut s, None, 10, p).unwrap_err();
    assert_eq!(
        err.transport_error_code(),
        Some(TransportErrorCode::KEY_UPDATE_ERROR)
    );
}

#[test]
fn aead_limits() {
    let (mut c, mut s) = one_rtt_pair();
    c.set_limits(5, u64::MAX);
    s.set_limits(u64::MAX, 2);
    assert_eq!(c.confidentiality_limit(), 5);
    assert_eq!(s.integrity_limit(), 2);
    let mut sent = 0;
    while !c.needs_key_update() {
        send(&mut c, None, sent);
        sent += 1;
    }
    assert_eq!(sent, 3);
    send(&mut c, None, 3);
    send(&mut c, None, 4);
    assert_eq!(c.remaining_before_confidentiality_limit(), 0);
    let mut p = short(5, &[0; 8]);
    let err = c.seal(None, 5, &mut p, 13, 9, 4).unwrap_err();
    assert_eq!(
        err.transport_error_code(),
        Some(TransportErrorCode::AEAD_LIMIT_REACHED)
    );
    // A key update resets the count (RFC 9001 §6.6 counts per key).
    c.initiate_update(true).unwrap();
    assert!(!c.needs_key_update());
    send(&mut c, None, 5);

    for i in 0..3u64 {
        let mut garbage = short(100 + i, &[0x11; 24]);
        let r = s.open(None, 100 + i, &mut garbage, 13, false);
        if i < 2 {
            assert!(matches!(r, Err(CryptoError::Decrypt)));
        } else {
            assert_eq!(
                r.unwrap_err().transport_error_code(),
                Some(TransportErrorCode::AEAD_LIMIT_REACHED)
            );
        }
    }
}

#[test]
fn seal_rejects_long_headers_and_sets_key_phase() {
    let (mut c, mut s) = one_rtt_pair();
    let mut p = short(1, &[0; 20]);
    p[0] = 0xc3;
    assert!(c.seal(None, 1, &mut p, 13, 9, 4).is_err());
    assert!(c.seal(None, 1, &mut Vec::new(), 13, 9, 4).is_err());
    // A stale key phase bit set by the caller is overwritten.
    let mut p = short(1, &1u64.to_be_bytes());
    p[0] |= one_rtt::KEY_PHASE_BIT;
    c.seal(None, 1, &mut p, 13, 9, 4).unwrap();
    assert_eq!(
        recv(&mut s, None, 1, p).unwrap(),
        (false, KeyUpdateOutcome::Current)
    );
    assert!(s.remote_key_for(false).is_some());
    assert!(s.remote_key_for(true).is_none());
}

#[test]
fn key_state_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<TlsSession>();
    check::<OneRttKeys>();
    check::<KeyPair>();
    check::<HandshakeOutput>();
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
    #[test]
    fn garbage_never_changes_key_state(
        data in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..64),
        pn in 0u64..1 << 62,
        header_len in 0usize..40,
        phase in proptest::prelude::any::<bool>(),
        path in proptest::option::of(0u32..4),
        with_previous in proptest::prelude::any::<bool>(),
    ) {
        let (mut c, _) = one_rtt_pair();
        if with_previous {
            c.initiate_update(true).unwrap();
        }
        let before = state(&c);
        let mut data = data;
        let _ = remove_header_protection(c.remote_header(), &mut data, 9);
        proptest::prop_assert!(c.open(path, pn, &mut data, header_len, phase).is_err());
        proptest::prop_assert_eq!(state(&c), before);
    }
}
