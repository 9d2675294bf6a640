//! Multipath paths (RFC 10069) in the style of noq: [`crate::Connection::open_path`] gives an
//! [`OpenPath`] future that resolves once the new path is validated (RFC 9000 §8.2) or has
//! failed, and [`crate::Connection::path_events`] gives any number of subscriptions to the
//! connection's path events.

use std::fmt;
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::str::FromStr;
use std::task::{Context, Poll};

use mpquic_proto::PathError;
use tokio::sync::broadcast;

use crate::connection::{ConnRef, ConnectionError};
use crate::stats::PathStats;
use crate::PathId;

/// The local end of a new path: an address with a port (the endpoint's socket bound to
/// exactly it), or an IP address alone (any of the endpoint's sockets bound to that IP; a
/// port of 0 means the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LocalAddr {
    /// Any socket bound to this IP address.
    Ip(IpAddr),
    /// The socket bound to this address.
    Socket(SocketAddr),
}

impl LocalAddr {
    /// The IP address.
    pub fn ip(&self) -> IpAddr {
        match self {
            Self::Ip(ip) => *ip,
            Self::Socket(addr) => addr.ip(),
        }
    }

    /// Whether a socket bound to `bound` can serve as this local end.
    pub fn matches(&self, bound: SocketAddr) -> bool {
        match self {
            Self::Ip(ip) => bound.ip() == *ip,
            Self::Socket(addr) if addr.port() == 0 => bound.ip() == addr.ip(),
            Self::Socket(addr) => bound == *addr,
        }
    }
}

impl From<IpAddr> for LocalAddr {
    fn from(ip: IpAddr) -> Self {
        Self::Ip(ip)
    }
}

impl From<SocketAddr> for LocalAddr {
    fn from(addr: SocketAddr) -> Self {
        Self::Socket(addr)
    }
}

impl FromStr for LocalAddr {
    type Err = std::net::AddrParseError;

    /// `IP`, `IP:PORT` or `[IPv6]:PORT`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.parse::<SocketAddr>() {
            Ok(addr) => Ok(Self::Socket(addr)),
            Err(e) => s
                .trim_start_matches('[')
                .trim_end_matches(']')
                .parse::<IpAddr>()
                .map(Self::Ip)
                .map_err(|_| e),
        }
    }
}

impl fmt::Display for LocalAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Ip(ip) => write!(f, "{ip}"),
            Self::Socket(addr) => write!(f, "{addr}"),
        }
    }
}

/// The status we advertise for a path (RFC 10069 §3.3): the peer's scheduler and ours prefer
/// available paths and use backup paths only when no available path works.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PathStatus {
    /// PATH_STATUS_AVAILABLE: the path may carry data.
    #[default]
    Available,
    /// PATH_STATUS_BACKUP: use only when no available path works.
    Backup,
}

impl PathStatus {
    pub(crate) fn is_backup(self) -> bool {
        self == Self::Backup
    }
}

/// Who changed a path's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StatusOrigin {
    /// Our application ([`crate::Connection::set_path_status`], [`Path::set_status`]).
    Local,
    /// The peer (a PATH_STATUS_BACKUP / PATH_STATUS_AVAILABLE frame).
    Peer,
}

/// Something that happened to one of a connection's paths.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PathEvent {
    /// A path exists (we opened it, or the peer started using a new path ID).
    Opened {
        /// The path.
        id: PathId,
    },
    /// Path validation succeeded (RFC 9000 §8.2): the path carries data.
    Validated {
        /// The path.
        id: PathId,
    },
    /// Path validation failed (three PATH_CHALLENGEs went unanswered, RFC 9000 §8.2.4: about
    /// 6 s on a new path with the default 333 ms initial RTT), or the path stopped delivering;
    /// its data moved to other paths.
    Failed {
        /// The path.
        id: PathId,
    },
    /// The status of a path changed (RFC 10069 §3.3).
    StatusChanged {
        /// The path.
        id: PathId,
        /// The new status.
        status: PathStatus,
        /// Whether we or the peer changed it.
        origin: StatusOrigin,
    },
    /// PATH_ABANDON was sent or received with this error code (RFC 10069 §3.4).
    Abandoned {
        /// The path.
        id: PathId,
        /// The application or transport error code of the PATH_ABANDON frame.
        error_code: u64,
    },
}

impl PathEvent {
    /// The path the event is about.
    pub fn id(&self) -> PathId {
        match *self {
            Self::Opened { id }
            | Self::Validated { id }
            | Self::Failed { id }
            | Self::StatusChanged { id, .. }
            | Self::Abandoned { id, .. } => id,
        }
    }
}

impl From<mpquic_proto::PathEvent> for PathEvent {
    fn from(e: mpquic_proto::PathEvent) -> Self {
        use mpquic_proto::PathEvent as Core;
        let status = |backup| {
            if backup {
                PathStatus::Backup
            } else {
                PathStatus::Available
            }
        };
        match e {
            Core::Opened { id } => Self::Opened { id },
            Core::Validated { id } => Self::Validated { id },
            Core::Failed { id } => Self::Failed { id },
            Core::StatusChanged { id, backup } => Self::StatusChanged {
                id,
                status: status(backup),
                origin: StatusOrigin::Peer,
            },
            Core::LocalStatusChanged { id, backup } => Self::StatusChanged {
                id,
                status: status(backup),
                origin: StatusOrigin::Local,
            },
            Core::Abandoned { id, error_code } => Self::Abandoned { id, error_code },
        }
    }
}

/// Why a [`PathEvents`] subscription returned no event.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PathEventsError {
    /// The subscriber fell behind: this many events were dropped for it (the next call
    /// returns the oldest event still kept). Read faster, or re-read the state with
    /// [`crate::Connection::path_stats`].
    #[error("path event subscriber lagged: {0} events missed")]
    Lagged(u64),
    /// The connection ended and every event sent before was read.
    #[error("the connection ended")]
    Closed,
}

/// One subscription to a connection's path events ([`crate::Connection::path_events`]).
/// Every subscription sees every event sent after it was made, in order; one that falls
/// behind by more than [`PathEvents::CAPACITY`] events gets [`PathEventsError::Lagged`].
/// A subscription does not keep the connection open.
#[derive(Debug)]
pub struct PathEvents {
    pub(crate) rx: broadcast::Receiver<PathEvent>,
}

impl PathEvents {
    /// Events a subscriber may fall behind by before it lags.
    pub const CAPACITY: usize = crate::state::PATH_EVENT_CAPACITY;

    /// The next event, waiting for one.
    pub async fn recv(&mut self) -> Result<PathEvent, PathEventsError> {
        self.rx.recv().await.map_err(|e| match e {
            broadcast::error::RecvError::Lagged(n) => PathEventsError::Lagged(n),
            broadcast::error::RecvError::Closed => PathEventsError::Closed,
        })
    }

    /// The next event if one is waiting (`Ok(None)` if none is).
    pub fn try_recv(&mut self) -> Result<Option<PathEvent>, PathEventsError> {
        use broadcast::error::TryRecvError;
        match self.rx.try_recv() {
            Ok(e) => Ok(Some(e)),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Lagged(n)) => Err(PathEventsError::Lagged(n)),
            Err(TryRecvError::Closed) => Err(PathEventsError::Closed),
        }
    }
}

/// Why [`crate::Connection::open_path`] failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum OpenPathError {
    /// The endpoint has no socket bound to this local address (or IP).
    #[error("no socket of this endpoint is bound to {0}")]
    NotBound(LocalAddr),
    /// No remote address was given, the path's local address family differs from the initial
    /// path's remote and the server advertised no address of that family: say which address
    /// of the peer the path goes to.
    #[error("no remote address for a path from {0}: give the peer's address of that family")]
    NoRemote(SocketAddr),
    /// The core refused (multipath not negotiated, path ID limit, no connection ID...).
    #[error(transparent)]
    Path(#[from] PathError),
    /// Path validation failed: the remote did not answer (RFC 9000 §8.2.4).
    #[error("path {0} failed validation (no answer from the remote)")]
    ValidationFailed(PathId),
    /// The path was abandoned before it was validated (RFC 10069 §3.4).
    #[error("path {id} was abandoned before validation (error {error_code:#x})")]
    Abandoned {
        /// The path.
        id: PathId,
        /// The PATH_ABANDON error code.
        error_code: u64,
    },
    /// The connection is closed.
    #[error(transparent)]
    Connection(#[from] ConnectionError),
}

/// A future resolving to the new [`Path`] once it is validated, or to why it is not usable.
/// Dropping it does not close the path.
#[must_use = "a path is usable only once this resolves"]
pub struct OpenPath {
    inner: Pin<Box<dyn Future<Output = Result<Path, OpenPathError>> + Send>>,
}

impl OpenPath {
    pub(crate) fn new(
        future: impl Future<Output = Result<Path, OpenPathError>> + Send + 'static,
    ) -> Self {
        Self {
            inner: Box::pin(future),
        }
    }
}

impl fmt::Debug for OpenPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OpenPath").finish_non_exhaustive()
    }
}

impl Future for OpenPath {
    type Output = Result<Path, OpenPathError>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        self.inner.as_mut().poll(cx)
    }
}

/// A handle on one path of a connection. It keeps the connection open like a
/// [`crate::Connection`] does; dropping it does not close the path.
#[derive(Debug, Clone)]
pub struct Path {
    pub(crate) conn: ConnRef,
    pub(crate) id: PathId,
}

impl Path {
    /// The path's ID.
    pub fn id(&self) -> PathId {
        self.id
    }

    /// The path's statistics, while the core keeps the path.
    pub fn stats(&self) -> Option<PathStats> {
        crate::Connection::new(self.conn.clone())
            .path_stats()
            .into_iter()
            .find(|p| p.id == self.id)
    }

    /// Change the status we advertise for the path (RFC 10069 §3.3); subscribers see a
    /// [`PathEvent::StatusChanged`] from [`StatusOrigin::Local`] if it changed.
    pub fn set_status(&self, status: PathStatus) -> Result<(), OpenPathError> {
        crate::Connection::new(self.conn.clone()).set_path_status(self.id, status)
    }

    /// Abandon the path (RFC 10069 §3.4) with an application error code.
    pub fn close(&self, error_code: u64) -> Result<(), OpenPathError> {
        crate::Connection::new(self.conn.clone()).close_path(self.id, error_code)
    }
}
