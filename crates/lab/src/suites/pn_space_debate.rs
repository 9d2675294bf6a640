//! `pn-space-debate`: De Coninck et al., ACM CCR 2022 (seed 003).
//!
//! Homogeneous 2-path points (both paths alike; WSP over rate and RTT) and
//! heterogeneous 2-path points (WSP over bandwidth balance and RTT balance
//! with constant totals: 100 Mbit/s and 200 ms, so balance 0.9 gives
//! 90 Mbit/s / 20 ms and 10 Mbit/s / 180 ms), each run with SPNS/MPNS ×
//! Cubic/BBR × ACK-range limit 32/4, plus SPNS + Cubic with the two
//! receiver fixes of picoquic (ACKs on all paths, lowest ranges first), plus SPNS + Cubic with
//! 4 ACK blocks under the naive preset (every rule of the SPNS report off, as in the
//! implementations CCR 2022 measured) to set beside the report's rules, and
//! 3-path points (20 Mbit/s each, WSP over RTT weights, 1.0 = 200 ms).
//! Reported as CDFs of transfer time, mean ranges per ACK and retransmitted
//! bytes / file size.

use std::path::Path;

use mpquic_report::{stats, Cell, Plot, Section, Table};

use super::common::{cc_named, download, multipath_named};
use super::common::{
    config_text, num, reference_table, ReportBuilder, ReportOutput, RunRecord, RunSpec,
};
use super::fidelity::{completed_of, completion_note, time_limit_s, CCR_2022, SPNS_REPORT};
use super::wsp;
use super::Suite;
use crate::scenario::Scenario;
use mpquic_proto::SpnsRules;

/// The `pn-space-debate` suite.
#[derive(Debug, Clone, Copy, Default)]
pub struct PnSpaceDebate {
    /// Test hook: WSP points per space and download size in bytes,
    /// replacing the quick/full values (for fast end-to-end tests).
    pub tiny: Option<(usize, u64)>,
}

/// What a configuration changes besides design, controller and ACK-range limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The SPNS report's rules (the core's defaults).
    Report,
    /// The report's rules plus the two receiver fixes of picoquic (CCR 2022): ACKs on all
    /// paths, lowest ranges first.
    Fixes,
    /// The naive SPNS preset: every report rule off, as in the implementations CCR 2022
    /// measured.
    Naive,
}

/// A transport configuration: (design, cc, ACK-range limit, variant).
pub type Config = (&'static str, &'static str, usize, Variant);

/// The eleven transport configurations.
pub const CONFIGS: [Config; 11] = [
    ("mpns", "cubic", 32, Variant::Report),
    ("spns", "cubic", 32, Variant::Report),
    ("mpns", "cubic", 4, Variant::Report),
    ("spns", "cubic", 4, Variant::Report),
    ("mpns", "bbr", 32, Variant::Report),
    ("spns", "bbr", 32, Variant::Report),
    ("mpns", "bbr", 4, Variant::Report),
    ("spns", "bbr", 4, Variant::Report),
    ("spns", "cubic", 32, Variant::Fixes),
    ("spns", "cubic", 4, Variant::Fixes),
    ("spns", "cubic", 4, Variant::Naive),
];

/// The configurations CCR 2022's headline compares (heterogeneous paths, Cubic, 4 ACK
/// blocks): naive SPNS, SPNS with the report's rules, MPNS.
pub const HEADLINE: [Config; 3] = [
    ("spns", "cubic", 4, Variant::Naive),
    ("spns", "cubic", 4, Variant::Report),
    ("mpns", "cubic", 4, Variant::Report),
];

/// The virtual time limit floor of a run (s); longer transfers over slower
/// paths get more (see [`time_limit_s`]).
pub const TIME_LIMIT_FLOOR_S: u64 = 300;

/// The scenario spaces and their WSP dimensions.
const SPACES: [(&str, usize); 3] = [("homo", 2), ("hetero", 2), ("tri", 3)];

/// The run-ID suffix of a configuration, e.g. `spns-cubic-l04-naive`.
pub fn config_tag((design, cc, limit, variant): Config) -> String {
    let suffix = match variant {
        Variant::Report => "",
        Variant::Fixes => "-fix",
        Variant::Naive => "-naive",
    };
    format!("{design}-{cc}-l{limit:02}{suffix}")
}

/// Paths of a point of `space` (`homo`, `hetero` or `tri`) from unit coordinates.
pub fn point_paths(space: &str, u: &[f64]) -> Vec<String> {
    if space == "homo" {
        let rate = wsp::log(u[0], 5.0, 50.0);
        let rtt = wsp::lin(u[1], 10.0, 100.0);
        let p = format!("rate={:.0}kbit,rtt={rtt:.0}ms,queue=1.5bdp", rate * 1000.0);
        vec![p.clone(), p]
    } else if space == "tri" {
        // CCR 2022's 3-path space: RTT weights, 1.0 = 200 ms.
        u.iter()
            .map(|&w| {
                format!(
                    "rate=20mbit,rtt={:.0}ms,queue=1.5bdp",
                    200.0 * wsp::lin(w, 0.1, 1.0)
                )
            })
            .collect()
    } else {
        let b = wsp::lin(u[0], 0.1, 0.9);
        let r = wsp::lin(u[1], 0.1, 0.9);
        vec![
            format!(
                "rate={:.0}kbit,rtt={:.0}ms,queue=1.5bdp",
                100_000.0 * b,
                200.0 * (1.0 - r)
            ),
            format!(
                "rate={:.0}kbit,rtt={:.0}ms,queue=1.5bdp",
                100_000.0 * (1.0 - b),
                200.0 * r
            ),
        ]
    }
}

impl Suite for PnSpaceDebate {
    fn name(&self) -> &'static str {
        "pn-space-debate"
    }

    fn description(&self) -> &'static str {
        "CCR 2022: 2-path (homogeneous, heterogeneous) and 3-path WSP points, SPNS/MPNS x Cubic/BBR x ACK limit 32/4, receiver fixes, naive SPNS vs the report's rules"
    }

    fn runs(&self, quick: bool, seed: u64) -> Vec<(String, Scenario)> {
        let (n, bytes) = self.tiny.unwrap_or(if quick {
            (5, 10_000_000)
        } else {
            (95, 50_000_000)
        });
        let mut out = Vec::new();
        for (s, (space, dims)) in SPACES.iter().enumerate() {
            for (i, u) in wsp::design(n, *dims, seed.wrapping_add(s as u64 * 7919))
                .iter()
                .enumerate()
            {
                let paths = point_paths(space, u);
                let limit_s = time_limit_s(&paths, bytes, TIME_LIMIT_FLOOR_S);
                for c in CONFIGS {
                    let id = format!("{space}{i:02}-{}", config_tag(c));
                    let spec = RunSpec {
                        name: &id,
                        seed: seed.wrapping_add(i as u64),
                        paths: &paths,
                        workload: download(bytes),
                        multipath: multipath_named(c.0),
                        cc: cc_named(c.1),
                        ack_range_limit: Some(c.2),
                        time_limit_s: limit_s,
                        time_series: false,
                    };
                    let naive = (c.3 == Variant::Naive).then(SpnsRules::naive);
                    out.push((id.clone(), spec.build_with(c.3 == Variant::Fixes, naive)));
                }
            }
        }
        out
    }

    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput> {
        let mut rb = ReportBuilder::new(out_dir, &[CCR_2022, SPNS_REPORT], runs)?;
        let mut sections = Vec::new();
        let mut headline = None;
        for (space, title) in [
            ("homo", "Homogeneous 2-path"),
            (
                "hetero",
                "Heterogeneous 2-path (balance, totals 100 Mbit/s, 200 ms)",
            ),
            ("tri", "3-path (20 Mbit/s each, RTT weights, 1.0 = 200 ms)"),
        ] {
            let mut s = Section::new(title);
            s.paragraphs.push(
                "Medians over the WSP points; transfer time only over completed runs. Queues of \
                 1.5 BDP as in the paper (ns-3, picoquic/PQUIC, 50 MB; our quick mode uses 10 MB)."
                    .into(),
            );
            let t = space_table(runs, space);
            rb.table(&mut s, &format!("{space}_summary"), t.clone())?;
            headline.get_or_insert(t);
            for (metric, label, f) in METRICS {
                let series = CONFIGS
                    .iter()
                    .map(|c| {
                        (
                            config_tag(*c),
                            config_runs(runs, space, *c)
                                .iter()
                                .filter_map(|r| f(r))
                                .collect(),
                        )
                    })
                    .collect();
                let plot = Plot::cdf(format!("{title}: {label}"), label, series);
                let groups: Vec<(String, Vec<&RunRecord>)> = CONFIGS
                    .iter()
                    .map(|c| (config_tag(*c), config_runs(runs, space, *c)))
                    .collect();
                let note = if metric == "time" {
                    format!("; {}", completion_note(&groups))
                } else {
                    String::new()
                };
                rb.figure(
                    &mut s,
                    &plot,
                    &format!("{space}_{metric}"),
                    &format!("CDF of {label}{note}"),
                )?;
            }
            sections.push(s);
        }
        if let Some(first) = sections.first_mut() {
            first.reference = Some(reference_table(
                "Paper (CCR 2022: \u{201c}The Packet Number Space Debate in Multipath QUIC\u{201d})",
                &["space", "finding"],
                &[
                    &["homogeneous", "little difference in transfer time; SPNS ACKs carry many ranges even without loss; with 4 ACK blocks SPNS retransmits more (worse with Cubic than BBR)"],
                    &["heterogeneous", "SPNS + Cubic with 4 ACK blocks retransmitted up to 70% of the data, some of it 8 times"],
                    &["3-path", "with 32 blocks ~30% of SPNS ACK frames hit the cap (70th percentile = 33 ranges), causing spurious retransmissions"],
                    &["fixes", "picoquic: send ACKs on both paths; lowest ranges first when capped"],
                ],
            ));
        }
        sections.insert(0, headline_section(&mut rb, runs)?);
        let mut cfg = Section::new("Configuration");
        cfg.config = Some(config_text(self.name(), runs));
        sections.push(cfg);
        rb.sections = sections;
        rb.finish("pn-space-debate: SPNS vs MPNS (CCR 2022)", headline)
    }
}

/// CCR 2022's heterogeneous observation beside the SPNS report's rules: naive SPNS, SPNS
/// with the report's rules and MPNS, Cubic, 4 ACK blocks, side by side.
fn headline_section(
    rb: &mut ReportBuilder,
    runs: &[(String, RunRecord)],
) -> anyhow::Result<Section> {
    let mut s = Section::new(
        "Heterogeneous paths, Cubic, 4 ACK blocks: naive SPNS (CCR 2022) vs the SPNS report's rules",
    );
    s.paragraphs.push(
        "The heterogeneous WSP points. naive = every rule of the SPNS report off (one loss \
         detector over the shared space, ACKs on any path, RTT samples from any ACK, \
         Default_Limit as a hard limit); report = the rules on (the core's default). Declared \
         losses are the sender's, true losses the download links' drops (simulator ground \
         truth), spurious = declared lost, then acknowledged. CCR 2022 saw SPNS + Cubic with \
         4 ACK blocks retransmit up to 70% of the file."
            .into(),
    );
    let t = headline_table(runs, "hetero");
    rb.table(&mut s, "hetero_naive_vs_report", t)?;
    let series = HEADLINE
        .iter()
        .map(|c| {
            let values = config_runs(runs, "hetero", *c)
                .iter()
                .map(|r| 100.0 * r.retransmission_ratio())
                .collect();
            (config_tag(*c), values)
        })
        .collect();
    let label = "retransmitted bytes / file size (%)";
    let plot = Plot::cdf("Heterogeneous, Cubic, 4 ACK blocks", label, series);
    rb.figure(
        &mut s,
        &plot,
        "hetero_naive_vs_report_retx",
        &format!("CDF of {label}"),
    )?;
    Ok(s)
}

/// The side-by-side table of [`HEADLINE`] over the runs of `space`.
fn headline_table(runs: &[(String, RunRecord)], space: &str) -> Table {
    let cols = [
        "configuration",
        "completed",
        "median time (s)",
        "median retx / file (%)",
        "max retx / file (%)",
        "declared losses",
        "true losses",
        "spurious",
    ];
    let mut t = Table::new(
        format!("Ours: {space}, naive vs report rules"),
        cols.iter().map(|c| (*c).to_owned()).collect(),
    );
    for c in HEADLINE {
        let rs = config_runs(runs, space, c);
        let col = |i: usize| -> Vec<f64> { rs.iter().filter_map(|r| (METRICS[i].2)(r)).collect() };
        let retx = col(2);
        let declared: u64 = rs
            .iter()
            .flat_map(|r| &r.paths)
            .map(|p| p.packets_lost)
            .sum();
        t.rows.push(vec![
            Cell::text(config_tag(c)),
            completed_of(&rs),
            num(stats::median(&col(0)), 3),
            num(stats::median(&retx), 2),
            num(retx.iter().copied().reduce(f64::max), 2),
            Cell::num(declared as f64, 0),
            Cell::num(rs.iter().map(|r| r.true_losses).sum::<u64>() as f64, 0),
            Cell::num(
                rs.iter().map(|r| r.spurious_retransmissions).sum::<u64>() as f64,
                0,
            ),
        ]);
    }
    t
}

type Metric = (&'static str, &'static str, fn(&RunRecord) -> Option<f64>);

const METRICS: [Metric; 3] = [
    ("time", "transfer time (s)", |r| {
        r.completion_time_s.filter(|_| r.completed)
    }),
    ("ranges", "mean ranges per ACK frame", |r| {
        Some(r.mean_ranges_per_ack)
    }),
    ("retx", "retransmitted bytes / file size (%)", |r| {
        Some(100.0 * r.retransmission_ratio())
    }),
];

fn config_runs<'a>(runs: &'a [(String, RunRecord)], space: &str, c: Config) -> Vec<&'a RunRecord> {
    let tag = format!("-{}", config_tag(c));
    runs.iter()
        .filter(|(id, _)| {
            id.starts_with(space)
                && id.ends_with(&tag)
                && id[space.len()..].starts_with(|ch: char| ch.is_ascii_digit())
        })
        .map(|(_, r)| r)
        .collect()
}

fn space_table(runs: &[(String, RunRecord)], space: &str) -> Table {
    let cols = [
        "configuration",
        "completed",
        "median time (s)",
        "median ranges per ACK",
        "median retx / file (%)",
        "max retx / file (%)",
    ];
    let mut t = Table::new(
        format!("Ours: {space}"),
        cols.iter().map(|c| (*c).to_owned()).collect(),
    );
    for c in CONFIGS {
        let rs = config_runs(runs, space, c);
        let col = |i: usize| -> Vec<f64> { rs.iter().filter_map(|r| (METRICS[i].2)(r)).collect() };
        let retx = col(2);
        t.rows.push(vec![
            Cell::text(config_tag(c)),
            completed_of(&rs),
            num(stats::median(&col(0)), 3),
            num(stats::median(&col(1)), 2),
            num(stats::median(&retx), 2),
            num(retx.iter().copied().reduce(f64::max), 2),
        ]);
    }
    t
}
