//! The client's extra paths: one from each of its other interfaces, opened after the handshake
//! in interface order, and opened again when the path is abandoned.
//!
//! A path is abandoned (RFC 10069 §3.4) when its validation fails, when it stays idle, or when
//! the server gives it up. A device keeps the interface, and the network behind it may come
//! back (a Wi-Fi fade during validation, a cell outage): the path is opened again after a
//! delay that doubles with each abandon of that interface's paths, from 1 s up to 8 s
//! ([`reopen_delay_ms`]). Each try takes a new path ID; the server grants new ones as abandoned paths
//! close (`connection/path_ids.rs`).

use std::net::SocketAddr;

use mpquic_netsim::time::{ms, SimTime};
use mpquic_proto::{Connection, PathError, PathId, Timestamp};

use super::{log, LoggedEvent};

/// Delay before retrying to open a path that lacked a connection ID or path ID.
const PATH_RETRY: SimTime = ms(10);

/// Attempts to open one path every [`PATH_RETRY`] (2 s); after them, every
/// [`PATH_RETRY_SLOW`] for as long as the run lasts: the connection IDs for a new path may come
/// late over a lossy path, and a device keeps trying an interface it has.
const PATH_ATTEMPTS: u32 = 200;

/// Delay between attempts to open a path after the first [`PATH_ATTEMPTS`].
const PATH_RETRY_SLOW: SimTime = ms(500);

/// Delay before an interface whose path was abandoned gets a new path, the first time (ms).
const REOPEN_FIRST_MS: u64 = 1_000;

/// Longest delay before an interface whose path was abandoned gets a new path (ms).
const REOPEN_MAX_MS: u64 = 8_000;

/// Delay before an interface gets a new path after `abandons` of its paths were abandoned
/// (at least one): [`REOPEN_FIRST_MS`] doubled for each earlier abandon, at most
/// [`REOPEN_MAX_MS`]. Shared with the runs on real sockets (`real/paths.rs`).
pub(crate) fn reopen_delay_ms(abandons: u32) -> u64 {
    let doublings = abandons.saturating_sub(1).min(8);
    (REOPEN_FIRST_MS << doublings).min(REOPEN_MAX_MS)
}

/// One of the client's extra interfaces: index, local address, remote address.
pub(crate) type Interface = (usize, SocketAddr, SocketAddr);

/// A path to open.
#[derive(Debug, Clone, Copy)]
struct Pending {
    iface: Interface,
    /// Tries that found no connection ID or path ID yet.
    attempts: u32,
    /// Not before this time (a reopen after an abandon).
    not_before: Option<SimTime>,
    /// Paths from this interface abandoned so far.
    abandons: u32,
}

/// A path opened from an interface.
#[derive(Debug, Clone, Copy)]
struct Opened {
    iface: Interface,
    id: PathId,
    abandons: u32,
}

/// The extra paths of the current connection: to open, and open.
#[derive(Debug, Default)]
pub(crate) struct ExtraPaths {
    /// Paths still to open, in order: path IDs follow the interfaces.
    queue: Vec<Pending>,
    /// Do not try the queue before this time.
    retry_at: Option<SimTime>,
    opened: Vec<Opened>,
}

impl ExtraPaths {
    /// A path from each of `interfaces`, in order, for a new connection.
    pub(crate) fn new(interfaces: &[Interface]) -> Self {
        Self {
            queue: interfaces
                .iter()
                .map(|&iface| Pending {
                    iface,
                    attempts: 0,
                    not_before: None,
                    abandons: 0,
                })
                .collect(),
            retry_at: None,
            opened: Vec::new(),
        }
    }

    /// When the queue is to be tried again without network activity.
    pub(crate) fn next_wakeup(&self) -> Option<SimTime> {
        self.retry_at.filter(|_| !self.queue.is_empty())
    }

    /// Opens the paths that are due, front to back; stops at the first that must wait.
    pub(crate) fn open_due(
        &mut self,
        now: SimTime,
        conn: &mut Connection,
        events: &mut Vec<LoggedEvent>,
    ) {
        if self.queue.is_empty() || self.retry_at.is_some_and(|t| now < t) {
            return;
        }
        self.retry_at = None;
        while let Some(&next) = self.queue.first() {
            if let Some(t) = next.not_before.filter(|&t| now < t) {
                self.retry_at = Some(t);
                return;
            }
            let (iface, local, remote) = next.iface;
            match conn.open_path(Timestamp::from_nanos(now), local, remote) {
                Ok(id) => {
                    self.opened.push(Opened {
                        iface: next.iface,
                        id,
                        abandons: next.abandons,
                    });
                    self.queue.remove(0);
                }
                // CIDs for new path IDs (and, in SPNS, the path IDs themselves, by
                // MAX_PATH_ID) arrive just after the handshake: retry a bit later.
                Err(e @ (PathError::NoConnectionId | PathError::PathIdLimit)) => {
                    self.queue[0].attempts += 1;
                    let retry = if next.attempts + 1 < PATH_ATTEMPTS {
                        PATH_RETRY
                    } else {
                        if next.attempts + 1 == PATH_ATTEMPTS {
                            log(
                                events,
                                now,
                                format!("cannot open path from interface {iface} yet: {e}"),
                            );
                        }
                        PATH_RETRY_SLOW
                    };
                    self.retry_at = Some(now + retry);
                    return;
                }
                Err(e) => {
                    log(
                        events,
                        now,
                        format!("cannot open path from interface {iface}: {e}"),
                    );
                    self.queue.remove(0);
                }
            }
        }
    }

    /// Path `id` was abandoned: if it came from one of the interfaces, that interface gets a
    /// new path later.
    pub(crate) fn on_abandoned(&mut self, now: SimTime, id: PathId) {
        let Some(i) = self.opened.iter().position(|o| o.id == id) else {
            return;
        };
        let opened = self.opened.remove(i);
        let abandons = opened.abandons + 1;
        let not_before = now + ms(reopen_delay_ms(abandons));
        self.queue.push(Pending {
            iface: opened.iface,
            attempts: 0,
            not_before: Some(not_before),
            abandons,
        });
        if self.queue.len() == 1 {
            self.retry_at = Some(not_before);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iface(i: usize) -> Interface {
        let addr = |s: &str| s.parse::<SocketAddr>().expect("address");
        (i, addr("10.0.0.1:1"), addr("10.0.0.2:2"))
    }

    #[test]
    fn an_abandoned_path_is_reopened_later_with_a_growing_delay() {
        let mut paths = ExtraPaths::new(&[]);
        paths.opened.push(Opened {
            iface: iface(1),
            id: PathId::new(1),
            abandons: 0,
        });
        paths.on_abandoned(ms(100), PathId::new(2));
        assert_eq!(paths.next_wakeup(), None, "not one of ours");
        paths.on_abandoned(ms(100), PathId::new(1));
        assert_eq!(paths.next_wakeup(), Some(ms(1_100)));
        let mut delays = Vec::new();
        for round in 0..6u32 {
            let pending = paths.queue.remove(0);
            paths.opened.push(Opened {
                iface: pending.iface,
                id: PathId::new(2 + round),
                abandons: pending.abandons,
            });
            paths.on_abandoned(ms(0), PathId::new(2 + round));
            delays.push(paths.next_wakeup().expect("reopen due"));
        }
        assert_eq!(
            delays,
            [
                ms(2_000),
                ms(4_000),
                ms(8_000),
                ms(8_000),
                ms(8_000),
                ms(8_000)
            ]
        );
    }
}
