//! mpquic: the tokio runtime of the mpquic multipath QUIC stack.
//!
//! The protocol lives in the sans-IO core [`mpquic_proto`]; this crate gives it sockets, a clock
//! and an async API in the style of quinn:
//!
//! - [`Endpoint`] binds one or more UDP sockets (one per local address, so a client can open
//!   one path per local address) and owns a driver task that receives datagrams, runs timers,
//!   sends what the core wants to send and wakes the application's tasks.
//! - [`Endpoint::connect`] gives a [`Connecting`] future that resolves to a [`Connection`];
//!   [`Endpoint::accept`] gives the server's incoming connections once their handshake completed.
//! - [`Connection`] opens and accepts streams ([`SendStream`] implements
//!   [`tokio::io::AsyncWrite`], [`RecvStream`] implements [`tokio::io::AsyncRead`]), opens extra
//!   paths ([`Connection::open_path`]), sends and receives unreliable datagrams (RFC 9221,
//!   [`Connection::send_datagram`], [`Connection::read_datagram`]), reports statistics and
//!   closes.
//! - [`Connecting::into_0rtt`] gives a resuming client its [`Connection`] before the handshake
//!   completes, so that its first request goes out in 0-RTT packets (RFC 9001 §4.6); see
//!   [`tls::client_config_0rtt`] and [`tls::server_config_0rtt`].
//! - [`tls`] builds rustls configurations (self-signed certificates, an "insecure" verifier for
//!   tests and `--insecure`), [`hq`] implements the HTTP/0.9 `hq-interop` file protocol.
//!
//! ```no_run
//! # async fn run() -> anyhow::Result<()> {
//! use std::sync::Arc;
//! let tls = mpquic::tls::client_config(&[mpquic::hq::ALPN], mpquic::tls::ServerTrust::Insecure)?;
//! let config = mpquic::config::client(tls, mpquic::TransportConfig::default());
//! let endpoint = mpquic::Endpoint::client(&["127.0.0.1:0".parse()?])?;
//! let conn = endpoint.connect("127.0.0.1:4433".parse()?, "localhost", config)?.await?;
//! let mut body = mpquic::hq::request(&conn, "/index.html").await?;
//! let bytes = body.read_to_end(1 << 30).await?;
//! # let _ = (bytes, Arc::new(()));
//! # Ok(()) }
//! ```

pub mod config;
mod connection;
mod driver;
mod endpoint;
pub mod hq;
mod incoming;
mod paths;
pub mod qlog;
mod state;
mod stats;
mod streams;
pub mod tls;
mod zero_rtt;

pub use connection::{Connecting, Connection, ConnectionError, SendDatagramError, OPEN_PATH_WAIT};
pub use endpoint::{ConnectError, Endpoint};
pub use incoming::{Incoming, RetryError};
pub use paths::{
    LocalAddr, OpenPath, OpenPathError, Path, PathEvent, PathEvents, PathEventsError, PathStatus,
    StatusOrigin,
};
pub use stats::{ConnectionCounters, ConnectionStats, PathStats};
pub use streams::{ReadError, ReadToEndError, RecvStream, SendStream, WriteError};
pub use zero_rtt::ZeroRttAccepted;

pub use mpquic_proto as proto;
pub use mpquic_proto::cc::CcAlgorithm;
pub use mpquic_proto::path::Validation;
pub use mpquic_proto::scheduler::SchedulerKind;
pub use mpquic_proto::wire::stream_id::{Dir, StreamId};
pub use mpquic_proto::{
    ClientConfig, DatagramStats, Design, EndpointConfig, EndpointStats, MultipathMode, PathId,
    RetryPolicy, ServerConfig, TokenKeys, TokenMemoryStore, TokenStore, TransportConfig,
};
