//! The two implementations behind one interface: servers (run in the `serve` child process)
//! and clients. By default (`--tls same`) both use the same rustls configurations (ring, TLS
//! 1.3, no session tickets, the client accepting the server's self-signed certificate after
//! checking its signature), so that differences come from the QUIC stacks, not from TLS
//! settings; `--tls resume` adds session tickets to both, `--tls defaults` gives each stack its
//! own defaults.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use anyhow::{anyhow, bail, Context};
use mpquic::{tls, TransportConfig};

use crate::noq_client::NoqClients;
use crate::tickets::TicketStore;
use crate::workload::{chunk, decode_request, encode_request, verify, CHUNK};

/// ALPN of the load-test protocol (both implementations).
pub const ALPN: &[u8] = b"mpquic-loadtest";

/// Which stack runs the server and the clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Impl {
    Mpquic,
    Quinn,
}

impl Impl {
    pub fn name(self) -> &'static str {
        match self {
            Impl::Mpquic => "mpquic",
            Impl::Quinn => "quinn",
        }
    }
}

/// Which stack runs the clients (`--client-impl`; by default the server's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ClientImpl {
    Mpquic,
    Quinn,
    Noq,
}

impl ClientImpl {
    pub fn name(self) -> &'static str {
        match self {
            ClientImpl::Mpquic => "mpquic",
            ClientImpl::Quinn => "quinn",
            ClientImpl::Noq => "noq",
        }
    }
}

impl From<Impl> for ClientImpl {
    fn from(imp: Impl) -> Self {
        match imp {
            Impl::Mpquic => ClientImpl::Mpquic,
            Impl::Quinn => ClientImpl::Quinn,
        }
    }
}

/// Admission settings of the mpquic server (quinn's server keeps its own defaults).
#[derive(Debug, Clone, clap::Args)]
pub struct Limits {
    /// mpquic server: --max-connections (default: raised to 4 x the test's connections).
    #[arg(long, value_name = "N")]
    pub max_connections: Option<usize>,
    /// mpquic server: --max-handshakes (default: raised to 2 x the test's connections).
    #[arg(long, value_name = "N")]
    pub max_handshakes: Option<usize>,
    /// mpquic server: Retry policy, never | always | auto (auto: while more than half of
    /// max-handshakes are in progress).
    #[arg(long, value_name = "POLICY", default_value = "auto")]
    pub retry: String,
    /// mpquic server: who accepts each connection attempt: `all` (the endpoint accepts every
    /// attempt passing its limits and Retry policy at once, `Endpoint::set_accept_all`) or
    /// `decide` (each attempt goes to the application as an `Incoming` first, as quinn's
    /// server does).
    #[arg(long, value_enum, default_value = "all")]
    pub accept: AcceptChoice,
    /// TLS settings of both stacks: `same` (mpquic's rustls configurations for both, so that
    /// differences come from the QUIC stacks) or `defaults` (each stack as its users get it).
    #[arg(long, value_enum, default_value = "same")]
    pub tls: TlsChoice,
}

/// Who accepts the mpquic server's connection attempts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AcceptChoice {
    /// The endpoint, at once (`Endpoint::set_accept_all(true)`).
    All,
    /// The application, after `Endpoint::accept` handed it the attempt.
    Decide,
}

impl AcceptChoice {
    pub fn name(self) -> &'static str {
        match self {
            AcceptChoice::All => "all",
            AcceptChoice::Decide => "decide",
        }
    }
}

/// Which rustls configurations the two stacks use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TlsChoice {
    /// mpquic's configurations (`mpquic::tls`) on both stacks: the same cipher suite order, no
    /// session tickets.
    Same,
    /// Each stack's defaults: mpquic's `mpquic::tls`; for quinn, `quinn::ServerConfig::
    /// with_single_cert` and a client built with rustls' builder (its suite order, tickets and
    /// resumption as rustls and quinn set them).
    Defaults,
    /// mpquic's configurations with session tickets on both stacks (`tls::server_config_0rtt`,
    /// `tls::client_config_0rtt` with one ticket store per run): in the `handshakes` mode each
    /// connection waits for a ticket before it closes, so the handshakes after the first resume
    /// (no certificate, no signature: RFC 8446 §2.2).
    Resume,
}

impl TlsChoice {
    pub fn name(self) -> &'static str {
        match self {
            TlsChoice::Same => "same",
            TlsChoice::Defaults => "defaults",
            TlsChoice::Resume => "resume",
        }
    }
}

/// mpquic's server configuration; with `--tls resume` it issues session tickets.
fn server_tls(choice: TlsChoice) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    let (cert, key) = tls::self_signed(&["localhost"])?;
    Ok(match choice {
        TlsChoice::Resume => tls::server_config_0rtt(&[ALPN], vec![cert], key)?,
        TlsChoice::Same | TlsChoice::Defaults => tls::server_config(&[ALPN], vec![cert], key)?,
    })
}

/// mpquic's client configuration; with a ticket store it resumes sessions.
fn client_tls(tickets: Option<&Arc<TicketStore>>) -> anyhow::Result<Arc<rustls::ClientConfig>> {
    let trust = tls::ServerTrust::Insecure;
    Ok(match tickets {
        Some(store) => tls::client_config_0rtt(&[ALPN], trust, Some(store.clone()))?,
        None => tls::client_config(&[ALPN], trust)?,
    })
}

/// Run a server on 127.0.0.1:`port` until the process ends; `ready` gets its address.
pub async fn serve(
    imp: Impl,
    port: u16,
    limits: &Limits,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let bind = SocketAddr::from(([127, 0, 0, 1], port));
    match imp {
        Impl::Mpquic => serve_mpquic(bind, limits, ready).await,
        Impl::Quinn => serve_quinn(bind, limits.tls, ready).await,
    }
}

async fn serve_mpquic(
    bind: SocketAddr,
    limits: &Limits,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let mut config = mpquic::config::server(server_tls(limits.tls)?, TransportConfig::default());
    if let Some(n) = limits.max_connections {
        config.max_connections = n;
    }
    if let Some(n) = limits.max_handshakes {
        config.max_handshakes = n;
    }
    config.retry = match limits.retry.parse().map_err(|e: String| anyhow!(e))? {
        // As `mpquic server --retry auto` does: the threshold follows the handshake limit.
        mpquic::RetryPolicy::UnderLoad { .. } => mpquic::RetryPolicy::UnderLoad {
            handshakes: (config.max_handshakes / 2).max(1),
        },
        fixed => fixed,
    };
    let endpoint = mpquic::Endpoint::server(config, &[bind])?;
    endpoint.set_accept_all(limits.accept == AcceptChoice::All);
    ready(endpoint.local_addr());
    while let Some(incoming) = endpoint.accept().await {
        tokio::spawn(async move {
            let Ok(conn) = incoming.await else { return };
            while let Ok((send, recv)) = conn.accept_bi().await {
                tokio::spawn(answer_mpquic(send, recv));
            }
        });
    }
    bail!("the mpquic endpoint stopped accepting")
}

/// Read the request, send the bytes, wait until they are acknowledged.
async fn answer_mpquic(
    mut send: mpquic::SendStream,
    mut recv: mpquic::RecvStream,
) -> anyhow::Result<()> {
    let size = decode_request(&recv.read_to_end(64).await?)?;
    let mut offset = 0;
    while offset < size {
        let piece = chunk(offset, (size - offset).min(CHUNK));
        send.write_all(&piece).await?;
        offset += piece.len() as u64;
    }
    send.finish()?;
    send.finished().await?;
    Ok(())
}

fn quinn_server_config(tls: TlsChoice) -> anyhow::Result<quinn::ServerConfig> {
    match tls {
        TlsChoice::Same | TlsChoice::Resume => {
            let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(server_tls(tls)?)?;
            Ok(quinn::ServerConfig::with_crypto(Arc::new(crypto)))
        }
        TlsChoice::Defaults => {
            let (cert, key) = tls::self_signed(&["localhost"])?;
            let mut config = rustls::ServerConfig::builder_with_provider(Arc::new(
                rustls::crypto::ring::default_provider(),
            ))
            .with_protocol_versions(&[&rustls::version::TLS13])?
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)?;
            config.alpn_protocols = vec![ALPN.to_vec()];
            // What `quinn::ServerConfig::with_single_cert` builds, plus the ALPN this test needs.
            config.max_early_data_size = u32::MAX;
            let crypto = quinn::crypto::rustls::QuicServerConfig::try_from(config)?;
            Ok(quinn::ServerConfig::with_crypto(Arc::new(crypto)))
        }
    }
}

/// A quinn client configuration: mpquic's rustls configuration, or one from rustls' builder
/// with its defaults (suite order, resumption) and the same certificate check.
fn quinn_client_config(
    tls: TlsChoice,
    tickets: Option<&Arc<TicketStore>>,
) -> anyhow::Result<quinn::ClientConfig> {
    let rustls_config = match tls {
        TlsChoice::Same | TlsChoice::Resume => client_tls(tickets)?,
        TlsChoice::Defaults => {
            let provider = Arc::new(rustls::crypto::ring::default_provider());
            let mut config = rustls::ClientConfig::builder_with_provider(provider.clone())
                .with_protocol_versions(&[&rustls::version::TLS13])?
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(tls::InsecureVerifier::new(provider)))
                .with_no_client_auth();
            config.alpn_protocols = vec![ALPN.to_vec()];
            // As quinn's own client configurations (`QuicClientConfig::inner`) set it.
            config.enable_early_data = true;
            Arc::new(config)
        }
    };
    let crypto = quinn::crypto::rustls::QuicClientConfig::try_from(rustls_config)?;
    Ok(quinn::ClientConfig::new(Arc::new(crypto)))
}

async fn serve_quinn(
    bind: SocketAddr,
    tls: TlsChoice,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let endpoint = quinn::Endpoint::server(quinn_server_config(tls)?, bind)?;
    ready(endpoint.local_addr()?);
    while let Some(incoming) = endpoint.accept().await {
        tokio::spawn(async move {
            let Ok(conn) = incoming.await else { return };
            while let Ok((send, recv)) = conn.accept_bi().await {
                tokio::spawn(answer_quinn(send, recv));
            }
        });
    }
    bail!("the quinn endpoint stopped accepting")
}

async fn answer_quinn(
    mut send: quinn::SendStream,
    mut recv: quinn::RecvStream,
) -> anyhow::Result<()> {
    let size = decode_request(&recv.read_to_end(64).await?)?;
    let mut offset = 0;
    while offset < size {
        let piece = chunk(offset, (size - offset).min(CHUNK));
        send.write_all(&piece).await?;
        offset += piece.len() as u64;
    }
    send.finish()?;
    send.stopped().await?;
    Ok(())
}

/// Client endpoints of one implementation; connection `i` uses endpoint `i % count`.
pub enum Clients {
    Mpquic {
        endpoints: Vec<mpquic::Endpoint>,
        config: mpquic::ClientConfig,
        /// Where each connection opens a path from, besides its first (`--paths`).
        extra_locals: Vec<IpAddr>,
    },
    Quinn {
        endpoints: Vec<quinn::Endpoint>,
    },
    Noq(NoqClients),
}

/// One client connection, handshake done.
pub enum Conn {
    Mpquic(mpquic::Connection),
    Quinn(quinn::Connection),
    Noq(noq::Connection),
}

impl Clients {
    /// `count` client endpoints on 127.0.0.1 (one UDP socket each); with `--tls resume` their
    /// connections keep session tickets in `tickets`.
    pub fn new(
        imp: ClientImpl,
        count: usize,
        paths: usize,
        tls: TlsChoice,
        tickets: Option<&Arc<TicketStore>>,
    ) -> anyhow::Result<Self> {
        let bind = SocketAddr::from(([127, 0, 0, 1], 0));
        // 127.0.0.2, 127.0.0.3, ...: other loopback addresses stand for other interfaces.
        let extra_locals: Vec<IpAddr> = (2..=paths)
            .map(|k| IpAddr::from([127, 0, 0, k as u8]))
            .collect();
        let binds: Vec<SocketAddr> = std::iter::once(bind)
            .chain(extra_locals.iter().map(|&ip| SocketAddr::new(ip, 0)))
            .collect();
        Ok(match imp {
            ClientImpl::Mpquic => Clients::Mpquic {
                endpoints: (0..count)
                    .map(|_| mpquic::Endpoint::client(&binds))
                    .collect::<Result<_, _>>()?,
                config: mpquic::config::client(client_tls(tickets)?, TransportConfig::default()),
                extra_locals,
            },
            ClientImpl::Noq => {
                Clients::Noq(NoqClients::new(count, client_tls(tickets)?, extra_locals)?)
            }
            ClientImpl::Quinn => {
                let config = quinn_client_config(tls, tickets)?;
                let mut endpoints = Vec::with_capacity(count);
                for _ in 0..count {
                    let mut ep = quinn::Endpoint::client(bind)?;
                    ep.set_default_client_config(config.clone());
                    endpoints.push(ep);
                }
                Clients::Quinn { endpoints }
            }
        })
    }

    /// Connect (complete the handshake) to `server` from endpoint `i % count`.
    pub async fn connect(&self, i: usize, server: SocketAddr) -> anyhow::Result<Conn> {
        match self {
            Clients::Mpquic {
                endpoints,
                config,
                extra_locals,
            } => {
                let ep = &endpoints[i % endpoints.len()];
                let conn = ep
                    .connect_with(config.clone(), server, "localhost")?
                    .await?;
                for &local in extra_locals {
                    conn.open_path(local, None, mpquic::PathStatus::Available)
                        .await
                        .with_context(|| format!("path from {local}"))?;
                }
                Ok(Conn::Mpquic(conn))
            }
            Clients::Quinn { endpoints } => {
                let ep = &endpoints[i % endpoints.len()];
                Ok(Conn::Quinn(ep.connect(server, "localhost")?.await?))
            }
            Clients::Noq(noq) => Ok(Conn::Noq(noq.connect(i, server).await?)),
        }
    }

    /// Wait until every connection has drained (bounded by the caller).
    pub async fn wait_idle(&self) {
        match self {
            Clients::Mpquic { endpoints, .. } => {
                for ep in endpoints {
                    ep.wait_idle().await;
                }
            }
            Clients::Quinn { endpoints } => {
                for ep in endpoints {
                    ep.wait_idle().await;
                }
            }
            Clients::Noq(noq) => noq.wait_idle().await,
        }
    }
}

impl Conn {
    /// Ask for `size` bytes on a new bidirectional stream and check them byte for byte.
    pub async fn download(&self, size: u64) -> anyhow::Result<()> {
        let limit = usize::try_from(size + 1).context("size too large")?;
        let body = match self {
            Conn::Mpquic(c) => {
                let (mut send, mut recv) = c.open_bi().await?;
                send.write_all(&encode_request(size)).await?;
                send.finish()?;
                recv.read_to_end(limit).await?
            }
            Conn::Quinn(c) => {
                let (mut send, mut recv) = c.open_bi().await?;
                send.write_all(&encode_request(size)).await?;
                send.finish()?;
                recv.read_to_end(limit).await?
            }
            Conn::Noq(c) => crate::noq_client::download(c, size, limit).await?,
        };
        verify(&body, size)
    }

    /// Close with code 0 (the peer sees an application close).
    pub fn close(&self) {
        match self {
            Conn::Mpquic(c) => c.close(0, b"done"),
            Conn::Quinn(c) => c.close(0u32.into(), b"done"),
            Conn::Noq(c) => c.close(0u32.into(), b"done"),
        }
    }
}
