//! ACK_FREQUENCY (draft-ietf-quic-ack-frequency) against quinn, which implements the same draft
//! (frame 0xaf, min_ack_delay 0xff04de1b): a quinn client that asks us to acknowledge every
//! 10th packet gets about a tenth of the ACKs, and quinn follows our request the other way.
//! Compared with the same upload without a request, in the same test. Through `mpquic-emulate`
//! (20 Mbit/s, 10 ms one-way): on bare loopback both stacks read datagrams in batches and send
//! one ACK per batch (28 ACKs for 2,800 packets), which hides any per-packet policy.

mod common;

use std::sync::Arc;

use std::net::SocketAddr;

use common::{accepted, addr, connect_client, payload, server_endpoint, transport, within, MB};
use mpquic::AckFrequencyRequest;
use mpquic::{hq, MultipathMode};
use mpquic_emulate::Emulator;
use tokio::io::AsyncWriteExt;

/// A 20 Mbit/s, 10 ms one-way path to `server`; clients connect to its listen address.
fn emulated_path_to(server: SocketAddr) -> Emulator {
    common::emulator(server, &["from=127.0.0.1,rate=20mbit,delay=10ms"])
}

const UPLOAD: usize = 4 * MB;
const THRESHOLD: u64 = 9;

/// A quinn client uploading `UPLOAD` bytes to our server, which reads them on one stream.
/// Returns (packets our server received, ACK frames it sent).
async fn quinn_uploads_to_us(request_threshold: Option<u64>) -> (u64, u64) {
    let server = server_endpoint(transport(MultipathMode::Auto));
    let emulator = emulated_path_to(server.local_addr());
    let server_addr = emulator.listen_addr();
    let receiver = tokio::spawn(async move {
        let conn = accepted(&server).await;
        let (mut send, mut recv) = conn.accept_bi().await.expect("stream");
        let got = recv.read_to_end(2 * UPLOAD).await.expect("upload");
        send.write_all(b"ok").await.expect("reply");
        send.finish().expect("finish");
        send.finished().await.expect("acknowledged");
        let stats = conn.stats();
        (got.len(), stats.packets_received, stats.ack_frames_sent)
    });
    let tls =
        mpquic::tls::client_config(&[hq::ALPN], mpquic::tls::ServerTrust::Insecure).expect("tls");
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(Arc::unwrap_or_clone(tls))
        .expect("quinn crypto");
    let mut config = quinn::ClientConfig::new(Arc::new(crypto));
    if let Some(threshold) = request_threshold {
        let mut transport = quinn::TransportConfig::default();
        let mut frequency = quinn::AckFrequencyConfig::default();
        frequency.ack_eliciting_threshold(quinn::VarInt::from_u64(threshold).expect("varint"));
        transport.ack_frequency_config(Some(frequency));
        config.transport_config(Arc::new(transport));
    }
    let mut endpoint = quinn::Endpoint::client(addr("127.0.0.1:0")).expect("quinn client");
    endpoint.set_default_client_config(config);
    let conn = within(
        "quinn handshake",
        endpoint.connect(server_addr, "localhost").expect("connect"),
    )
    .await
    .expect("handshake");
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    within("upload", send.write_all(&payload(UPLOAD, 3)))
        .await
        .expect("write");
    send.finish().expect("finish");
    within("reply", recv.read_to_end(10)).await.expect("reply");
    let (got, packets, acks) = within("server", receiver).await.expect("server task");
    assert_eq!(got, UPLOAD);
    drop(emulator);
    (packets, acks)
}

/// Our client uploading `UPLOAD` bytes to a quinn server that counts them. Returns (packets
/// we sent, ACK frames quinn sent).
async fn we_upload_to_quinn(request: Option<AckFrequencyRequest>) -> (u64, u64) {
    let (server_config, _) = common::quinn_configs();
    let server = quinn::Endpoint::server(server_config, addr("127.0.0.1:0")).expect("quinn");
    let emulator = emulated_path_to(server.local_addr().expect("address"));
    let server_addr = emulator.listen_addr();
    let counter = tokio::spawn(async move {
        let conn = server.accept().await.expect("incoming").await.expect("hs");
        let (mut send, mut recv) = conn.accept_bi().await.expect("stream");
        let got = recv.read_to_end(2 * UPLOAD).await.expect("upload");
        send.write_all(b"ok").await.expect("reply");
        send.finish().expect("finish");
        let _ = conn.closed().await;
        (got.len(), conn.stats().frame_tx.acks)
    });
    let mut ours = transport(MultipathMode::Auto);
    ours.ack.request_ack_frequency = request;
    let (_client, conn) = connect_client(server_addr, ours).await;
    let (mut send, mut recv) = conn.open_bi().await.expect("open");
    within("upload", async {
        send.write_all(&payload(UPLOAD, 4)).await.expect("write");
        send.shutdown().await.expect("finish");
    })
    .await;
    within("reply", recv.read_to_end(10)).await.expect("reply");
    let packets = conn.stats().packets_sent;
    conn.close(0, b"done");
    let (got, acks) = within("quinn server", counter).await.expect("server task");
    assert_eq!(got, UPLOAD);
    drop(emulator);
    (packets, acks)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn we_follow_quinns_ack_frequency_request() {
    let (packets, acks) = quinn_uploads_to_us(None).await;
    let (packets_req, acks_req) = quinn_uploads_to_us(Some(THRESHOLD)).await;
    eprintln!(
        "quinn -> us, {UPLOAD} B: default {acks} ACKs / {packets} packets; \
         threshold {THRESHOLD}: {acks_req} / {packets_req}"
    );
    // RFC 9000 §13.2.2: every second ack-eliciting packet by default, not every one (a
    // Handshake-space ACK state left due after the handshake once made our server send an ACK
    // per packet: 2,770 for 2,834).
    assert!(acks * 3 >= packets, "default: {acks} ACKs for {packets}");
    assert!(
        acks * 5 <= packets * 3,
        "default: {acks} ACKs for {packets}"
    );
    // Threshold 9: one ACK per 10 ack-eliciting packets (plus the max_ack_delay timer's).
    assert!(
        acks_req * 6 <= packets_req,
        "requested every {}th: {acks_req} ACKs for {packets_req}",
        THRESHOLD + 1
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quinn_follows_our_ack_frequency_request() {
    let (packets, acks) = we_upload_to_quinn(None).await;
    let request = AckFrequencyRequest {
        ack_eliciting_threshold: THRESHOLD,
        max_ack_delay_us: 25_000,
        reordering_threshold: 1,
    };
    let (packets_req, acks_req) = we_upload_to_quinn(Some(request)).await;
    eprintln!(
        "us -> quinn, {UPLOAD} B: default {acks} ACKs / {packets} packets; \
         threshold {THRESHOLD}: {acks_req} / {packets_req}"
    );
    assert!(acks * 3 >= packets, "default: {acks} ACKs for {packets}");
    assert!(
        acks_req * 6 <= packets_req,
        "requested every {}th: {acks_req} ACKs for {packets_req}",
        THRESHOLD + 1
    );
}
