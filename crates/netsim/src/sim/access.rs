//! Read access to nodes and ground truth.

use std::net::IpAddr;

use super::{NodeId, Simulator};
use crate::link::LinkId;
use crate::node::Node;
use crate::stats::{
    Counter, DelaySample, GroundTruth, LinkStats, LinkSummary, RouteStats, RouteSummary,
};
use crate::time::SimTime;

impl<N: Node> Simulator<N> {
    /// The node with id `id`.
    pub fn node(&self, id: NodeId) -> Option<&N> {
        self.nodes.get(id.index()).map(|s| &s.node)
    }

    /// Mutable access to a node. The simulator does not notice changes by
    /// itself: call [`Simulator::wake`] afterwards if the node may now want
    /// to transmit or change its timer.
    pub fn node_mut(&mut self, id: NodeId) -> Option<&mut N> {
        self.nodes.get_mut(id.index()).map(|s| &mut s.node)
    }

    /// All nodes with their ids, in creation order.
    pub fn nodes(&self) -> impl Iterator<Item = (NodeId, &N)> {
        self.nodes
            .iter()
            .zip(0u32..)
            .map(|(s, i)| (NodeId(i), &s.node))
    }

    /// Consumes the simulator and returns the nodes in creation order.
    pub fn into_nodes(self) -> Vec<N> {
        self.nodes.into_iter().map(|s| s.node).collect()
    }

    /// The IP addresses owned by a node.
    pub fn node_addrs(&self, id: NodeId) -> Option<&[IpAddr]> {
        self.nodes.get(id.index()).map(|s| s.addrs.as_slice())
    }

    /// The node owning `ip`.
    pub fn node_by_addr(&self, ip: IpAddr) -> Option<NodeId> {
        self.addr_map.get(&ip).map(|&i| NodeId(i))
    }

    /// Number of links.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// Live ground truth of a link (counters, delays, queue occupancy series).
    pub fn link_stats(&self, id: LinkId) -> Option<&LinkStats> {
        self.links.get(id.index()).map(|l| &l.stats)
    }

    /// Current queue occupancy of a link as `(bytes, packets)`.
    pub fn link_queue(&self, id: LinkId) -> Option<(u64, usize)> {
        self.links
            .get(id.index())
            .map(|l| (l.queue_bytes(), l.queue_packets()))
    }

    /// Whether a link is currently up.
    pub fn link_is_up(&self, id: LinkId) -> Option<bool> {
        self.links.get(id.index()).map(|l| l.is_up())
    }

    /// Live ground truth of the `(src, dst)` route.
    pub fn route_stats(&self, src: IpAddr, dst: IpAddr) -> Option<&RouteStats> {
        let i = *self.route_stats_map.get(&(src, dst))?;
        self.route_stats.get(i)
    }

    /// Downsampled `(send_time, one_way_delay)` series of the route (empty if
    /// there is no such route or nothing was delivered yet).
    pub fn route_delay_series(&self, src: IpAddr, dst: IpAddr) -> &[DelaySample] {
        self.route_stats(src, dst)
            .map(|r| r.series.as_slice())
            .unwrap_or(&[])
    }

    /// Smallest one-way delay of any delivered packet on the route.
    pub fn min_one_way_delay(&self, src: IpAddr, dst: IpAddr) -> Option<SimTime> {
        self.route_stats(src, dst)?.one_way_delay.min()
    }

    /// One-way delay experienced by packets sent on the route around time `t`
    /// (latest sample sent at or before `t`).
    pub fn one_way_delay_at(&self, src: IpAddr, dst: IpAddr, t: SimTime) -> Option<SimTime> {
        self.route_stats(src, dst)?.delay_at(t)
    }

    /// True round-trip time of a packet sent from `a` to `b` at `t` and
    /// answered immediately: forward delay at `t` plus reverse delay at the
    /// forward arrival time.
    pub fn rtt_at(&self, a: IpAddr, b: IpAddr, t: SimTime) -> Option<SimTime> {
        let fwd = self.one_way_delay_at(a, b, t)?;
        let rev = self.one_way_delay_at(b, a, t.saturating_add(fwd))?;
        Some(fwd.saturating_add(rev))
    }

    /// Packets dropped before entering a link (no route / no destination node).
    pub fn unroutable(&self) -> Counter {
        self.unroutable
    }

    /// Total events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.events_processed
    }

    /// Events currently scheduled (including superseded timers).
    pub fn pending_events(&self) -> usize {
        self.events.len()
    }

    /// Packets currently inside the network (queued or propagating).
    pub fn packets_in_flight(&self) -> usize {
        self.packets.live()
    }

    /// A compact, serializable snapshot of all ground truth at the current
    /// time. Two runs with the same configuration and seed produce equal
    /// snapshots.
    pub fn ground_truth(&self) -> GroundTruth {
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| LinkSummary {
                link: i,
                entered: l.stats.entered,
                delivered: l.stats.delivered,
                dropped: l.stats.dropped,
                queue_delay: l.stats.queue_delay,
                transit_delay: l.stats.transit_delay,
                mean_queue_bytes: l.stats.queue.mean_bytes(self.now),
                max_queue_bytes: l.stats.queue.max_bytes,
                ce_marked: l.stats.ce_marked,
            })
            .collect();
        let routes = self
            .route_stats_map
            .values()
            .filter_map(|&i| self.route_stats.get(i))
            .map(|r| RouteSummary {
                src: r.src,
                dst: r.dst,
                sent: r.sent,
                delivered: r.delivered,
                one_way_delay: r.one_way_delay,
            })
            .collect();
        GroundTruth {
            now: self.now,
            events: self.events_processed,
            links,
            routes,
            unroutable: self.unroutable,
        }
    }
}
