//! Connection ID pools (RFC 9000 §5.1; RFC 10069 §5: one pool per path ID in each direction).

use mpquic_wire::cid::{ConnectionId, ResetToken};
use mpquic_wire::error::TransportErrorCode;

use crate::error::TransportError;

/// A small map from CID sequence number to `V`, kept as a vector sorted by sequence number:
/// a pool holds a handful of CIDs (active_connection_id_limit), and a multipath connection
/// holds a pool per path ID in each direction, so a tree map's node per pool would dominate an
/// idle connection's memory.
#[derive(Debug, Clone)]
struct SeqMap<V>(Vec<(u64, V)>);

impl<V> Default for SeqMap<V> {
    fn default() -> Self {
        Self(Vec::new())
    }
}

impl<V> SeqMap<V> {
    fn position(&self, seq: u64) -> Result<usize, usize> {
        self.0.binary_search_by_key(&seq, |(s, _)| *s)
    }
    fn get(&self, seq: u64) -> Option<&V> {
        self.position(seq).ok().map(|i| &self.0[i].1)
    }
    fn get_mut(&mut self, seq: u64) -> Option<&mut V> {
        let i = self.position(seq).ok()?;
        Some(&mut self.0[i].1)
    }
    fn insert(&mut self, seq: u64, value: V) {
        match self.position(seq) {
            Ok(i) => self.0[i].1 = value,
            Err(i) => {
                // Grow one entry at a time: pools hold a handful of CIDs and rarely change, and
                // doubling would leave most of each pool's vector (one per path ID) unused.
                self.0.reserve_exact(1);
                self.0.insert(i, (seq, value))
            }
        }
    }
    fn remove(&mut self, seq: u64) -> Option<V> {
        let i = self.position(seq).ok()?;
        Some(self.0.remove(i).1)
    }
    fn contains_key(&self, seq: u64) -> bool {
        self.position(seq).is_ok()
    }
    fn len(&self) -> usize {
        self.0.len()
    }
    fn keys(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.iter().map(|(s, _)| *s)
    }
    fn values(&self) -> impl Iterator<Item = &V> {
        self.0.iter().map(|(_, v)| v)
    }
}

/// Retirements not yet acknowledged allowed per pool, in multiples of our
/// active_connection_id_limit (RFC 9000 §5.1.2 asks for at least 2).
const RETIRE_LIMIT_FACTOR: u64 = 4;

/// Connection IDs we issued for one path ID; the peer uses them as destination.
#[derive(Debug, Default)]
pub(crate) struct LocalCids {
    /// Sequence number -> CID, still active (not retired by the peer).
    active: SeqMap<ConnectionId>,
    next_seq: u64,
    /// Sequence numbers whose (PATH_)NEW_CONNECTION_ID frame is waiting to be (re)sent.
    pending_announce: Vec<u64>,
    retire_prior_to: u64,
}

impl LocalCids {
    /// Register a new CID; returns its sequence number. `announce` queues a frame for it.
    pub(crate) fn issue(&mut self, cid: ConnectionId, announce: bool) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.active.insert(seq, cid);
        if announce {
            self.pending_announce.push(seq);
        }
        seq
    }

    /// RFC 9000 §19.16: the peer retires `seq`. Retiring a sequence number we never sent is a
    /// PROTOCOL_VIOLATION. Returns the retired CID, if it was active.
    pub(crate) fn retire(&mut self, seq: u64) -> Result<Option<ConnectionId>, TransportError> {
        if seq >= self.next_seq {
            return Err(TransportError::protocol_violation(
                "retired a connection ID sequence never issued",
            ));
        }
        self.pending_announce.retain(|&s| s != seq);
        Ok(self.active.remove(seq))
    }

    pub(crate) fn get(&self, seq: u64) -> Option<&ConnectionId> {
        self.active.get(seq)
    }

    pub(crate) fn active_count(&self) -> usize {
        self.active.len()
    }

    pub(crate) fn next_seq(&self) -> u64 {
        self.next_seq
    }

    pub(crate) fn retire_prior_to(&self) -> u64 {
        self.retire_prior_to
    }

    /// Take the sequence numbers waiting for an announcement frame.
    pub(crate) fn take_pending(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.pending_announce)
    }

    /// Queue an announcement again (its packet was lost) if the CID is still active.
    pub(crate) fn requeue(&mut self, seq: u64) {
        if self.active.contains_key(seq) && !self.pending_announce.contains(&seq) {
            self.pending_announce.push(seq);
        }
    }

    pub(crate) fn has_pending(&self) -> bool {
        !self.pending_announce.is_empty()
    }

    /// All active CIDs (to unregister them from the endpoint when the path closes).
    pub(crate) fn all(&self) -> impl Iterator<Item = &ConnectionId> {
        self.active.values()
    }
}

/// Connection IDs the peer issued for one path ID; we use one as destination.
#[derive(Debug, Default)]
pub(crate) struct RemoteCids {
    /// Sequence -> (CID, stateless reset token).
    available: SeqMap<(ConnectionId, Option<ResetToken>)>,
    /// Sequence number of the CID in use.
    in_use: Option<u64>,
    retire_prior_to: u64,
    /// Sequence numbers retired whose (PATH_)RETIRE_CONNECTION_ID is not yet acknowledged,
    /// each with whether its frame waits to be sent (again); bounded by
    /// [`RemoteCids::on_new_cid`]. One vector for both: a pool per path ID, mostly empty.
    retirements: Vec<(u64, bool)>,
}

impl RemoteCids {
    /// The pool of a path whose first CID is known from the handshake (sequence 0).
    pub(crate) fn with_initial(cid: ConnectionId) -> Self {
        let mut pool = Self::default();
        pool.available.insert(0, (cid, None));
        pool.in_use = Some(0);
        pool
    }

    /// RFC 9000 §19.15 / RFC 10069 §7.4: a new CID from the peer. Enforces
    /// active_connection_id_limit (CONNECTION_ID_LIMIT_ERROR) and retire_prior_to.
    pub(crate) fn on_new_cid(
        &mut self,
        seq: u64,
        retire_prior_to: u64,
        cid: ConnectionId,
        token: ResetToken,
        limit: u64,
    ) -> Result<(), TransportError> {
        if let Some((existing, _)) = self.available.get(seq) {
            if *existing != cid {
                return Err(TransportError::protocol_violation(
                    "same sequence number with a different connection ID",
                ));
            }
            return Ok(());
        }
        if seq < self.retire_prior_to {
            // Already retired: retire it again immediately, "unless it has already done so for
            // that sequence number" (RFC 9000 §19.15).
            self.queue_retire(seq);
            return self.check_retirements(limit);
        }
        self.available.insert(seq, (cid, Some(token)));
        if retire_prior_to > self.retire_prior_to {
            self.retire_prior_to = retire_prior_to;
            let old: Vec<u64> = self
                .available
                .keys()
                .take_while(|&s| s < retire_prior_to)
                .collect();
            for s in old {
                self.available.remove(s);
                self.queue_retire(s);
            }
            if self.in_use.is_some_and(|u| u < retire_prior_to) {
                self.in_use = self.available.keys().next();
            }
        }
        if self.available.len() as u64 > limit {
            return Err(TransportError::new(
                TransportErrorCode::CONNECTION_ID_LIMIT_ERROR,
                "peer exceeded active_connection_id_limit",
            ));
        }
        if self.in_use.is_none() {
            self.in_use = self.available.keys().next();
        }
        self.check_retirements(limit)
    }

    /// RFC 9000 §5.1.2: "An endpoint SHOULD limit the number of connection IDs it has retired
    /// locally for which RETIRE_CONNECTION_ID frames have not yet been acknowledged" (at least
    /// twice active_connection_id_limit), and "MAY choose to treat having connection IDs in need
    /// of retirement that exceed this limit as a connection error of type
    /// CONNECTION_ID_LIMIT_ERROR". Without it a peer sending CIDs below its Retire Prior To, and
    /// not acknowledging our frames, makes us owe retirements without bound.
    fn check_retirements(&self, limit: u64) -> Result<(), TransportError> {
        if self.retirements.len() as u64 > limit.saturating_mul(RETIRE_LIMIT_FACTOR) {
            return Err(TransportError::new(
                TransportErrorCode::CONNECTION_ID_LIMIT_ERROR,
                "too many connection IDs to retire not yet acknowledged",
            ));
        }
        Ok(())
    }

    /// Owe a RETIRE_CONNECTION_ID for `seq`, once until it is acknowledged.
    fn queue_retire(&mut self, seq: u64) {
        if !self.retirements.iter().any(|&(s, _)| s == seq) {
            self.retirements.push((seq, true));
        }
    }

    /// The frame retiring `seq` was acknowledged.
    pub(crate) fn on_retire_acked(&mut self, seq: u64) {
        self.retirements.retain(|&(s, _)| s != seq);
    }

    /// The CID to send to, if any.
    pub(crate) fn current(&self) -> Option<ConnectionId> {
        self.in_use
            .and_then(|s| self.available.get(s))
            .map(|(c, _)| *c)
    }

    /// Switch to the next CID the peer issued, keeping the one left: RFC 9000 §9.5, an endpoint
    /// that moves to another local address sends with a CID it has not used, so that an
    /// observer cannot link the two addresses. The CID left stays ours until the move is
    /// settled: [`RemoteCids::retire`] once it succeeded, [`RemoteCids::switch_back`] if it
    /// failed. Returns the sequence number left, or None, changing nothing, when the peer has
    /// issued no spare.
    pub(crate) fn switch_to_spare(&mut self) -> Option<u64> {
        let current = self.in_use?;
        let next = self.available.keys().find(|&s| s > current)?;
        self.in_use = Some(next);
        Some(current)
    }

    /// Retire CID `seq` (one a move left), unless it is in use or already gone.
    pub(crate) fn retire(&mut self, seq: u64) {
        if self.in_use != Some(seq) && self.available.remove(seq).is_some() {
            self.queue_retire(seq);
        }
    }

    /// A move failed: back to CID `seq`, the one used at the address returned to, unless the
    /// peer retired it meanwhile; the CID the move used was seen at the other address only and
    /// is retired.
    pub(crate) fn switch_back(&mut self, seq: u64) {
        let Some(used) = self.in_use else {
            return;
        };
        if used != seq && self.available.get(seq).is_some() {
            self.in_use = Some(seq);
            self.retire(used);
        }
    }

    /// Whether a reset token belongs to this pool (stateless reset detection, RFC 9000 §10.3.1).
    pub(crate) fn has_reset_token(&self, token: &ResetToken) -> bool {
        self.available
            .values()
            .any(|(_, t)| t.as_ref() == Some(token))
    }

    /// Set the reset token of sequence 0 (from the server's transport parameters).
    pub(crate) fn set_initial_token(&mut self, token: ResetToken) {
        if let Some(entry) = self.available.get_mut(0) {
            entry.1 = Some(token);
        }
    }

    pub(crate) fn take_pending_retire(&mut self) -> Vec<u64> {
        let mut due = Vec::new();
        for (seq, pending) in &mut self.retirements {
            if std::mem::take(pending) {
                due.push(*seq);
            }
        }
        due
    }

    /// The frame retiring `seq` was lost: send it again, unless it was acknowledged meanwhile
    /// (in another packet) or is already queued.
    pub(crate) fn requeue_retire(&mut self, seq: u64) {
        if let Some((_, pending)) = self.retirements.iter_mut().find(|(s, _)| *s == seq) {
            *pending = true;
        }
    }

    pub(crate) fn has_pending_retire(&self) -> bool {
        self.retirements.iter().any(|&(_, pending)| pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cid(b: u8) -> ConnectionId {
        ConnectionId::new(&[b; 8]).unwrap()
    }

    #[test]
    fn limit_and_retire_prior_to() {
        let mut pool = RemoteCids::with_initial(cid(0));
        pool.on_new_cid(1, 0, cid(1), ResetToken([1; 16]), 2)
            .unwrap();
        let err = pool
            .on_new_cid(2, 0, cid(2), ResetToken([2; 16]), 2)
            .unwrap_err();
        assert_eq!(err.code, TransportErrorCode::CONNECTION_ID_LIMIT_ERROR);
        let mut pool = RemoteCids::with_initial(cid(0));
        pool.on_new_cid(1, 1, cid(1), ResetToken([1; 16]), 2)
            .unwrap();
        assert_eq!(pool.current(), Some(cid(1)));
        assert_eq!(pool.take_pending_retire(), vec![0]);
        assert!(pool.has_reset_token(&ResetToken([1; 16])));
    }

    #[test]
    fn a_move_takes_the_next_cid_and_settles_the_old_one_afterwards() {
        let mut pool = RemoteCids::with_initial(cid(0));
        assert_eq!(pool.switch_to_spare(), None, "no spare yet");
        assert_eq!(pool.current(), Some(cid(0)));
        pool.on_new_cid(2, 0, cid(2), ResetToken([2; 16]), 4)
            .unwrap();
        pool.on_new_cid(1, 0, cid(1), ResetToken([1; 16]), 4)
            .unwrap();
        // A move that succeeds: the old CID is retired once it is settled.
        assert_eq!(pool.switch_to_spare(), Some(0));
        assert_eq!(pool.current(), Some(cid(1)));
        assert!(!pool.has_pending_retire(), "kept until the move is settled");
        pool.retire(0);
        assert_eq!(pool.take_pending_retire(), vec![0]);
        // A move that fails: back to the CID of the old address, the other one retired.
        assert_eq!(pool.switch_to_spare(), Some(1));
        assert_eq!(pool.current(), Some(cid(2)));
        pool.switch_back(1);
        assert_eq!(pool.current(), Some(cid(1)));
        assert_eq!(pool.take_pending_retire(), vec![2]);
        assert_eq!(pool.switch_to_spare(), None);
        // Retiring the CID in use, or one already gone, does nothing.
        pool.retire(1);
        pool.retire(2);
        assert!(!pool.has_pending_retire());
        // The peer retired the old CID meanwhile (retire_prior_to): no way back, the new stays.
        pool.on_new_cid(3, 0, cid(3), ResetToken([3; 16]), 4)
            .unwrap();
        assert_eq!(pool.switch_to_spare(), Some(1));
        pool.on_new_cid(4, 2, cid(4), ResetToken([4; 16]), 4)
            .unwrap();
        assert_eq!(pool.take_pending_retire(), vec![1]);
        pool.switch_back(1);
        assert_eq!(pool.current(), Some(cid(3)));
        assert!(!pool.has_pending_retire());
    }

    #[test]
    fn retirements_not_yet_acknowledged_are_bounded() {
        let limit = 2;
        let mut pool = RemoteCids::with_initial(cid(0));
        pool.on_new_cid(100, 100, cid(100), ResetToken([1; 16]), limit)
            .unwrap();
        assert_eq!(pool.take_pending_retire(), vec![0], "only what we held");
        // The same CID below Retire Prior To again and again: retired once until acknowledged.
        for _ in 0..3 {
            pool.on_new_cid(1, 0, cid(1), ResetToken([1; 16]), limit)
                .unwrap();
        }
        assert_eq!(pool.take_pending_retire(), vec![1]);
        pool.on_retire_acked(0);
        pool.on_retire_acked(1);
        // Distinct CIDs below it, none acknowledged: the bound closes the connection.
        let mut result = Ok(());
        for seq in 2..100 {
            result = pool.on_new_cid(seq, 0, cid(seq as u8), ResetToken([1; 16]), limit);
            if result.is_err() {
                assert_eq!(seq, 2 + limit * RETIRE_LIMIT_FACTOR);
                break;
            }
        }
        assert_eq!(
            result.unwrap_err().code,
            TransportErrorCode::CONNECTION_ID_LIMIT_ERROR
        );
        // A lost frame is sent again only while it is unacknowledged.
        pool.take_pending_retire();
        pool.on_retire_acked(2);
        pool.requeue_retire(2);
        pool.requeue_retire(3);
        assert_eq!(pool.take_pending_retire(), vec![3]);
    }

    #[test]
    fn retiring_unissued_sequence_is_a_violation() {
        let mut local = LocalCids::default();
        local.issue(cid(0), false);
        assert!(local.retire(0).unwrap().is_some());
        assert_eq!(
            local.retire(5).unwrap_err().code,
            TransportErrorCode::PROTOCOL_VIOLATION
        );
    }
}
