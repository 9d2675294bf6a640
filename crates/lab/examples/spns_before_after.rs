//! Issue 13 figures: one scenario run by several builds ("before" / "after"), each in SPNS and
//! MPNS, compared from the runs' JSON files (`mpquic sim ... --time-series --json FILE`):
//!
//! ```text
//! cargo run --release -p mpquic-lab --example spns_before_after -- OUT \
//!     main=main-spns.json,main-mpns.json after=after-spns.json,after-mpns.json
//! ```
//!
//! Writes `OUT/index.html` with a table (goodput, SPNS/MPNS goodput ratio, declared losses,
//! link drops and spurious retransmissions per path, srtt and true RTT per path), bar charts of
//! the losses and the goodput ratio, and srtt-vs-true-RTT plots of every SPNS run. Link drops
//! are read from the `links` ground truth, so results of older builds (without per-path drop
//! fields) work too.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use mpquic_report::{BarChart, Cell, Figure, HtmlReport, Plot, PlotKind, Section, Table};
use serde_json::Value;

/// One build's two runs.
struct Build {
    label: String,
    spns: Value,
    mpns: Value,
}

fn read(path: &str) -> anyhow::Result<Value> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {path}"))
}

fn num(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or(f64::NAN)
}

/// Packets the download link of the path on interface `iface` dropped.
fn link_drops(run: &Value, iface: u64) -> f64 {
    let name = format!("path{iface}.down");
    let links = run["links"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    links
        .iter()
        .filter(|l| l["name"] == name.as_str())
        .flat_map(|l| ["queue_overflow", "random_loss", "link_down"].map(|c| &l["drops"][c]))
        .map(|c| num(c, "packets"))
        .sum()
}

fn paths(run: &Value) -> &[Value] {
    run["paths"].as_array().map(Vec::as_slice).unwrap_or(&[])
}

fn table(builds: &[Build]) -> Table {
    let cols = [
        "build",
        "design",
        "goodput (Mbit/s)",
        "SPNS / MPNS goodput",
        "path",
        "declared losses",
        "link drops",
        "spurious",
        "srtt at end (ms)",
        "true RTT mean (ms)",
        "srtt MAE (ms)",
    ];
    let mut t = Table::new(
        "Before / after",
        cols.iter().map(|c| c.to_string()).collect(),
    );
    for b in builds {
        let ratio = num(&b.spns, "goodput_mbps") / num(&b.mpns, "goodput_mbps");
        for (design, run) in [("SPNS", &b.spns), ("MPNS", &b.mpns)] {
            for p in paths(run) {
                let iface = p["interface"].as_u64().unwrap_or(0);
                t.rows.push(vec![
                    Cell::text(b.label.clone()),
                    Cell::text(design),
                    Cell::num(num(run, "goodput_mbps"), 2),
                    Cell::num(ratio, 3),
                    Cell::num(num(p, "id"), 0),
                    Cell::num(num(p, "packets_lost"), 0),
                    Cell::num(link_drops(run, iface), 0),
                    Cell::num(num(p, "spurious_losses"), 0),
                    Cell::num(num(p, "srtt_ms"), 1),
                    Cell::num(num(p, "true_rtt_ms"), 1),
                    Cell::num(num(p, "srtt_mae_ms"), 2),
                ]);
            }
        }
    }
    t
}

/// Every build's SPNS paths, then the last build's MPNS paths (MPNS for comparison).
fn loss_chart(builds: &[Build]) -> BarChart {
    let mut categories = Vec::new();
    let (mut declared, mut drops, mut spurious) = (Vec::new(), Vec::new(), Vec::new());
    let spns = builds.iter().map(|b| (b.label.as_str(), &b.spns));
    let mpns = builds.last().map(|b| ("MPNS", &b.mpns));
    for (label, run) in spns.chain(mpns) {
        for p in paths(run) {
            categories.push(format!("{label}/{}", num(p, "id")));
            declared.push(num(p, "packets_lost"));
            drops.push(link_drops(run, p["interface"].as_u64().unwrap_or(0)));
            spurious.push(num(p, "spurious_losses"));
        }
    }
    BarChart::new(
        "Declared losses per path (BUILD/path: SPNS; MPNS/path: last build)",
        "packets",
        categories,
    )
    .with_group("declared lost", declared)
    .with_group("dropped by the link", drops)
    .with_group("spurious", spurious)
}

fn ratio_chart(builds: &[Build]) -> BarChart {
    let labels = builds.iter().map(|b| b.label.clone()).collect();
    let ratios = builds
        .iter()
        .map(|b| num(&b.spns, "goodput_mbps") / num(&b.mpns, "goodput_mbps"))
        .collect();
    BarChart::new("SPNS / MPNS goodput", "goodput ratio", labels).with_group("SPNS / MPNS", ratios)
}

/// srtt and true RTT per path over time of one run (needs `--time-series`).
fn srtt_plot(label: &str, run: &Value) -> Option<Plot> {
    let series = run["time_series"]["rtt"].as_array()?;
    let mut plot = Plot::new(
        format!("{label}: srtt vs true RTT"),
        "time (s)",
        "RTT (ms)",
        PlotKind::Line,
    );
    for s in series {
        let path = num(s, "path");
        let points = s["points"].as_array()?;
        let at = |i: usize| -> Vec<(f64, f64)> {
            points
                .iter()
                .filter_map(|p| Some((p[0].as_f64()?, p[i].as_f64()?)))
                .collect()
        };
        plot = plot
            .with_series(format!("path {path} srtt"), at(1))
            .with_series(format!("path {path} true RTT"), at(2));
    }
    Some(plot)
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((out, specs)) = args.split_first() else {
        bail!("usage: spns_before_after OUT LABEL=SPNS.json,MPNS.json ...");
    };
    let mut builds = Vec::new();
    for spec in specs {
        let (label, files) = spec.split_once('=').context("LABEL=SPNS.json,MPNS.json")?;
        let (spns, mpns) = files.split_once(',').context("LABEL=SPNS.json,MPNS.json")?;
        builds.push(Build {
            label: label.to_owned(),
            spns: read(spns)?,
            mpns: read(mpns)?,
        });
    }
    let dir = PathBuf::from(out);
    std::fs::create_dir_all(dir.join("fig"))?;
    let t = table(&builds);
    t.write_csv(&dir.join("before_after.csv"))?;
    let mut s = Section::new("One scenario, several builds, SPNS and MPNS");
    s.tables.push(t);
    let fig = |chart: &dyn mpquic_report::Render, stem: &str, caption: &str| {
        Figure::render(chart, Path::new(&dir), &format!("fig/{stem}"), caption)
    };
    s.figures.push(fig(
        &loss_chart(&builds),
        "losses",
        "Declared losses, link drops, spurious",
    )?);
    s.figures.push(fig(
        &ratio_chart(&builds),
        "goodput_ratio",
        "SPNS / MPNS goodput",
    )?);
    for b in &builds {
        for (design, run) in [("SPNS", &b.spns), ("MPNS", &b.mpns)] {
            let label = format!("{} {design}", b.label);
            if let Some(plot) = srtt_plot(&label, run) {
                let stem = format!("srtt_{}_{}", b.label, design.to_lowercase());
                s.figures
                    .push(fig(&plot, &stem, &format!("{label}: srtt vs true RTT"))?);
            }
        }
    }
    let report = HtmlReport {
        title: "Issue 13: SPNS phantom losses, before and after".into(),
        sections: vec![s],
    };
    println!("{}", report.write(&dir)?.display());
    Ok(())
}
