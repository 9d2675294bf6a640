//! Shorthands for the core's configuration types ([`ClientConfig`], [`ServerConfig`]).

use std::sync::Arc;

use crate::{ClientConfig, ServerConfig, TransportConfig};

pub use mpquic_proto::{DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_HANDSHAKES};

/// A client configuration from a rustls configuration (TLS 1.3, with ALPN set; see
/// [`crate::tls::client_config`]) and transport settings. Connections made with it (or its
/// clones) keep NEW_TOKEN tokens and remember round-trip times for later connections from the
/// same local address to the same server address (RFC 9002 §6.2.2,
/// [`ClientConfig::with_rtt_memory`]; set `rtt_store` to `None` to start every connection
/// from `initial_rtt`).
pub fn client(tls: Arc<rustls::ClientConfig>, transport: TransportConfig) -> ClientConfig {
    ClientConfig::new(tls, Arc::new(transport)).with_rtt_memory()
}

/// A server configuration from a rustls configuration (see [`crate::tls::server_config`]) and
/// transport settings, accepting up to [`DEFAULT_MAX_CONNECTIONS`] connections, with Retry
/// under load and random token keys (see [`ServerConfig::new`]).
pub fn server(tls: Arc<rustls::ServerConfig>, transport: TransportConfig) -> ServerConfig {
    ServerConfig::new(tls, Arc::new(transport), &mut rand::rngs::OsRng)
}
