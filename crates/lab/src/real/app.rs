//! The workload's application on real sockets, with the protocol of the simulated endpoints
//! ([`crate::workload`]): per bidirectional stream the client writes the response size (8 bytes,
//! big-endian) and FIN, the server answers with that many bytes of [`pattern`] and FIN, and the
//! client checks every byte.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use mpquic::{Connection, PathEvent, PathStatus, RecvStream, SendStream, StatusOrigin};
use tokio::sync::mpsc;

use crate::workload::{matches_pattern, pattern, LoggedEvent};

/// Largest single write of response data (as in the simulated server).
const WRITE_CHUNK: usize = 16 * 1024;

/// Seconds since the run started.
fn since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

/// Events of one side, timestamped from the run's start.
#[derive(Debug, Clone)]
pub(crate) struct EventLog {
    start: Instant,
    events: Arc<Mutex<Vec<LoggedEvent>>>,
}

impl EventLog {
    pub(crate) fn new(start: Instant) -> Self {
        Self {
            start,
            events: Arc::default(),
        }
    }

    pub(crate) fn push(&self, what: String) {
        let time_s = since(self.start);
        if let Ok(mut e) = self.events.lock() {
            e.push(LoggedEvent { time_s, what });
        }
    }

    pub(crate) fn take(&self) -> Vec<LoggedEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }

    /// Logs the connection's path events until it ends, in the simulated runs' words
    /// ([`crate::workload::describe`]).
    pub(crate) fn follow(&self, conn: Connection) {
        let log = self.clone();
        let mut events = conn.path_events();
        tokio::spawn(async move {
            loop {
                match events.recv().await {
                    Ok(ev) => log.push(describe_path(&ev)),
                    Err(mpquic::PathEventsError::Lagged(n)) => {
                        log.push(format!("{n} path events missed"));
                    }
                    Err(_) => break,
                }
            }
        });
    }
}

/// Serves requests on every connection the endpoint accepts; hands each connection (the
/// sender's side, for its statistics) to `conns` and logs its path events.
pub(crate) fn serve(
    endpoint: mpquic::Endpoint,
    conns: mpsc::UnboundedSender<Connection>,
    log: EventLog,
) {
    tokio::spawn(async move {
        while let Some(incoming) = endpoint.accept().await {
            let (log, conns) = (log.clone(), conns.clone());
            tokio::spawn(async move {
                let Ok(conn) = incoming.await else { return };
                log.push("connected".to_owned());
                log.follow(conn.clone());
                let _ = conns.send(conn.clone());
                while let Ok((send, recv)) = conn.accept_bi().await {
                    tokio::spawn(respond(send, recv));
                }
            });
        }
    });
}

/// Reads the 8-byte size and writes the response.
async fn respond(mut send: SendStream, mut recv: RecvStream) {
    let Ok(request) = recv.read_to_end(64).await else {
        return;
    };
    let Some(size) = request
        .get(..8)
        .and_then(|b| b.try_into().ok())
        .map(u64::from_be_bytes)
    else {
        let _ = send.reset(1);
        return;
    };
    let pat = pattern();
    let mut offset = 0u64;
    while offset < size {
        let pos = (offset % pat.len() as u64) as usize;
        let n = (size - offset)
            .min(WRITE_CHUNK as u64)
            .min((pat.len() - pos) as u64) as usize;
        if send.write_all(&pat[pos..pos + n]).await.is_err() {
            return;
        }
        offset += n as u64;
    }
    let _ = send.finish();
    let _ = send.finished().await;
}

/// Progress of the client's requests.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// Per request: bytes read, completion time (s), error.
    pub(crate) requests: Vec<(u64, Option<f64>, Option<String>)>,
    pub(crate) bytes: u64,
    pub(crate) half_at: Option<f64>,
}

/// Issues every request in parallel on `conn` and waits for them (errors are recorded in
/// `progress`, not returned).
pub(crate) async fn fetch_all(
    conn: &Connection,
    sizes: &[u64],
    start: Instant,
    progress: Arc<Mutex<Progress>>,
) {
    if let Ok(mut p) = progress.lock() {
        p.requests = sizes.iter().map(|_| (0, None, None)).collect();
    }
    let total: u64 = sizes.iter().sum();
    let mut tasks = Vec::new();
    for (i, &size) in sizes.iter().enumerate() {
        let (conn, progress) = (conn.clone(), progress.clone());
        tasks.push(tokio::spawn(async move {
            let result = fetch(&conn, i, size, total, start, &progress).await;
            if let (Err(e), Ok(mut p)) = (result, progress.lock()) {
                if let Some(r) = p.requests.get_mut(i) {
                    r.2 = Some(e);
                }
            }
        }));
    }
    for t in tasks {
        let _ = t.await;
    }
}

/// One request: read and check the response, recording progress as it comes.
async fn fetch(
    conn: &Connection,
    index: usize,
    size: u64,
    total: u64,
    start: Instant,
    progress: &Mutex<Progress>,
) -> Result<(), String> {
    let (mut send, mut recv) = conn.open_bi().await.map_err(|e| e.to_string())?;
    send.write_all(&size.to_be_bytes())
        .await
        .map_err(|e| e.to_string())?;
    send.finish().map_err(|e| e.to_string())?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut offset = 0u64;
    while let Some(n) = recv.read(&mut buf).await.map_err(|e| e.to_string())? {
        if !matches_pattern(offset, &buf[..n]) {
            return Err(format!("response corrupted near byte {offset}"));
        }
        offset += n as u64;
        let mut p = progress.lock().map_err(|_| "poisoned".to_owned())?;
        p.bytes += n as u64;
        if p.half_at.is_none() && p.bytes >= total / 2 {
            p.half_at = Some(since(start));
        }
        if let Some(r) = p.requests.get_mut(index) {
            r.0 = offset;
        }
    }
    if offset != size {
        return Err(format!("response of {offset} bytes, expected {size}"));
    }
    let mut p = progress.lock().map_err(|_| "poisoned".to_owned())?;
    if let Some(r) = p.requests.get_mut(index) {
        r.1 = Some(since(start));
    }
    Ok(())
}

/// A runtime path event in the words of the simulated runs' event log.
fn describe_path(event: &PathEvent) -> String {
    let status = |s: &PathStatus| match s {
        PathStatus::Backup => "backup",
        _ => "available",
    };
    match event {
        PathEvent::Opened { id } => format!("path {id} opened"),
        PathEvent::Validated { id } => format!("path {id} validated"),
        PathEvent::Failed { id } => format!("path {id} failed"),
        PathEvent::StatusChanged {
            id,
            status: s,
            origin: StatusOrigin::Local,
        } => format!("path {id} local status: {}", status(s)),
        PathEvent::StatusChanged { id, status: s, .. } => {
            format!("path {id} status: {}", status(s))
        }
        PathEvent::Abandoned { id, error_code } => {
            format!("path {id} abandoned (error {error_code:#x})")
        }
        other => format!("path event {other:?}"),
    }
}
