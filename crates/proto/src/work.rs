//! Counters of the work a peer can make us do, for the tests of a hostile peer
//! (`tests/hostile_cpu.rs`), which may not time anything: each counts the steps of a loop
//! whose length a peer could make grow with what it did. Kept per thread (a test drives its
//! endpoints on one thread); nothing is counted without the `testing` feature.

#[cfg(any(test, feature = "testing"))]
use std::cell::Cell;

#[cfg(any(test, feature = "testing"))]
thread_local! {
    static REINJECTION_SCAN: Cell<u64> = const { Cell::new(0) };
    static ACK_RANGE_SCAN: Cell<u64> = const { Cell::new(0) };
    static RECEIVED_RANGE_WALK: Cell<u64> = const { Cell::new(0) };
}

/// `n` sent packets were examined in a search for one to re-inject (`connection/xlink.rs`).
#[inline]
pub(crate) fn count_reinjection_scan(n: u64) {
    #[cfg(any(test, feature = "testing"))]
    REINJECTION_SCAN.with(|c| c.set(c.get() + n));
    #[cfg(not(any(test, feature = "testing")))]
    let _ = n;
}

/// Sent packets examined on this thread so far in searches for one to re-inject.
#[cfg(any(test, feature = "testing"))]
pub fn reinjection_scan_steps() -> u64 {
    REINJECTION_SCAN.with(Cell::get)
}

/// `n` ranges still to acknowledge were examined for one to drop (`space/record.rs`).
#[inline]
pub(crate) fn count_ack_range_scan(n: u64) {
    #[cfg(any(test, feature = "testing"))]
    ACK_RANGE_SCAN.with(|c| c.set(c.get() + n));
    #[cfg(not(any(test, feature = "testing")))]
    let _ = n;
}

/// Ranges still to acknowledge examined on this thread so far for one to drop.
#[cfg(any(test, feature = "testing"))]
pub fn ack_range_scan_steps() -> u64 {
    ACK_RANGE_SCAN.with(Cell::get)
}

/// `n` received ranges were walked looking for the first missing packet (`space/record.rs`).
#[inline]
pub(crate) fn count_received_range_walk(n: u64) {
    #[cfg(any(test, feature = "testing"))]
    RECEIVED_RANGE_WALK.with(|c| c.set(c.get() + n));
    #[cfg(not(any(test, feature = "testing")))]
    let _ = n;
}

/// Received ranges walked on this thread so far looking for the first missing packet.
#[cfg(any(test, feature = "testing"))]
pub fn received_range_walk_steps() -> u64 {
    RECEIVED_RANGE_WALK.with(Cell::get)
}
