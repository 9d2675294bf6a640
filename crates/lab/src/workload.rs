//! Application logic run by the simulated endpoints.
//!
//! The protocol on each bidirectional stream: the client writes the size of
//! the response it wants as 8 bytes (big-endian) and FIN; the server answers
//! with that many bytes of a fixed pseudo-random [`pattern`] and FIN. The
//! client checks every byte against the pattern, so a completed request is
//! byte-exact.
//!
//! With [`ClientApp::set_connection_batches`] the client fetches the
//! requests over successive short connections, as in the production A/B
//! test of the SPNS report (seed 000, "network time" of short connections):
//! batch `k` goes in parallel over connection `k`, which the client closes
//! once every response of the batch was read, and only then opens
//! connection `k + 1` (new handshake, new paths).
//!
//! With [`Protocol::H3`] ([`ClientApp::set_protocol`]) the same requests go over HTTP/3
//! instead ([`crate::h3sim`]): `GET /bytes/<size>` on request streams of the one
//! connection, answered `200` with the same pattern bytes; the server speaks HTTP/3 on
//! every connection whose ALPN is `h3`.

use std::cell::RefCell;
use std::net::SocketAddr;
use std::rc::Rc;
use std::sync::OnceLock;

use mpquic_netsim::time::SimTime;
use mpquic_proto::wire::stream_id::StreamId;
use mpquic_proto::{Connection, ConnectionHandle, Endpoint, Event, PathEvent, Timestamp};
use serde::Serialize;

use crate::h3sim::app::{Fetch, H3Client};
use crate::h3sim::Protocol;
use crate::race::{HandshakeRace, RaceState};
use crate::video::{VideoClient, VideoSpec};

mod migrate;
mod paths;
mod server;

pub(crate) use paths::reopen_delay_ms;
use paths::{ExtraPaths, Interface};
pub use server::ServerApp;

/// Period of the response pattern (a prime, so shifted data never matches).
pub const PATTERN_PERIOD: usize = 65_521;

/// Largest single write of response data.
pub(crate) const WRITE_CHUNK: usize = 16 * 1024;

/// The response bytes: byte `i` of every response is `pattern()[i % PATTERN_PERIOD]`.
pub fn pattern() -> &'static [u8] {
    static PATTERN: OnceLock<Vec<u8>> = OnceLock::new();
    PATTERN.get_or_init(|| {
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        (0..PATTERN_PERIOD)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    })
}

/// Whether `data` equals the pattern starting at stream offset `offset`.
pub fn matches_pattern(offset: u64, data: &[u8]) -> bool {
    let pat = pattern();
    let mut pos = (offset % PATTERN_PERIOD as u64) as usize;
    let mut rest = data;
    while !rest.is_empty() {
        let n = rest.len().min(PATTERN_PERIOD - pos);
        if rest[..n] != pat[pos..pos + n] {
            return false;
        }
        rest = &rest[n..];
        pos = 0;
    }
    true
}

/// Something that happened to the connection, with its virtual time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoggedEvent {
    /// Virtual time in seconds.
    pub time_s: f64,
    /// What happened (`"path 1 validated"`, `"connection lost: idle timeout"`).
    pub what: String,
}

fn log(events: &mut Vec<LoggedEvent>, now: SimTime, what: String) {
    events.push(LoggedEvent {
        time_s: mpquic_netsim::time::as_secs_f64(now),
        what,
    });
}

pub(crate) fn describe(event: &Event) -> Option<String> {
    Some(match event {
        Event::Connected => "connected".to_owned(),
        Event::ConnectionLost(e) => format!("connection lost: {e}"),
        Event::Path(PathEvent::Opened { id }) => format!("path {id} opened"),
        Event::Path(PathEvent::Validated { id }) => format!("path {id} validated"),
        Event::Path(PathEvent::Failed { id }) => format!("path {id} failed"),
        Event::Path(PathEvent::StatusChanged { id, backup }) => {
            format!(
                "path {id} status: {}",
                if *backup { "backup" } else { "available" }
            )
        }
        Event::Path(PathEvent::LocalStatusChanged { id, backup }) => {
            format!(
                "path {id} local status: {}",
                if *backup { "backup" } else { "available" }
            )
        }
        Event::Path(PathEvent::Abandoned { id, error_code }) => {
            format!("path {id} abandoned (error {error_code:#x})")
        }
        Event::Stream(_) | Event::DatagramReceived => return None,
    })
}

/// Progress of one request.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RequestState {
    /// Response size asked for.
    pub size: u64,
    /// The stream carrying it, once opened.
    #[serde(skip)]
    pub stream: Option<StreamId>,
    /// Request bytes written so far (8 in total, then FIN).
    #[serde(skip)]
    request_written: usize,
    /// Response bytes read so far.
    pub received: u64,
    /// When the FIN of a complete, correct response was read.
    pub completed_at: Option<SimTime>,
    /// Why the response is wrong (short, long, corrupted, reset).
    pub error: Option<String>,
    /// Index of the connection that carries it (0 unless the client uses
    /// successive connections).
    pub connection: usize,
}

impl RequestState {
    fn new(size: u64) -> Self {
        Self {
            size,
            stream: None,
            request_written: 0,
            received: 0,
            completed_at: None,
            error: None,
            connection: 0,
        }
    }
}

/// Timeline of one of the client's connections.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ConnectionTimes {
    /// When the client started the handshake.
    pub opened_at: SimTime,
    /// When the handshake completed.
    pub established_at: Option<SimTime>,
    /// When the client closed it (after its last response).
    pub closed_at: Option<SimTime>,
    /// Its 0-RTT figures, with session resumption and 0-RTT on ([`ClientApp::set_zero_rtt`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub zero_rtt: Option<ZeroRttFigures>,
}

/// 0-RTT figures of one client connection.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ZeroRttFigures {
    /// 0-RTT packets the client sent.
    pub packets_sent: u64,
    /// The server's answer to the 0-RTT data: None while unknown or when 0-RTT was not
    /// attempted (no ticket allowing early data).
    pub accepted: Option<bool>,
}

impl ZeroRttFigures {
    fn of(conn: &Connection) -> Self {
        Self {
            packets_sent: conn.stats().zero_rtt_packets_sent,
            accepted: conn.zero_rtt_accepted(),
        }
    }
}

/// What the client needs to open its next connection.
#[derive(Debug, Clone)]
struct Redial {
    config: mpquic_proto::ClientConfig,
    local: SocketAddr,
    remote: SocketAddr,
    server_name: String,
}

/// The client side: opens the extra paths, issues the requests, reads and
/// verifies the responses.
#[derive(Debug)]
pub struct ClientApp {
    handle: ConnectionHandle,
    /// The current connection's extra paths: to open, open, to open again.
    paths: ExtraPaths,
    /// The requests, in issue order.
    pub requests: Vec<RequestState>,
    next_to_open: usize,
    /// Response bytes read over all streams.
    pub bytes_received: u64,
    total: u64,
    /// When half of all response bytes had been read.
    pub half_at: Option<SimTime>,
    /// When the handshake completed.
    pub established_at: Option<SimTime>,
    /// When every request completed.
    pub finished_at: Option<SimTime>,
    /// Why the workload cannot complete (connection lost, bad response).
    pub failure: Option<String>,
    /// Connection and path events.
    pub events: Vec<LoggedEvent>,
    /// The player, when the workload is a video ([`ClientApp::enable_video`]).
    pub video: Option<Box<VideoClient>>,
    read_buf: Vec<u8>,
    /// The extra paths every connection opens after its handshake: (interface index, local,
    /// remote).
    extra_paths: Vec<Interface>,
    /// The first connection's handshake race over every interface, while it runs
    /// ([`ClientApp::set_race`]), and the (local, remote) pair of each interface.
    race: Option<(HandshakeRace, Vec<(SocketAddr, SocketAddr)>)>,
    /// End (exclusive request index) of each connection's batch but the
    /// last, which runs to the end of `requests`.
    batch_ends: Vec<usize>,
    /// First request of the current connection's batch.
    batch_start: usize,
    redial: Option<Box<Redial>>,
    /// Timeline of every connection opened, in order (the current is last).
    pub connections: Vec<ConnectionTimes>,
    /// Figures of the connections already closed, taken when they closed.
    pub closed_figures: Vec<crate::result::ConnectionFigures>,
    /// The protocol the requests use.
    protocol: Protocol,
    /// Session resumption and 0-RTT on ([`ClientApp::set_zero_rtt`]).
    zero_rtt: bool,
    /// HTTP/3 state of the current connection ([`Protocol::H3`] only).
    h3: H3Client,
    /// Progress of each request over HTTP/3, parallel to `requests`.
    fetches: Vec<Rc<RefCell<Fetch>>>,
    /// A move of path 0 still to make: when, and to which local address
    /// ([`ClientApp::set_migration`]).
    migration: Option<Box<migrate::PendingMove>>,
}

impl ClientApp {
    /// A client for connection `handle` that asks for `sizes` and opens
    /// one extra path from each `(local, remote)` in `extra_paths`
    /// (interfaces 1, 2, ...).
    pub fn new(
        handle: ConnectionHandle,
        sizes: &[u64],
        extra_paths: &[(SocketAddr, SocketAddr)],
    ) -> Self {
        let requests = sizes.iter().map(|&size| RequestState::new(size)).collect();
        let extra_paths: Vec<_> = (1..)
            .zip(extra_paths)
            .map(|(i, &(l, r))| (i, l, r))
            .collect();
        Self {
            handle,
            paths: ExtraPaths::new(&extra_paths),
            requests,
            next_to_open: 0,
            bytes_received: 0,
            total: sizes.iter().sum(),
            half_at: None,
            established_at: None,
            finished_at: None,
            failure: None,
            events: Vec::new(),
            video: None,
            read_buf: vec![0; 64 * 1024],
            extra_paths,
            race: None,
            batch_ends: Vec::new(),
            batch_start: 0,
            redial: None,
            connections: vec![ConnectionTimes::default()],
            closed_figures: Vec::new(),
            protocol: Protocol::Custom,
            zero_rtt: false,
            h3: H3Client::default(),
            fetches: Vec::new(),
            migration: None,
        }
    }

    /// Sends the requests over `protocol` (the connections' ALPN must match it: see
    /// [`crate::QuicNode::client_with`]).
    pub fn set_protocol(&mut self, protocol: Protocol) {
        self.protocol = protocol;
    }

    /// Records each connection's 0-RTT figures and, over the custom protocol, writes the
    /// requests of a new connection as soon as it has 0-RTT keys (before its handshake
    /// completes), so that they leave in 0-RTT packets. The client's TLS configuration must
    /// keep a session store and offer early data (see [`crate::QuicNode::client_with`]).
    /// HTTP/3 requests still wait for the handshake.
    pub fn set_zero_rtt(&mut self, on: bool) {
        self.zero_rtt = on;
        if on {
            for c in &mut self.connections {
                c.zero_rtt.get_or_insert_with(ZeroRttFigures::default);
            }
        }
    }

    /// Lets the client open further connections with `config` from
    /// `local` to `remote` (those of its first connection).
    pub fn set_redial(
        &mut self,
        config: mpquic_proto::ClientConfig,
        local: SocketAddr,
        remote: SocketAddr,
        server_name: &str,
    ) {
        self.redial = Some(Box::new(Redial {
            config,
            local,
            remote,
            server_name: server_name.to_owned(),
        }));
    }

    /// Splits the requests into successive connections: connection `k`
    /// carries the requests before `ends[k]` not carried by an earlier
    /// one; the last connection carries the rest. `ends` must increase and
    /// stay below the number of requests (each batch non-empty); the
    /// scenario validates this.
    pub fn set_connection_batches(&mut self, ends: Vec<usize>) {
        for (i, r) in self.requests.iter_mut().enumerate() {
            r.connection = ends.iter().take_while(|&&end| end <= i).count();
        }
        self.batch_ends = ends;
    }

    /// Requests of the current connection.
    fn batch(&self) -> std::ops::Range<usize> {
        let k = self.connections.len() - 1;
        let n = self.requests.len();
        let end = self.batch_ends.get(k).map_or(n, |&e| e.min(n));
        self.batch_start.min(end)..end
    }

    /// Whether the current connection's batch is complete and another
    /// connection follows.
    fn batch_done(&self) -> bool {
        let k = self.connections.len() - 1;
        k < self.batch_ends.len()
            && self.requests[self.batch()]
                .iter()
                .all(|r| r.completed_at.is_some())
    }

    /// Closes the current connection (keeping its figures) and opens the
    /// next one, which sends its batch once established.
    fn next_connection(&mut self, now: SimTime, endpoint: &mut Endpoint) {
        let Some(redial) = self.redial.clone() else {
            self.failure = Some("successive connections need set_redial".to_owned());
            return;
        };
        // HTTP/3 closes gracefully with H3_NO_ERROR (RFC 9114 §8.1); its futures go first.
        let close_code = match self.protocol {
            Protocol::Custom => 0,
            Protocol::H3 => {
                self.h3.stop(endpoint, now);
                crate::h3sim::app::CLOSE_CODE
            }
        };
        if let Some(conn) = endpoint.connection_mut(self.handle) {
            if let Some(c) = self.connections.last_mut().filter(|_| self.zero_rtt) {
                c.zero_rtt = Some(ZeroRttFigures::of(conn));
            }
            self.closed_figures
                .push(crate::result::ConnectionFigures::of(conn));
            conn.close(Timestamp::from_nanos(now), close_code, bytes::Bytes::new());
            endpoint.after_connection_call(self.handle);
        }
        if let Some(c) = self.connections.last_mut() {
            c.closed_at = Some(now);
        }
        let next = self.batch().end;
        let k = self.connections.len();
        match endpoint.connect(
            Timestamp::from_nanos(now),
            &redial.config,
            redial.local,
            redial.remote,
            &redial.server_name,
        ) {
            Ok(handle) => {
                log(&mut self.events, now, format!("connection {k} opened"));
                self.handle = handle;
                self.batch_start = next;
                self.next_to_open = next;
                self.paths = ExtraPaths::new(&self.extra_paths);
                self.connections.push(ConnectionTimes {
                    opened_at: now,
                    zero_rtt: self.zero_rtt.then(ZeroRttFigures::default),
                    ..ConnectionTimes::default()
                });
                self.send_early(handle, endpoint);
            }
            Err(e) => self.failure = Some(format!("cannot open connection {k}: {e}")),
        }
    }

    /// Turns the client into a video player for `spec`: chunks are
    /// requested one at a time by the player model instead of all at once,
    /// and the workload is complete when the whole video was played.
    pub fn enable_video(&mut self, spec: VideoSpec) {
        self.total = spec.chunk_bytes() * spec.chunks;
        self.requests.clear();
        self.next_to_open = 0;
        self.video = Some(Box::new(VideoClient::new(spec)));
    }

    /// The client's connection handle.
    pub fn handle(&self) -> ConnectionHandle {
        self.handle
    }

    /// True once every request completed or the workload failed.
    pub fn is_done(&self) -> bool {
        self.finished_at.is_some() || self.failure.is_some()
    }

    /// When the app wants to run again without network activity.
    pub fn timeout(&self) -> Option<SimTime> {
        if self.is_done() {
            return None;
        }
        let path = self.paths.next_wakeup();
        let video = self.video.as_ref().and_then(|v| v.next_wakeup());
        [path, video, self.migration_due()]
            .into_iter()
            .flatten()
            .min()
    }

    /// Runs the application after any event.
    pub fn step(&mut self, now: SimTime, endpoint: &mut Endpoint) {
        if self.is_done() || !self.race_settled(now, endpoint) {
            return;
        }
        let Some(conn) = endpoint.connection_mut(self.handle) else {
            self.failure = Some("client connection vanished".to_owned());
            return;
        };
        self.drain_events(now, conn);
        if self.failure.is_none() && conn.is_closed() {
            let why = conn
                .error()
                .map_or_else(|| "closed".to_owned(), ToString::to_string);
            self.failure = Some(format!("connection closed: {why}"));
        }
        if self.zero_rtt {
            if let Some(c) = self.connections.last_mut() {
                c.zero_rtt = Some(ZeroRttFigures::of(conn));
            }
        }
        if self.failure.is_none() && !conn.is_established() {
            // A move due before the handshake completes is tried (and refused, RFC 9000 §9)
            // and rescheduled, so that its time is not reported as due for ever.
            self.migrate_if_due(now, conn);
            self.send_early(self.handle, endpoint);
            return;
        }
        if self.failure.is_some() {
            return;
        }
        self.established_at.get_or_insert(now);
        if let Some(c) = self.connections.last_mut() {
            c.established_at.get_or_insert(now);
        }
        self.paths.open_due(now, conn, &mut self.events);
        self.migrate_if_due(now, conn);
        self.request_chunk(now);
        if self.protocol == Protocol::Custom {
            self.issue_requests(conn);
            self.read_responses(now, conn);
        }
        self.update_video(now, conn);
        endpoint.after_connection_call(self.handle);
        if self.protocol == Protocol::H3 {
            self.step_h3(now, endpoint);
        }
        if self.failure.is_none() && self.batch_done() {
            self.next_connection(now, endpoint);
        }
    }

    /// Races the first connection's handshake: `race` runs one connection per interface
    /// (`interfaces[i]` is interface `i`'s (local, remote) pair); the first to complete its
    /// handshake becomes the client's connection and opens the other interfaces as paths,
    /// and later connections ([`ClientApp::set_connection_batches`]) dial from its interface.
    pub fn set_race(&mut self, race: HandshakeRace, interfaces: Vec<(SocketAddr, SocketAddr)>) {
        if let Some(first) = race.first() {
            self.handle = first;
        }
        self.race = Some((race, interfaces));
    }

    /// False while the handshake race runs; adopts its winner once there is one.
    fn race_settled(&mut self, now: SimTime, endpoint: &mut Endpoint) -> bool {
        let Some((race, _)) = &mut self.race else {
            return true;
        };
        match race.settle(now, endpoint) {
            RaceState::Running => false,
            RaceState::Failed(why) => {
                self.failure = Some(format!("every handshake of the race failed ({why})"));
                false
            }
            RaceState::Won { handle, iface } => {
                let Some((_, interfaces)) = self.race.take() else {
                    return true;
                };
                self.handle = handle;
                self.extra_paths = (0..)
                    .zip(&interfaces)
                    .filter(|&(i, _)| i != iface)
                    .map(|(i, &(l, r))| (i, l, r))
                    .collect();
                self.paths = ExtraPaths::new(&self.extra_paths);
                if let (Some(redial), Some(&(local, remote))) =
                    (&mut self.redial, interfaces.get(iface))
                {
                    redial.local = local;
                    redial.remote = remote;
                }
                log(
                    &mut self.events,
                    now,
                    format!("handshake race won by interface {iface}"),
                );
                true
            }
        }
    }

    /// With 0-RTT on, over the custom protocol: opens the current batch's streams and writes
    /// its requests while the connection has 0-RTT keys (before its handshake completes);
    /// the core sends them in 0-RTT packets.
    fn send_early(&mut self, handle: ConnectionHandle, endpoint: &mut Endpoint) {
        if !self.zero_rtt || self.protocol != Protocol::Custom || self.video.is_some() {
            return;
        }
        let Some(conn) = endpoint.connection_mut(handle) else {
            return;
        };
        if conn.is_zero_rtt_available() {
            self.issue_requests(conn);
        }
        endpoint.after_connection_call(handle);
    }

    fn drain_events(&mut self, now: SimTime, conn: &mut Connection) {
        while let Some(e) = conn.poll_event() {
            match &e {
                Event::ConnectionLost(err) => {
                    self.failure = Some(format!("connection lost: {err}"));
                }
                Event::Path(PathEvent::Abandoned { id, .. }) => self.paths.on_abandoned(now, *id),
                _ => {}
            }
            if let Some(what) = describe(&e) {
                log(&mut self.events, now, what);
            }
        }
    }

    /// Video: plays until `now`, then asks for the next chunk if the
    /// player wants it.
    fn request_chunk(&mut self, now: SimTime) {
        let Some(v) = &mut self.video else { return };
        v.player.advance_to(now);
        if v.wants_chunk() {
            v.on_request(now);
            self.requests.push(RequestState::new(v.spec.chunk_bytes()));
        }
    }

    /// Video: feeds the received bytes to the player, sends QoE feedback
    /// and completes the workload once the video was played.
    fn update_video(&mut self, now: SimTime, conn: &mut Connection) {
        let Some(v) = &mut self.video else { return };
        let progress = self.requests.iter().map(|r| (r.received, r.completed_at));
        v.update(now, progress, conn);
        if v.is_finished() && self.failure.is_none() {
            self.finished_at.get_or_insert(now);
        }
    }

    fn issue_requests(&mut self, conn: &mut Connection) {
        let batch = self.batch();
        while self.next_to_open < batch.end {
            let Some(id) = conn.open_bi() else { break };
            self.requests[self.next_to_open].stream = Some(id);
            self.next_to_open += 1;
        }
        let current = &mut self.requests[batch];
        for r in current.iter_mut().filter(|r| r.request_written < 8) {
            let Some(id) = r.stream else { break };
            let req = r.size.to_be_bytes();
            while r.request_written < 8 {
                match conn.write(id, &req[r.request_written..]) {
                    Ok(n) if n > 0 => r.request_written += n,
                    _ => break,
                }
            }
            if r.request_written == 8 && conn.finish(id).is_err() {
                r.error = Some("cannot finish the request stream".to_owned());
            }
        }
    }

    fn read_responses(&mut self, now: SimTime, conn: &mut Connection) {
        let batch = self.batch();
        for r in &mut self.requests[batch] {
            let Some(id) = r.stream else { break };
            if r.completed_at.is_some() || r.error.is_some() {
                continue;
            }
            loop {
                match conn.read(id, &mut self.read_buf) {
                    Ok(Some(n)) => {
                        let chunk = &self.read_buf[..n];
                        if !matches_pattern(r.received, chunk) {
                            r.error = Some(format!("corrupted data at offset {}", r.received));
                        }
                        r.received += n as u64;
                        self.bytes_received += n as u64;
                    }
                    Ok(None) => {
                        if r.received == r.size && r.error.is_none() {
                            r.completed_at = Some(now);
                        } else if r.error.is_none() {
                            r.error = Some(format!(
                                "received {} bytes, expected {}",
                                r.received, r.size
                            ));
                        }
                        break;
                    }
                    Err(mpquic_proto::ReadError::Blocked) => break,
                    Err(e) => {
                        r.error = Some(format!("read failed: {e}"));
                        break;
                    }
                }
            }
        }
        self.settle(now);
    }

    /// Runs the HTTP/3 requests of the current connection (started once it is
    /// established) and copies their progress into `requests`.
    fn step_h3(&mut self, now: SimTime, endpoint: &mut Endpoint) {
        if !self.h3.runs_on(self.handle) {
            let batch = self.batch();
            if self.fetches.len() != self.requests.len() {
                self.fetches = self.requests.iter().map(|_| Rc::default()).collect();
            }
            let requests = batch
                .map(|i| (self.requests[i].size, self.fetches[i].clone()))
                .collect();
            self.h3.start(self.handle, requests, endpoint, now);
        }
        if !self.h3.step(endpoint, now) {
            self.failure = Some("HTTP/3 executor did not settle".to_owned());
            return;
        }
        for i in self.batch() {
            let fetch = self.fetches[i].borrow();
            self.bytes_received += fetch.record(&mut self.requests[i], now);
        }
        self.settle(now);
    }

    /// Records the half-way time, the first failed request, or the end of the workload.
    fn settle(&mut self, now: SimTime) {
        if self.half_at.is_none() && self.bytes_received * 2 >= self.total {
            self.half_at = Some(now);
        }
        if let Some((i, r)) = self
            .requests
            .iter()
            .enumerate()
            .find(|(_, r)| r.error.is_some())
        {
            self.failure = Some(format!(
                "request {i}: {}",
                r.error.as_deref().unwrap_or("failed")
            ));
        } else if self.video.is_none() && self.requests.iter().all(|r| r.completed_at.is_some()) {
            self.finished_at = Some(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_checks() {
        let p = pattern();
        assert_eq!(p.len(), PATTERN_PERIOD);
        let wrap: Vec<u8> = p[PATTERN_PERIOD - 3..]
            .iter()
            .chain(&p[..5])
            .copied()
            .collect();
        assert!(matches_pattern(PATTERN_PERIOD as u64 - 3, &wrap));
        assert!(!matches_pattern(PATTERN_PERIOD as u64 - 2, &wrap));
        assert!(matches_pattern(7, &[]));
    }
}
