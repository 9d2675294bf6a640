//! [`Endpoint`]: UDP sockets plus the sans-IO endpoint, driven by a background task.

use std::future::poll_fn;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::Poll;

use bytes::Bytes;
use mpquic_proto::EndpointConfig;
use rand::rngs::OsRng;
use rand::RngCore;

use crate::connection::{ConnRef, Connecting, ConnectionError};
use crate::driver::{self, BoundSocket};
use crate::incoming::Incoming;
use crate::state::{ConnState, Shared, State};
use crate::{ClientConfig, ServerConfig};

/// Why [`Endpoint::connect`] could not start a connection.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConnectError {
    /// [`Endpoint::connect`] without [`Endpoint::set_default_client_config`].
    #[error("no default client configuration: call Endpoint::set_default_client_config or use connect_with")]
    NoDefaultClientConfig,
    /// No bound socket has the address family of the remote address (or the given local one).
    #[error("no local socket can reach {0} (bind an address of the same family)")]
    NoSocket(SocketAddr),
    /// The core refused the configuration or the server name.
    #[error(transparent)]
    Proto(#[from] mpquic_proto::ConnectError),
    /// The endpoint was closed or its driver stopped.
    #[error("the endpoint is closed")]
    EndpointClosed,
    /// [`Endpoint::connect_racing`] without any (local, remote) pair.
    #[error("no (local, remote) pair to race the handshake over")]
    NoCandidates,
}

/// A QUIC endpoint: one or more bound UDP sockets and the connections that use them.
///
/// Cloning gives another handle to the same endpoint. The driver task keeps running while a
/// handle or a connection is alive; when the last handle is dropped, connections nobody holds
/// are closed and the task stops once every connection has drained.
#[derive(Debug)]
pub struct Endpoint {
    shared: Arc<Shared>,
}

impl Endpoint {
    /// A client endpoint bound to every address of `bind` (one socket each; port 0 picks a free
    /// port). The first socket of the remote's address family carries new connections; the
    /// others are available to `Connection::open_path`.
    ///
    /// Must be called within a tokio runtime.
    pub fn client(bind: &[SocketAddr]) -> io::Result<Self> {
        Self::new(bind, None)
    }

    /// A server endpoint accepting connections on every address of `bind`.
    ///
    /// Must be called within a tokio runtime.
    pub fn server(config: ServerConfig, bind: &[SocketAddr]) -> io::Result<Self> {
        Self::new(bind, Some(config))
    }

    /// A server endpoint whose endpoint-wide settings are `endpoint`: an operator's
    /// stateless-reset key ([`EndpointConfig::with_reset_key`]) lets a restarted server reset
    /// the connections of its previous life instead of leaving their clients to time out.
    ///
    /// Must be called within a tokio runtime.
    pub fn server_with_endpoint_config(
        config: ServerConfig,
        endpoint: EndpointConfig,
        bind: &[SocketAddr],
    ) -> io::Result<Self> {
        Self::with_endpoint_config(bind, Some(config), Some(endpoint))
    }

    /// An endpoint bound to `bind`, accepting connections if `server` is given.
    pub fn new(bind: &[SocketAddr], server: Option<ServerConfig>) -> io::Result<Self> {
        Self::with_endpoint_config(bind, server, None)
    }

    /// [`Endpoint::new`] with endpoint-wide settings; `None` draws a random reset key.
    pub fn with_endpoint_config(
        bind: &[SocketAddr],
        server: Option<ServerConfig>,
        endpoint: Option<EndpointConfig>,
    ) -> io::Result<Self> {
        if bind.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "an endpoint needs at least one local address",
            ));
        }
        if tokio::runtime::Handle::try_current().is_err() {
            return Err(io::Error::other(
                "mpquic endpoints must be created within a tokio runtime",
            ));
        }
        // One readable refusal before any socket is bound (a client's configuration is checked
        // by `connect`).
        let invalid = |e: mpquic_proto::ConfigError| io::Error::new(io::ErrorKind::InvalidInput, e);
        if let Some(server) = &server {
            server.validate().map_err(invalid)?;
        }
        if let Some(endpoint) = &endpoint {
            endpoint.validate().map_err(invalid)?;
        }
        let mut sockets = Vec::with_capacity(bind.len());
        for addr in bind {
            let std_socket = bind_socket(*addr)
                .map_err(|e| io::Error::new(e.kind(), format!("cannot bind UDP {addr}: {e}")))?;
            sockets.push(BoundSocket::new(std_socket)?);
        }
        let locals: Vec<SocketAddr> = sockets.iter().map(|s| s.local).collect();
        let mut rng = OsRng;
        let mut seed = [0u8; 32];
        rng.fill_bytes(&mut seed);
        let config = Arc::new(endpoint.unwrap_or_else(|| EndpointConfig::new(&mut rng)));
        let mut proto = mpquic_proto::Endpoint::new(config, server.map(Arc::new), seed);
        // Every client attempt goes to the application as an `Incoming` (accept/refuse/retry).
        proto.set_incoming_decisions(true);
        proto.set_socket_mtu(driver::socket_mtu(&sockets));
        let shared = Arc::new(Shared::new(State::new(proto, locals)));
        driver::spawn(shared.clone(), sockets);
        Ok(Self { shared })
    }

    /// The local addresses of the bound sockets, in the order they were given.
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        self.shared.lock().locals.clone()
    }

    /// The first local address.
    pub fn local_addr(&self) -> SocketAddr {
        self.shared.lock().locals[0]
    }

    /// Set the configuration [`Endpoint::connect`] uses (quinn's
    /// `set_default_client_config`); it applies to every handle of this endpoint.
    pub fn set_default_client_config(&self, config: ClientConfig) {
        self.shared.lock().default_client_config = Some(config);
    }

    /// Start a connection to `remote` with the endpoint's default client configuration
    /// ([`Endpoint::set_default_client_config`]), from the first bound socket of the remote's
    /// address family. `server_name` is checked against the server's certificate (and sent as
    /// SNI).
    pub fn connect(
        &self,
        remote: SocketAddr,
        server_name: &str,
    ) -> Result<Connecting, ConnectError> {
        let config = self
            .shared
            .lock()
            .default_client_config
            .clone()
            .ok_or(ConnectError::NoDefaultClientConfig)?;
        self.connect_with(config, remote, server_name)
    }

    /// Start a connection to `remote` with `config`, from the first bound socket of the
    /// remote's address family.
    pub fn connect_with(
        &self,
        config: ClientConfig,
        remote: SocketAddr,
        server_name: &str,
    ) -> Result<Connecting, ConnectError> {
        let local = self
            .shared
            .lock()
            .locals
            .iter()
            .copied()
            .find(|l| l.is_ipv4() == remote.is_ipv4())
            .ok_or(ConnectError::NoSocket(remote))?;
        self.connect_from(local, remote, server_name, config)
    }

    /// Start a connection to `remote` from the bound socket whose address is `local`.
    pub fn connect_from(
        &self,
        local: SocketAddr,
        remote: SocketAddr,
        server_name: &str,
        config: ClientConfig,
    ) -> Result<Connecting, ConnectError> {
        let now = self.shared.now();
        let handle = {
            let mut st = self.shared.lock();
            if st.stopped.is_some() || st.closed {
                return Err(ConnectError::EndpointClosed);
            }
            if !st.locals.contains(&local) {
                return Err(ConnectError::NoSocket(local));
            }
            let handle = st.proto.connect(now, &config, local, remote, server_name)?;
            st.conns.insert(handle, Box::new(ConnState::new(1)));
            handle
        };
        self.shared.wake_driver();
        Ok(Connecting::new(
            ConnRef::adopt(self.shared.clone(), handle),
            config.transport.idle_timeout,
        ))
    }

    /// The next client connection attempt, for the application to accept, refuse, retry or
    /// ignore (quinn's `accept`); `None` once the endpoint is closed (or it is not a server).
    /// `endpoint.accept().await?.await` accepts it and waits for its handshake: serve each
    /// attempt in its own task so that one slow handshake does not hold up the others.
    pub async fn accept(&self) -> Option<Incoming> {
        poll_fn(|cx| {
            let mut st = self.shared.lock();
            if let Some(incoming) = st.incoming.pop_front() {
                drop(st);
                return Poll::Ready(Some(Incoming::new(self.shared.clone(), incoming)));
            }
            if st.closed || st.stopped.is_some() {
                return Poll::Ready(None);
            }
            st.register_accept(cx.waker());
            Poll::Pending
        })
        .await
    }

    /// Accept every client attempt that passes the server configuration's limits and Retry
    /// policy at once, in the endpoint's driver, instead of waiting for the application's
    /// decision (off by default). The server's first flight then leaves in the same round as
    /// the client's Initial arrived, saving two hand-offs between tasks on every handshake
    /// (what made handshakes slower when `Incoming` came in, docs/LOAD.md); the price is that a
    /// connection exists before the application sees the attempt. [`Endpoint::accept`] still
    /// gives every attempt: [`Incoming::accept`] hands its connection over, refusing (or
    /// ignoring, or dropping) it closes the connection with CONNECTION_REFUSED, and it cannot
    /// be retried (the configuration's Retry policy still applies before it is accepted).
    /// Applies to attempts arriving from now on.
    pub fn set_accept_all(&self, on: bool) {
        self.shared.lock().accept_all = on;
    }

    /// Replace the server configuration for connections accepted from now on (quinn's
    /// `set_server_config`), e.g. to advertise an address once its port is known
    /// ([`ServerConfig::set_preferred_address`]: the endpoint should be bound to it too).
    /// Refused if the configuration is invalid or the endpoint is closed.
    pub fn set_server_config(&self, config: ServerConfig) -> io::Result<()> {
        config
            .validate()
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let mut st = self.shared.lock();
        if st.closed {
            return Err(io::Error::other("the endpoint is closed"));
        }
        st.proto.set_server_config(Some(Arc::new(config)));
        Ok(())
    }

    /// Close every connection with an application error code and stop accepting new ones.
    pub fn close(&self, code: u64, reason: &[u8]) {
        let now = self.shared.now();
        {
            let mut st = self.shared.lock();
            st.closed = true;
            st.proto.set_server_config(None);
            let handles: Vec<_> = st.conns.keys().copied().collect();
            for h in handles {
                if let Some(c) = st.proto.connection_mut(h) {
                    c.close(now, code, Bytes::copy_from_slice(reason));
                }
            }
            st.close_unreferenced(now);
        }
        self.shared.wake_driver();
    }

    /// Wait until every connection of this endpoint has drained (for instance after
    /// [`Endpoint::close`], so that the CONNECTION_CLOSE frames go out before the process exits).
    pub async fn wait_idle(&self) {
        poll_fn(|cx| {
            let mut st = self.shared.lock();
            if st.is_idle() || st.stopped.is_some() {
                return Poll::Ready(());
            }
            st.register_idle(cx.waker());
            Poll::Pending
        })
        .await;
    }

    /// What the endpoint counted: Retry packets sent, attempts refused, Initials dropped
    /// before any state was kept, invalid tokens, stateless resets.
    pub fn stats(&self) -> crate::EndpointStats {
        self.shared.lock().proto.stats()
    }

    /// Why the endpoint's driver stopped, if it has (for instance a fatal socket error).
    pub fn error(&self) -> Option<ConnectionError> {
        self.shared.lock().stopped.clone()
    }
}

/// Socket buffer size asked for (the kernel may grant less: `net.core.rmem_max`/`wmem_max`).
const SOCKET_BUFFER: usize = 4 << 20;

/// A non-blocking UDP socket bound to `addr` with large buffers, so that bursts of a fast
/// sender are not dropped by the receiving socket before the driver reads them.
fn bind_socket(addr: SocketAddr) -> io::Result<std::net::UdpSocket> {
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )?;
    // Best effort: a smaller buffer only costs throughput.
    let _ = socket.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = socket.set_send_buffer_size(SOCKET_BUFFER);
    socket.bind(&addr.into())?;
    socket.set_nonblocking(true)?;
    Ok(socket.into())
}

impl Clone for Endpoint {
    fn clone(&self) -> Self {
        self.shared.lock().endpoint_refs += 1;
        Self {
            shared: self.shared.clone(),
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let now = self.shared.now();
        {
            let mut st = self.shared.lock();
            st.endpoint_refs -= 1;
            if st.endpoint_refs == 0 {
                st.close_unreferenced(now);
            }
        }
        self.shared.wake_driver();
    }
}
