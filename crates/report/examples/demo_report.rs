//! Writes a small demonstration report.
//!
//! ```text
//! cargo run -p mpquic-report --example demo_report -- /tmp/demo-report
//! ```
//! then open `/tmp/demo-report/index.html`.

use mpquic_report::{
    stats, Axis, BarChart, Cell, Figure, HtmlReport, Plot, PlotKind, ReportError, Section, Series,
    Table,
};
use std::path::PathBuf;

/// Deterministic demo data from the workspace's one seeded RNG helper
/// (`mpquic_netsim::rng::stream_rng`, ChaCha20).
struct DemoRng(rand_chacha::ChaCha20Rng);

impl DemoRng {
    /// Uniform in [0, 1).
    fn next(&mut self) -> f64 {
        rand::Rng::gen(&mut self.0)
    }
    /// Log-normal-ish positive sample around `median`.
    fn around(&mut self, median: f64, spread: f64) -> f64 {
        let z: f64 = (0..6).map(|_| self.next()).sum::<f64>() - 3.0;
        median * (spread * z).exp()
    }
}

fn goodput_section(dir: &std::path::Path, rng: &mut DemoRng) -> Result<Section, ReportError> {
    let t: Vec<f64> = (0..=200).map(|i| f64::from(i) * 0.05).collect();
    let wifi: Vec<(f64, f64)> = t
        .iter()
        .map(|&x| (x, 18.0 + 4.0 * (x * 1.3).sin() + rng.next()))
        .collect();
    let lte: Vec<(f64, f64)> = t
        .iter()
        .map(|&x| {
            (
                x,
                if x < 4.0 {
                    9.0 + rng.next()
                } else {
                    2.0 + rng.next()
                },
            )
        })
        .collect();
    let total: Vec<(f64, f64)> = wifi
        .iter()
        .zip(&lte)
        .map(|(a, b)| (a.0, a.1 + b.1))
        .collect();
    let plot = Plot::new(
        "Goodput per path, handover at t = 4 s",
        "time (s)",
        "goodput (Mbit/s)",
        PlotKind::Line,
    )
    .with_series("path 0 (Wi-Fi)", wifi)
    .with_series("path 1 (LTE)", lte)
    .with_series("aggregate", total.clone());
    let mut s = Section::new("Bulk transfer over two paths");
    s.paragraphs.push(
        "A 20 MB download over Wi-Fi (20 Mbit/s, 15 ms) and LTE (10 Mbit/s, 40 ms); LTE degrades at t = 4 s."
            .into(),
    );
    s.figures.push(Figure::render(
        &plot,
        dir,
        "figures/goodput",
        "Goodput of each path and in total",
    )?);
    let g: Vec<f64> = total.iter().map(|p| p.1).collect();
    let summary = stats::summary(&g).expect("non-empty");
    s.tables.push(
        Table::new(
            "Aggregate goodput (this run)",
            vec!["metric".into(), "value (Mbit/s)".into()],
        )
        .with_row(vec![Cell::text("mean"), Cell::num(summary.mean, 2)])
        .with_row(vec![Cell::text("median"), Cell::num(summary.median, 2)])
        .with_row(vec![
            Cell::text("95th percentile"),
            Cell::num(summary.p95, 2),
        ])
        .with_row(vec![Cell::text("std. dev."), Cell::num(summary.stddev, 2)]),
    );
    s.reference = Some(
        Table::new(
            "Paper, Fig. 7",
            vec!["metric".into(), "value (Mbit/s)".into()],
        )
        .with_row(vec![Cell::text("mean"), Cell::num(24.1, 1)])
        .with_row(vec![Cell::text("median"), Cell::num(24.9, 1)])
        .with_row(vec![Cell::text("95th percentile"), Cell::Missing])
        .with_row(vec![Cell::text("std. dev."), Cell::Missing]),
    );
    s.config = Some("scenario = \"handover\"\nseed = 42\npaths = [\n  { bw_mbps = 20, rtt_ms = 15, loss = 0.0 },\n  { bw_mbps = 10, rtt_ms = 40, loss = 0.01 },\n]\nscheduler = \"lowest-rtt\"".into());
    Ok(s)
}

fn completion_section(dir: &std::path::Path, rng: &mut DemoRng) -> Result<Section, ReportError> {
    let mp: Vec<f64> = (0..300).map(|_| rng.around(1.2, 0.25)).collect();
    let sp: Vec<f64> = (0..300).map(|_| rng.around(2.0, 0.45)).collect();
    let tcp: Vec<f64> = (0..300).map(|_| rng.around(2.6, 0.6)).collect();
    let cdf = Plot::cdf(
        "Download completion time, 300 runs",
        "completion time (s)",
        vec![
            ("MPQUIC".into(), mp.clone()),
            ("QUIC, best path".into(), sp.clone()),
            ("MPTCP".into(), tcp.clone()),
        ],
    );
    let mut cdf_log = cdf.clone();
    cdf_log.title = "Same data, log time axis".into();
    cdf_log.x.log = true;
    let scenarios = [
        "low-BDP, no loss",
        "low-BDP, losses",
        "high-BDP, no loss",
        "high-BDP, losses",
    ];
    let mut bars = BarChart::new(
        "Median completion time by scenario",
        "completion time (s)",
        scenarios.iter().map(|s| s.to_string()).collect(),
    );
    for (label, base) in [("MPQUIC", 1.0), ("QUIC", 1.6), ("MPTCP", 1.9)] {
        bars = bars.with_group(
            label,
            (0..4)
                .map(|i| base * (1.0 + 0.3 * f64::from(i)) * (0.9 + 0.2 * rng.next()))
                .collect(),
        );
    }
    let scatter = Plot {
        title: "Per-run speedup vs. RTT ratio".into(),
        x: Axis::log("RTT ratio slow/fast path (–)"),
        y: Axis::new("speedup over best single path (×)"),
        kind: PlotKind::Scatter,
        series: vec![
            Series::new(
                "no loss",
                (0..80)
                    .map(|_| {
                        let r = 10f64.powf(2.0 * rng.next());
                        (r, 1.9 - 0.35 * r.log10() + 0.2 * rng.next())
                    })
                    .collect(),
            ),
            Series::new(
                "1% loss",
                (0..80)
                    .map(|_| {
                        let r = 10f64.powf(2.0 * rng.next());
                        (r, 1.6 - 0.3 * r.log10() + 0.3 * rng.next())
                    })
                    .collect(),
            ),
        ],
    };
    let mut s = Section::new("Download completion time");
    s.paragraphs.push(
        "Empirical CDFs over 300 seeded runs per stack; lower and further left is better.".into(),
    );
    s.figures.push(Figure::render(
        &cdf,
        dir,
        "figures/cdf",
        "CDF of completion time",
    )?);
    s.figures.push(Figure::render(
        &cdf_log,
        dir,
        "figures/cdf_log",
        "CDF, logarithmic time axis",
    )?);
    s.figures.push(Figure::render(
        &bars,
        dir,
        "figures/bars",
        "Median completion time per scenario",
    )?);
    s.figures.push(Figure::render(
        &scatter,
        dir,
        "figures/scatter",
        "Speedup against path asymmetry",
    )?);
    let row = |name: &str, v: &[f64]| {
        vec![
            Cell::text(name),
            Cell::opt(stats::median(v), 3),
            Cell::opt(stats::percentile(v, 95.0), 3),
            Cell::opt(stats::mean(v), 3),
        ]
    };
    let cols = vec![
        "stack".into(),
        "median (s)".into(),
        "p95 (s)".into(),
        "mean (s)".into(),
    ];
    s.tables.push(
        Table::new("Completion time", cols.clone())
            .with_row(row("MPQUIC", &mp))
            .with_row(row("QUIC, best path", &sp))
            .with_row(row("MPTCP", &tcp)),
    );
    s.reference = Some(
        Table::new("Paper, Table 3", cols)
            .with_row(vec![
                Cell::text("MPQUIC"),
                Cell::num(1.18, 2),
                Cell::num(1.85, 2),
                Cell::Missing,
            ])
            .with_row(vec![
                Cell::text("QUIC, best path"),
                Cell::num(2.04, 2),
                Cell::num(4.1, 2),
                Cell::Missing,
            ])
            .with_row(vec![
                Cell::text("MPTCP"),
                Cell::num(2.51, 2),
                Cell::num(6.0, 2),
                Cell::Missing,
            ]),
    );
    s.config = Some("runs = 300\nseeds = 1..=300\nfile_size = \"20 MB\"".into());
    Ok(s)
}

fn robustness_section(dir: &std::path::Path) -> Result<Section, ReportError> {
    let messy = Plot::new(
        "Degenerate input: <script>alert(1)</script>",
        "x (<unit>)",
        "y & more",
        PlotKind::Line,
    )
    .with_series(
        "with NaN & inf",
        vec![
            (0.0, 1.0),
            (1.0, f64::NAN),
            (2.0, 3.0),
            (f64::INFINITY, 1.0),
            (3.0, 2.0),
        ],
    )
    .with_series("single point", vec![(1.5, 2.5)])
    .with_series("empty", vec![]);
    let mut flat = Plot::new(
        "All-equal values on a log axis",
        "size (bytes)",
        "count (–)",
        PlotKind::Scatter,
    )
    .with_series("constant", vec![(1000.0, 5.0); 4])
    .with_series("zero size", vec![(0.0, 5.0)]);
    flat.x.log = true;
    let empty = Plot::new("No data at all", "time (s)", "rate (pkt/s)", PlotKind::Line);
    let mut s = Section::new("Robustness of the renderer");
    s.paragraphs
        .push("Labels are escaped: <script>alert('x')</script> shows as text.".into());
    s.figures.push(Figure::render(
        &messy,
        dir,
        "figures/messy",
        "NaN/inf values are dropped with a note",
    )?);
    s.figures.push(Figure::render(
        &flat,
        dir,
        "figures/flat",
        "Constant values get a padded range",
    )?);
    s.figures.push(Figure::render(
        &empty,
        dir,
        "figures/empty",
        "An empty plot",
    )?);
    Ok(s)
}

fn main() -> Result<(), ReportError> {
    let dir = std::env::args()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("target/demo-report"));
    let mut rng = DemoRng(mpquic_netsim::rng::stream_rng(42, "report/demo"));
    let report = HtmlReport {
        title: "mpquic lab — demonstration report".into(),
        sections: vec![
            goodput_section(&dir, &mut rng)?,
            completion_section(&dir, &mut rng)?,
            robustness_section(&dir)?,
        ],
    };
    let index = report.write(&dir)?;
    println!("{}", index.display());
    Ok(())
}
