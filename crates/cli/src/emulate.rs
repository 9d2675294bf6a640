//! `mpquic emulate`: a user-space UDP relay whose paths follow the simulator's link models in
//! real time (see the `mpquic-emulate` crate), so any UDP application, ours or not, can be run
//! over the paths of a `mpquic sim` scenario.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use mpquic_emulate::{EmulateError, EmulatedPath, Emulator, EmulatorConfig};

use crate::exit::UsageError;
use crate::units::parse_duration;

/// Arguments of `mpquic emulate`.
#[derive(Debug, Args)]
#[command(
    after_help = "Example: two paths for a client sending from 127.0.0.2 and 127.0.0.3:\n  \
    mpquic emulate --listen 127.0.0.1:5000 --server 127.0.0.1:4433 \\\n    \
    --path from=127.0.0.2,rate=20mbit,delay=10ms --path from=127.0.0.3,rate=15mbit,delay=20ms\n\
    then `mpquic client https://127.0.0.1:5000/FILE --path 127.0.0.2:0 --path 127.0.0.3:0 ...`"
)]
pub struct EmulateArgs {
    /// Address clients send to.
    #[arg(long, value_name = "ADDR")]
    pub listen: SocketAddr,
    /// Address datagrams are relayed to (one relay socket per client address).
    #[arg(long, value_name = "ADDR")]
    pub server: SocketAddr,
    /// A path: `from=IP` (the client source address that takes it; omitted on at most one path,
    /// which then takes every other source) and a spec in the grammar of `mpquic sim --path`,
    /// e.g. "from=127.0.0.2,rate=20mbit,delay=10ms,queue=1bdp,loss=1%,down_at=3s". Unless
    /// it sets `mtu=`, a path carries at most 1472 bytes of UDP payload (a 1500-byte IPv4
    /// packet; `mtu=inf` lifts it).
    #[arg(long = "path", value_name = "SPEC", required = true)]
    pub paths: Vec<String>,
    /// Seed of the links' loss and jitter (path i's links draw what the simulator's links 2i
    /// and 2i+1 draw with the same seed).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub seed: u64,
    /// Stop after this long (default: at Ctrl-C).
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub duration: Option<Duration>,
    /// Also write the final report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// The emulator's configuration from the arguments; every problem is an input error.
fn config(args: &EmulateArgs) -> Result<EmulatorConfig, UsageError> {
    let paths = args
        .paths
        .iter()
        .enumerate()
        .map(|(i, p)| EmulatedPath::parse(p, i + 1))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| UsageError::new(e.to_string()))?;
    Ok(EmulatorConfig {
        listen: args.listen,
        server: args.server,
        paths,
        seed: args.seed,
    })
}

fn start_error(e: EmulateError) -> anyhow::Error {
    if e.is_input() {
        UsageError::new(e.to_string()).into()
    } else {
        anyhow::Error::new(e)
    }
}

/// Run `mpquic emulate` until Ctrl-C or `--duration`.
pub async fn run(args: EmulateArgs) -> anyhow::Result<()> {
    crate::check_outputs(&[("--json", &args.json)])?;
    let config = config(&args)?;
    let emulator = Emulator::start(config).map_err(start_error)?;
    crate::say(format_args!(
        "emulating {} path(s): clients send to {}, relayed to {}",
        args.paths.len(),
        emulator.listen_addr(),
        args.server
    ));
    match args.duration {
        Some(d) => tokio::select! {
            () = tokio::time::sleep(d) => {}
            r = tokio::signal::ctrl_c() => r.context("waiting for Ctrl-C")?,
        },
        None => tokio::signal::ctrl_c()
            .await
            .context("waiting for Ctrl-C")?,
    }
    let report = emulator.stop()?;
    crate::say(&report);
    if let Some(path) = &args.json {
        let json = serde_json::to_string_pretty(&report).context("serializing the report")?;
        std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}
