//! `mpquic demo`: a server and a client in one process over loopback; downloads a generated
//! file, prints the summary and checks the bytes.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Args;
use mpquic::tls;

use crate::client::{Download, Target};
use crate::opts::{AppProtocol, TransportArgs};
use crate::report::Summary;
use crate::units::{parse_duration, parse_size};

/// Arguments of `mpquic demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Size of the generated file (e.g. 10MB, 512KiB).
    #[arg(long, value_name = "SIZE", default_value = "10MB", value_parser = parse_size)]
    pub size: u64,
    /// Number of paths: the client uses local addresses 127.0.0.1, 127.0.0.2, ...
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=8))]
    pub paths: u8,
    /// Application protocol of the download: h3 (HTTP/3) or hq-interop (HTTP/0.9).
    #[arg(long, value_name = "ALPN", value_enum, default_value = "h3")]
    pub alpn: AppProtocol,
    #[command(flatten)]
    pub transport: TransportArgs,
    /// Give up when the handshake, or the wait for more data, takes longer than this.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    pub timeout: Duration,
    /// Also write the summary as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<std::path::PathBuf>,
    /// No progress bar.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Deterministic file contents.
fn generate(len: u64) -> Vec<u8> {
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 56) as u8
        })
        .collect()
}

/// Run `mpquic demo`.
pub async fn run(args: DemoArgs) -> anyhow::Result<()> {
    crate::check_outputs(&[("--json", &args.json)])?;
    let summary = demo(&args).await?;
    summary.print();
    crate::say("verified: the downloaded file matches the served one byte for byte");
    if let Some(path) = &args.json {
        summary.write_json(path)?;
    }
    Ok(())
}

async fn demo(args: &DemoArgs) -> anyhow::Result<Summary> {
    let size = usize::try_from(args.size).context("--size too large for this machine")?;
    let dir = tempfile::tempdir().context("creating a temporary directory")?;
    let root = dir.path().join("root");
    std::fs::create_dir(&root).context("creating the served directory")?;
    let data = generate(size as u64);
    std::fs::write(root.join("file.bin"), &data).context("writing the generated file")?;
    let (cert, key) = tls::self_signed(&["localhost"])?;
    let server_tls = tls::server_config(&crate::server::SERVED_ALPNS, vec![cert.clone()], key)?;
    let listen: SocketAddr = "127.0.0.1:0".parse()?;
    let server = crate::server::start(
        &[listen],
        &root,
        server_tls,
        args.transport.transport(None)?,
    )?;
    let remote = server.endpoint.local_addr();
    let output = dir.path().join("downloaded.bin");
    let locals: Vec<SocketAddr> = (1..=args.paths)
        .map(|i| SocketAddr::from(([127, 0, 0, i], 0)))
        .collect();
    let download = Download {
        target: Target::parse(&format!("https://localhost:{}/file.bin", remote.port()))
            .map_err(anyhow::Error::msg)?,
        remote,
        locals,
        path_remotes: Vec::new(),
        path_fallbacks: Vec::new(),
        tls: tls::client_config(&[args.alpn.alpn()], tls::ServerTrust::Roots(vec![cert]))?,
        protocol: args.alpn,
        transport: args.transport.transport(Some(args.timeout))?,
        timeout: args.timeout,
        output: Some(output.clone()),
        progress: !args.quiet && std::io::IsTerminal::is_terminal(&std::io::stdout()),
        expected: Some(args.size),
        zero_rtt: false,
        race: false,
        migrate: None,
        to_preferred_address: false,
    };
    let summary = download.run().await?;
    server.endpoint.close(0, b"demo done");
    let got = std::fs::read(&output).context("reading the downloaded file")?;
    if got != data {
        bail!(
            "the downloaded file differs from the served one ({} bytes instead of {})",
            got.len(),
            data.len()
        );
    }
    Ok(summary)
}
