//! [`SendStream`] and [`RecvStream`]: the two halves of QUIC streams as tokio I/O objects.

use std::future::poll_fn;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes};
use mpquic_proto::{ReadError as CoreReadError, WriteError as CoreWriteError};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::connection::{ConnRef, ConnectionError};
use crate::state::ConnState;
use crate::StreamId;

/// Why writing to a stream failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// The peer asked us to stop sending (STOP_SENDING) with this code; the stream was reset.
    #[error("stream stopped by the peer with code {0}")]
    Stopped(u64),
    /// The stream was already finished or reset.
    #[error("the stream is closed")]
    ClosedStream,
    /// The connection ended.
    #[error(transparent)]
    ConnectionLost(#[from] ConnectionError),
}

/// Why reading from a stream failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The peer reset the stream (RESET_STREAM) with this code.
    #[error("stream reset by the peer with code {0}")]
    Reset(u64),
    /// Reading was stopped or the stream was already read to its end.
    #[error("the stream is closed")]
    ClosedStream,
    /// The connection ended.
    #[error(transparent)]
    ConnectionLost(#[from] ConnectionError),
}

/// Why [`RecvStream::read_exact`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadExactError {
    /// The stream ended after this many bytes.
    #[error("the stream ended after {0} bytes")]
    FinishedEarly(usize),
    /// Reading failed.
    #[error(transparent)]
    Read(#[from] ReadError),
}

/// Why [`RecvStream::read_to_end`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadToEndError {
    /// The stream carried more than the limit.
    #[error("the stream is longer than {0} bytes")]
    TooLong(usize),
    /// Reading failed.
    #[error(transparent)]
    Read(#[from] ReadError),
}

impl From<WriteError> for io::Error {
    fn from(e: WriteError) -> Self {
        let kind = match e {
            WriteError::Stopped(_) => io::ErrorKind::ConnectionReset,
            WriteError::ClosedStream | WriteError::ConnectionLost(_) => io::ErrorKind::NotConnected,
        };
        io::Error::new(kind, e)
    }
}

impl From<ReadError> for io::Error {
    fn from(e: ReadError) -> Self {
        let kind = match e {
            ReadError::Reset(_) => io::ErrorKind::ConnectionReset,
            ReadError::ClosedStream | ReadError::ConnectionLost(_) => io::ErrorKind::NotConnected,
        };
        io::Error::new(kind, e)
    }
}

/// The connection's error if it is closing or gone.
fn closed_error(conn: &mpquic_proto::Connection, cs: &ConnState) -> Option<ConnectionError> {
    cs.error.clone().or_else(|| {
        conn.is_closed()
            .then(|| conn.error().cloned().map(ConnectionError::Lost))
            .flatten()
    })
}

/// The sending half of a stream. Dropping it without [`SendStream::finish`] or
/// [`SendStream::reset`] finishes the stream.
#[derive(Debug)]
pub struct SendStream {
    conn: ConnRef,
    id: StreamId,
    /// `finish` or `reset` was called (or failed because the stream is closed).
    done: bool,
}

impl SendStream {
    pub(crate) fn new(conn: ConnRef, id: StreamId) -> Self {
        conn.with_state(|cs| cs.send_streams.insert(id));
        Self {
            conn,
            id,
            done: false,
        }
    }

    /// The stream's ID.
    pub fn id(&self) -> StreamId {
        self.id
    }

    /// Write some of `buf`, waiting while the send buffer or flow control is full.
    pub async fn write(&mut self, buf: &[u8]) -> Result<usize, WriteError> {
        poll_fn(|cx| self.poll_send(cx, buf)).await
    }

    /// Write all of `buf`.
    pub async fn write_all(&mut self, mut buf: &[u8]) -> Result<(), WriteError> {
        while !buf.is_empty() {
            let n = self.write(buf).await?;
            buf = &buf[n..];
        }
        Ok(())
    }

    /// [`SendStream::write`] as a poll function (for adapters such as HTTP/3 libraries):
    /// `Pending` registers `cx`'s waker until the send buffer or flow control has room.
    pub fn poll_send(
        &mut self,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<Result<usize, WriteError>> {
        if buf.is_empty() {
            return Poll::Ready(Ok(0));
        }
        self.poll_write_with(cx, |conn, id| conn.write(id, buf))
    }

    /// Write all of `data` without copying it: the stream keeps a reference to its bytes
    /// until they are acknowledged (quinn's `write_chunk`).
    pub async fn write_chunk(&mut self, mut data: Bytes) -> Result<(), WriteError> {
        while !data.is_empty() {
            let n = poll_fn(|cx| {
                self.poll_write_with(cx, |conn, id| conn.write_bytes(id, data.clone()))
            })
            .await?;
            data.advance(n);
        }
        Ok(())
    }

    /// One write attempt by `write` (bytes accepted), or `Pending` with `cx` registered
    /// until the send buffer or flow control has room.
    fn poll_write_with(
        &mut self,
        cx: &mut Context<'_>,
        write: impl FnOnce(&mut mpquic_proto::Connection, StreamId) -> Result<usize, CoreWriteError>,
    ) -> Poll<Result<usize, WriteError>> {
        let id = self.id;
        let r = self.conn.with(|conn, cs| match write(conn, id) {
            Ok(n) => Ok(Some(n)),
            Err(CoreWriteError::Blocked) => {
                cs.write_wakers.insert(id, cx.waker().clone());
                Ok(None)
            }
            Err(CoreWriteError::Stopped(code)) => Err(WriteError::Stopped(code)),
            Err(CoreWriteError::ClosedStream | CoreWriteError::UnknownStream) => {
                Err(closed_error(conn, cs)
                    .map_or(WriteError::ClosedStream, WriteError::ConnectionLost))
            }
        });
        match r {
            Ok(Ok(Some(n))) => {
                self.conn.shared.wake_driver();
                Poll::Ready(Ok(n))
            }
            Ok(Ok(None)) => Poll::Pending,
            Ok(Err(e)) => Poll::Ready(Err(e)),
            Err(e) => Poll::Ready(Err(e.into())),
        }
    }

    /// Set the stream's send priority: while several streams have data to send, packets
    /// take it from the highest priority first; streams of equal priority (0 by default)
    /// take turns. Applies to data already written. Retransmissions go first whatever
    /// their priority.
    pub fn set_priority(&self, priority: i32) -> Result<(), WriteError> {
        let id = self.id;
        let r = self.conn.with(|conn, cs| {
            conn.set_priority(id, priority).map_err(|_| {
                closed_error(conn, cs).map_or(WriteError::ClosedStream, WriteError::ConnectionLost)
            })
        })?;
        // Packets already being built are not affected; the next ones are.
        self.conn.shared.wake_driver();
        r
    }

    /// The stream's send priority (see [`SendStream::set_priority`]).
    pub fn priority(&self) -> Result<i32, WriteError> {
        let id = self.id;
        self.conn.with(|conn, cs| {
            conn.priority(id).map_err(|_| {
                closed_error(conn, cs).map_or(WriteError::ClosedStream, WriteError::ConnectionLost)
            })
        })?
    }

    /// End the stream: a FIN follows the data written so far. Does not wait for the peer's
    /// acknowledgement; see [`SendStream::finished`].
    pub fn finish(&mut self) -> Result<(), WriteError> {
        self.end(|conn, id| conn.finish(id))
    }

    /// Abandon the stream (RESET_STREAM with `error_code`).
    pub fn reset(&mut self, error_code: u64) -> Result<(), WriteError> {
        self.end(|conn, id| conn.reset(id, error_code))
    }

    fn end(
        &mut self,
        f: impl FnOnce(&mut mpquic_proto::Connection, StreamId) -> Result<(), CoreWriteError>,
    ) -> Result<(), WriteError> {
        let id = self.id;
        let r =
            self.conn.with(|conn, cs| match f(conn, id) {
                Ok(()) => Ok(()),
                Err(CoreWriteError::Stopped(code)) => Err(WriteError::Stopped(code)),
                Err(_) => Err(closed_error(conn, cs)
                    .map_or(WriteError::ClosedStream, WriteError::ConnectionLost)),
            })?;
        self.done = true;
        self.conn.shared.wake_driver();
        r
    }

    /// Wait until the peer acknowledged all data and the FIN (after [`SendStream::finish`]).
    pub async fn finished(&mut self) -> Result<(), WriteError> {
        let id = self.id;
        poll_fn(|cx| {
            let r = self.conn.with_state(|cs| match cs.send_outcome.get(&id) {
                Some(None) => Some(Ok(())),
                Some(Some(code)) => Some(Err(WriteError::Stopped(*code))),
                None => match &cs.error {
                    Some(e) => Some(Err(WriteError::ConnectionLost(e.clone()))),
                    None => {
                        cs.finish_wakers.insert(id, cx.waker().clone());
                        None
                    }
                },
            });
            match r {
                None => Poll::Ready(Err(WriteError::ConnectionLost(
                    ConnectionError::EndpointStopped,
                ))),
                Some(None) => Poll::Pending,
                Some(Some(r)) => Poll::Ready(r),
            }
        })
        .await
    }
}

impl AsyncWrite for SendStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().poll_send(cx, buf).map_err(Into::into)
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// Finishes the stream (without waiting for acknowledgements).
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.done {
            return Poll::Ready(Ok(()));
        }
        Poll::Ready(this.finish().map_err(Into::into))
    }
}

impl Drop for SendStream {
    fn drop(&mut self) {
        let id = self.id;
        let done = self.done;
        let _ = self.conn.with(|conn, _| {
            if !done {
                let _ = conn.finish(id);
            }
        });
        self.conn.with_state(|cs| {
            cs.send_streams.remove(&id);
            cs.forget_send(id);
        });
        if !done {
            self.conn.shared.wake_driver();
        }
    }
}

/// The receiving half of a stream. Dropping it before the end of the stream asks the peer to
/// stop sending (STOP_SENDING with code 0).
#[derive(Debug)]
pub struct RecvStream {
    conn: ConnRef,
    id: StreamId,
    /// The end of the stream was read.
    eof: bool,
}

impl RecvStream {
    pub(crate) fn new(conn: ConnRef, id: StreamId) -> Self {
        Self {
            conn,
            id,
            eof: false,
        }
    }

    /// The stream's ID.
    pub fn id(&self) -> StreamId {
        self.id
    }

    /// Read into `buf`: `Ok(Some(n))` bytes, `Ok(None)` at the end of the stream.
    pub async fn read(&mut self, buf: &mut [u8]) -> Result<Option<usize>, ReadError> {
        poll_fn(|cx| self.poll_recv(cx, buf)).await
    }

    /// Read the whole stream, failing if it is longer than `limit` bytes.
    pub async fn read_to_end(&mut self, limit: usize) -> Result<Vec<u8>, ReadToEndError> {
        let mut out = Vec::new();
        while let Some(chunk) = self.read_chunk(64 * 1024).await? {
            if out.len() + chunk.len() > limit {
                return Err(ReadToEndError::TooLong(limit));
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out)
    }

    /// Ask the peer to stop sending (STOP_SENDING with `error_code`); unread data is discarded.
    pub fn stop(&mut self, error_code: u64) -> Result<(), ReadError> {
        let id = self.id;
        self.conn
            .with(|conn, _| conn.stop_sending(id, error_code))
            .map_err(ReadError::ConnectionLost)?
            .map_err(|_| ReadError::ClosedStream)?;
        self.eof = true;
        self.conn.shared.wake_driver();
        Ok(())
    }

    /// [`RecvStream::read`] as a poll function: `Ok(Some(n))` bytes, `Ok(None)` at the end of
    /// the stream; `Pending` registers `cx`'s waker until data (or the end) arrives.
    pub fn poll_recv(
        &mut self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<Result<Option<usize>, ReadError>> {
        if self.eof {
            return Poll::Ready(Ok(None));
        }
        if buf.is_empty() {
            return Poll::Ready(Ok(Some(0)));
        }
        self.poll_read_with(cx, |conn, id| conn.read(id, buf))
    }

    /// Read without copying: the next in-order chunk of at most `max` bytes, `Ok(None)` at
    /// the end of the stream (quinn's `read_chunk` with `ordered`).
    pub async fn read_chunk(&mut self, max: usize) -> Result<Option<Bytes>, ReadError> {
        let max = max.max(1);
        poll_fn(|cx| {
            if self.eof {
                return Poll::Ready(Ok(None));
            }
            self.poll_read_with(cx, |conn, id| conn.read_chunk(id, max))
        })
        .await
    }

    /// Fill `buf` exactly; [`ReadExactError::FinishedEarly`] with the bytes read if the
    /// stream ends first.
    pub async fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), ReadExactError> {
        let mut filled = 0;
        while filled < buf.len() {
            match self.read(&mut buf[filled..]).await? {
                Some(n) => filled += n,
                None => return Err(ReadExactError::FinishedEarly(filled)),
            }
        }
        Ok(())
    }

    /// One read attempt by `read`: `Ok(Some(data))`, `Ok(None)` at the end of the stream, or
    /// `Pending` with `cx` registered until data (or the end) arrives.
    fn poll_read_with<T>(
        &mut self,
        cx: &mut Context<'_>,
        read: impl FnOnce(&mut mpquic_proto::Connection, StreamId) -> Result<Option<T>, CoreReadError>,
    ) -> Poll<Result<Option<T>, ReadError>> {
        let id = self.id;
        let r = self.conn.with(|conn, cs| match read(conn, id) {
            Ok(data) => Ok(Some(data)),
            Err(CoreReadError::Blocked) => match closed_error(conn, cs) {
                Some(e) => Err(ReadError::ConnectionLost(e)),
                None => {
                    cs.read_wakers.insert(id, cx.waker().clone());
                    Ok(None)
                }
            },
            Err(CoreReadError::Reset(code)) => Err(ReadError::Reset(code)),
            Err(CoreReadError::ClosedStream | CoreReadError::UnknownStream) => {
                Err(closed_error(conn, cs)
                    .map_or(ReadError::ClosedStream, ReadError::ConnectionLost))
            }
        });
        match r {
            Ok(Ok(Some(n))) => {
                self.eof = n.is_none();
                // Reading frees receive window: the driver may owe the peer MAX_STREAM_DATA.
                self.conn.shared.wake_driver();
                Poll::Ready(Ok(n))
            }
            Ok(Ok(None)) => Poll::Pending,
            Ok(Err(e)) => {
                self.eof = matches!(e, ReadError::Reset(_));
                Poll::Ready(Err(e))
            }
            Err(e) => Poll::Ready(Err(e.into())),
        }
    }
}

impl AsyncRead for RecvStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let dst = buf.initialize_unfilled();
        match this.poll_recv(cx, dst) {
            Poll::Ready(Ok(Some(n))) => {
                buf.advance(n);
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Ok(None)) => Poll::Ready(Ok(())),
            Poll::Ready(Err(e)) => Poll::Ready(Err(e.into())),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Drop for RecvStream {
    fn drop(&mut self) {
        let id = self.id;
        if !self.eof
            && self
                .conn
                .with(|conn, _| conn.stop_sending(id, 0).is_ok())
                .unwrap_or(false)
        {
            self.conn.shared.wake_driver();
        }
        self.conn.with_state(|cs| {
            cs.read_wakers.remove(&id);
        });
    }
}
