//! Connection migration started by the client (RFC 9000 §9): a path moves to another local
//! address, as when a device leaves Wi-Fi for cellular. With a peer that negotiated multipath
//! a new path is the better tool (RFC 10069 §3.1); against the many servers that did not,
//! migrating path 0 is the only way to change networks without a new connection.
//!
//! The move is "probe first": the path keeps its 4-tuple's new local address, sends a
//! PATH_CHALLENGE from it and carries no new data until the PATH_RESPONSE arrives (RFC 9000
//! §8.2, §9.1). If none does, the path goes back to the address it left, which still works.

use std::net::SocketAddr;

use mpquic_wire::stream_id::Side;
use rand_core::RngCore;

use super::api::PathError;
use super::{Connection, PathEvent};
use crate::cc::{CcConfig, Pacer};
use crate::path::{Path, PathId};
use crate::recovery::rtt::RttEstimator;
use crate::time::Timestamp;

impl Connection {
    /// Client: move path `id` (path 0 when multipath was not negotiated) to the local address
    /// `local`. From now on the path sends from `local` with a connection ID it has not used
    /// (RFC 9000 §9.5), to the same remote; its congestion controller, RTT estimate and MTU
    /// start over unless only the port changed (RFC 9000 §9.4). The path carries no new data
    /// until validated: [`PathEvent::Validated`] then, or [`PathEvent::Failed`] after the
    /// validation timeout, when the path is back on its old address.
    ///
    /// Refused on a server ([`PathError::ServerCannotMigrate`]), before the handshake is
    /// confirmed ([`PathError::NotEstablished`], RFC 9000 §9), when the peer sent
    /// disable_active_migration ([`PathError::MigrationDisabled`], §18.2), for a path that is
    /// not open, and when the peer has issued no spare connection ID for the path
    /// ([`PathError::NoConnectionId`], §9.5). Moving to the address in use does nothing.
    pub fn migrate_path(
        &mut self,
        now: Timestamp,
        id: PathId,
        local: SocketAddr,
    ) -> Result<(), PathError> {
        if self.side == Side::Server {
            return Err(PathError::ServerCannotMigrate);
        }
        if !self.handshake.is_confirmed() {
            return Err(PathError::NotEstablished);
        }
        if self
            .peer_params
            .as_ref()
            .is_some_and(|p| p.disable_active_migration)
        {
            return Err(PathError::MigrationDisabled);
        }
        let path = self
            .paths
            .get(&id)
            .filter(|p| p.is_active())
            .ok_or(PathError::UnknownPath(id))?;
        let from = path.local;
        if from == local {
            return Ok(());
        }
        let rotated = self.remote_cids.get_mut(&id).is_some_and(|c| c.rotate());
        if !rotated {
            return Err(PathError::NoConnectionId);
        }
        let mut challenge = [0u8; 8];
        self.rng.with(|rng| rng.fill_bytes(&mut challenge));
        let fresh = (from.ip() != local.ip()).then(|| {
            let mtu = crate::mtud::Mtud::for_config(&self.config, self.socket_mtu);
            let cc = self
                .config
                .controller_factory_for(id)
                .build(CcConfig::new(u64::from(mtu.current())));
            (mtu, cc)
        });
        let initial_rtt = self.config.initial_rtt;
        let path = self.paths.get_mut(&id).ok_or(PathError::UnknownPath(id))?;
        if let Some((mtu, cc)) = fresh {
            // RFC 9000 §9.4: another network, so nothing learned about the old one holds.
            path.pacer = Pacer::new(u64::from(mtu.current()), now);
            path.mtu = mtu;
            path.cc = cc;
            path.rtt = RttEstimator::new(initial_rtt);
        }
        path.local = local;
        // A migration already in progress keeps its original fallback.
        path.migrated_from.get_or_insert(from);
        path.start_validation(challenge);
        // We chose the server's address ourselves: no anti-amplification limit (RFC 9000 §8.1).
        path.amplification_limited = false;
        Ok(())
    }

    /// A migration's validation failed: back to the address the path left, which was
    /// validated. Returns whether the path was migrating.
    pub(crate) fn revert_migration(&mut self, id: PathId) -> bool {
        let Some(path) = self.paths.get_mut(&id) else {
            return false;
        };
        let Some(from) = path.migrated_from.take() else {
            return false;
        };
        path.local = from;
        path.challenge = None;
        path.validate();
        self.push_path_event(PathEvent::Failed { id });
        true
    }
}

/// A PATH_RESPONSE validated the path: a migration in progress is complete.
pub(crate) fn complete_migration(path: &mut Path) {
    path.migrated_from = None;
}
