//! The server child process (so that its memory is measured apart from the clients') and the
//! figures: resident set sizes from /proc, latency percentiles.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::{anyhow, bail, Context};

use crate::peers::{Impl, Limits};

/// How long the child may take to bind and print its address.
const STARTUP: Duration = Duration::from_secs(20);

/// `loadtest serve` running as a child process; killed when dropped.
pub struct ServerChild {
    child: Child,
    pub addr: SocketAddr,
}

impl ServerChild {
    /// Start `loadtest serve`; it lives at most `lifetime` and ends when our end of its stdin
    /// closes (so that it cannot outlive this process).
    pub fn spawn(
        imp: Impl,
        limits: &Limits,
        lifetime: Duration,
        port: u16,
    ) -> anyhow::Result<Self> {
        let exe = std::env::current_exe().context("finding the loadtest executable")?;
        let mut cmd = Command::new(exe);
        cmd.args(["serve", "--impl", imp.name(), "--port", &port.to_string()])
            .args(["--lifetime", &lifetime.as_secs().max(1).to_string()])
            .args(["--retry", &limits.retry])
            .args(["--accept", limits.accept.name()])
            .args(["--tls", limits.tls.name()]);
        if let Some(n) = limits.max_connections {
            cmd.args(["--max-connections", &n.to_string()]);
        }
        if let Some(n) = limits.max_handshakes {
            cmd.args(["--max-handshakes", &n.to_string()]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting the server process")?;
        let stdout = child.stdout.take().context("server stdout")?;
        // The guard owns the child from here on: an early return kills it.
        let mut guard = ServerChild {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], 0)),
        };
        guard.addr = read_address(stdout)?;
        Ok(guard)
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The server's memory now.
    pub fn memory(&self) -> anyhow::Result<Memory> {
        Memory::of(self.pid())
    }
}

impl Drop for ServerChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The first line the server prints, `listening ADDR`, read with a deadline (a thread, since
/// the pipe read blocks).
fn read_address(stdout: std::process::ChildStdout) -> anyhow::Result<SocketAddr> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let mut reader = BufReader::new(stdout);
        let _ = tx.send(reader.read_line(&mut line).map(|_| line));
        // Keep reading so that the child never blocks on a full pipe.
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    let line = rx
        .recv_timeout(STARTUP)
        .map_err(|_| anyhow!("the server did not start within {STARTUP:?}"))?
        .context("reading the server's address")?;
    let addr = line
        .trim()
        .strip_prefix("listening ")
        .ok_or_else(|| anyhow!("unexpected first line from the server: {line:?}"))?;
    Ok(addr.parse()?)
}

/// Resident memory of a process, in bytes.
#[derive(Debug, Clone, Copy)]
pub struct Memory {
    /// VmRSS: resident now.
    pub rss: u64,
    /// VmHWM: the peak resident size since the process started.
    pub peak: u64,
}

impl Memory {
    /// From /proc/PID/status (Linux).
    pub fn of(pid: u32) -> anyhow::Result<Self> {
        let path = format!("/proc/{pid}/status");
        let status = std::fs::read_to_string(&path).with_context(|| format!("reading {path}"))?;
        let field = |name: &str| -> anyhow::Result<u64> {
            let line = status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .ok_or_else(|| anyhow!("{path} has no {name}"))?;
            let kb: u64 = line
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .with_context(|| format!("{path}: {name}{line}"))?;
            Ok(kb * 1024)
        };
        Ok(Memory {
            rss: field("VmRSS:")?,
            peak: field("VmHWM:")?,
        })
    }
}

/// Bytes as MB (10^6), for printing.
pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// Nearest-rank percentile `p` (0..=100) of sorted samples.
pub fn percentile(sorted: &[Duration], p: f64) -> Option<Duration> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

/// `p50 .. max` of the samples, in milliseconds.
pub fn latency_line(mut samples: Vec<Duration>) -> String {
    if samples.is_empty() {
        return "latency ms: nothing completed".to_owned();
    }
    samples.sort_unstable();
    let ms = |p: f64| percentile(&samples, p).map_or(f64::NAN, |d| d.as_secs_f64() * 1e3);
    format!(
        "latency ms: p50 {:.1}, p90 {:.1}, p99 {:.1}, max {:.1}",
        ms(50.0),
        ms(90.0),
        ms(99.0),
        ms(100.0)
    )
}

/// Failure messages counted by text, most frequent first, for one summary line.
pub fn failure_summary(errors: &[String]) -> String {
    let mut counts = std::collections::BTreeMap::<&str, usize>::new();
    for e in errors {
        *counts.entry(e.as_str()).or_default() += 1;
    }
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort_by_key(|(_, n)| std::cmp::Reverse(*n));
    counts
        .iter()
        .take(3)
        .map(|(e, n)| format!("{n} x {e}"))
        .collect::<Vec<_>>()
        .join("; ")
}

/// Refuse a zero where a count is needed.
pub fn positive(name: &str, n: usize) -> anyhow::Result<usize> {
    if n == 0 {
        bail!("{name} must be at least 1");
    }
    Ok(n)
}
