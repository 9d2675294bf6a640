//! One link stepped by its caller: the simulator's link engine without the
//! simulator, for a real-time emulator (`mpquic-emulate`) that feeds it
//! datagrams with their arrival times and releases them at the times it
//! returns.
//!
//! The model runs exactly the code of a [`Simulator`](crate::Simulator)'s
//! links — queue, transmitter, trace opportunities, loss, jitter, scheduled
//! actions — on a private event queue, so one [`LinkConfig`] behaves the
//! same in virtual time and on real sockets. The only difference is who
//! advances the clock: here the caller, with [`LinkModel::advance`] and
//! [`LinkModel::send`], never backwards (earlier times are clamped to the
//! model's clock, as a late timer in real time would see them).

use super::engine::{Ctx, Link};
use super::{LinkAction, LinkConfig};
use crate::event::{EventKind, EventQueue};
use crate::node::Datagram;
use crate::packet::{InFlight, PacketStore};
use crate::stats::{DropCause, LinkStats, LinkSummary};
use crate::time::{SimTime, MILLISECOND};

/// A datagram that reached the end of the link, and when it did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Delivery {
    /// Model time at which the datagram leaves the link (its scheduled
    /// release time, which a real-time caller may already have passed).
    pub at: SimTime,
    /// The datagram, as it was sent.
    pub datagram: Datagram,
}

/// A single one-way link driven by an external clock.
///
/// ```
/// use mpquic_netsim::{Datagram, LinkConfig, link::LinkModel, time::ms};
/// let config = LinkConfig::mbit(8.0).with_delay(ms(10));
/// let mut link = LinkModel::new(&config, 1, 0).unwrap();
/// let a = "10.0.0.1:1".parse().unwrap();
/// let mut out = Vec::new();
/// // 1000 bytes at 8 Mbit/s take 1 ms on the wire, then 10 ms of propagation.
/// link.send(0, Datagram::new(a, a, vec![0; 1000]), &mut out).unwrap();
/// assert_eq!(link.next_event_time(), Some(ms(1)));
/// link.advance(ms(20), &mut out);
/// assert_eq!(out[0].at, ms(11));
/// ```
#[derive(Debug)]
pub struct LinkModel {
    link: Link,
    events: EventQueue,
    packets: PacketStore,
    now: SimTime,
    max_queue_packets: usize,
}

impl LinkModel {
    /// A link in the state a simulator's link has at time 0, its scheduled
    /// actions queued. `index` is the link's position in a simulator (its
    /// random streams are `seed`'s sub-streams for that index, so a model
    /// created with the index a simulation used draws the same losses and
    /// jitter for the same sequence of packets).
    pub fn new(config: &LinkConfig, seed: u64, index: u32) -> Result<Self, String> {
        config.validate()?;
        let mut link = Link::new(index, config, seed, MILLISECOND);
        let mut events = EventQueue::default();
        for (i, ev) in config.events.iter().enumerate() {
            let action = u32::try_from(i).map_err(|_| "too many link events".to_owned())?;
            link.actions.push(ev.action.clone());
            events.push(
                ev.at,
                EventKind::LinkAction {
                    link: index,
                    action,
                },
            );
        }
        Ok(Self {
            link,
            events,
            packets: PacketStore::default(),
            now: 0,
            max_queue_packets: 0,
        })
    }

    /// The model's clock: the latest time it was advanced to.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// When the model next needs to run (a transmission ends, a trace
    /// opportunity comes, a packet arrives, a scheduled action applies).
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.events.peek_time()
    }

    /// Runs every event up to and including `to` and moves the clock there;
    /// datagrams that reach the end of the link are appended to `out` in
    /// delivery order.
    pub fn advance(&mut self, to: SimTime, out: &mut Vec<Delivery>) {
        while let Some(at) = self.events.peek_time().filter(|&t| t <= to) {
            let Some((_, kind)) = self.events.pop() else {
                break;
            };
            self.now = self.now.max(at);
            self.handle(kind, out);
        }
        self.now = self.now.max(to);
    }

    fn handle(&mut self, kind: EventKind, out: &mut Vec<Delivery>) {
        let now = self.now;
        let mut cx = Ctx {
            now,
            events: &mut self.events,
            packets: &mut self.packets,
        };
        match kind {
            EventKind::LinkService { gen, .. } => self.link.on_service(&mut cx, gen),
            EventKind::LinkAction { action, .. } => {
                if let Some(a) = self.link.actions.get(action as usize).cloned() {
                    self.link.apply(&mut cx, &a);
                }
            }
            EventKind::Deliver { packet, epoch, .. } => {
                if self.link.on_deliver(&mut cx, packet, epoch) {
                    if let Some(p) = self.packets.remove(packet) {
                        out.push(Delivery {
                            at: now,
                            datagram: p.datagram,
                        });
                    }
                }
            }
            // A lone link has no nodes.
            EventKind::NodeWake { .. } | EventKind::NodeTimer { .. } => {}
        }
    }

    /// A datagram arrives at the link at `at` (clamped to the clock): the
    /// model first advances to `at` (deliveries go to `out`), then the
    /// datagram enters. Returns why the link dropped it, if it did.
    pub fn send(
        &mut self,
        at: SimTime,
        datagram: Datagram,
        out: &mut Vec<Delivery>,
    ) -> Result<(), DropCause> {
        self.advance(at, out);
        let id = self.packets.insert(InFlight {
            datagram,
            route: 0,
            hop: 0,
            sent_at: self.now,
            hop_entered_at: self.now,
            hop_dequeued_at: self.now,
        });
        let mut cx = Ctx {
            now: self.now,
            events: &mut self.events,
            packets: &mut self.packets,
        };
        let dropped = self.link.enter(&mut cx, id);
        self.max_queue_packets = self.max_queue_packets.max(self.link.queue_packets());
        match dropped {
            Some(cause) => Err(cause),
            None => Ok(()),
        }
    }

    /// Applies `action` now (as a scheduled action would at this time).
    pub fn apply(&mut self, action: &LinkAction) -> Result<(), String> {
        action.validate()?;
        let mut cx = Ctx {
            now: self.now,
            events: &mut self.events,
            packets: &mut self.packets,
        };
        self.link.apply(&mut cx, action);
        Ok(())
    }

    /// Whether the link is up.
    pub fn is_up(&self) -> bool {
        self.link.is_up()
    }

    /// Current queue occupancy as `(bytes, packets)`.
    pub fn queue(&self) -> (u64, usize) {
        (self.link.queue_bytes(), self.link.queue_packets())
    }

    /// Largest number of packets the queue held.
    pub fn max_queue_packets(&self) -> usize {
        self.max_queue_packets
    }

    /// Datagrams inside the link (queued, on the wire or propagating).
    pub fn in_flight(&self) -> usize {
        self.packets.live()
    }

    /// The link's ground truth, as the simulator records it.
    pub fn stats(&self) -> &LinkStats {
        &self.link.stats
    }

    /// The link's summary at the model's clock, as in
    /// [`GroundTruth::links`](crate::GroundTruth::links).
    pub fn summary(&self, index: usize) -> LinkSummary {
        let s = &self.link.stats;
        LinkSummary {
            link: index,
            entered: s.entered,
            delivered: s.delivered,
            dropped: s.dropped,
            queue_delay: s.queue_delay,
            transit_delay: s.transit_delay,
            mean_queue_bytes: s.queue.mean_bytes(self.now),
            max_queue_bytes: s.queue.max_bytes,
            ce_marked: s.ce_marked,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::LossModel;
    use crate::queue::QueueLimit;
    use crate::time::{ms, us};

    fn dgram(n: usize) -> Datagram {
        let a = "10.0.0.1:1".parse().expect("addr");
        Datagram::new(a, a, vec![0; n])
    }

    #[test]
    fn queue_overflow_and_down_are_reported() {
        let cfg = LinkConfig::mbit(1.0)
            .with_queue(QueueLimit::Packets(1))
            .down_at(ms(100));
        let mut m = LinkModel::new(&cfg, 1, 0).expect("model");
        let mut out = Vec::new();
        assert_eq!(m.send(0, dgram(1000), &mut out), Ok(()));
        assert_eq!(m.send(0, dgram(1000), &mut out), Ok(()));
        assert_eq!(
            m.send(0, dgram(1000), &mut out),
            Err(DropCause::QueueOverflow)
        );
        assert_eq!(m.max_queue_packets(), 1);
        m.advance(ms(50), &mut out);
        assert_eq!(
            out.iter().map(|d| d.at).collect::<Vec<_>>(),
            [ms(8), ms(16)]
        );
        assert_eq!(
            m.send(ms(200), dgram(10), &mut out),
            Err(DropCause::LinkDown)
        );
        assert!(!m.is_up());
        assert_eq!(m.in_flight(), 0);
    }

    #[test]
    fn late_sends_are_clamped_to_the_clock() {
        let cfg = LinkConfig::unlimited().with_delay(us(500));
        let mut m = LinkModel::new(&cfg, 1, 0).expect("model");
        let mut out = Vec::new();
        m.advance(ms(10), &mut out);
        m.send(ms(5), dgram(1), &mut out).expect("sent");
        m.advance(ms(11), &mut out);
        assert_eq!(out[0].at, ms(10) + us(500));
    }

    #[test]
    fn ecn_step_marking_marks_ect_above_the_threshold_and_keeps_drop_tail_for_the_rest() {
        use crate::node::Ecn;
        let cfg = LinkConfig::mbit(1.0)
            .with_queue(QueueLimit::Packets(4))
            .with_ecn_threshold(QueueLimit::Packets(1));
        let mut m = LinkModel::new(&cfg, 1, 0).expect("model");
        let mut out = Vec::new();
        // First goes on the wire, second waits (queue 0 -> 1), third and fourth arrive
        // above the threshold and are marked.
        for _ in 0..4 {
            m.send(0, dgram(1000).with_ecn(Ecn::Ect0), &mut out)
                .expect("accepted");
        }
        // Non-ECT packets are never marked and still meet the drop-tail limit.
        assert_eq!(m.send(0, dgram(1000), &mut out), Ok(()));
        assert_eq!(
            m.send(0, dgram(1000).with_ecn(Ecn::Ect0), &mut out),
            Err(DropCause::QueueOverflow)
        );
        m.advance(ms(100), &mut out);
        let marks: Vec<Ecn> = out.iter().map(|d| d.datagram.ecn).collect();
        assert_eq!(marks, [Ecn::Ect0, Ecn::Ect0, Ecn::Ce, Ecn::Ce, Ecn::NotEct]);
        assert_eq!(m.stats().ce_marked, 2);
    }

    #[test]
    fn ecn_bleaching_clears_the_codepoint() {
        use crate::node::Ecn;
        let cfg = LinkConfig::unlimited().with_ecn_bleach();
        let mut m = LinkModel::new(&cfg, 1, 0).expect("model");
        let mut out = Vec::new();
        m.send(0, dgram(10).with_ecn(Ecn::Ect0), &mut out)
            .expect("sent");
        m.advance(ms(1), &mut out);
        assert_eq!(out[0].datagram.ecn, Ecn::NotEct);
    }

    #[test]
    fn invalid_config_is_an_error() {
        let cfg = LinkConfig::rate(0);
        assert!(LinkModel::new(&cfg, 1, 0).is_err());
        let cfg = LinkConfig::mbit(1.0).with_loss(LossModel::bernoulli(2.0));
        assert!(LinkModel::new(&cfg, 1, 0).is_err());
    }
}
