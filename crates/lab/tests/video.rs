//! The video workload (player model, chunk delivery under re-injection)
//! and the XLINK claims of issue 8, measured on a small trace set.

use std::sync::OnceLock;

use mpquic_lab::suites::xlink::QUICK_TRACES;
use mpquic_lab::video::{
    percentile, xlink_scenario, xlink_traces, VideoResult, VideoSpec, XlinkScheme, XLINK_CHUNKS,
};
use mpquic_lab::{run, RunResult, Scenario, Workload};
use mpquic_netsim::PathSpec;
use mpquic_proto::reinjection::ReinjectionMode;
use mpquic_proto::MultipathMode;

/// Trace seeds of the claim tests: the `xlink` suite's quick set at its
/// default seed (1), i.e. ten generated Wi-Fi/LTE trace pairs 101..=110.
fn traces() -> Vec<u64> {
    xlink_traces(1, QUICK_TRACES)
}

fn video_scenario(paths: &[&str], spec: VideoSpec, seed: u64) -> Scenario {
    let specs = paths.iter().map(|p| PathSpec::parse(p).unwrap()).collect();
    let mut s = Scenario::new(specs, Workload::Video(spec));
    s.seed = seed;
    s
}

fn video(r: &RunResult) -> &VideoResult {
    r.video.as_ref().expect("a video run has a video section")
}

fn small_video(bitrate_kbps: u64, chunks: u64) -> VideoSpec {
    VideoSpec {
        bitrate_kbps,
        chunks,
        buffer_target_ms: 3_000,
        startup_ms: 1_000,
        ..VideoSpec::default()
    }
}

#[test]
fn fat_link_never_stalls() {
    let s = video_scenario(&["rate=100mbit,rtt=20ms"], small_video(4_000, 6), 1);
    let r = run(&s).unwrap();
    assert!(r.completed, "{:?}", r.error);
    let v = video(&r);
    assert!(v.ended);
    assert_eq!(v.stall_count, 0, "{:?}", v.stalls);
    assert_eq!(v.rebuffer_rate, 0.0);
    assert_eq!(v.chunks_completed, 6);
    assert!(v.first_frame_s.unwrap() < 0.2, "{:?}", v.first_frame_s);
    // Playback starts after 1 s of content and lasts 6 s without stalls.
    let end = r.completion_time_s.unwrap();
    let start = v.playback_start_s.unwrap();
    assert!((end - start - 6.0).abs() < 0.01, "start {start}, end {end}");
    assert!(!v.buffer.is_empty());
    // The player keeps about the target buffered, never far above it.
    let max = v.play_time_left_ms().fold(0.0, f64::max);
    assert!(max <= 4_000.0 + 1.0, "max buffer {max} ms");
}

#[test]
fn starved_link_stalls_and_accounts_them() {
    // 4 Mbit/s video over a 2 Mbit/s link: each 1 s chunk takes ~2 s.
    let s = video_scenario(&["rate=2mbit,rtt=40ms"], small_video(4_000, 4), 2);
    let r = run(&s).unwrap();
    assert!(r.completed, "{:?}", r.error);
    let v = video(&r);
    assert!(v.stall_count >= 1, "no stall on a starved link");
    let total: f64 = v.stalls.iter().map(|s| s[1] - s[0]).sum();
    assert!((total - v.stall_time_s).abs() < 1e-9);
    assert!((v.rebuffer_rate - v.stall_time_s / 4.0).abs() < 1e-9);
    // Content arrives at half the play rate: ~4 s of the ~8 s download
    // after the 1 s start-up are stalls.
    assert!(
        (1.5..6.0).contains(&v.stall_time_s),
        "stall time {} s",
        v.stall_time_s
    );
    let end = r.completion_time_s.unwrap();
    let played = end - v.playback_start_s.unwrap() - v.stall_time_s;
    assert!((played - 4.0).abs() < 0.01, "played {played} s");
    assert!(v.low_buffer_share > 0.0);
}

#[test]
fn reinjection_under_loss_on_both_paths_delivers_every_chunk_exactly() {
    for (seed, mode) in [
        (3, ReinjectionMode::Always),
        (
            4,
            ReinjectionMode::Qoe {
                lower_ms: 1_000,
                upper_ms: 2_500,
            },
        ),
    ] {
        let mut s = video_scenario(
            &[
                "rate=20mbit,rtt=20ms,loss=3%",
                "rate=10mbit,rtt=80ms,loss=3%",
            ],
            small_video(8_000, 8),
            seed,
        );
        s.transport.config.multipath = MultipathMode::Mpns;
        s.transport.config.reinjection = mode;
        s.transport.config.qoe_feedback = true;
        let r = run(&s).unwrap();
        assert!(r.completed, "seed {seed}: {:?}", r.error);
        assert_eq!(r.sender.error, None, "seed {seed}");
        assert_eq!(r.receiver.error, None, "seed {seed}");
        let v = video(&r);
        assert_eq!(v.chunks_completed, 8, "seed {seed}");
        for (i, q) in r.requests.iter().enumerate() {
            assert_eq!(q.received, q.size, "seed {seed}: chunk {i}");
            assert_eq!(q.error, None, "seed {seed}: chunk {i}");
        }
        assert_eq!(r.bytes_received, r.bytes_requested, "seed {seed}");
        assert!(v.reinjected_bytes > 0, "seed {seed}: nothing re-injected");
    }
}

/// Per configuration, the runs over [`TRACES`].
struct Measured {
    single: Vec<VideoResult>,
    vanilla: Vec<VideoResult>,
    xlink: Vec<VideoResult>,
}

/// The runs of one scheme over the trace set, one thread per trace.
fn runs(scheme: XlinkScheme) -> Vec<VideoResult> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = traces()
            .into_iter()
            .map(|t| {
                scope.spawn(move || {
                    let r = run(&xlink_scenario(t, XLINK_CHUNKS, scheme)).unwrap();
                    assert!(r.completed, "trace {t}: {:?}", r.error);
                    r.video.unwrap()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Both claim tests judge the same (deterministic) runs: simulated once.
fn measure() -> &'static Measured {
    static MEASURED: OnceLock<Measured> = OnceLock::new();
    MEASURED.get_or_init(|| {
        let vanilla = runs(XlinkScheme::Vanilla);
        let ptl: Vec<f64> = vanilla.iter().flat_map(|v| v.play_time_left_ms()).collect();
        let xlink = runs(XlinkScheme::qoe_at(95.0, 80.0, &ptl));
        Measured {
            single: runs(XlinkScheme::SinglePath),
            vanilla,
            xlink,
        }
    })
}

fn mean_rebuffer(v: &[VideoResult]) -> f64 {
    v.iter().map(|r| r.rebuffer_rate).sum::<f64>() / v.len() as f64
}

fn reinjected_share(v: &[VideoResult]) -> f64 {
    let re: u64 = v.iter().map(|r| r.reinjected_bytes).sum();
    let sent: u64 = v.iter().map(|r| r.stream_bytes_sent).sum();
    re as f64 / sent as f64
}

fn pooled_cct(v: &[VideoResult], p: f64) -> f64 {
    let mut all: Vec<f64> = v
        .iter()
        .flat_map(|r| r.chunk_completion_ms.iter().copied())
        .collect();
    all.sort_by(f64::total_cmp);
    percentile(&all, p).unwrap()
}

#[test]
fn xlink_halves_rebuffering_vs_single_path_at_low_cost() {
    let m = measure();
    let (single, xlink) = (mean_rebuffer(&m.single), mean_rebuffer(&m.xlink));
    let cost = reinjected_share(&m.xlink);
    println!("rebuffer single {single:.4}, xlink(95,80) {xlink:.4}; re-injected {cost:.4}");
    assert!(single > 0.0, "single path never stalled: no contrast");
    assert!(xlink <= single / 2.0, "single {single}, xlink {xlink}");
    assert!(cost <= 0.05, "re-injected share {cost}");
}

#[test]
fn vanilla_multipath_tail_is_worse_than_xlink() {
    // Multipath HoL blocking (XLINK §3): min-RTT puts part of every chunk on
    // the LTE path, and when LTE fades the chunk's tail waits there; XLINK
    // re-injects that tail onto the path with the earlier estimated delivery
    // (Alg. 1), which the paper credits for its tail gains (§7.2: 95th/99th
    // percentile request completion time 9.4-34 % / 19-50 % better than
    // single path). Vanilla multipath must therefore be worse at both tails.
    // Margins on this set: p95 1137 vs 934 ms, p99 1429 vs 1175 ms. The p99
    // gain also holds over the full suite's 20 traces, the p95 one does not
    // (941 vs 948 ms: capacity-bound chunks dominate it there; docs/LAB.md).
    let m = measure();
    for p in [95.0, 99.0] {
        let (v, x) = (pooled_cct(&m.vanilla, p), pooled_cct(&m.xlink, p));
        println!("p{p}: vanilla {v:.0} ms, xlink {x:.0} ms");
        assert!(v > x, "p{p}: vanilla {v} ms is not worse than XLINK {x} ms");
    }
}

#[test]
fn video_scenario_reads_from_toml_and_round_trips() {
    let text = r#"
        seed = 5
        paths = ["rate=50mbit,rtt=20ms", "rate=20mbit,rtt=60ms"]
        [workload.video]
        bitrate_kbps = 3000
        chunks = 3
        [transport]
        multipath = "mpns"
        qoe_feedback = true
        reinjection = { mode = "qoe", lower_ms = 500, upper_ms = 1500 }
    "#;
    let s = Scenario::from_toml_str(text, "video.toml").unwrap();
    let Workload::Video(spec) = &s.workload else {
        panic!("not a video workload: {:?}", s.workload)
    };
    assert_eq!(
        (spec.bitrate_kbps, spec.chunks, spec.chunk_ms),
        (3000, 3, 1000)
    );
    let back = Scenario::from_toml_str(&s.to_toml().unwrap(), "back.toml").unwrap();
    assert_eq!(back.workload, s.workload);
    assert_eq!(
        back.transport.config.reinjection,
        s.transport.config.reinjection
    );
    let r = run(&s).unwrap();
    assert!(r.completed, "{:?}", r.error);
    assert_eq!(video(&r).chunks_completed, 3);
    let bad = Scenario::from_toml_str(
        "paths = [\"rate=1mbit\"]\n[workload.video]\nchunks = 0\n",
        "bad.toml",
    );
    assert!(bad
        .unwrap_err()
        .to_string()
        .contains("workload.video.chunks"));
}
