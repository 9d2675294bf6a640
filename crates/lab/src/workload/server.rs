//! The server side of the lab's request protocol (see [`super`]): accepts connections and
//! streams, reads each request's size and answers with that many bytes of the pattern; HTTP/3
//! connections are served by [`H3Server`].

use std::collections::BTreeMap;

use bytes::Bytes;
use mpquic_netsim::time::SimTime;
use mpquic_proto::wire::stream_id::{Dir, StreamId};
use mpquic_proto::{Connection, ConnectionHandle, Endpoint};

use super::{describe, log, pattern, LoggedEvent, PATTERN_PERIOD, WRITE_CHUNK};
use crate::h3sim::app::H3Server;
use crate::h3sim::H3_ALPN;

/// Server state of one request stream.
#[derive(Debug, Default)]
struct Response {
    request: [u8; 8],
    request_len: usize,
    request_fin: bool,
    written: u64,
    finished: bool,
}

impl Response {
    fn size(&self) -> Option<u64> {
        (self.request_len == 8).then(|| u64::from_be_bytes(self.request))
    }
}

/// Server state of one connection.
#[derive(Debug)]
struct ServerConn {
    handle: ConnectionHandle,
    streams: BTreeMap<StreamId, Response>,
    /// Whether the ALPN was seen yet (then HTTP/3 runs if it is `h3`).
    alpn_known: bool,
    /// Whether the connection speaks HTTP/3 (served by `ServerApp::h3`).
    h3: bool,
    /// Whether the client opened a request stream (a connection that lost a handshake race
    /// never does).
    served: bool,
}

/// The server side: accepts connections and streams, answers requests.
#[derive(Debug, Default)]
pub struct ServerApp {
    conns: Vec<ServerConn>,
    /// Connection and path events of all connections.
    pub events: Vec<LoggedEvent>,
    scratch: Vec<u8>,
    h3: H3Server,
}

impl ServerApp {
    /// Handles of the accepted connections, in accept order.
    pub fn handles(&self) -> Vec<ConnectionHandle> {
        self.conns.iter().map(|c| c.handle).collect()
    }

    /// The connection the results describe: the first accepted one that carried requests
    /// (HTTP/3 connections count from their ALPN), else the first accepted one. Connections
    /// that lost the client's handshake race carry none.
    pub fn main_handle(&self) -> Option<ConnectionHandle> {
        let served = self.conns.iter().find(|c| c.served || c.h3);
        served.or(self.conns.first()).map(|c| c.handle)
    }

    /// Runs the application after any event.
    pub fn step(&mut self, now: SimTime, endpoint: &mut Endpoint) {
        while let Some(handle) = endpoint.accept() {
            self.conns.push(ServerConn {
                handle,
                streams: BTreeMap::new(),
                alpn_known: false,
                h3: false,
                served: false,
            });
        }
        if self.scratch.is_empty() {
            self.scratch = vec![0; 4096];
        }
        for sc in &mut self.conns {
            let Some(conn) = endpoint.connection_mut(sc.handle) else {
                continue;
            };
            while let Some(e) = conn.poll_event() {
                if let Some(what) = describe(&e) {
                    log(&mut self.events, now, what);
                }
            }
            if conn.is_closed() {
                continue;
            }
            if !sc.alpn_known {
                if let Some(alpn) = conn.alpn_protocol() {
                    sc.alpn_known = true;
                    sc.h3 = alpn == H3_ALPN;
                    if sc.h3 {
                        self.h3.add(sc.handle);
                    }
                }
            }
            if sc.h3 {
                continue;
            }
            while let Some(id) = conn.accept(Dir::Bi) {
                sc.streams.insert(id, Response::default());
                sc.served = true;
            }
            sc.streams
                .retain(|&id, r| serve(conn, id, r, &mut self.scratch));
            endpoint.after_connection_call(sc.handle);
        }
        for note in self.h3.step(endpoint, now) {
            log(&mut self.events, now, note);
        }
    }
}

/// Reads the request and writes as much of the response as the stream
/// takes. Returns false once the stream is finished in both directions.
fn serve(conn: &mut Connection, id: StreamId, r: &mut Response, scratch: &mut [u8]) -> bool {
    while !r.request_fin {
        match conn.read(id, scratch) {
            Ok(Some(n)) => {
                let take = n.min(8 - r.request_len);
                r.request[r.request_len..r.request_len + take].copy_from_slice(&scratch[..take]);
                r.request_len += take;
            }
            Ok(None) => r.request_fin = true,
            Err(mpquic_proto::ReadError::Blocked) => break,
            Err(_) => {
                r.request_fin = true;
                r.finished = true;
            }
        }
    }
    let Some(size) = r.size() else {
        if r.request_fin && !r.finished {
            // Malformed request: refuse it.
            let _ = conn.reset(id, 1);
            r.finished = true;
        }
        return !(r.request_fin && r.finished);
    };
    let pat = pattern();
    while r.written < size && !r.finished {
        let off = (r.written % PATTERN_PERIOD as u64) as usize;
        let n = (PATTERN_PERIOD - off)
            .min(WRITE_CHUNK)
            .min(usize::try_from(size - r.written).unwrap_or(usize::MAX));
        // The pattern is static: hand out slices of it without copying, so
        // the only copy of response data is the one into each packet.
        match conn.write_bytes(id, Bytes::from_static(&pat[off..off + n])) {
            Ok(k) if k > 0 => r.written += k as u64,
            Ok(_) | Err(mpquic_proto::WriteError::Blocked) => break,
            Err(_) => r.finished = true,
        }
    }
    if r.written == size && !r.finished {
        r.finished = true;
        let _ = conn.finish(id);
    }
    !(r.request_fin && r.finished)
}
