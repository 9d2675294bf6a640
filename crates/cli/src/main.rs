//! `mpquic`: the command-line tool of the mpquic multipath QUIC stack. A thin dispatcher: each
//! subcommand lives in its own module with its own clap `Args`.

mod client;
mod demo;
mod emulate;
mod exit;
mod keys;
mod opts;
mod report;
mod server;
mod units;

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Multipath QUIC: file server, client and demo over UDP, simulator, emulator and lab.
#[derive(Debug, Parser)]
#[command(
    name = "mpquic",
    version,
    about,
    after_help = "Exit status: 0 on success, 1 when the work failed (a transfer, a simulated \
                  run), 2 when the input was refused (arguments, key or scenario files, \
                  output paths)."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Serve a directory over HTTP/3 (ALPN h3) and HTTP/0.9 (ALPN hq-interop).
    Server(server::ServerArgs),
    /// Download a file and summarize the transfer.
    Client(client::ClientArgs),
    /// Write a new random 32-byte key (hex, mode 0600) for the server's --token-key/--reset-key.
    Keygen(keys::KeygenArgs),
    /// Serve a generated file and download it in-process over loopback, then verify it.
    Demo(demo::DemoArgs),
    /// Run one scenario in the deterministic network simulator (virtual time).
    Sim(mpquic_lab::cli::SimArgs),
    /// Relay UDP between clients and a server over emulated paths (the simulator's link models
    /// in real time; no root needed).
    Emulate(emulate::EmulateArgs),
    /// Experiment suites: run them in parallel and build tables, plots and an HTML report.
    Lab(mpquic_lab::labcmd::LabArgs),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // An invalid value (a bad `--path`, size, duration...) is said in its first line; the
        // hint after it is noise in scripts. Other errors keep clap's usage text.
        Err(e) if e.kind() == clap::error::ErrorKind::ValueValidation => {
            let text = e.to_string();
            eprintln!("{}", text.lines().next().unwrap_or("error: invalid value"));
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    init_tracing();
    let result = match cli.command {
        Command::Server(args) => run_async(server::run(args)),
        Command::Client(args) => run_async(client::run(args)),
        Command::Keygen(args) => keys::keygen(&args),
        Command::Demo(args) => run_async(demo::run(args)),
        // Simulations are synchronous and run in virtual time: no async runtime.
        Command::Sim(args) => mpquic_lab::cli::sim_command(args),
        Command::Emulate(args) => run_async(emulate::run(args)),
        Command::Lab(args) => mpquic_lab::labcmd::lab_command(args),
    };
    exit_with(result)
}

/// Run one async subcommand on a fresh multi-threaded tokio runtime.
fn run_async(job: impl std::future::Future<Output = anyhow::Result<()>>) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| anyhow::Error::new(e).context("starting the async runtime"))?;
    let result = runtime.block_on(job);
    // Do not wait for tasks still running (servers' connections): the work is done.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    result
}

fn exit_with(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => exit::fail(&e),
    }
}

/// Check that every given output file can be written, before any work starts.
pub(crate) fn check_outputs(files: &[(&str, &Option<std::path::PathBuf>)]) -> anyhow::Result<()> {
    for (option, file) in files {
        if let Some(path) = file {
            mpquic_lab::output::check_writable(option, path)?;
        }
    }
    Ok(())
}

/// Print a line on stdout; a closed stdout (a pipe whose reader went away) is not an error
/// worth a panic, unlike with `println!`.
pub(crate) fn say(line: impl std::fmt::Display) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

/// A `warning: ` line on stderr (errors are ignored, as in [`say`]).
pub(crate) fn warn(line: impl std::fmt::Display) {
    let _ = writeln!(std::io::stderr(), "warning: {line}");
}

/// Logs on stderr, filtered by RUST_LOG (warnings and errors by default).
fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Colour codes only for a terminal: piped or redirected logs stay plain text.
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .try_init();
}
