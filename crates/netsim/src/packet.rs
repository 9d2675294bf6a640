//! Storage for packets inside the network: a slab with a free list, so the
//! event queue and link queues only carry 32-bit handles and no per-packet
//! allocation happens beyond the payload the node handed over.

use crate::node::Datagram;
use crate::time::SimTime;

/// A packet travelling along a route.
#[derive(Debug)]
pub(crate) struct InFlight {
    pub(crate) datagram: Datagram,
    /// Index of the route (in the simulator's route table).
    pub(crate) route: u32,
    /// Index of the current link within the route.
    pub(crate) hop: u32,
    /// When the packet entered the first link of its route.
    pub(crate) sent_at: SimTime,
    /// When the packet entered its current link.
    pub(crate) hop_entered_at: SimTime,
    /// When the packet left the current link's queue.
    pub(crate) hop_dequeued_at: SimTime,
}

impl InFlight {
    pub(crate) fn size(&self) -> u64 {
        self.datagram.payload.len() as u64
    }
}

/// Slab of in-flight packets.
#[derive(Debug, Default)]
pub(crate) struct PacketStore {
    slots: Vec<Option<InFlight>>,
    free: Vec<u32>,
    live: usize,
}

impl PacketStore {
    pub(crate) fn insert(&mut self, p: InFlight) -> u32 {
        self.live += 1;
        if let Some(id) = self.free.pop() {
            self.slots[id as usize] = Some(p);
            id
        } else {
            self.slots.push(Some(p));
            // More than 4 billion packets simultaneously in flight would
            // need hundreds of GiB; saturating keeps this panic-free.
            u32::try_from(self.slots.len() - 1).unwrap_or(u32::MAX)
        }
    }

    pub(crate) fn get(&self, id: u32) -> Option<&InFlight> {
        self.slots.get(id as usize)?.as_ref()
    }

    pub(crate) fn get_mut(&mut self, id: u32) -> Option<&mut InFlight> {
        self.slots.get_mut(id as usize)?.as_mut()
    }

    pub(crate) fn remove(&mut self, id: u32) -> Option<InFlight> {
        let p = self.slots.get_mut(id as usize)?.take()?;
        self.free.push(id);
        self.live -= 1;
        Some(p)
    }

    /// Number of packets currently stored.
    pub(crate) fn live(&self) -> usize {
        self.live
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(n: u8) -> InFlight {
        let a = "10.0.0.1:1".parse().expect("addr");
        InFlight {
            datagram: Datagram::new(a, a, vec![n]),
            route: 0,
            hop: 0,
            sent_at: 0,
            hop_entered_at: 0,
            hop_dequeued_at: 0,
        }
    }

    #[test]
    fn reuses_slots() {
        let mut s = PacketStore::default();
        let a = s.insert(pkt(1));
        let b = s.insert(pkt(2));
        assert_eq!(s.remove(a).map(|p| p.datagram.payload), Some(vec![1]));
        assert!(s.remove(a).is_none());
        let c = s.insert(pkt(3));
        assert_eq!(c, a);
        assert_eq!(s.live(), 2);
        assert_eq!(s.get(b).map(InFlight::size), Some(1));
        assert!(s.get_mut(99).is_none());
    }
}
