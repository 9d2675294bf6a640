//! `mpquic server`: serve a directory over HTTP/0.9 (`hq-interop`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use mpquic::{config, hq, tls, Endpoint, TransportConfig};

use crate::opts::{cc_name, multipath_name, TransportArgs};

/// Names the generated certificate is valid for.
const SELF_SIGNED_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// Arguments of `mpquic server`.
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// Address to listen on; repeat for several sockets (e.g. one per interface).
    #[arg(long, value_name = "ADDR", required = true)]
    pub listen: Vec<SocketAddr>,
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
    #[command(flatten)]
    pub transport: TransportArgs,
}

/// A running server.
pub struct Server {
    pub endpoint: Endpoint,
    pub root: Arc<PathBuf>,
}

/// Bind the sockets and start serving `root` (which must be a directory).
pub fn start(
    listen: &[SocketAddr],
    root: &std::path::Path,
    tls: Arc<rustls::ServerConfig>,
    transport: TransportConfig,
) -> anyhow::Result<Server> {
    let root = root
        .canonicalize()
        .with_context(|| format!("root directory {}", root.display()))?;
    if !root.is_dir() {
        bail!("root {} is not a directory", root.display());
    }
    let root = Arc::new(root);
    let endpoint =
        Endpoint::server(config::server(tls, transport), listen).context("starting the server")?;
    let ep = endpoint.clone();
    let served = root.clone();
    tokio::spawn(async move {
        while let Some(conn) = ep.accept().await {
            let root = served.clone();
            tokio::spawn(async move {
                let peer = conn.remote_address();
                let why = hq::serve_connection(conn, root).await;
                tracing::info!("connection from {peer:?} ended: {why}");
            });
        }
    });
    Ok(Server { endpoint, root })
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
    Ok(tls::server_config(&[hq::ALPN], chain, key)?)
}

/// Run `mpquic server` until Ctrl-C.
pub async fn run(args: ServerArgs) -> anyhow::Result<()> {
    let tls = server_tls(&args)?;
    let server = start(
        &args.listen,
        &args.root,
        tls,
        args.transport.transport(None),
    )?;
    for addr in server.endpoint.local_addrs() {
        crate::say(format_args!("listening on {addr}"));
    }
    crate::say(format_args!(
        "serving {} (ALPN hq-interop, multipath {}, cc {}{})",
        server.root.display(),
        multipath_name(args.transport.multipath),
        cc_name(args.transport.cc),
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
