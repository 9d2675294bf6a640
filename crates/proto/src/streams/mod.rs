//! Streams and flow control (RFC 9000 §2–4, frames §19.4–19.14).
//!
//! [`Streams`] owns every stream of a connection: the application side (open,
//! accept, write, read, finish, reset, stop), the handlers for stream-related frames
//! received from the peer, and the writers of stream-related frames into 1-RTT
//! packets, with acknowledgement and loss feedback through [`SentStreamFrames`].
//!
//! Design notes:
//! - **Send credit is reserved at write time.** `write` accepts at most
//!   `min(send buffer room, stream credit, connection credit)` bytes, so every
//!   buffered byte is within the peer's limits (RFC 9000 §4.1 "Senders MUST NOT send
//!   data in excess of either limit") and the packet builder never has to check
//!   flow control. Resetting a stream returns the credit of never-sent bytes.
//! - **Queues, no scans.** Streams with data to send are kept in queues by priority,
//!   round robin within one ([`pending`]; retransmissions first); control frames wait in
//!   per-kind queues. Each packet costs O(frames written + priority levels), independent
//!   of the number of streams.
//! - **Zero-copy data path.** Stream data is copied once from the application into
//!   a [`SendBuffer`] and once from there into the packet; received data is kept as
//!   slices of the packet payload in the [`Assembler`] until read.
//! - **Receive windows auto-tune** ([`flow`]): updates are sent when half a window
//!   has been consumed, and the window doubles (up to `max_window`) when updates
//!   come less than two RTTs apart.
//! - Terminal states ("Data Recvd", "Reset Recvd", "Data Read", "Reset Read") remove
//!   the stream part; when both parts of a peer-initiated stream are gone, the peer
//!   gets one more stream of credit through MAX_STREAMS (RFC 9000 §4.6). The
//!   application must therefore finish (or reset) the sending part of every accepted
//!   bidirectional stream, and read (or stop) every receiving part. Frames for
//!   removed ("closed") streams are ignored; the final size of a closed stream is
//!   not remembered, so FINAL_SIZE_ERROR is only detected on live streams (RFC 9000
//!   §4.5 makes this a SHOULD for exactly this reason).
//! - *_BLOCKED frames are sent once per limit value, when a write is cut short by the
//!   peer's limit; they are not repeated periodically (RFC 9000 §4.1 SHOULD, for
//!   idle-timeout avoidance, is left to the connection's keep-alive).

mod app;
// `pub` items: the crate root's `testing` module re-exports the assembler for benchmarks.
#[cfg_attr(not(any(test, feature = "testing")), allow(unreachable_pub))]
pub(crate) mod assembler;
pub(crate) mod flow;
mod incoming;
mod outgoing;
mod pending;
mod ranges;
mod recv;
mod send;
pub(crate) mod send_buffer;
#[cfg(test)]
mod tests;

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use mpquic_wire::stream_id::{Dir, Side, StreamId};
use mpquic_wire::transport_params::TransportParameters;

pub(crate) use assembler::Assembler;
pub(crate) use flow::RecvWindow;
pub(crate) use send_buffer::SendBuffer;

use pending::PendingStreams;
use recv::RecvStream;
use send::SendStream;

/// Largest stream count in MAX_STREAMS and transport parameters (RFC 9000 §4.6).
pub(crate) const MAX_STREAM_COUNT: u64 = 1 << 60;

/// Stream and flow-control limits of one endpoint.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct StreamsConfig {
    /// Initial connection receive window (initial_max_data).
    pub max_data: u64,
    /// Initial receive window of bidirectional streams we open.
    pub max_stream_data_bidi_local: u64,
    /// Initial receive window of bidirectional streams the peer opens.
    pub max_stream_data_bidi_remote: u64,
    /// Initial receive window of unidirectional streams the peer opens.
    pub max_stream_data_uni: u64,
    /// Bidirectional streams the peer may have open (initial_max_streams_bidi; the
    /// credit is renewed as streams close).
    pub max_streams_bidi: u64,
    /// Unidirectional streams the peer may have open.
    pub max_streams_uni: u64,
    /// Bytes buffered per stream (written, not yet acknowledged) before `write`
    /// blocks.
    pub send_buffer: u64,
    /// Auto-tuning ceiling of receive windows, stream and connection.
    pub max_window: u64,
}

impl Default for StreamsConfig {
    /// 1.5 MB stream windows and a 3 MB connection window, both growing up to 16 MB;
    /// 100 streams of each type; 4 MB of send buffer per stream.
    fn default() -> Self {
        const STREAM_WINDOW: u64 = 1_536 * 1024;
        Self {
            max_data: 2 * STREAM_WINDOW,
            max_stream_data_bidi_local: STREAM_WINDOW,
            max_stream_data_bidi_remote: STREAM_WINDOW,
            max_stream_data_uni: STREAM_WINDOW,
            max_streams_bidi: 100,
            max_streams_uni: 100,
            send_buffer: 4 * 1024 * 1024,
            max_window: 16 * 1024 * 1024,
        }
    }
}

/// Something the application should know about, from `Streams::poll_event`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEvent {
    /// The peer opened new streams of this direction: call `Streams::accept`.
    Opened {
        /// Direction of the new streams.
        dir: Dir,
    },
    /// Data, the end of the stream or a reset can be read.
    Readable {
        /// The readable stream.
        id: StreamId,
    },
    /// A stream whose last write was refused or short can take more data.
    Writable {
        /// The writable stream.
        id: StreamId,
    },
    /// All our data on the stream, including FIN, was acknowledged.
    Finished {
        /// The finished stream.
        id: StreamId,
    },
    /// The peer sent STOP_SENDING; the stream was reset with its error code.
    Stopped {
        /// The stopped stream.
        id: StreamId,
        /// The application error code of the STOP_SENDING (copied into RESET_STREAM).
        error_code: u64,
    },
    /// The peer raised its stream limit after `Streams::open` returned `None`.
    Available {
        /// Direction in which streams can be opened again.
        dir: Dir,
    },
}

/// Errors of the application's writing operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    /// No data could be accepted now (send buffer full or no flow-control credit);
    /// a `Writable` event follows when there is room.
    #[error("stream blocked")]
    Blocked,
    /// The peer asked us to stop sending (STOP_SENDING); the stream was reset.
    #[error("stopped by peer with code {0}")]
    Stopped(u64),
    /// The stream was finished or reset, or is fully closed.
    #[error("closed stream")]
    ClosedStream,
    /// The stream does not exist or has no sending part.
    #[error("unknown stream")]
    UnknownStream,
}

/// Errors of the application's reading operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// No data available yet; a `Readable` event follows.
    #[error("no data available")]
    Blocked,
    /// The peer reset the stream with this error code.
    #[error("reset by peer with code {0}")]
    Reset(u64),
    /// The stream was fully read, its reset already reported, or reading was stopped.
    #[error("closed stream")]
    ClosedStream,
    /// The stream does not exist or has no receiving part.
    #[error("unknown stream")]
    UnknownStream,
}

/// A range of stream data (and possibly its FIN) carried by a sent packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct StreamChunk {
    /// The stream.
    pub id: StreamId,
    /// Offset of the first byte.
    pub offset: u64,
    /// Number of bytes (0 for a bare FIN).
    pub len: u64,
    /// Whether the frame carried the FIN.
    pub fin: bool,
}

/// The STREAM frames of one packet.
pub(crate) type StreamChunks = smallvec::SmallVec<[StreamChunk; 1]>;

/// The stream-related frames a packet carried, for acknowledgement and loss
/// processing ([`Streams::on_frames_acked`], [`Streams::on_frames_lost`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SentStreamFrames {
    /// STREAM frames (contiguous chunks of one stream are merged). Inline: almost every
    /// packet carries one chunk, and this saves an allocation per data packet sent.
    pub stream: StreamChunks,
    /// A MAX_DATA frame.
    pub max_data: bool,
    /// MAX_STREAM_DATA frames, by stream.
    pub max_stream_data: Vec<StreamId>,
    /// A MAX_STREAMS frame for bidirectional streams.
    pub max_streams_bidi: bool,
    /// A MAX_STREAMS frame for unidirectional streams.
    pub max_streams_uni: bool,
    /// A DATA_BLOCKED frame.
    pub data_blocked: bool,
    /// STREAM_DATA_BLOCKED frames, by stream.
    pub stream_data_blocked: Vec<StreamId>,
    /// STREAMS_BLOCKED frames, indexed by `Dir as usize`.
    pub streams_blocked: [bool; 2],
    /// RESET_STREAM frames, by stream.
    pub reset_stream: Vec<StreamId>,
    /// STOP_SENDING frames, by stream.
    pub stop_sending: Vec<StreamId>,
}

impl SentStreamFrames {
    /// Whether no stream-related frame was recorded.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.stream.is_empty() && !self.has_control()
    }

    /// Whether a flow-control or stream-state control frame was recorded.
    #[cfg(test)]
    pub(crate) fn has_control(&self) -> bool {
        self.max_data
            || !self.max_stream_data.is_empty()
            || self.max_streams_bidi
            || self.max_streams_uni
            || self.data_blocked
            || !self.stream_data_blocked.is_empty()
            || self.streams_blocked.iter().any(|&b| b)
            || !self.reset_stream.is_empty()
            || !self.stop_sending.is_empty()
    }

    /// Records a chunk, merging it with the previous one when contiguous.
    fn push_chunk(&mut self, c: StreamChunk) {
        if let Some(last) = self.stream.last_mut() {
            if last.id == c.id && !last.fin && last.offset + last.len == c.offset {
                last.len += c.len;
                last.fin = c.fin;
                return;
            }
        }
        self.stream.push(c);
    }
}

/// Counters over the connection's lifetime.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StreamStats {
    /// Bytes accepted by `write`.
    pub bytes_written: u64,
    /// Bytes returned by `read`.
    pub bytes_read: u64,
    /// Stream bytes sent for the first time.
    pub bytes_sent: u64,
    /// Stream bytes sent again after loss (or re-injection).
    pub bytes_retransmitted: u64,
    /// Distinct stream bytes received (duplicates excluded).
    pub bytes_received: u64,
    /// Streams we opened.
    pub streams_opened_local: u64,
    /// Streams the peer opened (including implicitly opened ones).
    pub streams_opened_remote: u64,
}

/// Bookkeeping of the streams we open, per direction.
#[derive(Debug, Default)]
struct LocalStreams {
    /// Index of the next stream to open.
    next: u64,
    /// The peer's limit (initial_max_streams_* or MAX_STREAMS).
    max: u64,
    /// `open` failed since the last limit increase.
    open_blocked: bool,
    /// A STREAMS_BLOCKED must be sent.
    blocked_pending: bool,
    /// The limit a STREAMS_BLOCKED was already queued for.
    blocked_reported: Option<u64>,
}

/// Bookkeeping of the streams the peer opens, per direction.
#[derive(Debug, Default)]
struct RemoteStreams {
    /// Index of the next stream the peer may open (all lower ones exist or existed).
    next: u64,
    /// Index of the next stream to hand out from `accept`.
    accepted: u64,
    /// Our limit (cumulative count; grows as streams close).
    max: u64,
    /// A MAX_STREAMS must be sent.
    pending: bool,
}

/// Initial send credit per stream type, from the peer's transport parameters.
#[derive(Debug, Default, Clone, Copy)]
struct PeerStreamLimits {
    bidi_local: u64,
    bidi_remote: u64,
    uni: u64,
}

/// All streams of a connection and both directions of flow control.
#[derive(Debug)]
pub(crate) struct Streams {
    side: Side,
    config: StreamsConfig,
    send: FxHashMap<StreamId, SendStream>,
    recv: FxHashMap<StreamId, RecvStream>,
    /// Indexed by `Dir as usize`.
    local: [LocalStreams; 2],
    remote: [RemoteStreams; 2],
    peer_limits: PeerStreamLimits,
    // Connection-level send credit (RFC 9000 §4.1).
    peer_max_data: u64,
    /// Bytes written on all streams (minus those released by resets).
    data_written: u64,
    data_blocked_pending: bool,
    data_blocked_reported: Option<u64>,
    /// Streams whose writes were limited by connection credit.
    conn_blocked: Vec<StreamId>,
    // Connection-level receive credit (RFC 9000 §4.1).
    conn_window: RecvWindow,
    /// Sum of the highest received offsets of all streams (RFC 9000 §4.1, §4.5).
    data_recvd: u64,
    max_data_pending: bool,
    // Queues.
    retx_queue: PendingStreams,
    send_queue: PendingStreams,
    msd_queue: VecDeque<StreamId>,
    blocked_queue: VecDeque<StreamId>,
    reset_queue: VecDeque<StreamId>,
    stop_queue: VecDeque<StreamId>,
    events: VecDeque<StreamEvent>,
    stats: StreamStats,
    /// Pieces held by all receiving parts' assemblers, kept exact at every change (insert,
    /// read, clear, removal) for the connection-wide fragmentation bound (`incoming.rs`).
    reassembly_pieces: usize,
    /// The highest DATA_BLOCKED limit already judged for window growth (`incoming.rs`).
    data_blocked_judged: Option<u64>,
}

impl Streams {
    /// Streams of the endpoint `side`, enforcing `config` on the peer.
    pub(crate) fn new(side: Side, config: StreamsConfig) -> Self {
        let mut remote: [RemoteStreams; 2] = Default::default();
        remote[Dir::Bi as usize].max = config.max_streams_bidi.min(MAX_STREAM_COUNT);
        remote[Dir::Uni as usize].max = config.max_streams_uni.min(MAX_STREAM_COUNT);
        Self {
            side,
            conn_window: RecvWindow::new(config.max_data, config.max_window),
            config,
            send: FxHashMap::default(),
            recv: FxHashMap::default(),
            local: Default::default(),
            remote,
            peer_limits: PeerStreamLimits::default(),
            peer_max_data: 0,
            data_written: 0,
            data_blocked_pending: false,
            data_blocked_reported: None,
            conn_blocked: Vec::new(),
            data_recvd: 0,
            max_data_pending: false,
            retx_queue: PendingStreams::default(),
            send_queue: PendingStreams::default(),
            msd_queue: VecDeque::new(),
            blocked_queue: VecDeque::new(),
            reset_queue: VecDeque::new(),
            stop_queue: VecDeque::new(),
            events: VecDeque::new(),
            stats: StreamStats::default(),
            reassembly_pieces: 0,
            data_blocked_judged: None,
        }
    }

    /// Writes our initial limits into our transport parameters (RFC 9000 §18.2).
    pub(crate) fn fill_transport_params(&self, tp: &mut TransportParameters) {
        tp.initial_max_data = self.config.max_data;
        tp.initial_max_stream_data_bidi_local = self.config.max_stream_data_bidi_local;
        tp.initial_max_stream_data_bidi_remote = self.config.max_stream_data_bidi_remote;
        tp.initial_max_stream_data_uni = self.config.max_stream_data_uni;
        tp.initial_max_streams_bidi = self.remote[Dir::Bi as usize].max;
        tp.initial_max_streams_uni = self.remote[Dir::Uni as usize].max;
    }

    /// Applies the peer's initial limits (RFC 9000 §18.2): connection credit, credit of
    /// each stream type, and how many streams we may open. Limits only grow, so this
    /// is safe after remembered 0-RTT parameters were applied.
    pub(crate) fn set_peer_params(&mut self, tp: &TransportParameters) {
        self.on_max_data(tp.initial_max_data);
        // initial_max_stream_data_bidi_local applies to streams the *peer* opens;
        // _bidi_remote to bidirectional streams we open; _uni to our unidirectional ones.
        self.peer_limits = PeerStreamLimits {
            bidi_local: tp.initial_max_stream_data_bidi_local,
            bidi_remote: tp.initial_max_stream_data_bidi_remote,
            uni: tp.initial_max_stream_data_uni,
        };
        let ids: Vec<StreamId> = self.send.keys().copied().collect();
        for id in ids {
            let credit = self.initial_send_credit(id);
            self.raise_stream_credit(id, credit);
        }
        // Values above 2^60 are rejected by the transport parameter decoder
        // (RFC 9000 §4.6 TRANSPORT_PARAMETER_ERROR); clamp defensively.
        for (dir, count) in [
            (Dir::Bi, tp.initial_max_streams_bidi),
            (Dir::Uni, tp.initial_max_streams_uni),
        ] {
            self.raise_stream_limit(dir, count.min(MAX_STREAM_COUNT));
        }
    }

    /// Whether what was already written and opened breaks these initial limits of the peer.
    /// After a rejected 0-RTT the client resends everything under the server's new parameters
    /// (RFC 9001 §4.6.2), which may be lower than the remembered ones the writes were allowed
    /// by; buffered data cannot be taken back, so such a connection cannot continue.
    pub(crate) fn exceeds_peer_params(&self, tp: &TransportParameters) -> bool {
        if self.data_written > tp.initial_max_data {
            return true;
        }
        let counts = [
            (Dir::Bi, tp.initial_max_streams_bidi),
            (Dir::Uni, tp.initial_max_streams_uni),
        ];
        if counts
            .iter()
            .any(|&(dir, max)| self.local[dir as usize].next > max)
        {
            return true;
        }
        self.send.iter().any(|(id, s)| {
            let limit = match (id.initiator() == self.side, id.dir()) {
                (true, Dir::Bi) => tp.initial_max_stream_data_bidi_remote,
                (true, Dir::Uni) => tp.initial_max_stream_data_uni,
                (false, _) => tp.initial_max_stream_data_bidi_local,
            };
            s.buf.end() > limit
        })
    }

    /// Lifetime counters.
    pub(crate) fn stats(&self) -> &StreamStats {
        &self.stats
    }

    /// The connection-level receive window size (after auto-tuning).
    #[cfg(test)]
    pub(crate) fn local_data_window(&self) -> u64 {
        self.conn_window.window()
    }

    /// The receive window size of stream `id`, if it has a live receiving part.
    #[cfg(test)]
    pub(crate) fn stream_recv_window(&self, id: StreamId) -> Option<u64> {
        self.recv.get(&id).map(|r| r.window.window())
    }

    /// The peer's connection-level limit and how much of it our writes reserved.
    #[cfg(test)]
    pub(crate) fn send_credit(&self) -> (u64, u64) {
        (self.peer_max_data, self.data_written)
    }

    /// Number of streams with live state (sending or receiving part).
    #[cfg(test)]
    pub(crate) fn live_streams(&self) -> usize {
        self.send.len()
            + self
                .recv
                .keys()
                .filter(|id| !self.send.contains_key(id))
                .count()
    }

    /// The send credit a new sending part of `id` starts with.
    fn initial_send_credit(&self, id: StreamId) -> u64 {
        match (id.initiator() == self.side, id.dir()) {
            (true, Dir::Bi) => self.peer_limits.bidi_remote,
            (true, Dir::Uni) => self.peer_limits.uni,
            (false, _) => self.peer_limits.bidi_local,
        }
    }

    /// Creates the parts of a new stream with their initial windows and credit.
    fn create_stream(&mut self, id: StreamId) {
        let local = id.initiator() == self.side;
        let has_send = local || id.dir() == Dir::Bi;
        let recv_window = match (local, id.dir()) {
            (true, Dir::Bi) => Some(self.config.max_stream_data_bidi_local),
            (true, Dir::Uni) => None,
            (false, Dir::Bi) => Some(self.config.max_stream_data_bidi_remote),
            (false, Dir::Uni) => Some(self.config.max_stream_data_uni),
        };
        if has_send {
            let credit = self.initial_send_credit(id);
            self.send.insert(id, SendStream::new(credit));
        }
        if let Some(window) = recv_window {
            self.recv
                .insert(id, RecvStream::new(window, self.config.max_window));
        }
    }

    /// Whether stream `id` was created at some point (by us or by the peer).
    fn was_created(&self, id: StreamId) -> bool {
        let d = id.dir() as usize;
        if id.initiator() == self.side {
            id.index() < self.local[d].next
        } else {
            id.index() < self.remote[d].next
        }
    }

    /// Removes the sending part of `id` (terminal state reached).
    fn remove_send(&mut self, id: StreamId) {
        if self.send.remove(&id).is_some() {
            self.on_part_removed(id);
        }
    }

    /// Removes the receiving part of `id` (terminal state reached or reading stopped).
    fn remove_recv(&mut self, id: StreamId) {
        if let Some(r) = self.recv.remove(&id) {
            self.on_pieces_changed(r.assembler.chunk_count(), 0);
            self.on_part_removed(id);
        }
    }

    /// An assembler went from `before` to `after` pieces.
    fn on_pieces_changed(&mut self, before: usize, after: usize) {
        self.reassembly_pieces = (self.reassembly_pieces + after).saturating_sub(before);
    }

    /// The pieces all assemblers hold, counted afresh (tests check the running count).
    #[cfg(test)]
    pub(crate) fn recount_pieces(&self) -> (usize, usize) {
        let counted = self.recv.values().map(|r| r.assembler.chunk_count()).sum();
        (self.reassembly_pieces, counted)
    }

    /// When both parts of a peer-initiated stream are gone, the peer may open one
    /// more stream of that type (RFC 9000 §4.6).
    fn on_part_removed(&mut self, id: StreamId) {
        if id.initiator() == self.side || self.send.contains_key(&id) || self.recv.contains_key(&id)
        {
            return;
        }
        let r = &mut self.remote[id.dir() as usize];
        if r.max < MAX_STREAM_COUNT {
            r.max += 1;
            r.pending = true;
        }
    }
}
