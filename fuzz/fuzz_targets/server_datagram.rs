//! Arbitrary datagrams into a server endpoint: it must never panic.
#![no_main]
use std::sync::Arc;

use mpquic_proto::crypto::testing::test_tls_configs;
use mpquic_proto::{Endpoint, EndpointConfig, ServerConfig, Timestamp, TransportConfig};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let (_, tls) = test_tls_configs(&[b"fuzz"]);
    let server = ServerConfig { tls, transport: Arc::new(TransportConfig::default()), max_connections: 4 };
    let config = Arc::new(EndpointConfig { cid_len: 8, reset_key: [7; 32] });
    let mut ep = Endpoint::new(config, Some(Arc::new(server)), [1; 32]);
    let (local, remote) = ("127.0.0.1:443".parse().unwrap(), "127.0.0.1:5000".parse().unwrap());
    ep.handle_datagram(Timestamp::ZERO, local, remote, bytes::BytesMut::from(data));
    let mut buf = Vec::new();
    while ep.poll_transmit(Timestamp::ZERO, &mut buf).is_some() {}
});
