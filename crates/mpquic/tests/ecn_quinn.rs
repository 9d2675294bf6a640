//! ECN against quinn 0.11 over loopback UDP (RFC 9000 §13.4): our endpoint marks ECT(0) through
//! quinn-udp, quinn echoes the counts in its ACK frames, and our validation of the path ends
//! "capable". quinn marks its own packets until our ACKs fail its validation (quinn-proto stops
//! marking on an ACK without ECN counts or with counts short of its marked packets), so the
//! share of its packets arriving ECT(0) shows that quinn accepted the counts we sent. quinn's
//! public statistics do not expose ECN, so that is asserted on our side.

mod common;

use std::sync::Arc;

use common::{connect_client, payload, quinn_answer, spawn_quinn_server, transport, within, MB};
use mpquic::EcnState;
use mpquic::{hq, MultipathMode};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ecn_is_validated_both_ways_with_quinn_on_loopback() {
    common::init_tracing();
    let data = Arc::new(payload(4 * MB, 9));
    let served = data.clone();
    let (_quinn, server_addr) = spawn_quinn_server(move |conn| {
        let data = served.clone();
        async move {
            while let Ok((send, recv)) = conn.accept_bi().await {
                quinn_answer(send, recv, &data).await;
            }
        }
    });
    let (client, conn) = connect_client(server_addr, transport(MultipathMode::Auto)).await;
    let mut body = hq::request(&conn, "/file").await.expect("request");
    let got = within("download", body.read_to_end(8 * MB))
        .await
        .expect("read");
    assert_eq!(got.len(), data.len());
    // One more round trip so that quinn's latest ACKs of our packets arrived.
    let mut again = hq::request(&conn, "/again").await.expect("request");
    within("second download", again.read_to_end(8 * MB))
        .await
        .expect("read");
    let stats = conn.path_stats();
    let path = &stats[0];
    let ecn = &path.ecn;
    println!(
        "path 0: {ecn:?}, {} packets received",
        path.counters.packets_received
    );
    assert_eq!(ecn.state, EcnState::Capable, "{ecn:?}");
    assert!(ecn.marked_acked > 0, "{ecn:?}");
    assert_eq!(ecn.failure, None);
    // quinn kept marking: nearly every packet it sent arrived ECT(0).
    let received = path.counters.packets_received;
    assert!(
        ecn.ect0_received * 10 >= received * 9,
        "{} of {received} packets ECT(0): quinn stopped marking",
        ecn.ect0_received
    );
    conn.close(0, b"done");
    within("close", client.wait_idle()).await;
}
