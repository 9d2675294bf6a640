//! A real run's [`RunResult`]: the endpoints' statistics as in a simulated run, the links'
//! ground truth from the emulator.

use std::net::IpAddr;

use mpquic::{Connection, Design};
use mpquic_emulate::{PathReport, Report};
use mpquic_proto::{ConnectionStats, PathStats};

use super::app::Progress;
use super::client_addr;
use crate::result::{
    mbps, path_result, ConnectionFigures, ConnectionResult, LinkResult, LinkTruth, PathResult,
    RequestResult, RttTruth, RunResult, SideEvent,
};
use crate::scenario::{Network, Scenario};
use crate::workload::LoggedEvent;

/// One endpoint's view of its connection at the end of the workload.
pub(crate) struct Side {
    stats: ConnectionStats,
    retransmitted: u64,
    paths: Vec<PathStats>,
    design: Option<Design>,
    error: Option<String>,
}

impl Side {
    pub(crate) fn of(conn: &Connection) -> Self {
        // The core's own snapshot: the lab records it exactly as in a simulated run.
        let (stats, paths) = conn.core_stats();
        Self {
            stats,
            retransmitted: conn.retransmitted_bytes(),
            paths,
            design: conn.design(),
            error: conn.close_reason().map(|e| e.to_string()),
        }
    }

    fn figures(&self) -> ConnectionFigures {
        ConnectionFigures::from_stats(&self.stats, self.retransmitted, self.error.clone())
    }
}

/// What a real run observed.
pub(crate) struct Observed {
    pub(crate) handshake_s: Option<f64>,
    /// When the workload ended (completed, failed or timed out), s since the start.
    pub(crate) end_s: f64,
    pub(crate) progress: Progress,
    pub(crate) failure: Option<String>,
    pub(crate) timed_out: bool,
    pub(crate) client: Option<Side>,
    pub(crate) server: Option<Side>,
    pub(crate) emulator: Option<Report>,
    pub(crate) client_log: Vec<LoggedEvent>,
    pub(crate) server_log: Vec<LoggedEvent>,
}

impl Observed {
    pub(crate) fn new() -> Self {
        Self {
            handshake_s: None,
            end_s: 0.0,
            progress: Progress::default(),
            failure: None,
            timed_out: false,
            client: None,
            server: None,
            emulator: None,
            client_log: Vec::new(),
            server_log: Vec::new(),
        }
    }
}

fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

/// The emulated links of the path that starts at interface `iface`.
fn path_report(report: Option<&Report>, iface: Option<usize>) -> Option<&PathReport> {
    report?.paths.get(iface?)
}

/// Sender path figures matched with the receiver's, with the emulator's ground truth.
fn path_results(obs: &Observed) -> Vec<PathResult> {
    let (Some(server), Some(client)) = (&obs.server, &obs.client) else {
        return Vec::new();
    };
    let iface_of = |ip: IpAddr| (0..client.paths.len().max(8)).find(|&i| client_addr(i).ip() == ip);
    server
        .paths
        .iter()
        .map(|p| {
            let recv = client.paths.iter().find(|r| r.id == p.id);
            // The server sees the emulator's relay sockets; the client knows the interface.
            let iface = recv.and_then(|r| iface_of(r.local.ip()));
            let links = path_report(obs.emulator.as_ref(), iface);
            let (up, down) = (links.map(|l| &l.up.link), links.map(|l| &l.down.link));
            let floor = match (up, down) {
                (Some(u), Some(d)) if u.transit_delay.count > 0 && d.transit_delay.count > 0 => {
                    Some(ms(u.transit_delay.min_ns + d.transit_delay.min_ns))
                }
                _ => None,
            };
            let true_rtt = up
                .zip(down)
                .and_then(|(u, d)| Some(u.transit_delay.mean_ns()? + d.transit_delay.mean_ns()?))
                .map(|ns| ns / 1e6);
            let truth = RttTruth {
                true_rtt_ms: true_rtt,
                ..RttTruth::default()
            };
            let link = LinkTruth {
                drops: down.map(|d| d.dropped.total().packets),
                min_rtt_floor_ms: floor,
            };
            path_result(p, recv, iface, truth, link)
        })
        .collect()
}

fn link_results(network: &Network, report: Option<&Report>) -> Vec<LinkResult> {
    let Some(report) = report else {
        return Vec::new();
    };
    network
        .paths
        .iter()
        .zip(&report.paths)
        .enumerate()
        .flat_map(|(i, (cfg, r))| {
            [
                LinkResult::new(format!("path{i}.up"), &cfg.up, &r.up.link),
                LinkResult::new(format!("path{i}.down"), &cfg.down, &r.down.link),
            ]
        })
        .collect()
}

fn request_results(progress: &Progress, sizes: &[u64]) -> Vec<RequestResult> {
    sizes
        .iter()
        .zip(&progress.requests)
        .map(|(&size, (received, done, error))| RequestResult {
            size,
            received: *received,
            completion_time_s: *done,
            error: error.clone(),
            connection: 0,
            connection_start_s: 0.0,
        })
        .collect()
}

fn log(obs: &Observed) -> Vec<SideEvent> {
    let tag = |side: &'static str, events: &[LoggedEvent]| {
        events
            .iter()
            .map(move |e| SideEvent {
                side,
                event: e.clone(),
            })
            .collect::<Vec<_>>()
    };
    let mut out = tag("client", &obs.client_log);
    out.extend(tag("server", &obs.server_log));
    out
}

/// `(completed, outcome, error, completion time)`.
fn outcome(obs: &Observed, sizes: &[u64]) -> (bool, String, Option<String>, Option<f64>) {
    let p = &obs.progress;
    let done = p.requests.len() == sizes.len() && p.requests.iter().all(|r| r.1.is_some());
    if done {
        let last = p.requests.iter().filter_map(|r| r.1).fold(0.0, f64::max);
        return (true, "completed".to_owned(), None, Some(last));
    }
    let request_error = p.requests.iter().find_map(|r| r.2.clone());
    if let Some(e) = obs.failure.clone().or(request_error) {
        return (false, "failed".to_owned(), Some(e), None);
    }
    let why = if obs.timed_out {
        "the workload did not complete within the time limit"
    } else {
        "the workload stopped before completing"
    };
    (false, "time_limit".to_owned(), Some(why.to_owned()), None)
}

/// The run's result, in the form of a simulated run's.
pub(crate) fn assemble(
    scenario: &Scenario,
    network: &Network,
    obs: Observed,
    wall_s: f64,
) -> RunResult {
    let sizes = scenario.workload.response_sizes();
    let (completed, outcome, error, completion) = outcome(&obs, &sizes);
    let bytes_received = obs.progress.bytes;
    let steady = match (obs.progress.half_at, completion) {
        (Some(h), Some(f)) if f > h => Some(mbps(bytes_received - bytes_received / 2, f - h)),
        _ => None,
    };
    let sender = obs.server.as_ref().map(Side::figures).unwrap_or_default();
    let receiver = obs.client.as_ref().map(Side::figures).unwrap_or_default();
    let report = obs.emulator.as_ref();
    let paths = path_results(&obs);
    let true_losses = report.map_or(0, |r| {
        r.paths.iter().map(|p| p.down.dropped.total().packets).sum()
    });
    let mut result = RunResult {
        network: "emulated".to_owned(),
        release_jitter: report.map(|r| r.jitter),
        completed,
        outcome,
        error,
        completion_time_s: completion,
        handshake_time_s: obs.handshake_s,
        connections: vec![ConnectionResult {
            opened_s: 0.0,
            handshake_s: obs.handshake_s,
            closed_s: completion,
            zero_rtt_packets_sent: None,
            zero_rtt_accepted: None,
        }],
        bytes_requested: scenario.workload.total_bytes(),
        bytes_received,
        goodput_mbps: mbps(bytes_received, completion.unwrap_or(obs.end_s)),
        steady_goodput_mbps: steady,
        design: obs.client.as_ref().and_then(|c| c.design),
        paths,
        ack_frames_sent: receiver.ack_frames_sent,
        avg_ack_frame_bytes: receiver.avg_ack_frame_bytes,
        ack_range_histogram: receiver.ack_range_histogram,
        mean_ranges_per_ack: receiver.mean_ranges_per_ack,
        retransmitted_bytes: sender.retransmitted_bytes,
        spurious_retransmissions: sender.spurious_losses,
        true_losses,
        violations: Vec::new(),
        sender,
        receiver,
        requests: request_results(&obs.progress, &sizes),
        links: link_results(network, report),
        log: log(&obs),
        sim_time_s: obs.end_s,
        sim_wall_time_s: wall_s,
        events: 0,
        time_series: None,
        video: None,
        scenario: scenario.clone(),
    };
    let own_path_rtt = scenario
        .transport
        .to_config()
        .map_or(true, |c| c.spns_rules.per_path_rtt_samples);
    result.violations = crate::truth::violations(&result, own_path_rtt);
    result
}
