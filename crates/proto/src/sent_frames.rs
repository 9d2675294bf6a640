//! What a sent packet carried that may need retransmission or acknowledgement processing
//! (RFC 9000 §13.3: information, not packets, is retransmitted).

use std::ops::{Range, RangeInclusive};

use crate::path::PathId;
use crate::streams::SentStreamFrames;

/// Path-management frames a packet carried (RFC 10069 §7), resent if lost and still current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PathFrame {
    /// PATH_ABANDON for a path ID.
    Abandon(PathId),
    /// PATH_STATUS_* for a path ID.
    Status(PathId),
    /// MAX_PATH_ID.
    MaxPathId,
    /// PATH_NEW_CONNECTION_ID (or NEW_CONNECTION_ID for path 0) with this sequence number.
    NewCid { path: PathId, sequence: u64 },
    /// PATH_RETIRE_CONNECTION_ID (or RETIRE_CONNECTION_ID) with this sequence number.
    RetireCid { path: PathId, sequence: u64 },
}

/// The retransmittable contents of one sent packet.
#[derive(Debug, Clone, Default)]
pub(crate) struct SentFrames {
    /// CRYPTO data ranges of this packet's encryption level.
    pub crypto: Vec<Range<u64>>,
    /// Stream frames and stream-related control frames.
    pub streams: SentStreamFrames,
    /// Path management frames.
    pub path_frames: Vec<PathFrame>,
    /// HANDSHAKE_DONE was sent.
    pub handshake_done: bool,
    /// NEW_TOKEN was sent (RFC 9000 §19.7).
    pub new_token: bool,
    /// ACK_FREQUENCY with this sequence number was sent (draft-ietf-quic-ack-frequency).
    pub ack_frequency: Option<u64>,
    /// ACK frames: (space, the ranges the frame reported). Once the packet is acknowledged
    /// they need not be repeated (RFC 9000 §13.2.4) — only they: packets that arrived later in
    /// the gaps between them (a slower path's, in a shared space) were not reported.
    /// Inline: a packet carries at most one ACK frame per space, almost always one.
    pub acks: smallvec::SmallVec<[(crate::space::SpaceId, Vec<RangeInclusive<u64>>); 1]>,
    /// DATAGRAM frames the packet carried: counted when it is acknowledged or lost, never
    /// resent (RFC 9221 §5.2), so they do not make the packet non-empty.
    pub datagrams: u64,
    /// A path MTU probe (RFC 9000 §14.4): its loss is reported to path MTU discovery, not to
    /// the congestion controller.
    pub mtu_probe: bool,
}

impl SentFrames {
    /// Whether losing this packet loses nothing that must be sent again.
    #[cfg(test)]
    pub(crate) fn is_empty(&self) -> bool {
        self.crypto.is_empty()
            && self.streams.is_empty()
            && self.path_frames.is_empty()
            && !self.handshake_done
            && !self.new_token
            && self.ack_frequency.is_none()
    }
}
