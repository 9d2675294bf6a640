//! Timers: idle timeout, per-path loss detection and PTO, delayed ACKs, pacing, path
//! validation, abandoned-path cleanup, closing/draining, key discarding (RFC 9000 §10,
//! RFC 9002 §6.2, RFC 10069 §3–4).

use super::{Connection, ConnectionError, EndpointEvent, Event, State};
use crate::crypto::Epoch;
use crate::path::{epoch_index, PathId};
use crate::time::{Duration, Timestamp};

/// Path validation gives up after this many challenges (RFC 9000 §8.2.4 leaves it open).
const MAX_CHALLENGES: u32 = 3;

impl Connection {
    /// The earliest time at which [`Connection::handle_timeout`] must be called.
    pub fn poll_timeout(&self) -> Option<Timestamp> {
        match self.state {
            State::Drained => return None,
            State::Closing { until, .. } | State::Draining { until } => return Some(until),
            _ => {}
        }
        let mut earliest: Option<Timestamp> = None;
        let mut consider = |t: Option<Timestamp>| {
            if let Some(t) = t {
                earliest = Some(earliest.map_or(t, |e| e.min(t)));
            }
        };
        consider(self.idle_deadline());
        consider(self.pacing_wakeup);
        consider(self.keys.drop_previous_deadline());
        for id in self.paths.keys() {
            consider(self.path_loss_timer(*id).map(|(t, _, _)| t));
            let path = &self.paths[id];
            for state in path.acks.values() {
                consider(state.deadline());
            }
            consider(path.closing_until());
            consider(self.path_idle_deadline(*id));
            if let Some((_, Some(sent))) = path.challenge {
                consider(Some(sent + self.challenge_timeout(*id)));
            }
        }
        earliest
    }

    /// Process every timer that expired at or before `now`.
    pub fn handle_timeout(&mut self, now: Timestamp) {
        self.handle_timeout_inner(now);
        self.qlog_sync(now);
    }

    fn handle_timeout_inner(&mut self, now: Timestamp) {
        match self.state {
            State::Drained => return,
            State::Closing { until, .. } | State::Draining { until } => {
                if now >= until {
                    self.drain();
                }
                return;
            }
            _ => {}
        }
        if self.idle_deadline().is_some_and(|d| now >= d) {
            // RFC 9000 §10.1: silently close on idle timeout.
            self.error = Some(ConnectionError::TimedOut);
            self.events
                .push_back(Event::ConnectionLost(ConnectionError::TimedOut));
            self.drain();
            return;
        }
        self.keys.on_timeout(now);
        if self.pacing_wakeup.is_some_and(|t| now >= t) {
            self.pacing_wakeup = None;
        }
        let ids: Vec<PathId> = self.paths.keys().copied().collect();
        for id in ids {
            self.path_timeouts(now, id);
        }
        self.expire_lost_history(now);
    }

    fn path_timeouts(&mut self, now: Timestamp, id: PathId) {
        if let Some((t, epoch, is_pto)) = self.path_loss_timer(id) {
            if now >= t {
                if is_pto {
                    self.on_pto(now, id, epoch);
                } else {
                    self.detect_losses(now, id, epoch);
                }
            }
        }
        let challenge_timeout = self.challenge_timeout(id);
        // A server's path to an unvalidated address may have spent its anti-amplification
        // budget (RFC 9000 §8.1) on the first challenge: a resend it cannot make still counts
        // as one, or a peer address that never answers would keep the path waiting for good.
        let can_resend = self.send_budget(id).is_some();
        let Some(path) = self.paths.get_mut(&id) else {
            return;
        };
        if let Some((_, Some(sent))) = path.challenge {
            if now >= sent + challenge_timeout {
                path.counters.pto_count_total += 1;
                path.challenge_timeouts += 1;
                let exhausted = path.challenge_timeouts >= MAX_CHALLENGES;
                if exhausted && path.migrated_from.is_some() {
                    // Our own migration did not work: the path goes back (RFC 9000 §9.2).
                    self.revert_migration(id);
                } else if exhausted && path.fail_validation() {
                    self.push_path_event(super::PathEvent::Failed { id });
                    if id != PathId::ZERO {
                        self.abandon_path(
                            now,
                            id,
                            mpquic_wire::error::path_error::PATH_UNSTABLE_OR_POOR,
                        );
                    }
                } else if let Some((_, sent)) = path.challenge.as_mut() {
                    *sent = if can_resend { None } else { Some(now) };
                }
            }
        }
        if self.path_idle_deadline(id).is_some_and(|d| now >= d) {
            self.abandon_path(
                now,
                id,
                mpquic_wire::error::path_error::PATH_UNSTABLE_OR_POOR,
            );
        }
        let Some(path) = self.paths.get(&id) else {
            return;
        };
        if let Some(until) = path.closing_until() {
            if now >= until {
                self.close_abandoned_path(now, id);
            }
        }
    }

    /// When an active path counts as idle (per-path idle timeout, only with another live path).
    fn path_idle_deadline(&self, id: PathId) -> Option<Timestamp> {
        let timeout = self.config.path_idle_timeout?;
        let path = self.paths.get(&id).filter(|p| p.is_active())?;
        let others = self
            .paths
            .values()
            .any(|p| p.id != id && p.is_active() && p.is_validated());
        others.then_some(path.last_activity + timeout)
    }

    /// RFC 9000 §8.2.4: a validation attempt lasts about 3 PTOs (at least 6 initial RTTs is
    /// suggested for the whole process; each of our 3 challenges waits one PTO, not backed off).
    fn challenge_timeout(&self, id: PathId) -> Duration {
        let pto = self
            .paths
            .get(&id)
            // Without the PTO backoff: the path's unanswered challenges back its PTO off,
            // and a timeout that grew with it would never expire (RFC 9000 §8.2.4 uses the
            // PTO's value, not its backed-off timer).
            .map(|p| p.pto_without_backoff(self.peer_max_ack_delay()))
            .unwrap_or(Duration::from_secs(1));
        pto.max(self.config.initial_rtt * 2)
    }

    /// The closing period of an abandoned path ended. If the peer never answered our
    /// PATH_ABANDON, it may not have seen it and may still send on the path, to connection IDs
    /// we issued for it: forgetting them would answer such packets with a stateless reset, which
    /// closes the whole connection (RFC 10069 §3.4, "Avoiding Spurious Stateless Resets": only
    /// the peer's retirement of our CIDs on receiving PATH_ABANDON protects it). Found by a
    /// randomized campaign: a server whose handshake completed 6.6 s after the client's
    /// processed the client's early packets opening two paths the client had abandoned
    /// meanwhile, sent on them, and was reset. So the state is kept until the peer's
    /// PATH_ABANDON plus 3 PTOs, at most [`Self::unanswered_abandon_wait`] longer.
    fn close_abandoned_path(&mut self, now: Timestamp, id: PathId) {
        let wait = self.unanswered_abandon_wait();
        let Some(path) = self.paths.get_mut(&id) else {
            return;
        };
        if path.peer_abandoned() || path.waited_for_peer_abandon {
            self.remove_path(id);
            return;
        }
        path.waited_for_peer_abandon = true;
        path.keep_closing_until(now + wait, false);
    }

    /// How long an abandoned path waits for the peer's PATH_ABANDON after its 3 PTOs: the
    /// connection's idle timeout (a peer that does not answer in that time is not coming back
    /// to the path), or 30 s when neither side has one.
    fn unanswered_abandon_wait(&self) -> Duration {
        self.negotiated_idle_timeout()
            .unwrap_or(Duration::from_secs(30))
    }

    /// Forget the path entirely after its closing period (RFC 10069 §3.4: packets still
    /// outstanding are lost).
    fn remove_path(&mut self, id: PathId) {
        if let Some(pool) = self.local_cids.remove(&id) {
            for cid in pool.all() {
                self.endpoint_events
                    .push_back(EndpointEvent::RetireCid(*cid));
            }
        }
        self.remote_cids.remove(&id);
        if let Some(mut path) = self.paths.remove(&id) {
            for p in path.ledger(Epoch::Data).drain() {
                // Given up with the path, like its stream data (which moves to other paths).
                self.stats.datagram_frames.lost += p.frames.datagrams;
                self.send_space(p.space).forget(p.pn);
                self.requeue_frames(Epoch::Data, &p.frames);
            }
            // A space of the path's own goes with it.
            if let Some(space) = self.layout.space_retired_with(id) {
                self.send_spaces.remove(&space);
                self.records.remove(&space);
            }
            // The path ID is spent: the peer may open another in its place, and CIDs for the
            // path IDs that became usable go out.
            if self.layout.is_multipath() && self.path_ids.close(id) {
                self.issue_path_cids();
            }
        }
    }

    /// RFC 9002 §6.2.2.1 / RFC 10069 §4: the loss-detection timer of one path: the earliest
    /// time-threshold loss, else the PTO. Returns (time, level, is PTO).
    fn path_loss_timer(&self, id: PathId) -> Option<(Timestamp, Epoch, bool)> {
        let path = self.paths.get(&id)?;
        if !path.is_active() {
            return None;
        }
        let loss = Epoch::ALL
            .iter()
            .filter_map(|&e| {
                path.ledgers[epoch_index(e)]
                    .loss_time()
                    .map(|t| (t, e, false))
            })
            .min_by_key(|(t, _, _)| *t);
        if loss.is_some() {
            return loss;
        }
        let max_ack_delay = crate::time::duration_nanos(self.peer_max_ack_delay());
        let mut best: Option<(Timestamp, Epoch, bool)> = None;
        for epoch in Epoch::ALL {
            let ledger = &path.ledgers[epoch_index(epoch)];
            if ledger.ack_eliciting_in_flight() == 0 {
                continue;
            }
            // RFC 9002 §6.2.1: no PTO for application data before the handshake is confirmed;
            // max_ack_delay counts only for application data.
            if epoch == Epoch::Data
                && !self.handshake.is_confirmed()
                && self.keys.has_handshake_levels()
            {
                continue;
            }
            let Some(last) = ledger.time_of_last_ack_eliciting() else {
                continue;
            };
            let t = last.saturating_add_nanos(path.pto_nanos(max_ack_delay, epoch == Epoch::Data));
            if best.is_none_or(|(b, _, _)| t < b) {
                best = Some((t, epoch, true));
            }
        }
        if best.is_none()
            && id == PathId::ZERO
            && self.side == mpquic_wire::stream_id::Side::Client
            && !self.handshake.is_confirmed()
        {
            // RFC 9002 §6.2.2.1: the client keeps a PTO armed until the handshake is confirmed
            // so it can unblock a server stuck at its amplification limit.
            let epoch = if self.keys.has(Epoch::Handshake) {
                Epoch::Handshake
            } else {
                Epoch::Initial
            };
            let base = self.idle_since;
            return Some((
                base.saturating_add_nanos(path.pto_nanos(max_ack_delay, false)),
                epoch,
                true,
            ));
        }
        best
    }

    /// RFC 9002 §6.2.4: on PTO, send one or two ack-eliciting probes on the path; after
    /// `path_failure_ptos` consecutive PTOs on one of several paths, hand its data over to the
    /// other paths (issue 4 handover).
    fn on_pto(&mut self, now: Timestamp, id: PathId, epoch: Epoch) {
        let failure_ptos = self.config.path_failure_ptos;
        let other_usable = self.paths.values().any(|p| p.id != id && p.is_usable());
        let Some(path) = self.paths.get_mut(&id) else {
            return;
        };
        path.pto_count += 1;
        path.counters.pto_count_total += 1;
        path.probes_pending = 2;
        self.stats.pto_count += 1;
        if epoch != Epoch::Data {
            // Retransmit the unacknowledged handshake data in the probes.
            let frames: Vec<_> = path.ledgers[epoch_index(epoch)]
                .outstanding()
                .map(|(_, p)| p.frames.clone())
                .collect();
            for f in frames {
                self.requeue_frames(epoch, &f);
            }
            if let Some(path) = self.paths.get_mut(&id) {
                // The client's anti-deadlock probe has nothing in flight: restart from now.
                if path.ledgers[epoch_index(epoch)].ack_eliciting_in_flight() == 0 {
                    self.idle_since = now;
                }
            }
            return;
        }
        if path.pto_count >= failure_ptos && other_usable {
            self.fail_path(now, id);
            return;
        }
        // Probe with the oldest outstanding data if there is no new data (RFC 9002 §6.2.4).
        if !self.streams.has_pending_data() {
            let oldest = path.ledgers[epoch_index(Epoch::Data)]
                .outstanding()
                .next()
                .map(|(_, p)| p.frames.clone());
            if let Some(frames) = oldest {
                let copy = self.streams.retransmittable_copy(&frames.streams);
                self.streams.on_frames_lost(&copy);
            }
        }
    }

    /// RFC 9000 §10.1: the idle timeout is the minimum of both sides' values; None when both
    /// are zero (no idle timeout).
    fn negotiated_idle_timeout(&self) -> Option<Duration> {
        let local = self.config.idle_timeout;
        let peer = self
            .peer_params
            .as_ref()
            .map(|p| Duration::from_millis(p.max_idle_timeout_ms))
            .unwrap_or(Duration::ZERO);
        match (local.is_zero(), peer.is_zero()) {
            (true, true) => None,
            (false, true) => Some(local),
            (true, false) => Some(peer),
            (false, false) => Some(local.min(peer)),
        }
    }

    /// RFC 9000 §10.1: the idle timeout is the minimum of both sides' values (zero = none), and
    /// at least three PTOs.
    fn idle_deadline(&self) -> Option<Timestamp> {
        let timeout = self.negotiated_idle_timeout()?;
        // "At least three times the current PTO": without the backoff, or a silent peer would
        // push the deadline out with every probe and the timeout would never fire. In
        // nanoseconds: asked after every datagram.
        let three_ptos = self.largest_base_pto_nanos().saturating_mul(3);
        let timeout = crate::time::duration_nanos(timeout).max(three_ptos);
        Some(self.idle_since.saturating_add_nanos(timeout))
    }

    fn expire_lost_history(&mut self, now: Timestamp) {
        let horizon = now.saturating_sub(self.largest_pto() * 4);
        for space in self.send_spaces.values_mut() {
            space.expire_lost(horizon);
        }
    }

    pub(crate) fn drain(&mut self) {
        if self.state != State::Drained {
            self.remember_rtts();
            self.state = State::Drained;
            self.endpoint_events.push_back(EndpointEvent::Drained);
        }
    }
}
