//! `mpquic client`: download a file over HTTP/3 (`h3`, the default) or HTTP/0.9
//! (`hq-interop`), optionally over several paths, and summarize the transfer.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use bytes::Bytes;
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use mpquic::{
    config, hq, tls, Connection, ConnectionError, Endpoint, OpenPathError, PathStatus, ReadError,
    RecvStream, TransportConfig,
};
use tokio::io::AsyncWriteExt;

use crate::opts::{AppProtocol, TransportArgs};
use crate::report::Summary;
use crate::units::parse_duration;

/// Arguments of `mpquic client`.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// What to download: https://HOST[:PORT]/PATH (port 443 by default).
    #[arg(value_name = "URL", value_parser = Target::parse)]
    pub url: Target,
    /// Application protocol: h3 (HTTP/3 GET) or hq-interop (HTTP/0.9, as the QUIC interop
    /// runner uses).
    #[arg(long, value_name = "ALPN", value_enum, default_value = "h3")]
    pub alpn: AppProtocol,
    /// Write the body to this file (default: count the bytes and discard them).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Accept any server certificate (the handshake signature is still verified).
    #[arg(long, conflicts_with = "ca")]
    pub insecure: bool,
    /// Trust the certificates of this PEM file.
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// A path (repeatable): LOCAL is a local address (an IP alone takes any port), REMOTE the
    /// server's address for this path (default: the URL's address of LOCAL's family). The
    /// first carries the handshake, each further one opens an extra path after it; a path
    /// whose remote does not answer is reported as failed (path validation, RFC 9000 §8.2).
    #[arg(long = "path", value_name = "LOCAL[=REMOTE]", value_parser = parse_path)]
    pub paths: Vec<PathArg>,
    #[command(flatten)]
    pub transport: TransportArgs,
    /// Give up when the handshake, or the wait for more data, takes longer than this.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Also write the summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Resume a TLS session and send the request in 0-RTT (RFC 9001 §4.6): a first connection
    /// fetches the URL (body discarded) to obtain a session ticket, then a second connection
    /// sends its request in 0-RTT; the summary is the second's. Tickets live in memory only
    /// (rustls 0.23 cannot serialize them, so no ticket file across runs).
    #[arg(long = "0rtt")]
    pub zero_rtt: bool,
    /// Race the handshake over every --path at once (each to its REMOTE, or to the URL's
    /// address of its family) and keep the first connection to complete it: its path becomes
    /// path 0, the other paths are opened after it (connection racing as in RFC 8305;
    /// docs/MULTIPATH.md). Needs two --path or more.
    #[arg(long, conflicts_with = "zero_rtt")]
    pub race: bool,
    /// Move the connection to this local address (an IP alone takes any port) once
    /// --migrate-after has passed in the download: client-initiated migration (RFC 9000 §9),
    /// the way to change networks with a server that does not do multipath. Its outcome is
    /// reported on stderr; a failed move leaves the connection on its address.
    #[arg(long, value_name = "LOCAL", value_parser = crate::units::parse_addr, requires = "migrate_after", conflicts_with = "race")]
    pub migrate_to: Option<SocketAddr>,
    /// When to move to --migrate-to, counted from the request (e.g. 500ms).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration, requires = "migrate_to")]
    pub migrate_after: Option<Duration>,
    /// Move path 0 to the server's preferred address (RFC 9000 §9.6, the address of path 0's
    /// family in the server's preferred_address parameter) as soon as the handshake is
    /// confirmed; the outcome is reported on stderr, and a server without one is noted.
    #[arg(long, conflicts_with_all = ["race", "migrate_to"])]
    pub to_preferred_address: bool,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// One `--path LOCAL[=REMOTE]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PathArg {
    pub local: SocketAddr,
    pub remote: Option<SocketAddr>,
}

/// Parse `LOCAL[=REMOTE]`: each side in the grammar of [`crate::units::parse_addr`]; the
/// remote needs a port.
pub fn parse_path(s: &str) -> Result<PathArg, String> {
    let (local, remote) = match s.split_once('=') {
        Some((l, r)) => (l, Some(r)),
        None => (s, None),
    };
    let local = crate::units::parse_addr(local)?;
    let remote = remote.map(crate::units::parse_addr).transpose()?;
    if let Some(r) = remote {
        if r.port() == 0 {
            return Err(format!("remote address `{r}` of `{s}` needs a port"));
        }
        if r.is_ipv4() != local.is_ipv4() {
            return Err(format!(
                "`{s}`: local and remote addresses are of different families"
            ));
        }
    }
    Ok(PathArg { local, remote })
}

/// A parsed `https://` URL.
#[derive(Debug, Clone)]
pub struct Target {
    pub url: String,
    /// Host name or IP address (without brackets), also the TLS server name.
    pub host: String,
    pub port: u16,
    /// Path and query, starting with '/'.
    pub path: String,
}

impl Target {
    /// The `:authority` of an HTTP/3 request: host (IPv6 in brackets) and port.
    fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// The URI of an HTTP/3 request (scheme, authority, path and query; no fragment).
    fn uri(&self) -> anyhow::Result<mpquic_h3::http::Uri> {
        format!("https://{}{}", self.authority(), self.path)
            .parse()
            .with_context(|| format!("invalid request URI for {}", self.url))
    }
}

impl Target {
    /// Parse `https://HOST[:PORT]/PATH`.
    pub fn parse(s: &str) -> Result<Self, String> {
        let url = url::Url::parse(s).map_err(|e| format!("invalid URL '{s}': {e}"))?;
        if url.scheme() != "https" {
            return Err(format!(
                "invalid URL '{s}': the scheme must be https, not '{}'",
                url.scheme()
            ));
        }
        let host = match url.host() {
            Some(url::Host::Domain(d)) => d.to_owned(),
            Some(url::Host::Ipv4(ip)) => ip.to_string(),
            Some(url::Host::Ipv6(ip)) => ip.to_string(),
            None => return Err(format!("invalid URL '{s}': no host")),
        };
        let mut path = url.path().to_owned();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        Ok(Self {
            url: s.to_owned(),
            host,
            port: url.port().unwrap_or(443),
            path,
        })
    }
}

/// Everything a download needs.
pub struct Download {
    pub target: Target,
    pub remote: SocketAddr,
    /// Local addresses: the first for the handshake, the others for extra paths.
    pub locals: Vec<SocketAddr>,
    /// The server's address given for each extra path (`locals[1..]`); missing or `None`: the
    /// default below.
    pub path_remotes: Vec<Option<SocketAddr>>,
    /// For an extra path of the other address family than `remote` without a given address:
    /// the URL host's address of that family, used if the server advertises none of it
    /// (preferred_address, RFC 9000 §18.2).
    pub path_fallbacks: Vec<Option<SocketAddr>>,
    /// TLS configuration; its ALPN list must offer `protocol`.
    pub tls: Arc<rustls::ClientConfig>,
    pub protocol: AppProtocol,
    pub transport: TransportConfig,
    /// Handshake timeout and longest wait for more data.
    pub timeout: Duration,
    pub output: Option<PathBuf>,
    pub progress: bool,
    /// Length of the body if known (for the progress bar).
    pub expected: Option<u64>,
    /// Warm up with a first connection, then fetch over a second one in 0-RTT (`--0rtt`);
    /// `tls` must come from `tls::client_config_0rtt`.
    pub zero_rtt: bool,
    /// Race the handshake over every local address (`--race`).
    pub race: bool,
    /// Migrate path 0 to this local address after this long (`--migrate-to`/`--migrate-after`);
    /// the address is bound with the others but opens no path of its own.
    pub migrate: Option<(SocketAddr, Duration)>,
    /// Move path 0 to the server's preferred address once possible (`--to-preferred-address`).
    pub to_preferred_address: bool,
}

/// Run `mpquic client`.
pub async fn run(args: ClientArgs) -> anyhow::Result<()> {
    // Before the transfer: an unwritable output path must not cost the download.
    crate::check_outputs(&[("--output", &args.output), ("--json", &args.json)])?;
    let trust = match (&args.ca, args.insecure) {
        (Some(ca), _) => tls::ServerTrust::Roots(tls::load_certs(ca)?),
        (None, true) => tls::ServerTrust::Insecure,
        (None, false) => {
            bail!("cannot verify the server's certificate: pass --ca FILE (PEM) or --insecure")
        }
    };
    if args.race && args.paths.len() < 2 {
        return Err(crate::exit::UsageError::new(
            "--race needs two --path or more (one handshake per path)",
        )
        .into());
    }
    let first = args.paths.first();
    let remote = match first.and_then(|p| p.remote) {
        Some(remote) => remote,
        None => resolve(&args.url, first.map(|p| &p.local)).await?,
    };
    let locals = if args.paths.is_empty() {
        vec![unspecified(remote)]
    } else {
        args.paths.iter().map(|p| p.local).collect()
    };
    // An extra path of the other address family goes to the server's advertised address of
    // that family, else to the host's address of that family (a dual-stack server): the
    // initial path's remote cannot be reached from it. Which applies is known after the
    // handshake; without either, opening the path fails with a warning.
    let path_remotes = args.paths.iter().skip(1).map(|p| p.remote).collect();
    let mut path_fallbacks = Vec::new();
    for p in args.paths.iter().skip(1) {
        path_fallbacks.push(match p.remote {
            None if p.local.is_ipv4() != remote.is_ipv4() => {
                resolve(&args.url, Some(&p.local)).await.ok()
            }
            _ => None,
        });
    }
    let tls = if args.zero_rtt {
        tls::client_config_0rtt(&[args.alpn.alpn()], trust, None)?
    } else {
        tls::client_config(&[args.alpn.alpn()], trust)?
    };
    let download = Download {
        target: args.url.clone(),
        remote,
        locals,
        path_remotes,
        path_fallbacks,
        tls,
        protocol: args.alpn,
        transport: args.transport.transport(Some(args.timeout))?,
        timeout: args.timeout,
        output: args.output.clone(),
        progress: !args.quiet && std::io::stdout().is_terminal(),
        expected: None,
        zero_rtt: args.zero_rtt,
        race: args.race,
        migrate: args.migrate_to.zip(args.migrate_after),
        to_preferred_address: args.to_preferred_address,
    };
    let summary = download.run().await?;
    summary.print();
    if let Some(path) = &args.json {
        summary.write_json(path)?;
    }
    Ok(())
}

/// The address of the URL's host, of the family of `local` if given.
async fn resolve(target: &Target, local: Option<&SocketAddr>) -> anyhow::Result<SocketAddr> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((target.host.as_str(), target.port))
        .await
        .with_context(|| format!("cannot resolve host '{}'", target.host))?
        .collect();
    addrs
        .iter()
        .find(|a| local.is_none_or(|l| l.is_ipv4() == a.is_ipv4()))
        .copied()
        .ok_or_else(|| {
            anyhow!(
                "host '{}' has no address of the family of --path {}",
                target.host,
                local.map_or(String::new(), |l| l.to_string())
            )
        })
}

/// The wildcard address of `remote`'s family, any port.
fn unspecified(remote: SocketAddr) -> SocketAddr {
    if remote.is_ipv4() {
        SocketAddr::from(([0, 0, 0, 0], 0))
    } else {
        SocketAddr::from(([0u16; 8], 0))
    }
}

impl Download {
    /// The remote of extra path `i` from `local`: the one given; else, for a path of the other
    /// family than path 0's remote, the server's advertised address of that family
    /// (preferred_address) or the URL host's; else `None` (path 0's remote).
    fn path_remote(&self, conn: &Connection, i: usize, local: SocketAddr) -> Option<SocketAddr> {
        if let Some(given) = self.path_remotes.get(i).copied().flatten() {
            return Some(given);
        }
        if local.is_ipv4() == self.remote.is_ipv4() {
            return None;
        }
        let advertised = conn.peer_preferred_address();
        advertised
            .into_iter()
            .find(|a| a.is_ipv4() == local.is_ipv4())
            .or(self.path_fallbacks.get(i).copied().flatten())
    }

    /// Connect, open the extra paths, download and summarize.
    pub async fn run(self) -> anyhow::Result<Summary> {
        let mut binds = self.locals.clone();
        binds.extend(self.migrate.map(|(to, _)| to));
        let endpoint = Endpoint::client(&binds).context("binding local sockets")?;
        let config = config::client(self.tls.clone(), self.transport.clone());
        if self.zero_rtt {
            self.warm_up(&endpoint, &config).await?;
        }
        let started = Instant::now();
        let mut locals = endpoint.local_addrs();
        let migrate_to = self
            .migrate
            .map(|(_, after)| (locals.split_off(self.locals.len()), after));
        let (conn, zero_rtt, initial) = if self.race {
            let (conn, initial) = self.connect_racing(&endpoint, config).await?;
            (conn, None, initial)
        } else {
            let (conn, zero_rtt) = self.connect(&endpoint, config).await?;
            (conn, zero_rtt, 0)
        };
        // With 0-RTT the request goes out before the handshake completes; its duration is known
        // when the server's decision arrives.
        let handshake = match &zero_rtt {
            Some(_) => Duration::ZERO,
            None => started.elapsed(),
        };
        let extras: Vec<(SocketAddr, Option<SocketAddr>)> = (0..locals.len())
            .filter(|&i| i != initial)
            .map(|i| match i {
                0 => (locals[0], Some(self.remote)),
                i => (locals[i], self.path_remote(&conn, i - 1, locals[i])),
            })
            .collect();
        // Extra paths need the negotiated multipath parameters: with 0-RTT they are opened
        // once the handshake completes, beside the download rather than before the request.
        let handshake_done = zero_rtt.map(|accepted| {
            let (conn, extras) = (conn.clone(), extras.clone());
            tokio::spawn(async move {
                accepted.await;
                let elapsed = started.elapsed();
                drop(open_paths(&conn, &extras));
                elapsed
            })
        });
        let opening = match handshake_done {
            None => open_paths(&conn, &extras),
            Some(_) => Vec::new(),
        };
        let migration = match migrate_to {
            Some((to, after)) => Some(spawn_migration(&conn, to[0], after)),
            None => self
                .to_preferred_address
                .then(|| spawn_move_to_preferred_address(&conn)),
        };
        let result = self.fetch(&conn, handshake, started, opening).await;
        if let Some(mut task) = migration {
            // A move to the preferred address started with the connection and takes one round
            // trip: its outcome is worth the wait. A timed --migrate-to the transfer outlived
            // is moot.
            let wait = match self.to_preferred_address {
                true => PREFERRED_MOVE_WAIT,
                false => Duration::ZERO,
            };
            if tokio::time::timeout(wait, &mut task).await.is_err() {
                task.abort();
            }
        }
        let result = match (result, handshake_done) {
            (Ok(mut summary), Some(done)) => {
                if let Ok(d) = done.await {
                    summary.handshake_ms = d.as_secs_f64() * 1000.0;
                }
                summary.set_zero_rtt(&conn);
                Ok(summary)
            }
            (result, _) => result,
        };
        conn.close(0, b"done");
        let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
        result
    }

    /// The connection: at once if `--0rtt` found a ticket allowing early data (with the
    /// future of the server's decision), otherwise after the handshake.
    async fn connect(
        &self,
        endpoint: &Endpoint,
        config: mpquic::ClientConfig,
    ) -> anyhow::Result<(Connection, Option<mpquic::ZeroRttAccepted>)> {
        let local = endpoint.local_addrs()[0];
        let connecting = endpoint.connect_from(local, self.remote, &self.target.host, config)?;
        let connecting = if self.zero_rtt {
            match connecting.into_0rtt() {
                Ok((conn, accepted)) => return Ok((conn, Some(accepted))),
                Err(connecting) => {
                    crate::warn("no session ticket allowing 0-RTT: plain handshake");
                    connecting
                }
            }
        } else {
            connecting
        };
        // The handshake gives up after the idle timeout (= --timeout) by itself; the outer
        // timeout is a safety net.
        match tokio::time::timeout(self.timeout + Duration::from_millis(500), connecting).await {
            Ok(Ok(conn)) => Ok((conn, None)),
            Err(_) | Ok(Err(ConnectionError::Lost(mpquic::CloseReason::TimedOut))) => {
                bail!(
                    "connecting to {}: no answer within {:?}",
                    self.remote,
                    self.timeout
                )
            }
            Ok(Err(e)) => Err(e).with_context(|| format!("connecting to {}", self.remote)),
        }
    }

    /// `--race`: one handshake per local address whose remote is known before the handshake
    /// (given, or the URL's address of its family), the first to complete kept; returns it and
    /// the index of its local address.
    async fn connect_racing(
        &self,
        endpoint: &Endpoint,
        config: mpquic::ClientConfig,
    ) -> anyhow::Result<(Connection, usize)> {
        let locals = endpoint.local_addrs();
        let mut indices = Vec::new();
        let mut pairs = Vec::new();
        for (i, &local) in locals.iter().enumerate() {
            let remote = match i {
                0 => Some(self.remote),
                i => self.path_remotes.get(i - 1).copied().flatten().or_else(|| {
                    let same = local.is_ipv4() == self.remote.is_ipv4();
                    if same {
                        Some(self.remote)
                    } else {
                        self.path_fallbacks.get(i - 1).copied().flatten()
                    }
                }),
            };
            match remote {
                Some(remote) => {
                    indices.push(i);
                    pairs.push((local, remote));
                }
                None => crate::warn(format_args!(
                    "--path {local}: no server address of its family known before the \
                     handshake; it joins as a path afterwards"
                )),
            }
        }
        let race = endpoint.connect_racing(config, &pairs, &self.target.host)?;
        match tokio::time::timeout(self.timeout + Duration::from_millis(500), race).await {
            Ok(Ok((conn, k))) => {
                let (local, remote) = pairs[k];
                crate::say(format!(
                    "handshake race: won by the path from {local} to {remote}"
                ));
                Ok((conn, indices[k]))
            }
            Err(_) | Ok(Err(ConnectionError::Lost(mpquic::CloseReason::TimedOut))) => {
                bail!(
                    "connecting over {} paths: no answer within {:?}",
                    pairs.len(),
                    self.timeout
                )
            }
            Ok(Err(e)) => Err(e).context("connecting: every handshake of the race failed"),
        }
    }

    /// `--0rtt`: a first connection that fetches the URL (discarding the body) so that the
    /// session store holds the server's tickets.
    async fn warm_up(
        &self,
        endpoint: &Endpoint,
        config: &mpquic::ClientConfig,
    ) -> anyhow::Result<()> {
        let local = endpoint.local_addrs()[0];
        let connecting =
            endpoint.connect_from(local, self.remote, &self.target.host, config.clone())?;
        let conn = tokio::time::timeout(self.timeout, connecting)
            .await
            .map_err(|_| anyhow!("warm-up connection: no answer within {:?}", self.timeout))?
            .context("warm-up connection")?;
        let mut body = self.request(&conn).await?;
        while let Ok(Ok(Some(_))) = tokio::time::timeout(self.timeout, body.next()).await {}
        conn.close(0, b"warm-up done");
        Ok(())
    }

    async fn fetch(
        &self,
        conn: &Connection,
        handshake: Duration,
        connect_started: Instant,
        opening: Vec<tokio::task::JoinHandle<()>>,
    ) -> anyhow::Result<Summary> {
        let bar = self.progress_bar();
        let started = Instant::now();
        let mut body = self.request(conn).await?;
        let received = self.receive(&mut body, &bar).await;
        bar.finish_and_clear();
        let (bytes, first_byte) = received?;
        let elapsed = started.elapsed();
        // Say what became of each extra path, while the connection is still up (the end of an
        // HTTP/3 response makes the server close it): a path still validating after a short
        // transfer is reported within the path validation timeout, and the summary shows it.
        let deadline = tokio::time::Instant::now() + self.timeout;
        for task in opening {
            let _ = tokio::time::timeout_at(deadline, task).await;
        }
        let mut summary = Summary::new(
            &self.target.url,
            (self.protocol.name(), body.status()),
            conn,
            bytes,
            elapsed,
            handshake,
        );
        summary.first_byte_ms =
            first_byte.map(|t| t.duration_since(connect_started).as_secs_f64() * 1000.0);
        Ok(summary)
    }

    fn progress_bar(&self) -> ProgressBar {
        if !self.progress {
            return ProgressBar::hidden();
        }
        let (bar, template) = match self.expected {
            Some(len) => (
                ProgressBar::new(len),
                "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} {eta}",
            ),
            None => (
                ProgressBar::new_spinner(),
                "{spinner} {bytes} {bytes_per_sec} {elapsed}",
            ),
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style);
        }
        bar.enable_steady_tick(Duration::from_millis(100));
        bar
    }

    /// Send the request in the negotiated protocol; for HTTP/3, wait for a 200 response.
    async fn request(&self, conn: &Connection) -> anyhow::Result<Body> {
        let path = &self.target.path;
        match self.protocol {
            AppProtocol::HqInterop => Ok(Body::Hq(
                hq::request(conn, path)
                    .await
                    .context("sending the request")?,
            )),
            AppProtocol::H3 => {
                let get = mpquic_h3::client::get(conn, self.target.uri()?);
                let mut response = tokio::time::timeout(self.timeout, get)
                    .await
                    .map_err(|_| anyhow!("no response from the server within {:?}", self.timeout))?
                    .context("HTTP/3 request")?;
                let status = response.status();
                if status != mpquic_h3::http::StatusCode::OK {
                    bail!(
                        "the server answered {status} for {path}{}",
                        error_text(&mut response, self.timeout).await
                    );
                }
                Ok(Body::H3(Box::new(response)))
            }
        }
    }

    /// Read the body into the output file (if any); returns its length and when its first byte
    /// arrived.
    async fn receive(
        &self,
        body: &mut Body,
        bar: &ProgressBar,
    ) -> anyhow::Result<(u64, Option<Instant>)> {
        let mut out = match &self.output {
            Some(path) => Some(tokio::io::BufWriter::with_capacity(
                1 << 20,
                tokio::fs::File::create(path)
                    .await
                    .with_context(|| format!("creating {}", path.display()))?,
            )),
            None => None,
        };
        let mut total = 0u64;
        let mut first_byte = None;
        loop {
            let read = tokio::time::timeout(self.timeout, body.next())
                .await
                .map_err(|_| {
                    anyhow!(
                        "no data from the server for {:?} (after {total} bytes)",
                        self.timeout
                    )
                })?;
            let chunk = match read {
                Ok(Some(chunk)) => chunk,
                Ok(None) => break,
                Err(BodyError::Hq(ReadError::Reset(code))) => bail!(
                    "the server refused {} (stream reset with code {code}{})",
                    self.target.path,
                    reset_meaning(code)
                ),
                Err(e) => return Err(e).context("receiving the body"),
            };
            if let Some(out) = out.as_mut() {
                out.write_all(&chunk)
                    .await
                    .context("writing the output file")?;
            }
            if first_byte.is_none() && !chunk.is_empty() {
                first_byte = Some(Instant::now());
            }
            total += chunk.len() as u64;
            bar.set_position(total);
        }
        if let Some(mut out) = out {
            out.flush().await.context("writing the output file")?;
        }
        Ok((total, first_byte))
    }
}

/// First wait before a path that failed validation is tried again; doubled per failure.
const PATH_RETRY_FIRST: Duration = Duration::from_secs(1);
/// Longest wait between two attempts at a path.
const PATH_RETRY_MAX: Duration = Duration::from_secs(8);

/// Open one extra path from each local address (to its remote, or the connection's), in
/// order, beside the transfer; the transfer does not wait for them. A path that cannot be
/// opened is reported on stderr (one line each); one that fails validation (its network may
/// not be up yet, or be down for a while) is reported once and tried again, after 1 s and
/// then twice as long each time up to 8 s, for as long as the transfer lasts.
fn open_paths(
    conn: &Connection,
    paths: &[(SocketAddr, Option<SocketAddr>)],
) -> Vec<tokio::task::JoinHandle<()>> {
    let mut tasks = Vec::new();
    for &(local, remote) in paths {
        let mut open = conn.open_path(local, remote, PathStatus::Available);
        // Without a remote the path goes to path 0's remote, if of `local`'s family.
        let same_family = |r: &SocketAddr| r.is_ipv4() == local.is_ipv4();
        let to = remote.or(conn.remote_address().filter(same_family));
        let to = to.map_or(String::new(), |r| format!(" to {r}"));
        let conn = conn.clone();
        tasks.push(tokio::spawn(async move {
            let mut wait = PATH_RETRY_FIRST;
            loop {
                match open.await {
                    Ok(_) => return,
                    // The transfer ended (and closed the connection) first.
                    Err(OpenPathError::Connection(_)) => return,
                    Err(
                        e @ (OpenPathError::ValidationFailed(_) | OpenPathError::Abandoned { .. }),
                    ) => {
                        if wait == PATH_RETRY_FIRST {
                            crate::warn(format_args!(
                                "path from {local}{to} failed: {e}; trying again while the transfer lasts"
                            ));
                        }
                        tokio::time::sleep(wait).await;
                        wait = (wait * 2).min(PATH_RETRY_MAX);
                        open = conn.open_path(local, remote, PathStatus::Available);
                    }
                    Err(e) => {
                        crate::warn(format_args!("path from {local}{to} failed: {e}"));
                        return;
                    }
                }
            }
        }));
    }
    tasks
}

/// `--migrate-to`: after `after`, move path 0 to `to` (RFC 9000 §9) and say on stderr how it
/// went; aborted if the transfer ends first.
fn spawn_migration(
    conn: &Connection,
    to: SocketAddr,
    after: Duration,
) -> tokio::task::JoinHandle<()> {
    let conn = conn.clone();
    tokio::spawn(async move {
        tokio::time::sleep(after).await;
        match conn.migrate(mpquic::PathId::ZERO, to).await {
            Ok(()) => eprintln!("migrated to {to} (path validated)"),
            Err(OpenPathError::Connection(_)) => {}
            Err(e) => crate::warn(format_args!("migration to {to} failed: {e}")),
        }
    })
}

/// How long a finished transfer waits for the outcome of `--to-preferred-address`.
const PREFERRED_MOVE_WAIT: Duration = Duration::from_secs(2);

/// `--to-preferred-address`: move path 0 to the server's preferred address (RFC 9000 §9.6)
/// and say on stderr how it went.
fn spawn_move_to_preferred_address(conn: &Connection) -> tokio::task::JoinHandle<()> {
    let conn = conn.clone();
    tokio::spawn(async move {
        match conn.migrate_to_preferred_address().await {
            Ok(to) => eprintln!("moved to the server's preferred address {to} (path validated)"),
            Err(OpenPathError::Path(mpquic::PathError::NoPreferredAddress)) => {
                eprintln!("the server advertised no preferred address of this family")
            }
            Err(OpenPathError::Connection(_)) => {}
            Err(e) => crate::warn(format_args!("move to the preferred address failed: {e}")),
        }
    })
}

fn reset_meaning(code: u64) -> &'static str {
    match code {
        hq::code::BAD_REQUEST => ": bad request",
        hq::code::FORBIDDEN => ": forbidden",
        hq::code::NOT_FOUND => ": not found",
        hq::code::INTERNAL => ": server error",
        _ => "",
    }
}

/// The body of a response, in either protocol.
enum Body {
    Hq(RecvStream),
    H3(Box<mpquic_h3::client::Response>),
}

#[derive(Debug, thiserror::Error)]
enum BodyError {
    #[error(transparent)]
    Hq(#[from] ReadError),
    #[error(transparent)]
    H3(#[from] mpquic_h3::client::GetError),
}

impl Body {
    /// The HTTP status, for HTTP/3.
    fn status(&self) -> Option<u16> {
        match self {
            Body::Hq(_) => None,
            Body::H3(response) => Some(response.status().as_u16()),
        }
    }

    /// The next piece of the body, `None` at its end (hq-interop: as received, no copy).
    async fn next(&mut self) -> Result<Option<Bytes>, BodyError> {
        match self {
            Body::Hq(stream) => Ok(stream.read_chunk(256 * 1024).await?),
            Body::H3(response) => Ok(response.chunk().await?),
        }
    }
}

/// Longest piece of an error response's text quoted in the client's error line.
const ERROR_TEXT: usize = 200;

/// ": <first line of the body>" of an error response, printable characters only, or nothing
/// if there is no body (or it does not come within `timeout`).
async fn error_text(response: &mut mpquic_h3::client::Response, timeout: Duration) -> String {
    let body = tokio::time::timeout(timeout, response.read_to_end(64 * 1024)).await;
    let Ok(Ok(body)) = body else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&body);
    let line: String = text
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .take(ERROR_TEXT)
        .collect();
    if line.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", line.trim())
    }
}

#[cfg(test)]
mod tests {
    use super::Target;

    /// An international domain name becomes its ASCII form (RFC 5891 A-label) for SNI and
    /// the `:authority`, whichever IDNA back end `url` is built with.
    #[test]
    fn international_host_is_mapped_to_its_ascii_form() {
        let target = Target::parse("https://Bücher.example:4433/a?b=1").expect("valid URL");
        assert_eq!(target.host, "xn--bcher-kva.example");
        assert_eq!(target.port, 4433);
        assert_eq!(target.path, "/a?b=1");
        let err = Target::parse("https://exa mple.org/").expect_err("space in host");
        assert!(err.starts_with("invalid URL"), "{err}");
    }
}
