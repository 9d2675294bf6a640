//! A readable text summary of a [`RunResult`]: header, per-path table with
//! totals, ACK and retransmission figures, links and simulation speed.

use std::fmt::Write;

use crate::result::{RunResult, ACK_RANGE_BUCKET_BOUNDS};

/// The serde name of a setting (`cubic`, `min-rtt`, `mpns`).
fn name<T: serde::Serialize + std::fmt::Debug>(v: &T) -> String {
    match serde_json::to_value(v) {
        Ok(serde_json::Value::String(s)) => s,
        _ => format!("{v:?}").to_lowercase(),
    }
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or_else(|| "-".to_owned(), |x| format!("{x:.prec$}"))
}

/// Renders the summary (several lines, ending with a newline).
pub fn render(r: &RunResult) -> String {
    let mut out = String::new();
    header(&mut out, r);
    path_table(&mut out, r);
    connection_lines(&mut out, r);
    link_table(&mut out, r);
    if let Some(j) = &r.release_jitter {
        let _ = writeln!(
            out,
            "real sockets through the emulator: {:.3} s, release jitter p50 {:.0} us, p99 {:.0} us, \
             max {:.0} us over {} datagrams",
            r.sim_time_s, j.p50_us, j.p99_us, j.max_us, j.datagrams
        );
        return out;
    }
    let speed = if r.sim_wall_time_s > 0.0 {
        r.sim_time_s / r.sim_wall_time_s
    } else {
        0.0
    };
    let _ = writeln!(
        out,
        "simulation: {:.3} s virtual in {:.3} s wall ({speed:.1}x real time), {} events",
        r.sim_time_s, r.sim_wall_time_s, r.events
    );
    out
}

fn header(out: &mut String, r: &RunResult) {
    let s = &r.scenario;
    let t = &s.transport;
    let design = r.design.as_ref().map_or_else(|| "-".to_owned(), name);
    let _ = writeln!(
        out,
        "scenario{}: {} path(s), {}, cc {}, scheduler {}, multipath {} (negotiated {design}), seed {}",
        s.name.as_deref().map(|n| format!(" {n}")).unwrap_or_default(),
        s.paths.len(),
        s.workload,
        name(&t.config.congestion),
        name(&t.config.scheduler),
        name(&t.config.multipath),
        s.seed,
    );
    for (i, p) in s.paths.iter().enumerate() {
        let _ = writeln!(out, "  path {i}: {}", p.0);
    }
    match r.completion_time_s {
        Some(ct) => {
            let _ = writeln!(
                out,
                "completed in {ct:.3} s (handshake {} s): goodput {:.2} Mbit/s, second half {} Mbit/s",
                opt(r.handshake_time_s, 3),
                r.goodput_mbps,
                opt(r.steady_goodput_mbps, 2),
            );
        }
        None => {
            let _ = writeln!(
                out,
                "NOT COMPLETED ({}): {} after {:.3} s; {} of {} bytes received",
                r.outcome,
                r.error.as_deref().unwrap_or("unknown reason"),
                r.sim_time_s,
                r.bytes_received,
                r.bytes_requested
            );
        }
    }
}

fn path_table(out: &mut String, r: &RunResult) {
    let _ = writeln!(
        out,
        "\n{:>4} {:>5} {:>10} {:>6} {:>9} {:>6} {:>6} {:>6} {:>8} {:>8} {:>8} {:>7} {:>9} {:>7}",
        "path",
        "iface",
        "sent MB",
        "share",
        "pkts",
        "lost",
        "drops",
        "spur",
        "srtt ms",
        "min ms",
        "true ms",
        "mae ms",
        "cwnd",
        "acks"
    );
    let total_bytes: u64 = r.paths.iter().map(|p| p.bytes_sent).sum();
    let share = |b: u64| {
        if total_bytes == 0 {
            0.0
        } else {
            100.0 * b as f64 / total_bytes as f64
        }
    };
    for p in &r.paths {
        let _ = writeln!(
            out,
            "{:>4} {:>5} {:>10.3} {:>5.1}% {:>9} {:>6} {:>6} {:>6} {:>8.2} {:>8.2} {:>8} {:>7} {:>9} {:>7}",
            p.id,
            p.interface
                .map_or_else(|| "-".to_owned(), |i| i.to_string()),
            p.bytes_sent as f64 / 1e6,
            share(p.bytes_sent),
            p.packets_sent,
            p.packets_lost,
            p.link_drops.map_or_else(|| "-".to_owned(), |d| d.to_string()),
            p.spurious_losses,
            p.srtt_ms,
            p.min_rtt_ms,
            opt(p.true_rtt_ms, 2),
            opt(p.srtt_mae_ms, 2),
            p.cwnd,
            p.receiver_ack_frames,
        );
    }
    let _ = writeln!(
        out,
        "{:>4} {:>5} {:>10.3} {:>5.1}% {:>9} {:>6} {:>6} {:>6}",
        "all",
        "",
        total_bytes as f64 / 1e6,
        if total_bytes == 0 { 0.0 } else { 100.0 },
        r.paths.iter().map(|p| p.packets_sent).sum::<u64>(),
        r.paths.iter().map(|p| p.packets_lost).sum::<u64>(),
        r.true_losses,
        r.paths.iter().map(|p| p.spurious_losses).sum::<u64>(),
    );
    let _ = writeln!(
        out,
        "(lost = declared by the sender, drops = dropped by the download links, spur = declared \
         lost, then acknowledged; spns rules: {})",
        r.scenario.transport.config.spns_rules
    );
    if r.connections.len() > 1 {
        let _ = writeln!(
            out,
            "(paths of the first of {} successive connections; ACK and sender figures below \
             cover all of them)",
            r.connections.len()
        );
    }
}

fn connection_lines(out: &mut String, r: &RunResult) {
    let hist: Vec<String> = ACK_RANGE_BUCKET_BOUNDS
        .iter()
        .zip(r.ack_range_histogram)
        .filter(|(_, n)| *n > 0)
        .map(|(b, n)| format!("<={b}: {n}"))
        .collect();
    let _ = writeln!(
        out,
        "\nreceiver ACKs: {} frames, mean {:.1} B, mean {:.2} ranges [{}]",
        r.ack_frames_sent,
        r.avg_ack_frame_bytes,
        r.mean_ranges_per_ack,
        hist.join(", ")
    );
    let _ = writeln!(
        out,
        "sender: {} packets, {} lost ({} spurious), {} B retransmitted, {} PTOs, {} handovers",
        r.sender.packets_sent,
        r.sender.packets_lost,
        r.spurious_retransmissions,
        r.retransmitted_bytes,
        r.sender.pto_count,
        r.sender.handovers
    );
    for v in &r.violations {
        let _ = writeln!(out, "INVARIANT VIOLATED: {v}");
    }
    let stalls = r.sender.timer_stalls + r.receiver.timer_stalls;
    if stalls > 0 {
        let _ = writeln!(
            out,
            "WARNING: endpoint timers stayed due after handling {stalls} times (server {}, client {}): core bug worked around by the adapter",
            r.sender.timer_stalls, r.receiver.timer_stalls
        );
    }
}

fn link_table(out: &mut String, r: &RunResult) {
    let _ = writeln!(
        out,
        "\n{:<12} {:>8} {:>8} {:>10} {:>8} {:>8} {:>8} {:>10}",
        "link", "Mbit/s", "delay", "delivered", "q-drops", "loss", "down", "q-delay ms"
    );
    for l in &r.links {
        let _ = writeln!(
            out,
            "{:<12} {:>8} {:>8.1} {:>10} {:>8} {:>8} {:>8} {:>10}",
            l.name,
            opt(l.rate_mbps, 1),
            l.delay_ms,
            l.delivered_packets,
            l.drops.queue_overflow.packets,
            l.drops.random_loss.packets,
            l.drops.link_down.packets,
            opt(l.mean_queue_delay_ms, 2),
        );
    }
}
