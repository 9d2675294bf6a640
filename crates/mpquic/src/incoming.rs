//! [`Incoming`]: a client's connection attempt, for the server application to accept,
//! refuse, retry or ignore (quinn's `Incoming`).

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use mpquic_proto::ConnectionHandle;

use crate::connection::{ConnRef, Connecting, Connection, ConnectionError};
use crate::state::{Attempt, AttemptMeta, Shared};

/// A client's first Initial packet, received by a server endpoint and waiting for the
/// application's decision ([`crate::Endpoint::accept`]).
///
/// Nothing is created for the client until [`Incoming::accept`]: only its Initial (whose
/// packet protection verified) is kept, and pending attempts count against the server's
/// `max_handshakes`. The server configuration's limits and Retry policy are applied before an
/// attempt is handed out. Dropping an `Incoming` refuses it.
///
/// Awaiting an `Incoming` accepts it and waits for the connection (`endpoint.accept().await?.await?`).
///
/// With [`crate::Endpoint::set_accept_all`] the endpoint has already accepted the attempt (its
/// handshake is under way): [`Incoming::accept`] hands the connection over,
/// [`Incoming::refuse`], [`Incoming::ignore`] and dropping close it with CONNECTION_REFUSED,
/// and [`Incoming::retry`] is not possible.
#[derive(Debug)]
pub struct Incoming {
    shared: Arc<Shared>,
    inner: Option<Inner>,
}

#[derive(Debug)]
enum Inner {
    /// Boxed: a client's Initial and its metadata are a few hundred bytes.
    Pending(Box<mpquic_proto::Incoming>),
    /// Accepted by the driver; this holds one reference to the connection.
    Accepted {
        handle: ConnectionHandle,
        meta: AttemptMeta,
    },
}

/// Why [`Incoming::retry`] was not possible.
#[derive(Debug, thiserror::Error)]
#[error("the client's address is already validated: it cannot be sent another Retry")]
pub struct RetryError(Incoming);

impl RetryError {
    /// The attempt, to accept, refuse or ignore instead.
    pub fn into_incoming(self) -> Incoming {
        self.0
    }
}

impl Incoming {
    pub(crate) fn new(shared: Arc<Shared>, attempt: Attempt) -> Self {
        let inner = match attempt {
            Attempt::Pending(incoming) => Inner::Pending(incoming),
            Attempt::Accepted { handle, meta } => Inner::Accepted { handle, meta },
        };
        Self {
            shared,
            inner: Some(inner),
        }
    }

    fn meta(&self) -> AttemptMeta {
        match self
            .inner
            .as_ref()
            .expect("an Incoming is decided only once")
        {
            Inner::Pending(incoming) => AttemptMeta::of(incoming),
            Inner::Accepted { meta, .. } => *meta,
        }
    }

    /// The client's address.
    pub fn remote_address(&self) -> SocketAddr {
        self.meta().remote
    }

    /// Our address the attempt arrived on.
    pub fn local_address(&self) -> SocketAddr {
        self.meta().local
    }

    /// Whether the client proved it receives at its address: its Initial carried a valid
    /// token from our Retry or from a NEW_TOKEN frame of an earlier connection (RFC 9000
    /// §8.1.2–8.1.3).
    pub fn remote_address_validated(&self) -> bool {
        self.meta().validated
    }

    /// Whether [`Incoming::retry`] is possible: the address is not validated yet, and the
    /// endpoint did not accept the attempt already ([`crate::Endpoint::set_accept_all`]).
    pub fn may_retry(&self) -> bool {
        matches!(&self.inner, Some(Inner::Pending(incoming)) if incoming.may_retry())
    }

    /// Create the connection; the [`Connecting`] resolves once the handshake completed (or,
    /// for a client whose 0-RTT data was accepted, as soon as that is known, so that its
    /// 0-RTT request is answered in 0.5-RTT data).
    pub fn accept(mut self) -> Result<Connecting, ConnectionError> {
        let incoming = match self.inner.take().expect("decided once") {
            Inner::Pending(incoming) => incoming,
            Inner::Accepted { handle, .. } => return Ok(self.connecting(handle)),
        };
        let now = self.shared.now();
        let (handle, timeout) = {
            let mut st = self.shared.lock();
            if let Some(e) = st.stopped.clone() {
                return Err(e);
            }
            let timeout = st
                .proto
                .server_config()
                .map(|c| c.transport.idle_timeout)
                .unwrap_or_default();
            let handle = st
                .accept_incoming(now, *incoming)
                .map_err(|e| ConnectionError::AcceptFailed(e.to_string()))?;
            (handle, timeout)
        };
        self.shared.wake_driver();
        Ok(Connecting::new(
            ConnRef::adopt(self.shared.clone(), handle),
            timeout,
        ))
    }

    /// The [`Connecting`] of a connection the driver accepted (taking over our reference);
    /// its handshake timeout counts from now.
    fn connecting(&self, handle: ConnectionHandle) -> Connecting {
        let timeout = self
            .shared
            .lock()
            .proto
            .server_config()
            .map(|c| c.transport.idle_timeout)
            .unwrap_or_default();
        Connecting::new(ConnRef::adopt(self.shared.clone(), handle), timeout)
    }

    /// Refuse the attempt: the client gets CONNECTION_REFUSED at once (RFC 9000 §20.1).
    pub fn refuse(mut self) {
        self.refuse_now();
    }

    /// Ask the client to prove its address with a Retry packet (RFC 9000 §8.1.2): it comes
    /// back as a new [`Incoming`] whose [`Incoming::remote_address_validated`] is true. Fails
    /// (giving the attempt back) when the address is already validated.
    pub fn retry(mut self) -> Result<(), RetryError> {
        let incoming = match self.inner.take().expect("decided once") {
            Inner::Pending(incoming) => incoming,
            accepted @ Inner::Accepted { .. } => {
                self.inner = Some(accepted);
                return Err(RetryError(self));
            }
        };
        let now = self.shared.now();
        let result = self.shared.lock().proto.retry_incoming(now, *incoming);
        match result {
            Ok(()) => {
                self.shared.wake_driver();
                Ok(())
            }
            Err(mpquic_proto::RetryError(incoming)) => {
                self.inner = Some(Inner::Pending(incoming));
                Err(RetryError(self))
            }
        }
    }

    /// Drop the attempt without an answer (the client retransmits or times out). An attempt
    /// the endpoint already accepted has been answered: it is refused instead.
    pub fn ignore(mut self) {
        match self.inner.take() {
            Some(Inner::Pending(incoming)) => self.shared.lock().proto.ignore_incoming(*incoming),
            accepted => {
                self.inner = accepted;
                self.refuse_now();
            }
        }
    }

    fn refuse_now(&mut self) {
        let Some(inner) = self.inner.take() else {
            return;
        };
        let now = self.shared.now();
        {
            let mut st = self.shared.lock();
            match inner {
                Inner::Pending(incoming) => st.proto.refuse_incoming(*incoming),
                Inner::Accepted { handle, .. } => {
                    st.proto.refuse_connection(now, handle);
                    st.release(handle);
                }
            }
        }
        self.shared.wake_driver();
    }
}

impl Drop for Incoming {
    fn drop(&mut self) {
        self.refuse_now();
    }
}

impl IntoFuture for Incoming {
    type Output = Result<Connection, ConnectionError>;
    type IntoFuture = Pin<Box<dyn Future<Output = Self::Output> + Send>>;

    /// Accept the attempt and wait for the connection.
    fn into_future(self) -> Self::IntoFuture {
        Box::pin(async move { self.accept()?.await })
    }
}
