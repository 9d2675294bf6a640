//! Datagram Packetization Layer Path MTU Discovery (DPLPMTUD, RFC 8899) for one path, as QUIC
//! uses it (RFC 9000 §14.3): the largest UDP payload a path carries is found by sending probe
//! packets (PADDING + PING) of a candidate size and seeing whether they are acknowledged.
//!
//! This module is the per-path state machine only; the connection (`connection/mtu.rs`) sends
//! the probes, reports acknowledgements and losses, and applies a new size to the path's
//! congestion controller and pacer. Each multipath path has its own [`Mtud`]: paths may cross
//! different links (RFC 10069 §5.8 leaves the PMTU per path).
//!
//! States (RFC 8899 §5.2): [`Phase::Base`] until the connection confirms the base size works
//! (path validation / handshake), [`Phase::Searching`] while probing upward,
//! [`Phase::SearchComplete`] until the raise timer (RFC 8899 §5.1.1 PMTU_RAISE_TIMER) starts a
//! new search, [`Phase::Error`] when the ceiling is below the base (nothing to search).
//!
//! The search tries the ceiling first (on most paths it is the answer, and one probe ends the
//! search), then bisects between the largest acknowledged size and the smallest size that failed
//! [`MtuDiscoveryConfig::max_probes`] times in a row (RFC 8899 §5.1.2 MAX_PROBES), until the two
//! are less than [`MtuDiscoveryConfig::min_step`] apart.
//!
//! A path between two addresses of this host (`same_host`) crosses no link but the local
//! interface, whose MTU bounds the search (RFC 8899 §5.1.2 MAX_PLPMTU) and is then the path's
//! own (65,536 bytes on Linux loopback). Once such a path has confirmed the ceiling, the search
//! tries one more candidate, [`MtuDiscoveryConfig::same_host_ceiling`]: acknowledged, the path
//! uses it; lost MAX_PROBES times (a relay between two local addresses, such as an emulator,
//! carries less), the path keeps the ceiling and nothing is bisected above it.
//!
//! Black holes (RFC 8899 §4.3): when [`MtuDiscoveryConfig::black_hole_losses`] packets larger
//! than the base are declared lost, none of them followed by an acknowledged packet larger than
//! the base, the path falls back to the base size and searches again below the size that failed.
//!
//! Probe losses are reported here, never to the congestion controller (RFC 9000 §14.4: the loss
//! of a probe is not a reliable sign of congestion and must not trigger a congestion response).

use std::net::SocketAddr;

use crate::time::{Duration, Timestamp};

/// RFC 9000 §14 / RFC 8899 §5.1.2 BASE_PLPMTU for QUIC: every path must carry 1200-byte UDP
/// payloads (Initial datagrams are padded to it), so no smaller size is ever used.
pub(crate) const BASE_PLPMTU: u16 = 1200;

/// Settings of path MTU discovery ([`crate::TransportConfig::mtu_discovery`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct MtuDiscoveryConfig {
    /// Largest UDP payload ever probed. Default 1452: a 1500-byte Ethernet MTU less the IPv6
    /// (40) and UDP (8) headers, as quinn. The peer's max_udp_payload_size (RFC 9000 §18.2)
    /// lowers it further; the runtime may lower it to what its sockets allow.
    pub ceiling: u16,
    /// Time in SEARCH_COMPLETE before searching again for a larger size (RFC 8899 §5.1.1
    /// PMTU_RAISE_TIMER, 600 s). Checked when the connection has something to send.
    #[serde(with = "crate::config::forms::duration")]
    pub raise_interval: Duration,
    /// Consecutive losses of probes of one size after which that size is taken to fail
    /// (RFC 8899 §5.1.2 MAX_PROBES, default 3).
    pub max_probes: u8,
    /// Losses of packets larger than the base, with no such packet acknowledged after them,
    /// that make the path fall back to the base size (black-hole detection, RFC 8899 §4.3).
    pub black_hole_losses: u32,
    /// The search stops when the largest working and smallest failing sizes are this close.
    pub min_step: u16,
    /// Largest UDP payload probed on a path between two addresses of this host (the remote is
    /// a loopback address or the local address itself), tried once `ceiling` is confirmed;
    /// at most `ceiling` turns it off. Such a path crosses only the local interface, whose MTU
    /// bounds the search (RFC 8899 §5.1.2 MAX_PLPMTU) and is the path's.
    /// Default 16,384: on Linux loopback (MTU 65,536) a 200 MB download took 0.40 s of wall
    /// time with 1,452-byte datagrams, 0.24 s with 16 or 32 kB ones and 0.28 s with 64 kB ones
    /// (docs/PERFORMANCE.md, "Datagrams as large as the loopback interface carries").
    #[serde(skip_serializing_if = "is_default_same_host_ceiling")]
    pub same_host_ceiling: u16,
}

/// Default of [`MtuDiscoveryConfig::same_host_ceiling`].
pub(crate) const DEFAULT_SAME_HOST_CEILING: u16 = 16_384;

/// Records and run files name the field only when it was changed (older ones stay identical).
fn is_default_same_host_ceiling(v: &u16) -> bool {
    *v == DEFAULT_SAME_HOST_CEILING
}

/// Whether a path's two addresses are both this host's: the remote is a loopback address, or
/// the local address itself. Such a path crosses only the local (loopback) interface, so that
/// interface's MTU is the path MTU (RFC 8899 §5.1.2).
pub(crate) fn same_host(local: SocketAddr, remote: SocketAddr) -> bool {
    let remote_ip = remote.ip().to_canonical();
    let local_ip = local.ip().to_canonical();
    remote_ip.is_loopback() || (!local_ip.is_unspecified() && local_ip == remote_ip)
}

impl Default for MtuDiscoveryConfig {
    fn default() -> Self {
        Self {
            ceiling: 1452,
            raise_interval: Duration::from_secs(600),
            max_probes: 3,
            black_hole_losses: 4,
            min_step: 20,
            same_host_ceiling: DEFAULT_SAME_HOST_CEILING,
        }
    }
}

/// What the I/O layer's sockets allow ([`crate::Endpoint::set_socket_mtu`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SocketMtu {
    /// The sockets set the don't-fragment bit (RFC 8899 §3: a fragmented probe would pass and
    /// mislead the search). Without it discovery is off.
    pub dont_fragment: bool,
    /// Largest UDP payload the sockets can send: a ceiling for every path.
    pub max_udp_payload: u16,
}

impl Default for SocketMtu {
    /// No limit of its own (the simulator's packets are never fragmented).
    fn default() -> Self {
        Self {
            dont_fragment: true,
            max_udp_payload: u16::MAX,
        }
    }
}

/// DPLPMTUD state (RFC 8899 §5.2), plus `Disabled` for a fixed size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Discovery is off: the size never changes.
    Disabled,
    /// Using the base size until the path is confirmed to carry it.
    Base,
    /// Probing for a larger size.
    Searching,
    /// The search ended; a new one starts when the raise timer expires.
    SearchComplete,
    /// The ceiling is below the base: nothing can be searched.
    Error,
}

/// Counters of one path's discovery, for path statistics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct MtuCounters {
    /// Probe packets sent.
    pub probes_sent: u64,
    /// Probes declared lost (not a congestion signal, RFC 9000 §14.4).
    pub probes_lost: u64,
    /// Probes acknowledged.
    pub probes_acked: u64,
    /// Black holes detected (RFC 8899 §4.3): falls back to the base size.
    pub black_holes: u64,
}

/// Path MTU discovery state of one path.
#[derive(Debug, Clone)]
pub(crate) struct Mtud {
    config: Option<MtuDiscoveryConfig>,
    /// The UDP payload size the path uses now.
    current: u16,
    /// Largest size probed: the configured ceiling within the peer's limit.
    ceiling: u16,
    /// The same-host candidate tried once `ceiling` is confirmed, within the sockets' and the
    /// peer's limits (None: not a same-host path, or not above `ceiling`).
    same_host: Option<u16>,
    /// The same-host candidate was lost MAX_PROBES times in this search.
    same_host_failed: bool,
    /// The largest UDP payload the sockets send.
    socket_max: u16,
    phase: Phase,
    /// Smallest size known to fail in this search (None: the ceiling is untested).
    failed: Option<u16>,
    /// The probe in flight, if any.
    probe: Option<u16>,
    /// Consecutive losses of probes of the current candidate.
    probe_losses: u8,
    /// When SEARCH_COMPLETE gives way to a new search.
    raise_at: Option<Timestamp>,
    /// Losses of packets larger than the base, sent after the newest acknowledged such packet.
    suspicious_losses: u32,
    /// Send time of the newest acknowledged packet larger than the base: a loss of a packet
    /// sent before it is congestion (a later large packet got through), not a black hole.
    large_acked_sent: Timestamp,
    /// Packets sent before this time no longer count towards black-hole detection.
    fallback_at: Timestamp,
    /// The size before the first change not yet taken by the connection ([`Mtud::take_update`]).
    updated: Option<u16>,
    pub counters: MtuCounters,
}

impl Mtud {
    /// Discovery disabled: always `size` bytes.
    pub(crate) fn fixed(size: u16) -> Self {
        Self::with(None, size, Phase::Disabled)
    }

    /// Discovery enabled: starts at [`BASE_PLPMTU`] in [`Phase::Base`].
    pub(crate) fn new(config: MtuDiscoveryConfig) -> Self {
        let phase = if config.ceiling < BASE_PLPMTU {
            Phase::Error
        } else {
            Phase::Base
        };
        Self::with(Some(config), BASE_PLPMTU, phase)
    }

    /// What a connection's configuration asks for, within what the sockets allow.
    pub(crate) fn for_config(config: &crate::TransportConfig, socket: SocketMtu) -> Self {
        match config.mtu_discovery {
            Some(mut c) if socket.dont_fragment => {
                c.ceiling = c.ceiling.min(socket.max_udp_payload);
                let mut m = Self::new(c);
                m.socket_max = socket.max_udp_payload;
                m
            }
            _ => Self::fixed(config.max_datagram_size),
        }
    }

    /// [`Mtud::for_config`] on a path between `local` and `remote`: a same-host path also
    /// tries the configuration's same-host ceiling.
    pub(crate) fn for_path(
        config: &crate::TransportConfig,
        socket: SocketMtu,
        local: SocketAddr,
        remote: SocketAddr,
    ) -> Self {
        let mut m = Self::for_config(config, socket);
        if same_host(local, remote) {
            m.same_host = m.same_host_candidate(u64::MAX);
        }
        m
    }

    fn with(config: Option<MtuDiscoveryConfig>, current: u16, phase: Phase) -> Self {
        Self {
            config,
            current,
            ceiling: config.map_or(current, |c| c.ceiling),
            same_host: None,
            same_host_failed: false,
            socket_max: u16::MAX,
            phase,
            failed: None,
            probe: None,
            probe_losses: 0,
            raise_at: None,
            suspicious_losses: 0,
            large_acked_sent: Timestamp::ZERO,
            fallback_at: Timestamp::ZERO,
            updated: None,
            counters: MtuCounters::default(),
        }
    }

    /// The UDP payload size the path uses now.
    pub(crate) fn current(&self) -> u16 {
        self.current
    }

    pub(crate) fn phase(&self) -> Phase {
        self.phase
    }

    pub(crate) fn is_enabled(&self) -> bool {
        self.config.is_some()
    }

    /// The peer's max_udp_payload_size (RFC 9000 §18.2) caps the search.
    pub(crate) fn set_peer_limit(&mut self, peer: u64) {
        let Some(config) = self.config else {
            return;
        };
        self.ceiling = u16::try_from(peer).unwrap_or(u16::MAX).min(config.ceiling);
        if self.ceiling < BASE_PLPMTU {
            self.phase = Phase::Error;
        }
        if self.same_host.is_some() {
            self.same_host = self.same_host_candidate(peer);
        }
    }

    /// The same-host candidate within the sockets' limit and `peer`'s, if above the ceiling.
    fn same_host_candidate(&self, peer: u64) -> Option<u16> {
        let config = self.config?;
        let size = config
            .same_host_ceiling
            .min(self.socket_max)
            .min(u16::try_from(peer).unwrap_or(u16::MAX));
        (size > self.ceiling).then_some(size)
    }

    /// The old and new size if the size changed since the last call.
    pub(crate) fn take_update(&mut self) -> Option<(u16, u16)> {
        let old = self.updated.take()?;
        (old != self.current).then_some((old, self.current))
    }

    /// Whether [`Mtud::poll_probe`] may return a size now (a cheap check for the send loop).
    pub(crate) fn probe_due(&self, now: Timestamp) -> bool {
        match self.phase {
            Phase::Base => true,
            Phase::Searching => self.probe.is_none(),
            Phase::SearchComplete => self.raise_at.is_some_and(|t| now >= t),
            Phase::Disabled | Phase::Error => false,
        }
    }

    /// Whether the search is over (for the qlog `done` flag).
    pub(crate) fn search_done(&self) -> bool {
        self.phase == Phase::SearchComplete
    }

    /// The size of the probe to send now, if one is due. The caller asks only on a path that
    /// has confirmed the base size (validated, RFC 8899 §5.2 BASE) and may send a packet of
    /// the returned size (congestion window, RFC 9000 §14.4).
    pub(crate) fn poll_probe(&mut self, now: Timestamp) -> Option<u16> {
        match self.phase {
            Phase::Disabled | Phase::Error => return None,
            Phase::Base => self.start_search(),
            Phase::SearchComplete => {
                if self.raise_at.is_none_or(|t| now < t) {
                    return None;
                }
                // RFC 8899 §5.1.1: the raise timer expired, look for a larger PMTU again.
                self.start_search();
            }
            Phase::Searching => {}
        }
        if self.probe.is_some() {
            return None;
        }
        match self.next_candidate() {
            Some(size) => Some(size),
            None => {
                self.complete(now);
                None
            }
        }
    }

    fn start_search(&mut self) {
        self.phase = Phase::Searching;
        self.failed = None;
        self.same_host_failed = false;
        self.probe_losses = 0;
    }

    /// The ceiling first, then the middle of what remains, then (on a same-host path whose
    /// ceiling works) the same-host candidate; None when the search is over.
    fn next_candidate(&self) -> Option<u16> {
        self.below_ceiling().or_else(|| {
            self.same_host.filter(|&size| {
                !self.same_host_failed && self.current >= self.ceiling && size > self.current
            })
        })
    }

    /// The next candidate up to the ceiling: the ceiling, then bisection.
    fn below_ceiling(&self) -> Option<u16> {
        let min_step = self.config.map_or(1, |c| c.min_step.max(1));
        let hi = match self.failed {
            None if self.ceiling > self.current => return Some(self.ceiling),
            None => return None,
            Some(hi) => hi,
        };
        if hi <= self.current || hi - self.current <= min_step {
            return None;
        }
        Some(self.current + (hi - self.current) / 2)
    }

    /// The largest size a probe may confirm.
    fn largest(&self) -> u16 {
        self.same_host.map_or(self.ceiling, |s| s.max(self.ceiling))
    }

    fn complete(&mut self, now: Timestamp) {
        self.phase = Phase::SearchComplete;
        self.probe = None;
        self.raise_at = self.config.map(|c| now + c.raise_interval);
    }

    /// A probe of `size` bytes was sent.
    pub(crate) fn on_probe_sent(&mut self, size: u16) {
        self.probe = Some(size);
        self.counters.probes_sent += 1;
    }

    /// A probe sent at `sent` was acknowledged: the path carries `size` bytes (unless the
    /// probe went out before a black hole was detected: the path has changed since).
    pub(crate) fn on_probe_acked(&mut self, now: Timestamp, size: u16, sent: Timestamp) {
        self.counters.probes_acked += 1;
        if sent < self.fallback_at {
            return;
        }
        self.on_packet_acked(u64::from(size), sent);
        if self.probe == Some(size) {
            self.probe = None;
            self.probe_losses = 0;
        }
        if size > self.current && size <= self.largest() {
            self.set_current(size);
        }
        if self.phase == Phase::Searching && self.probe.is_none() && self.next_candidate().is_none()
        {
            self.complete(now);
        }
    }

    /// A probe was declared lost. Not a congestion signal (RFC 9000 §14.4).
    pub(crate) fn on_probe_lost(&mut self, now: Timestamp, size: u16) {
        self.counters.probes_lost += 1;
        if self.probe != Some(size) {
            return;
        }
        self.probe = None;
        self.probe_losses += 1;
        let max_probes = self.config.map_or(1, |c| c.max_probes.max(1));
        if self.probe_losses >= max_probes {
            // RFC 8899 §5.1.2: MAX_PROBES losses in a row, the size does not fit the path.
            self.probe_losses = 0;
            if size > self.ceiling && self.same_host == Some(size) {
                // Something between the two local addresses carries less than the
                // interface: keep the ceiling, bisect nothing above it.
                self.same_host_failed = true;
            } else {
                self.failed = Some(self.failed.map_or(size, |f| f.min(size)));
            }
            if self.next_candidate().is_none() {
                self.complete(now);
            }
        }
    }

    /// A packet (not a probe) of `size` bytes sent at `sent` was acknowledged.
    pub(crate) fn on_packet_acked(&mut self, size: u64, sent: Timestamp) {
        if size > u64::from(BASE_PLPMTU) {
            self.suspicious_losses = 0;
            self.large_acked_sent = self.large_acked_sent.max(sent);
        }
    }

    /// A packet (not a probe) of `size` bytes sent at `sent` was declared lost. Returns true
    /// when this detects a black hole and the path fell back to the base size.
    pub(crate) fn on_packet_lost(&mut self, now: Timestamp, size: u64, sent: Timestamp) -> bool {
        let Some(config) = self.config else {
            return false;
        };
        if size <= u64::from(BASE_PLPMTU)
            || sent < self.fallback_at
            || sent <= self.large_acked_sent
        {
            return false;
        }
        self.suspicious_losses += 1;
        if self.suspicious_losses < config.black_hole_losses.max(1) {
            return false;
        }
        // RFC 8899 §4.3 and §5.2: the current size no longer gets through; back to the base,
        // and search again below the size that failed (the raise timer later tries above it).
        let failed = self.current.max(size.min(u64::from(u16::MAX)) as u16);
        self.counters.black_holes += 1;
        self.suspicious_losses = 0;
        self.fallback_at = now;
        self.probe = None;
        self.set_current(BASE_PLPMTU);
        self.start_search();
        // A same-host size that stopped working: the ceiling is probed first, then that size
        // once more (three probes), since a burst of losses at the end of a flight looks like a
        // black hole too (the base-size PTO probe is acknowledged, the large packets are not):
        // seen against quinn's receive buffer on loopback.
        self.failed = (failed <= self.ceiling).then_some(failed);
        if self.next_candidate().is_none() {
            self.complete(now);
        }
        true
    }

    fn set_current(&mut self, size: u16) {
        if size != self.current {
            self.updated.get_or_insert(self.current);
            self.current = size;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Timestamp {
        Timestamp::from_nanos(ms * 1_000_000)
    }

    fn enabled() -> Mtud {
        Mtud::new(MtuDiscoveryConfig::default())
    }

    /// Runs a search against a path that carries `limit` bytes; returns the final size.
    fn search(m: &mut Mtud, limit: u16) -> u16 {
        search_from(m, limit, 10_000)
    }

    /// [`search`] with probes sent from `start` ms on.
    fn search_from(m: &mut Mtud, limit: u16, start: u64) -> u16 {
        for i in start..start + 100 {
            let Some(size) = m.poll_probe(t(i)) else {
                break;
            };
            m.on_probe_sent(size);
            if size <= limit {
                m.on_probe_acked(t(i), size, t(i));
            } else {
                m.on_probe_lost(t(i), size);
            }
        }
        m.current()
    }

    #[test]
    fn fixed_never_probes() {
        let mut m = Mtud::fixed(1350);
        assert_eq!(m.current(), 1350);
        assert_eq!(m.poll_probe(t(0)), None);
        assert!(!m.on_packet_lost(t(1), 1350, t(0)));
        assert_eq!(m.phase(), Phase::Disabled);
    }

    #[test]
    fn first_probe_is_the_ceiling_and_ends_the_search() {
        let mut m = enabled();
        assert_eq!(m.current(), BASE_PLPMTU);
        assert_eq!(m.phase(), Phase::Base);
        assert_eq!(m.poll_probe(t(0)), Some(1452));
        m.on_probe_sent(1452);
        assert_eq!(m.poll_probe(t(0)), None, "one probe at a time");
        m.on_probe_acked(t(10), 1452, t(0));
        assert_eq!(m.current(), 1452);
        assert_eq!(m.take_update(), Some((BASE_PLPMTU, 1452)));
        assert_eq!(m.take_update(), None);
        assert_eq!(m.phase(), Phase::SearchComplete);
    }

    #[test]
    fn bisects_to_within_min_step_of_a_smaller_path() {
        let mut m = enabled();
        let found = search(&mut m, 1280);
        assert!((1260..=1280).contains(&found), "found {found}");
        assert_eq!(m.phase(), Phase::SearchComplete);
        // Every failing size took MAX_PROBES losses.
        assert_eq!(m.counters.probes_lost % 3, 0);
    }

    #[test]
    fn peer_limit_caps_the_ceiling() {
        let mut m = enabled();
        m.set_peer_limit(1300);
        assert_eq!(search(&mut m, 9000), 1300);
        let mut low = enabled();
        low.set_peer_limit(1000);
        assert_eq!(low.phase(), Phase::Error);
        assert_eq!(low.poll_probe(t(0)), None);
    }

    #[test]
    fn raise_timer_restarts_the_search() {
        let mut m = enabled();
        let found = search(&mut m, 1300);
        assert!((1280..=1300).contains(&found), "found {found}");
        assert_eq!(m.poll_probe(t(1_000)), None);
        // 600 s later the ceiling is tried again; the path now carries it.
        let later = t(700_000);
        assert_eq!(m.poll_probe(later), Some(1452));
        m.on_probe_sent(1452);
        m.on_probe_acked(later, 1452, later);
        assert!(m.current() > found);
    }

    /// Probe losses are reported to the state machine only: they lower no size and count no
    /// black-hole evidence (and the connection never hands them to the congestion controller,
    /// RFC 9000 §14.4). Here a 1300-byte path loses every probe above 1300, several sizes
    /// MAX_PROBES times each, and the confirmed size only grows.
    #[test]
    fn probe_losses_are_not_congestion_or_black_hole_signals() {
        let mut m = enabled();
        let mut sizes = Vec::new();
        for i in 0..100 {
            let Some(size) = m.poll_probe(t(i)) else {
                break;
            };
            m.on_probe_sent(size);
            if size <= 1300 {
                m.on_probe_acked(t(i), size, t(i));
            } else {
                m.on_probe_lost(t(i), size);
            }
            sizes.push(m.current());
        }
        assert!(m.counters.probes_lost >= 6, "{:?}", m.counters);
        assert!(sizes.windows(2).all(|w| w[0] <= w[1]), "{sizes:?}");
        assert!(m.current() > BASE_PLPMTU);
        assert_eq!(m.counters.black_holes, 0);
        assert_eq!(m.suspicious_losses, 0);
        // Unlike a data packet's loss, a probe's leaves black-hole detection untouched.
        for _ in 0..10 {
            m.on_probe_lost(t(200), 1452);
        }
        assert_eq!(m.suspicious_losses, 0);
        assert_eq!(m.current(), sizes[sizes.len() - 1]);
    }

    #[test]
    fn black_hole_falls_back_to_base_then_searches_below() {
        let mut m = enabled();
        assert_eq!(search(&mut m, 1452), 1452);
        assert_eq!(m.take_update(), Some((BASE_PLPMTU, 1452)));
        // A large packet acknowledged between losses resets the evidence (congestion).
        for i in 0..3 {
            assert!(!m.on_packet_lost(t(20100), 1452, t(20090 + i)));
        }
        m.on_packet_acked(1452, t(20095));
        // Large packets sent before one that got through were lost to congestion.
        for _ in 0..10 {
            assert!(!m.on_packet_lost(t(20100), 1452, t(20093)));
        }
        for i in 0..3 {
            assert!(!m.on_packet_lost(t(20110), 1452, t(20100 + i)));
        }
        // Small packets (ACK-only, base-size PTO probes) lost do not count.
        assert!(!m.on_packet_lost(t(20110), 1200, t(20105)));
        assert!(m.on_packet_lost(t(20120), 1452, t(20110)));
        assert_eq!(m.current(), BASE_PLPMTU);
        assert_eq!(m.take_update(), Some((1452, BASE_PLPMTU)));
        assert_eq!(m.phase(), Phase::Searching);
        // Packets sent before the fallback are not new evidence.
        for _ in 0..10 {
            assert!(!m.on_packet_lost(t(20130), 1452, t(20111)));
        }
        // A probe sent before the fallback and acknowledged now proves nothing any more.
        m.on_probe_acked(t(20125), 1452, t(20115));
        assert_eq!(m.current(), BASE_PLPMTU);
        // The new search stays below the size that failed.
        let found = search_from(&mut m, 1300, 30_000);
        assert!((1280..=1300).contains(&found), "found {found}");
    }

    fn path(local: &str, remote: &str) -> Mtud {
        Mtud::for_path(
            &crate::TransportConfig::default(),
            SocketMtu::default(),
            local.parse().unwrap(),
            remote.parse().unwrap(),
        )
    }

    fn loopback_path() -> Mtud {
        path("127.0.0.1:4000", "127.0.0.1:4433")
    }

    #[test]
    fn same_host_means_a_loopback_or_own_remote_address() {
        let same = |l: &str, r: &str| same_host(l.parse().unwrap(), r.parse().unwrap());
        assert!(same("127.0.0.1:1", "127.0.0.1:2"));
        assert!(same("0.0.0.0:1", "127.0.0.2:2"));
        assert!(same("[::]:1", "[::1]:2"));
        assert!(same("[::]:1", "[::ffff:127.0.0.1]:2"));
        assert!(same("10.0.0.1:1", "10.0.0.1:2"));
        assert!(!same("10.0.0.1:1", "10.0.0.2:2"));
        assert!(!same("0.0.0.0:1", "10.0.0.2:2"));
        assert!(!same("0.0.0.0:1", "0.0.0.0:2"));
    }

    #[test]
    fn a_same_host_path_tries_its_own_ceiling_once_the_ordinary_one_works() {
        let mut m = loopback_path();
        assert_eq!(m.poll_probe(t(0)), Some(1452), "the ordinary ceiling first");
        m.on_probe_sent(1452);
        m.on_probe_acked(t(1), 1452, t(0));
        assert_eq!(m.current(), 1452);
        assert_eq!(m.phase(), Phase::Searching);
        assert_eq!(m.poll_probe(t(2)), Some(DEFAULT_SAME_HOST_CEILING));
        m.on_probe_sent(DEFAULT_SAME_HOST_CEILING);
        m.on_probe_acked(t(3), DEFAULT_SAME_HOST_CEILING, t(2));
        assert_eq!(m.current(), DEFAULT_SAME_HOST_CEILING);
        assert_eq!(m.phase(), Phase::SearchComplete);
        assert_eq!(m.counters.probes_sent, 2);
        // A path to another host never goes above the ordinary ceiling.
        assert_eq!(search(&mut path("10.0.0.1:1", "10.0.0.2:2"), 60_000), 1452);
    }

    #[test]
    fn a_relay_that_carries_less_keeps_the_ordinary_ceiling_without_bisecting() {
        let mut m = loopback_path();
        assert_eq!(search(&mut m, 1472), 1452);
        assert_eq!(m.phase(), Phase::SearchComplete);
        // Three losses of the one same-host candidate, nothing probed between.
        assert_eq!(m.counters.probes_lost, 3);
        assert_eq!(m.counters.probes_sent, 4);
        // The raise timer tries the candidate again (the relay may be gone).
        assert_eq!(m.poll_probe(t(700_000)), Some(DEFAULT_SAME_HOST_CEILING));
    }

    #[test]
    fn a_same_host_path_whose_ordinary_ceiling_fails_searches_as_any_other() {
        let mut m = loopback_path();
        let found = search(&mut m, 1300);
        assert!((1280..=1300).contains(&found), "found {found}");
        assert!(m.counters.probes_sent < 12, "{:?}", m.counters);
    }

    #[test]
    fn the_peer_and_the_sockets_cap_the_same_host_candidate() {
        let mut m = loopback_path();
        m.set_peer_limit(8_000);
        assert_eq!(search(&mut m, 60_000), 8_000);
        let mut low = loopback_path();
        low.set_peer_limit(1_400);
        assert_eq!(search(&mut low, 60_000), 1_400);
        let socket = SocketMtu {
            dont_fragment: true,
            max_udp_payload: 9_000,
        };
        let config = crate::TransportConfig::default();
        let local = "127.0.0.1:1".parse().unwrap();
        let mut capped = Mtud::for_path(&config, socket, local, local);
        assert_eq!(search(&mut capped, 60_000), 9_000);
        let mut off = config.clone();
        off.mtu_discovery.as_mut().unwrap().same_host_ceiling = 0;
        assert_eq!(
            search(&mut Mtud::for_path(&off, socket, local, local), 60_000),
            1452
        );
    }

    #[test]
    fn a_black_hole_at_the_same_host_size_probes_the_ordinary_ceiling_then_it_again() {
        let mut m = loopback_path();
        assert_eq!(search(&mut m, 60_000), DEFAULT_SAME_HOST_CEILING);
        let size = u64::from(DEFAULT_SAME_HOST_CEILING);
        for i in 0..3 {
            assert!(!m.on_packet_lost(t(20_100), size, t(20_050 + i)));
        }
        assert!(m.on_packet_lost(t(20_100), size, t(20_060)));
        assert_eq!(m.current(), BASE_PLPMTU);
        assert_eq!(m.poll_probe(t(20_200)), Some(1452));
        // A burst of losses looked like a black hole: the candidate works again.
        let mut burst = m.clone();
        assert_eq!(
            search_from(&mut burst, 60_000, 20_200),
            DEFAULT_SAME_HOST_CEILING
        );
        // Something in the path now carries less: three probes of the candidate are lost.
        let lost = m.counters.probes_lost;
        assert_eq!(search_from(&mut m, 1472, 20_200), 1452);
        assert_eq!(m.counters.probes_lost, lost + 3);
        assert_eq!(m.phase(), Phase::SearchComplete);
    }
}
