//! The client's extra paths on real sockets, as in the simulated runs (`workload/paths.rs`):
//! one from each other interface, opened in order right after the handshake, and opened again
//! after a delay ([`reopen_delay_ms`]) when the path is abandoned.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use mpquic::{Connection, PathEvent, PathEventsError, PathId, PathStatus};

use super::app::EventLog;
use crate::workload::reopen_delay_ms;

/// How long to keep trying to open one extra path while the peer has not issued what it needs.
const PATH_OPEN_WAIT: Duration = Duration::from_secs(10);

/// A path opened from interface `iface` (1, 2, ...: index into the locals plus one).
#[derive(Debug, Clone, Copy)]
struct Opened {
    iface: usize,
    id: PathId,
    abandons: u32,
}

/// Opens a path from each of `locals` (interfaces 1, 2, ...) in order, back to back as the
/// simulated client does (so path IDs follow the interfaces; validation is not awaited),
/// retrying while the peer has not issued what a new path needs, and again after an abandon;
/// failures are logged. Runs until the connection ends.
pub(crate) fn open_paths(conn: &Connection, locals: &[SocketAddr], log: &EventLog) {
    let (conn, log, locals) = (conn.clone(), log.clone(), locals.to_vec());
    // Subscribed before the first path opens, so that none of its abandons is missed.
    let mut events = conn.path_events();
    tokio::spawn(async move {
        let mut opened = Vec::new();
        for (i, &local) in locals.iter().enumerate() {
            if let Some(id) = open_one(&conn, local, i + 1, &log).await {
                opened.push(Opened {
                    iface: i + 1,
                    id,
                    abandons: 0,
                });
            }
        }
        // (due, interface, abandons so far)
        let mut reopen: Vec<(Instant, usize, u32)> = Vec::new();
        loop {
            let next = reopen.iter().map(|r| r.0).min();
            let due = async {
                match next {
                    Some(t) => tokio::time::sleep_until(t.into()).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                event = events.recv() => match event {
                    Ok(PathEvent::Abandoned { id, .. }) => {
                        if let Some(pos) = opened.iter().position(|o| o.id == id) {
                            let o = opened.remove(pos);
                            let delay = Duration::from_millis(reopen_delay_ms(o.abandons + 1));
                            reopen.push((Instant::now() + delay, o.iface, o.abandons + 1));
                        }
                    }
                    Ok(_) | Err(PathEventsError::Lagged(_)) => {}
                    Err(_) => return,
                },
                () = due => {
                    let now = Instant::now();
                    while let Some(pos) = reopen.iter().position(|r| r.0 <= now) {
                        let (_, iface, abandons) = reopen.remove(pos);
                        if let Some(id) = open_one(&conn, locals[iface - 1], iface, &log).await {
                            opened.push(Opened { iface, id, abandons });
                        }
                    }
                }
            }
        }
    });
}

/// Opens one path from `local`, retrying for [`PATH_OPEN_WAIT`] while the peer has not issued
/// what it needs.
async fn open_one(
    conn: &Connection,
    local: SocketAddr,
    iface: usize,
    log: &EventLog,
) -> Option<PathId> {
    let deadline = Instant::now() + PATH_OPEN_WAIT;
    loop {
        match conn.try_open_path(local, None, PathStatus::Available) {
            Ok(id) => return Some(id),
            Err(e) if Instant::now() >= deadline => {
                log.push(format!("interface {iface}: cannot open a path: {e}"));
                return None;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}
