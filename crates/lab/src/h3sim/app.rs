//! The requests workload over HTTP/3: the client's `GET /bytes/<size>` requests and the
//! server's answers, as h3 futures run by [`Tasks`] inside [`scope`].
//!
//! The client issues every request of a connection's batch in parallel on that one
//! connection; the server answers `200` with `<size>` bytes of [`pattern`], which the
//! client checks byte for byte. The client app ([`crate::workload::ClientApp`]) reads the
//! progress of each request ([`Fetch`]) after every step and records completion times
//! exactly as for the custom protocol.

use std::cell::RefCell;
use std::rc::Rc;

use bytes::{Buf, Bytes};
use mpquic_netsim::SimTime;
use mpquic_proto::{ConnectionHandle, Endpoint};

use super::quic::{BidiStream, Connection};
use super::{scope, Task, Tasks};
use crate::workload::{matches_pattern, pattern, RequestState, PATTERN_PERIOD, WRITE_CHUNK};

/// Path prefix of the requests: `GET /bytes/<size>` asks for `<size>` pattern bytes.
pub const BYTES_PATH: &str = "/bytes/";

/// Futures started by other futures (the request handlers, the client's requests),
/// handed to the executor after each round.
type Spawner = Rc<RefCell<Vec<Task>>>;

/// Polls `tasks` inside a scope lending `endpoint`, starting what they spawn. Returns
/// false if the executor did not settle (see [`Tasks::run`]).
fn run(tasks: &mut Tasks, spawner: &Spawner, endpoint: &mut Endpoint, now: SimTime) -> bool {
    scope(endpoint, now, || {
        tasks.run(|| std::mem::take(&mut *spawner.borrow_mut()))
    })
}

/// Progress of one HTTP/3 request, shared between its future and the client app.
#[derive(Debug, Default)]
pub struct Fetch {
    /// Body bytes read so far (all checked against the pattern).
    pub received: u64,
    /// Whether the body ended (the stream's FIN was read).
    pub finished: bool,
    /// Why the request failed (status, corrupted body, stream or connection error).
    pub error: Option<String>,
}

impl Fetch {
    /// Copies the progress into the request's state as the custom protocol records it
    /// (completed when the whole body was read, at the step that read its end); returns
    /// the bytes read since the last call.
    pub fn record(&self, r: &mut RequestState, now: SimTime) -> u64 {
        if r.completed_at.is_some() || r.error.is_some() {
            return 0;
        }
        let new = self.received - r.received;
        r.received = self.received;
        if let Some(e) = &self.error {
            r.error = Some(e.clone());
        } else if self.finished && r.received == r.size {
            r.completed_at = Some(now);
        } else if self.finished {
            r.error = Some(format!(
                "received {} bytes, expected {}",
                r.received, r.size
            ));
        }
        new
    }
}

/// The client side of one connection at a time.
#[derive(Default)]
pub struct H3Client {
    tasks: Tasks,
    spawner: Spawner,
    /// The connection the current tasks run on.
    handle: Option<ConnectionHandle>,
}

impl std::fmt::Debug for H3Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H3Client")
            .field("tasks", &self.tasks)
            .field("handle", &self.handle)
            .finish_non_exhaustive()
    }
}

impl H3Client {
    /// Whether HTTP/3 already runs on `handle`.
    pub fn runs_on(&self, handle: ConnectionHandle) -> bool {
        self.handle == Some(handle)
    }

    /// Starts HTTP/3 on the established connection `handle` and one request per entry
    /// of `sizes`, whose progress goes to the matching `fetches`. Tasks of an earlier
    /// connection are dropped first (inside the scope, so their drops reach the
    /// transport).
    pub fn start(
        &mut self,
        handle: ConnectionHandle,
        requests: Vec<(u64, Rc<RefCell<Fetch>>)>,
        endpoint: &mut Endpoint,
        now: SimTime,
    ) {
        let tasks = &mut self.tasks;
        scope(endpoint, now, || tasks.clear());
        self.handle = Some(handle);
        let spawner = self.spawner.clone();
        self.tasks.spawn(async move {
            let mut builder = h3::client::builder();
            builder.send_grease(false);
            let (mut driver, sender) = match builder.build(Connection::new(handle)).await {
                Ok(pair) => pair,
                Err(e) => {
                    for (_, fetch) in &requests {
                        fetch.borrow_mut().error = Some(format!("HTTP/3 setup: {e}"));
                    }
                    return;
                }
            };
            for (size, fetch) in requests {
                let sender = sender.clone();
                spawner.borrow_mut().push(Box::pin(async move {
                    if let Err(e) = get(sender, size, &fetch).await {
                        fetch.borrow_mut().error = Some(e);
                    }
                }));
            }
            // The driver reads the server's control stream (SETTINGS, GOAWAY); it ends
            // with the connection. `sender` lives until then, so that h3 does not take the
            // end of the requests for the end of the connection.
            let _ = std::future::poll_fn(|cx| driver.poll_close(cx)).await;
            drop(sender);
        });
    }

    /// Runs the futures after a step; false if the executor did not settle.
    pub fn step(&mut self, endpoint: &mut Endpoint, now: SimTime) -> bool {
        run(&mut self.tasks, &self.spawner, endpoint, now)
    }

    /// Drops the tasks of the current connection (before the client closes it).
    pub fn stop(&mut self, endpoint: &mut Endpoint, now: SimTime) {
        let tasks = &mut self.tasks;
        scope(endpoint, now, || tasks.clear());
        self.spawner.borrow_mut().clear();
        self.handle = None;
    }
}

type SendRequest = h3::client::SendRequest<Connection, Bytes>;

/// `GET /bytes/<size>`: sends the request, checks the status and every body byte
/// against the pattern, and records the progress in `fetch`.
async fn get(mut sender: SendRequest, size: u64, fetch: &RefCell<Fetch>) -> Result<(), String> {
    let request = http::Request::get(format!("https://localhost{BYTES_PATH}{size}"))
        .body(())
        .map_err(|e| format!("request: {e}"))?;
    let mut stream = sender
        .send_request(request)
        .await
        .map_err(|e| format!("sending the request: {e}"))?;
    // No request content: close the stream for sending (RFC 9114 §4.1).
    stream
        .finish()
        .await
        .map_err(|e| format!("finishing the request: {e}"))?;
    let head = stream
        .recv_response()
        .await
        .map_err(|e| format!("response head: {e}"))?;
    if head.status() != http::StatusCode::OK {
        return Err(format!("status {}", head.status()));
    }
    while let Some(mut data) = stream
        .recv_data()
        .await
        .map_err(|e| format!("response body: {e}"))?
    {
        while data.has_remaining() {
            let chunk = data.chunk();
            let mut f = fetch.borrow_mut();
            if !matches_pattern(f.received, chunk) {
                return Err(format!("corrupted data at offset {}", f.received));
            }
            f.received += chunk.len() as u64;
            let n = chunk.len();
            drop(f);
            data.advance(n);
        }
    }
    fetch.borrow_mut().finished = true;
    Ok(())
}

/// The server side: HTTP/3 on every connection whose ALPN is `h3`.
#[derive(Default)]
pub struct H3Server {
    tasks: Tasks,
    spawner: Spawner,
    /// Why requests or connections failed, for the server's event log.
    notes: Rc<RefCell<Vec<String>>>,
}

impl std::fmt::Debug for H3Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("H3Server")
            .field("tasks", &self.tasks)
            .finish_non_exhaustive()
    }
}

impl H3Server {
    /// Starts serving connection `handle` (run at the next [`H3Server::step`]).
    pub fn add(&mut self, handle: ConnectionHandle) {
        let spawner = self.spawner.clone();
        let notes = self.notes.clone();
        self.tasks.spawn(async move {
            if let Err(e) = accept_loop(handle, &spawner, &notes).await {
                notes.borrow_mut().push(format!("HTTP/3 connection: {e}"));
            }
        });
    }

    /// Runs the futures after a step; returns what went wrong since the last step.
    pub fn step(&mut self, endpoint: &mut Endpoint, now: SimTime) -> Vec<String> {
        if self.tasks.is_empty() {
            return Vec::new();
        }
        if !run(&mut self.tasks, &self.spawner, endpoint, now) {
            self.notes
                .borrow_mut()
                .push("HTTP/3 executor did not settle".to_owned());
        }
        std::mem::take(&mut *self.notes.borrow_mut())
    }
}

type Resolver = h3::server::RequestResolver<Connection, Bytes>;
type RequestStream = h3::server::RequestStream<BidiStream<Bytes>, Bytes>;

/// Accepts the requests of one connection until it ends, one handler each.
async fn accept_loop(
    handle: ConnectionHandle,
    spawner: &Spawner,
    notes: &Rc<RefCell<Vec<String>>>,
) -> Result<(), h3::error::ConnectionError> {
    let mut builder = h3::server::builder();
    builder.send_grease(false);
    let mut conn = builder.build(Connection::new(handle)).await?;
    loop {
        match conn.accept().await {
            Ok(Some(resolver)) => {
                let notes = notes.clone();
                spawner.borrow_mut().push(Box::pin(async move {
                    if let Err(e) = answer(resolver).await {
                        notes.borrow_mut().push(format!("HTTP/3 request: {e}"));
                    }
                }));
            }
            Ok(None) => return Ok(()),
            // The client closed the connection after its batch: not an error.
            Err(e) if e.is_h3_no_error() => return Ok(()),
            Err(e) => return Err(e),
        }
    }
}

/// The size a request path asks for (`/bytes/<size>`).
pub fn requested_size(path: &str) -> Option<u64> {
    path.strip_prefix(BYTES_PATH)?.parse().ok()
}

/// Answers one request: `200` and the pattern bytes, or `404` for any other path.
async fn answer(resolver: Resolver) -> Result<(), h3::error::StreamError> {
    let (request, mut stream) = resolver.resolve_request().await?;
    let Some(size) = requested_size(request.uri().path()) else {
        let head = http::Response::builder()
            .status(http::StatusCode::NOT_FOUND)
            .body(())
            .expect("a valid response head");
        stream.send_response(head).await?;
        return stream.finish().await;
    };
    let head = http::Response::builder()
        .status(http::StatusCode::OK)
        .header(http::header::CONTENT_LENGTH, size)
        .body(())
        .expect("a valid response head");
    stream.send_response(head).await?;
    send_pattern(&mut stream, size).await?;
    stream.finish().await?;
    // Read the end of the request stream (its FIN may come after the response), so
    // that the stream closes normally.
    while stream.recv_data().await?.is_some() {}
    Ok(())
}

/// Sends `size` pattern bytes, as DATA frames of at most [`WRITE_CHUNK`] bytes. The
/// pattern is static: the frames are slices of it, not copies.
async fn send_pattern(stream: &mut RequestStream, size: u64) -> Result<(), h3::error::StreamError> {
    let pat = pattern();
    let mut sent = 0u64;
    while sent < size {
        let off = (sent % PATTERN_PERIOD as u64) as usize;
        let n = (PATTERN_PERIOD - off)
            .min(WRITE_CHUNK)
            .min(usize::try_from(size - sent).unwrap_or(usize::MAX));
        stream
            .send_data(Bytes::from_static(&pat[off..off + n]))
            .await?;
        sent += n as u64;
    }
    Ok(())
}

/// The HTTP/3 error code the client closes its connections with once their batch is
/// done (RFC 9114 §8.1: a graceful close).
pub const CLOSE_CODE: u64 = 0x100;

#[cfg(test)]
mod tests {
    use super::*;
    use h3::error::Code;

    #[test]
    fn paths() {
        assert_eq!(requested_size("/bytes/2048"), Some(2048));
        assert_eq!(requested_size("/bytes/"), None);
        assert_eq!(requested_size("/other/5"), None);
        assert_eq!(Code::H3_NO_ERROR.value(), CLOSE_CODE);
    }
}
