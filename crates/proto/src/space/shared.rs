//! SPNS (Alibaba report §2; draft-ietf-quic-multipath-01 `enable_multipath` = 1): every path
//! numbers its packets in one shared application-data space. Packet numbers are unique
//! connection-wide, so the RFC 9001 nonce is safe and plain ACK frames acknowledge the space.

use mpquic_wire::transport_params::TransportParameters;

use super::{Design, SpaceId, SpaceLayout};
use crate::path::PathId;
use crate::spns_rules::SpnsRules;

/// One application-data space shared by every path.
#[derive(Debug)]
pub(crate) struct SharedSpace {
    rules: SpnsRules,
}

impl SharedSpace {
    pub(crate) fn new(rules: SpnsRules) -> Self {
        Self { rules }
    }
}

impl SpaceLayout for SharedSpace {
    fn space_for(&self, _path: PathId) -> SpaceId {
        SpaceId::Data(PathId::ZERO)
    }
    fn nonce_path_id(&self, _path: PathId) -> Option<u32> {
        None
    }
    fn ack_path_id(&self, _space: SpaceId) -> Option<u64> {
        None
    }
    fn space_of_ack(&self, path_id: Option<u64>) -> Option<SpaceId> {
        // PATH_ACK does not belong to this design: the receive path rejects the frame.
        path_id.is_none().then_some(SpaceId::Data(PathId::ZERO))
    }
    fn is_multipath(&self) -> bool {
        true
    }
    fn shares_spaces(&self) -> bool {
        true
    }
    fn gaps_signal_loss(&self) -> bool {
        // Paths interleave their packet numbers in the space: a gap is usually another path's
        // packets still on their way (report §2.4).
        false
    }
    fn space_retired_with(&self, _path: PathId) -> Option<SpaceId> {
        // The space outlives every path.
        None
    }
    fn peer_max_path_id(&self, peer: &TransportParameters) -> Option<PathId> {
        // initial_max_path_id is not sent in `spns` mode (it would make a standard peer choose
        // MPNS): the limit travels in mpquic's spns_max_path_id, so that CIDs for more paths
        // ride with the server's first flight as in MPNS (docs/MULTIPATH.md).
        peer.spns_max_path_id.map(PathId::from_wire_saturating)
    }
    fn grants_path_ids_by_frame(&self, peer: &TransportParameters) -> bool {
        // A peer without spns_max_path_id (an mpquic before it) learns our limit from a
        // MAX_PATH_ID frame after the handshake, and grants us its own that way.
        peer.spns_max_path_id.is_none()
    }
    fn report_rules(&self) -> &SpnsRules {
        &self.rules
    }
    fn design(&self) -> Design {
        Design::Spns
    }
}
