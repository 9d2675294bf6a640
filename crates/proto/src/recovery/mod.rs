//! Loss recovery per path (RFC 9002 §5–6), kept apart from congestion control: this module
//! decides which packets are acknowledged or lost and when probes are due; controllers only
//! receive the resulting events.
//!
//! Every path keeps its own ledger of sent packets per encryption level, indexed by a
//! *per-path sequence number* assigned at send time. Loss detection compares sequence numbers,
//! not packet numbers, so the same code serves both multipath designs: with per-path packet
//! number spaces (MPNS) the sequence order equals packet-number order; with one shared space
//! (SPNS) it implements the Alibaba report's rule (§2.1) that the packet threshold counts packets
//! sent *on the same path* before that path's largest acknowledged packet.

pub(crate) mod episode;
pub(crate) mod ledger;
pub(crate) mod ledgers;
pub(crate) mod reordering;
pub(crate) mod rtt;
pub(crate) mod sampling;

pub(crate) use episode::LossEpisode;
pub(crate) use ledger::{AckedOutcome, Ledger, LossCause, LossReference, LostPackets, SentPacket};
