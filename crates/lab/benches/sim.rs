//! The simulator scenarios of docs/PERFORMANCE.md ("Simulator speed") as criterion benchmarks:
//! a download over one 100 Mbit/s, 40 ms RTT path with a BDP queue (Cubic), and over two paths
//! (100 + 50 Mbit/s, MPNS), each with real and with simulation-only 1-RTT protection. One
//! iteration is one whole simulated run (certificates, setup and the simulation loop), the same
//! work as `mpquic sim ... --seed 1` (50 MB, a fifth of a second to a quarter per run in a release
//! build, so ten samples take a few seconds). Run with `cargo bench -p mpquic-lab --bench sim`.

use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use mpquic_lab::{run, ByteSize, CryptoMode, Scenario, Workload};
use mpquic_netsim::PathSpec;
use mpquic_proto::MultipathMode;

/// Download size of every scenario.
const SIZE: u64 = 50_000_000;

fn scenario(paths: &[&str], crypto: CryptoMode) -> Scenario {
    let paths = paths
        .iter()
        .map(|p| PathSpec::parse(p).expect("path spec"))
        .collect();
    let mut scenario = Scenario::new(paths, Workload::Download(ByteSize(SIZE)));
    scenario.seed = 1;
    scenario.time_limit = "120s".parse().expect("time limit");
    scenario.transport.crypto = crypto;
    scenario
}

fn bench(c: &mut Criterion) {
    let one = ["rate=100mbit,rtt=40ms,queue=1bdp"];
    let two = [
        "rate=100mbit,rtt=40ms,queue=1bdp",
        "rate=50mbit,rtt=60ms,queue=1bdp",
    ];
    let mut group = c.benchmark_group("sim_50MB");
    group
        .throughput(Throughput::Bytes(SIZE))
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1));
    for (name, paths, multipath) in [
        ("1path", &one[..], None),
        ("2paths_mpns", &two[..], Some(MultipathMode::Mpns)),
    ] {
        for (crypto_name, crypto) in [("real", CryptoMode::Real), ("sim", CryptoMode::Sim)] {
            let mut s = scenario(paths, crypto);
            if let Some(mode) = multipath {
                s.transport.config.multipath = mode;
            }
            // The run must be the scenario of the doc: a failed or truncated download would
            // time something else.
            let check = run(&s).expect("run");
            assert!(check.completed, "{name}: {:?}", check.error);
            let virtual_s = check.sim_time_s;
            group.bench_function(format!("{name}/{crypto_name}_crypto"), |b| {
                b.iter(|| {
                    let r = run(&s).expect("run");
                    assert!(r.completed);
                    r.events
                })
            });
            println!("{name}/{crypto_name}_crypto: {virtual_s:.3} s of virtual time per run");
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
