//! Runtime state of a link: queue, transmitter, propagation and drops.

use rand::Rng;
use rand_chacha::ChaCha20Rng;

use super::{Capacity, Jitter, LinkAction, LinkConfig};
use crate::event::{EventKind, EventQueue};
use crate::loss::LossState;
use crate::packet::PacketStore;
use crate::queue::{DropTailQueue, QueueEntry, QueueLimit};
use crate::rng::stream_rng;
use crate::stats::{DropCause, LinkStats};
use crate::time::{serialization_time, SimTime};
use crate::trace::{OpportunityPos, TraceSchedule, OPPORTUNITY_BYTES};

/// What the link needs from the simulator while handling an event.
pub(crate) struct Ctx<'a> {
    pub(crate) now: SimTime,
    pub(crate) events: &'a mut EventQueue,
    pub(crate) packets: &'a mut PacketStore,
}

#[derive(Debug)]
enum Service {
    Fixed {
        bps: u64,
    },
    Trace {
        schedule: TraceSchedule,
        /// First opportunity not used yet.
        next: OpportunityPos,
    },
    Unlimited,
}

impl Service {
    fn new(c: &Capacity) -> Self {
        match c {
            Capacity::Rate { bits_per_sec } => Service::Fixed { bps: *bits_per_sec },
            Capacity::Trace(t) => Service::Trace {
                schedule: TraceSchedule::new(t),
                next: OpportunityPos::default(),
            },
            Capacity::Unlimited => Service::Unlimited,
        }
    }
}

/// A running one-way link.
#[derive(Debug)]
pub(crate) struct Link {
    id: u32,
    service: Service,
    delay: SimTime,
    jitter: Jitter,
    loss: LossState,
    queue: DropTailQueue,
    /// ECN step-marking threshold and bleaching ([`LinkConfig::ecn_threshold`]).
    ecn_threshold: Option<QueueLimit>,
    ecn_bleach: bool,
    up: bool,
    /// Incremented when the link goes down; stamps departing packets.
    epoch: u32,
    /// Invalidates pending `LinkService` events.
    service_gen: u64,
    /// Fixed-rate packet currently being serialized.
    in_service: Option<QueueEntry>,
    /// Trace opportunity for which a `LinkService` event is pending.
    pending_opportunity: Option<OpportunityPos>,
    /// Latest delivery time scheduled (for FIFO clamping).
    last_delivery: SimTime,
    loss_rng: ChaCha20Rng,
    jitter_rng: ChaCha20Rng,
    scratch: Vec<QueueEntry>,
    /// Actions referenced by `LinkAction` events.
    pub(crate) actions: Vec<LinkAction>,
    pub(crate) stats: LinkStats,
    /// Largest packet carried (None: any).
    mtu: Option<u64>,
}

impl Link {
    pub(crate) fn new(id: u32, config: &LinkConfig, seed: u64, sample_interval: SimTime) -> Self {
        let streams = config
            .random_streams
            .clone()
            .unwrap_or_else(|| id.to_string());
        Self {
            id,
            service: Service::new(&config.capacity),
            delay: config.delay,
            jitter: config.jitter,
            loss: LossState::new(config.loss),
            mtu: config.mtu,
            queue: DropTailQueue::new(config.queue),
            ecn_threshold: config.ecn_threshold,
            ecn_bleach: config.ecn_bleach,
            up: true,
            epoch: 0,
            service_gen: 0,
            in_service: None,
            pending_opportunity: None,
            last_delivery: 0,
            loss_rng: stream_rng(seed, &format!("link/{streams}/loss")),
            jitter_rng: stream_rng(seed, &format!("link/{streams}/jitter")),
            scratch: Vec::new(),
            actions: Vec::new(),
            stats: LinkStats::new(sample_interval),
        }
    }

    pub(crate) fn is_up(&self) -> bool {
        self.up
    }

    pub(crate) fn queue_bytes(&self) -> u64 {
        self.queue.bytes()
    }

    pub(crate) fn queue_packets(&self) -> usize {
        self.queue.len()
    }

    fn note_queue(&mut self, now: SimTime) {
        self.stats
            .queue
            .update(now, self.queue.bytes(), self.queue.len() as u64);
    }

    fn drop_packet(&mut self, cx: &mut Ctx<'_>, packet: u32, bytes: u64, cause: DropCause) {
        self.stats.dropped.record(cause, bytes);
        cx.packets.remove(packet);
    }

    /// A packet arrives at the link. Returns why it was dropped (it is then
    /// removed from the store), `None` if it was accepted.
    pub(crate) fn enter(&mut self, cx: &mut Ctx<'_>, packet: u32) -> Option<DropCause> {
        let Some(p) = cx.packets.get_mut(packet) else {
            return Some(DropCause::NoRoute);
        };
        let bytes = p.size();
        p.hop_entered_at = cx.now;
        if self.ecn_bleach {
            p.datagram.ecn = crate::node::Ecn::NotEct;
        }
        // RFC 3168 §5 step marking: an ECN-capable packet arriving above the threshold is
        // marked CE once accepted (it may still meet the drop-tail limit below).
        let mark = p.datagram.ecn.is_ect()
            && self
                .ecn_threshold
                .is_some_and(|t| !t.admits(self.queue.len(), self.queue.bytes(), bytes));
        self.stats.entered.add(bytes);
        let entry = QueueEntry {
            packet,
            bytes,
            enqueued_at: cx.now,
        };
        let cause = if !self.up {
            Some(DropCause::LinkDown)
        } else if self.mtu.is_some_and(|m| bytes > m) {
            // Checked before the loss model, which draws from its RNG only for packets that
            // fit: links without an MTU see the same draws as before MTUs existed.
            Some(DropCause::MtuExceeded)
        } else if self.loss.should_drop(&mut self.loss_rng) {
            Some(DropCause::RandomLoss)
        } else if self.transmitter_idle() {
            // Goes straight onto the wire: the queue limit does not apply
            // and the occupancy never really changes.
            self.queue.push_unchecked(entry);
            self.mark_ce(cx, packet, mark);
            self.kick(cx);
            return None;
        } else if !self.queue.try_push(entry) {
            Some(DropCause::QueueOverflow)
        } else {
            None
        };
        if let Some(cause) = cause {
            self.drop_packet(cx, packet, bytes, cause);
            return Some(cause);
        }
        self.mark_ce(cx, packet, mark);
        self.note_queue(cx.now);
        self.kick(cx);
        None
    }

    /// Marks an accepted packet CE (counted once per packet).
    fn mark_ce(&mut self, cx: &mut Ctx<'_>, packet: u32, mark: bool) {
        if let Some(p) = cx.packets.get_mut(packet).filter(|_| mark) {
            if p.datagram.ecn != crate::node::Ecn::Ce {
                self.stats.ce_marked += 1;
            }
            p.datagram.ecn = crate::node::Ecn::Ce;
        }
    }

    /// True if a packet arriving now would start transmission immediately
    /// (fixed-rate or unlimited link, nothing queued or on the wire).
    fn transmitter_idle(&self) -> bool {
        self.queue.is_empty()
            && self.in_service.is_none()
            && matches!(self.service, Service::Fixed { .. } | Service::Unlimited)
    }

    /// Starts transmission / schedules the next opportunity if idle.
    fn kick(&mut self, cx: &mut Ctx<'_>) {
        if !self.up
            || self.in_service.is_some()
            || self.pending_opportunity.is_some()
            || self.queue.is_empty()
        {
            return;
        }
        match &self.service {
            Service::Fixed { bps } => {
                let bps = *bps;
                if let Some(e) = self.pop_head(cx) {
                    let done = cx.now.saturating_add(serialization_time(e.bytes, bps));
                    self.in_service = Some(e);
                    let kind = self.service_event();
                    cx.events.push(done, kind);
                }
            }
            Service::Unlimited => {
                while let Some(e) = self.pop_head(cx) {
                    self.depart(cx, e.packet);
                }
            }
            Service::Trace { schedule, next } => {
                let pos = (*next).max(schedule.first_at_or_after(cx.now));
                let at = schedule.time_of(pos);
                self.pending_opportunity = Some(pos);
                let kind = self.service_event();
                cx.events.push(at, kind);
            }
        }
    }

    fn service_event(&self) -> EventKind {
        EventKind::LinkService {
            link: self.id,
            gen: self.service_gen,
        }
    }

    fn pop_head(&mut self, cx: &mut Ctx<'_>) -> Option<QueueEntry> {
        let e = self.queue.pop()?;
        self.note_queue(cx.now);
        if let Some(p) = cx.packets.get_mut(e.packet) {
            p.hop_dequeued_at = cx.now;
        }
        Some(e)
    }

    /// Handles a `LinkService` event (transmission done or opportunity).
    pub(crate) fn on_service(&mut self, cx: &mut Ctx<'_>, gen: u64) {
        if gen != self.service_gen {
            return;
        }
        if let Some(e) = self.in_service.take() {
            self.depart(cx, e.packet);
        } else if self.pending_opportunity.is_some() {
            self.serve_opportunities(cx);
        }
        self.kick(cx);
    }

    /// Uses every trace opportunity at the current time.
    fn serve_opportunities(&mut self, cx: &mut Ctx<'_>) {
        let Some(mut pos) = self.pending_opportunity.take() else {
            return;
        };
        let Service::Trace { schedule, next } = &mut self.service else {
            return;
        };
        let mut out = std::mem::take(&mut self.scratch);
        while schedule.time_of(pos) <= cx.now && !self.queue.is_empty() {
            let mut budget = OPPORTUNITY_BYTES;
            while let Some(head) = self.queue.front() {
                // A fresh opportunity always carries the head packet, even
                // an oversized one, so the queue can never stall.
                if head.bytes > budget && budget < OPPORTUNITY_BYTES {
                    break;
                }
                budget = budget.saturating_sub(head.bytes);
                out.extend(self.queue.pop());
                if budget == 0 {
                    break;
                }
            }
            pos = schedule.next(pos);
        }
        *next = pos;
        if !out.is_empty() {
            self.note_queue(cx.now);
        }
        for e in out.drain(..) {
            if let Some(p) = cx.packets.get_mut(e.packet) {
                p.hop_dequeued_at = cx.now;
            }
            self.depart(cx, e.packet);
        }
        self.scratch = out;
    }

    /// The packet leaves the transmitter and starts propagating.
    fn depart(&mut self, cx: &mut Ctx<'_>, packet: u32) {
        let jitter = if self.jitter.max > 0 {
            self.jitter_rng.gen_range(0..=self.jitter.max)
        } else {
            0
        };
        let mut at = cx.now.saturating_add(self.delay).saturating_add(jitter);
        if !self.jitter.allow_reordering {
            at = at.max(self.last_delivery);
        }
        self.last_delivery = self.last_delivery.max(at);
        cx.events.push_fifo(
            self.id,
            at,
            EventKind::Deliver {
                link: self.id,
                packet,
                epoch: self.epoch,
            },
        );
    }

    /// A packet reaches the end of the link. Returns false if it was lost
    /// because the link went down meanwhile (it is then removed).
    pub(crate) fn on_deliver(&mut self, cx: &mut Ctx<'_>, packet: u32, epoch: u32) -> bool {
        let Some(p) = cx.packets.get(packet) else {
            return false;
        };
        let bytes = p.size();
        if epoch != self.epoch {
            self.drop_packet(cx, packet, bytes, DropCause::LinkDown);
            return false;
        }
        self.stats.delivered.add(bytes);
        self.stats
            .queue_delay
            .record(p.hop_dequeued_at.saturating_sub(p.hop_entered_at));
        self.stats
            .transit_delay
            .record(cx.now.saturating_sub(p.hop_entered_at));
        true
    }

    /// Applies a configuration change now.
    pub(crate) fn apply(&mut self, cx: &mut Ctx<'_>, action: &LinkAction) {
        match action {
            LinkAction::Down => self.set_down(cx),
            LinkAction::Up => {
                if !self.up {
                    self.up = true;
                    self.kick(cx);
                }
            }
            LinkAction::SetRate { bits_per_sec } => {
                let c = Capacity::Rate {
                    bits_per_sec: *bits_per_sec,
                };
                self.set_capacity(cx, &c);
            }
            LinkAction::SetCapacity(c) => self.set_capacity(cx, c),
            LinkAction::SetDelay { delay } => self.delay = *delay,
            LinkAction::SetLoss(model) => self.loss.set_model(*model),
            LinkAction::SetQueue(limit) => self.queue.set_limit(*limit),
            LinkAction::SetJitter(j) => self.jitter = *j,
            LinkAction::SetMtu(m) => self.mtu = *m,
        }
    }

    fn set_capacity(&mut self, cx: &mut Ctx<'_>, c: &Capacity) {
        if let (Service::Fixed { bps }, Capacity::Rate { bits_per_sec }) = (&mut self.service, c) {
            // The packet on the wire (if any) finishes at the old rate.
            *bps = *bits_per_sec;
        } else {
            self.service = Service::new(c);
            if self.pending_opportunity.take().is_some() {
                self.service_gen += 1;
            }
        }
        self.kick(cx);
    }

    fn set_down(&mut self, cx: &mut Ctx<'_>) {
        if !self.up {
            return;
        }
        self.up = false;
        self.epoch = self.epoch.wrapping_add(1);
        self.service_gen += 1;
        self.pending_opportunity = None;
        if let Some(e) = self.in_service.take() {
            self.drop_packet(cx, e.packet, e.bytes, DropCause::LinkDown);
        }
        while let Some(e) = self.queue.pop() {
            self.drop_packet(cx, e.packet, e.bytes, DropCause::LinkDown);
        }
        self.note_queue(cx.now);
    }
}
