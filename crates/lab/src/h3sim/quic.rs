//! The `h3` crate's QUIC traits ([`h3::quic`]) over the sans-IO core, for the simulator.
//!
//! The same mapping as `mpquic-h3`'s adapter over the tokio runtime
//! (`crates/h3-mpquic/src/quic.rs`), but the objects hold only the connection handle and
//! stream IDs: every poll reaches the connection through `super::with_conn`, which works
//! inside the [`super::scope`] of the node's step. "Would block" is `Poll::Pending`; the
//! executor polls again after the next datagram or timer, so no waker is registered.

use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use h3::quic::{self, ConnectionErrorIncoming, StreamErrorIncoming, WriteBuf};
use mpquic_proto::wire::stream_id::{Dir, StreamId};
use mpquic_proto::{ConnectionError, ConnectionHandle, Timestamp};
use mpquic_proto::{ReadError, WriteError};

use super::{progressed, with_conn, Unreachable};

/// Bytes read from the transport per [`quic::RecvStream::poll_data`] call at most.
const READ_CHUNK: usize = 64 * 1024;

/// Below this many spare bytes the receive scratch buffer is replaced by a fresh one.
const MIN_SCRATCH: usize = 4 * 1024;

/// A connection of the lent endpoint as an [`h3::quic::Connection`].
#[derive(Debug, Clone, Copy)]
pub struct Connection {
    handle: ConnectionHandle,
}

impl Connection {
    /// The connection `handle` of the endpoint that [`super::scope`] lends.
    pub fn new(handle: ConnectionHandle) -> Self {
        Self { handle }
    }
}

/// Why the connection ended, in h3's terms: an application close carries the HTTP/3
/// error code (RFC 9114 §8.1), which h3 uses to tell a graceful end from an error.
fn connection_error(e: Option<&ConnectionError>) -> ConnectionErrorIncoming {
    match e {
        Some(
            ConnectionError::PeerApplicationClose { code, .. }
            | ConnectionError::LocallyClosed { code },
        ) => ConnectionErrorIncoming::ApplicationClose { error_code: *code },
        Some(ConnectionError::TimedOut) => ConnectionErrorIncoming::Timeout,
        Some(other) => ConnectionErrorIncoming::Undefined(Arc::new(other.clone())),
        None => ConnectionErrorIncoming::InternalError("closed without a recorded reason".into()),
    }
}

fn unreachable(u: Unreachable) -> ConnectionErrorIncoming {
    ConnectionErrorIncoming::InternalError(match u {
        Unreachable::NoScope => "HTTP/3 adapter used outside the node's step".to_owned(),
        Unreachable::Gone => "the connection is gone".to_owned(),
    })
}

fn stream_conn_error(e: ConnectionErrorIncoming) -> StreamErrorIncoming {
    StreamErrorIncoming::ConnectionErrorIncoming {
        connection_error: e,
    }
}

/// The connection's error if it is closed.
fn closed(conn: &mpquic_proto::Connection) -> Option<ConnectionErrorIncoming> {
    conn.is_closed().then(|| connection_error(conn.error()))
}

/// Accepts the next stream the peer opened in direction `dir`.
fn poll_accept(
    handle: ConnectionHandle,
    dir: Dir,
) -> Poll<Result<StreamId, ConnectionErrorIncoming>> {
    let r = with_conn(handle, |c, _| match closed(c) {
        Some(e) => Err(e),
        None => Ok(c.accept(dir)),
    });
    match r.map_err(unreachable).and_then(|r| r) {
        Ok(Some(id)) => {
            progressed();
            Poll::Ready(Ok(id))
        }
        Ok(None) => Poll::Pending,
        Err(e) => Poll::Ready(Err(e)),
    }
}

/// Opens a stream in direction `dir` (pending while the peer's stream limit is reached).
fn poll_open(handle: ConnectionHandle, dir: Dir) -> Poll<Result<StreamId, StreamErrorIncoming>> {
    let r = with_conn(handle, |c, _| match closed(c) {
        Some(e) => Err(e),
        None => Ok(match dir {
            Dir::Bi => c.open_bi(),
            Dir::Uni => c.open_uni(),
        }),
    });
    match r.map_err(unreachable).and_then(|r| r) {
        Ok(Some(id)) => {
            progressed();
            Poll::Ready(Ok(id))
        }
        Ok(None) => Poll::Pending,
        Err(e) => Poll::Ready(Err(stream_conn_error(e))),
    }
}

/// Closes with an HTTP/3 error code as the application error code of CONNECTION_CLOSE.
fn close(handle: ConnectionHandle, code: h3::error::Code, reason: &[u8]) {
    let reason = Bytes::copy_from_slice(reason);
    // Outside a step, or with the connection gone, there is nothing left to close.
    let closed_now = with_conn(handle, |c, now| {
        let open = !c.is_closed();
        c.close(Timestamp::from_nanos(now), code.value(), reason);
        open
    });
    // Progress only if something changed, so that a repeated call cannot keep the
    // executor going (the same below for STOP_SENDING and RESET_STREAM).
    if closed_now == Ok(true) {
        progressed();
    }
}

impl<B: Buf> quic::Connection<B> for Connection {
    type RecvStream = RecvStream;
    type OpenStreams = Connection;

    fn poll_accept_recv(
        &mut self,
        _cx: &mut Context<'_>,
    ) -> Poll<Result<Self::RecvStream, ConnectionErrorIncoming>> {
        poll_accept(self.handle, Dir::Uni).map_ok(|id| RecvStream::new(self.handle, id))
    }

    fn poll_accept_bidi(
        &mut self,
        _cx: &mut Context<'_>,
    ) -> Poll<Result<Self::BidiStream, ConnectionErrorIncoming>> {
        poll_accept(self.handle, Dir::Bi).map_ok(|id| bidi(self.handle, id))
    }

    fn opener(&self) -> Self::OpenStreams {
        *self
    }
}

impl<B: Buf> quic::OpenStreams<B> for Connection {
    type BidiStream = BidiStream<B>;
    type SendStream = SendStream<B>;

    fn poll_open_bidi(
        &mut self,
        _cx: &mut Context<'_>,
    ) -> Poll<Result<Self::BidiStream, StreamErrorIncoming>> {
        poll_open(self.handle, Dir::Bi).map_ok(|id| bidi(self.handle, id))
    }

    fn poll_open_send(
        &mut self,
        _cx: &mut Context<'_>,
    ) -> Poll<Result<Self::SendStream, StreamErrorIncoming>> {
        poll_open(self.handle, Dir::Uni).map_ok(|id| SendStream::new(self.handle, id))
    }

    fn close(&mut self, code: h3::error::Code, reason: &[u8]) {
        close(self.handle, code, reason);
    }
}

/// A bidirectional stream: both halves, splittable (`mpquic_h3::Bidi` forwards to them).
pub type BidiStream<B> = mpquic_h3::Bidi<SendStream<B>, RecvStream>;

/// Both halves of stream `id` of the connection `handle`.
fn bidi<B: Buf>(handle: ConnectionHandle, id: StreamId) -> BidiStream<B> {
    mpquic_h3::Bidi::new(SendStream::new(handle, id), RecvStream::new(handle, id))
}

/// The receiving half of a stream.
#[derive(Debug)]
pub struct RecvStream {
    handle: ConnectionHandle,
    id: StreamId,
    /// Zeroed space the next chunk is read into; chunks are split off it, so one
    /// allocation serves many small reads.
    scratch: BytesMut,
}

impl RecvStream {
    fn new(handle: ConnectionHandle, id: StreamId) -> Self {
        Self {
            handle,
            id,
            scratch: BytesMut::new(),
        }
    }
}

/// A failed read: RESET_STREAM from the peer carries its error code (RFC 9114 §4.1.1).
fn read_error(e: ReadError) -> StreamErrorIncoming {
    match e {
        ReadError::Reset(error_code) => StreamErrorIncoming::StreamTerminated { error_code },
        e => StreamErrorIncoming::Unknown(Box::new(e)),
    }
}

impl quic::RecvStream for RecvStream {
    type Buf = Bytes;

    fn poll_data(
        &mut self,
        _cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Self::Buf>, StreamErrorIncoming>> {
        if self.scratch.len() < MIN_SCRATCH {
            self.scratch = BytesMut::zeroed(READ_CHUNK);
        }
        let (id, scratch) = (self.id, &mut self.scratch);
        let r = with_conn(self.handle, |c, _| match c.read(id, scratch) {
            Ok(Some(n)) => Ok(Some(n)),
            Ok(None) => Ok(None),
            // Nothing to read yet, unless nothing will ever come.
            Err(ReadError::Blocked) => match closed(c) {
                Some(e) => Err(stream_conn_error(e)),
                None => Ok(Some(0)),
            },
            Err(e) => Err(read_error(e)),
        });
        match r
            .map_err(|u| stream_conn_error(unreachable(u)))
            .and_then(|r| r)
        {
            Ok(Some(0)) => Poll::Pending,
            Ok(Some(n)) => {
                progressed();
                Poll::Ready(Ok(Some(self.scratch.split_to(n).freeze())))
            }
            Ok(None) => {
                progressed();
                Poll::Ready(Ok(None))
            }
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn stop_sending(&mut self, error_code: u64) {
        let id = self.id;
        // Fails only if the stream is already closed: nothing left to stop.
        if let Ok(Ok(())) = with_conn(self.handle, |c, _| c.stop_sending(id, error_code)) {
            progressed();
        }
    }

    fn recv_id(&self) -> quic::StreamId {
        h3_id(self.id)
    }
}

/// The sending half of a stream. h3 hands it one buffer at a time
/// ([`quic::SendStream::send_data`]) and then polls [`quic::SendStream::poll_ready`] until
/// the transport took all of it.
pub struct SendStream<B: Buf> {
    handle: ConnectionHandle,
    id: StreamId,
    writing: Option<WriteBuf<B>>,
}

impl<B: Buf> std::fmt::Debug for SendStream<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SendStream")
            .field("id", &self.id)
            .field("writing", &self.writing.as_ref().map(Buf::remaining))
            .finish()
    }
}

impl<B: Buf> SendStream<B> {
    fn new(handle: ConnectionHandle, id: StreamId) -> Self {
        Self {
            handle,
            id,
            writing: None,
        }
    }
}

/// A failed write: STOP_SENDING from the peer carries its error code (RFC 9114 §4.1.1).
fn write_error(e: WriteError) -> StreamErrorIncoming {
    match e {
        WriteError::Stopped(error_code) => StreamErrorIncoming::StreamTerminated { error_code },
        e => StreamErrorIncoming::Unknown(Box::new(e)),
    }
}

/// Writes as much of `data` as the stream takes: `Ok(true)` when all of it went.
fn write_some<D: Buf>(
    handle: ConnectionHandle,
    id: StreamId,
    data: &mut D,
) -> Result<bool, StreamErrorIncoming> {
    let r = with_conn(handle, |c, _| {
        while data.has_remaining() {
            match c.write(id, data.chunk()) {
                Ok(n) if n > 0 => {
                    data.advance(n);
                    progressed();
                }
                Ok(_) | Err(WriteError::Blocked) => {
                    return match closed(c) {
                        Some(e) => Err(stream_conn_error(e)),
                        None => Ok(false),
                    }
                }
                Err(e) => return Err(write_error(e)),
            }
        }
        Ok(true)
    });
    r.map_err(|u| stream_conn_error(unreachable(u)))?
}

impl<B: Buf> quic::SendStream<B> for SendStream<B> {
    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        if let Some(data) = self.writing.as_mut() {
            if !write_some(self.handle, self.id, data)? {
                return Poll::Pending;
            }
        }
        self.writing = None;
        Poll::Ready(Ok(()))
    }

    fn send_data<T: Into<WriteBuf<B>>>(&mut self, data: T) -> Result<(), StreamErrorIncoming> {
        if self.writing.is_some() {
            // h3 polls poll_ready until Ready before handing over the next buffer.
            return Err(stream_conn_error(ConnectionErrorIncoming::InternalError(
                "send_data while the previous buffer is still being written".into(),
            )));
        }
        self.writing = Some(data.into());
        Ok(())
    }

    /// Writes what is left of the current buffer, then the FIN.
    fn poll_finish(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), StreamErrorIncoming>> {
        std::task::ready!(self.poll_ready(cx))?;
        let id = self.id;
        let r = with_conn(self.handle, |c, _| c.finish(id));
        progressed();
        Poll::Ready(match r {
            Ok(r) => r.map_err(write_error),
            Err(u) => Err(stream_conn_error(unreachable(u))),
        })
    }

    fn reset(&mut self, reset_code: u64) {
        let id = self.id;
        // Fails only if the stream is already finished or reset.
        if let Ok(Ok(())) = with_conn(self.handle, |c, _| c.reset(id, reset_code)) {
            progressed();
        }
    }

    fn send_id(&self) -> quic::StreamId {
        h3_id(self.id)
    }
}

impl<B: Buf> quic::SendStreamUnframed<B> for SendStream<B> {
    fn poll_send<D: Buf>(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut D,
    ) -> Poll<Result<usize, StreamErrorIncoming>> {
        // Framed data first, in order.
        std::task::ready!(quic::SendStream::poll_ready(self, cx))?;
        let before = buf.remaining();
        write_some(self.handle, self.id, buf)?;
        match before - buf.remaining() {
            0 if before > 0 => Poll::Pending,
            n => Poll::Ready(Ok(n)),
        }
    }
}

/// A QUIC stream ID as h3's type (both are 62-bit integers, RFC 9000 §2.1).
fn h3_id(id: StreamId) -> quic::StreamId {
    quic::StreamId::try_from(id.0).expect("QUIC stream IDs are below 2^62")
}
