//! `mpquic client`: download a file over HTTP/0.9 (`hq-interop`), optionally over several
//! paths, and summarize the transfer.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use mpquic::{
    config, hq, tls, Connection, ConnectionError, Endpoint, ReadError, RecvStream, TransportConfig,
};
use tokio::io::AsyncWriteExt;

use crate::opts::TransportArgs;
use crate::report::Summary;
use crate::units::parse_duration;

/// Arguments of `mpquic client`.
#[derive(Debug, Args)]
pub struct ClientArgs {
    /// What to download: https://HOST[:PORT]/PATH (port 443 by default).
    #[arg(value_name = "URL", value_parser = Target::parse)]
    pub url: Target,
    /// Write the body to this file (default: count the bytes and discard them).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Accept any server certificate (the handshake signature is still verified).
    #[arg(long, conflicts_with = "ca")]
    pub insecure: bool,
    /// Trust the certificates of this PEM file.
    #[arg(long, value_name = "FILE")]
    pub ca: Option<PathBuf>,
    /// Local address of a path (repeatable): the first carries the handshake, each further one
    /// opens an extra path after it.
    #[arg(long = "path", value_name = "LOCAL_ADDR", value_parser = crate::units::parse_addr)]
    pub paths: Vec<SocketAddr>,
    #[command(flatten)]
    pub transport: TransportArgs,
    /// Give up when the handshake, or the wait for more data, takes longer than this.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Also write the summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
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
    pub tls: Arc<rustls::ClientConfig>,
    pub transport: TransportConfig,
    /// Handshake timeout and longest wait for more data.
    pub timeout: Duration,
    pub output: Option<PathBuf>,
    pub progress: bool,
    /// Length of the body if known (for the progress bar).
    pub expected: Option<u64>,
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
    let remote = resolve(&args.url, args.paths.first()).await?;
    let locals = if args.paths.is_empty() {
        vec![unspecified(remote)]
    } else {
        args.paths.clone()
    };
    let download = Download {
        target: args.url.clone(),
        remote,
        locals,
        tls: tls::client_config(&[hq::ALPN], trust)?,
        transport: args.transport.transport(Some(args.timeout))?,
        timeout: args.timeout,
        output: args.output.clone(),
        progress: !args.quiet && std::io::stdout().is_terminal(),
        expected: None,
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
    /// Connect, open the extra paths, download and summarize.
    pub async fn run(self) -> anyhow::Result<Summary> {
        let endpoint = Endpoint::client(&self.locals).context("binding local sockets")?;
        let local = endpoint.local_addrs()[0];
        let started = Instant::now();
        let connecting = endpoint.connect_from(
            local,
            self.remote,
            &self.target.host,
            config::client(self.tls.clone(), self.transport.clone()),
        )?;
        // The handshake gives up after the idle timeout (= --timeout) by itself; the outer
        // timeout is a safety net.
        let conn = match tokio::time::timeout(self.timeout + Duration::from_millis(500), connecting)
            .await
        {
            Ok(Ok(conn)) => conn,
            Err(_) | Ok(Err(ConnectionError::Lost(mpquic::proto::ConnectionError::TimedOut))) => {
                bail!(
                    "connecting to {}: no answer within {:?}",
                    self.remote,
                    self.timeout
                )
            }
            Ok(Err(e)) => return Err(e).with_context(|| format!("connecting to {}", self.remote)),
        };
        let handshake = started.elapsed();
        for extra in &endpoint.local_addrs()[1..] {
            if let Err(e) = conn.open_path(*extra).await {
                crate::warn(format_args!("cannot open a path from {extra}: {e}"));
            }
        }
        let result = self.fetch(&conn, handshake).await;
        conn.close(0, b"done");
        let _ = tokio::time::timeout(Duration::from_secs(1), endpoint.wait_idle()).await;
        result
    }

    async fn fetch(&self, conn: &Connection, handshake: Duration) -> anyhow::Result<Summary> {
        let bar = self.progress_bar();
        let started = Instant::now();
        let mut body = hq::request(conn, &self.target.path)
            .await
            .context("sending the request")?;
        let received = self.receive(&mut body, &bar).await;
        bar.finish_and_clear();
        let bytes = received?;
        Ok(Summary::new(
            &self.target.url,
            conn,
            bytes,
            started.elapsed(),
            handshake,
        ))
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

    /// Read the body into the output file (if any); returns its length.
    async fn receive(&self, body: &mut RecvStream, bar: &ProgressBar) -> anyhow::Result<u64> {
        let mut out = match &self.output {
            Some(path) => Some(tokio::io::BufWriter::with_capacity(
                1 << 20,
                tokio::fs::File::create(path)
                    .await
                    .with_context(|| format!("creating {}", path.display()))?,
            )),
            None => None,
        };
        let mut buf = vec![0u8; 256 * 1024];
        let mut total = 0u64;
        loop {
            let read = tokio::time::timeout(self.timeout, body.read(&mut buf))
                .await
                .map_err(|_| {
                    anyhow!(
                        "no data from the server for {:?} (after {total} bytes)",
                        self.timeout
                    )
                })?;
            let n = match read {
                Ok(Some(n)) => n,
                Ok(None) => break,
                Err(ReadError::Reset(code)) => bail!(
                    "the server refused {} (stream reset with code {code}{})",
                    self.target.path,
                    reset_meaning(code)
                ),
                Err(e) => return Err(e).context("receiving the body"),
            };
            if let Some(out) = out.as_mut() {
                out.write_all(&buf[..n])
                    .await
                    .context("writing the output file")?;
            }
            total += n as u64;
            bar.set_position(total);
        }
        if let Some(mut out) = out {
            out.flush().await.context("writing the output file")?;
        }
        Ok(total)
    }
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
