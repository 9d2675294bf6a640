//! Runs a [`Scenario`]: builds the network and the two endpoints, drives
//! the simulator in steps of `record.sample_interval` while sampling the
//! sender's RTT estimates, and assembles the [`RunResult`].
//!
//! Addressing: the server has one address, `10.100.0.1:443`; the client's
//! interface `i` is `10.0.i.2:4433`. Path `i` is the route pair between
//! interface `i` and the server (routes are keyed by source and
//! destination IP, so one server address serves every path).

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Instant;

use mpquic_netsim::{LinkConfig, LinkId, NodeId, SimConfig, SimTime, Simulator, StopReason};
use mpquic_proto::Validation;
use mpquic_proto::{EndpointConfig, PathId};

use crate::error::LabError;
use crate::node::{App, QuicNode};
use crate::result::{
    mbps, mean, ns_to_ms, path_result, secs, ConnectionFigures, ConnectionResult, LinkResult,
    LinkTruth, PathResult, RequestResult, RttSeries, RttTruth, RunResult, SideEvent, TimeSeries,
};
use crate::scenario::{Network, Scenario, Workload};
use crate::video::{SenderVideoFigures, VideoResult};
use crate::workload::{ClientApp, LoggedEvent};

/// The server's address.
pub const SERVER_ADDR: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 100, 0, 1)), 443);

/// The address of the client's interface `i`.
pub fn client_addr(i: usize) -> SocketAddr {
    let third = u8::try_from(i).unwrap_or(u8::MAX);
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(10, 0, third, 2)), 4433)
}

/// One srtt sample of the sender.
#[derive(Debug, Clone, Copy)]
struct RttSample {
    at: SimTime,
    path: PathId,
    client_ip: IpAddr,
    srtt_ms: f64,
}

/// The simulation of one scenario, ready to run.
struct Run<'a> {
    scenario: &'a Scenario,
    sim: Simulator<QuicNode>,
    client: NodeId,
    server: NodeId,
    topology: Topology,
    client_ips: Vec<IpAddr>,
    rtt_samples: Vec<RttSample>,
    progress: Vec<[f64; 3]>,
    /// Video: the server's re-injected bytes over time (`[time_s, bytes]`).
    reinjected: Vec<[f64; 2]>,
}

/// Runs a scenario to completion, failure or its time limit.
///
/// Errors only come from the scenario itself (invalid values, unreadable
/// traces); a connection that fails is a normal result with
/// `completed == false` and the reason in `error`.
pub fn run(scenario: &Scenario) -> Result<RunResult, LabError> {
    run_with_qlog(scenario, None)
}

/// A qlog configuration writing one file per connection into `dir`, in virtual time.
pub fn qlog_dir(dir: &std::path::Path) -> anyhow::Result<mpquic_proto::qlog::QlogConfig> {
    use anyhow::Context;
    mpquic::qlog::dir_config(dir, mpquic::qlog::QlogClock::Virtual)
        .with_context(|| format!("creating the qlog directory {}", dir.display()))
}

/// [`run`], logging both endpoints' connections through `qlog` (docs/QLOG.md). Events are
/// stamped with virtual time, so the same scenario and seed give the same bytes.
pub fn run_with_qlog(
    scenario: &Scenario,
    qlog: Option<mpquic_proto::qlog::QlogConfig>,
) -> Result<RunResult, LabError> {
    scenario.validate()?;
    let network = scenario.network()?;
    let mut run = Run::build(scenario, &network, qlog)?;
    let wall = Instant::now();
    let reason = run.drive();
    let wall_s = wall.elapsed().as_secs_f64();
    Ok(run.finish(reason, wall_s))
}

/// Whether a link of `network` marks CE or bleaches ECN: the lab's default for
/// `transport.ecn` (see [`crate::scenario::TransportSettings::ecn`]).
fn network_uses_ecn(network: &Network) -> bool {
    let ecn_link = |l: &mpquic_netsim::LinkConfig| l.ecn_threshold.is_some() || l.ecn_bleach;
    network
        .paths
        .iter()
        .any(|p| ecn_link(&p.up) || ecn_link(&p.down))
        || network.bottleneck.as_ref().is_some_and(ecn_link)
}

impl<'a> Run<'a> {
    fn build(
        scenario: &'a Scenario,
        network: &Network,
        qlog: Option<mpquic_proto::qlog::QlogConfig>,
    ) -> Result<Self, LabError> {
        let mut transport = scenario.transport.to_config()?;
        transport.qlog = qlog;
        if scenario.transport.ecn.is_none() {
            transport.ecn = network_uses_ecn(network);
        }
        let mut sim = Simulator::with_config(SimConfig {
            seed: scenario.seed,
            sample_interval: mpquic_netsim::time::MILLISECOND,
        });
        let n = network.paths.len();
        let interfaces: Vec<SocketAddr> = (0..n).map(client_addr).collect();
        let client_ips: Vec<IpAddr> = interfaces.iter().map(SocketAddr::ip).collect();
        let server_cfg = Arc::new(EndpointConfig::new(&mut sim.derive_rng("server/endpoint")));
        let client_cfg = Arc::new(EndpointConfig::new(&mut sim.derive_rng("client/endpoint")));
        let protection = scenario.transport.crypto.protection();
        let zero_rtt = scenario.transport.zero_rtt();
        let identity = scenario.transport.identity();
        let server_node = QuicNode::server_with(
            transport.clone(),
            server_cfg,
            sim.derive_seed("server/rng"),
            protection,
            crate::node::ServerOptions { zero_rtt, identity },
        );
        let mut client_node = QuicNode::client_with(
            crate::node::ClientOptions {
                protocol: scenario.workload.protocol(),
                zero_rtt,
                race: scenario.transport.race_paths(),
                migrate_at: scenario.transport.migrate_at.map(|d| d.nanos()),
                identity,
            },
            transport,
            client_cfg,
            sim.derive_seed("client/rng"),
            protection,
            (&interfaces, &vec![SERVER_ADDR; n]),
            &scenario.workload.response_sizes(),
        )?;
        if let Workload::Video(spec) = &scenario.workload {
            client_node.enable_video(spec.clone());
        }
        client_node.set_connection_batches(scenario.workload.batch_ends());
        let server = sim.add_background_node(server_node, [SERVER_ADDR.ip()])?;
        let client = sim.add_node(client_node, client_ips.iter().copied())?;
        let topology = add_links(&mut sim, network, &client_ips)?;
        Ok(Self {
            scenario,
            sim,
            client,
            server,
            topology,
            client_ips,
            rtt_samples: Vec::new(),
            progress: Vec::new(),
            reinjected: Vec::new(),
        })
    }

    /// Runs the simulation, sampling every `record.sample_interval`.
    fn drive(&mut self) -> StopReason {
        let limit = self.scenario.time_limit.nanos();
        let interval = self.scenario.record.sample_interval.nanos().max(1);
        let mut next = 0;
        loop {
            let target = next.min(limit);
            let out = self.sim.run_until(target);
            self.sample(self.sim.now());
            match out.reason {
                StopReason::TimeLimit if target < limit => next = target.saturating_add(interval),
                reason => return reason,
            }
        }
    }

    fn sample(&mut self, at: SimTime) {
        // A closed connection's srtt no longer tracks anything (with
        // successive connections the first one closes early).
        if let Some(conn) = self
            .sim
            .node(self.server)
            .and_then(QuicNode::main_connection)
            .filter(|c| !c.is_closed())
        {
            for p in conn.path_stats() {
                // No true RTT exists while a link of the path is down.
                let links_up = self.topology.by_ip.get(&p.remote.ip()).is_some_and(|ids| {
                    ids.iter().all(|&l| self.sim.link_is_up(l).unwrap_or(false))
                });
                // A path counts once it carries traffic: validated or sampled.
                let live = p.validation == Validation::Validated || p.counters.rtt_samples > 0;
                if p.abandoned || !live || !links_up {
                    continue;
                }
                self.rtt_samples.push(RttSample {
                    at,
                    path: p.id,
                    client_ip: p.remote.ip(),
                    srtt_ms: p.srtt_ms,
                });
            }
        }
        self.sample_reinjection(at);
        if self.scenario.record.time_series {
            let client = self.sim.node(self.client);
            let bytes = client
                .and_then(QuicNode::client_app)
                .map_or(0, |c| c.bytes_received);
            let packets = client
                .and_then(QuicNode::main_connection)
                .map_or(0, |c| c.stats().packets_received);
            self.progress.push([secs(at), bytes as f64, packets as f64]);
        }
    }

    /// Video: records the server's re-injected bytes when they changed, at
    /// most every 100 ms.
    fn sample_reinjection(&mut self, at: SimTime) {
        if !matches!(self.scenario.workload, Workload::Video(_)) {
            return;
        }
        let Some(conn) = self.server_node().and_then(QuicNode::main_connection) else {
            return;
        };
        let bytes = conn.stats().reinjected_bytes as f64;
        let t = secs(at);
        let due = self
            .reinjected
            .last()
            .is_none_or(|l| l[1] != bytes && t - l[0] >= 0.1);
        if due {
            self.reinjected.push([t, bytes]);
        }
    }

    /// The video metrics, when the workload is a video.
    fn video_result(&self) -> Option<VideoResult> {
        let video = self.client_node()?.client_app()?.video.as_ref()?;
        let conn = self.server_node().and_then(QuicNode::main_connection);
        let sender = SenderVideoFigures {
            reinjected_bytes: conn.map_or(0, |c| c.stats().reinjected_bytes),
            stream_bytes_sent: conn.map_or(0, |c| {
                c.path_stats()
                    .iter()
                    .map(|p| p.counters.stream_bytes_sent)
                    .sum()
            }),
            reinjected_series: self.reinjected.clone(),
        };
        Some(video.result(self.sim.now(), sender))
    }

    /// The srtt error analysis of every path, and the srtt series.
    fn rtt_truth(&self) -> (BTreeMap<PathId, RttTruth>, Vec<RttSeries>) {
        let server_ip = SERVER_ADDR.ip();
        let mut points: BTreeMap<PathId, Vec<[f64; 3]>> = BTreeMap::new();
        for s in &self.rtt_samples {
            let Some(truth) = self.sim.rtt_at(server_ip, s.client_ip, s.at) else {
                continue;
            };
            points
                .entry(s.path)
                .or_default()
                .push([secs(s.at), s.srtt_ms, ns_to_ms(truth)]);
        }
        let summary = points
            .iter()
            .map(|(&id, pts)| {
                let truth = RttTruth {
                    true_rtt_ms: mean(pts.iter().map(|p| p[2])),
                    mae_ms: mean(pts.iter().map(|p| (p[1] - p[2]).abs())),
                    samples: pts.len(),
                };
                (id, truth)
            })
            .collect();
        let series = points
            .into_iter()
            .map(|(path, points)| RttSeries { path, points })
            .collect();
        (summary, series)
    }

    /// The true RTT of an interface from the mean one-way delays of its
    /// two routes (used for paths without srtt samples).
    fn mean_route_rtt_ms(&self, client_ip: IpAddr) -> Option<f64> {
        let server_ip = SERVER_ADDR.ip();
        let route_mean = |a, b| self.sim.route_stats(a, b)?.one_way_delay.mean_ns();
        let fwd = route_mean(server_ip, client_ip)?;
        let rev = route_mean(client_ip, server_ip)?;
        Some((fwd + rev) / 1e6)
    }

    fn client_node(&self) -> Option<&QuicNode> {
        self.sim.node(self.client)
    }

    fn server_node(&self) -> Option<&QuicNode> {
        self.sim.node(self.server)
    }

    /// Per-path figures: the sender's paths, matched with the receiver's.
    fn path_results(&self, truth: &BTreeMap<PathId, RttTruth>) -> Vec<PathResult> {
        let client_conn = self.client_node().and_then(QuicNode::main_connection);
        let server_conn = self.server_node().and_then(QuicNode::main_connection);
        let receiver_paths = client_conn.map(|c| c.path_stats()).unwrap_or_default();
        let sender_paths = server_conn.map(|c| c.path_stats()).unwrap_or_default();
        sender_paths
            .iter()
            .map(|p| {
                let iface = self.client_ips.iter().position(|ip| *ip == p.remote.ip());
                let recv = receiver_paths.iter().find(|r| r.id == p.id);
                let mut t = truth.get(&p.id).copied().unwrap_or_default();
                if t.true_rtt_ms.is_none() {
                    t.true_rtt_ms = self.mean_route_rtt_ms(p.remote.ip());
                }
                path_result(p, recv, iface, t, self.link_truth(iface, p.remote.ip()))
            })
            .collect()
    }

    /// Drops of interface `iface`'s download link and the path's minimum-RTT floor.
    fn link_truth(&self, iface: Option<usize>, client_ip: IpAddr) -> LinkTruth {
        let server_ip = SERVER_ADDR.ip();
        let links = self.sim.ground_truth().links;
        let drops = iface.and_then(|i| {
            let name = format!("path{i}.down");
            let link = self.topology.named.iter().find(|l| l.name == name)?;
            Some(links.get(link.id.index())?.dropped.total().packets)
        });
        let down = self.sim.min_one_way_delay(server_ip, client_ip);
        let up = self.sim.min_one_way_delay(client_ip, server_ip);
        LinkTruth {
            drops,
            min_rtt_floor_ms: down.zip(up).map(|(d, u)| ns_to_ms(d + u)),
        }
    }

    /// Packets dropped on the links of the download direction.
    fn true_losses(&self) -> u64 {
        let links = self.sim.ground_truth().links;
        self.topology
            .named
            .iter()
            .filter(|l| l.name.ends_with(".down") || l.name == "bottleneck")
            .filter_map(|l| links.get(l.id.index()))
            .map(|s| s.dropped.total().packets)
            .sum()
    }

    fn link_results(&self) -> Vec<LinkResult> {
        let truth = self.sim.ground_truth().links;
        self.topology
            .named
            .iter()
            .filter_map(|l| {
                let s = truth.get(l.id.index())?;
                Some(LinkResult::new(l.name.clone(), &l.config, s))
            })
            .collect()
    }

    /// Client events, then server events.
    fn event_log(&self) -> Vec<SideEvent> {
        let tag = |side: &'static str, events: &[LoggedEvent]| -> Vec<SideEvent> {
            events
                .iter()
                .map(|e| SideEvent {
                    side,
                    event: e.clone(),
                })
                .collect()
        };
        let mut log = Vec::new();
        if let Some(a) = self.client_node().and_then(QuicNode::client_app) {
            log.extend(tag("client", &a.events));
        }
        if let Some(App::Server(s)) = self.server_node().map(QuicNode::app) {
            log.extend(tag("server", &s.events));
        }
        log
    }

    /// The server's figures over every connection it accepted.
    fn sender_figures(&self) -> ConnectionFigures {
        let Some(node) = self.server_node() else {
            return ConnectionFigures::default();
        };
        let App::Server(s) = node.app() else {
            return ConnectionFigures::default();
        };
        let parts: Vec<ConnectionFigures> = s
            .handles()
            .into_iter()
            .filter_map(|h| node.endpoint().connection(h))
            .map(ConnectionFigures::of)
            .collect();
        ConnectionFigures::combine(&parts)
    }

    /// The client's figures over its closed connections and the current one.
    fn receiver_figures(&self) -> ConnectionFigures {
        let client = self.client_node();
        let mut parts: Vec<ConnectionFigures> = client
            .and_then(QuicNode::client_app)
            .map(|a| a.closed_figures.clone())
            .unwrap_or_default();
        parts.extend(
            client
                .and_then(QuicNode::main_connection)
                .map(ConnectionFigures::of),
        );
        ConnectionFigures::combine(&parts)
    }

    fn finish(self, reason: StopReason, wall_s: f64) -> RunResult {
        let (truth, series) = self.rtt_truth();
        let client = self.client_node();
        let server = self.server_node();
        let app = client.and_then(QuicNode::client_app);
        let client_conn = client.and_then(QuicNode::main_connection);
        let mut sender = self.sender_figures();
        sender.timer_stalls = server.map_or(0, QuicNode::timer_stalls);
        let mut receiver = self.receiver_figures();
        receiver.timer_stalls = client.map_or(0, QuicNode::timer_stalls);
        let now = self.sim.now();
        let finished_at = app.and_then(|a| a.finished_at);
        let bytes_received = app.map_or(0, |a| a.bytes_received);
        let failure = app.and_then(|a| a.failure.clone());
        let (outcome, error) = outcome(reason, failure, finished_at.is_some());
        let steady = match (app.and_then(|a| a.half_at), finished_at) {
            (Some(h), Some(f)) if f > h => {
                Some(mbps(bytes_received - bytes_received / 2, secs(f - h)))
            }
            _ => None,
        };
        let mut result = RunResult {
            network: "simulated".to_owned(),
            release_jitter: None,
            completed: finished_at.is_some(),
            outcome,
            error,
            completion_time_s: finished_at.map(secs),
            handshake_time_s: app.and_then(|a| a.established_at).map(secs),
            connections: app.map_or_else(Vec::new, connection_results),
            bytes_requested: self.scenario.workload.total_bytes(),
            bytes_received,
            goodput_mbps: mbps(bytes_received, secs(finished_at.unwrap_or(now))),
            steady_goodput_mbps: steady,
            design: client_conn
                .filter(|c| c.is_established() || c.is_closed())
                .map(|c| c.design()),
            paths: self.path_results(&truth),
            ack_frames_sent: receiver.ack_frames_sent,
            avg_ack_frame_bytes: receiver.avg_ack_frame_bytes,
            ack_range_histogram: receiver.ack_range_histogram,
            mean_ranges_per_ack: receiver.mean_ranges_per_ack,
            retransmitted_bytes: sender.retransmitted_bytes,
            spurious_retransmissions: sender.spurious_losses,
            true_losses: self.true_losses(),
            violations: Vec::new(),
            sender,
            receiver,
            requests: app.map_or_else(Vec::new, request_results),
            links: self.link_results(),
            log: self.event_log(),
            sim_time_s: secs(now),
            sim_wall_time_s: wall_s,
            events: self.sim.events_processed(),
            time_series: self.scenario.record.time_series.then(|| TimeSeries {
                rtt: series,
                progress: self.progress.clone(),
            }),
            video: self.video_result(),
            scenario: self.scenario.clone(),
        };
        // The §2.2 rule keeps RTT samples on their own path; the scenario was validated.
        let own_path_rtt = self
            .scenario
            .transport
            .to_config()
            .map_or(true, |c| c.spns_rules.per_path_rtt_samples);
        result.violations = crate::truth::violations(&result, own_path_rtt);
        result
    }
}

fn request_results(app: &ClientApp) -> Vec<RequestResult> {
    app.requests
        .iter()
        .map(|r| RequestResult {
            size: r.size,
            received: r.received,
            completion_time_s: r.completed_at.map(secs),
            error: r.error.clone(),
            connection: r.connection,
            connection_start_s: app
                .connections
                .get(r.connection)
                .map_or(0.0, |c| secs(c.opened_at)),
        })
        .collect()
}

fn connection_results(app: &ClientApp) -> Vec<ConnectionResult> {
    app.connections
        .iter()
        .map(|c| ConnectionResult {
            opened_s: secs(c.opened_at),
            handshake_s: c.established_at.map(secs),
            closed_s: c.closed_at.map(secs),
            zero_rtt_packets_sent: c.zero_rtt.map(|z| z.packets_sent),
            zero_rtt_accepted: c.zero_rtt.and_then(|z| z.accepted),
        })
        .collect()
}

/// `(outcome, error)` from how the simulation stopped.
fn outcome(
    reason: StopReason,
    failure: Option<String>,
    finished: bool,
) -> (String, Option<String>) {
    if finished {
        return ("completed".to_owned(), None);
    }
    if let Some(f) = failure {
        return ("failed".to_owned(), Some(f));
    }
    match reason {
        StopReason::TimeLimit => (
            "time_limit".to_owned(),
            Some("the workload did not complete within the time limit".to_owned()),
        ),
        StopReason::Stuck => (
            "stuck".to_owned(),
            Some(
                "a node's timer kept firing without virtual time moving on (a livelock in the \
                 stack or the workload; please report it with the scenario)"
                    .to_owned(),
            ),
        ),
        StopReason::Idle | StopReason::AllDone => (
            "idle".to_owned(),
            Some("nothing left to simulate before the workload completed".to_owned()),
        ),
    }
}

/// A link with its report name.
struct NamedLink {
    name: String,
    id: LinkId,
    config: LinkConfig,
}

/// The links of a run.
struct Topology {
    /// Every link, in creation order.
    named: Vec<NamedLink>,
    /// Per client IP, the links its path crosses (both directions).
    by_ip: BTreeMap<IpAddr, Vec<LinkId>>,
}

/// Creates the links and routes: path `i` is `up` (client interface `i` to
/// server) and `down` (server to interface `i`, after the shared
/// bottleneck if any).
fn add_links(
    sim: &mut Simulator<QuicNode>,
    network: &Network,
    client_ips: &[IpAddr],
) -> Result<Topology, LabError> {
    let server_ip = SERVER_ADDR.ip();
    let mut named = Vec::new();
    let mut by_ip = BTreeMap::new();
    let mut add = |sim: &mut Simulator<QuicNode>, name: String, config: &LinkConfig| {
        let id = sim.add_link(config.clone())?;
        named.push(NamedLink {
            name,
            id,
            config: config.clone(),
        });
        Ok::<_, LabError>(id)
    };
    let bottleneck = match &network.bottleneck {
        Some(cfg) => Some(add(sim, "bottleneck".to_owned(), cfg)?),
        None => None,
    };
    for (i, (path, &ip)) in network.paths.iter().zip(client_ips).enumerate() {
        let up = add(sim, format!("path{i}.up"), &path.up)?;
        let down = add(sim, format!("path{i}.down"), &path.down)?;
        sim.add_route(ip, server_ip, &[up])?;
        let route: Vec<LinkId> = bottleneck.into_iter().chain([down]).collect();
        sim.add_route(server_ip, ip, &route)?;
        by_ip.insert(ip, route.iter().copied().chain([up]).collect());
    }
    Ok(Topology { named, by_ip })
}
