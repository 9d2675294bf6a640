//! Property tests: arbitrary (including degenerate) data never panics.

mod common;

use mpquic_report::{stats, Axis, BarChart, Cell, Plot, PlotKind, Series, Table};
use proptest::prelude::*;

fn any_f64() -> impl Strategy<Value = f64> {
    prop_oneof![
        4 => -1e6f64..1e6,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(0.0),
        1 => any::<f64>(),
        1 => Just(1e-300),
    ]
}

fn any_kind() -> impl Strategy<Value = PlotKind> {
    prop_oneof![
        Just(PlotKind::Line),
        Just(PlotKind::Scatter),
        Just(PlotKind::Step)
    ]
}

fn any_axis() -> impl Strategy<Value = Axis> {
    (any::<bool>(), proptest::option::of((any_f64(), any_f64()))).prop_map(|(log, range)| Axis {
        label: "v (u)".into(),
        log,
        range,
        zoom: None,
        clip_at_median: None,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn plots_never_panic(
        kind in any_kind(),
        x in any_axis(),
        y in any_axis(),
        series in proptest::collection::vec(proptest::collection::vec((any_f64(), any_f64()), 0..12), 0..4),
    ) {
        let plot = Plot {
            title: "prop".into(),
            x,
            y,
            kind,
            series: series.into_iter().enumerate().map(|(i, p)| Series::new(format!("s{i}"), p)).collect(),
        };
        let _ = plot.data_notes();
        let svg = plot.to_svg_string(200, 120).unwrap();
        prop_assert!(svg.contains("prop"));
        let dir = common::temp_dir("propplot");
        plot.render_png(&dir.join("p.png"), 160, 100).unwrap();
        drop(dir);
    }

    #[test]
    fn bars_never_panic(values in proptest::collection::vec(proptest::collection::vec(any_f64(), 0..5), 0..3), n in 0usize..4) {
        let mut chart = BarChart::new("b", "v", (0..n).map(|i| format!("c{i}")).collect());
        for (i, v) in values.into_iter().enumerate() {
            chart = chart.with_group(format!("g{i}"), v);
        }
        let dir = common::temp_dir("propbar");
        chart.render_svg(&dir.join("b.svg")).unwrap();
        drop(dir);
    }

    #[test]
    fn stats_are_consistent(samples in proptest::collection::vec(any_f64(), 0..40), p in 0.0f64..100.0) {
        let finite: Vec<f64> = samples.iter().copied().filter(|v| v.is_finite()).collect();
        match stats::percentile(&samples, p) {
            None => prop_assert!(finite.is_empty()),
            Some(v) => {
                let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
                let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                prop_assert!(v >= lo && v <= hi, "{v} outside [{lo}, {hi}]");
            }
        }
        let e = stats::ecdf(&samples);
        prop_assert!(e.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        if let Some(last) = e.last() {
            prop_assert_eq!(last.1, 1.0);
        }
    }

    #[test]
    fn csv_round_trips(rows in proptest::collection::vec(proptest::collection::vec(
        prop_oneof![
            "[a-z ,\"\n]{0,8}".prop_map(Cell::Text),
            (-1e6f64..1e6, 0usize..4).prop_map(|(v, d)| Cell::Num(v, d)),
            Just(Cell::Missing),
        ], 3), 0..5)) {
        let t = Table { title: String::new(), columns: vec!["a".into(), "b".into(), "c".into()], rows };
        let csv = t.to_csv();
        let back = Table::from_csv(&csv).unwrap();
        prop_assert_eq!(back.to_csv(), csv);
    }
}
