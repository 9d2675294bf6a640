//! Tickets bound to the limits they were issued under (RFC 9000 §7.4.1).
//!
//! A server that accepts 0-RTT "MUST NOT set values ... smaller than the remembered values" of
//! the transport parameters that limit 0-RTT data, and "MUST reject 0-RTT data if the restored
//! values for transport parameters cannot be supported". rustls' QUIC server cannot carry
//! application data in a ticket, and it accepts early data whenever the session store hands
//! a session back, so a configuration that lowers a limit (a new [`crate::ServerConfig`] with
//! the same rustls configuration, or a server restarted with a shared store) would accept 0-RTT
//! the client must then close over. [`LimitBoundStore`] keeps with each session the limits of
//! the configuration that issued it and hands it back only to a configuration whose limits
//! are all at least those; otherwise the client gets a full handshake (no resumption, so no
//! 0-RTT: the early data goes again in 1-RTT) rather than a broken promise.

use std::sync::Arc;

use rustls::server::StoresServerSessions;

use crate::connection::REMEMBERED_LIMITS;

/// Bytes of the limits kept in front of each stored session.
const PREFIX: usize = 8 * REMEMBERED_LIMITS;

/// A session store that binds each session to the limits it was issued under.
#[derive(Debug)]
pub(crate) struct LimitBoundStore {
    inner: Arc<dyn StoresServerSessions>,
    limits: [u64; REMEMBERED_LIMITS],
}

impl LimitBoundStore {
    /// The session in `stored` if it was issued under limits all at most ours.
    fn admit(&self, stored: Vec<u8>) -> Option<Vec<u8>> {
        if stored.len() < PREFIX {
            return None;
        }
        let issued = stored[..PREFIX]
            .chunks_exact(8)
            .map(|c| u64::from_be_bytes(c.try_into().expect("8 bytes")));
        if issued.zip(self.limits).any(|(then, now)| now < then) {
            return None;
        }
        Some(stored[PREFIX..].to_vec())
    }
}

impl StoresServerSessions for LimitBoundStore {
    fn put(&self, key: Vec<u8>, value: Vec<u8>) -> bool {
        let mut stored = Vec::with_capacity(PREFIX + value.len());
        for limit in self.limits {
            stored.extend_from_slice(&limit.to_be_bytes());
        }
        stored.extend_from_slice(&value);
        self.inner.put(key, stored)
    }

    fn get(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.admit(self.inner.get(key)?)
    }

    fn take(&self, key: &[u8]) -> Option<Vec<u8>> {
        self.admit(self.inner.take(key)?)
    }

    fn can_cache(&self) -> bool {
        self.inner.can_cache()
    }
}

/// `tls` with its session store bound to `limits`, when it accepts 0-RTT (otherwise a resumed
/// session carries no data the limits apply to, and `tls` is returned as it is).
pub(crate) fn bind_tickets_to_limits(
    tls: Arc<rustls::ServerConfig>,
    limits: [u64; REMEMBERED_LIMITS],
) -> Arc<rustls::ServerConfig> {
    if tls.max_early_data_size == 0 {
        return tls;
    }
    let mut bound = rustls::ServerConfig::clone(&tls);
    bound.session_storage = Arc::new(LimitBoundStore {
        inner: bound.session_storage.clone(),
        limits,
    });
    Arc::new(bound)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(
        limits: [u64; REMEMBERED_LIMITS],
        inner: &Arc<dyn StoresServerSessions>,
    ) -> LimitBoundStore {
        LimitBoundStore {
            inner: inner.clone(),
            limits,
        }
    }

    #[test]
    fn a_session_comes_back_only_under_limits_at_least_those_it_was_issued_under() {
        let inner: Arc<dyn StoresServerSessions> = rustls::server::ServerSessionMemoryCache::new(8);
        let issued = [10; REMEMBERED_LIMITS];
        let (same, larger) = (
            store(issued, &inner),
            store([11; REMEMBERED_LIMITS], &inner),
        );
        let mut lower = [10; REMEMBERED_LIMITS];
        lower[3] = 9;
        let lower = store(lower, &inner);
        for (i, reader) in [&same, &larger, &lower].into_iter().enumerate() {
            let key = vec![i as u8];
            assert!(same.put(key.clone(), b"session".to_vec()));
            let back = reader.take(&key);
            let expected = (i < 2).then(|| b"session".to_vec());
            assert_eq!(back, expected, "reader {i}");
            assert_eq!(inner.get(&key), None, "taken either way: single use");
        }
        // A value stored without the prefix (or cut short) is no session.
        inner.put(vec![9], vec![1, 2, 3]);
        assert_eq!(same.get(&[9]), None);
    }
}
