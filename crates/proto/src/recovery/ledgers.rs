//! A path's sent-packet ledgers, one per encryption level (RFC 9002 §A.1: one per packet
//! number space).
//!
//! Only the handshake path ever sends Initial and Handshake packets, and only until their keys
//! are discarded (RFC 9001 §4.9); their two ledgers (152 bytes each) live behind one box that is
//! made by the first packet sent at those levels and released once both are empty after the
//! Handshake keys went, so an established connection's paths hold only the application
//! level's ledger inline.

use std::ops::{Index, IndexMut};

use crate::crypto::Epoch;
use crate::recovery::Ledger;

/// The ledgers of one path, indexed by `Epoch::index()` (Initial, Handshake, Data).
#[derive(Debug, Default)]
pub(crate) struct Ledgers {
    data: Ledger,
    /// Initial and Handshake, while they may hold packets.
    handshake: Option<Box<[Ledger; 2]>>,
}

/// Read access to a level without packets: an empty ledger.
static EMPTY: Ledger = Ledger::EMPTY;

impl Ledgers {
    /// Bytes in flight over every level (RFC 9002 §B.2).
    pub(crate) fn bytes_in_flight(&self) -> u64 {
        let handshake = self
            .handshake
            .as_ref()
            .map_or(0, |h| h[0].bytes_in_flight() + h[1].bytes_in_flight());
        self.data.bytes_in_flight() + handshake
    }

    /// Whether no level has a packet outstanding.
    pub(crate) fn all_empty(&self) -> bool {
        self.data.is_empty()
            && self
                .handshake
                .as_ref()
                .is_none_or(|h| h.iter().all(Ledger::is_empty))
    }

    /// The Initial and Handshake levels' keys are gone: release their ledgers once empty.
    pub(crate) fn release_handshake_levels(&mut self) {
        if self
            .handshake
            .as_ref()
            .is_some_and(|h| h.iter().all(Ledger::is_empty))
        {
            self.handshake = None;
        }
    }

    /// Whether the Initial and Handshake ledgers are allocated (tests).
    #[cfg(test)]
    pub(crate) fn holds_handshake_levels(&self) -> bool {
        self.handshake.is_some()
    }
}

impl Index<usize> for Ledgers {
    type Output = Ledger;

    fn index(&self, level: usize) -> &Ledger {
        if level == Epoch::Data.index() {
            return &self.data;
        }
        self.handshake.as_ref().map_or(&EMPTY, |h| &h[level])
    }
}

impl IndexMut<usize> for Ledgers {
    /// A handshake level's ledger is made on first use.
    fn index_mut(&mut self, level: usize) -> &mut Ledger {
        if level == Epoch::Data.index() {
            return &mut self.data;
        }
        &mut self.handshake.get_or_insert_with(Default::default)[level]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_levels_exist_only_while_used() {
        let mut l = Ledgers::default();
        assert!(l[Epoch::Initial.index()].is_empty());
        assert!(!l.holds_handshake_levels(), "reading does not allocate");
        assert!(l.all_empty() && l.bytes_in_flight() == 0);
        let _ = &mut l[Epoch::Handshake.index()];
        assert!(l.holds_handshake_levels());
        assert!(l.all_empty());
        l.release_handshake_levels();
        assert!(!l.holds_handshake_levels());
    }
}
