//! HTTP/3 (RFC 9114) over mpquic, through the [`h3`] crate.
//!
//! - [`quic`] implements h3's QUIC traits ([`h3::quic::Connection`], [`h3::quic::OpenStreams`],
//!   [`h3::quic::SendStream`], [`h3::quic::RecvStream`], [`h3::quic::BidiStream`]) over
//!   [`mpquic::Connection`] and its streams, as `h3-quinn` does for quinn. HTTP/3 only sees
//!   streams: the paths of a multipath connection stay below it.
//! - [`server`] serves the files of a directory (`GET`, `HEAD`), [`client`] sends one `GET`.
//!
//! Limits: no server push (RFC 9114 §4.6), no CONNECT or extended CONNECT, no datagrams; QPACK
//! without a dynamic table (what the h3 crate implements).
//!
//! ```no_run
//! # async fn run() -> anyhow::Result<()> {
//! let tls = mpquic::tls::client_config(&[mpquic_h3::ALPN], mpquic::tls::ServerTrust::Insecure)?;
//! let config = mpquic::config::client(tls, mpquic::TransportConfig::default());
//! let endpoint = mpquic::Endpoint::client(&["127.0.0.1:0".parse()?])?;
//! let conn = endpoint.connect_with(config, "127.0.0.1:4433".parse()?, "localhost")?.await?;
//! let mut response = mpquic_h3::client::get(&conn, "https://localhost/index.html".parse()?).await?;
//! assert_eq!(response.status(), 200);
//! let body = response.read_to_end(1 << 30).await?;
//! # let _ = body;
//! # Ok(()) }
//! ```

#![warn(unreachable_pub, missing_docs)]

mod bidi;
pub mod client;
pub mod quic;
pub mod server;

pub use bidi::Bidi;
pub use quic::{BidiStream, Connection, OpenStreams, RecvStream, SendStream};

/// The versions of the HTTP types and of the h3 crate this crate's API uses.
pub use {h3, http};

/// The ALPN protocol name of HTTP/3 (RFC 9114 §3.2).
pub const ALPN: &[u8] = b"h3";
