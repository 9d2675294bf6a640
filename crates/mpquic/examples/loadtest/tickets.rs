//! The client's session-ticket store of `--tls resume`: rustls' in-memory cache, with counts
//! of the tickets received and of the ones taken for a resumption, and a way to wait for the
//! next ticket (a connection that closed before its ticket arrived would leave the next
//! handshake nothing to resume).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rustls::client::{ClientSessionMemoryCache, ClientSessionStore, Tls13ClientSessionValue};
use rustls::NamedGroup;
use rustls_pki_types::ServerName;
use tokio::sync::Notify;

/// Sessions kept (rustls keeps up to 8 tickets per server name).
const SESSIONS: usize = 16;

#[derive(Debug)]
pub struct TicketStore {
    inner: ClientSessionMemoryCache,
    received: AtomicUsize,
    taken: AtomicUsize,
    connections: AtomicUsize,
    arrived: Notify,
}

impl TicketStore {
    pub fn new() -> Self {
        Self {
            inner: ClientSessionMemoryCache::new(SESSIONS),
            received: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
            connections: AtomicUsize::new(0),
            arrived: Notify::new(),
        }
    }

    /// Tickets received so far.
    pub fn received(&self) -> usize {
        self.received.load(Ordering::Acquire)
    }

    /// Tickets taken for a resumption (handshakes that offered one).
    pub fn taken(&self) -> usize {
        self.taken.load(Ordering::Relaxed)
    }

    /// Count a completed handshake; returns how many there were, this one included.
    pub fn count_connection(&self) -> usize {
        self.connections.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Wait (at most `limit`) until more than `seen` tickets were received. Returns whether
    /// one was.
    pub async fn ticket_after(&self, seen: usize, limit: Duration) -> bool {
        let wait = async {
            loop {
                let notified = self.arrived.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                if self.received() > seen {
                    return;
                }
                notified.await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }
}

impl ClientSessionStore for TicketStore {
    fn set_kx_hint(&self, name: ServerName<'static>, group: NamedGroup) {
        self.inner.set_kx_hint(name, group)
    }

    fn kx_hint(&self, name: &ServerName<'_>) -> Option<NamedGroup> {
        self.inner.kx_hint(name)
    }

    fn set_tls12_session(
        &self,
        name: ServerName<'static>,
        value: rustls::client::Tls12ClientSessionValue,
    ) {
        self.inner.set_tls12_session(name, value)
    }

    fn tls12_session(
        &self,
        name: &ServerName<'_>,
    ) -> Option<rustls::client::Tls12ClientSessionValue> {
        self.inner.tls12_session(name)
    }

    fn remove_tls12_session(&self, name: &ServerName<'static>) {
        self.inner.remove_tls12_session(name)
    }

    fn insert_tls13_ticket(&self, name: ServerName<'static>, value: Tls13ClientSessionValue) {
        self.inner.insert_tls13_ticket(name, value);
        self.received.fetch_add(1, Ordering::Release);
        self.arrived.notify_waiters();
    }

    fn take_tls13_ticket(&self, name: &ServerName<'static>) -> Option<Tls13ClientSessionValue> {
        let ticket = self.inner.take_tls13_ticket(name);
        if ticket.is_some() {
            self.taken.fetch_add(1, Ordering::Relaxed);
        }
        ticket
    }
}
