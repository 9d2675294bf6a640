//! A packet-level model of flows through drop-tail bottlenecks, shared by the closed-loop tests
//! of all controllers. It is deliberately small: one ACK per packet, RFC 9002 packet- and
//! time-threshold loss detection, a simple PTO, an optional [`Pacer`](super::Pacer), a
//! [`DeliveryRateEstimator`](super::DeliveryRateEstimator) feeding `AckEvent::rate_sample`, and
//! [`Coupling`](super::Coupling) among the flows of one connection. Every flow always has data.
//!
//! Test-only (compiled under `cfg(test)` from `cc/mod.rs`): a fixture, not part of the product.

use std::collections::{BTreeMap, VecDeque};

use crate::cc::{
    AckEvent, CongestionController, Coupling, CouplingState, DeliveryRateEstimator, LossEvent,
    Pacer, PacketDeliveryState,
};
use crate::recovery::rtt::{RttEstimator, INITIAL_RTT};
use crate::time::{Duration, Timestamp};

/// Datagram size used by the model.
pub(crate) const MSS: u64 = 1200;

/// `v` milliseconds after the epoch.
pub(crate) fn ms(v: u64) -> Timestamp {
    Timestamp::from_nanos(v.saturating_mul(1_000_000))
}

/// A controller and the RTT estimator its hand-made events borrow (unit tests).
pub(crate) struct Harness<C> {
    pub(crate) cc: C,
    pub(crate) rtt: RttEstimator,
    /// What the events say of `rtt` (see [`AckEvent::rtt_sampled`]); true by default.
    pub(crate) rtt_sampled: bool,
}

impl<C: CongestionController> Harness<C> {
    /// `cc` on a path whose RTT estimator has one 100 ms sample.
    pub(crate) fn new(cc: C) -> Self {
        let mut rtt = RttEstimator::new(INITIAL_RTT);
        rtt.update(Duration::ZERO, Duration::from_millis(100));
        Self {
            cc,
            rtt,
            rtt_sampled: true,
        }
    }

    /// Feeds one RTT sample.
    pub(crate) fn set_rtt(&mut self, rtt: Duration) {
        self.rtt.update(Duration::ZERO, rtt);
    }

    /// An ACK at `now` of `bytes`, the newest of which was sent at `sent`.
    pub(crate) fn ack_at(
        &mut self,
        now: Timestamp,
        sent: Timestamp,
        bytes: u64,
        app_limited: bool,
    ) {
        let single = [CouplingState::default()];
        let event = AckEvent {
            now,
            bytes_acked: bytes,
            largest_acked_sent_time: sent,
            bytes_in_flight: 0,
            app_limited,
            rtt: &self.rtt,
            rtt_sampled: self.rtt_sampled,
            rate_sample: None,
        };
        self.cc.on_ack(&event, Coupling::single(&single));
    }

    /// [`Harness::ack_at`] with times in milliseconds.
    pub(crate) fn ack_with(&mut self, now_ms: u64, sent_ms: u64, bytes: u64, app_limited: bool) {
        self.ack_at(ms(now_ms), ms(sent_ms), bytes, app_limited);
    }

    /// A non-application-limited ACK, times in milliseconds.
    pub(crate) fn ack(&mut self, now_ms: u64, sent_ms: u64, bytes: u64) {
        self.ack_with(now_ms, sent_ms, bytes, false);
    }

    /// The loss of one datagram sent at `sent_ms`, detected at `now_ms`.
    pub(crate) fn lose(&mut self, now_ms: u64, sent_ms: u64, persistent: bool) {
        let single = [CouplingState::default()];
        let event = LossEvent {
            now: ms(now_ms),
            lost_bytes: MSS,
            largest_lost_sent_time: ms(sent_ms),
            persistent_congestion: persistent,
            ecn_ce: false,
            bytes_in_flight: 0,
            rtt: &self.rtt,
        };
        self.cc
            .on_congestion_event(&event, Coupling::single(&single));
    }
}

/// A bottleneck: rate, two-way propagation delay, buffer, and a random loss probability
/// applied to every packet it accepts (drawn from a fixed-seed generator).
#[derive(Debug, Clone)]
pub(crate) struct Link {
    pub(crate) bytes_per_sec: u64,
    pub(crate) rtt: Duration,
    pub(crate) buffer_bytes: u64,
    pub(crate) random_loss: f64,
}

impl Link {
    /// `mbit` Mbit/s, `rtt_ms` ms of propagation RTT, a buffer of one bandwidth-delay product.
    pub(crate) fn mbps(mbit: u64, rtt_ms: u64) -> Self {
        let mut link = Link {
            bytes_per_sec: mbit * 125_000,
            rtt: Duration::from_millis(rtt_ms),
            buffer_bytes: 0,
            random_loss: 0.0,
        };
        link.buffer_bytes = link.bdp();
        link
    }

    /// Bandwidth-delay product in bytes.
    pub(crate) fn bdp(&self) -> u64 {
        (self.bytes_per_sec as u128 * self.rtt.as_nanos() / 1_000_000_000) as u64
    }
}

/// One flow of a multi-flow run.
pub(crate) struct Flow<'a> {
    pub(crate) cc: &'a mut dyn CongestionController,
    /// Index of the bottleneck link it crosses.
    pub(crate) link: usize,
    /// Propagation delay added to the link's.
    pub(crate) extra_rtt: Duration,
    /// Flows with the same connection number are coupled (one `Coupling` of all of them).
    pub(crate) connection: usize,
    pub(crate) paced: bool,
}

/// What a run measured for one flow.
#[derive(Debug, Clone)]
pub(crate) struct Outcome {
    /// Throughput in the second half of the run over the rate of the flow's link.
    pub(crate) utilisation: f64,
    /// Throughput in the second half, bytes per second.
    pub(crate) throughput: f64,
    pub(crate) max_cwnd: u64,
    pub(crate) final_cwnd: u64,
    pub(crate) losses: u64,
    /// Mean queueing delay of the flow's packets in the second half.
    pub(crate) mean_queue_delay: Duration,
}

struct Sent {
    size: u64,
    sent: Timestamp,
    delivery: PacketDeliveryState,
}

/// Per-flow simulation state.
struct State {
    rtt: RttEstimator,
    rate: DeliveryRateEstimator,
    pacer: Pacer,
    outstanding: BTreeMap<u64, Sent>,
    /// (packet number, ACK arrival) of packets the bottleneck accepted, in order.
    acks: VecDeque<(u64, Timestamp)>,
    next_pn: u64,
    in_flight: u64,
    last_send: Timestamp,
    pto_count: u32,
    pace_at: Option<Timestamp>,
    measured: u64,
    queue_delay: (Duration, u32),
    out: Outcome,
}

struct LinkState {
    spec: Link,
    departures: VecDeque<Timestamp>,
    free_at: Timestamp,
    /// Random losses (the workspace's one seeded RNG helper).
    rng: rand_chacha::ChaCha20Rng,
}

impl LinkState {
    /// Whether the next accepted packet is randomly lost.
    fn random_drop(&mut self) -> bool {
        if self.spec.random_loss <= 0.0 {
            return false;
        }
        rand::Rng::gen::<f64>(&mut self.rng) < self.spec.random_loss
    }
}

/// Runs one always-backlogged flow for `duration` over `link`.
pub(crate) fn run(
    cc: &mut dyn CongestionController,
    link: &Link,
    duration: Duration,
    paced: bool,
) -> Outcome {
    let flow = Flow {
        cc,
        link: 0,
        extra_rtt: Duration::ZERO,
        connection: 0,
        paced,
    };
    run_flows(
        vec![flow],
        std::slice::from_ref(link),
        duration,
        &mut |_, _, _| {},
    )
    .remove(0)
}

/// A paced flow on `link` without extra delay.
pub(crate) fn flow<'a>(
    cc: &'a mut dyn CongestionController,
    link: usize,
    connection: usize,
) -> Flow<'a> {
    Flow {
        cc,
        link,
        extra_rtt: Duration::ZERO,
        connection,
        paced: true,
    }
}

/// Two coupled subflows `a` and `b` (one connection) and a NewReno flow over one `link`.
pub(crate) fn two_subflows_and_reno(
    a: &mut dyn CongestionController,
    b: &mut dyn CongestionController,
    link: &Link,
    duration: Duration,
) -> Vec<Outcome> {
    let mut reno = crate::cc::new_reno::NewReno::new(crate::cc::CcConfig::new(MSS));
    let flows = vec![flow(a, 0, 0), flow(b, 0, 0), flow(&mut reno, 0, 1)];
    run_flows(
        flows,
        std::slice::from_ref(link),
        duration,
        &mut |_, _, _| {},
    )
}

/// Two coupled subflows over two disjoint bottlenecks.
pub(crate) fn two_disjoint_subflows(
    a: &mut dyn CongestionController,
    b: &mut dyn CongestionController,
    links: &[Link; 2],
    duration: Duration,
) -> Vec<Outcome> {
    run_flows(
        vec![flow(a, 0, 0), flow(b, 1, 0)],
        links,
        duration,
        &mut |_, _, _| {},
    )
}

/// Runs `flows` over `links` for `duration`; `observe(flow, now, cc)` is called after every
/// ACK a flow processes.
pub(crate) fn run_flows(
    mut flows: Vec<Flow<'_>>,
    links: &[Link],
    duration: Duration,
    observe: &mut dyn FnMut(usize, Timestamp, &dyn CongestionController),
) -> Vec<Outcome> {
    let start = Timestamp::from_nanos(1_000_000_000);
    let (end, measure_from) = (start + duration, start + duration / 2);
    let mut links: Vec<LinkState> = links
        .iter()
        .enumerate()
        .map(|(i, l)| LinkState {
            spec: l.clone(),
            departures: VecDeque::new(),
            free_at: start,
            rng: mpquic_netsim::rng::stream_rng(7, &format!("cc/test_sim/link/{i}")),
        })
        .collect();
    let mut states: Vec<State> = flows.iter().map(|_| new_state(start)).collect();
    let mut now = start;
    while now < end {
        for i in 0..flows.len() {
            while states[i].acks.front().is_some_and(|&(_, at)| at <= now) {
                let coupling = coupling_of(&flows, i);
                let own = coupling.iter().position(|(j, _)| *j == i).unwrap_or(0);
                let paths: Vec<CouplingState> = coupling.iter().map(|(_, c)| *c).collect();
                let coupling = Coupling { paths: &paths, own };
                on_ack(
                    &mut *flows[i].cc,
                    &mut states[i],
                    now,
                    coupling,
                    measure_from,
                );
                observe(i, now, &*flows[i].cc);
            }
        }
        for i in 0..flows.len() {
            let link = &mut links[flows[i].link];
            send(&mut flows[i], &mut states[i], link, now, measure_from);
        }
        let mut next = end;
        for st in &states {
            let pto = (!st.outstanding.is_empty()).then(|| pto_deadline(st));
            for at in [st.acks.front().map(|a| a.1), st.pace_at, pto]
                .into_iter()
                .flatten()
            {
                next = next.min(at);
            }
        }
        now = next.max(now + Duration::from_nanos(1));
    }
    let secs = (end - measure_from).as_secs_f64();
    flows
        .iter()
        .zip(states)
        .map(|(flow, st)| {
            let mut out = st.out;
            out.throughput = st.measured as f64 / secs;
            out.utilisation = out.throughput / links[flow.link].spec.bytes_per_sec as f64;
            out.final_cwnd = flow.cc.window();
            out.mean_queue_delay = st.queue_delay.0 / st.queue_delay.1.max(1);
            out
        })
        .collect()
}

fn new_state(start: Timestamp) -> State {
    State {
        rtt: RttEstimator::new(INITIAL_RTT),
        rate: DeliveryRateEstimator::new(),
        pacer: Pacer::new(MSS, start),
        outstanding: BTreeMap::new(),
        acks: VecDeque::new(),
        next_pn: 0,
        in_flight: 0,
        last_send: start,
        pto_count: 0,
        pace_at: None,
        measured: 0,
        queue_delay: (Duration::ZERO, 0),
        out: Outcome {
            utilisation: 0.0,
            throughput: 0.0,
            max_cwnd: 0,
            final_cwnd: 0,
            losses: 0,
            mean_queue_delay: Duration::ZERO,
        },
    }
}

/// (flow index, state) of every flow of flow `i`'s connection.
fn coupling_of(flows: &[Flow<'_>], i: usize) -> Vec<(usize, CouplingState)> {
    let conn = flows[i].connection;
    flows
        .iter()
        .enumerate()
        .filter(|(_, f)| f.connection == conn)
        .map(|(j, f)| (j, f.cc.coupling_state()))
        .collect()
}

fn pto_deadline(st: &State) -> Timestamp {
    st.last_send + st.rtt.pto_base() * 2u32.pow(st.pto_count.min(10))
}

/// One ACK arrival (one packet): RFC 9002 §6.1 loss detection before the acknowledgement is
/// handed to the controller (Appendix A.7 order), then the rate sample.
fn on_ack(
    cc: &mut dyn CongestionController,
    st: &mut State,
    now: Timestamp,
    coupling: Coupling<'_>,
    measure_from: Timestamp,
) {
    let (pn, _) = st.acks.pop_front().expect("due ACK");
    let Some(packet) = st.outstanding.remove(&pn) else {
        return;
    };
    st.pto_count = 0;
    st.rtt.update(Duration::ZERO, now - packet.sent);
    st.in_flight -= packet.size;
    st.rate
        .on_packet_acked(now, &packet.delivery, packet.size, packet.sent);
    let loss_delay = st.rtt.loss_delay();
    let lost: Vec<u64> = st
        .outstanding
        .range(..pn)
        .filter(|(&lpn, p)| lpn + 3 <= pn || p.sent + loss_delay <= now)
        .map(|(&lpn, _)| lpn)
        .collect();
    if !lost.is_empty() {
        let (mut bytes, mut newest) = (0, Timestamp::ZERO);
        for lpn in lost {
            let p = st.outstanding.remove(&lpn).expect("present");
            bytes += p.size;
            newest = newest.max(p.sent);
        }
        st.in_flight -= bytes;
        st.out.losses += bytes / MSS;
        st.rate.on_packets_lost(bytes);
        let loss = LossEvent {
            now,
            lost_bytes: bytes,
            largest_lost_sent_time: newest,
            persistent_congestion: false,
            ecn_ce: false,
            bytes_in_flight: st.in_flight,
            rtt: &st.rtt,
        };
        cc.on_congestion_event(&loss, coupling);
    }
    let event = AckEvent {
        now,
        bytes_acked: packet.size,
        largest_acked_sent_time: packet.sent,
        bytes_in_flight: st.in_flight,
        app_limited: false,
        rtt: &st.rtt,
        rtt_sampled: true,
        rate_sample: st.rate.generate_sample(now, st.rtt.min()),
    };
    cc.on_ack(&event, coupling);
    if now >= measure_from {
        st.measured += packet.size;
    }
}

/// Sends while the window (and the pacer) allow; a due PTO sends one probe regardless.
fn send(
    flow: &mut Flow<'_>,
    st: &mut State,
    link: &mut LinkState,
    now: Timestamp,
    measure_from: Timestamp,
) {
    let cc = &mut *flow.cc;
    let mut probe = !st.outstanding.is_empty() && now >= pto_deadline(st);
    if probe {
        st.pto_count += 1;
    }
    st.pace_at = None;
    while probe || st.in_flight + MSS <= cc.window() {
        if flow.paced && !probe {
            let rate = cc.pacing_rate(st.rtt.smoothed());
            if let Some(at) = st.pacer.delay(now, MSS, rate, cc.window()) {
                st.pace_at = Some(at.max(now + Duration::from_nanos(1)));
                break;
            }
        }
        probe = false;
        st.pacer.on_sent(now, MSS);
        let delivery = st.rate.on_packet_sent(now, st.in_flight);
        st.in_flight += MSS;
        cc.on_packet_sent(now, MSS, st.in_flight);
        st.outstanding.insert(
            st.next_pn,
            Sent {
                size: MSS,
                sent: now,
                delivery,
            },
        );
        st.last_send = now;
        while link.departures.front().is_some_and(|&d| d <= now) {
            link.departures.pop_front();
        }
        if (link.departures.len() as u64) * MSS < link.spec.buffer_bytes.max(MSS) {
            if now >= measure_from {
                st.queue_delay.0 += link.free_at.max(now) - now;
                st.queue_delay.1 += 1;
            }
            let serialisation = Duration::from_nanos(MSS * 1_000_000_000 / link.spec.bytes_per_sec);
            link.free_at = link.free_at.max(now) + serialisation;
            link.departures.push_back(link.free_at);
            if !link.random_drop() {
                let ack_at = link.free_at + link.spec.rtt + flow.extra_rtt;
                st.acks.push_back((st.next_pn, ack_at));
            }
        }
        st.next_pn += 1;
        st.out.max_cwnd = st.out.max_cwnd.max(cc.window());
    }
}
