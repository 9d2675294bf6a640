//! The simulator: nodes, links, routes and the event loop.

mod access;

use std::collections::BTreeMap;
use std::net::IpAddr;

use serde::{Deserialize, Serialize};

use crate::event::{EventKind, EventQueue};
use crate::link::engine::{Ctx, Link};
use crate::link::{LinkAction, LinkConfig, LinkId};
use crate::node::{Datagram, Node};
use crate::packet::{InFlight, PacketStore};
use crate::rng;
use crate::stats::{Counter, RouteStats};
use crate::time::{SimTime, MILLISECOND};

/// Identifies a node inside one [`Simulator`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct NodeId(pub(crate) u32);

impl NodeId {
    /// Zero-based index of the node (in creation order).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Errors from building or modifying a simulation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SimError {
    /// The IP address already belongs to another node.
    #[error("address {0} is already assigned to a node")]
    AddressInUse(IpAddr),
    /// A link id does not belong to this simulator.
    #[error("unknown link {0:?}")]
    UnknownLink(LinkId),
    /// A node id does not belong to this simulator.
    #[error("unknown node {0:?}")]
    UnknownNode(NodeId),
    /// A route must contain at least one link.
    #[error("route {src} -> {dst} has no links")]
    EmptyRoute {
        /// Source IP.
        src: IpAddr,
        /// Destination IP.
        dst: IpAddr,
    },
    /// A link configuration or action is invalid.
    #[error("invalid link configuration: {0}")]
    InvalidLink(String),
    /// Too many nodes, links or routes for 32-bit ids.
    #[error("too many {0}")]
    TooMany(&'static str),
}

/// Simulator-wide settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SimConfig {
    /// Master seed; all randomness is derived from it.
    pub seed: u64,
    /// Bucket width of the queue-occupancy and delay time series.
    pub sample_interval: SimTime,
}

impl Default for SimConfig {
    fn default() -> Self {
        Self {
            seed: 0,
            sample_interval: MILLISECOND,
        }
    }
}

/// Why [`Simulator::run_until`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// Every workload node reports [`Node::is_done`].
    AllDone,
    /// No events are scheduled any more.
    Idle,
    /// The time limit was reached (virtual time is set to the limit).
    TimeLimit,
    /// Node timers kept firing without virtual time moving on (more than
    /// [`MAX_TIMER_FIRES_PER_MS`] within one millisecond): a node that reports a deadline
    /// its `handle_timeout` does not consume. The run stops instead of spinning for ever.
    Stuck,
}

/// Timer firings within one millisecond of virtual time that stop a run as
/// [`StopReason::Stuck`]. A protocol stack fires a few timers per packet; this is far beyond
/// any rate a link could cause.
pub const MAX_TIMER_FIRES_PER_MS: u32 = 200_000;

/// Counts timer firings per millisecond of virtual time (see [`StopReason::Stuck`]).
#[derive(Debug, Default)]
struct TimerBurst {
    window_start: SimTime,
    fires: u32,
    stuck: bool,
}

impl TimerBurst {
    fn on_fire(&mut self, now: SimTime) {
        if now.saturating_sub(self.window_start) >= MILLISECOND {
            self.window_start = now;
            self.fires = 0;
        }
        self.fires += 1;
        self.stuck |= self.fires > MAX_TIMER_FIRES_PER_MS;
    }
}

/// Result of a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunOutcome {
    /// Why the run stopped.
    pub reason: StopReason,
    /// Virtual time when it stopped.
    pub now: SimTime,
    /// Events processed during this call.
    pub events: u64,
    /// Measured wall-clock duration of this call. **Not deterministic**;
    /// never used by the simulation itself, only reported.
    pub wall_time: std::time::Duration,
}

struct NodeSlot<N> {
    node: N,
    addrs: Vec<IpAddr>,
    /// Counted for [`StopReason::AllDone`].
    workload: bool,
    done: bool,
    timer_gen: u64,
    /// Time of the earliest valid pending timer event.
    armed_at: Option<SimTime>,
    /// What `poll_timeout` returned after the last interaction.
    deadline: Option<SimTime>,
}

struct Route {
    links: Box<[u32]>,
    stats: usize,
}

/// A deterministic discrete-event network simulator.
///
/// `N` is the node type; the default `Box<dyn Node>` allows mixing node
/// types, while a concrete type gives typed access via [`Simulator::node`].
///
/// ```
/// use mpquic_netsim::{LinkConfig, Simulator, time::ms, toy::{CbrSender, Sink, ToyNode}};
/// let a = "10.0.0.1".parse().unwrap();
/// let b = "10.0.0.2".parse().unwrap();
/// let mut sim: Simulator<ToyNode> = Simulator::new(7);
/// let sender = CbrSender::new((a, 1000).into(), (b, 2000).into(), 1000, ms(1), 100);
/// let tx = sim.add_node(ToyNode::Cbr(sender), [a]).unwrap();
/// let rx = sim.add_background_node(ToyNode::Sink(Sink::default()), [b]).unwrap();
/// let link = LinkConfig::mbit(10.0).with_delay(ms(5));
/// sim.add_path(a, b, link.clone(), link).unwrap();
/// let out = sim.run_until(ms(1000));
/// assert_eq!(out.reason, mpquic_netsim::StopReason::AllDone);
/// # let _ = (tx, rx);
/// ```
pub struct Simulator<N = Box<dyn Node>> {
    config: SimConfig,
    now: SimTime,
    events: EventQueue,
    nodes: Vec<NodeSlot<N>>,
    links: Vec<Link>,
    routes: Vec<Route>,
    route_map: BTreeMap<(IpAddr, IpAddr), u32>,
    route_stats: Vec<RouteStats>,
    route_stats_map: BTreeMap<(IpAddr, IpAddr), usize>,
    addr_map: BTreeMap<IpAddr, u32>,
    packets: PacketStore,
    workload_nodes: usize,
    done_nodes: usize,
    events_processed: u64,
    unroutable: Counter,
    timer_burst: TimerBurst,
}

impl<N: Node> Simulator<N> {
    /// A new simulator with master `seed` and default settings.
    pub fn new(seed: u64) -> Self {
        Self::with_config(SimConfig {
            seed,
            ..SimConfig::default()
        })
    }

    /// A new simulator with explicit settings.
    pub fn with_config(config: SimConfig) -> Self {
        Self {
            config,
            now: 0,
            events: EventQueue::default(),
            nodes: Vec::new(),
            links: Vec::new(),
            routes: Vec::new(),
            route_map: BTreeMap::new(),
            route_stats: Vec::new(),
            route_stats_map: BTreeMap::new(),
            addr_map: BTreeMap::new(),
            packets: PacketStore::default(),
            workload_nodes: 0,
            done_nodes: 0,
            events_processed: 0,
            unroutable: Counter::default(),
            timer_burst: TimerBurst::default(),
        }
    }

    /// The master seed.
    pub fn seed(&self) -> u64 {
        self.config.seed
    }

    /// A deterministic 32-byte seed for `label`, derived from the master
    /// seed (see [`crate::rng`]). Use it to seed each endpoint's own RNG.
    pub fn derive_seed(&self, label: &str) -> [u8; 32] {
        rng::derive_seed(self.config.seed, label)
    }

    /// A deterministic RNG for `label`, derived from the master seed.
    pub fn derive_rng(&self, label: &str) -> rand_chacha::ChaCha20Rng {
        rng::stream_rng(self.config.seed, label)
    }

    /// Current virtual time.
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Adds a workload node owning `addrs`; the run stops with
    /// [`StopReason::AllDone`] once every workload node is done. The node is
    /// first polled at the current time.
    pub fn add_node(
        &mut self,
        node: N,
        addrs: impl IntoIterator<Item = IpAddr>,
    ) -> Result<NodeId, SimError> {
        self.insert_node(node, addrs, true)
    }

    /// Adds a node that is not waited for (a sink, cross traffic, a server).
    pub fn add_background_node(
        &mut self,
        node: N,
        addrs: impl IntoIterator<Item = IpAddr>,
    ) -> Result<NodeId, SimError> {
        self.insert_node(node, addrs, false)
    }

    fn insert_node(
        &mut self,
        node: N,
        addrs: impl IntoIterator<Item = IpAddr>,
        workload: bool,
    ) -> Result<NodeId, SimError> {
        let idx = u32::try_from(self.nodes.len()).map_err(|_| SimError::TooMany("nodes"))?;
        let mut addrs: Vec<IpAddr> = addrs.into_iter().collect();
        addrs.dedup();
        if let Some(a) = addrs.iter().find(|a| self.addr_map.contains_key(a)) {
            return Err(SimError::AddressInUse(*a));
        }
        for a in &addrs {
            self.addr_map.insert(*a, idx);
        }
        let done = node.is_done();
        if workload {
            self.workload_nodes += 1;
            self.done_nodes += usize::from(done);
        }
        self.nodes.push(NodeSlot {
            node,
            addrs,
            workload,
            done,
            timer_gen: 0,
            armed_at: None,
            deadline: None,
        });
        self.events
            .push(self.now, EventKind::NodeWake { node: idx });
        Ok(NodeId(idx))
    }

    /// Schedules a poll of the node at the current time (call after
    /// changing a node through [`Simulator::node_mut`]).
    pub fn wake(&mut self, id: NodeId) -> Result<(), SimError> {
        if id.index() >= self.nodes.len() {
            return Err(SimError::UnknownNode(id));
        }
        self.events
            .push(self.now, EventKind::NodeWake { node: id.0 });
        Ok(())
    }

    /// Adds a one-way link. Its scheduled events are queued immediately.
    pub fn add_link(&mut self, config: LinkConfig) -> Result<LinkId, SimError> {
        config.validate().map_err(SimError::InvalidLink)?;
        let idx = u32::try_from(self.links.len()).map_err(|_| SimError::TooMany("links"))?;
        let link = Link::new(idx, &config, self.config.seed, self.config.sample_interval);
        self.links.push(link);
        let id = LinkId(idx);
        for ev in config.events {
            self.schedule_link_action(id, ev.at, ev.action)?;
        }
        Ok(id)
    }

    /// Schedules `action` on `link` at absolute time `at` (clamped to now).
    pub fn schedule_link_action(
        &mut self,
        link: LinkId,
        at: SimTime,
        action: LinkAction,
    ) -> Result<(), SimError> {
        action.validate().map_err(SimError::InvalidLink)?;
        let l = self
            .links
            .get_mut(link.index())
            .ok_or(SimError::UnknownLink(link))?;
        let action_idx =
            u32::try_from(l.actions.len()).map_err(|_| SimError::TooMany("link actions"))?;
        l.actions.push(action);
        self.events.push(
            at.max(self.now),
            EventKind::LinkAction {
                link: link.0,
                action: action_idx,
            },
        );
        Ok(())
    }

    /// Applies `action` on `link` immediately.
    pub fn apply_link_action(&mut self, link: LinkId, action: LinkAction) -> Result<(), SimError> {
        action.validate().map_err(SimError::InvalidLink)?;
        let l = self
            .links
            .get_mut(link.index())
            .ok_or(SimError::UnknownLink(link))?;
        let mut cx = Ctx {
            now: self.now,
            events: &mut self.events,
            packets: &mut self.packets,
        };
        l.apply(&mut cx, &action);
        Ok(())
    }

    /// Routes packets from `src` to `dst` (by IP) through `links` in order.
    /// Replaces an existing route; packets already in flight keep their old
    /// path. Route statistics are kept per `(src, dst)` across replacements.
    pub fn add_route(
        &mut self,
        src: IpAddr,
        dst: IpAddr,
        links: &[LinkId],
    ) -> Result<(), SimError> {
        if links.is_empty() {
            return Err(SimError::EmptyRoute { src, dst });
        }
        if let Some(bad) = links.iter().find(|l| l.index() >= self.links.len()) {
            return Err(SimError::UnknownLink(*bad));
        }
        let idx = u32::try_from(self.routes.len()).map_err(|_| SimError::TooMany("routes"))?;
        let interval = self.config.sample_interval;
        let stats_len = self.route_stats.len();
        let stats = *self.route_stats_map.entry((src, dst)).or_insert(stats_len);
        if stats == stats_len {
            self.route_stats.push(RouteStats::new(src, dst, interval));
        }
        self.routes.push(Route {
            links: links.iter().map(|l| l.0).collect(),
            stats,
        });
        self.route_map.insert((src, dst), idx);
        Ok(())
    }

    /// Creates two links (`a -> b` with `up`, `b -> a` with `down`) and the
    /// routes between `a` and `b`. Returns `(up_link, down_link)`.
    pub fn add_path(
        &mut self,
        a: IpAddr,
        b: IpAddr,
        up: LinkConfig,
        down: LinkConfig,
    ) -> Result<(LinkId, LinkId), SimError> {
        up.validate().map_err(SimError::InvalidLink)?;
        down.validate().map_err(SimError::InvalidLink)?;
        let u = self.add_link(up)?;
        let d = self.add_link(down)?;
        self.add_route(a, b, &[u])?;
        self.add_route(b, a, &[d])?;
        Ok((u, d))
    }

    /// Runs until every workload node is done, nothing is scheduled, or
    /// virtual time would pass `limit`.
    pub fn run_until(&mut self, limit: SimTime) -> RunOutcome {
        let wall_start = std::time::Instant::now();
        let start_events = self.events_processed;
        let reason = loop {
            if self.all_done() {
                break StopReason::AllDone;
            }
            if self.timer_burst.stuck {
                break StopReason::Stuck;
            }
            match self.events.peek_time() {
                None => break StopReason::Idle,
                Some(t) if t > limit => {
                    self.now = self.now.max(limit);
                    break StopReason::TimeLimit;
                }
                Some(_) => {
                    self.step();
                }
            }
        };
        RunOutcome {
            reason,
            now: self.now,
            events: self.events_processed - start_events,
            wall_time: wall_start.elapsed(),
        }
    }

    /// Processes every event up to and including time `t`, *ignoring*
    /// completion, and sets the clock to `t` (if it is in the future). Useful
    /// to sample state at fixed virtual times.
    pub fn advance_to(&mut self, t: SimTime) {
        while !self.timer_burst.stuck && self.events.peek_time().is_some_and(|e| e <= t) {
            self.step();
        }
        self.now = self.now.max(t);
    }

    /// Runs for `duration` of virtual time from now (see [`Simulator::run_until`]).
    pub fn run_for(&mut self, duration: SimTime) -> RunOutcome {
        self.run_until(self.now.saturating_add(duration))
    }

    /// True when there is at least one workload node and all are done.
    pub fn all_done(&self) -> bool {
        self.workload_nodes > 0 && self.done_nodes == self.workload_nodes
    }

    /// Time of the next scheduled event, if any.
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.events.peek_time()
    }

    /// Processes the next event (which may be a no-op, e.g. a superseded
    /// timer) and returns its time; `None` if nothing is scheduled.
    pub fn step(&mut self) -> Option<SimTime> {
        let (time, kind) = self.events.pop()?;
        self.now = self.now.max(time);
        self.events_processed += 1;
        match kind {
            EventKind::NodeWake { node } => self.after_interaction(node),
            EventKind::NodeTimer { node, gen } => self.on_timer(node, gen),
            EventKind::LinkService { link, gen } => {
                if let Some(l) = self.links.get_mut(link as usize) {
                    let mut cx = Ctx {
                        now: self.now,
                        events: &mut self.events,
                        packets: &mut self.packets,
                    };
                    l.on_service(&mut cx, gen);
                }
            }
            EventKind::Deliver {
                link,
                packet,
                epoch,
            } => self.on_deliver(link, packet, epoch),
            EventKind::LinkAction { link, action } => self.on_link_action(link, action),
        }
        Some(time)
    }

    fn on_link_action(&mut self, link: u32, action: u32) {
        let Some(l) = self.links.get_mut(link as usize) else {
            return;
        };
        let Some(a) = l.actions.get(action as usize).cloned() else {
            return;
        };
        let mut cx = Ctx {
            now: self.now,
            events: &mut self.events,
            packets: &mut self.packets,
        };
        l.apply(&mut cx, &a);
    }

    fn on_timer(&mut self, node: u32, gen: u64) {
        let now = self.now;
        let Some(slot) = self.nodes.get_mut(node as usize) else {
            return;
        };
        if gen != slot.timer_gen {
            return;
        }
        slot.armed_at = None;
        match slot.deadline {
            Some(d) if d <= now => {
                self.timer_burst.on_fire(now);
                slot.node.handle_timeout(now);
                self.after_interaction(node);
            }
            Some(_) => self.arm_timer(node),
            None => {}
        }
    }

    /// Drains transmissions, refreshes the timer and the done flag.
    fn after_interaction(&mut self, node: u32) {
        let now = self.now;
        loop {
            let Some(slot) = self.nodes.get_mut(node as usize) else {
                return;
            };
            match slot.node.poll_transmit(now) {
                Some(d) => self.inject(d),
                None => break,
            }
        }
        let Some(slot) = self.nodes.get_mut(node as usize) else {
            return;
        };
        slot.deadline = slot.node.poll_timeout();
        let done = slot.node.is_done();
        if slot.workload && done != slot.done {
            if done {
                self.done_nodes += 1;
            } else {
                self.done_nodes -= 1;
            }
        }
        slot.done = done;
        self.arm_timer(node);
    }

    /// Ensures a timer event exists no later than the node's deadline.
    fn arm_timer(&mut self, node: u32) {
        let now = self.now;
        let Some(slot) = self.nodes.get_mut(node as usize) else {
            return;
        };
        let Some(deadline) = slot.deadline else {
            return;
        };
        let at = deadline.max(now);
        if slot.armed_at.is_none_or(|armed| at < armed) {
            slot.timer_gen += 1;
            slot.armed_at = Some(at);
            self.events.push(
                at,
                EventKind::NodeTimer {
                    node,
                    gen: slot.timer_gen,
                },
            );
        }
    }

    /// Puts a datagram sent by a node into the first link of its route.
    fn inject(&mut self, datagram: Datagram) {
        let key = (datagram.src.ip(), datagram.dst.ip());
        let route = self.route_map.get(&key).copied();
        let target_exists = self.addr_map.contains_key(&key.1);
        let Some((route_idx, r)) = route
            .filter(|_| target_exists)
            .and_then(|i| Some((i, self.routes.get(i as usize)?)))
        else {
            self.unroutable.add(datagram.payload.len() as u64);
            return;
        };
        let Some(&first) = r.links.first() else {
            self.unroutable.add(datagram.payload.len() as u64);
            return;
        };
        if let Some(s) = self.route_stats.get_mut(r.stats) {
            s.sent.add(datagram.payload.len() as u64);
        }
        let id = self.packets.insert(InFlight {
            datagram,
            route: route_idx,
            hop: 0,
            sent_at: self.now,
            hop_entered_at: self.now,
            hop_dequeued_at: self.now,
        });
        self.enter_link(first, id);
    }

    fn enter_link(&mut self, link: u32, packet: u32) {
        let Some(l) = self.links.get_mut(link as usize) else {
            self.packets.remove(packet);
            return;
        };
        let mut cx = Ctx {
            now: self.now,
            events: &mut self.events,
            packets: &mut self.packets,
        };
        l.enter(&mut cx, packet);
    }

    fn on_deliver(&mut self, link: u32, packet: u32, epoch: u32) {
        let Some(l) = self.links.get_mut(link as usize) else {
            return;
        };
        let mut cx = Ctx {
            now: self.now,
            events: &mut self.events,
            packets: &mut self.packets,
        };
        if !l.on_deliver(&mut cx, packet, epoch) {
            return;
        }
        let Some(p) = self.packets.get_mut(packet) else {
            return;
        };
        p.hop += 1;
        let (route, hop) = (p.route, p.hop as usize);
        let Some(r) = self.routes.get(route as usize) else {
            self.packets.remove(packet);
            return;
        };
        if let Some(&next) = r.links.get(hop) {
            self.enter_link(next, packet);
            return;
        }
        let stats = r.stats;
        let Some(p) = self.packets.remove(packet) else {
            return;
        };
        let bytes = p.size();
        let Some(&node) = self.addr_map.get(&p.datagram.dst.ip()) else {
            self.unroutable.add(bytes);
            return;
        };
        if let Some(s) = self.route_stats.get_mut(stats) {
            s.record_delivery(p.sent_at, self.now, bytes);
        }
        if let Some(slot) = self.nodes.get_mut(node as usize) {
            slot.node.handle_datagram(self.now, p.datagram);
            self.after_interaction(node);
        }
    }
}
