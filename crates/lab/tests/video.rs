//! The video workload and the XLINK claims (issue 8).

use mpquic_lab::video::{xlink_scenario, XlinkScheme};
use mpquic_lab::{run, RunResult};

fn row(label: &str, r: &RunResult) -> String {
    let v = r.video.as_ref().expect("video result");
    format!(
        "{label:12} done={} err={:?} rebuf={:.4} stalls={} ff={:?} p50={:?} p95={:?} p99={:?} reinj={:.4} low={:.4} wall={:.1}",
        r.completed, r.error, v.rebuffer_rate, v.stall_count, v.first_frame_s,
        v.chunk_completion_p50_ms, v.chunk_completion_p95_ms, v.chunk_completion_p99_ms,
        v.reinjected_share, v.low_buffer_share, r.sim_wall_time_s
    )
}

#[test]
#[ignore = "exploration"]
fn explore() {
    let chunks: u64 = std::env::var("CHUNKS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    for seed in 1..=3 {
        let van = run(&xlink_scenario(seed, chunks, XlinkScheme::Vanilla)).unwrap();
        let ptl: Vec<f64> = van.video.as_ref().unwrap().play_time_left_ms().collect();
        println!("{}", row(&format!("s{seed} vanilla"), &van));
        for (label, scheme) in [
            ("single", XlinkScheme::SinglePath),
            ("always", XlinkScheme::Always),
            ("qoe95,80", XlinkScheme::qoe_at(95.0, 80.0, &ptl)),
        ] {
            let r = run(&xlink_scenario(seed, chunks, scheme)).unwrap();
            println!("{} {:?}", row(&format!("s{seed} {label}"), &r), scheme);
        }
    }
}
