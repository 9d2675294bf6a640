//! Toy nodes for tests, examples and background traffic.
//!
//! Every toy packet starts with a 17-byte header: kind (`0` data, `1` ack),
//! sequence number and send time (both little-endian `u64`), padded with
//! zeros to the configured size.

use std::collections::VecDeque;
use std::net::SocketAddr;

use crate::node::{Datagram, Node};
use crate::stats::DelayStats;
use crate::time::SimTime;

/// Size of the toy packet header.
pub const HEADER_BYTES: usize = 17;
const KIND_DATA: u8 = 0;
const KIND_ACK: u8 = 1;

fn encode(kind: u8, seq: u64, time: SimTime, size: usize) -> Vec<u8> {
    let mut p = vec![0u8; size.max(HEADER_BYTES)];
    p[0] = kind;
    p[1..9].copy_from_slice(&seq.to_le_bytes());
    p[9..17].copy_from_slice(&time.to_le_bytes());
    p
}

fn decode(p: &[u8]) -> Option<(u8, u64, SimTime)> {
    let kind = *p.first()?;
    let seq = u64::from_le_bytes(p.get(1..9)?.try_into().ok()?);
    let time = u64::from_le_bytes(p.get(9..17)?.try_into().ok()?);
    Some((kind, seq, time))
}

/// Sends `count` packets of `size` bytes, one every `interval` (unreliable).
#[derive(Debug, Clone)]
pub struct CbrSender {
    src: SocketAddr,
    dst: SocketAddr,
    size: usize,
    interval: SimTime,
    count: u64,
    sent: u64,
    next_at: SimTime,
}

impl CbrSender {
    /// A sender starting at time 0. `size` is at least [`HEADER_BYTES`].
    pub fn new(
        src: SocketAddr,
        dst: SocketAddr,
        size: usize,
        interval: SimTime,
        count: u64,
    ) -> Self {
        Self {
            src,
            dst,
            size: size.max(HEADER_BYTES),
            interval,
            count,
            sent: 0,
            next_at: 0,
        }
    }

    /// Delays the first packet to `start`.
    pub fn starting_at(mut self, start: SimTime) -> Self {
        self.next_at = start;
        self
    }

    /// Packets sent so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }
}

impl Node for CbrSender {
    fn handle_datagram(&mut self, _now: SimTime, _datagram: Datagram) {}

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        if self.sent >= self.count || now < self.next_at {
            return None;
        }
        let payload = encode(KIND_DATA, self.sent, now, self.size);
        self.sent += 1;
        self.next_at = self.next_at.saturating_add(self.interval);
        Some(Datagram::new(self.src, self.dst, payload))
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        (self.sent < self.count).then_some(self.next_at)
    }

    fn handle_timeout(&mut self, _now: SimTime) {}

    fn is_done(&self) -> bool {
        self.sent >= self.count
    }
}

/// Receives anything and keeps statistics (never replies).
#[derive(Debug, Clone, Default)]
pub struct Sink {
    /// Packets received.
    pub packets: u64,
    /// Bytes received.
    pub bytes: u64,
    /// Time of the first arrival.
    pub first_arrival: Option<SimTime>,
    /// Time of the last arrival.
    pub last_arrival: Option<SimTime>,
    /// Packets whose sequence number is below one seen earlier.
    pub reordered: u64,
    /// One-way delays computed from the embedded send time.
    pub delay: DelayStats,
    /// `(arrival_time, seq)` of every packet if recording is enabled.
    pub arrivals: Vec<(SimTime, u64)>,
    record: bool,
    max_seq: Option<u64>,
    expected: Option<u64>,
}

impl Sink {
    /// A sink that also records every arrival in [`Sink::arrivals`].
    pub fn recording() -> Self {
        Self {
            record: true,
            ..Self::default()
        }
    }

    /// Reports done once `n` packets have arrived.
    pub fn expecting(mut self, n: u64) -> Self {
        self.expected = Some(n);
        self
    }
}

impl Node for Sink {
    fn handle_datagram(&mut self, now: SimTime, d: Datagram) {
        self.packets += 1;
        self.bytes += d.payload.len() as u64;
        self.first_arrival.get_or_insert(now);
        self.last_arrival = Some(now);
        if let Some((_, seq, sent)) = decode(&d.payload) {
            self.delay.record(now.saturating_sub(sent));
            if self.max_seq.is_some_and(|m| seq < m) {
                self.reordered += 1;
            }
            self.max_seq = Some(self.max_seq.map_or(seq, |m| m.max(seq)));
            if self.record {
                self.arrivals.push((now, seq));
            }
        }
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Datagram> {
        None
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        None
    }

    fn handle_timeout(&mut self, _now: SimTime) {}

    fn is_done(&self) -> bool {
        self.expected.is_some_and(|n| self.packets >= n)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SeqState {
    Unsent,
    InFlight,
    Lost,
    Acked,
}

/// A reliable sender with a fixed window (in packets), per-packet ACKs and
/// a fixed retransmission timeout. Not a congestion controller: it keeps
/// `window` packets in flight, which is enough to fill a pipe in tests.
#[derive(Debug, Clone)]
pub struct WindowSender {
    src: SocketAddr,
    dst: SocketAddr,
    size: usize,
    window: u64,
    rto: SimTime,
    state: Vec<SeqState>,
    sent_at: Vec<SimTime>,
    outstanding: VecDeque<(u64, SimTime)>,
    retransmit: VecDeque<u64>,
    next_new: u64,
    in_flight: u64,
    acked: u64,
    /// Number of retransmissions.
    pub retransmissions: u64,
    /// RTT samples from ACKs of packets sent exactly once.
    pub rtt: DelayStats,
    /// When the last ACK needed completed the transfer.
    pub completed_at: Option<SimTime>,
}

impl WindowSender {
    /// Sends `total` packets of `size` bytes with `window` packets in flight
    /// and retransmission timeout `rto`.
    pub fn new(
        src: SocketAddr,
        dst: SocketAddr,
        size: usize,
        total: u64,
        window: u64,
        rto: SimTime,
    ) -> Self {
        let n = usize::try_from(total).unwrap_or(usize::MAX);
        Self {
            src,
            dst,
            size: size.max(HEADER_BYTES),
            window: window.max(1),
            rto: rto.max(1),
            state: vec![SeqState::Unsent; n],
            sent_at: vec![0; n],
            outstanding: VecDeque::new(),
            retransmit: VecDeque::new(),
            next_new: 0,
            in_flight: 0,
            acked: 0,
            retransmissions: 0,
            rtt: DelayStats::default(),
            completed_at: None,
        }
    }

    /// Packets acknowledged so far.
    pub fn acked(&self) -> u64 {
        self.acked
    }

    fn total(&self) -> u64 {
        self.state.len() as u64
    }

    fn expire(&mut self, now: SimTime) {
        while let Some(&(seq, t)) = self.outstanding.front() {
            let i = seq as usize;
            let valid = self.state.get(i) == Some(&SeqState::InFlight) && self.sent_at[i] == t;
            if valid && t.saturating_add(self.rto) > now {
                break;
            }
            self.outstanding.pop_front();
            if valid {
                self.state[i] = SeqState::Lost;
                self.in_flight -= 1;
                self.retransmit.push_back(seq);
            }
        }
    }
}

impl Node for WindowSender {
    fn handle_datagram(&mut self, now: SimTime, d: Datagram) {
        let Some((KIND_ACK, seq, echoed)) = decode(&d.payload) else {
            return;
        };
        let i = seq as usize;
        match self.state.get(i) {
            Some(SeqState::InFlight) => self.in_flight -= 1,
            Some(SeqState::Lost) => {}
            _ => return,
        }
        if self.sent_at[i] == echoed {
            self.rtt.record(now.saturating_sub(echoed));
        }
        self.state[i] = SeqState::Acked;
        self.acked += 1;
        if self.acked == self.total() {
            self.completed_at = Some(now);
        }
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        self.expire(now);
        if self.in_flight >= self.window {
            return None;
        }
        let seq = loop {
            match self.retransmit.pop_front() {
                Some(s) if self.state[s as usize] == SeqState::Lost => {
                    self.retransmissions += 1;
                    break s;
                }
                Some(_) => continue,
                None if self.next_new < self.total() => {
                    self.next_new += 1;
                    break self.next_new - 1;
                }
                None => return None,
            }
        };
        let i = seq as usize;
        self.state[i] = SeqState::InFlight;
        self.sent_at[i] = now;
        self.in_flight += 1;
        self.outstanding.push_back((seq, now));
        let payload = encode(KIND_DATA, seq, now, self.size);
        Some(Datagram::new(self.src, self.dst, payload))
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        // Drop stale entries so the deadline reflects a real packet.
        while let Some(&(seq, t)) = self.outstanding.front() {
            let i = seq as usize;
            if self.state.get(i) == Some(&SeqState::InFlight) && self.sent_at[i] == t {
                return Some(t.saturating_add(self.rto));
            }
            self.outstanding.pop_front();
        }
        None
    }

    fn handle_timeout(&mut self, now: SimTime) {
        self.expire(now);
    }

    fn is_done(&self) -> bool {
        self.acked == self.total()
    }
}

/// Receiver for [`WindowSender`]: acknowledges every data packet with an
/// `ack_size`-byte ACK sent back to the data packet's source.
#[derive(Debug, Clone)]
pub struct WindowReceiver {
    ack_size: usize,
    seen: Vec<u64>,
    pending: VecDeque<Datagram>,
    /// Distinct data packets received.
    pub unique: u64,
    /// Duplicate data packets received.
    pub duplicates: u64,
    /// Distinct data bytes received.
    pub bytes: u64,
    /// Arrival time of the last new data packet.
    pub last_arrival: Option<SimTime>,
}

impl WindowReceiver {
    /// A receiver sending ACKs of `ack_size` bytes (at least [`HEADER_BYTES`]).
    pub fn new(ack_size: usize) -> Self {
        Self {
            ack_size: ack_size.max(HEADER_BYTES),
            seen: Vec::new(),
            pending: VecDeque::new(),
            unique: 0,
            duplicates: 0,
            bytes: 0,
            last_arrival: None,
        }
    }

    /// Marks `seq` as seen; returns whether it is new. Absurd sequence
    /// numbers (beyond 2^32) are treated as duplicates instead of growing
    /// the bitmap without bound.
    fn mark(&mut self, seq: u64) -> bool {
        if seq >= 1 << 32 {
            return false;
        }
        let (w, b) = ((seq / 64) as usize, seq % 64);
        if w >= self.seen.len() {
            self.seen.resize(w + 1, 0);
        }
        let new = self.seen[w] & (1 << b) == 0;
        self.seen[w] |= 1 << b;
        new
    }
}

impl Node for WindowReceiver {
    fn handle_datagram(&mut self, now: SimTime, d: Datagram) {
        let Some((KIND_DATA, seq, sent)) = decode(&d.payload) else {
            return;
        };
        if self.mark(seq) {
            self.unique += 1;
            self.bytes += d.payload.len() as u64;
            self.last_arrival = Some(now);
        } else {
            self.duplicates += 1;
        }
        let ack = encode(KIND_ACK, seq, sent, self.ack_size);
        self.pending.push_back(Datagram::new(d.dst, d.src, ack));
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Datagram> {
        self.pending.pop_front()
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        None
    }

    fn handle_timeout(&mut self, _now: SimTime) {}

    fn is_done(&self) -> bool {
        true
    }
}

/// Any of the toy nodes, so one simulator can hold a mix without boxing.
#[derive(Debug, Clone)]
pub enum ToyNode {
    /// Constant-rate sender.
    Cbr(CbrSender),
    /// Passive sink.
    Sink(Sink),
    /// Reliable window sender.
    Window(WindowSender),
    /// Receiver acknowledging a window sender.
    Receiver(WindowReceiver),
}

macro_rules! delegate {
    ($self:ident, $n:ident => $e:expr) => {
        match $self {
            ToyNode::Cbr($n) => $e,
            ToyNode::Sink($n) => $e,
            ToyNode::Window($n) => $e,
            ToyNode::Receiver($n) => $e,
        }
    };
}

impl Node for ToyNode {
    fn handle_datagram(&mut self, now: SimTime, d: Datagram) {
        delegate!(self, n => n.handle_datagram(now, d))
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        delegate!(self, n => n.poll_transmit(now))
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        delegate!(self, n => n.poll_timeout())
    }

    fn handle_timeout(&mut self, now: SimTime) {
        delegate!(self, n => n.handle_timeout(now))
    }

    fn is_done(&self) -> bool {
        delegate!(self, n => n.is_done())
    }
}
