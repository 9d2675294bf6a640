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
    fn peer_max_path_id(&self, _peer: &TransportParameters) -> Option<PathId> {
        // initial_max_path_id is not sent: it would make a standard peer choose MPNS.
        None
    }
    fn grants_path_ids_by_frame(&self) -> bool {
        // Path IDs are granted by MAX_PATH_ID frames after the handshake (docs/MULTIPATH.md).
        true
    }
    fn report_rules(&self) -> &SpnsRules {
        &self.rules
    }
    fn design(&self) -> Design {
        Design::Spns
    }
}
