//! `mpquic server`: serve a directory over HTTP/3 (`h3`) and HTTP/0.9 (`hq-interop`), the
//! protocol of each connection being the ALPN token it negotiated.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use mpquic::config::{DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_HANDSHAKES};
use mpquic::{config, hq, tls, Endpoint, EndpointConfig, ServerConfig, TransportConfig};
use mpquic::{RetryPolicy, TokenKeys};

use crate::exit::UsageError;
use crate::keys::load_key;
use crate::opts::{cc_name, multipath_name, TransportArgs};

/// The ALPN tokens the server offers; each connection is served in the one it negotiated.
pub const SERVED_ALPNS: [&[u8]; 2] = [mpquic_h3::ALPN, hq::ALPN];

/// Names the generated certificate is valid for.
const SELF_SIGNED_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Arguments of `mpquic server`.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Address to listen on; repeat for several sockets (e.g. one per interface).
    #[arg(long, value_name = "ADDR", required = true, value_parser = crate::units::parse_addr)]
    pub listen: Vec<SocketAddr>,
    /// Another address of this server to advertise to clients (RFC 9000 §18.2
    /// preferred_address): at most one IPv4 and one IPv6 address, usually one of --listen (an IP
    /// alone takes the port of the --listen address with that IP). Clients may open paths to
    /// it (`mpquic client --path LOCAL` of that family); nothing migrates by itself.
    #[arg(long, value_name = "ADDR", value_parser = crate::units::parse_addr)]
    pub advertise: Vec<SocketAddr>,
    /// Directory whose files are served.
    #[arg(long, value_name = "DIR")]
    pub root: PathBuf,
    /// Certificate chain (PEM); without --cert/--key a self-signed certificate is generated.
    #[arg(long, value_name = "FILE", requires = "key")]
    pub cert: Option<PathBuf>,
    /// Private key (PEM) of --cert.
    #[arg(long, value_name = "FILE", requires = "cert")]
    pub key: Option<PathBuf>,
    /// Write the generated self-signed certificate (PEM) here, for clients' --ca.
    #[arg(long, value_name = "FILE", conflicts_with = "cert")]
    pub cert_out: Option<PathBuf>,
    /// Issue no session tickets and accept no 0-RTT. By default the server accepts 0-RTT
    /// requests (GETs, which are idempotent) with single-use tickets against replay.
    #[arg(long = "no-0rtt")]
    pub no_zero_rtt: bool,
    /// Send the certificate uncompressed. By default it goes compressed (RFC 8879, zlib or
    /// brotli) to clients that offer it, which keeps a large chain's first flight within the
    /// anti-amplification limit (RFC 9000 §8.1) and saves a round trip.
    #[arg(long)]
    pub no_cert_compression: bool,
    #[command(flatten)]
    pub transport: TransportArgs,
    #[command(flatten)]
    pub limits: ServerLimitArgs,
}

/// Admission limits, address validation and the operator's keys.
#[derive(Debug, Clone, Args)]
pub struct ServerLimitArgs {
    /// Refuse new connections while this many are open.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_connections: u64,
    /// Handshakes in progress at once; beyond it new clients are refused (or asked to Retry).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_HANDSHAKES as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub max_handshakes: u64,
    /// When to validate a client's address with a Retry: never, always, or auto (while more
    /// than half of --max-handshakes are in progress).
    #[arg(long, value_name = "POLICY", default_value = "auto", value_parser = parse_retry)]
    pub retry: RetryPolicy,
    /// Key sealing Retry and NEW_TOKEN tokens (32 bytes, raw or 64 hex characters; see
    /// `mpquic keygen`). Without it a random key is drawn and tokens do not survive a restart.
    #[arg(long, value_name = "FILE")]
    pub token_key: Option<PathBuf>,
    /// Stateless-reset key (same format). With the same key after a restart, clients of the
    /// previous run are reset at once instead of waiting for their idle timeout.
    #[arg(long, value_name = "FILE")]
    pub reset_key: Option<PathBuf>,
}

fn parse_retry(s: &str) -> Result<RetryPolicy, String> {
    s.parse()
}

impl ServerLimitArgs {
    /// Read the key files; a bad one is an input error (exit code 2).
    fn keys(&self) -> Result<ServerKeys, UsageError> {
        Ok(ServerKeys {
            token: self.token_key.as_deref().map(load_key).transpose()?,
            reset: self.reset_key.as_deref().map(load_key).transpose()?,
        })
    }

    /// Apply the limits and the token key to `config`.
    fn apply(&self, config: &mut ServerConfig, keys: &ServerKeys) {
        config.max_connections = usize::try_from(self.max_connections).unwrap_or(usize::MAX);
        config.max_handshakes = usize::try_from(self.max_handshakes).unwrap_or(usize::MAX);
        config.retry = match self.retry {
            // "auto" scales with the handshake limit given here, not the default one.
            RetryPolicy::UnderLoad { .. } => RetryPolicy::UnderLoad {
                handshakes: (config.max_handshakes / 2).max(1),
            },
            fixed => fixed,
        };
        if let Some(key) = keys.token {
            config.token_keys = TokenKeys {
                current: key,
                previous: Vec::new(),
            };
        }
    }

    /// Description for the startup line.
    fn describe(&self) -> String {
        let retry = match self.retry {
            RetryPolicy::Never => "never",
            RetryPolicy::Always => "always",
            RetryPolicy::UnderLoad { .. } => "auto",
        };
        format!(
            "max {} connections, {} handshakes, retry {retry}, {} token key, {} reset key",
            self.max_connections,
            self.max_handshakes,
            if self.token_key.is_some() {
                "operator"
            } else {
                "random"
            },
            if self.reset_key.is_some() {
                "operator"
            } else {
                "random"
            },
        )
    }
}

/// Keys read from the operator's files.
#[derive(Default)]
pub struct ServerKeys {
    pub token: Option<[u8; 32]>,
    pub reset: Option<[u8; 32]>,
}

/// A running server.
pub struct Server {
    pub endpoint: Endpoint,
    pub root: Arc<PathBuf>,
}

/// Bind the sockets and start serving `root` (which must be a directory) with default limits
/// and random keys.
pub fn start(
    listen: &[SocketAddr],
    root: &std::path::Path,
    tls: Arc<rustls::ServerConfig>,
    transport: TransportConfig,
) -> anyhow::Result<Server> {
    start_with(listen, root, config::server(tls, transport), None)
}

/// [`start`] with a complete server configuration and, optionally, the stateless-reset key.
pub fn start_with(
    listen: &[SocketAddr],
    root: &std::path::Path,
    config: ServerConfig,
    reset_key: Option<[u8; 32]>,
) -> anyhow::Result<Server> {
    let root = root
        .canonicalize()
        .with_context(|| format!("root directory {}", root.display()))?;
    if !root.is_dir() {
        bail!("root {} is not a directory", root.display());
    }
    let root = Arc::new(root);
    let endpoint = match reset_key {
        Some(key) => Endpoint::server_with_endpoint_config(
            config,
            EndpointConfig::with_reset_key(key),
            listen,
        ),
        None => Endpoint::server(config, listen),
    }
    .context("starting the server")?;
    let ep = endpoint.clone();
    let served = root.clone();
    tokio::spawn(async move {
        while let Some(incoming) = ep.accept().await {
            let served = served.clone();
            tokio::spawn(async move {
                // A failed handshake is the client's business (it sees the error).
                if let Ok(conn) = incoming.await {
                    serve_connection(conn, served).await;
                }
            });
        }
    });
    Ok(Server { endpoint, root })
}

/// Serve one connection in the protocol it negotiated: HTTP/3 for ALPN `h3` (RFC 9114 §3.2),
/// HTTP/0.9 for `hq-interop`.
async fn serve_connection(conn: mpquic::Connection, root: Arc<PathBuf>) {
    let peer = conn.remote_address();
    if conn.alpn_protocol().as_deref() == Some(mpquic_h3::ALPN) {
        match mpquic_h3::server::serve_connection(conn, root).await {
            Ok(()) => tracing::info!("HTTP/3 connection from {peer:?} ended"),
            Err(e) => tracing::info!("HTTP/3 connection from {peer:?} failed: {e}"),
        }
    } else {
        let why = hq::serve_connection(conn, root).await;
        tracing::info!("connection from {peer:?} ended: {why}");
    }
}

/// The server's TLS configuration: from --cert/--key, or self-signed.
fn server_tls(args: &ServerArgs) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    let (chain, key) = match (&args.cert, &args.key) {
        (Some(cert), Some(key)) => (tls::load_certs(cert)?, tls::load_key(key)?),
        _ => {
            let (cert, key) = tls::self_signed(&SELF_SIGNED_NAMES)?;
            if let Some(out) = &args.cert_out {
                std::fs::write(out, tls::cert_pem(&cert))
                    .with_context(|| format!("writing {}", out.display()))?;
            }
            (vec![cert], key)
        }
    };
    let config = if args.no_zero_rtt {
        tls::server_config(&SERVED_ALPNS, chain, key)?
    } else {
        tls::server_config_0rtt(&SERVED_ALPNS, chain, key)?
    };
    Ok(tls::server_cert_compression(
        config,
        !args.no_cert_compression,
    ))
}

/// The `--advertise` addresses, checked: at most one per address family (the
/// preferred_address parameter has one slot each, RFC 9000 §18.2), a reachable IP, and a port
/// (one given, or that of the `--listen` address with the same IP).
pub fn advertised_addresses(
    advertise: &[SocketAddr],
    listen: &[SocketAddr],
) -> Result<Vec<SocketAddr>, UsageError> {
    let refuse =
        |addr: &SocketAddr, why: String| UsageError::new(format!("--advertise {addr}: {why}"));
    let mut out: Vec<SocketAddr> = Vec::new();
    for &addr in advertise {
        if let Some(other) = out.iter().find(|a| a.is_ipv4() == addr.is_ipv4()) {
            let family = if addr.is_ipv4() { "IPv4" } else { "IPv6" };
            return Err(refuse(
                &addr,
                format!("already advertising {other}; give at most one {family} address"),
            ));
        }
        if addr.ip().is_unspecified() {
            return Err(refuse(
                &addr,
                "clients cannot reach an unspecified address".into(),
            ));
        }
        let port = match addr.port() {
            0 => listen
                .iter()
                .find(|l| l.ip() == addr.ip() && l.port() != 0)
                .map(|l| l.port())
                .ok_or_else(|| {
                    refuse(
                        &addr,
                        "give a port (no --listen address with that IP and a port)".into(),
                    )
                })?,
            port => port,
        };
        out.push(SocketAddr::new(addr.ip(), port));
    }
    Ok(out)
}

/// Run `mpquic server` until Ctrl-C.
pub async fn run(args: ServerArgs) -> anyhow::Result<()> {
    // Key files first: a typo in a path must not cost a certificate generation or a bind.
    let keys = args.limits.keys()?;
    let advertised = advertised_addresses(&args.advertise, &args.listen)?;
    let tls = server_tls(&args)?;
    let transport = args.transport.transport(None)?;
    let (multipath, cc) = (transport.multipath, transport.congestion);
    let mut config = config::server(tls, transport);
    args.limits.apply(&mut config, &keys);
    for addr in &advertised {
        config.set_preferred_address(*addr);
    }
    let server = start_with(&args.listen, &args.root, config, keys.reset)?;
    for addr in server.endpoint.local_addrs() {
        crate::say(format_args!("listening on {addr}"));
    }
    for addr in &advertised {
        crate::say(format_args!("advertising {addr} (preferred_address)"));
    }
    crate::say(format_args!(
        "serving {} (ALPN h3 and hq-interop, multipath {}, cc {}, {}{})",
        server.root.display(),
        multipath_name(multipath),
        cc_name(cc),
        args.limits.describe(),
        if args.cert.is_some() {
            ""
        } else {
            ", self-signed certificate: clients need --insecure or --ca"
        }
    ));
    tokio::signal::ctrl_c()
        .await
        .context("waiting for Ctrl-C")?;
    crate::say("shutting down");
    server.endpoint.close(0, b"server shutting down");
    let _ = tokio::time::timeout(Duration::from_secs(2), server.endpoint.wait_idle()).await;
    Ok(())
}
