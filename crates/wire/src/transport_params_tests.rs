//! Transport parameter tests.

use super::*;
use proptest::prelude::*;

fn cid(b: &[u8]) -> ConnectionId {
    ConnectionId::new(b).unwrap()
}

fn full_server_params() -> TransportParameters {
    TransportParameters {
        original_destination_connection_id: Some(cid(&[1; 8])),
        max_idle_timeout_ms: 30_000,
        stateless_reset_token: Some(ResetToken([7; 16])),
        max_udp_payload_size: 1472,
        initial_max_data: 1 << 20,
        initial_max_stream_data_bidi_local: 1 << 18,
        initial_max_stream_data_bidi_remote: 1 << 17,
        initial_max_stream_data_uni: 1 << 16,
        initial_max_streams_bidi: 100,
        initial_max_streams_uni: 1 << 60,
        ack_delay_exponent: 20,
        max_ack_delay_ms: (1 << 14) - 1,
        disable_active_migration: true,
        preferred_address: Some(PreferredAddress {
            address_v4: Some(SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 4433)),
            address_v6: None,
            connection_id: cid(&[3; 20]),
            stateless_reset_token: ResetToken([9; 16]),
        }),
        active_connection_id_limit: 8,
        initial_source_connection_id: Some(ConnectionId::EMPTY),
        retry_source_connection_id: Some(cid(&[4; 4])),
        max_datagram_frame_size: 65535,
        initial_max_path_id: Some(u64::from(u32::MAX)),
        enable_multipath: Some(3),
        spns_max_path_id: Some(7),
        min_ack_delay_us: Some(1000),
        enable_qoe_feedback: true,
        unknown: Vec::new(),
    }
}

fn encode(tp: &TransportParameters) -> Vec<u8> {
    let mut out = Vec::new();
    tp.encode(&mut out);
    out
}

fn raw(id: u64, value: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put_param(&mut out, id, value);
    out
}

fn varint_raw(id: u64, v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint_param(&mut out, id, v);
    out
}

fn fails(bytes: &[u8], sender: Side) -> TransportParamError {
    let e = TransportParameters::decode(bytes, sender).unwrap_err();
    assert_eq!(e.code(), TransportErrorCode::TRANSPORT_PARAMETER_ERROR);
    e
}

#[test]
fn defaults_encode_to_nothing() {
    assert!(encode(&TransportParameters::default()).is_empty());
    assert_eq!(
        TransportParameters::decode(&[], Side::Client).unwrap(),
        TransportParameters::default()
    );
}

#[test]
fn full_round_trip() {
    let tp = full_server_params();
    assert_eq!(
        TransportParameters::decode(&encode(&tp), Side::Server).unwrap(),
        tp
    );
    // The same set minus server-only parameters is valid from a client.
    let client = TransportParameters {
        original_destination_connection_id: None,
        stateless_reset_token: None,
        preferred_address: None,
        retry_source_connection_id: None,
        ..tp
    };
    assert_eq!(
        TransportParameters::decode(&encode(&client), Side::Client).unwrap(),
        client
    );
}

#[test]
fn server_only_from_client_rejected() {
    let tp = full_server_params();
    fails(&encode(&tp), Side::Client);
    for (id, value) in [
        (id::ORIGINAL_DESTINATION_CONNECTION_ID, &[1u8; 4][..]),
        (id::STATELESS_RESET_TOKEN, &[0; 16]),
        (id::RETRY_SOURCE_CONNECTION_ID, &[1; 4]),
    ] {
        fails(&raw(id, value), Side::Client);
        assert!(TransportParameters::decode(&raw(id, value), Side::Server).is_ok());
    }
}

#[test]
fn value_limits() {
    let cases = [
        (id::ACK_DELAY_EXPONENT, 21),
        (id::MAX_ACK_DELAY, 1 << 14),
        (id::ACTIVE_CONNECTION_ID_LIMIT, 1),
        (id::MAX_UDP_PAYLOAD_SIZE, 1199),
        (id::INITIAL_MAX_STREAMS_BIDI, (1 << 60) + 1),
        (id::INITIAL_MAX_STREAMS_UNI, (1 << 60) + 1),
        (id::INITIAL_MAX_PATH_ID, 1 << 32),
        (id::SPNS_MAX_PATH_ID, 1 << 32),
        (id::ENABLE_MULTIPATH, 4),
        (id::MIN_ACK_DELAY, 25_001),
    ];
    for (id, v) in cases {
        let e = fails(&varint_raw(id, v), Side::Server);
        assert!(!e.reason.is_empty(), "{id:#x}");
    }
    // Boundary values are accepted.
    for (id, v) in [
        (id::ACK_DELAY_EXPONENT, 20),
        (id::ACTIVE_CONNECTION_ID_LIMIT, 2),
        (id::MIN_ACK_DELAY, 25_000),
        (id::SPNS_MAX_PATH_ID, u64::from(u32::MAX)),
    ] {
        assert!(TransportParameters::decode(&varint_raw(id, v), Side::Server).is_ok());
    }
}

#[test]
fn encoding_errors() {
    // Duplicate parameter (RFC 9000 §7.4).
    let mut b = varint_raw(id::INITIAL_MAX_DATA, 5);
    b.extend(varint_raw(id::INITIAL_MAX_DATA, 5));
    fails(&b, Side::Client);
    // Varint value not filling the declared length.
    fails(&raw(id::INITIAL_MAX_DATA, &[0x01, 0x02]), Side::Client);
    fails(&raw(id::INITIAL_MAX_DATA, &[]), Side::Client);
    // Wrong token length, oversize CID, non-empty flag.
    fails(&raw(id::STATELESS_RESET_TOKEN, &[0; 15]), Side::Server);
    fails(
        &raw(id::INITIAL_SOURCE_CONNECTION_ID, &[0; 21]),
        Side::Server,
    );
    fails(&raw(id::DISABLE_ACTIVE_MIGRATION, &[0]), Side::Server);
    fails(&raw(id::ENABLE_QOE_FEEDBACK, &[1]), Side::Server);
    // Truncated parameter.
    fails(&[0x04, 0x04, 0x01], Side::Client);
    // preferred_address with a zero-length CID / bad lengths.
    let mut pa = vec![0u8; 24];
    pa.push(0);
    pa.extend_from_slice(&[0; 16]);
    fails(&raw(id::PREFERRED_ADDRESS, &pa), Side::Server);
    fails(&raw(id::PREFERRED_ADDRESS, &pa[..10]), Side::Server);
}

#[test]
fn max_datagram_frame_size() {
    // RFC 9221 §3: id 0x20, a varint; 65535 is the recommended value.
    let tp = TransportParameters {
        max_datagram_frame_size: 65535,
        ..TransportParameters::default()
    };
    assert_eq!(encode(&tp), [0x20, 4, 0x80, 0x00, 0xff, 0xff]);
    assert_eq!(
        TransportParameters::decode(&encode(&tp), Side::Client).unwrap(),
        tp
    );
    // An explicit 0 is the default: no DATAGRAM support, not re-encoded.
    let zero =
        TransportParameters::decode(&varint_raw(id::MAX_DATAGRAM_FRAME_SIZE, 0), Side::Server)
            .unwrap();
    assert_eq!(zero.max_datagram_frame_size, 0);
    assert!(encode(&zero).is_empty());
    // Malformed, truncated or duplicated values are TRANSPORT_PARAMETER_ERRORs.
    fails(&raw(id::MAX_DATAGRAM_FRAME_SIZE, &[]), Side::Server);
    fails(&raw(id::MAX_DATAGRAM_FRAME_SIZE, &[0x40]), Side::Server);
    fails(
        &raw(id::MAX_DATAGRAM_FRAME_SIZE, &[0x05, 0x00]),
        Side::Client,
    );
    let mut b = varint_raw(id::MAX_DATAGRAM_FRAME_SIZE, 1200);
    b.extend(varint_raw(id::MAX_DATAGRAM_FRAME_SIZE, 65535));
    fails(&b, Side::Client);
}

#[test]
fn unknown_and_grease_skipped() {
    // Grease ids are 31 * N + 27 (RFC 9000 §18.1).
    let mut b = raw(31 * 5 + 27, b"grease");
    b.extend(varint_raw(id::INITIAL_MAX_DATA, 77));
    b.extend(raw(0x7777, &[]));
    b.extend(raw(0x7777, &[1])); // unknown duplicates are ignored
    let tp = TransportParameters::decode(&b, Side::Client).unwrap();
    assert_eq!(tp.initial_max_data, 77);
    assert_eq!(tp.unknown.len(), 3);
    assert_eq!(tp.unknown[0], (31 * 5 + 27, Bytes::from_static(b"grease")));
    // Unknown parameters are not re-encoded.
    assert_eq!(encode(&tp), varint_raw(id::INITIAL_MAX_DATA, 77));
}

fn arb_params() -> impl Strategy<Value = TransportParameters> {
    (
        (
            0u64..1 << 40,
            1200u64..=65527,
            0u64..1 << 50,
            0u64..=1 << 60,
            0u64..=1 << 60,
        ),
        (
            0u64..=20,
            1u64..1 << 14,
            2u64..100,
            any::<bool>(),
            any::<bool>(),
        ),
        (
            proptest::option::of(0u64..=u64::from(u32::MAX)),
            proptest::option::of(0u64..=3),
            proptest::option::of(proptest::collection::vec(any::<u8>(), 0..=20)),
            proptest::option::of(any::<[u8; 16]>()),
            prop_oneof![Just(0u64), 1u64..=65535, 0u64..1 << 62],
        ),
    )
        .prop_map(|(a, b, c)| {
            let mut tp = TransportParameters {
                max_idle_timeout_ms: a.0,
                max_udp_payload_size: a.1,
                initial_max_data: a.2,
                initial_max_streams_bidi: a.3,
                initial_max_streams_uni: a.4,
                ack_delay_exponent: b.0,
                max_ack_delay_ms: b.1,
                active_connection_id_limit: b.2,
                disable_active_migration: b.3,
                enable_qoe_feedback: b.4,
                initial_max_path_id: c.0,
                enable_multipath: c.1,
                initial_source_connection_id: c.2.map(|v| cid(&v)),
                stateless_reset_token: c.3.map(ResetToken),
                max_datagram_frame_size: c.4,
                ..TransportParameters::default()
            };
            tp.min_ack_delay_us = Some(tp.max_ack_delay_ms * 1000);
            tp.spns_max_path_id = tp.initial_max_path_id.map(|v| v / 2);
            tp
        })
}

proptest! {
    #[test]
    fn round_trip(tp in arb_params()) {
        prop_assert_eq!(TransportParameters::decode(&encode(&tp), Side::Server).unwrap(), tp);
    }

    #[test]
    fn random_bytes_never_panic(data in proptest::collection::vec(any::<u8>(), 0..300)) {
        for side in [Side::Client, Side::Server] {
            if let Ok(tp) = TransportParameters::decode(&data, side) {
                // Anything accepted re-encodes and decodes to the same known fields.
                let again = TransportParameters::decode(&encode(&tp), side).unwrap();
                prop_assert_eq!(again, TransportParameters { unknown: Vec::new(), ..tp });
            }
        }
    }
}
