//! Tables (CSV, HTML) and the HTML report.

mod common;

use common::temp_dir;
use mpquic_report::{Cell, Figure, HtmlReport, Plot, PlotKind, Section, Table};

fn sample_table() -> Table {
    Table::new(
        "Results",
        vec![
            "stack".into(),
            "median (s)".into(),
            "note, with comma".into(),
        ],
    )
    .with_row(vec![
        Cell::text("MPQUIC"),
        Cell::num(1.23456, 3),
        Cell::text("say \"hi\"\nnext line"),
    ])
    .with_row(vec![Cell::text("QUIC"), Cell::num(-2.0, 0), Cell::Missing])
    .with_row(vec![Cell::text("short row")])
}

#[test]
fn csv_round_trip() {
    let t = sample_table();
    let csv = t.to_csv();
    assert!(
        csv.starts_with("stack,median (s),\"note, with comma\"\n"),
        "{csv}"
    );
    assert!(
        csv.contains("MPQUIC,1.235,\"say \"\"hi\"\"\nnext line\"\n"),
        "{csv}"
    );
    let back = Table::from_csv(&csv).unwrap();
    assert_eq!(back.columns, t.columns);
    assert_eq!(
        back.rows[0],
        vec![
            Cell::text("MPQUIC"),
            Cell::num(1.235, 3),
            Cell::text("say \"hi\"\nnext line")
        ]
    );
    assert_eq!(
        back.rows[1],
        vec![Cell::text("QUIC"), Cell::num(-2.0, 0), Cell::Missing]
    );
    assert_eq!(
        back.rows[2],
        vec![Cell::text("short row"), Cell::Missing, Cell::Missing]
    );
    assert_eq!(back.to_csv(), csv, "second round trip is stable");

    let dir = temp_dir("csv");
    let path = dir.join("nested/t.csv");
    t.write_csv(&path).unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), csv);
}

#[test]
fn table_html_escapes() {
    let t = Table::new("<script>alert(1)</script>", vec!["<b>col</b>".into()])
        .with_row(vec![Cell::text("<script>x()</script> & \"q\"")])
        .with_row(vec![Cell::num(1.5, 2)])
        .with_row(vec![Cell::Missing]);
    let html = t.to_html();
    assert!(!html.contains("<script>"), "{html}");
    assert!(!html.contains("<b>"), "{html}");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(html.contains("&amp; &quot;q&quot;"));
    assert!(html.contains("<td class=\"num\">1.50</td>"));
    assert!(html.contains("class=\"missing\""));
}

#[test]
fn report_references_existing_figures() {
    let dir = temp_dir("report");
    let plot = Plot::new("Plot <script>", "time (s)", "rate (Mbit/s)", PlotKind::Line)
        .with_series("<img src=x onerror=alert(1)>", vec![(0.0, 1.0), (1.0, 2.0)]);
    let fig = Figure::render(&plot, &dir, "figs/rate", "Rate <script>alert(2)</script>").unwrap();
    assert_eq!(fig.svg_path_relative, "figs/rate.svg");
    let mut section = Section::new("Section <script>alert(3)</script>");
    section
        .paragraphs
        .push("Para with <script>alert(4)</script>".into());
    section.tables.push(sample_table());
    section.reference =
        Some(Table::new("Paper", vec!["a".into()]).with_row(vec![Cell::num(1.0, 1)]));
    section.config = Some("seed = 7\nname = \"</pre><script>alert(5)</script>\"".into());
    section.figures.push(fig);
    section
        .figures
        .push(Figure::new("missing.svg", "missing.png", "gone"));
    let report = HtmlReport {
        title: "Report <script>alert(6)</script>".into(),
        sections: vec![section, Section::new("Second")],
    };
    let index = report.write(&dir.join("out/..")).unwrap();
    assert!(index.ends_with("index.html") && index.is_file());
    let html = std::fs::read_to_string(&index).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains("<script"), "unescaped script tag in report");
    assert!(!html.contains("<img src=x"), "unescaped label");
    assert!(html.contains("<style>"), "CSS must be inline");
    assert!(!html.contains("<link"), "no external resources");
    // Every referenced file exists.
    let mut refs = 0;
    for attr in ["src=\"", "srcset=\"", "href=\""] {
        for part in html.split(attr).skip(1) {
            let target = &part[..part.find('"').unwrap()];
            if target.starts_with('#') {
                continue;
            }
            refs += 1;
            assert!(
                dir.join(target).is_file(),
                "{target} referenced but missing"
            );
        }
    }
    assert!(refs >= 4, "expected svg+png references, got {refs}");
    assert!(html.contains("figure file not found: missing.svg"));
    assert!(html.contains("<pre>seed = 7"));
    assert!(html.contains("<summary>Configuration and seed ("));
    assert!(html.contains("Paper (reference)"));
    assert!(html.contains("href=\"#sec-2\""));
}
