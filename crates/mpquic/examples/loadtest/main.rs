//! Load test over loopback: many clients against one server, with mpquic or quinn on both
//! sides (`--impl`), so that the same workload can be compared. See docs/LOAD.md.
//!
//! ```text
//! cargo run --release -p mpquic --example loadtest -- download   [--clients 1000] [--size 100KB]
//! cargo run --release -p mpquic --example loadtest -- idle       [--connections 1000] [--hold 3]
//! cargo run --release -p mpquic --example loadtest -- handshakes [--count 500] [--concurrency 8]
//!     common options: --impl mpquic|quinn  --timeout SECS  --client-endpoints N
//!                     --max-connections N --max-handshakes N --retry never|always|auto (mpquic)
//! ```
//!
//! The server runs as a child process of the same executable (`loadtest serve`), so that its
//! resident memory (VmRSS, VmHWM in /proc/PID/status) is not mixed with the clients'.
//! Everything is bounded: counts, a global time limit (`--timeout`, default 120 s; work not
//! done by then counts as failed), addresses 127.0.0.1 only. The exit status is non-zero when
//! anything failed.

mod measure;
mod modes;
mod noq_client;
mod peers;
mod tickets;
mod workload;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use peers::{ClientImpl, Impl, Limits};

#[derive(Debug, Parser)]
#[command(name = "loadtest", about = "Loopback load test of mpquic or quinn")]
struct Cli {
    #[command(subcommand)]
    mode: Mode,
}

#[derive(Debug, Subcommand)]
enum Mode {
    /// N concurrent clients each download SIZE bytes over one stream (byte-exact check).
    Download(modes::DownloadArgs),
    /// Hold N idle connections; report the server's memory per connection.
    Idle(modes::IdleArgs),
    /// Handshakes per second, one at a time and with C concurrent clients.
    Handshakes(modes::HandshakeArgs),
    /// The server child process (started by the other modes).
    Serve(ServeArgs),
}

/// Options every client-side mode has.
#[derive(Debug, Clone, Args)]
pub struct Common {
    /// Implementation of both the server and the clients.
    #[arg(long = "impl", value_enum, default_value = "mpquic")]
    pub imp: Impl,
    /// Implementation of the clients, if not the server's: mpquic, quinn or noq (noq 1.4, a
    /// quinn fork with RFC 10069 multipath; as a client only), to put another stack's crowd
    /// against the server.
    #[arg(long, value_enum, value_name = "IMPL")]
    pub client_impl: Option<ClientImpl>,
    /// Global time limit in seconds; whatever is not done by then counts as failed.
    #[arg(long, value_name = "SECS", default_value_t = 120)]
    pub timeout: u64,
    /// Client endpoints (one UDP socket each) the connections are spread over.
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub client_endpoints: usize,
    /// mpquic: paths per connection. With N > 1 each client endpoint also binds 127.0.0.2 ..
    /// 127.0.0.N, and each connection opens (and waits for the validation of) a path from
    /// each of them to the server before its work (RFC 10069 multipath, the default `auto`).
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub paths: usize,
    /// UDP port of the server on 127.0.0.1 (0: any free port).
    #[arg(long, value_name = "PORT", default_value_t = 0)]
    pub server_port: u16,
    /// The clients send to this loopback address instead of the server's: a relay in front of
    /// the server, e.g. `mpquic emulate --listen 127.0.0.1:14500 --server 127.0.0.1:PORT --path
    /// SPEC` with `--server-port PORT` here, to put both stacks behind the same emulated path.
    #[arg(long, value_name = "ADDR", value_parser = parse_loopback)]
    pub via: Option<std::net::SocketAddr>,
    #[command(flatten)]
    pub limits: Limits,
}

/// A socket address on a loopback interface (the load test never leaves the machine).
fn parse_loopback(s: &str) -> Result<std::net::SocketAddr, String> {
    let addr: std::net::SocketAddr = s.parse().map_err(|e| format!("{e}"))?;
    if addr.ip().is_loopback() {
        Ok(addr)
    } else {
        Err(format!("{addr} is not a loopback address"))
    }
}

#[derive(Debug, Args)]
struct ServeArgs {
    #[arg(long = "impl", value_enum)]
    imp: Impl,
    /// UDP port on 127.0.0.1 (0: any free port; the address is printed first).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Exit after this many seconds at the latest.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    lifetime: u64,
    #[command(flatten)]
    limits: Limits,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.mode {
        Mode::Serve(args) => serve(args).map(|()| true),
        Mode::Download(args) => modes::block_on(&args.common, modes::download(&args)),
        Mode::Idle(args) => modes::block_on(&args.common, modes::idle(&args)),
        Mode::Handshakes(args) => modes::block_on(&args.common, modes::handshakes(&args)),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("error: some of the work failed (see above)");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// The server child: serve until our parent closes our stdin or the lifetime is over.
fn serve(args: ServeArgs) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let result = runtime.block_on(async {
        let parent_gone = tokio::task::spawn_blocking(|| {
            let _ = std::io::copy(&mut std::io::stdin(), &mut std::io::sink());
        });
        let ready = |addr| println!("listening {addr}");
        tokio::select! {
            r = peers::serve(args.imp, args.port, &args.limits, ready) => r,
            _ = parent_gone => Ok(()),
            () = tokio::time::sleep(Duration::from_secs(args.lifetime)) => Ok(()),
        }
    });
    // The stdin reader is a blocking thread the runtime would wait for.
    runtime.shutdown_background();
    result
}
