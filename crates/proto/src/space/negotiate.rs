//! Choosing the multipath design from both sides' transport parameters (docs/MULTIPATH.md),
//! and the layout object that carries it out. Connection code calls [`advertise`],
//! [`initial_layout`] and [`negotiate`] and never sees the design itself.
//!
//! Two mechanisms coexist:
//! - RFC 10069 `initial_max_path_id` (0x3e): the standard; advertised in `mpns` and `auto` modes
//!   so standard peers (noq) negotiate MPNS with us.
//! - draft-ietf-quic-multipath-01 `enable_multipath` (0xbabf): 1 = single space, 2 = multiple
//!   spaces, 3 = both. Advertised in `spns`, `mpns` and `auto` modes. When both ends send it, the
//!   design is the bitwise AND of the two values: 1 vs 2 falls back to one path, 3 accepts the
//!   peer's choice, 3 vs 3 gives multiple spaces (draft-01 §3).
//!
//! SPNS is therefore used only when both ends agree to it through `enable_multipath`; a peer that
//! knows only RFC 10069 gets MPNS (if it advertised `initial_max_path_id`) or a single path.

use mpquic_wire::transport_params::TransportParameters;

use super::{Design, PerPathSpaces, SharedSpace, SinglePath, SpaceLayout};
use crate::config::{MultipathMode, TransportConfig};
use crate::spns_rules::SpnsRules;

/// Put what `config` offers for multipath into our transport parameters: draft-01
/// `enable_multipath`, RFC 10069 `initial_max_path_id` (with our path ID limit) and, when SPNS
/// is offered, mpquic's `spns_max_path_id` (the same limit for SPNS, which a standard peer
/// ignores).
pub(crate) fn advertise(config: &TransportConfig, params: &mut TransportParameters) {
    params.initial_max_path_id =
        advertises_max_path_id(config.multipath).then_some(u64::from(config.max_path_id));
    params.enable_multipath = enable_multipath_value(config.multipath);
    params.spns_max_path_id = matches!(config.multipath, MultipathMode::Spns | MultipathMode::Auto)
        .then_some(u64::from(config.max_path_id));
}

/// The layout of a connection whose transport parameters are not negotiated yet: one path.
pub(crate) fn initial_layout(config: &TransportConfig) -> Box<dyn SpaceLayout> {
    layout_for(Design::Single, config.spns_rules)
}

/// The layout both ends use once both sets of transport parameters are known.
pub(crate) fn negotiate(
    config: &TransportConfig,
    local: &TransportParameters,
    peer: &TransportParameters,
) -> Box<dyn SpaceLayout> {
    layout_for(negotiate_design(local, peer), config.spns_rules)
}

/// The layout object for a design; `rules` are the report's rules its seams read.
pub(crate) fn layout_for(design: Design, rules: SpnsRules) -> Box<dyn SpaceLayout> {
    match design {
        Design::Single => Box::new(SinglePath::new(rules)),
        Design::Spns => Box::new(SharedSpace::new(rules)),
        Design::Mpns => Box::new(PerPathSpaces::new(rules)),
    }
}

/// draft-01 `enable_multipath` value for a mode (None = not sent).
pub(crate) fn enable_multipath_value(mode: MultipathMode) -> Option<u64> {
    match mode {
        MultipathMode::Single => None,
        MultipathMode::Spns => Some(1),
        MultipathMode::Mpns => Some(2),
        MultipathMode::Auto => Some(3),
    }
}

/// Whether a mode advertises RFC 10069 `initial_max_path_id`.
pub(crate) fn advertises_max_path_id(mode: MultipathMode) -> bool {
    matches!(mode, MultipathMode::Mpns | MultipathMode::Auto)
}

/// The design both ends end up with, computed identically by each side from the two sets of
/// transport parameters.
pub(crate) fn negotiate_design(local: &TransportParameters, peer: &TransportParameters) -> Design {
    let mpns_possible = local.initial_max_path_id.is_some() && peer.initial_max_path_id.is_some();
    match (local.enable_multipath, peer.enable_multipath) {
        (Some(a), Some(b)) => match a & b {
            1 => Design::Spns,
            2 | 3 if mpns_possible => Design::Mpns,
            _ => Design::Single,
        },
        _ if mpns_possible => Design::Mpns,
        _ => Design::Single,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(mode: MultipathMode) -> TransportParameters {
        TransportParameters {
            enable_multipath: enable_multipath_value(mode),
            initial_max_path_id: advertises_max_path_id(mode).then_some(4),
            ..TransportParameters::default()
        }
    }

    /// Standard peer: only RFC 10069 (like noq).
    fn rfc_only() -> TransportParameters {
        TransportParameters {
            initial_max_path_id: Some(4),
            ..TransportParameters::default()
        }
    }

    #[test]
    fn negotiation_matrix() {
        use Design::{Mpns as M, Single as S, Spns as P};
        use MultipathMode::{Auto, Mpns, Single, Spns};
        let modes = [Single, Spns, Mpns, Auto];
        // Rows: our mode; columns: the peer's (single, spns, mpns, auto).
        #[rustfmt::skip]
        let expected = [
            /* Single */ [S, S, S, S],
            /* Spns   */ [S, P, S, P],
            /* Mpns   */ [S, S, M, M],
            /* Auto   */ [S, P, M, M],
        ];
        for (i, &a) in modes.iter().enumerate() {
            for (j, &b) in modes.iter().enumerate() {
                let (pa, pb) = (params(a), params(b));
                // Both roles compute the same answer.
                assert_eq!(negotiate_design(&pa, &pb), expected[i][j], "{a:?} vs {b:?}");
                assert_eq!(negotiate_design(&pb, &pa), expected[i][j], "{b:?} vs {a:?}");
            }
        }
    }

    #[test]
    fn standard_peer_gets_rfc_mpns() {
        assert_eq!(
            negotiate_design(&params(MultipathMode::Auto), &rfc_only()),
            Design::Mpns
        );
        assert_eq!(
            negotiate_design(&params(MultipathMode::Mpns), &rfc_only()),
            Design::Mpns
        );
        assert_eq!(
            negotiate_design(&params(MultipathMode::Spns), &rfc_only()),
            Design::Single
        );
        assert_eq!(
            negotiate_design(&params(MultipathMode::Single), &rfc_only()),
            Design::Single
        );
    }
}
