//! Shorthands for the core's configuration types ([`ClientConfig`], [`ServerConfig`]).

use std::sync::Arc;

use crate::{ClientConfig, ServerConfig, TransportConfig};

/// Connections a server keeps open at once unless told otherwise.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;

/// A client configuration from a rustls configuration (TLS 1.3, with ALPN set; see
/// [`crate::tls::client_config`]) and transport settings.
pub fn client(tls: Arc<rustls::ClientConfig>, transport: TransportConfig) -> ClientConfig {
    ClientConfig {
        tls,
        transport: Arc::new(transport),
    }
}

/// A server configuration from a rustls configuration (see [`crate::tls::server_config`]) and
/// transport settings, accepting up to [`DEFAULT_MAX_CONNECTIONS`] connections.
pub fn server(tls: Arc<rustls::ServerConfig>, transport: TransportConfig) -> ServerConfig {
    ServerConfig {
        tls,
        transport: Arc::new(transport),
        max_connections: DEFAULT_MAX_CONNECTIONS,
    }
}
