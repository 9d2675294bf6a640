//! The `h3` crate's QUIC traits ([`h3::quic`]) implemented over mpquic's tokio handles.
//!
//! HTTP/3 sees a QUIC connection as streams only (RFC 9114 §2, §6): request streams are
//! client-initiated bidirectional streams, the control and QPACK streams are unidirectional.
//! Every method here forwards to the poll functions of [`mpquic::Connection`],
//! [`mpquic::SendStream`] and [`mpquic::RecvStream`]; which paths carry the stream frames is the
//! transport's business (multipath stays below this layer).

use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use h3::quic::{self, ConnectionErrorIncoming, StreamErrorIncoming, StreamId, WriteBuf};

/// Bytes read from the transport per [`quic::RecvStream::poll_data`] call at most.
const READ_CHUNK: usize = 64 * 1024;

/// Below this many spare bytes the receive scratch buffer is replaced by a fresh one.
const MIN_SCRATCH: usize = 4 * 1024;

/// An mpquic connection as an [`h3::quic::Connection`]: give it to `h3::server::Connection::new`
/// or `h3::client::new`.
#[derive(Debug, Clone)]
pub struct Connection {
    conn: mpquic::Connection,
}

impl Connection {
    /// Wrap an established connection (whose negotiated ALPN should be [`crate::ALPN`]).
    pub fn new(conn: mpquic::Connection) -> Self {
        Self { conn }
    }

    /// The wrapped connection (statistics, paths, close reason).
    pub fn inner(&self) -> &mpquic::Connection {
        &self.conn
    }
}

/// Opens outgoing streams of a [`Connection`] (a clone of its handle).
#[derive(Debug, Clone)]
pub struct OpenStreams {
    conn: mpquic::Connection,
}

/// Open a bidirectional stream (a request stream, RFC 9114 §4.1).
fn open_bidi<B: Buf>(
    conn: &mpquic::Connection,
    cx: &mut Context<'_>,
) -> Poll<Result<BidiStream<B>, StreamErrorIncoming>> {
    let (send, recv) = ready!(conn.poll_open_bi(cx)).map_err(stream_connection_error)?;
    Poll::Ready(Ok(bidi(send, recv)))
}

/// Open a unidirectional stream (control, QPACK encoder or decoder stream, RFC 9114 §6.2).
fn open_send<B: Buf>(
    conn: &mpquic::Connection,
    cx: &mut Context<'_>,
) -> Poll<Result<SendStream<B>, StreamErrorIncoming>> {
    let send = ready!(conn.poll_open_uni(cx)).map_err(stream_connection_error)?;
    Poll::Ready(Ok(SendStream::new(send)))
}

/// Close with an HTTP/3 error code (RFC 9114 §8.1) as the application error code of
/// CONNECTION_CLOSE.
fn close(conn: &mpquic::Connection, code: h3::error::Code, reason: &[u8]) {
    conn.close(code.value(), reason);
}

impl<B: Buf> quic::Connection<B> for Connection {
    type RecvStream = RecvStream;
    type OpenStreams = OpenStreams;

    fn poll_accept_recv(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Self::RecvStream, ConnectionErrorIncoming>> {
        let recv = ready!(self.conn.poll_accept_uni(cx)).map_err(connection_error)?;
        Poll::Ready(Ok(RecvStream::new(recv)))
    }

    fn poll_accept_bidi(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Self::BidiStream, ConnectionErrorIncoming>> {
        let (send, recv) = ready!(self.conn.poll_accept_bi(cx)).map_err(connection_error)?;
        Poll::Ready(Ok(bidi(send, recv)))
    }

    fn opener(&self) -> Self::OpenStreams {
        OpenStreams {
            conn: self.conn.clone(),
        }
    }
}

/// h3 opens streams through the connection and through its opener alike; both hold the same
/// connection handle, so one implementation serves both.
macro_rules! impl_open_streams {
    ($ty:ty) => {
        impl<B: Buf> quic::OpenStreams<B> for $ty {
            type BidiStream = BidiStream<B>;
            type SendStream = SendStream<B>;

            fn poll_open_bidi(
                &mut self,
                cx: &mut Context<'_>,
            ) -> Poll<Result<Self::BidiStream, StreamErrorIncoming>> {
                open_bidi(&self.conn, cx)
            }

            fn poll_open_send(
                &mut self,
                cx: &mut Context<'_>,
            ) -> Poll<Result<Self::SendStream, StreamErrorIncoming>> {
                open_send(&self.conn, cx)
            }

            fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
                close(&self.conn, code, reason);
            }
        }
    };
}

impl_open_streams!(Connection);
impl_open_streams!(OpenStreams);

/// A bidirectional stream: both halves, splittable.
pub type BidiStream<B> = crate::Bidi<SendStream<B>, RecvStream>;

/// Wraps the runtime's two halves of a bidirectional stream.
fn bidi<B: Buf>(send: mpquic::SendStream, recv: mpquic::RecvStream) -> BidiStream<B> {
    crate::Bidi::new(SendStream::new(send), RecvStream::new(recv))
}

/// The receiving half of a stream.
#[derive(Debug)]
pub struct RecvStream {
    stream: mpquic::RecvStream,
    /// Zeroed space the next chunk is read into; chunks are split off it, so one allocation
    /// serves many small reads.
    scratch: BytesMut,
}

impl RecvStream {
    fn new(stream: mpquic::RecvStream) -> Self {
        Self {
            stream,
            scratch: BytesMut::new(),
        }
    }
}

impl quic::RecvStream for RecvStream {
    type Buf = Bytes;

    fn poll_data(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Self::Buf>, StreamErrorIncoming>> {
        if self.scratch.len() < MIN_SCRATCH {
            self.scratch = BytesMut::zeroed(READ_CHUNK);
        }
        match ready!(self.stream.poll_recv(cx, &mut self.scratch)) {
            Ok(Some(n)) => Poll::Ready(Ok(Some(self.scratch.split_to(n).freeze()))),
            Ok(None) => Poll::Ready(Ok(None)),
            Err(e) => Poll::Ready(Err(read_error(e))),
        }
    }

    fn stop_sending(&mut self, error_code: u64) {
        // Fails only if the stream is already closed: nothing left to stop.
        let _ = self.stream.stop(error_code);
    }

    fn recv_id(&self) -> StreamId {
        stream_id(self.stream.id())
    }
}

/// The sending half of a stream. h3 hands it one buffer at a time ([`quic::SendStream::send_data`])
/// and then polls [`quic::SendStream::poll_ready`] until the transport took all of it.
pub struct SendStream<B: Buf> {
    stream: mpquic::SendStream,
    writing: Option<WriteBuf<B>>,
}

impl<B: Buf> std::fmt::Debug for SendStream<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendStream")
            .field("stream", &self.stream)
            .field("writing", &self.writing.as_ref().map(Buf::remaining))
            .finish()
    }
}

impl<B: Buf> SendStream<B> {
    fn new(stream: mpquic::SendStream) -> Self {
        Self {
            stream,
            writing: None,
        }
    }
}

impl<B: Buf> quic::SendStream<B> for SendStream<B> {
    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        if let Some(data) = self.writing.as_mut() {
            while data.has_remaining() {
                let n = ready!(self.stream.poll_send(cx, data.chunk())).map_err(write_error)?;
                data.advance(n);
            }
        }
        self.writing = None;
        Poll::Ready(Ok(()))
    }

    fn send_data<T: Into<WriteBuf<B>>>(&mut self, data: T) -> Result<(), StreamErrorIncoming> {
        if self.writing.is_some() {
            // h3 calls poll_ready until Ready before handing over the next buffer: a second
            // buffer means the traits were misused, which h3 answers with H3_INTERNAL_ERROR.
            return Err(StreamErrorIncoming::ConnectionErrorIncoming {
                connection_error: ConnectionErrorIncoming::InternalError(
                    "send_data while the previous buffer is still being written".into(),
                ),
            });
        }
        self.writing = Some(data.into());
        Ok(())
    }

    /// Writes what is left of the current buffer, then the FIN. Does not wait for the peer's
    /// acknowledgement.
    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        ready!(self.poll_ready(cx))?;
        Poll::Ready(self.stream.finish().map_err(write_error))
    }

    fn reset(&mut self, reset_code: u64) {
        // Fails only if the stream is already finished or reset.
        let _ = self.stream.reset(reset_code);
    }

    fn send_id(&self) -> StreamId {
        stream_id(self.stream.id())
    }
}

impl<B: Buf> quic::SendStreamUnframed<B> for SendStream<B> {
    fn poll_send<D: Buf>(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut D,
    ) -> Poll<Result<usize, StreamErrorIncoming>> {
        // Framed data first, in order.
        ready!(quic::SendStream::poll_ready(self, cx))?;
        let n = ready!(self.stream.poll_send(cx, buf.chunk())).map_err(write_error)?;
        buf.advance(n);
        Poll::Ready(Ok(n))
    }
}

/// A QUIC stream ID as h3's type (both are 62-bit integers, RFC 9000 §2.1).
fn stream_id(id: mpquic::StreamId) -> StreamId {
    StreamId::try_from(u64::from(id)).expect("QUIC stream IDs are below 2^62")
}

/// Why the connection ended, in h3's terms: an application close carries the HTTP/3 error
/// code (RFC 9114 §8.1), which h3 uses to tell a graceful end (H3_NO_ERROR) from an error.
pub fn connection_error(e: mpquic::ConnectionError) -> ConnectionErrorIncoming {
    use mpquic::CloseReason as Lost;
    match e {
        mpquic::ConnectionError::Lost(Lost::PeerApplicationClose { code, .. })
        | mpquic::ConnectionError::Lost(Lost::LocallyClosed { code }) => {
            ConnectionErrorIncoming::ApplicationClose { error_code: code }
        }
        mpquic::ConnectionError::Lost(Lost::TimedOut) => ConnectionErrorIncoming::Timeout,
        other => ConnectionErrorIncoming::Undefined(Arc::new(other)),
    }
}

fn stream_connection_error(e: mpquic::ConnectionError) -> StreamErrorIncoming {
    StreamErrorIncoming::ConnectionErrorIncoming {
        connection_error: connection_error(e),
    }
}

/// A failed write: STOP_SENDING from the peer carries its error code (RFC 9114 §4.1.1).
fn write_error(e: mpquic::WriteError) -> StreamErrorIncoming {
    match e {
        mpquic::WriteError::Stopped(error_code) => {
            StreamErrorIncoming::StreamTerminated { error_code }
        }
        mpquic::WriteError::ConnectionLost(e) => stream_connection_error(e),
        e @ mpquic::WriteError::ClosedStream => StreamErrorIncoming::Unknown(Box::new(e)),
    }
}

/// A failed read: RESET_STREAM from the peer carries its error code (RFC 9114 §4.1.1).
fn read_error(e: mpquic::ReadError) -> StreamErrorIncoming {
    match e {
        mpquic::ReadError::Reset(error_code) => {
            StreamErrorIncoming::StreamTerminated { error_code }
        }
        mpquic::ReadError::ConnectionLost(e) => stream_connection_error(e),
        e @ mpquic::ReadError::ClosedStream => StreamErrorIncoming::Unknown(Box::new(e)),
    }
}
