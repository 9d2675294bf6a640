//! MPNS, RFC 10069: one application-data space per path ID, the path ID in the nonce of every
//! 1-RTT packet (§2.4), PATH_ACK frames; an ACK frame acknowledges path 0 (§4.1).

use mpquic_wire::transport_params::TransportParameters;

use super::{Design, SpaceId, SpaceLayout};
use crate::path::PathId;
use crate::spns_rules::SpnsRules;

/// One space per path.
#[derive(Debug)]
pub(crate) struct PerPathSpaces {
    rules: SpnsRules,
}

impl PerPathSpaces {
    pub(crate) fn new(rules: SpnsRules) -> Self {
        Self { rules }
    }
}

impl SpaceLayout for PerPathSpaces {
    fn space_for(&self, path: PathId) -> SpaceId {
        SpaceId::Data(path)
    }
    fn nonce_path_id(&self, path: PathId) -> Option<u32> {
        Some(path.as_u32())
    }
    fn ack_path_id(&self, space: SpaceId) -> Option<u64> {
        match space {
            SpaceId::Data(path) => Some(u64::from(path)),
            _ => None,
        }
    }
    fn space_of_ack(&self, path_id: Option<u64>) -> Option<SpaceId> {
        match path_id {
            None => Some(SpaceId::Data(PathId::ZERO)),
            Some(id) => PathId::from_wire(id).map(SpaceId::Data),
        }
    }
    fn is_multipath(&self) -> bool {
        true
    }
    fn shares_spaces(&self) -> bool {
        false
    }
    fn gaps_signal_loss(&self) -> bool {
        // Each space has one path, so a gap is reordering or loss on it (RFC 9000 §13.2.1).
        true
    }
    fn space_retired_with(&self, path: PathId) -> Option<SpaceId> {
        // RFC 10069 §3.4: the path's space goes with it; path 0's space also numbers the
        // packets of the handshake's path and is kept.
        (path != PathId::ZERO).then_some(SpaceId::Data(path))
    }
    fn peer_max_path_id(&self, peer: &TransportParameters) -> Option<PathId> {
        // RFC 10069 §2.1: initial_max_path_id.
        Some(PathId::from_wire_saturating(
            peer.initial_max_path_id.unwrap_or(0),
        ))
    }
    fn grants_path_ids_by_frame(&self, _peer: &TransportParameters) -> bool {
        false
    }
    fn report_rules(&self) -> &SpnsRules {
        &self.rules
    }
    fn design(&self) -> Design {
        Design::Mpns
    }
}

#[cfg(test)]
mod tests {
    use super::super::negotiate::layout_for;
    use super::*;

    #[test]
    fn spns_shares_one_space_and_mpns_does_not() {
        let rules = SpnsRules::report();
        let (p0, p3) = (PathId::ZERO, PathId::new(3));
        let spns = layout_for(Design::Spns, rules);
        assert_eq!(spns.space_for(p0), spns.space_for(p3));
        assert_eq!(spns.nonce_path_id(p3), None);
        assert_eq!(spns.space_retired_with(p3), None);
        let mpns = layout_for(Design::Mpns, rules);
        assert_ne!(mpns.space_for(p0), mpns.space_for(p3));
        assert_eq!(mpns.nonce_path_id(p3), Some(3));
        assert_eq!(mpns.ack_path_id(SpaceId::Data(p3)), Some(3));
        assert_eq!(mpns.space_of_ack(None), Some(SpaceId::Data(p0)));
        assert_eq!(mpns.space_of_ack(Some(1 << 40)), None);
        assert_eq!(mpns.space_retired_with(p3), Some(SpaceId::Data(p3)));
        assert_eq!(mpns.space_retired_with(p0), None);
        assert_eq!(
            layout_for(Design::Single, rules).space_of_ack(Some(1)),
            None
        );
    }
}
