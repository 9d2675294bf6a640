//! A scheduled client migration (`transport.migrate_at`, RFC 9000 §9): at the given time the
//! client moves path 0 to another of its interfaces, as a device leaving one network for
//! another, and the server follows it.

use std::net::SocketAddr;

use mpquic_netsim::time::{ms, SimTime};
use mpquic_proto::{Connection, PathError, PathId, Timestamp};

use super::{log, ClientApp};

/// How long to wait before asking again when the core cannot move yet (handshake not
/// confirmed, no spare connection ID from the server).
const RETRY: SimTime = ms(5);
/// Attempts before the move is given up (logged).
const ATTEMPTS: u32 = 200;

/// A move of path 0 not made yet.
#[derive(Debug, Clone, Copy)]
pub(super) struct PendingMove {
    at: SimTime,
    to: SocketAddr,
    attempts: u32,
}

impl ClientApp {
    /// At `at`, move path 0 to the local address `to` (another interface of the client).
    pub fn set_migration(&mut self, at: SimTime, to: SocketAddr) {
        self.migration = Some(Box::new(PendingMove {
            at,
            to,
            attempts: 0,
        }));
    }

    /// When the pending move is due, if one is.
    pub(super) fn migration_due(&self) -> Option<SimTime> {
        self.migration.as_ref().map(|m| m.at)
    }

    /// Make the pending move once it is due; logged either way.
    pub(super) fn migrate_if_due(&mut self, now: SimTime, conn: &mut Connection) {
        let Some(m) = self.migration.as_deref_mut() else {
            return;
        };
        if now < m.at {
            return;
        }
        let to = m.to;
        match conn.migrate_path(Timestamp::from_nanos(now), PathId::ZERO, to) {
            Ok(()) => {
                self.migration = None;
                log(&mut self.events, now, format!("path 0 moves to {to}"));
            }
            Err(PathError::NotEstablished | PathError::NoConnectionId)
                if m.attempts + 1 < ATTEMPTS =>
            {
                m.attempts += 1;
                m.at = now + RETRY;
            }
            Err(e) => {
                self.migration = None;
                log(
                    &mut self.events,
                    now,
                    format!("path 0 cannot move to {to}: {e}"),
                );
            }
        }
    }
}
