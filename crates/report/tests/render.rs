//! Rendering plots and bar charts to SVG and PNG files.

mod common;

use common::{decode_png, non_background_pixels, pixels_of, temp_dir};
use mpquic_report::{Axis, BarChart, Plot, PlotKind, ReportError, Series};
use std::path::Path;

/// First series colour (Okabe–Ito blue).
const BLUE: [u8; 3] = [0x00, 0x72, 0xB2];

fn check_svg(path: &Path, texts: &[&str]) {
    let svg = std::fs::read_to_string(path).unwrap();
    assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
    for t in texts {
        assert!(svg.contains(t), "{} lacks {t:?}", path.display());
    }
}

fn check_png(path: &Path, w: u32, h: u32) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let (pw, ph, _, _) = decode_png(path);
    assert_eq!((pw, ph), (w, h));
    let ink = non_background_pixels(path);
    assert!(
        ink > (w * h / 100) as usize,
        "{} looks blank: {ink} px",
        path.display()
    );
}

fn render_both(plot: &Plot, dir: &Path, stem: &str, texts: &[&str]) {
    let svg = dir.join(format!("{stem}.svg"));
    let png = dir.join(format!("{stem}.png"));
    plot.render_svg(&svg).unwrap();
    plot.render_png(&png, 640, 400).unwrap();
    check_svg(&svg, texts);
    check_png(&png, 640, 400);
}

#[test]
fn line_plot() {
    let dir = temp_dir("line");
    let plot = Plot::new(
        "Goodput over time",
        "time (s)",
        "goodput (Mbit/s)",
        PlotKind::Line,
    )
    .with_series(
        "path A",
        (0..50)
            .map(|i| (f64::from(i) * 0.1, f64::from(i % 7)))
            .collect(),
    )
    .with_series(
        "path B",
        (0..50).map(|i| (f64::from(i) * 0.1, 3.0)).collect(),
    );
    render_both(
        &plot,
        &dir,
        "line",
        &[
            "Goodput over time",
            "time (s)",
            "goodput (Mbit/s)",
            "path A",
            "path B",
        ],
    );
    assert!(
        pixels_of(&dir.join("line.png"), BLUE) > 100,
        "first series not drawn in blue"
    );
    assert!(plot.data_notes().is_empty());
}

#[test]
fn scatter_plot_with_log_axes() {
    let dir = temp_dir("scatter");
    let plot = Plot {
        title: "RTT vs loss".into(),
        x: Axis::log("RTT (ms)"),
        y: Axis::log("loss rate (-)"),
        kind: PlotKind::Scatter,
        series: vec![Series::new(
            "runs",
            vec![(1.0, 1e-4), (10.0, 1e-3), (100.0, 1e-2), (1000.0, 0.5)],
        )],
    };
    render_both(
        &plot,
        &dir,
        "scatter",
        &[
            "RTT vs loss",
            "RTT (ms)",
            "loss rate (-)",
            "\n100\n",
            "\n1000\n",
            "\n0.0001\n",
        ],
    );
}

#[test]
fn cdf_plot() {
    let dir = temp_dir("cdf");
    let plot = Plot::cdf(
        "Completion time CDF",
        "completion time (s)",
        vec![
            (
                "MPQUIC".to_string(),
                (1..=100).map(|i| f64::from(i) / 50.0).collect(),
            ),
            (
                "QUIC".to_string(),
                (1..=100).map(|i| f64::from(i) / 30.0).collect(),
            ),
        ],
    );
    assert_eq!(plot.kind, PlotKind::Step);
    assert_eq!(plot.y.label, "fraction");
    assert_eq!(plot.series[0].points.first(), Some(&(0.02, 0.0)));
    assert_eq!(plot.series[0].points.last(), Some(&(2.0, 1.0)));
    render_both(
        &plot,
        &dir,
        "cdf",
        &[
            "Completion time CDF",
            "completion time (s)",
            "fraction",
            "MPQUIC",
        ],
    );
}

#[test]
fn bar_chart() {
    let dir = temp_dir("bars");
    let chart = BarChart::new(
        "Median time",
        "time (s)",
        vec!["low BDP".into(), "high BDP".into(), "lossy".into()],
    )
    .with_group("MPQUIC", vec![1.0, 2.0, 3.0])
    .with_group("QUIC", vec![1.5, -0.5, 4.0]);
    let (svg, png) = (dir.join("b/bars.svg"), dir.join("b/bars.png"));
    chart.render_svg(&svg).unwrap();
    chart.render_png(&png, 800, 500).unwrap();
    check_svg(
        &svg,
        &["Median time", "time (s)", "low BDP", "MPQUIC", "QUIC"],
    );
    check_png(&png, 800, 500);
    assert!(pixels_of(&png, BLUE) > 1000);
}

#[test]
fn png_text_is_drawn() {
    // Same plot with and without a long title: the text must add ink, which
    // proves the embedded font works without system fonts.
    let dir = temp_dir("text");
    let base = Plot::new("", "", "", PlotKind::Line).with_series("", vec![(0.0, 0.0), (1.0, 1.0)]);
    let mut titled = base.clone();
    titled.title = "A title with plenty of glyphs WWWW MMMM".into();
    base.render_png(&dir.join("a.png"), 400, 300).unwrap();
    titled.render_png(&dir.join("b.png"), 400, 300).unwrap();
    let (a, b) = (
        non_background_pixels(&dir.join("a.png")),
        non_background_pixels(&dir.join("b.png")),
    );
    assert!(
        b > a + 300,
        "title added only {} pixels",
        b.saturating_sub(a)
    );
}

#[test]
fn degenerate_inputs_render() {
    let dir = temp_dir("degenerate");
    let cases = vec![
        Plot::new("empty", "x (s)", "y (s)", PlotKind::Line),
        Plot::new("empty series", "x", "y", PlotKind::Scatter).with_series("e", vec![]),
        Plot::new("single", "x", "y", PlotKind::Line).with_series("one", vec![(3.0, 4.0)]),
        Plot::new("equal", "x", "y", PlotKind::Step).with_series("c", vec![(2.0, 2.0); 5]),
        Plot::new("nan", "x", "y", PlotKind::Line).with_series(
            "n",
            vec![
                (f64::NAN, 1.0),
                (1.0, f64::INFINITY),
                (f64::NEG_INFINITY, 0.0),
            ],
        ),
        Plot::new("huge", "x", "y", PlotKind::Line)
            .with_series("h", vec![(-1e308, 1e308), (1e308, -1e308)]),
        Plot::new("tiny", "x", "y", PlotKind::Line)
            .with_series("t", vec![(1e-300, 1.0), (2e-300, 1.0 + 1e-15)]),
        Plot {
            title: "log with zeros".into(),
            x: Axis::log("x"),
            y: Axis::log("y").with_range(10.0, 1.0),
            kind: PlotKind::Scatter,
            series: vec![Series::new("z", vec![(0.0, 0.0), (-1.0, 5.0), (1.0, 1.0)])],
        },
        Plot::cdf(
            "cdf",
            "x",
            vec![("none".into(), vec![]), ("nan".into(), vec![f64::NAN])],
        ),
    ];
    for (i, plot) in cases.iter().enumerate() {
        plot.render_svg(&dir.join(format!("{i}.svg"))).unwrap();
        plot.render_png(&dir.join(format!("{i}.png")), 320, 200)
            .unwrap();
    }
    let nan_notes = cases[4].data_notes();
    assert!(
        nan_notes[0].contains("3 point(s) with NaN"),
        "{nan_notes:?}"
    );
    let svg = std::fs::read_to_string(dir.join("4.svg")).unwrap();
    assert!(svg.contains("NaN or infinite values omitted"));
    let log_notes = cases[7].data_notes().join("; ");
    assert!(
        log_notes.contains("x &lt;= 0") || log_notes.contains("x <= 0"),
        "{log_notes}"
    );
    assert!(log_notes.contains("invalid y range"), "{log_notes}");

    let bars = BarChart::new("bars", "v", vec![]).with_group("g", vec![f64::NAN, 1.0]);
    bars.render_png(&dir.join("bars.png"), 300, 200).unwrap();
    let bars =
        BarChart::new("bars", "v", vec!["a".into(), "b".into()]).with_group("g", vec![f64::NAN]);
    bars.render_svg(&dir.join("bars.svg")).unwrap();
    assert_eq!(bars.data_notes().len(), 2);
}

#[test]
fn errors_carry_the_path() {
    let dir = temp_dir("errors");
    let plot = Plot::new("t", "x", "y", PlotKind::Line);
    let bad = dir.join("tiny.png");
    match plot.render_png(&bad, 0, 10) {
        Err(ReportError::Invalid { path, .. }) => assert_eq!(path, bad),
        other => panic!("expected Invalid, got {other:?}"),
    }
    // A file where a directory is needed.
    std::fs::write(dir.join("file"), b"x").unwrap();
    let target = dir.join("file/sub/plot.svg");
    let err = plot.render_svg(&target).unwrap_err();
    assert!(matches!(err, ReportError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("file"), "{err}");
}

#[test]
fn parent_dirs_are_created() {
    let dir = temp_dir("parents");
    let plot =
        Plot::new("t", "x", "y", PlotKind::Line).with_series("s", vec![(0.0, 1.0), (1.0, 2.0)]);
    let deep = dir.join("a/b/c/plot.png");
    plot.render_png(&deep, 200, 150).unwrap();
    assert!(deep.is_file());
}
