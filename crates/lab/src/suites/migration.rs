//! `migration`: a network change with and without multipath.
//!
//! The client's first network goes down during a download. Without multipath the only way on is
//! client-initiated migration (RFC 9000 §9): the single-path client moves path 0 to its second
//! network (`transport.migrate_at`) as soon as the failure is noticed, here after a detection
//! delay of 0, 100, 300 or 1,000 ms (a device learns of a lost Wi-Fi from its link layer, or
//! later from timeouts). With multipath the second network carries a path from the start and
//! the transfer hands over by itself (MPNS and SPNS, RFC 10069 and draft-01). WSP points over
//! the two networks' rates (5–100 Mbit/s) and RTTs (10–200 ms), queues of one BDP, Cubic.
//! The question: how much a network change costs a client without multipath, against one with
//! it, and how much each second of detection delay adds.

use std::path::Path;

use mpquic_proto::cc::CcAlgorithm;
use mpquic_report::{stats, Cell, Plot, Section, Table};

use super::common::{config_text, download, multipath_named, num, ReportBuilder, ReportOutput};
use super::common::{RunRecord, RunSpec};
use super::fidelity::time_limit_s;
use super::{wsp, Suite};
use crate::scenario::Scenario;
use crate::units::SimDuration;

/// When the first network goes down (ms).
pub const DOWN_AT_MS: u64 = 1000;

/// The arms of a point: run-ID suffix, multipath design, detection delay of the move (ms).
pub const ARMS: [(&str, &str, Option<u64>); 6] = [
    ("move0", "single", Some(0)),
    ("move100", "single", Some(100)),
    ("move300", "single", Some(300)),
    ("move1000", "single", Some(1000)),
    ("mpns", "mpns", None),
    ("spns", "spns", None),
];

/// The `migration` suite.
#[derive(Debug, Clone, Copy, Default)]
pub struct Migration {
    /// Test hook: WSP points and download bytes, replacing the quick/full values.
    pub tiny: Option<(usize, u64)>,
}

/// Path specs of a point from unit coordinates (rate and RTT of each network); the first one
/// goes down at [`DOWN_AT_MS`].
pub fn point_paths(u: &[f64]) -> [String; 2] {
    let net = |rate: f64, rtt: f64| {
        format!(
            "rate={:.0}kbit,rtt={:.0}ms,queue=1bdp",
            1000.0 * wsp::log(rate, 5.0, 100.0),
            wsp::lin(rtt, 10.0, 200.0)
        )
    };
    [
        format!("{},down_at={DOWN_AT_MS}ms", net(u[0], u[1])),
        net(u[2], u[3]),
    ]
}

impl Suite for Migration {
    fn name(&self) -> &'static str {
        "migration"
    }

    fn description(&self) -> &'static str {
        "The first network goes down mid-download: client migration without multipath (RFC 9000 §9, detection delay 0-1000 ms) vs MPNS/SPNS handover, WSP over both networks' rate and RTT"
    }

    fn runs(&self, quick: bool, seed: u64) -> Vec<(String, Scenario)> {
        // Large enough that every point is still downloading when the first network fails.
        let (n, bytes) = self.tiny.unwrap_or(if quick {
            (4, 20_000_000)
        } else {
            (40, 50_000_000)
        });
        let mut out = Vec::new();
        for (i, u) in wsp::design(n, 4, seed).iter().enumerate() {
            let paths = point_paths(u);
            // The second network alone must carry nearly all of it.
            let limit_s = time_limit_s(&paths[1..], bytes, 60);
            for (tag, design, delay) in ARMS {
                let id = format!("p{i:02}-{tag}");
                let spec = RunSpec {
                    name: &id,
                    seed: seed.wrapping_add(i as u64),
                    paths: &paths,
                    workload: download(bytes),
                    multipath: multipath_named(design),
                    cc: CcAlgorithm::Cubic,
                    ack_range_limit: None,
                    time_limit_s: limit_s,
                    time_series: false,
                };
                let mut scenario = spec.build();
                scenario.transport.migrate_at =
                    delay.map(|d| SimDuration(mpquic_netsim::time::ms(DOWN_AT_MS + d)));
                out.push((id, scenario));
            }
        }
        out
    }

    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput> {
        let mut rb = ReportBuilder::new(out_dir, &[], runs)?;
        let mut s = Section::new("A network change mid-download");
        s.paragraphs.push(format!(
            "The first network goes down at {DOWN_AT_MS} ms. Without multipath the client moves \
             path 0 to its second network that long after the failure (client migration, RFC \
             9000 §9: probe, fresh connection ID, estimates restarted); with multipath (MPNS, \
             SPNS) the second network carries a path from the start. Rates 5-100 Mbit/s and RTTs \
             10-200 ms per network (WSP points), queues of one BDP, Cubic, min-RTT scheduler. \
             Transfer times over completed runs; a run that did not complete is counted, never \
             left out."
        ));
        let headline = summary_table(runs);
        rb.table(&mut s, "summary", headline.clone())?;
        let series = ARMS
            .iter()
            .map(|(tag, ..)| (arm_label(tag), times(runs, tag)))
            .collect();
        let plot = Plot::cdf(
            "Transfer time after the first network fails",
            "transfer time (s)",
            series,
        );
        rb.figure(&mut s, &plot, "time", "CDF of transfer times per arm")?;
        let mut cfg = Section::new("Configuration");
        cfg.config = Some(config_text(self.name(), runs));
        rb.sections = vec![s, cfg];
        rb.finish(
            "migration: a network change with and without multipath",
            Some(headline),
        )
    }
}

/// A readable name of an arm.
fn arm_label(tag: &str) -> String {
    match tag.strip_prefix("move") {
        Some(ms) => format!("single path, moves after {ms} ms"),
        None => format!("{} handover", tag.to_uppercase()),
    }
}

/// The runs of arm `tag`.
fn arm_runs<'a>(runs: &'a [(String, RunRecord)], tag: &str) -> Vec<&'a RunRecord> {
    let suffix = format!("-{tag}");
    runs.iter()
        .filter(|(id, _)| id.ends_with(&suffix))
        .map(|(_, r)| r)
        .collect()
}

/// Transfer times of the completed runs of arm `tag`.
fn times(runs: &[(String, RunRecord)], tag: &str) -> Vec<f64> {
    arm_runs(runs, tag)
        .iter()
        .filter(|r| r.completed)
        .filter_map(|r| r.completion_time_s)
        .collect()
}

/// Per arm: median and 90th percentile transfer time, median time relative to the MPNS run of
/// the same point, runs completed.
fn summary_table(runs: &[(String, RunRecord)]) -> Table {
    let mut t = Table::new(
        "Transfer time after the first network fails",
        [
            "arm",
            "median time (s)",
            "p90 time (s)",
            "median vs MPNS (%)",
            "completed",
        ]
        .iter()
        .map(|c| (*c).to_owned())
        .collect(),
    );
    let mpns = point_times(runs, "mpns");
    for (tag, ..) in ARMS {
        let own = point_times(runs, tag);
        let ratios: Vec<f64> = own
            .iter()
            .filter_map(|(point, time)| {
                let base = mpns.iter().find(|(p, _)| p == point)?.1;
                Some(100.0 * (time / base - 1.0))
            })
            .collect();
        let arm = arm_runs(runs, tag);
        let done = arm.iter().filter(|r| r.completed).count();
        let all = times(runs, tag);
        t = t.with_row(vec![
            Cell::text(arm_label(tag)),
            num(stats::median(&all), 3),
            num(stats::percentile(&all, 90.0), 3),
            num(stats::median(&ratios), 1),
            Cell::text(format!("{done} of {}", arm.len())),
        ]);
    }
    t
}

/// (point prefix, transfer time) of the completed runs of arm `tag`.
fn point_times(runs: &[(String, RunRecord)], tag: &str) -> Vec<(String, f64)> {
    let suffix = format!("-{tag}");
    runs.iter()
        .filter_map(|(id, r)| {
            let point = id.strip_suffix(&suffix)?;
            let time = r.completion_time_s.filter(|_| r.completed)?;
            Some((point.to_owned(), time))
        })
        .collect()
}
