//! State shared by an endpoint's driver task and the application's handles: the sans-IO
//! endpoint behind a mutex, and per connection the wakers of tasks waiting for it.
//!
//! Every application call locks [`Shared`], calls into the core and, if it changed what the
//! core wants to send, wakes the driver through [`Shared::wake_driver`]. The driver turns the
//! core's events into wake-ups of the registered wakers ([`State::process`]). Because both
//! sides hold the same lock, a task that found a stream blocked and registered its waker cannot
//! miss the event that unblocks it.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::task::Waker;

use mpquic_proto::StreamEvent;
use mpquic_proto::{
    ConnectionHandle, ConnectionStats, Event, PathEvent as CorePathEvent, PathId, PathStats,
    Timestamp,
};
use tokio::sync::{broadcast, Notify};
use tokio::time::Instant;

use crate::connection::ConnectionError;
use crate::paths::PathEvent;
use crate::{ClientConfig, Dir, StreamId};

/// Path events each subscriber of [`crate::Connection::path_events`] may fall behind by
/// before it gets [`crate::PathEventsError::Lagged`].
pub(crate) const PATH_EVENT_CAPACITY: usize = 128;

/// What the driver and the handles of one endpoint share.
#[derive(Debug)]
pub(crate) struct Shared {
    state: Mutex<State>,
    notify: Notify,
    epoch: Instant,
}

impl Shared {
    pub(crate) fn new(state: State) -> Self {
        Self {
            state: Mutex::new(state),
            notify: Notify::new(),
            epoch: Instant::now(),
        }
    }

    /// Lock the state. A panic while the lock was held (a bug in the core) does not make every
    /// later call panic too: the driver's supervisor marks the endpoint failed instead.
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The core's clock: nanoseconds since the endpoint was created.
    pub(crate) fn now(&self) -> Timestamp {
        self.timestamp(Instant::now())
    }

    pub(crate) fn timestamp(&self, at: Instant) -> Timestamp {
        let nanos = at.saturating_duration_since(self.epoch).as_nanos();
        Timestamp::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
    }

    /// The tokio instant of a core timestamp.
    pub(crate) fn instant(&self, t: Timestamp) -> Instant {
        self.epoch + std::time::Duration::from_nanos(t.as_nanos())
    }

    /// Tell the driver that the core may have something to send or a new timer.
    pub(crate) fn wake_driver(&self) {
        self.notify.notify_one();
    }

    /// Resolves when [`Shared::wake_driver`] was called (a call made while nobody waited counts).
    pub(crate) async fn driver_woken(&self) {
        self.notify.notified().await;
    }
}

/// The mutable state of an endpoint.
pub(crate) struct State {
    pub proto: mpquic_proto::Endpoint,
    /// Boxed: a `ConnState` is about 0.5 kB, and a map's spare slots (up to 7/8 of them after
    /// it grows) would hold that much each (issue 19: memory per idle connection).
    pub conns: HashMap<ConnectionHandle, Box<ConnState>>,
    /// Local addresses of the bound sockets.
    pub locals: Vec<SocketAddr>,
    /// Connection attempts not yet taken by [`crate::Endpoint::accept`].
    pub incoming: VecDeque<Attempt>,
    /// [`crate::Endpoint::set_accept_all`]: the driver accepts every attempt itself.
    pub accept_all: bool,
    /// Server connections accepted and not yet handed to their [`crate::Connecting`]: they
    /// become ready at handshake completion or when the client's 0-RTT is accepted.
    handshaking: HashSet<ConnectionHandle>,
    /// The configuration of [`crate::Endpoint::connect`].
    pub default_client_config: Option<ClientConfig>,
    accept_wakers: Vec<Waker>,
    idle_wakers: Vec<Waker>,
    /// Live [`crate::Endpoint`] handles; the driver stops when none is left and every
    /// connection has drained.
    pub endpoint_refs: usize,
    /// [`crate::Endpoint::close`] was called: no more connections are accepted.
    pub closed: bool,
    /// Why the driver stopped, once it has.
    pub stopped: Option<ConnectionError>,
    handles_scratch: Vec<ConnectionHandle>,
}

impl std::fmt::Debug for State {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("State")
            .field("locals", &self.locals)
            .field("conns", &self.conns.len())
            .finish_non_exhaustive()
    }
}

impl State {
    pub(crate) fn new(proto: mpquic_proto::Endpoint, locals: Vec<SocketAddr>) -> Self {
        Self {
            proto,
            conns: HashMap::new(),
            locals,
            incoming: VecDeque::new(),
            accept_all: false,
            handshaking: HashSet::new(),
            default_client_config: None,
            accept_wakers: Vec::new(),
            idle_wakers: Vec::new(),
            endpoint_refs: 1,
            closed: false,
            stopped: None,
            handles_scratch: Vec::new(),
        }
    }

    /// Queue the core's new connection attempts for [`crate::Endpoint::accept`]. With
    /// [`State::accept_all`] each is accepted here, in the driver's round, so that the
    /// server's first flight leaves in the same round as the client's Initial arrived instead
    /// of after two hand-offs between tasks (to the accepting task and back to the driver).
    pub(crate) fn take_attempts(&mut self, now: Timestamp) {
        let mut arrived = false;
        while let Some(incoming) = self.proto.poll_incoming() {
            if self.closed {
                self.proto.refuse_incoming(incoming);
                continue;
            }
            let attempt = if self.accept_all {
                let meta = AttemptMeta::of(&incoming);
                match self.accept_incoming(now, incoming) {
                    Ok(handle) => Attempt::Accepted { handle, meta },
                    // Refused by the connection limit, or an unusable Initial: the core
                    // answered (or dropped) it; nothing for the application.
                    Err(_) => continue,
                }
            } else {
                Attempt::Pending(Box::new(incoming))
            };
            self.incoming.push_back(attempt);
            arrived = true;
        }
        if arrived {
            wake_all(&mut self.accept_wakers);
        }
    }

    /// Turn the core's events into wake-ups and forget drained connections.
    pub(crate) fn process(&mut self) {
        // Only connections with activity since the last round can have new events.
        let mut handles = std::mem::take(&mut self.handles_scratch);
        handles.clear();
        self.proto.take_touched(&mut handles);
        for &h in &handles {
            self.process_connection(h);
        }
        self.handles_scratch = handles;
        if self.is_idle() {
            wake_all(&mut self.idle_wakers);
        }
    }

    fn process_connection(&mut self, h: ConnectionHandle) {
        let Some(cs) = self.conns.get_mut(&h) else {
            return;
        };
        let mut connected = false;
        while let Some(event) = self.proto.poll_event(h) {
            connected |= event == Event::Connected;
            cs.on_event(event);
        }
        let Some(conn) = self.proto.connection(h) else {
            return;
        };
        if conn.is_closed() && cs.error.is_none() {
            let error = conn.error().cloned().map_or(
                ConnectionError::Lost(mpquic_proto::ConnectionError::TimedOut),
                ConnectionError::Lost,
            );
            cs.fail(error);
        }
        let drained = conn.is_drained();
        if drained {
            cs.final_stats = Some(Box::new((conn.stats(), conn.path_stats())));
        }
        // A server connection whose client's 0-RTT was accepted is handed out before its
        // handshake completes (quinn's server-side `into_0rtt`), so that a request that came in
        // 0-RTT is answered in 0.5-RTT data (RFC 9001 §4.1.1, §5.7).
        let early = conn.side() == mpquic_proto::wire::stream_id::Side::Server
            && conn.zero_rtt_accepted() == Some(true);
        if (connected || early) && self.handshaking.remove(&h) {
            cs.ready = true;
            cs.wake_conn();
        }
        if cs.error.is_some() {
            self.handshaking.remove(&h);
        }
        if drained {
            self.proto.remove(h);
            cs.drained = true;
            cs.fail(ConnectionError::Lost(
                mpquic_proto::ConnectionError::TimedOut,
            ));
            if cs.refs == 0 {
                self.conns.remove(&h);
            }
        }
    }

    /// Whether no connection is left in the core (drained ones are removed from it as they
    /// drain), or the driver stopped and failed them all.
    pub(crate) fn is_idle(&self) -> bool {
        self.stopped.is_some() || self.proto.connection_count() == 0
    }

    /// Create the connection of an accepted attempt, referred to by one handle.
    pub(crate) fn accept_incoming(
        &mut self,
        now: Timestamp,
        incoming: mpquic_proto::Incoming,
    ) -> Result<ConnectionHandle, mpquic_proto::AcceptError> {
        let h = self.proto.accept_incoming(now, incoming)?;
        self.conns.insert(h, Box::new(ConnState::new(1)));
        self.handshaking.insert(h);
        Ok(h)
    }

    /// Give up one reference to a connection's runtime state, forgetting it once nothing
    /// refers to it and the core has forgotten the connection.
    pub(crate) fn release(&mut self, handle: ConnectionHandle) {
        if let Some(cs) = self.conns.get_mut(&handle) {
            cs.refs = cs.refs.saturating_sub(1);
            if cs.refs == 0 && cs.drained {
                self.conns.remove(&handle);
            }
        }
    }

    pub(crate) fn register_accept(&mut self, waker: &Waker) {
        register(&mut self.accept_wakers, waker);
    }

    pub(crate) fn register_idle(&mut self, waker: &Waker) {
        register(&mut self.idle_wakers, waker);
    }

    /// Close every connection no application handle refers to (unaccepted server
    /// connections), after the last endpoint handle was dropped or the endpoint was closed.
    pub(crate) fn close_unreferenced(&mut self, now: Timestamp) {
        for (&h, cs) in &self.conns {
            if cs.refs == 0 {
                if let Some(c) = self.proto.connection_mut(h) {
                    c.close(now, 0, bytes::Bytes::from_static(b"endpoint closed"));
                }
            }
        }
        for attempt in std::mem::take(&mut self.incoming) {
            match attempt {
                Attempt::Pending(incoming) => self.proto.refuse_incoming(*incoming),
                // Nobody will take it: close it like the connections nobody holds.
                Attempt::Accepted { handle, .. } => {
                    if let Some(c) = self.proto.connection_mut(handle) {
                        c.close(now, 0, bytes::Bytes::from_static(b"endpoint closed"));
                    }
                    self.release(handle);
                }
            }
        }
        self.conns.retain(|_, cs| !(cs.drained && cs.refs == 0));
        wake_all(&mut self.accept_wakers);
    }

    /// The driver stopped: fail every connection and wake everyone.
    pub(crate) fn on_driver_stopped(&mut self, error: ConnectionError) {
        self.stopped.get_or_insert(error.clone());
        for cs in self.conns.values_mut() {
            cs.drained = true;
            cs.fail(error.clone());
        }
        wake_all(&mut self.accept_wakers);
        wake_all(&mut self.idle_wakers);
    }
}

/// A connection attempt waiting for [`crate::Endpoint::accept`].
#[derive(Debug)]
pub(crate) enum Attempt {
    /// The core's attempt, for the application to decide on (boxed: a client's Initial and
    /// its metadata are a few hundred bytes).
    Pending(Box<mpquic_proto::Incoming>),
    /// Already accepted by the driver ([`State::accept_all`]): the connection exists and the
    /// queue holds one reference to it.
    Accepted {
        handle: ConnectionHandle,
        meta: AttemptMeta,
    },
}

/// What [`crate::Incoming`] tells about an attempt the driver accepted.
#[derive(Debug, Clone, Copy)]
pub(crate) struct AttemptMeta {
    pub remote: SocketAddr,
    pub local: SocketAddr,
    pub validated: bool,
}

impl AttemptMeta {
    pub(crate) fn of(incoming: &mpquic_proto::Incoming) -> Self {
        Self {
            remote: incoming.remote_address(),
            local: incoming.local_address(),
            validated: incoming.remote_address_validated(),
        }
    }
}

/// How a path's validation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathOutcome {
    Validated,
    Failed,
    Abandoned(u64),
}

/// What the runtime tracks of one connection besides the core's state.
#[derive(Debug)]
pub(crate) struct ConnState {
    /// Live application handles ([`crate::Connection`], streams, [`crate::Connecting`]).
    pub refs: usize,
    pub established: bool,
    /// Server side: handed to the application (handshake complete, or 0-RTT accepted).
    pub ready: bool,
    /// Set once the connection is closing, draining or gone.
    pub error: Option<ConnectionError>,
    /// The core forgot the connection (or the driver stopped).
    pub drained: bool,
    /// Statistics taken just before the core forgot the connection.
    pub final_stats: Option<Box<(ConnectionStats, Vec<PathStats>)>>,
    conn_wakers: Vec<Waker>,
    pub read_wakers: HashMap<StreamId, Waker>,
    pub write_wakers: HashMap<StreamId, Waker>,
    /// Streams with a live [`crate::SendStream`]: only their outcomes are recorded.
    pub send_streams: HashSet<StreamId>,
    /// Outcome of sending on a stream: `None` = all data acknowledged, `Some(code)` = stopped.
    pub send_outcome: HashMap<StreamId, Option<u64>>,
    pub finish_wakers: HashMap<StreamId, Waker>,
    accept_wakers: [Vec<Waker>; 2],
    open_wakers: [Vec<Waker>; 2],
    /// Path events to every subscriber ([`crate::Connection::path_events`]); made by the
    /// first subscription (a channel is 128 slots, and most connections never subscribe:
    /// making one per connection was a measurable part of a handshake), dropped when the
    /// connection ends, which ends the subscriptions once they read what was sent.
    path_events: Option<broadcast::Sender<PathEvent>>,
    /// How each path's validation ended (the first outcome wins), for [`crate::OpenPath`].
    pub path_outcomes: HashMap<PathId, PathOutcome>,
    /// Tasks waiting for a path's outcome ([`crate::OpenPath`]).
    path_wakers: Vec<Waker>,
    /// Tasks waiting for the next datagram of this connection (to retry an operation that
    /// waits for something the core has no event for, like connection IDs for a new path).
    rx_wakers: Vec<Waker>,
    /// Tasks in [`crate::Connection::read_datagram`] (DATAGRAM frames, RFC 9221).
    datagram_wakers: Vec<Waker>,
}

impl ConnState {
    pub(crate) fn new(refs: usize) -> Self {
        Self {
            refs,
            established: false,
            ready: false,
            error: None,
            drained: false,
            final_stats: None,
            conn_wakers: Vec::new(),
            read_wakers: HashMap::new(),
            write_wakers: HashMap::new(),
            send_streams: HashSet::new(),
            send_outcome: HashMap::new(),
            finish_wakers: HashMap::new(),
            accept_wakers: Default::default(),
            open_wakers: Default::default(),
            path_events: None,
            path_outcomes: HashMap::new(),
            path_wakers: Vec::new(),
            rx_wakers: Vec::new(),
            datagram_wakers: Vec::new(),
        }
    }

    /// A new subscription to the path events; `None` once the connection has ended.
    pub(crate) fn subscribe_path_events(&mut self) -> Option<broadcast::Receiver<PathEvent>> {
        if self.error.is_some() {
            return None;
        }
        let tx = self
            .path_events
            .get_or_insert_with(|| broadcast::channel(PATH_EVENT_CAPACITY).0);
        Some(tx.subscribe())
    }

    pub(crate) fn wake_conn(&mut self) {
        wake_all(&mut self.conn_wakers);
    }

    fn on_event(&mut self, event: Event) {
        match event {
            Event::Connected => {
                self.established = true;
                wake_all(&mut self.conn_wakers);
            }
            Event::ConnectionLost(e) => self.fail(ConnectionError::Lost(e)),
            Event::Stream(e) => self.on_stream_event(e),
            Event::Path(e) => {
                let outcome = match e {
                    CorePathEvent::Validated { id } => Some((id, PathOutcome::Validated)),
                    CorePathEvent::Failed { id } => Some((id, PathOutcome::Failed)),
                    CorePathEvent::Abandoned { id, error_code } => {
                        Some((id, PathOutcome::Abandoned(error_code)))
                    }
                    _ => None,
                };
                if let Some((id, outcome)) = outcome {
                    self.path_outcomes.entry(id).or_insert(outcome);
                }
                if let Some(tx) = &self.path_events {
                    // No subscriber is not an error: nobody asked for events.
                    let _ = tx.send(PathEvent::from(e));
                }
                wake_all(&mut self.path_wakers);
            }
            Event::DatagramReceived => wake_all(&mut self.datagram_wakers),
        }
    }

    fn on_stream_event(&mut self, event: StreamEvent) {
        match event {
            StreamEvent::Opened { dir } => wake_all(&mut self.accept_wakers[dir as usize]),
            StreamEvent::Available { dir } => wake_all(&mut self.open_wakers[dir as usize]),
            StreamEvent::Readable { id } => wake(self.read_wakers.remove(&id)),
            StreamEvent::Writable { id } => wake(self.write_wakers.remove(&id)),
            StreamEvent::Finished { id } => {
                if self.send_streams.contains(&id) {
                    self.send_outcome.insert(id, None);
                }
                wake(self.finish_wakers.remove(&id));
            }
            StreamEvent::Stopped { id, error_code } => {
                if self.send_streams.contains(&id) {
                    self.send_outcome.insert(id, Some(error_code));
                }
                wake(self.write_wakers.remove(&id));
                wake(self.finish_wakers.remove(&id));
            }
        }
    }

    /// Record why the connection ended (the first reason wins) and wake every waiting task.
    pub(crate) fn fail(&mut self, error: ConnectionError) {
        self.error.get_or_insert(error);
        self.path_events = None;
        wake_all(&mut self.conn_wakers);
        wake_all(&mut self.path_wakers);
        wake_all(&mut self.rx_wakers);
        wake_all(&mut self.datagram_wakers);
        for list in self
            .accept_wakers
            .iter_mut()
            .chain(self.open_wakers.iter_mut())
        {
            wake_all(list);
        }
        for map in [
            &mut self.read_wakers,
            &mut self.write_wakers,
            &mut self.finish_wakers,
        ] {
            for (_, w) in map.drain() {
                crate::wakeups::wake(w);
            }
        }
    }

    pub(crate) fn register_conn(&mut self, waker: &Waker) {
        register(&mut self.conn_wakers, waker);
    }

    pub(crate) fn register_accept(&mut self, dir: Dir, waker: &Waker) {
        register(&mut self.accept_wakers[dir as usize], waker);
    }

    pub(crate) fn register_open(&mut self, dir: Dir, waker: &Waker) {
        register(&mut self.open_wakers[dir as usize], waker);
    }

    pub(crate) fn register_path(&mut self, waker: &Waker) {
        register(&mut self.path_wakers, waker);
    }

    pub(crate) fn register_datagram(&mut self, waker: &Waker) {
        register(&mut self.datagram_wakers, waker);
    }

    pub(crate) fn register_rx(&mut self, waker: &Waker) {
        register(&mut self.rx_wakers, waker);
    }

    /// A datagram for this connection was processed.
    pub(crate) fn on_datagram(&mut self) {
        wake_all(&mut self.rx_wakers);
    }

    /// Forget the sending half of a stream (its handle was dropped).
    pub(crate) fn forget_send(&mut self, id: StreamId) {
        self.send_streams.remove(&id);
        self.write_wakers.remove(&id);
        self.finish_wakers.remove(&id);
        self.send_outcome.remove(&id);
    }
}

fn register(list: &mut Vec<Waker>, waker: &Waker) {
    if !list.iter().any(|w| w.will_wake(waker)) {
        list.push(waker.clone());
    }
}

fn wake_all(list: &mut Vec<Waker>) {
    for w in list.drain(..) {
        crate::wakeups::wake(w);
    }
}

fn wake(waker: Option<Waker>) {
    if let Some(w) = waker {
        crate::wakeups::wake(w);
    }
}
