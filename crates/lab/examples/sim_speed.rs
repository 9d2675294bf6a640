//! Simulation speed figure (issue 3): a 50 MB single-path download at
//! 100 Mbit/s, 40 ms RTT, BDP-sized buffer, Cubic. Prints simulated seconds
//! per wall-clock second and events per wall-clock second.
//!
//! Run in release mode:
//! `cargo run --release -p mpquic-lab --example sim_speed [-- SIZE [RUNS]]`
//! (the wall clock is read only to report speed).

use mpquic_lab::{run, ByteSize, Scenario, Workload};
use mpquic_netsim::PathSpec;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let size: ByteSize = match args.next() {
        Some(s) => s.parse().map_err(anyhow::Error::msg)?,
        None => ByteSize(50_000_000),
    };
    let runs: usize = args.next().map_or(Ok(3), |s| s.parse())?;
    let path = PathSpec::parse("rate=100mbit,rtt=40ms,queue=1bdp")?;
    let mut scenario = Scenario::new(vec![path], Workload::Download(size));
    scenario.seed = 1;
    scenario.time_limit = "120s".parse().map_err(anyhow::Error::msg)?;
    println!("{size} download, rate=100mbit,rtt=40ms,queue=1bdp, cubic, {runs} run(s)");
    for i in 0..runs {
        let r = run(&scenario)?;
        anyhow::ensure!(r.completed, "run {i} did not complete: {:?}", r.error);
        println!(
            "run {i}: {:.3} s simulated in {:.3} s wall: {:.1} simulated s per wall s, {:.0} events per wall s ({} events), goodput {:.2} Mbit/s",
            r.sim_time_s,
            r.sim_wall_time_s,
            r.sim_time_s / r.sim_wall_time_s,
            r.events as f64 / r.sim_wall_time_s,
            r.events,
            r.goodput_mbps
        );
    }
    Ok(())
}
