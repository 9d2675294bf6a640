//! Redundant: each data packet is sent on the min-RTT path and duplicated on every other
//! usable path (useful for latency-critical, low-volume traffic).

use super::{lowest_rtt, Backlog, PathView, Scheduler};
use crate::path::PathId;

#[derive(Debug, Default)]
pub struct Redundant;

impl Scheduler for Redundant {
    fn select(&mut self, paths: &[PathView], _: &Backlog) -> Option<PathId> {
        lowest_rtt(paths, true)
    }
    fn duplicates(&self) -> bool {
        true
    }
    fn name(&self) -> &'static str {
        "redundant"
    }
}
