//! Connection migration started by the client (RFC 9000 §9): [`Connection::migrate`] moves a
//! path to another of the endpoint's local addresses, the way to change networks when the
//! peer did not negotiate multipath (quinn, aioquic and most servers today).

use crate::paths::{LocalAddr, OpenPathError};
use crate::{Connection, PathId};

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
        // Right after the handshake the client may not have the server's HANDSHAKE_DONE or a
        // spare connection ID yet: wait for them as `open_path` does.
        let deadline = tokio::time::Instant::now() + crate::OPEN_PATH_WAIT;
        let moved = loop {
            match self.try_migrate(id, local) {
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
