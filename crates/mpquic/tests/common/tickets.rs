//! A client session store that says when a ticket arrived, so a test waits for the server's
//! NewSessionTicket (RFC 8446 §4.6.1) instead of sleeping for a guessed time: a slow peer
//! process (aioquic on a loaded machine) can send its ticket later than any fixed pause.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use rustls::client::{ClientSessionStore, Tls12ClientSessionValue, Tls13ClientSessionValue};
use rustls::pki_types::ServerName;
use rustls::NamedGroup;
use tokio::sync::Notify;

use super::TEST_TIMEOUT;

/// rustls' in-memory store, counting the TLS 1.3 tickets put into it.
#[derive(Debug)]
pub struct WatchedStore {
    inner: Arc<dyn ClientSessionStore>,
    tickets: AtomicUsize,
    arrived: Notify,
}

impl WatchedStore {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            inner: mpquic::tls::memory_session_store(),
            tickets: AtomicUsize::new(0),
            arrived: Notify::new(),
        })
    }

    /// Tickets stored so far.
    pub fn tickets(&self) -> usize {
        self.tickets.load(Ordering::SeqCst)
    }

    /// Waits until at least `count` tickets have been stored; panics after [`TEST_TIMEOUT`].
    pub async fn wait_for_tickets(&self, count: usize) {
        let wait = async {
            loop {
                let arrived = self.arrived.notified();
                if self.tickets() >= count {
                    return;
                }
                arrived.await;
            }
        };
        if tokio::time::timeout(TEST_TIMEOUT, wait).await.is_err() {
            panic!(
                "{} of {count} session tickets after {TEST_TIMEOUT:?}",
                self.tickets()
            );
        }
    }
}

impl ClientSessionStore for WatchedStore {
    fn set_kx_hint(&self, server_name: ServerName<'static>, group: NamedGroup) {
        self.inner.set_kx_hint(server_name, group);
    }

    fn kx_hint(&self, server_name: &ServerName<'_>) -> Option<NamedGroup> {
        self.inner.kx_hint(server_name)
    }

    fn set_tls12_session(&self, server_name: ServerName<'static>, value: Tls12ClientSessionValue) {
        self.inner.set_tls12_session(server_name, value);
    }

    fn tls12_session(&self, server_name: &ServerName<'_>) -> Option<Tls12ClientSessionValue> {
        self.inner.tls12_session(server_name)
    }

    fn remove_tls12_session(&self, server_name: &ServerName<'static>) {
        self.inner.remove_tls12_session(server_name);
    }

    fn insert_tls13_ticket(
        &self,
        server_name: ServerName<'static>,
        value: Tls13ClientSessionValue,
    ) {
        self.inner.insert_tls13_ticket(server_name, value);
        self.tickets.fetch_add(1, Ordering::SeqCst);
        self.arrived.notify_waiters();
    }

    fn take_tls13_ticket(
        &self,
        server_name: &ServerName<'static>,
    ) -> Option<Tls13ClientSessionValue> {
        self.inner.take_tls13_ticket(server_name)
    }
}
