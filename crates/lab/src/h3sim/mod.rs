//! HTTP/3 over the sans-IO core, for the simulator: the `h3` crate's QUIC traits
//! ([`quic`]), a scoped access to the node's [`Endpoint`], and a tiny executor
//! ([`Tasks`]) that polls the h3 futures after every step of the node's application
//! ([`app`]).
//!
//! The h3 crate is written against async I/O: its futures poll stream objects, which
//! have to reach the connection. In the simulator the node owns the [`Endpoint`] and
//! lends it to the application for each step; the adapter objects hold only a
//! [`ConnectionHandle`] and stream IDs, and reach the endpoint through [`scope`], which
//! installs it in a thread-local slot for the duration of one executor run.
//!
//! Determinism: the executor polls futures in a fixed order with a no-op waker until a
//! whole round makes no progress (no transport call changed anything, no future
//! finished or was spawned); nothing depends on wall time, randomness, or hash order
//! (greasing is off on both sides).

pub mod app;
pub mod quic;

use std::cell::Cell;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::str::FromStr;
use std::task::{Context, Waker};

use mpquic_netsim::SimTime;
use mpquic_proto::{Connection, ConnectionHandle, Endpoint};
use serde::{Deserialize, Serialize};

/// ALPN of HTTP/3 runs (RFC 9114 §3.1).
pub const H3_ALPN: &[u8] = b"h3";

/// The application protocol of a requests workload.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Protocol {
    /// The lab's own stream protocol (see [`crate::workload`]): 8-byte size and FIN,
    /// answered by that many pattern bytes. ALPN `mpquic-sim`.
    #[default]
    Custom,
    /// HTTP/3 through the `h3` crate: `GET /bytes/<size>`, answered `200` with the
    /// pattern bytes. ALPN `h3`.
    H3,
}

impl Protocol {
    /// Whether this is the default protocol (not echoed in serialized scenarios, so that
    /// existing results stay byte-identical).
    pub fn is_custom(&self) -> bool {
        *self == Protocol::Custom
    }

    /// The name used in scenarios and reports (`custom`, `h3`).
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Custom => "custom",
            Protocol::H3 => "h3",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Protocol {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "custom" => Ok(Protocol::Custom),
            "h3" => Ok(Protocol::H3),
            other => Err(format!("unknown protocol `{other}`; expected custom or h3")),
        }
    }
}

/// What [`scope`] lends: the endpoint and the virtual time of the step.
#[derive(Clone, Copy)]
struct Lent {
    endpoint: *mut Endpoint,
    now: SimTime,
}

thread_local! {
    /// The endpoint lent by the innermost [`scope`] and not currently taken by
    /// [`with_endpoint`].
    static LENT: Cell<Option<Lent>> = const { Cell::new(None) };
    /// Transport calls that changed something (see [`progress`]).
    static PROGRESS: Cell<u64> = const { Cell::new(0) };
}

/// Puts the slot back to what it was when dropped, also when unwinding.
struct Restore(Option<Lent>);

impl Drop for Restore {
    fn drop(&mut self) {
        LENT.set(self.0);
    }
}

/// Runs `f` with `endpoint` reachable by the adapter objects (`with_endpoint`) at
/// virtual time `now`.
///
/// Soundness: `scope` holds the exclusive borrow of `endpoint` for the whole call, so
/// nothing outside `f` can touch the endpoint meanwhile, and `f` itself cannot hold a
/// reference into it. Inside, `with_endpoint` takes the pointer out of the slot while
/// it hands out its `&mut Endpoint`, so at most one mutable reference exists at any
/// time (a nested call finds the slot empty). The slot is restored when `scope` returns
/// or unwinds, so the pointer never outlives the borrow.
pub fn scope<R>(endpoint: &mut Endpoint, now: SimTime, f: impl FnOnce() -> R) -> R {
    let lent = Lent {
        endpoint: std::ptr::from_mut(endpoint),
        now,
    };
    let _restore = Restore(LENT.replace(Some(lent)));
    f()
}

/// Calls `f` with the endpoint lent by the enclosing [`scope`] and its time; `None`
/// outside a scope (or when nested inside another `with_endpoint`).
fn with_endpoint<R>(f: impl FnOnce(&mut Endpoint, SimTime) -> R) -> Option<R> {
    let lent = LENT.take()?;
    let _restore = Restore(Some(lent));
    // SAFETY: the pointer comes from the `&mut Endpoint` that the enclosing `scope`
    // borrows for longer than this call, and it was taken out of the slot, so this is
    // the only reference derived from it until `_restore` puts it back (see `scope`).
    let endpoint = unsafe { &mut *lent.endpoint };
    Some(f(endpoint, lent.now))
}

/// Why the adapter could not reach a connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unreachable {
    /// Called outside [`scope`] (for example while h3 objects are dropped).
    NoScope,
    /// The endpoint no longer has the connection (it drained and was removed).
    Gone,
}

/// Calls `f` on connection `handle` of the lent endpoint, then lets the endpoint catch
/// up on what the call changed.
pub(crate) fn with_conn<R>(
    handle: ConnectionHandle,
    f: impl FnOnce(&mut Connection, SimTime) -> R,
) -> Result<R, Unreachable> {
    with_endpoint(|endpoint, now| {
        let conn = endpoint.connection_mut(handle).ok_or(Unreachable::Gone)?;
        let r = f(conn, now);
        endpoint.after_connection_call(handle);
        Ok(r)
    })
    .unwrap_or(Err(Unreachable::NoScope))
}

/// Notes that a transport call changed something, so that the executor polls again.
pub(crate) fn progressed() {
    PROGRESS.set(PROGRESS.get().wrapping_add(1));
}

fn progress() -> u64 {
    PROGRESS.get()
}

/// A future the executor polls (single-threaded: h3's objects over this adapter are
/// not `Send`, and need not be).
pub type Task = Pin<Box<dyn Future<Output = ()>>>;

/// Rounds of one [`Tasks::run`] at most: a safety net against a future that reports
/// progress forever; real runs settle within a few rounds.
const MAX_ROUNDS: usize = 10_000;

/// The executor: futures polled in insertion order with a no-op waker.
#[derive(Default)]
pub struct Tasks {
    tasks: Vec<Task>,
}

impl fmt::Debug for Tasks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tasks")
            .field("pending", &self.tasks.len())
            .finish()
    }
}

impl Tasks {
    /// Adds a future, first polled at the next [`Tasks::run`].
    pub fn spawn(&mut self, task: impl Future<Output = ()> + 'static) {
        self.tasks.push(Box::pin(task));
    }

    /// Futures not finished yet.
    pub fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Whether every future finished.
    pub fn is_empty(&self) -> bool {
        self.tasks.is_empty()
    }

    /// Drops every future (inside a [`scope`], so that drops reach the transport).
    pub fn clear(&mut self) {
        self.tasks.clear();
    }

    /// Polls every future until a round changes nothing. `spawned` is called after each
    /// round and returns futures the finished round asked to start (server handlers).
    /// Must run inside `scope`. Returns false if it gave up after `MAX_ROUNDS`.
    pub fn run(&mut self, mut spawned: impl FnMut() -> Vec<Task>) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        for _ in 0..MAX_ROUNDS {
            let before = (progress(), self.tasks.len());
            self.tasks
                .retain_mut(|t| t.as_mut().poll(&mut cx).is_pending());
            let new = spawned();
            let changed = !new.is_empty() || before != (progress(), self.tasks.len());
            self.tasks.extend(new);
            if !changed {
                return true;
            }
        }
        false
    }
}
