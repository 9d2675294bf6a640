//! Stream priorities through the tokio API, seen by another stack: our client sends a large
//! stream and then a small one to a quinn server; with the small one raised it arrives before
//! the large one has moved on much, with equal priorities the two share the packets.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use common::{connect_client, payload, spawn_quinn_server, transport, within, MB};
use mpquic::MultipathMode;
use tokio::sync::mpsc;

const LARGE: usize = 4 * MB;
const SMALL: usize = MB / 2;

/// Bytes of the large stream the quinn server had read when the small one ended, with the
/// small stream at `small_priority` (the large one at 0). Both arrive byte-exact.
async fn large_bytes_when_small_done(small_priority: i32) -> usize {
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let (_server, addr) = spawn_quinn_server(move |conn| {
        let done = done_tx.clone();
        async move {
            let large_read = Arc::new(AtomicUsize::new(0));
            let mut readers = Vec::new();
            for _ in 0..2 {
                let mut recv = conn.accept_uni().await.expect("accept uni");
                let (large_read, done) = (large_read.clone(), done.clone());
                readers.push(tokio::spawn(async move {
                    let large = recv.id().index() == 0;
                    let mut got = Vec::new();
                    while let Some(chunk) = recv.read_chunk(usize::MAX, true).await.unwrap() {
                        got.extend_from_slice(&chunk.bytes);
                        if large {
                            large_read.store(got.len(), Ordering::SeqCst);
                        }
                    }
                    let (len, salt) = if large { (LARGE, 1) } else { (SMALL, 2) };
                    assert!(got == payload(len, salt), "stream {} differs", recv.id());
                    if !large {
                        done.send(large_read.load(Ordering::SeqCst)).unwrap();
                    }
                }));
            }
            for r in readers {
                r.await.expect("reader");
            }
            done.send(usize::MAX).unwrap();
        }
    });
    let (_client, conn) = connect_client(addr, transport(MultipathMode::Auto)).await;
    let mut large = conn.open_uni().await.expect("open");
    let mut small = conn.open_uni().await.expect("open");
    assert_eq!(small.priority().unwrap(), 0);
    small.set_priority(small_priority).unwrap();
    assert_eq!(small.priority().unwrap(), small_priority);
    let (large_data, small_data) = (payload(LARGE, 1), payload(SMALL, 2));
    // The large stream starts first; the small one is written as soon as that is under way.
    let writers = async {
        tokio::join!(
            async {
                large.write_all(&large_data).await.unwrap();
                large.finish().unwrap();
            },
            async {
                tokio::task::yield_now().await;
                small.write_all(&small_data).await.unwrap();
                small.finish().unwrap();
            }
        )
    };
    within("writes", writers).await;
    let at_small_done = within("small stream", done_rx.recv()).await.unwrap();
    assert_eq!(
        within("large stream", done_rx.recv()).await,
        Some(usize::MAX)
    );
    at_small_done
}

#[tokio::test]
async fn a_raised_stream_reaches_a_quinn_server_first() {
    let large = large_bytes_when_small_done(5).await;
    // Round robin would have sent at least as much of the large stream as the small one.
    assert!(
        large < SMALL / 2,
        "quinn had read {large} bytes of the large stream when the raised one ended"
    );
}

#[tokio::test]
async fn equal_priorities_share_the_packets_to_a_quinn_server() {
    // The control for the test above: the threshold tells the two apart.
    let large = large_bytes_when_small_done(0).await;
    assert!(
        large >= SMALL / 2,
        "quinn had read only {large} bytes of the large stream when the other ended"
    );
}
