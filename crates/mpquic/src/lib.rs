//! mpquic: the tokio runtime of the mpquic multipath QUIC stack.
//!
//! The protocol lives in the sans-IO core [`mpquic_proto`]; this crate gives it sockets, a clock
//! and an async API in the style of quinn, with noq's path API:
//!
//! - [`Endpoint`] binds one or more UDP sockets (one per local address, so a client can open
//!   one path per local address, and a server can listen on IPv4 and IPv6 at once) and owns a
//!   driver task that receives datagrams, runs timers, sends what the core wants to send and
//!   wakes the application's tasks.
//! - [`Endpoint::connect`] (with [`Endpoint::set_default_client_config`]) or
//!   [`Endpoint::connect_with`] gives a [`Connecting`] future that resolves to a [`Connection`].
//! - [`Endpoint::accept`] gives each client attempt as an [`Incoming`], for the server to
//!   [accept](Incoming::accept), [refuse](Incoming::refuse) (CONNECTION_REFUSED),
//!   [retry](Incoming::retry) (a Retry packet validating the client's address, RFC 9000
//!   §8.1.2) or [ignore](Incoming::ignore); awaiting it accepts it. Until it is accepted a
//!   client has no connection state: only its verified Initial is kept, and pending attempts
//!   count against the server's `max_handshakes`.
//! - [`Connection`] opens and accepts streams ([`SendStream`] implements
//!   [`tokio::io::AsyncWrite`], [`RecvStream`] implements [`tokio::io::AsyncRead`]), sends and
//!   receives unreliable datagrams (RFC 9221, [`Connection::send_datagram`],
//!   [`Connection::read_datagram`]), reports statistics ([`ConnectionStats`], [`PathStats`]:
//!   times as [`std::time::Duration`] and [`tokio::time::Instant`]) and closes.
//! - Multipath (RFC 10069, or a single packet number space): [`Connection::open_path`] opens a
//!   path from a local address (or an IP alone) to a remote address with an initial
//!   [`PathStatus`]; its [`OpenPath`] future resolves to a [`Path`] once the path is validated
//!   (RFC 9000 §8.2), or fails when the remote does not answer within the validation timeout.
//!   [`Connection::path_events`] gives any number of [`PathEvents`] subscriptions (a broadcast:
//!   each sees every [`PathEvent`], a slow one gets [`PathEventsError::Lagged`]); status
//!   changes are reported whether we ([`StatusOrigin::Local`]) or the peer made them.
//! - [`Connecting::into_0rtt`] gives a resuming client its [`Connection`] before the handshake
//!   completes, so that its first request goes out in 0-RTT packets (RFC 9001 §4.6); see
//!   [`tls::client_config_0rtt`] and [`tls::server_config_0rtt`].
//! - [`tls`] builds rustls configurations (self-signed certificates, an "insecure" verifier for
//!   tests and `--insecure`), [`hq`] implements the HTTP/0.9 `hq-interop` file protocol.
//!
//! ```no_run
//! # async fn run() -> anyhow::Result<()> {
//! use std::net::IpAddr;
//! use mpquic::{Endpoint, PathStatus};
//! let tls = mpquic::tls::client_config(&[mpquic::hq::ALPN], mpquic::tls::ServerTrust::Insecure)?;
//! let endpoint = Endpoint::client(&["127.0.0.1:0".parse()?, "127.0.0.2:0".parse()?])?;
//! endpoint.set_default_client_config(mpquic::config::client(tls, Default::default()));
//! let server = "127.0.0.1:4433".parse()?;
//! let conn = endpoint.connect(server, "localhost")?.await?;
//! // A second path from 127.0.0.2 (whichever port its socket has), usable once this resolves.
//! let ip: IpAddr = "127.0.0.2".parse()?;
//! let path = conn.open_path(ip, server, PathStatus::Available).await?;
//! let mut body = mpquic::hq::request(&conn, "/index.html").await?;
//! let bytes = body.read_to_end(1 << 30).await?;
//! println!("{} bytes, second path rtt {:?}", bytes.len(), path.stats().map(|s| s.rtt));
//! # Ok(()) }
//! ```
//!
//! A server:
//!
//! ```no_run
//! # async fn run(server: mpquic::Endpoint) -> anyhow::Result<()> {
//! while let Some(incoming) = server.accept().await {
//!     if !incoming.remote_address_validated() {
//!         // Make the client prove its address first (one extra round trip).
//!         let _ = incoming.retry();
//!         continue;
//!     }
//!     tokio::spawn(async move {
//!         let conn = incoming.await?;
//!         let (mut send, mut recv) = conn.accept_bi().await?;
//!         let request = recv.read_to_end(1 << 16).await?;
//!         send.write_all(&request).await?;
//!         send.finish()?;
//!         anyhow::Ok(())
//!     });
//! }
//! # Ok(()) }
//! ```

#![warn(unreachable_pub, missing_docs)]

pub mod config;
mod connection;
mod driver;
mod endpoint;
pub mod hq;
mod incoming;
mod migration;
mod paths;
pub mod qlog;
mod race;
mod state;
mod stats;
mod streams;
pub mod tls;
mod wakeups;
mod zero_rtt;

pub use connection::{Connecting, Connection, ConnectionError, SendDatagramError, OPEN_PATH_WAIT};
pub use endpoint::{ConnectError, Endpoint};
pub use incoming::{Incoming, RetryError};
pub use paths::{
    LocalAddr, OpenPath, OpenPathError, Path, PathEvent, PathEvents, PathEventsError, PathStatus,
    StatusOrigin,
};
pub use race::RacingConnect;
pub use stats::{ConnectionCounters, ConnectionStats, PathStats};
pub use streams::{ReadError, ReadExactError, ReadToEndError, RecvStream, SendStream, WriteError};
pub use zero_rtt::ZeroRttAccepted;

// The core's types a user of the runtime meets; the core itself (`mpquic-proto`) is a separate
// crate for sans-IO users (the simulator) and is not re-exported whole.
pub use mpquic_proto::cc::CcAlgorithm;
pub use mpquic_proto::reinjection::ReinjectionMode;
pub use mpquic_proto::scheduler::SchedulerKind;
pub use mpquic_proto::wire::stream_id::{Dir, StreamId};
pub use mpquic_proto::ConnectionError as CloseReason;
pub use mpquic_proto::{
    AckConfig, AckFrequencyRequest, ClientConfig, ConfigError, DatagramStats, Design, EcnPathStats,
    EcnState, EndpointConfig, EndpointStats, MtuDiscoveryConfig, MtuPhase, MultipathMode,
    PathError, PathId, PathIdOutOfRange, RetryPolicy, ServerConfig, TokenKeys, TokenMemoryStore,
    TokenStore, TransportConfig, TransportError, Validation,
};
