//! Single path (RFC 9000): one application-data space, RFC 9001 nonce, ACK frames.

use mpquic_wire::transport_params::TransportParameters;

use super::{Design, SpaceId, SpaceLayout};
use crate::path::PathId;
use crate::spns_rules::SpnsRules;

/// The layout of a connection without multipath (also every connection before its transport
/// parameters are negotiated).
#[derive(Debug)]
pub(crate) struct SinglePath {
    rules: SpnsRules,
}

impl SinglePath {
    pub(crate) fn new(rules: SpnsRules) -> Self {
        Self { rules }
    }
}

impl SpaceLayout for SinglePath {
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
        // PATH_ACK does not belong to this layout: the receive path rejects the frame.
        path_id.is_none().then_some(SpaceId::Data(PathId::ZERO))
    }
    fn is_multipath(&self) -> bool {
        false
    }
    fn shares_spaces(&self) -> bool {
        // Path 0 is the only path.
        false
    }
    fn gaps_signal_loss(&self) -> bool {
        // One path: every gap is reordering or loss on it (RFC 9000 §13.2.1).
        true
    }
    fn space_retired_with(&self, _path: PathId) -> Option<SpaceId> {
        None
    }
    fn peer_max_path_id(&self, _peer: &TransportParameters) -> Option<PathId> {
        None
    }
    fn grants_path_ids_by_frame(&self, _peer: &TransportParameters) -> bool {
        false
    }
    fn report_rules(&self) -> &SpnsRules {
        &self.rules
    }
    fn design(&self) -> Design {
        Design::Single
    }
}
