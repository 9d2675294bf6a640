//! The three workloads. Each starts its own server process, so that the server's memory
//! figures belong to that workload alone.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Args;
use tokio::task::JoinSet;

use crate::measure::{failure_summary, latency_line, mb, positive, ServerChild};
use crate::peers::{ClientImpl, Clients, Conn, Impl, TlsChoice};
use crate::tickets::TicketStore;
use crate::Common;

/// Connections opened before a measurement starts (thread pools, TLS and allocator caches
/// warm), and then closed.
const WARM_UP: usize = 8;

/// Handshakes in progress at once while the idle mode opens its connections: the idle mode
/// measures memory, not how the server copes with a burst of handshakes.
const IDLE_OPEN_AT_ONCE: usize = 64;

/// How long closing connections may take to drain at the end.
const DRAIN: Duration = Duration::from_secs(2);

#[derive(Debug, Args)]
pub struct DownloadArgs {
    #[command(flatten)]
    pub common: Common,
    /// Concurrent clients, one connection each.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub clients: usize,
    /// Bytes each client downloads (e.g. 100KB, 1MB, 4096).
    #[arg(long, value_name = "SIZE", default_value = "100KB", value_parser = parse_size)]
    pub size: u64,
}

#[derive(Debug, Args)]
pub struct IdleArgs {
    #[command(flatten)]
    pub common: Common,
    /// Idle connections held open at once.
    #[arg(long, value_name = "N", default_value_t = 1000)]
    pub connections: usize,
    /// Seconds the connections are held before the memory is read.
    #[arg(long, value_name = "SECS", default_value_t = 3)]
    pub hold: u64,
}

#[derive(Debug, Args)]
pub struct HandshakeArgs {
    #[command(flatten)]
    pub common: Common,
    /// Handshakes per phase (sequential, then concurrent).
    #[arg(long, value_name = "N", default_value_t = 500)]
    pub count: usize,
    /// Also stop a phase after this many seconds.
    #[arg(long, value_name = "SECS")]
    pub duration: Option<u64>,
    /// Clients of the concurrent phase.
    #[arg(long, value_name = "C", default_value_t = 8)]
    pub concurrency: usize,
}

fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (digits, unit) = s.split_at(split);
    let n: u64 = digits.parse().map_err(|_| format!("invalid size '{s}'"))?;
    let scale = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "KB" => 1_000,
        "MB" => 1_000_000,
        "KIB" => 1 << 10,
        "MIB" => 1 << 20,
        other => {
            return Err(format!(
                "unknown unit '{other}' in '{s}' (B, KB, MB, KiB, MiB)"
            ))
        }
    };
    n.checked_mul(scale)
        .filter(|&n| n <= crate::workload::MAX_SIZE)
        .ok_or_else(|| format!("size '{s}' is above {} bytes", crate::workload::MAX_SIZE))
}

/// Run a client-side mode on a fresh runtime, within its global time limit (plus the time
/// the cleanup may take).
pub fn block_on(
    common: &Common,
    mode: impl std::future::Future<Output = anyhow::Result<bool>>,
) -> anyhow::Result<bool> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let limit = Duration::from_secs(common.timeout) + 2 * DRAIN + Duration::from_secs(5);
    let result = runtime
        .block_on(async { tokio::time::timeout(limit, mode).await })
        .with_context(|| format!("not done within {} s", limit.as_secs()));
    runtime.shutdown_background();
    result?
}

/// `--paths`, checked: 1 to 8, more than 1 only with mpquic.
fn paths(common: &Common) -> anyhow::Result<usize> {
    let n = positive("--paths", common.paths)?;
    if n > 8 {
        anyhow::bail!("--paths: at most 8");
    }
    let multipath_clients = matches!(client_impl(common), ClientImpl::Mpquic | ClientImpl::Noq);
    if n > 1 && !(common.imp == Impl::Mpquic && multipath_clients) {
        anyhow::bail!(
            "--paths: more than one path needs an mpquic server and mpquic or noq clients"
        );
    }
    Ok(n)
}

/// The clients' implementation: `--client-impl`, else the server's.
fn client_impl(common: &Common) -> ClientImpl {
    common.client_impl.unwrap_or(common.imp.into())
}

/// "mpquic", or "noq clients, mpquic server" when the two differ.
fn impl_names(common: &Common) -> String {
    match client_impl(common) {
        c if c == common.imp.into() => common.imp.name().to_owned(),
        c => format!("{} clients, {} server", c.name(), common.imp.name()),
    }
}

/// Start the server process; the mpquic server gets limits raised for `open` connections
/// at once, as an operator expecting that load would (`mpquic server --max-connections ...`).
fn start_server(common: &Common, open: usize) -> anyhow::Result<ServerChild> {
    let mut limits = common.limits.clone();
    if common.imp == Impl::Mpquic {
        let defaults = (
            mpquic::config::DEFAULT_MAX_CONNECTIONS,
            mpquic::config::DEFAULT_MAX_HANDSHAKES,
        );
        let conns = *limits
            .max_connections
            .get_or_insert(defaults.0.max(4 * open));
        let handshakes = *limits
            .max_handshakes
            .get_or_insert(defaults.1.max(2 * open));
        println!(
            "mpquic server limits for this test: --max-connections {conns} --max-handshakes \
             {handshakes} --retry {} (defaults {} / {}, retry auto); attempts accepted by: {}",
            limits.retry,
            defaults.0,
            defaults.1,
            limits.accept.name()
        );
    } else {
        println!("quinn server: quinn's default server and transport configuration");
    }
    let lifetime = Duration::from_secs(common.timeout) + Duration::from_secs(30);
    let server = ServerChild::spawn(common.imp, &limits, lifetime, common.server_port)?;
    println!(
        "server ({}) pid {} on {}{}; {} client endpoint(s); TLS settings: {}",
        common.imp.name(),
        server.pid(),
        server.addr,
        common
            .via
            .map_or(String::new(), |v| format!(", clients send to {v}")),
        common.client_endpoints,
        limits.tls.name()
    );
    Ok(server)
}

/// Where the clients send: `--via` if given, else the server itself.
fn target(common: &Common, server: &ServerChild) -> std::net::SocketAddr {
    common.via.unwrap_or(server.addr)
}

fn deadline_of(common: &Common) -> Instant {
    Instant::now() + Duration::from_secs(common.timeout)
}

/// Results of tasks until they are all done or the deadline passes; tasks still running then
/// are aborted and count as failures.
async fn collect<T: 'static>(
    tasks: &mut JoinSet<Result<T, String>>,
    deadline: Instant,
) -> (Vec<T>, Vec<String>) {
    let (mut ok, mut failed) = (Vec::new(), Vec::new());
    loop {
        match tokio::time::timeout_at(deadline.into(), tasks.join_next()).await {
            Ok(Some(Ok(Ok(v)))) => ok.push(v),
            Ok(Some(Ok(Err(e)))) => failed.push(e),
            Ok(Some(Err(e))) => failed.push(format!("task failed: {e}")),
            Ok(None) => break,
            Err(_) => {
                failed.extend((0..tasks.len()).map(|_| "not done within the time limit".into()));
                tasks.abort_all();
                break;
            }
        }
    }
    (ok, failed)
}

/// A few connections that download a little and close, before anything is measured.
async fn warm_up(clients: &Clients, server: SocketAddr) -> anyhow::Result<()> {
    for i in 0..WARM_UP {
        let conn = clients.connect(i, server).await.context("warm-up")?;
        conn.download(1000).await.context("warm-up")?;
        conn.close();
    }
    Ok(())
}

/// Let closing connections drain (bounded).
async fn drain(clients: &Clients) {
    let _ = tokio::time::timeout(DRAIN, clients.wait_idle()).await;
}

fn report_failures(failed: &[String]) {
    if !failed.is_empty() {
        println!("failures: {}", failure_summary(failed));
    }
}

/// `download`: N concurrent clients, each one connection and one download.
pub async fn download(args: &DownloadArgs) -> anyhow::Result<bool> {
    let common = &args.common;
    let n = positive("--clients", args.clients)?;
    let deadline = deadline_of(common);
    let server = start_server(common, n)?;
    let tickets = ticket_store(common);
    let clients = Arc::new(Clients::new(
        client_impl(common),
        positive("--client-endpoints", common.client_endpoints)?,
        paths(common)?,
        common.limits.tls,
        tickets.as_ref(),
    )?);
    println!(
        "download: {n} concurrent clients x {} bytes ({})",
        args.size,
        impl_names(common)
    );
    let started = Instant::now();
    let mut tasks = JoinSet::new();
    for i in 0..n {
        let (clients, addr, size) = (clients.clone(), target(common, &server), args.size);
        tasks.spawn(async move {
            let t0 = Instant::now();
            let conn = clients
                .connect(i, addr)
                .await
                .map_err(|e| format!("{e:#}"))?;
            let result = conn.download(size).await;
            conn.close();
            result.map(|()| t0.elapsed()).map_err(|e| format!("{e:#}"))
        });
    }
    let (latencies, failed) = collect(&mut tasks, deadline).await;
    let wall = started.elapsed();
    let memory = server.memory()?;
    println!(
        "completed {}, failed {}, wall {:.3} s",
        latencies.len(),
        failed.len(),
        wall.as_secs_f64()
    );
    report_failures(&failed);
    println!("{}", latency_line(latencies));
    println!(
        "server memory: peak RSS (VmHWM) {:.1} MB, RSS now {:.1} MB",
        mb(memory.peak),
        mb(memory.rss)
    );
    drain(&clients).await;
    Ok(failed.is_empty())
}

/// `idle`: hold N connections open, read the server's memory before and after.
pub async fn idle(args: &IdleArgs) -> anyhow::Result<bool> {
    let common = &args.common;
    let n = positive("--connections", args.connections)?;
    let deadline = deadline_of(common);
    let server = start_server(common, n)?;
    let tickets = ticket_store(common);
    let clients = Arc::new(Clients::new(
        client_impl(common),
        positive("--client-endpoints", common.client_endpoints)?,
        paths(common)?,
        common.limits.tls,
        tickets.as_ref(),
    )?);
    warm_up(&clients, target(common, &server)).await?;
    tokio::time::sleep(Duration::from_secs(1)).await;
    let before = server.memory()?;
    let gate = Arc::new(tokio::sync::Semaphore::new(IDLE_OPEN_AT_ONCE));
    let mut tasks = JoinSet::new();
    for i in 0..n {
        let (clients, addr, gate) = (clients.clone(), target(common, &server), gate.clone());
        tasks.spawn(async move {
            let _permit = gate.acquire().await.map_err(|e| e.to_string())?;
            clients.connect(i, addr).await.map_err(|e| format!("{e:#}"))
        });
    }
    let (conns, failed): (Vec<Conn>, _) = collect(&mut tasks, deadline).await;
    let hold_until = (Instant::now() + Duration::from_secs(args.hold)).min(deadline);
    tokio::time::sleep_until(hold_until.into()).await;
    let after = server.memory()?;
    let grown = after.rss.saturating_sub(before.rss);
    println!(
        "idle: {} of {n} connections open for {} s ({}), failed {}",
        conns.len(),
        args.hold,
        impl_names(common),
        failed.len()
    );
    report_failures(&failed);
    println!(
        "server RSS before {:.1} MB, after {:.1} MB: {:.0} bytes per idle connection \
         (peak RSS {:.1} MB)",
        mb(before.rss),
        mb(after.rss),
        grown as f64 / conns.len().max(1) as f64,
        mb(after.peak)
    );
    for conn in &conns {
        conn.close();
    }
    drain(&clients).await;
    Ok(failed.is_empty() && !conns.is_empty())
}

/// How long a connection of `--tls resume` waits for its session ticket before closing.
const TICKET_WAIT: Duration = Duration::from_secs(1);

/// The run's session-ticket store with `--tls resume`.
fn ticket_store(common: &Common) -> Option<Arc<TicketStore>> {
    (common.limits.tls == TlsChoice::Resume).then(|| Arc::new(TicketStore::new()))
}

/// `handshakes`: handshakes per second, sequential then `--concurrency` at a time.
pub async fn handshakes(args: &HandshakeArgs) -> anyhow::Result<bool> {
    let common = &args.common;
    let count = positive("--count", args.count)?;
    let concurrency = positive("--concurrency", args.concurrency)?;
    let deadline = deadline_of(common);
    let server = start_server(common, concurrency)?;
    let tickets = ticket_store(common);
    let clients = Arc::new(Clients::new(
        client_impl(common),
        positive("--client-endpoints", common.client_endpoints)?,
        paths(common)?,
        common.limits.tls,
        tickets.as_ref(),
    )?);
    warm_up(&clients, target(common, &server)).await?;
    let mut all_ok = true;
    for workers in [1, concurrency] {
        let phase = Phase {
            workers,
            count,
            duration: args.duration.map(Duration::from_secs),
            deadline,
            tickets: tickets.clone(),
        };
        let resumed_before = tickets.as_ref().map_or(0, |t| t.taken());
        let (done, failed, elapsed) = phase.run(&clients, target(common, &server)).await;
        let resumed = match &tickets {
            Some(t) => format!(" (resumed: {})", t.taken() - resumed_before),
            None => String::new(),
        };
        println!(
            "handshakes, {workers} at a time ({}): {done} in {:.3} s = {:.0}/s, failed {}{resumed}",
            impl_names(common),
            elapsed.as_secs_f64(),
            done as f64 / elapsed.as_secs_f64(),
            failed.len()
        );
        report_failures(&failed);
        all_ok &= failed.is_empty() && done > 0;
    }
    let memory = server.memory()?;
    println!("server memory: peak RSS (VmHWM) {:.1} MB", mb(memory.peak));
    drain(&clients).await;
    Ok(all_ok)
}

/// One phase of the handshake mode: `workers` clients each completing handshakes (and closing
/// at once) until `count` were started, `duration` passed or the global deadline is reached.
struct Phase {
    workers: usize,
    count: usize,
    duration: Option<Duration>,
    deadline: Instant,
    /// With `--tls resume`: each connection waits for a ticket before it closes.
    tickets: Option<Arc<TicketStore>>,
}

impl Phase {
    async fn run(
        &self,
        clients: &Arc<Clients>,
        server: SocketAddr,
    ) -> (usize, Vec<String>, Duration) {
        let started = Instant::now();
        let stop = self
            .duration
            .map_or(self.deadline, |d| (started + d).min(self.deadline));
        let next = Arc::new(AtomicUsize::new(0));
        let done = Arc::new(AtomicUsize::new(0));
        let failed = Arc::new(Mutex::new(Vec::new()));
        let mut tasks = JoinSet::new();
        for _ in 0..self.workers {
            let (clients, next, done, failed) =
                (clients.clone(), next.clone(), done.clone(), failed.clone());
            let tickets = self.tickets.clone();
            let (count, deadline) = (self.count, self.deadline);
            tasks.spawn(async move {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count || Instant::now() >= stop {
                        return;
                    }
                    let attempt =
                        tokio::time::timeout_at(deadline.into(), clients.connect(i, server));
                    let error = match attempt.await {
                        Ok(Ok(conn)) => {
                            if let Some(store) = &tickets {
                                // A ticket for every connection made: then every handshake
                                // after the first ones has one to resume (each takes one).
                                let made = store.count_connection();
                                store.ticket_after(made - 1, TICKET_WAIT).await;
                            }
                            conn.close();
                            done.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                        Ok(Err(e)) => format!("{e:#}"),
                        Err(_) => "not done within the time limit".to_owned(),
                    };
                    failed.lock().expect("failure list").push(error);
                }
            });
        }
        while tasks.join_next().await.is_some() {}
        let elapsed = started.elapsed();
        let failed = std::mem::take(&mut *failed.lock().expect("failure list"));
        (done.load(Ordering::Relaxed), failed, elapsed)
    }
}
