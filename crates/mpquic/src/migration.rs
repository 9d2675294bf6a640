//! Connection migration started by the client (RFC 9000 §9): [`Connection::migrate`] moves a
//! path to another of the endpoint's local addresses, the way to change networks when the
//! peer did not negotiate multipath (quinn, aioquic and most servers today), and
//! [`Connection::migrate_to_preferred_address`], which moves path 0 to the server's preferred
//! address (RFC 9000 §9.6).

use std::net::SocketAddr;

use crate::paths::{LocalAddr, OpenPathError};
use crate::{Connection, PathId, Validation};

impl Connection {
    /// Move path `id` (path 0 without multipath) to the local address `local`: an address of
    /// one of this endpoint's sockets, or an IP alone (any socket bound to it) — as a device
    /// does when it leaves one network for another. The path sends from there with a fresh
    /// connection ID (RFC 9000 §9.5), its congestion controller and RTT estimate start over
    /// (§9.4), and it carries no new data until the server answers its PATH_CHALLENGE from
    /// the new address.
    ///
    /// Resolves once that answer arrived (path validation, RFC 9000 §8.2); fails with
    /// [`OpenPathError::ValidationFailed`] when none did within the validation timeout (the
    /// path is then back on the address it left, which keeps working), and at once when the
    /// core refuses: [`OpenPathError::Path`] with the reason (a server, a peer that sent
    /// disable_active_migration, an unknown path; a handshake not yet confirmed or no spare
    /// connection ID from the peer once [`crate::OPEN_PATH_WAIT`] has passed), or
    /// [`OpenPathError::NotBound`] for an address with no socket of the remote's family. A
    /// move to the address the path uses already resolves at once.
    pub async fn migrate(
        &self,
        id: PathId,
        local: impl Into<LocalAddr>,
    ) -> Result<(), OpenPathError> {
        let local = local.into();
        self.move_and_validate(id, || self.try_migrate(id, local))
            .await
    }

    /// Move path 0 to the address the server advertised in its preferred_address transport
    /// parameter (RFC 9000 §9.6), the one of path 0's address family, and return it: the
    /// client sends there from the same local address with a connection ID not used before,
    /// once the server answered a PATH_CHALLENGE there. Resolves when that answer arrived;
    /// [`OpenPathError::ValidationFailed`] when none did within the validation timeout (path 0
    /// then keeps the server's original address, §9.6.1), and the core's refusals as for
    /// [`Connection::migrate`] — [`mpquic_proto::PathError::NoPreferredAddress`] when the
    /// server advertised none of that family. The server's disable_active_migration does not
    /// forbid this move (§18.2).
    pub async fn migrate_to_preferred_address(&self) -> Result<SocketAddr, OpenPathError> {
        let mut target = None;
        self.move_and_validate(PathId::ZERO, || {
            let now = self.inner.shared.now();
            let (preferred, moved) = self.inner.with(|conn, cs| {
                let before = conn
                    .path_stats()
                    .into_iter()
                    .find(|p| p.id == PathId::ZERO)
                    .map(|p| (p.remote, p.validation));
                let preferred = conn.migrate_to_preferred_address(now)?;
                let moved = before.is_none_or(|(remote, _)| remote != preferred);
                if moved {
                    // The outcome of this validation, not of an earlier one, answers the caller.
                    cs.path_outcomes.remove(&PathId::ZERO);
                }
                // Already there: nothing to wait for, unless that earlier move is still being
                // validated.
                let pending = before.is_some_and(|(_, v)| v != Validation::Validated);
                Ok::<_, OpenPathError>((preferred, moved || pending))
            })??;
            target = Some(preferred);
            self.inner.shared.wake_driver();
            Ok(moved)
        })
        .await?;
        target.ok_or(OpenPathError::Path(
            mpquic_proto::PathError::NoPreferredAddress,
        ))
    }

    /// Run `try_move` (true: the path moved) until the core takes it and wait for the path's
    /// validation. Right after the handshake the client may not have the server's
    /// HANDSHAKE_DONE or a spare connection ID yet: wait for them as `open_path` does.
    async fn move_and_validate(
        &self,
        id: PathId,
        mut try_move: impl FnMut() -> Result<bool, OpenPathError>,
    ) -> Result<(), OpenPathError> {
        let deadline = tokio::time::Instant::now() + crate::OPEN_PATH_WAIT;
        let moved = loop {
            match try_move() {
                Err(OpenPathError::Path(
                    mpquic_proto::PathError::NotEstablished
                    | mpquic_proto::PathError::NoConnectionId,
                )) if tokio::time::Instant::now() < deadline => {
                    let _ = tokio::time::timeout_at(deadline, self.next_datagram()).await;
                }
                other => break other?,
            }
        };
        if moved {
            self.path_validated(id).await?;
        }
        Ok(())
    }

    /// Ask the core to move path `id` to `local` now, without waiting. Returns whether the path
    /// moved (false: it was there already).
    fn try_migrate(&self, id: PathId, local: LocalAddr) -> Result<bool, OpenPathError> {
        let now = self.inner.shared.now();
        let locals = self.inner.shared.lock().locals.clone();
        let moved = self.inner.with(|conn, cs| {
            let (current, remote) = conn
                .path_stats()
                .into_iter()
                .find(|p| p.id == id)
                .map(|p| (p.local, p.remote))
                .ok_or(OpenPathError::Path(mpquic_proto::PathError::UnknownPath(
                    id,
                )))?;
            let bound = locals
                .iter()
                .find(|l| local.matches(**l) && l.is_ipv4() == remote.is_ipv4())
                .copied()
                .ok_or(OpenPathError::NotBound(local))?;
            if bound == current {
                return Ok(false);
            }
            conn.migrate_path(now, id, bound)?;
            // The outcome of this validation, not of an earlier one, answers the caller.
            cs.path_outcomes.remove(&id);
            Ok::<bool, OpenPathError>(true)
        })??;
        if moved {
            self.inner.shared.wake_driver();
        }
        Ok(moved)
    }
}
