//! [`Connecting`] and [`Connection`]: the application's handles on one QUIC connection.

use std::future::{poll_fn, Future};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use mpquic_proto::ConnectionHandle;
use mpquic_proto::PathError;

use crate::paths::{LocalAddr, OpenPath, OpenPathError, Path, PathEvents, PathStatus};
use crate::state::{ConnState, Shared};
use crate::stats::{ConnectionStats, PathStats};
use crate::streams::{RecvStream, SendStream};
use crate::{Design, Dir, PathId};

/// How long [`Connection::open_path`] waits for the peer to issue what a new path needs
/// (connection IDs, and path IDs: RFC 10069 §2, §5) before failing.
pub const OPEN_PATH_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Why a connection ended or could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectionError {
    /// The connection was closed (by us or the peer), timed out or was reset.
    #[error(transparent)]
    Lost(#[from] mpquic_proto::ConnectionError),
    /// The endpoint's driver failed (a fatal socket error or an internal error).
    #[error("endpoint failed: {0}")]
    EndpointFailed(String),
    /// The endpoint's driver stopped (its runtime shut down).
    #[error("the endpoint stopped")]
    EndpointStopped,
    /// [`crate::Incoming::accept`] could not create the connection (the server stopped
    /// serving, its connection limit was reached meanwhile, or the Initial was unusable).
    #[error("could not accept the connection: {0}")]
    AcceptFailed(String),
}

/// Why [`Connection::send_datagram`] refused a datagram (quinn's `SendDatagramError`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SendDatagramError {
    /// The peer did not advertise max_datagram_frame_size (RFC 9221 §3).
    #[error("datagrams not supported by peer")]
    UnsupportedByPeer,
    /// Datagrams are disabled locally (`TransportConfig::datagram_receive_buffer` is None).
    #[error("datagram support disabled")]
    Disabled,
    /// Larger than [`Connection::max_datagram_size`] (or than the send buffer).
    #[error("datagram too large")]
    TooLarge,
    /// The connection is closed.
    #[error("connection lost")]
    ConnectionLost(#[from] ConnectionError),
}

/// A counted reference to a connection's runtime state: the connection is closed (code 0)
/// when the last [`Connection`], stream or [`Connecting`] referring to it is dropped.
#[derive(Debug)]
pub(crate) struct ConnRef {
    pub(crate) shared: Arc<Shared>,
    pub(crate) handle: ConnectionHandle,
}

impl ConnRef {
    /// Wrap a handle whose reference was already counted.
    pub(crate) fn adopt(shared: Arc<Shared>, handle: ConnectionHandle) -> Self {
        Self { shared, handle }
    }

    /// Run `f` on the core connection and its runtime state, or fail with the reason the
    /// connection is gone.
    pub(crate) fn with<R>(
        &self,
        f: impl FnOnce(&mut mpquic_proto::Connection, &mut ConnState) -> R,
    ) -> Result<R, ConnectionError> {
        let mut guard = self.shared.lock();
        let st = &mut *guard;
        let stopped = st.stopped.clone();
        let cs = st
            .conns
            .get_mut(&self.handle)
            .ok_or_else(|| stopped.clone().unwrap_or(ConnectionError::EndpointStopped))?;
        match st.proto.connection_mut(self.handle) {
            Some(conn) if !cs.drained => Ok(f(conn, cs)),
            _ => Err(cs
                .error
                .clone()
                .or(stopped)
                .unwrap_or(ConnectionError::EndpointStopped)),
        }
    }

    /// Run `f` on the runtime state only (it outlives the core connection).
    pub(crate) fn with_state<R>(&self, f: impl FnOnce(&mut ConnState) -> R) -> Option<R> {
        let mut st = self.shared.lock();
        st.conns.get_mut(&self.handle).map(|cs| f(cs))
    }
}

impl Clone for ConnRef {
    fn clone(&self) -> Self {
        self.with_state(|cs| cs.refs += 1);
        Self {
            shared: self.shared.clone(),
            handle: self.handle,
        }
    }
}

impl Drop for ConnRef {
    fn drop(&mut self) {
        let now = self.shared.now();
        let mut guard = self.shared.lock();
        let st = &mut *guard;
        let Some(cs) = st.conns.get_mut(&self.handle) else {
            return;
        };
        cs.refs = cs.refs.saturating_sub(1);
        if cs.refs > 0 {
            return;
        }
        if cs.drained {
            st.conns.remove(&self.handle);
            return;
        }
        if let Some(conn) = st.proto.connection_mut(self.handle) {
            conn.close(now, 0, Bytes::new());
        }
        drop(guard);
        self.shared.wake_driver();
    }
}

/// A connection in its handshake; resolves to a [`Connection`] once it is established.
///
/// The handshake is abandoned (with [`mpquic_proto::ConnectionError::TimedOut`]) when it has
/// not completed within the transport configuration's idle timeout. The core alone would keep
/// probing a silent server for much longer (its idle deadline grows with the PTO backoff).
#[derive(Debug)]
#[must_use = "a connection attempt does nothing unless awaited"]
pub struct Connecting {
    pub(crate) conn: Option<ConnRef>,
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl Connecting {
    pub(crate) fn new(conn: ConnRef, timeout: std::time::Duration) -> Self {
        let deadline = (!timeout.is_zero()).then(|| Box::pin(tokio::time::sleep(timeout)));
        Self {
            conn: Some(conn),
            deadline,
        }
    }

    /// Give up the handshake: close the connection and fail every task waiting for it.
    fn abandon(conn: &ConnRef) -> ConnectionError {
        let error = ConnectionError::Lost(mpquic_proto::ConnectionError::TimedOut);
        let now = conn.shared.now();
        let _ = conn.with(|c, cs| {
            c.close(now, 0, Bytes::from_static(b"handshake timed out"));
            cs.fail(error.clone());
        });
        conn.shared.wake_driver();
        error
    }
}

impl Future for Connecting {
    type Output = Result<Connection, ConnectionError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(conn) = self.conn.as_ref() else {
            return Poll::Ready(Err(ConnectionError::EndpointStopped));
        };
        let state = conn.with_state(|cs| {
            if let Some(e) = &cs.error {
                return Some(Err(e.clone()));
            }
            if cs.established || cs.ready {
                return Some(Ok(()));
            }
            cs.register_conn(cx.waker());
            None
        });
        match state {
            None => Poll::Ready(Err(ConnectionError::EndpointStopped)),
            Some(None) => {
                let expired = self
                    .deadline
                    .as_mut()
                    .is_some_and(|d| d.as_mut().poll(cx).is_ready());
                match self.conn.as_ref() {
                    Some(conn) if expired => Poll::Ready(Err(Self::abandon(conn))),
                    _ => Poll::Pending,
                }
            }
            Some(Some(Err(e))) => Poll::Ready(Err(e)),
            Some(Some(Ok(()))) => match self.conn.take() {
                Some(c) => Poll::Ready(Ok(Connection::new(c))),
                None => Poll::Ready(Err(ConnectionError::EndpointStopped)),
            },
        }
    }
}

/// An established QUIC connection. Cloning gives another handle to the same connection; the
/// connection is closed with code 0 when the last handle and its streams are dropped.
#[derive(Debug, Clone)]
pub struct Connection {
    pub(crate) inner: ConnRef,
}

impl Connection {
    pub(crate) fn new(inner: ConnRef) -> Self {
        Self { inner }
    }

    /// Open a bidirectional stream, waiting while the peer's stream limit is reached.
    pub async fn open_bi(&self) -> Result<(SendStream, RecvStream), ConnectionError> {
        poll_fn(|cx| self.poll_open_bi(cx)).await
    }

    /// Open a unidirectional stream, waiting while the peer's stream limit is reached.
    pub async fn open_uni(&self) -> Result<SendStream, ConnectionError> {
        poll_fn(|cx| self.poll_open_uni(cx)).await
    }

    /// Accept the next bidirectional stream the peer opened.
    pub async fn accept_bi(&self) -> Result<(SendStream, RecvStream), ConnectionError> {
        poll_fn(|cx| self.poll_accept_bi(cx)).await
    }

    /// Accept the next unidirectional stream the peer opened.
    pub async fn accept_uni(&self) -> Result<RecvStream, ConnectionError> {
        poll_fn(|cx| self.poll_accept_uni(cx)).await
    }

    /// [`Connection::open_bi`] as a poll function (for adapters such as HTTP/3 libraries):
    /// `Pending` registers `cx`'s waker until the peer raises its stream limit.
    pub fn poll_open_bi(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(SendStream, RecvStream), ConnectionError>> {
        self.poll_open(cx, Dir::Bi).map_ok(|id| self.bi_stream(id))
    }

    /// [`Connection::open_uni`] as a poll function.
    pub fn poll_open_uni(&self, cx: &mut Context<'_>) -> Poll<Result<SendStream, ConnectionError>> {
        self.poll_open(cx, Dir::Uni)
            .map_ok(|id| SendStream::new(self.inner.clone(), id))
    }

    /// [`Connection::accept_bi`] as a poll function: `Pending` registers `cx`'s waker until
    /// the peer opens a stream.
    pub fn poll_accept_bi(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<(SendStream, RecvStream), ConnectionError>> {
        self.poll_accept(cx, Dir::Bi)
            .map_ok(|id| self.bi_stream(id))
    }

    /// [`Connection::accept_uni`] as a poll function.
    pub fn poll_accept_uni(
        &self,
        cx: &mut Context<'_>,
    ) -> Poll<Result<RecvStream, ConnectionError>> {
        self.poll_accept(cx, Dir::Uni)
            .map_ok(|id| RecvStream::new(self.inner.clone(), id))
    }

    fn bi_stream(&self, id: crate::StreamId) -> (SendStream, RecvStream) {
        (
            SendStream::new(self.inner.clone(), id),
            RecvStream::new(self.inner.clone(), id),
        )
    }

    fn poll_open(
        &self,
        cx: &mut Context<'_>,
        dir: Dir,
    ) -> Poll<Result<crate::StreamId, ConnectionError>> {
        let r = self.inner.with(|conn, cs| {
            if let Some(e) = &cs.error {
                return Some(Err(e.clone()));
            }
            let id = match dir {
                Dir::Bi => conn.open_bi(),
                Dir::Uni => conn.open_uni(),
            };
            if id.is_none() {
                cs.register_open(dir, cx.waker());
            }
            id.map(Ok)
        });
        match r {
            Ok(Some(r)) => Poll::Ready(r),
            Ok(None) => Poll::Pending,
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    fn poll_accept(
        &self,
        cx: &mut Context<'_>,
        dir: Dir,
    ) -> Poll<Result<crate::StreamId, ConnectionError>> {
        let r = self.inner.with(|conn, cs| {
            if let Some(id) = conn.accept(dir) {
                return Some(Ok(id));
            }
            if let Some(e) = &cs.error {
                return Some(Err(e.clone()));
            }
            cs.register_accept(dir, cx.waker());
            None
        });
        match r {
            Ok(Some(r)) => Poll::Ready(r),
            Ok(None) => Poll::Pending,
            Err(e) => Poll::Ready(Err(e)),
        }
    }

    /// Open a new path (multipath, client only) from `local` to `remote` with an initial
    /// `status`, as noq does. `local` is an address of one of the endpoint's sockets, or an IP
    /// address alone (any socket bound to that IP; a port of 0 means the same); `remote` is the
    /// peer's address for the path, by default the initial path's remote if it is of `local`'s
    /// address family, else the server's advertised address of that family
    /// ([`Connection::peer_preferred_address`]); without either, a path from an IPv6 address to
    /// a dual-stack server needs the server's IPv6 address.
    ///
    /// The returned [`OpenPath`] resolves to the [`Path`] once path validation succeeded (RFC
    /// 9000 §8.2), or fails: [`OpenPathError::ValidationFailed`] when the remote did not
    /// answer within the validation timeout (three unanswered PATH_CHALLENGEs, RFC 9000
    /// §8.2.4; about 6 s with the default 333 ms initial RTT). Right after the handshake the
    /// peer may not have issued the connection IDs (or path IDs) a new path needs yet: it
    /// waits for them for up to [`OPEN_PATH_WAIT`].
    pub fn open_path(
        &self,
        local: impl Into<LocalAddr>,
        remote: impl Into<Option<SocketAddr>>,
        status: PathStatus,
    ) -> OpenPath {
        let conn = self.clone();
        let (local, remote) = (local.into(), remote.into());
        // Started at once, so that paths opened one after the other get IDs in that order.
        let first = self.try_open_path(local, remote, status);
        OpenPath::new(async move {
            let deadline = tokio::time::Instant::now() + OPEN_PATH_WAIT;
            let mut attempt = first;
            let id = loop {
                match attempt {
                    Err(OpenPathError::Path(
                        PathError::NoConnectionId | PathError::PathIdLimit,
                    )) if tokio::time::Instant::now() < deadline => {
                        let _ = tokio::time::timeout_at(deadline, conn.next_datagram()).await;
                        attempt = conn.try_open_path(local, remote, status);
                    }
                    other => break other?,
                }
            };
            conn.path_validated(id).await?;
            Ok(Path {
                conn: conn.inner.clone(),
                id,
            })
        })
    }

    /// Start opening a path without waiting: fails at once if the peer has not issued what a
    /// new path needs; the path is usable once [`PathEvent::Validated`](crate::PathEvent)
    /// is reported for the returned ID.
    pub fn try_open_path(
        &self,
        local: impl Into<LocalAddr>,
        remote: impl Into<Option<SocketAddr>>,
        status: PathStatus,
    ) -> Result<PathId, OpenPathError> {
        let (local, remote) = (local.into(), remote.into());
        let now = self.inner.shared.now();
        let bound = {
            let st = self.inner.shared.lock();
            // A socket of the remote's family bound to `local`; any one if no remote given.
            let fits = |l: &&SocketAddr| remote.is_none_or(|r| r.is_ipv4() == l.is_ipv4());
            st.locals
                .iter()
                .filter(|l| local.matches(**l))
                .find(fits)
                .copied()
        };
        let local = bound.ok_or(OpenPathError::NotBound(local))?;
        let id = self.inner.with(|conn, _| {
            let paths = conn.path_stats();
            let initial = paths
                .iter()
                .find(|p| p.id == PathId::ZERO && !p.abandoned)
                .or(paths.first())
                .map(|p| p.remote)
                .ok_or(OpenPathError::Path(PathError::NotEstablished))?;
            let remote = match remote {
                Some(r) => r,
                None if initial.is_ipv4() == local.is_ipv4() => initial,
                // The server's advertised address of `local`'s family (RFC 9000 §18.2); with
                // multipath a path there is allowed even under disable_active_migration
                // (RFC 10069 "Path ID and connection IDs").
                None => conn
                    .peer_preferred_address()
                    .into_iter()
                    .find(|a| a.is_ipv4() == local.is_ipv4())
                    .ok_or(OpenPathError::NoRemote(local))?,
            };
            let id = conn.open_path(now, local, remote)?;
            if status.is_backup() {
                conn.set_path_status(id, true)?;
            }
            Ok::<PathId, OpenPathError>(id)
        })??;
        self.inner.shared.wake_driver();
        Ok(id)
    }

    /// Resolves once path `id` is validated, or with why it never will be.
    pub(crate) async fn path_validated(&self, id: PathId) -> Result<(), OpenPathError> {
        use crate::state::PathOutcome;
        poll_fn(|cx| {
            let r = self.inner.with(|_, cs| match cs.path_outcomes.get(&id) {
                Some(PathOutcome::Validated) => Some(Ok(())),
                Some(PathOutcome::Failed) => Some(Err(OpenPathError::ValidationFailed(id))),
                Some(&PathOutcome::Abandoned(error_code)) => {
                    Some(Err(OpenPathError::Abandoned { id, error_code }))
                }
                None => {
                    cs.register_path(cx.waker());
                    None
                }
            });
            match r {
                Ok(Some(r)) => Poll::Ready(r),
                Ok(None) => Poll::Pending,
                Err(e) => Poll::Ready(Err(e.into())),
            }
        })
        .await
    }

    /// Resolves when the connection receives its next datagram (or has ended).
    pub(crate) async fn next_datagram(&self) {
        let mut registered = false;
        poll_fn(|cx| {
            if registered {
                return Poll::Ready(());
            }
            registered = true;
            match self.inner.with_state(|cs| {
                cs.register_rx(cx.waker());
                cs.error.is_some()
            }) {
                Some(false) => Poll::Pending,
                _ => Poll::Ready(()),
            }
        })
        .await;
    }

    /// Send an unreliable datagram (RFC 9221 DATAGRAM frame) as quinn's `send_datagram` does:
    /// it leaves once, in the next packet a path's congestion window admits (on the path the
    /// scheduler picks), and is never retransmitted. When the send buffer
    /// (`TransportConfig::datagram_send_buffer`) is full the oldest queued datagrams are
    /// dropped to make room.
    pub fn send_datagram(&self, data: Bytes) -> Result<(), SendDatagramError> {
        use mpquic_proto::SendDatagramError as Core;
        self.inner.with(|conn, cs| {
            if let Some(e) = &cs.error {
                return Err(SendDatagramError::ConnectionLost(e.clone()));
            }
            conn.send_datagram(data).map_err(|e| match e {
                Core::UnsupportedByPeer => SendDatagramError::UnsupportedByPeer,
                Core::Disabled => SendDatagramError::Disabled,
                Core::TooLarge => SendDatagramError::TooLarge,
                Core::ConnectionClosed => SendDatagramError::ConnectionLost(
                    conn.error()
                        .cloned()
                        .map_or(ConnectionError::EndpointStopped, ConnectionError::Lost),
                ),
            })
        })??;
        self.inner.shared.wake_driver();
        Ok(())
    }

    /// Receive the next datagram the peer sent (RFC 9221), waiting for one; the connection
    /// error once the connection has ended. Datagrams beyond the receive buffer
    /// (`TransportConfig::datagram_receive_buffer`) that were not read in time are dropped,
    /// oldest first.
    pub async fn read_datagram(&self) -> Result<Bytes, ConnectionError> {
        poll_fn(|cx| {
            let r = self.inner.with(|conn, cs| {
                if let Some(data) = conn.recv_datagram() {
                    return Some(Ok(data));
                }
                if let Some(e) = &cs.error {
                    return Some(Err(e.clone()));
                }
                cs.register_datagram(cx.waker());
                None
            });
            match r {
                Ok(Some(r)) => Poll::Ready(r),
                Ok(None) => Poll::Pending,
                Err(e) => Poll::Ready(Err(e)),
            }
        })
        .await
    }

    /// The largest datagram [`Connection::send_datagram`] accepts now (it fits one packet on
    /// every path and the peer's max_datagram_frame_size), or None when the peer does not
    /// support datagrams, they are disabled locally, or the connection is gone.
    pub fn max_datagram_size(&self) -> Option<usize> {
        self.inner
            .with(|conn, _| conn.max_datagram_size(None))
            .ok()
            .flatten()
    }

    /// Bytes [`Connection::send_datagram`] can queue without dropping older datagrams.
    pub fn datagram_send_buffer_space(&self) -> usize {
        self.inner
            .with(|conn, _| conn.datagram_send_buffer_space())
            .unwrap_or(0)
    }

    /// Abandon a path (RFC 10069 §3.4) with an application error code.
    pub fn close_path(&self, id: PathId, error_code: u64) -> Result<(), OpenPathError> {
        let now = self.inner.shared.now();
        self.inner
            .with(|conn, _| conn.close_path(now, id, error_code))??;
        self.inner.shared.wake_driver();
        Ok(())
    }

    /// Change the status we advertise for a path (RFC 10069 §3.3). Subscribers of
    /// [`Connection::path_events`] see [`PathEvent::StatusChanged`](crate::PathEvent) with
    /// [`StatusOrigin::Local`](crate::StatusOrigin) when the status changed.
    pub fn set_path_status(&self, id: PathId, status: PathStatus) -> Result<(), OpenPathError> {
        self.inner
            .with(|conn, _| conn.set_path_status(id, status.is_backup()))??;
        self.inner.shared.wake_driver();
        Ok(())
    }

    /// A new subscription to the connection's path events (opened, validated, failed, status
    /// changed by either side, abandoned). Each subscription sees every event sent after it
    /// was made; subscribe before opening a path to see all of its events. Once the
    /// connection has ended, a subscription returns what was sent before, then
    /// [`PathEventsError::Closed`](crate::PathEventsError).
    pub fn path_events(&self) -> PathEvents {
        let rx = self
            .inner
            .with_state(ConnState::subscribe_path_events)
            .flatten()
            // Already ended: a receiver whose sender is gone reports Closed at once.
            .unwrap_or_else(|| tokio::sync::broadcast::channel(1).1);
        PathEvents { rx }
    }

    /// Close the connection with an application error code and reason (RFC 9000 §10.2).
    pub fn close(&self, code: u64, reason: &[u8]) {
        let now = self.inner.shared.now();
        let _ = self
            .inner
            .with(|conn, _| conn.close(now, code, Bytes::copy_from_slice(reason)));
        self.inner.shared.wake_driver();
    }

    /// Wait until the connection is closed (by either side, or by a timeout), and say why.
    pub async fn closed(&self) -> ConnectionError {
        poll_fn(|cx| {
            let r = self.inner.with_state(|cs| match &cs.error {
                Some(e) => Some(e.clone()),
                None => {
                    cs.register_conn(cx.waker());
                    None
                }
            });
            match r {
                None => Poll::Ready(ConnectionError::EndpointStopped),
                Some(None) => Poll::Pending,
                Some(Some(e)) => Poll::Ready(e),
            }
        })
        .await
    }

    /// Why the connection ended, if it has.
    pub fn close_reason(&self) -> Option<ConnectionError> {
        self.inner
            .with_state(|cs| cs.error.clone())
            .unwrap_or(Some(ConnectionError::EndpointStopped))
    }

    /// Connection statistics (the last ones, once the connection is gone).
    pub fn stats(&self) -> ConnectionStats {
        ConnectionStats::from_core(&self.inner.shared, self.core_stats().0)
    }

    /// Statistics of every path (the last ones, once the connection is gone).
    pub fn path_stats(&self) -> Vec<PathStats> {
        self.core_stats()
            .1
            .into_iter()
            .map(PathStats::from)
            .collect()
    }

    /// Stream bytes sent again after a loss (the stream layer's count; 0 once the connection
    /// is gone).
    pub fn retransmitted_bytes(&self) -> u64 {
        self.inner
            .with(|conn, _| conn.retransmitted_bytes())
            .unwrap_or(0)
    }

    /// The core's own statistics snapshot, in the core's units (milliseconds as `f64`,
    /// `Timestamp`s since the endpoint was created): for tools that record it as it is, like
    /// the lab. Applications want [`Connection::stats`] and [`Connection::path_stats`].
    pub fn core_stats(&self) -> (mpquic_proto::ConnectionStats, Vec<mpquic_proto::PathStats>) {
        match self.inner.with(|conn, _| (conn.stats(), conn.path_stats())) {
            Ok(s) => s,
            Err(_) => self
                .inner
                .with_state(|cs| cs.final_stats.as_deref().cloned())
                .flatten()
                .unwrap_or_default(),
        }
    }

    /// The smoothed RTT of the initial path (or the first path still listed).
    pub fn rtt(&self) -> std::time::Duration {
        let paths = self.path_stats();
        paths
            .iter()
            .find(|p| p.id == PathId::ZERO)
            .or(paths.first())
            .map_or(std::time::Duration::ZERO, |p| p.rtt)
    }

    /// The peer's address on the initial path.
    pub fn remote_address(&self) -> Option<SocketAddr> {
        let paths = self.path_stats();
        paths
            .iter()
            .find(|p| p.id == PathId::ZERO)
            .or(paths.first())
            .map(|p| p.remote)
    }

    /// The addresses the server advertised in its `preferred_address` transport parameter
    /// (RFC 9000 §18.2; IPv4 first), empty on a server, when it advertised none, or once the
    /// connection is gone. Nothing migrates by itself: [`Connection::open_path`] without a
    /// remote uses the one of the local address's family when path 0's remote is of the other.
    pub fn peer_preferred_address(&self) -> Vec<SocketAddr> {
        self.inner
            .with(|conn, _| conn.peer_preferred_address())
            .unwrap_or_default()
    }

    /// The negotiated multipath design, while the connection exists.
    pub fn design(&self) -> Option<Design> {
        self.inner.with(|conn, _| conn.design()).ok()
    }

    /// The negotiated ALPN protocol, while the connection exists.
    pub fn alpn_protocol(&self) -> Option<Vec<u8>> {
        self.inner
            .with(|conn, _| conn.alpn_protocol())
            .ok()
            .flatten()
    }
}
