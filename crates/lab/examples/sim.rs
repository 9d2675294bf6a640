//! `mpquic sim` as a stand-alone example, until the CLI crate wires in
//! [`mpquic_lab::sim_command`]:
//! `cargo run --release -p mpquic-lab --example sim -- --path rate=20mbit,rtt=40ms --download 20MB`.

use clap::Parser;
use mpquic_lab::{sim_command, SimArgs};

/// Runs a simulated transfer and prints a summary.
#[derive(Debug, Parser)]
#[command(name = "sim")]
struct Cli {
    #[command(flatten)]
    args: SimArgs,
}

fn main() -> anyhow::Result<()> {
    sim_command(Cli::parse().args)
}
