//! `spns-rules`: an ablation of the Alibaba SPNS report's rules (seed 000, §2.1, §2.2, §2.4).
//!
//! Each condition (two heterogeneous paths, Cubic, min-RTT, Default_Limit 32) is run with
//! MPNS and SPNS under the report's rules, with SPNS once per rule turned off, and with the
//! "naive" preset (every rule off: one loss detector over the shared space, ACKs on any path,
//! RTT samples from any ACK; MPNS too, for comparison). The report shows each rule's
//! contribution to speed, declared against true losses (the simulator's link drops),
//! spurious retransmissions, the srtt error, and minimum RTTs below a path's propagation
//! floor (samples that mixed paths).

use std::path::Path;

use mpquic_proto::{SpnsRule, SpnsRules};
use mpquic_report::{BarChart, Cell, Section, Table};

use super::common::{
    config_text, mean_of, num, rate_pct, reference_table, ReportBuilder, ReportOutput, RunRecord,
    RunSpec,
};
use super::common::{download, multipath_named};
use super::fidelity::{completed_of, completion_note, time_limit_s, CCR_2022, SPNS_REPORT};
use super::Suite;
use crate::scenario::Scenario;
use mpquic_proto::cc::CcAlgorithm;

/// The `spns-rules` suite.
#[derive(Debug, Clone, Copy, Default)]
pub struct SpnsRulesSuite {
    /// Test hook: conditions and download size in bytes, replacing the quick/full values.
    pub tiny: Option<(usize, u64)>,
}

/// The virtual time limit floor of a run (s); see [`time_limit_s`].
pub const TIME_LIMIT_FLOOR_S: u64 = 120;

/// One configuration of the ablation.
#[derive(Debug, Clone, PartialEq)]
pub struct Arm {
    /// Run-ID suffix, e.g. `spns-no-two-range-limits`.
    pub id: String,
    /// `spns` or `mpns`.
    pub multipath: &'static str,
    /// The rules.
    pub rules: SpnsRules,
}

/// The arms, in report order: MPNS and SPNS with the report's rules, SPNS with one rule off
/// per rule, then the naive preset in SPNS and MPNS.
pub fn arms() -> Vec<Arm> {
    let arm = |multipath, id: String, rules| Arm {
        id,
        multipath,
        rules,
    };
    let mut out = vec![
        arm("mpns", "mpns-report".into(), SpnsRules::report()),
        arm("spns", "spns-report".into(), SpnsRules::report()),
    ];
    for rule in SpnsRule::ALL {
        let rules = SpnsRules::report().with(rule, false);
        out.push(arm("spns", format!("spns-no-{}", rule.name()), rules));
    }
    out.push(arm("spns", "spns-naive".into(), SpnsRules::naive()));
    out.push(arm("mpns", "mpns-naive".into(), SpnsRules::naive()));
    out
}

/// The path pairs: the 30/10 Mbit/s run, the same pair with the slow path first (the
/// handshake on the cellular-like path), a CCR 2022 heterogeneous point (bandwidth balance 0.7,
/// RTT balance 0.3 of 100 Mbit/s and 200 ms), then generated Wi-Fi + LTE trace pairs (as in
/// `spns-vs-mpns`).
pub fn conditions(n: usize, seed: u64) -> Vec<(String, [String; 2])> {
    let mut out = vec![
        (
            "fixed".to_owned(),
            [
                "rate=30mbit,delay=10ms,queue=1bdp".to_owned(),
                "rate=10mbit,delay=40ms,queue=1bdp".to_owned(),
            ],
        ),
        (
            "slowfirst".to_owned(),
            [
                "rate=10mbit,delay=40ms,queue=1bdp".to_owned(),
                "rate=30mbit,delay=10ms,queue=1bdp".to_owned(),
            ],
        ),
        (
            "ccr".to_owned(),
            [
                "rate=70mbit,rtt=60ms,queue=1.5bdp".to_owned(),
                "rate=30mbit,rtt=140ms,queue=1.5bdp".to_owned(),
            ],
        ),
    ];
    let mut k = 0;
    while out.len() < n {
        let ts = seed.wrapping_mul(1000).wrapping_add(2 * k);
        out.push((
            format!("t{k}"),
            [
                format!("trace=gen:wifi:{},delay=10ms,queue=1bdp", ts + 1),
                format!("trace=gen:lte:{},delay=30ms,queue=1bdp", ts + 2),
            ],
        ));
        k += 1;
    }
    out.truncate(n);
    out
}

impl Suite for SpnsRulesSuite {
    fn name(&self) -> &'static str {
        "spns-rules"
    }

    fn description(&self) -> &'static str {
        "SPNS report §2 rules ablation: one rule off at a time and the naive preset; speed, declared vs true losses, spurious retransmissions, srtt error"
    }

    fn runs(&self, quick: bool, seed: u64) -> Vec<(String, Scenario)> {
        let (n, bytes) = self.tiny.unwrap_or(if quick {
            (4, 10_000_000)
        } else {
            (9, 50_000_000)
        });
        let mut out = Vec::new();
        for (k, (cond, paths)) in conditions(n, seed).into_iter().enumerate() {
            let limit_s = time_limit_s(&paths, bytes, TIME_LIMIT_FLOOR_S);
            for arm in arms() {
                let id = format!("{cond}-{}", arm.id);
                let spec = RunSpec {
                    name: &id,
                    seed: seed.wrapping_add(k as u64),
                    paths: &paths,
                    workload: download(bytes),
                    multipath: multipath_named(arm.multipath),
                    cc: CcAlgorithm::Cubic,
                    ack_range_limit: None,
                    time_limit_s: limit_s,
                    time_series: false,
                };
                let scenario = spec.build_with(false, Some(arm.rules));
                out.push((id, scenario));
            }
        }
        out
    }

    fn report(&self, runs: &[(String, RunRecord)], out_dir: &Path) -> anyhow::Result<ReportOutput> {
        let mut rb = ReportBuilder::new(out_dir, &[SPNS_REPORT, CCR_2022], runs)?;
        let mut s = Section::new("Ablation of the SPNS report's rules");
        s.paragraphs.push(
            "Two heterogeneous paths per condition (the 30/10 Mbit/s, 10/40 ms one-way pair, \
             also with the slow path as the handshake path; a CCR 2022 heterogeneous point; \
             generated Wi-Fi + LTE traces), Cubic, min-RTT, \
             Default_Limit 32, Maximum_Limit 64. Sums and means over the conditions. Declared \
             losses are the sender's; true losses are the packets the download links dropped \
             (simulator ground truth); spurious = declared lost, then acknowledged; srtt error \
             = mean absolute error of the sampled smoothed RTT against the true RTT, in % of \
             the true RTT (mean over paths); 'min RTT below floor' counts runs in which an \
             endpoint's minimum RTT of a path fell below the path's propagation floor (an RTT \
             sample mixed paths)."
                .into(),
        );
        s.paragraphs.push(rule_legend());
        let t = ablation_table(runs);
        rb.table(&mut s, "ablation", t.clone())?;
        let key = "mpns / spns: the report's rules; -loss, -rtt, -ackpath, -largest, -limits, \
                   -gaps: SPNS with per-path-loss-detection, per-path-rtt-samples, \
                   ack-on-receiving-path, ack-from-path-largest, two-range-limits, \
                   ack-threshold-despite-gaps off; naive: all off";
        let caption = format!("Declared / true losses ({key})");
        rb.figure(&mut s, &loss_chart(&t), "losses", &caption)?;
        let groups: Vec<(String, Vec<&RunRecord>)> = arms()
            .into_iter()
            .map(|a| (a.id.clone(), arm_runs(runs, &a.id)))
            .collect();
        let caption = format!(
            "Speed relative to SPNS with the report's rules ({key}; {})",
            completion_note(&groups)
        );
        rb.figure(&mut s, &speed_chart(&t), "speed", &caption)?;
        s.reference = Some(reference_table(
            "Papers (SPNS report: \u{201c}Implementation of Single Packet Number Space in Multi-Path QUIC\u{201d}; CCR 2022: \u{201c}The Packet Number Space Debate in Multipath QUIC\u{201d})",
            &["source", "finding"],
            &[
                &["report §2.2", "RTT samples from ACKs on the same path, ACK on the receiving path starting at its largest: SPNS srtt tracks the path delay like MPNS (Fig. 3b)"],
                &["report §2.4", "Default_Limit exceeded only to cover newly received packets ('not missing newly received packets that cause spurious losses'), Maximum_Limit 64"],
                &["CCR 2022", "early SPNS (picoquic) with 4 ACK blocks and Cubic retransmitted up to 70% of the file on heterogeneous paths"],
            ],
        ));
        let mut cfg = Section::new("Configuration");
        cfg.config = Some(config_text(self.name(), runs));
        rb.sections = vec![s, cfg];
        rb.finish("spns-rules: ablation of the SPNS report's rules", Some(t))
    }
}

/// One line per rule: its name, the report section and what turning it off does.
fn rule_legend() -> String {
    let text = |r: SpnsRule| {
        match r {
        SpnsRule::PerPathLossDetection => "loss detection per path (off: one detector over the shared space)",
        SpnsRule::PerPathRttSamples => "RTT samples only from the path's own round trips (off: the receiving path takes any ACK's sample)",
        SpnsRule::AckOnReceivingPath => "ACK threshold and timer per path, ACK on the receiving path (off: one for the space, ACK on the lowest-RTT path)",
        SpnsRule::AckFromPathLargest => "ACK starts at the path's largest packet (off: at the space's largest)",
        SpnsRule::TwoRangeLimits => "Default_Limit exceeded for new packets up to Maximum_Limit (off: Default_Limit is hard)",
        SpnsRule::AckThresholdDespiteGaps => "no immediate ACK for gaps between paths (off: every gap triggers one)",
    }
    };
    let lines: Vec<String> = SpnsRule::ALL
        .iter()
        .map(|r| format!("{} ({}): {}", r.name(), r.section(), text(*r)))
        .collect();
    format!("Rules: {}.", lines.join("; "))
}

/// Runs of an arm (run IDs `CONDITION-ARM`).
pub fn arm_runs<'a>(runs: &'a [(String, RunRecord)], arm: &str) -> Vec<&'a RunRecord> {
    let suffix = format!("-{arm}");
    runs.iter()
        .filter(|(id, _)| {
            id.strip_suffix(&suffix)
                .is_some_and(|cond| !cond.is_empty() && !cond.contains('-'))
        })
        .map(|(_, r)| r)
        .collect()
}

/// Whether an endpoint's minimum RTT of a path fell below the path's floor in this run.
pub fn min_rtt_below_floor(r: &RunRecord) -> bool {
    r.paths.iter().any(|p| {
        let Some(floor) = p.min_rtt_floor_ms else {
            return false;
        };
        let fallback_only = p.own_rtt_samples == 0 && p.borrowed_rtt_samples > 0;
        let server = p.rtt_samples > 0 && !fallback_only && p.min_rtt_ms < floor - 1e-6;
        let client = p.receiver_min_rtt_ms.is_some_and(|m| m < floor - 1e-6);
        server || client
    })
}

/// The ablation table.
pub fn ablation_table(runs: &[(String, RunRecord)]) -> Table {
    let cols = [
        "arm",
        "completed",
        "speed (kB/s)",
        "speed vs spns-report (%)",
        "declared losses",
        "true losses",
        "declared / true",
        "spurious",
        "retx / file (%)",
        "srtt error (% of true RTT)",
        "runs with min RTT below floor",
    ];
    let mut t = Table::new(
        "Ours: each rule turned off",
        cols.iter().map(|c| (*c).to_owned()).collect(),
    );
    let speed = |arm: &str| mean_of(arm_runs(runs, arm).iter().map(|r| r.speed_kbytes_per_s()));
    let base = speed("spns-report");
    for arm in arms() {
        let rs = arm_runs(runs, &arm.id);
        let declared: u64 = rs
            .iter()
            .flat_map(|r| &r.paths)
            .map(|p| p.packets_lost)
            .sum();
        let true_losses: u64 = rs.iter().map(|r| r.true_losses).sum();
        let spurious: u64 = rs.iter().map(|r| r.spurious_retransmissions).sum();
        let srtt = mean_of(
            rs.iter()
                .flat_map(|r| &r.paths)
                .map(|p| p.srtt_mae_ratio.map(|x| 100.0 * x)),
        );
        let s = speed(&arm.id);
        t.rows.push(vec![
            Cell::text(arm.id.clone()),
            completed_of(&rs),
            num(s, 1),
            num(base.zip(s).and_then(|(b, s)| rate_pct(b, s)), 2),
            Cell::num(declared as f64, 0),
            Cell::num(true_losses as f64, 0),
            num(
                (true_losses > 0).then(|| declared as f64 / true_losses as f64),
                3,
            ),
            Cell::num(spurious as f64, 0),
            num(
                mean_of(rs.iter().map(|r| Some(100.0 * r.retransmission_ratio()))),
                2,
            ),
            num(srtt, 2),
            Cell::num(
                rs.iter().filter(|r| min_rtt_below_floor(r)).count() as f64,
                0,
            ),
        ]);
    }
    t
}

/// The number in column `col` of every row, NaN where missing.
fn column(t: &Table, col: usize) -> Vec<f64> {
    t.rows
        .iter()
        .map(|row| match row.get(col) {
            Some(Cell::Num(v, _)) => *v,
            _ => f64::NAN,
        })
        .collect()
}

/// Short chart labels: `mpns`, `spns` (the report's rules), `-RULE` (SPNS with one rule
/// off, abbreviated), `naive`, `mpns-naive`.
fn arm_labels(t: &Table) -> Vec<String> {
    let short = |id: &str| -> String {
        let Some(rule) = id.strip_prefix("spns-no-") else {
            return id.trim_end_matches("-report").to_owned();
        };
        let abbrev = match rule.parse::<SpnsRule>() {
            Ok(SpnsRule::PerPathLossDetection) => "loss",
            Ok(SpnsRule::PerPathRttSamples) => "rtt",
            Ok(SpnsRule::AckOnReceivingPath) => "ackpath",
            Ok(SpnsRule::AckFromPathLargest) => "largest",
            Ok(SpnsRule::TwoRangeLimits) => "limits",
            Ok(SpnsRule::AckThresholdDespiteGaps) => "gaps",
            Err(_) => rule,
        };
        format!("-{abbrev}")
    };
    let short_naive = |id: String| id.replace("spns-naive", "naive");
    t.rows
        .iter()
        .map(|row| short_naive(short(&row[0].display())))
        .collect()
}

fn loss_chart(t: &Table) -> BarChart {
    BarChart::new(
        "Declared / true losses",
        "declared / true losses",
        arm_labels(t),
    )
    .with_group("declared / true", column(t, 6))
}

fn speed_chart(t: &Table) -> BarChart {
    BarChart::new(
        "Speed relative to SPNS with the report's rules",
        "speed change (%)",
        arm_labels(t),
    )
    .with_group("speed vs spns-report", column(t, 3))
}
