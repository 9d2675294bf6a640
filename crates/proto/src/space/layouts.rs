//! The three packet-number-space layouts.

use super::{Design, SpaceId, SpaceLayout};
use crate::path::PathId;

/// One application-data space for every path, RFC 9001 nonce, ACK frames. Two designs use it:
/// - single path (RFC 9000);
/// - SPNS: every path numbers its packets in the shared space (Alibaba report §2; draft-01
///   `enable_multipath` = 1). Packet numbers are unique connection-wide, so the RFC 9001 nonce
///   is safe and plain ACK frames acknowledge the shared space.
#[derive(Debug)]
pub struct OneSpace {
    design: Design,
}

impl OneSpace {
    /// RFC 9000 single path.
    pub const SINGLE: OneSpace = OneSpace {
        design: Design::Single,
    };
    /// SPNS multipath.
    pub const SHARED: OneSpace = OneSpace {
        design: Design::Spns,
    };
}

impl SpaceLayout for OneSpace {
    fn space_for(&self, _path: PathId) -> SpaceId {
        SpaceId::Data(0)
    }
    fn nonce_path_id(&self, _path: PathId) -> Option<u32> {
        None
    }
    fn ack_path_id(&self, _space: SpaceId) -> Option<u64> {
        None
    }
    fn space_of_ack(&self, path_id: Option<u64>) -> Option<SpaceId> {
        // PATH_ACK does not belong to these designs: the receive path rejects the frame.
        path_id.is_none().then_some(SpaceId::Data(0))
    }
    fn is_multipath(&self) -> bool {
        self.design == Design::Spns
    }
    fn design(&self) -> Design {
        self.design
    }
}

/// MPNS, RFC 10069: one space per path ID, path ID in the nonce of every 1-RTT packet (§2.4),
/// PATH_ACK frames; an ACK frame acknowledges path 0 (§4.1).
#[derive(Debug, Default)]
pub struct PerPathSpaces;

impl SpaceLayout for PerPathSpaces {
    fn space_for(&self, path: PathId) -> SpaceId {
        SpaceId::Data(path)
    }
    fn nonce_path_id(&self, path: PathId) -> Option<u32> {
        Some(path)
    }
    fn ack_path_id(&self, space: SpaceId) -> Option<u64> {
        match space {
            SpaceId::Data(path) => Some(u64::from(path)),
            _ => None,
        }
    }
    fn space_of_ack(&self, path_id: Option<u64>) -> Option<SpaceId> {
        match path_id {
            None => Some(SpaceId::Data(0)),
            Some(id) => u32::try_from(id).ok().map(SpaceId::Data),
        }
    }
    fn is_multipath(&self) -> bool {
        true
    }
    fn design(&self) -> Design {
        Design::Mpns
    }
}

/// The layout object for a negotiated design.
pub fn layout_for(design: Design) -> Box<dyn SpaceLayout> {
    match design {
        Design::Single => Box::new(OneSpace::SINGLE),
        Design::Spns => Box::new(OneSpace::SHARED),
        Design::Mpns => Box::new(PerPathSpaces),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spns_shares_one_space_and_mpns_does_not() {
        let spns = layout_for(Design::Spns);
        assert_eq!(spns.space_for(0), spns.space_for(3));
        assert_eq!(spns.nonce_path_id(3), None);
        let mpns = layout_for(Design::Mpns);
        assert_ne!(mpns.space_for(0), mpns.space_for(3));
        assert_eq!(mpns.nonce_path_id(3), Some(3));
        assert_eq!(mpns.ack_path_id(SpaceId::Data(3)), Some(3));
        assert_eq!(mpns.space_of_ack(None), Some(SpaceId::Data(0)));
        assert_eq!(mpns.space_of_ack(Some(1 << 40)), None);
        assert_eq!(layout_for(Design::Single).space_of_ack(Some(1)), None);
    }
}
