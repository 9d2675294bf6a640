//! DATAGRAM frames (RFC 9221): unreliable application datagrams.
//!
//! - Negotiation (RFC 9221 §3): with [`TransportConfig::datagram_receive_buffer`] set we
//!   advertise `max_datagram_frame_size` ([`MAX_DATAGRAM_FRAME_SIZE`], or the buffer size if it
//!   is smaller); the peer may send DATAGRAM frames only then, and none larger. We send only to
//!   a peer that advertised a non-zero value, and no frame larger than it.
//! - Sending: [`Connection::send_datagram`] queues the payload; the next data packet takes it,
//!   on the path the scheduler picks for new data (the same choice as stream data, whatever
//!   the space layout), within the path's congestion window (§5.4). Each datagram is written
//!   into exactly one packet and never again: a lost packet's DATAGRAM frames are counted, not
//!   queued again (§5.2), and neither PTO probes, XLINK re-injection nor the redundant
//!   scheduler copy them (they copy stream frames only).
//! - Receiving: [`Connection::recv_datagram`] hands them to the application in arrival order;
//!   [`Event::DatagramReceived`] announces that the queue is no longer empty.
//! - Buffers: both queues are bounded in payload bytes and drop their oldest datagram when a
//!   new one does not fit, as quinn does (§5: an endpoint may drop DATAGRAM frames it cannot
//!   deliver).
//!
//! [`TransportConfig::datagram_receive_buffer`]: crate::config::TransportConfig::datagram_receive_buffer
//! [`Event::DatagramReceived`]: super::Event::DatagramReceived

use std::collections::VecDeque;

use bytes::Bytes;
use mpquic_wire::cid::MAX_CID_LEN;
use mpquic_wire::error::TransportErrorCode;
use mpquic_wire::frame::{datagram_frame_header_len, max_datagram_payload, ty, DatagramFrame};

use super::send::TAG_LEN;
use super::{Connection, Event};
use crate::error::TransportError;
use crate::path::PathId;
use crate::sent_frames::SentFrames;

/// The max_datagram_frame_size we advertise when receiving is enabled: RFC 9221 §3 recommends
/// 65535 ("any DATAGRAM frame that fits inside a QUIC packet"); quinn sends the same.
pub(super) const MAX_DATAGRAM_FRAME_SIZE: u64 = 65535;

/// What a queued received datagram costs beyond its payload (its `Bytes` handle in the queue).
/// Charged against the receive buffer so that empty or tiny datagrams cannot queue without
/// bound: a buffer counted in payload bytes alone never fills with empty ones.
const QUEUED_DATAGRAM_OVERHEAD: usize = std::mem::size_of::<Bytes>();

fn queued_cost(data: &Bytes) -> usize {
    data.len() + QUEUED_DATAGRAM_OVERHEAD
}

/// Largest packet number length (RFC 9000 §17.1), assumed by [`Connection::max_datagram_size`].
const MAX_PN_LEN: usize = 4;

/// Why [`Connection::send_datagram`] refused a datagram (quinn's `SendDatagramError`, minus
/// `Blocked`: a full send buffer drops its oldest datagram instead).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendDatagramError {
    /// The peer did not advertise max_datagram_frame_size (RFC 9221 §3), or its transport
    /// parameters have not arrived yet.
    #[error("the peer does not support datagrams")]
    UnsupportedByPeer,
    /// Datagrams are disabled locally ([`TransportConfig::datagram_receive_buffer`] is None).
    ///
    /// [`TransportConfig::datagram_receive_buffer`]: crate::config::TransportConfig::datagram_receive_buffer
    #[error("datagram support is disabled locally")]
    Disabled,
    /// Larger than [`Connection::max_datagram_size`] or than the send buffer.
    #[error("datagram too large")]
    TooLarge,
    /// The connection is closing, draining or gone.
    #[error("the connection is closed")]
    ConnectionClosed,
}

/// Datagram counters of a connection (RFC 9221). A datagram is sent at most once, so `sent`
/// equals the application's accepted datagrams minus `send_dropped` minus those still queued.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct DatagramStats {
    /// DATAGRAM frames sent.
    pub sent: u64,
    /// Payload bytes of the DATAGRAM frames sent.
    pub bytes_sent: u64,
    /// Of `sent`, in packets the peer acknowledged.
    pub acked: u64,
    /// Of `sent`, in packets declared lost (or given up with their path); never resent. A
    /// loss found spurious later is not taken back.
    pub lost: u64,
    /// Queued by the application but dropped unsent: the send buffer was full (the oldest is
    /// dropped), or no packet of the path it was scheduled on could hold it.
    pub send_dropped: u64,
    /// DATAGRAM frames received.
    pub received: u64,
    /// Payload bytes of the DATAGRAM frames received.
    pub bytes_received: u64,
    /// Received but dropped because the receive buffer was full (the oldest is dropped).
    pub recv_dropped: u64,
}

/// The two datagram queues of a connection.
#[derive(Debug, Default)]
pub(crate) struct DatagramState {
    outgoing: VecDeque<Bytes>,
    outgoing_bytes: usize,
    incoming: VecDeque<Bytes>,
    /// What `incoming` is charged: payload plus [`QUEUED_DATAGRAM_OVERHEAD`] per datagram.
    incoming_bytes: usize,
    /// The oldest outgoing datagram did not fit behind the other frames (ACKs, control) of a
    /// data packet: the next data packet writes it first, so a datagram of
    /// [`Connection::max_datagram_size`] cannot be held back for ever by ACKs that ride along.
    head_deferred: bool,
}

impl DatagramState {
    fn pop_outgoing(&mut self) -> Option<Bytes> {
        let data = self.outgoing.pop_front()?;
        self.outgoing_bytes -= data.len();
        Some(data)
    }
}

/// The max_datagram_frame_size to advertise for a receive buffer (0 = not offered).
pub(crate) fn advertised_frame_size(receive_buffer: Option<usize>) -> u64 {
    receive_buffer.map_or(0, |b| {
        MAX_DATAGRAM_FRAME_SIZE.min(u64::try_from(b).unwrap_or(u64::MAX))
    })
}

impl Connection {
    /// Queue an unreliable datagram for the peer (RFC 9221). It goes out once, in the next data
    /// packet a path's congestion window admits, and is never retransmitted.
    ///
    /// When the queued payload would exceed [`TransportConfig::datagram_send_buffer`] the
    /// oldest queued datagrams are dropped (counted in [`DatagramStats::send_dropped`]), as
    /// quinn's `send_datagram` does. A datagram larger than the send buffer itself is
    /// [`SendDatagramError::TooLarge`], like one larger than [`Connection::max_datagram_size`].
    ///
    /// [`TransportConfig::datagram_send_buffer`]: crate::config::TransportConfig::datagram_send_buffer
    pub fn send_datagram(&mut self, data: Bytes) -> Result<(), SendDatagramError> {
        if !self.state_allows_data() {
            return Err(SendDatagramError::ConnectionClosed);
        }
        if self.config.datagram_receive_buffer.is_none() {
            return Err(SendDatagramError::Disabled);
        }
        let max = self
            .max_datagram_size(None)
            .ok_or(SendDatagramError::UnsupportedByPeer)?;
        let limit = self.config.datagram_send_buffer;
        if data.len() > max.min(limit) {
            return Err(SendDatagramError::TooLarge);
        }
        while !self.datagrams.outgoing.is_empty()
            && self.datagrams.outgoing_bytes + data.len() > limit
        {
            self.datagrams.pop_outgoing();
            self.stats.datagram_frames.send_dropped += 1;
        }
        self.datagrams.outgoing_bytes += data.len();
        self.datagrams.outgoing.push_back(data);
        Ok(())
    }

    /// The oldest received datagram not yet read.
    pub fn recv_datagram(&mut self) -> Option<Bytes> {
        let data = self.datagrams.incoming.pop_front()?;
        self.datagrams.incoming_bytes -= queued_cost(&data);
        Some(data)
    }

    /// The largest datagram payload [`Connection::send_datagram`] accepts: what fits in one
    /// DATAGRAM frame within the peer's max_datagram_frame_size (RFC 9221 §3) and in one 1-RTT
    /// packet on `path` (our maximum UDP payload and the peer's max_udp_payload_size, less the
    /// short header with the path's destination CID and a 4-byte packet number, and the AEAD
    /// tag). With `path` None: the smallest over the active paths, so that the datagram fits
    /// whichever path the scheduler picks. None when the peer does not accept datagrams (or its
    /// transport parameters are not known yet) or the path is unknown.
    pub fn max_datagram_size(&self, path: Option<PathId>) -> Option<usize> {
        let peer_limit = self.peer_params.as_ref()?.max_datagram_frame_size;
        if peer_limit == 0 {
            return None;
        }
        let room = match path {
            Some(id) => {
                if !self.paths.contains_key(&id) {
                    return None;
                }
                self.datagram_frame_room(id)
            }
            None => self
                .paths
                .values()
                .filter(|p| p.is_active())
                .map(|p| self.datagram_frame_room(p.id))
                .min()
                .unwrap_or_else(|| self.datagram_frame_room(PathId::ZERO)),
        };
        max_datagram_payload(room.min(usize::try_from(peer_limit).unwrap_or(usize::MAX)))
    }

    /// Room for frames in a 1-RTT packet on `path` (see [`Connection::max_datagram_size`]).
    fn datagram_frame_room(&self, path: PathId) -> usize {
        let dcid_len = self
            .remote_cids
            .get(&path)
            .and_then(|c| c.current())
            .map_or(MAX_CID_LEN, |c| c.len());
        self.max_udp_payload(path)
            .saturating_sub(1 + dcid_len + MAX_PN_LEN + TAG_LEN)
    }

    /// Payload bytes [`Connection::send_datagram`] can queue before it drops old datagrams.
    pub fn datagram_send_buffer_space(&self) -> usize {
        self.config
            .datagram_send_buffer
            .saturating_sub(self.datagrams.outgoing_bytes)
    }

    pub(crate) fn has_pending_datagrams(&self) -> bool {
        !self.datagrams.outgoing.is_empty()
    }

    /// Payload bytes queued for sending (part of the scheduler's backlog).
    pub(crate) fn pending_datagram_bytes(&self) -> u64 {
        self.datagrams.outgoing_bytes as u64
    }

    /// Whether the next data packet must write the oldest datagram before anything else.
    pub(crate) fn datagram_head_deferred(&self) -> bool {
        self.datagrams.head_deferred && self.has_pending_datagrams()
    }

    /// Write queued datagrams (oldest first) into a 1-RTT data packet on `path` whose frames
    /// may extend to `limit`; with `head_only`, at most the oldest. Each leaves the queue for
    /// good: `sent` only counts them (RFC 9221 §5.2, no retransmission). Returns whether one
    /// was written.
    pub(crate) fn write_datagrams(
        &mut self,
        path: PathId,
        packet: &mut Vec<u8>,
        header_len: usize,
        limit: usize,
        sent: &mut SentFrames,
        head_only: bool,
    ) -> bool {
        // The room of this path's packets, whatever shares the datagram (coalesced packets, an
        // amplification limit): a datagram beyond it can never be sent on the path.
        let path_limit = self.max_udp_payload(path).saturating_sub(TAG_LEN);
        let mut wrote = 0u64;
        while let Some(front) = self.datagrams.outgoing.front() {
            let frame_len = datagram_frame_header_len(front.len(), true) + front.len();
            if packet.len() + frame_len > limit {
                if header_len + frame_len > path_limit {
                    // Only if the path's destination CID is longer than the one
                    // `max_datagram_size` assumed when the datagram was accepted.
                    self.datagrams.pop_outgoing();
                    self.stats.datagram_frames.send_dropped += 1;
                    continue;
                }
                // Held back by the packet's other frames, not by datagrams before it.
                if sent.datagrams == 0 {
                    self.datagrams.head_deferred = true;
                }
                break;
            }
            let Some(data) = self.datagrams.pop_outgoing() else {
                break;
            };
            let len = data.len() as u64;
            DatagramFrame { data }.encode_with_len(packet, true);
            self.datagrams.head_deferred = false;
            self.stats.datagram_frames.sent += 1;
            self.stats.datagram_frames.bytes_sent += len;
            sent.datagrams += 1;
            wrote += 1;
            if head_only {
                break;
            }
        }
        if let Some(p) = self.paths.get_mut(&path) {
            p.counters.datagram_frames_sent += wrote;
        }
        wrote > 0
    }

    /// A DATAGRAM frame of `wire_len` bytes arrived on `path` (RFC 9221 §3, §5).
    pub(crate) fn on_datagram_frame(
        &mut self,
        path: PathId,
        frame: DatagramFrame,
        wire_len: usize,
    ) -> Result<(), TransportError> {
        let advertised = self.local_params.max_datagram_frame_size;
        let violation = |reason: &str| {
            Err(TransportError::for_frame(
                TransportErrorCode::PROTOCOL_VIOLATION,
                ty::DATAGRAM_LEN,
                reason,
            ))
        };
        // RFC 9221 §3: "An endpoint that receives a DATAGRAM frame when it has not indicated
        // support via the transport parameter MUST terminate the connection with an error of
        // type PROTOCOL_VIOLATION."
        if advertised == 0 {
            return violation("DATAGRAM frame without max_datagram_frame_size advertised");
        }
        // RFC 9221 §3: the same for a frame larger than the value we sent.
        if wire_len as u64 > advertised {
            return violation("DATAGRAM frame larger than max_datagram_frame_size");
        }
        let len = frame.data.len();
        // A tiny datagram must not keep its whole received packet alive while it waits to be
        // read: copied out, as small stream pieces are.
        let data = crate::streams::assembler::detach_small(frame.data);
        let cost = queued_cost(&data);
        self.stats.datagram_frames.received += 1;
        self.stats.datagram_frames.bytes_received += len as u64;
        if let Some(p) = self.paths.get_mut(&path) {
            p.counters.datagram_frames_received += 1;
        }
        // Drop the oldest unread datagrams to make room (RFC 9221 §5 lets a receiver drop
        // them; quinn does the same).
        let limit = self.config.datagram_receive_buffer.unwrap_or(0);
        let queue = &mut self.datagrams;
        while !queue.incoming.is_empty() && queue.incoming_bytes + cost > limit {
            if let Some(old) = queue.incoming.pop_front() {
                queue.incoming_bytes -= queued_cost(&old);
            }
            self.stats.datagram_frames.recv_dropped += 1;
        }
        let was_empty = queue.incoming.is_empty();
        queue.incoming_bytes += cost;
        queue.incoming.push_back(data);
        if was_empty {
            self.events.push_back(Event::DatagramReceived);
        }
        Ok(())
    }

    /// `count` DATAGRAM frames sent on `path` were in packets declared lost or given up.
    pub(crate) fn on_datagrams_lost(&mut self, path: PathId, count: u64) {
        if count == 0 {
            return;
        }
        self.stats.datagram_frames.lost += count;
        if let Some(p) = self.paths.get_mut(&path) {
            p.counters.datagram_frames_lost += count;
        }
    }
}
