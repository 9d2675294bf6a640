//! 0-RTT in the runtime (RFC 9001 §4.6), in the style of quinn: [`Connecting::into_0rtt`] and
//! the [`ZeroRttAccepted`] future.
//!
//! A client configuration from [`crate::tls::client_config_0rtt`] keeps session tickets (and
//! the server's transport parameters rustls remembers with them, RFC 9000 §7.4.1) in a store
//! shared by every connection made with it. A later connection to the same server name
//! offers a ticket; if the ticket allows early data, `into_0rtt` returns the connection at
//! once and stream data written on it goes out in 0-RTT packets. When the handshake completes,
//! [`ZeroRttAccepted`] says whether the server accepted that data; if it did not, the core
//! has already queued it again for 1-RTT (RFC 9001 §4.6.2), so the application need not do
//! anything (unlike quinn, where streams opened in 0-RTT fail after a rejection).
//!
//! On the server, [`crate::Endpoint::accept`] hands out a connection whose client's 0-RTT was
//! accepted as soon as the ClientHello is processed, so the request is answered in 0.5-RTT.
//! 0-RTT data can be replayed by an attacker (RFC 9001 §9.2): the server side of this crate
//! only accepts it with rustls' single-use tickets (see `mpquic_proto::crypto::resumption`),
//! and applications should act only on idempotent requests before the handshake completes.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::connection::{ConnRef, Connecting, Connection};

impl Connecting {
    /// The connection now, before the handshake completes, if 0-RTT is possible: a session
    /// ticket allowing early data was offered. Data written on its streams goes out in 0-RTT
    /// packets within the limits remembered with the ticket (RFC 9000 §7.4.1). Gives `self`
    /// back when 0-RTT is not possible (no ticket, or early data not enabled); await it then.
    ///
    /// The handshake timeout of [`Connecting`] no longer applies; the idle timeout does.
    #[allow(clippy::result_large_err)]
    pub fn into_0rtt(mut self) -> Result<(Connection, ZeroRttAccepted), Connecting> {
        let possible = self.conn.as_ref().is_some_and(|c| {
            c.with(|conn, _| conn.is_zero_rtt_available())
                .unwrap_or(false)
        });
        if !possible {
            return Err(self);
        }
        let Some(conn) = self.conn.take() else {
            return Err(self);
        };
        let accepted = ZeroRttAccepted { conn: conn.clone() };
        Ok((Connection::new(conn), accepted))
    }
}

impl Connection {
    /// Whether the server accepted this connection's 0-RTT data: `None` while the handshake is
    /// in progress or when no 0-RTT was attempted (client) or accepted (server).
    pub fn zero_rtt_accepted(&self) -> Option<bool> {
        self.inner.with(|c, _| c.zero_rtt_accepted()).ok().flatten()
    }
}

/// Resolves when the handshake of a connection from [`Connecting::into_0rtt`] completes: true
/// if the server accepted the 0-RTT data, false if it rejected it (the data was then sent again
/// in 1-RTT) or the connection failed. quinn's `ZeroRttAccepted`.
#[derive(Debug)]
#[must_use = "futures do nothing unless polled"]
pub struct ZeroRttAccepted {
    conn: ConnRef,
}

impl Future for ZeroRttAccepted {
    type Output = bool;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let outcome = self.conn.with(|c, cs| {
            if cs.established {
                Some(c.zero_rtt_accepted() == Some(true))
            } else if cs.error.is_some() {
                Some(false)
            } else {
                cs.register_conn(cx.waker());
                None
            }
        });
        match outcome {
            Ok(Some(accepted)) => Poll::Ready(accepted),
            Ok(None) => Poll::Pending,
            Err(_) => Poll::Ready(false),
        }
    }
}
