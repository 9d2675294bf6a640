//! The [`Node`] abstraction: anything that sends and receives opaque UDP
//! datagrams inside the simulator.

use std::net::SocketAddr;

use crate::time::SimTime;

/// An opaque UDP datagram moving through the simulated network.
///
/// The simulator never looks at `payload`; it only uses `payload.len()` as the
/// packet size (no IP/UDP header overhead is added) and `src`/`dst` IPs for
/// routing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Datagram {
    /// Sending socket address.
    pub src: SocketAddr,
    /// Destination socket address; the destination IP selects the receiving node.
    pub dst: SocketAddr,
    /// Opaque payload bytes.
    pub payload: Vec<u8>,
    /// ECN codepoint of the IP header (RFC 3168 §5); links may mark or clear it.
    pub ecn: Ecn,
}

/// The two ECN bits of the IP header (RFC 3168 §5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Ecn {
    /// Not ECN-capable transport (0b00).
    #[default]
    NotEct,
    /// ECT(1) (0b01).
    Ect1,
    /// ECT(0) (0b10).
    Ect0,
    /// Congestion experienced (0b11).
    Ce,
}

impl Ecn {
    /// Whether the sender declared the packet ECN-capable (a queue may mark it CE).
    pub fn is_ect(self) -> bool {
        !matches!(self, Ecn::NotEct)
    }
}

impl Datagram {
    /// Creates a datagram (not ECN-capable).
    pub fn new(src: SocketAddr, dst: SocketAddr, payload: Vec<u8>) -> Self {
        Self {
            src,
            dst,
            payload,
            ecn: Ecn::NotEct,
        }
    }

    /// The same datagram with this ECN codepoint.
    pub fn with_ecn(mut self, ecn: Ecn) -> Self {
        self.ecn = ecn;
        self
    }

    /// Size in bytes as seen by links (the payload length).
    pub fn size(&self) -> usize {
        self.payload.len()
    }
}

/// A participant in the simulation (a sans-IO endpoint, a traffic source, ...).
///
/// The simulator drives a node exclusively through these methods, always with
/// virtual time. After *every* interaction (start, datagram delivery, timeout)
/// it drains [`Node::poll_transmit`] until `None`, then re-queries
/// [`Node::poll_timeout`].
pub trait Node {
    /// A datagram arrived at one of this node's addresses at `now`.
    fn handle_datagram(&mut self, now: SimTime, datagram: Datagram);
    /// Next datagram this node wants to send now, or `None`. Called
    /// repeatedly until `None` after every event delivered to the node, so
    /// it must eventually return `None`. Datagrams are routed by
    /// `(src.ip(), dst.ip())`; unroutable ones are counted and dropped.
    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram>;
    /// Earliest virtual time at which the node wants
    /// [`Node::handle_timeout`] (timers, pacing). `None` = no timer. A time in
    /// the past fires as soon as possible; `handle_timeout` must then move
    /// the deadline forward (or clear it), or the simulation stalls at that
    /// instant.
    fn poll_timeout(&mut self) -> Option<SimTime>;
    /// The timer returned by [`Node::poll_timeout`] expired; `now` is the
    /// current virtual time (never earlier than the requested deadline).
    fn handle_timeout(&mut self, now: SimTime);
    /// True when this node's workload is complete. The simulation stops when
    /// every node added with [`crate::Simulator::add_node`] reports done
    /// (nodes added with [`crate::Simulator::add_background_node`] are not
    /// waited for).
    fn is_done(&self) -> bool;
}

impl<N: Node + ?Sized> Node for Box<N> {
    fn handle_datagram(&mut self, now: SimTime, datagram: Datagram) {
        (**self).handle_datagram(now, datagram);
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        (**self).poll_transmit(now)
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        (**self).poll_timeout()
    }

    fn handle_timeout(&mut self, now: SimTime) {
        (**self).handle_timeout(now);
    }

    fn is_done(&self) -> bool {
        (**self).is_done()
    }
}
