//! The zero-copy stream calls (`SendStream::write_chunk`, `RecvStream::read_chunk`) and
//! `RecvStream::read_exact`, against a quinn server.

mod common;

use bytes::Bytes;
use common::{connect_client, payload, spawn_quinn_server, transport, within, MB};
use mpquic::{MultipathMode, ReadExactError};

/// A quinn server that answers each bidirectional stream with `answer(request)`.
fn quinn_server(answer: fn(Vec<u8>) -> Vec<u8>) -> (quinn::Endpoint, std::net::SocketAddr) {
    spawn_quinn_server(move |conn| async move {
        while let Ok((mut send, mut recv)) = conn.accept_bi().await {
            tokio::spawn(async move {
                let request = recv.read_to_end(16 * MB).await.expect("quinn read");
                send.write_all(&answer(request)).await.expect("quinn write");
                send.finish().expect("quinn finish");
                let _ = send.stopped().await;
            });
        }
    })
}

#[tokio::test]
async fn chunks_written_and_read_without_copies_reach_quinn_byte_exact() {
    // The server sends back what it got, reversed, so that both directions are checked.
    let (_server, addr) = quinn_server(|mut request| {
        request.reverse();
        request
    });
    let (_client, conn) = connect_client(addr, transport(MultipathMode::Auto)).await;
    let (mut send, mut recv) = conn.open_bi().await.unwrap();
    let data = Bytes::from(payload(3 * MB, 7));
    // Three chunks, one of them empty.
    for part in [data.slice(..MB), data.slice(MB..MB), data.slice(MB..)] {
        within("write_chunk", send.write_chunk(part)).await.unwrap();
    }
    send.finish().unwrap();
    let mut answer = Vec::new();
    let mut chunks = 0;
    while let Some(chunk) = within("read_chunk", recv.read_chunk(1000)).await.unwrap() {
        assert!(
            !chunk.is_empty() && chunk.len() <= 1000,
            "chunk of {} bytes",
            chunk.len()
        );
        answer.extend_from_slice(&chunk);
        chunks += 1;
    }
    assert!(chunks >= 3 * MB / 1000, "{chunks} chunks");
    let mut expected = data.to_vec();
    expected.reverse();
    assert!(answer == expected, "the answer differs");
    // After the end, the stream keeps saying so.
    assert_eq!(recv.read_chunk(1000).await.unwrap(), None);
}

#[tokio::test]
async fn read_exact_fills_the_buffer_or_says_how_much_came() {
    let (_server, addr) = quinn_server(|_| b"0123456789".to_vec());
    let (_client, conn) = connect_client(addr, transport(MultipathMode::Auto)).await;
    let (mut send, mut recv) = conn.open_bi().await.unwrap();
    send.write_all(b"ten bytes, please").await.unwrap();
    send.finish().unwrap();
    let mut four = [0u8; 4];
    within("read_exact", recv.read_exact(&mut four))
        .await
        .unwrap();
    assert_eq!(&four, b"0123");
    let mut eight = [0u8; 8];
    let short = within("read_exact", recv.read_exact(&mut eight)).await;
    assert_eq!(short, Err(ReadExactError::FinishedEarly(6)));
    assert_eq!(&eight[..6], b"456789");
}
