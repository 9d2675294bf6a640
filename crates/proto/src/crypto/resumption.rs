//! rustls settings for TLS session resumption and 0-RTT in QUIC (RFC 9001 §4.6).
//!
//! **Client.** Tickets live behind rustls' [`ClientSessionStore`] trait (keyed by server name;
//! [`memory_session_store`] is rustls' in-memory cache). rustls stores the server's transport
//! parameters with each ticket (`Tls13ClientSessionValue::quic_params`), which are the
//! "remembered" parameters of RFC 9000 §7.4.1 that the connection applies to its 0-RTT data
//! (`connection/zero_rtt.rs`). rustls 0.23 offers no way to serialize a
//! `Tls13ClientSessionValue` or to build one from bytes (its constructor and the ticket secret
//! are crate-private), so tickets cannot outlive the process: a store is shared by the
//! connections of one process only.
//!
//! **Server.** [`server_allow_0rtt`] sets `max_early_data_size` to 0xffffffff, the only
//! non-zero value QUIC allows (RFC 9001 §4.6.1), and issues tickets. rustls accepts early data
//! only with stateful resumption (no `ticketer`): sessions sit in `session_storage` (by
//! default rustls' `ServerSessionMemoryCache` of 256 sessions) and a TLS 1.3 resumption
//! *takes* its session out. That makes every ticket single-use, the anti-replay defence of
//! RFC 8446 §8.1 (RFC 9001 §9.2): a replayed ClientHello finds no session and falls back to a
//! full handshake without early data. The protection covers one server process (the cache is
//! in memory); a cluster of servers would need a shared single-use store. Applications should
//! still only act on idempotent requests received in 0-RTT (RFC 8446 §8, RFC 9001 §9.2).

use std::sync::Arc;

use rustls::client::{ClientSessionMemoryCache, ClientSessionStore, Resumption};

/// Sessions the default client store keeps (rustls' own default size).
pub const DEFAULT_SESSION_CACHE_SIZE: usize = 256;

/// TLS 1.3 tickets the server sends after each handshake (rustls' default).
pub const TICKETS_PER_CONNECTION: usize = 2;

/// rustls' in-memory client session cache, keyed by server name.
pub fn memory_session_store() -> Arc<dyn ClientSessionStore> {
    Arc::new(ClientSessionMemoryCache::new(DEFAULT_SESSION_CACHE_SIZE))
}

/// Client: resume sessions from `store` and offer 0-RTT when a ticket allows it
/// (RFC 9001 §4.6.1).
pub fn client_enable_0rtt(config: &mut rustls::ClientConfig, store: Arc<dyn ClientSessionStore>) {
    config.resumption = Resumption::store(store);
    config.enable_early_data = true;
}

/// Server: issue tickets and accept 0-RTT on resumption (see the module documentation for
/// the anti-replay choice). Leaves `session_storage` as configured (stateful by default);
/// rustls refuses early data when a `ticketer` is enabled.
pub fn server_allow_0rtt(config: &mut rustls::ServerConfig) {
    // RFC 9001 §4.6.1: "servers MUST NOT send the early_data extension with a
    // max_early_data_size field set to any value other than 0xffffffff".
    config.max_early_data_size = u32::MAX;
    if config.send_tls13_tickets == 0 {
        config.send_tls13_tickets = TICKETS_PER_CONNECTION;
    }
}
