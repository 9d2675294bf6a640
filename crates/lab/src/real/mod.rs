//! A scenario on real sockets: the tokio runtime's client and server (the code users run) over
//! loopback, through an in-process [`mpquic_emulate::Emulator`] whose paths are the scenario's
//! links. `mpquic lab run SUITE --real` runs a suite this way.
//!
//! Addressing: the server listens on 127.0.0.1, the emulator on 127.0.0.1, and the client's
//! interface `i` is 127.0.0.(2 + i) (on Linux all of 127/8 is loopback), which the emulator
//! maps to path `i`. The emulator's links draw the loss and jitter streams of the simulator's
//! links for the same seed, and their clocks start right before the client connects, as the
//! simulator's do at virtual time 0; every time in the result counts from there.
//!
//! Unlike [`crate::run`] nothing here is deterministic: the endpoints use the system's
//! randomness and clock, and the machine's load shifts the timing. The result has the same form
//! (with `network = "emulated"`); figures only the simulator knows (srtt against the true RTT
//! over time, time series) are left out, and the ground truth of the links comes from the
//! emulator.

mod app;
mod paths;
mod result;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use mpquic::{config, tls, Connection, Endpoint};
use mpquic_emulate::{EmulatedPath, Emulator, EmulatorConfig};
use mpquic_proto::crypto::identity::LabIdentity;
use tokio::sync::mpsc;

use crate::error::LabError;
use crate::result::RunResult;
use crate::scenario::{Network, Scenario, Workload};
use app::{EventLog, Progress};
use result::{Observed, Side};

/// ALPN of the lab's request protocol.
const ALPN: &[u8] = b"mpquic-lab";

/// How long the client waits for the connection to close cleanly after its last response.
const CLOSE_WAIT: Duration = Duration::from_secs(1);

/// The address of the client's interface `i` (any port).
pub fn client_addr(i: usize) -> SocketAddr {
    let last = u8::try_from(2 + i).unwrap_or(u8::MAX);
    SocketAddr::new(IpAddr::V4(Ipv4Addr::new(127, 0, 0, last)), 0)
}

fn real(what: &str, e: impl std::fmt::Display) -> LabError {
    LabError::Real(format!("{what}: {e}"))
}

/// Runs a scenario on real sockets. Errors are about the scenario (what cannot run on real
/// sockets: a shared bottleneck, videos, successive connections) or the machine (sockets);
/// a transfer that fails is a normal result with `completed == false`.
pub fn run(scenario: &Scenario) -> Result<RunResult, LabError> {
    scenario.validate()?;
    let network = scenario.network()?;
    if network.bottleneck.is_some() {
        return Err(LabError::invalid(
            "shared_bottleneck",
            "a shared bottleneck cannot be emulated on real sockets (the emulator's paths are \
             independent)",
        ));
    }
    if scenario.transport.crypto != crate::scenario::CryptoMode::Real {
        return Err(LabError::invalid(
            "transport.crypto",
            "the simulation-only packet protection (`sim`) is not available on real sockets: \
             the runtime always uses real keys",
        ));
    }
    if scenario.transport.migrate_at.is_some() {
        return Err(LabError::invalid(
            "transport.migrate_at",
            "migration is simulated only here: on real sockets use `mpquic client --migrate-to`",
        ));
    }
    if scenario.transport.race_paths() {
        return Err(LabError::invalid(
            "transport.race_paths",
            "handshake racing is simulated only: real runs connect from the first path",
        ));
    }
    if !matches!(
        scenario.workload,
        Workload::Download(_) | Workload::Requests { .. }
    ) {
        return Err(LabError::invalid(
            "workload",
            "real runs support downloads and parallel requests only",
        ));
    }
    if scenario.workload.protocol() != crate::h3sim::Protocol::Custom {
        return Err(LabError::invalid(
            "workload.requests.protocol",
            "HTTP/3 workloads run on the simulator only; real runs use the custom protocol",
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| real("starting the async runtime", e))?;
    let wall = Instant::now();
    let observed = runtime.block_on(execute(scenario, &network));
    runtime.shutdown_timeout(Duration::from_millis(200));
    Ok(result::assemble(
        scenario,
        &network,
        observed?,
        wall.elapsed().as_secs_f64(),
    ))
}

/// The server endpoint on 127.0.0.1 serving the workload; its connections arrive on the
/// returned channel.
fn start_server(
    transport: mpquic::TransportConfig,
    identity: LabIdentity,
    log: &EventLog,
) -> Result<(Endpoint, mpsc::UnboundedReceiver<Connection>), LabError> {
    let names = identity.names();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    let (cert, key) = tls::self_signed(&names).map_err(|e| real("certificate", e))?;
    let tls = tls::server_config(&[ALPN], vec![cert], key).map_err(|e| real("server TLS", e))?;
    let tls = tls::server_cert_compression(tls, identity.cert_compression);
    let local = SocketAddr::from(([127, 0, 0, 1], 0));
    let server = Endpoint::server(config::server(tls, transport), &[local])
        .map_err(|e| real("binding the server", e))?;
    let (tx, rx) = mpsc::unbounded_channel();
    app::serve(server.clone(), tx, log.clone());
    Ok((server, rx))
}

/// Starts everything, runs the workload within the time limit and collects what was observed.
async fn execute(scenario: &Scenario, network: &Network) -> Result<Observed, LabError> {
    let mut transport = scenario.transport.to_config()?;
    // The emulator stands for a network between two hosts, as the simulator's links do: no
    // same-host datagram sizes (the simulated addresses are never this host's either).
    if let Some(mtud) = transport.mtu_discovery.as_mut() {
        mtud.same_host_ceiling = 0;
    }
    let n = network.paths.len();
    let locals: Vec<SocketAddr> = (0..n).map(client_addr).collect();
    let client = Endpoint::client(&locals).map_err(|e| real("binding 127.0.0.2...", e))?;
    let locals = client.local_addrs();
    let identity = scenario.transport.identity();
    let client_tls = tls::client_config(&[ALPN], tls::ServerTrust::Insecure)
        .map_err(|e| real("client TLS", e))?;
    let client_tls = tls::client_cert_compression(client_tls, identity.cert_compression);
    let start = Instant::now();
    let (client_log, server_log) = (EventLog::new(start), EventLog::new(start));
    let (server, mut conns) = start_server(transport.clone(), identity, &server_log)?;
    let paths = network
        .paths
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let spec = scenario.paths.get(i).map(|s| s.0.to_string());
            EmulatedPath::new(
                Some(client_addr(i).ip()),
                p.clone(),
                spec.unwrap_or_default(),
            )
        })
        .collect();
    let emulator = Emulator::start(EmulatorConfig {
        listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        server: server.local_addr(),
        paths,
        seed: scenario.seed,
    })
    .map_err(|e| real("starting the emulator", e))?;
    let limit = Duration::from_nanos(scenario.time_limit.nanos());
    let progress = Arc::new(Mutex::new(Progress::default()));
    let connecting = client
        .connect_from(
            locals[0],
            emulator.listen_addr(),
            "localhost",
            config::client(client_tls, transport),
        )
        .map_err(|e| real("connecting", e))?;
    let mut obs = Observed::new();
    match tokio::time::timeout(limit, connecting).await {
        Ok(Ok(conn)) => {
            obs.handshake_s = Some(start.elapsed().as_secs_f64());
            client_log.push("connected".to_owned());
            client_log.follow(conn.clone());
            paths::open_paths(&conn, &locals[1..], &client_log);
            let sizes = scenario.workload.response_sizes();
            let left = limit.saturating_sub(start.elapsed());
            let fetch = app::fetch_all(&conn, &sizes, start, progress.clone());
            obs.timed_out = tokio::time::timeout(left, fetch).await.is_err();
            obs.end_s = start.elapsed().as_secs_f64();
            obs.client = Some(Side::of(&conn));
            obs.server = conns.try_recv().ok().map(|c| Side::of(&c));
            conn.close(0, b"done");
            let _ = tokio::time::timeout(CLOSE_WAIT, client.wait_idle()).await;
        }
        Ok(Err(e)) => obs.failure = Some(format!("handshake failed: {e}")),
        Err(_) => obs.timed_out = true,
    }
    if obs.end_s == 0.0 {
        obs.end_s = start.elapsed().as_secs_f64();
    }
    obs.progress = std::mem::take(&mut *progress.lock().map_err(|_| real("progress", "lock"))?);
    obs.client_log = client_log.take();
    obs.server_log = server_log.take();
    obs.emulator = Some(emulator.stop().map_err(|e| real("emulator", e))?);
    server.close(0, b"done");
    Ok(obs)
}
