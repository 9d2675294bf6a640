//! Line, scatter and step (CDF) plots: the data model and its cleaning.
//!
//! Drawing lives in [`crate::lineplot`]; this module turns caller data into
//! finite, axis-transformed points plus human-readable notes about anything
//! that had to be dropped.

use crate::chart::{self, Render, DEFAULT_SVG_SIZE};
use crate::error::ReportError;
use crate::scale::{choose_range, Scale};
use crate::stats;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// One named sequence of `(x, y)` points.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Legend text; series with an empty label get no legend entry.
    pub label: String,
    /// The data, in the caller's order (lines are drawn in this order).
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// Creates a series.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Series {
        Series {
            label: label.into(),
            points,
        }
    }
}

/// How the series of a [`Plot`] are drawn.
///
/// Non-exhaustive: more kinds (areas, error bars) may come; callers pick one, they do not
/// need to match on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum PlotKind {
    /// Points joined by straight lines, with a few markers to tell series apart.
    Line,
    /// Markers only.
    Scatter,
    /// A staircase (horizontal, then vertical), as for empirical CDFs; the
    /// last step is extended to the right edge of the plot.
    Step,
}

/// One axis of a [`Plot`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Axis {
    /// Axis title including the unit, e.g. `"time (s)"`.
    pub label: String,
    /// Logarithmic (base 10) axis; values `<= 0` are dropped with a note.
    pub log: bool,
    /// Fixed `(min, max)` in data units; `None` fits the data. An invalid
    /// range (`min >= max`, non-finite, or `<= 0` on a log axis) is ignored
    /// with a note.
    pub range: Option<(f64, f64)>,
    /// Why this linear axis may start away from 0. `None` (the default): an
    /// axis fitted to the data includes 0, because an axis cut just below
    /// the data turns a 5 % difference into a bar of several times the
    /// length. The reason is printed under the chart.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zoom: Option<String>,
    /// y axes only: clip the axis at this multiple of the median absolute
    /// value, so one far-out point does not squash the others; points
    /// beyond are drawn at the edge, labelled with their values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clip_at_median: Option<f64>,
}

impl Axis {
    /// A linear axis fitted to the data.
    pub fn new(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            log: false,
            range: None,
            zoom: None,
            clip_at_median: None,
        }
    }
    /// A logarithmic axis fitted to the data.
    pub fn log(label: impl Into<String>) -> Axis {
        Axis {
            log: true,
            ..Axis::new(label)
        }
    }
    /// Same axis with a fixed range.
    pub fn with_range(mut self, min: f64, max: f64) -> Axis {
        self.range = Some((min, max));
        self
    }
    /// Same axis fitted tightly to the data instead of including 0, for the
    /// given reason (printed under the chart).
    pub fn zoomed(mut self, reason: impl Into<String>) -> Axis {
        self.zoom = Some(reason.into());
        self
    }
    /// Same axis clipped at `k` times the median absolute value (y only;
    /// see [`Axis::clip_at_median`]).
    pub fn clipped_at_median(mut self, k: f64) -> Axis {
        self.clip_at_median = Some(k);
        self
    }
    /// Whether a fitted range is anchored at 0 (linear, not zoomed).
    fn anchored(&self) -> bool {
        !self.log && self.zoom.is_none()
    }
}

/// A point beyond a clipped y axis: drawn at the edge with its value.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Clipped {
    /// Series index.
    pub series: usize,
    /// Where it is drawn (transformed space, at the axis edge).
    pub at: (f64, f64),
    /// Its real y value.
    pub value: f64,
}

/// A 2-D plot with any number of series.
///
/// Rendering never panics on degenerate data: empty series, NaN/∞ values,
/// single points and all-equal values all produce a valid image, with a note
/// under the chart about any value that could not be shown (see
/// [`Plot::data_notes`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plot {
    /// Title drawn above the chart.
    pub title: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// Line, scatter or step.
    pub kind: PlotKind,
    /// The data; each series gets its own colour and marker shape.
    pub series: Vec<Series>,
}

/// A series after cleaning: finite points in transformed (log10) space,
/// split into runs where a value had to be dropped (lines break there).
#[derive(Debug, Clone)]
pub(crate) struct CleanSeries {
    pub label: String,
    pub runs: Vec<Vec<(f64, f64)>>,
}

impl CleanSeries {
    /// All points, ignoring the breaks.
    pub(crate) fn points(&self) -> impl Iterator<Item = &(f64, f64)> + '_ {
        self.runs.iter().flatten()
    }
}

/// Everything the renderer needs: clean series, scales and notes.
#[derive(Debug, Clone)]
pub(crate) struct Prepared {
    pub series: Vec<CleanSeries>,
    pub x: Scale,
    pub y: Scale,
    pub notes: Vec<String>,
    pub has_data: bool,
    /// Points moved to the edge of a clipped y axis.
    pub clipped: Vec<Clipped>,
}

/// Counters of dropped values, turned into notes.
#[derive(Default)]
struct Dropped {
    non_finite: usize,
    log_x: usize,
    log_y: usize,
    outside: usize,
}

fn extent(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((v.min(lo), v.max(hi))),
    })
}

impl Plot {
    /// An empty plot with linear axes.
    pub fn new(
        title: impl Into<String>,
        x_label: impl Into<String>,
        y_label: impl Into<String>,
        kind: PlotKind,
    ) -> Plot {
        Plot {
            title: title.into(),
            x: Axis::new(x_label),
            y: Axis::new(y_label),
            kind,
            series: Vec::new(),
        }
    }

    /// Adds a series (builder style).
    pub fn with_series(mut self, label: impl Into<String>, points: Vec<(f64, f64)>) -> Plot {
        self.series.push(Series::new(label, points));
        self
    }

    /// Empirical CDFs of several samples, one step series per label, with
    /// y axis `"fraction"` fixed to `[0, 1]` (slightly padded).
    ///
    /// Non-finite samples are dropped (see [`stats::ecdf`]); each curve starts
    /// at `(min, 0)` so the first jump is visible.
    pub fn cdf(
        title: impl Into<String>,
        x_label: impl Into<String>,
        samples_by_label: Vec<(String, Vec<f64>)>,
    ) -> Plot {
        let series = samples_by_label
            .into_iter()
            .map(|(label, samples)| {
                let ecdf = stats::ecdf(&samples);
                let mut points = Vec::with_capacity(ecdf.len() + 1);
                if let Some(&(x0, _)) = ecdf.first() {
                    points.push((x0, 0.0));
                }
                points.extend(ecdf);
                Series { label, points }
            })
            .collect();
        Plot {
            title: title.into(),
            x: Axis::new(x_label),
            y: Axis::new("fraction").with_range(-0.02, 1.02),
            kind: PlotKind::Step,
            series,
        }
    }

    /// Human-readable notes about values that cannot be shown (non-finite,
    /// non-positive on a log axis, outside a fixed range) or ignored settings.
    /// The same notes are printed under the rendered chart.
    pub fn data_notes(&self) -> Vec<String> {
        self.prepare(6, 6).notes
    }

    /// Cleans the data and computes scales with about the given tick counts.
    pub(crate) fn prepare(&self, x_ticks: usize, y_ticks: usize) -> Prepared {
        let mut dropped = Dropped::default();
        let mut series: Vec<CleanSeries> = self
            .series
            .iter()
            .map(|s| CleanSeries {
                label: s.label.clone(),
                runs: self.clean_points(&s.points, &mut dropped),
            })
            .collect();
        let clipped = self.clip_y(&mut series);
        let all = || series.iter().flat_map(CleanSeries::points);
        let has_data = all().next().is_some();
        let x_data = extent(all().map(|p| p.0));
        let y_data = extent(all().map(|p| p.1));
        let (xr, x_note) = choose_range(self.x.log, self.x.range, x_data, "x", self.x.anchored());
        let (yr, y_note) = choose_range(self.y.log, self.y.range, y_data, "y", self.y.anchored());
        let x = Scale::new(self.x.log, xr.0, xr.1, x_ticks);
        let y = Scale::new(self.y.log, yr.0, yr.1, y_ticks);
        for s in &mut series {
            let inside = |p: &(f64, f64)| x.contains(p.0) && y.contains(p.1);
            dropped.outside += s.points().filter(|p| !inside(p)).count();
            if self.kind == PlotKind::Scatter {
                s.runs.iter_mut().for_each(|r| r.retain(inside));
            }
        }
        let mut notes = dropped.notes(self.kind);
        notes.extend(x_note);
        notes.extend(y_note);
        for (axis, name) in [(&self.x, "x"), (&self.y, "y")] {
            if let (Some(reason), None) = (&axis.zoom, axis.range) {
                notes.push(format!("{name} axis does not start at 0: {reason}"));
            }
        }
        if !clipped.is_empty() {
            notes.push(format!(
                "{} point(s) beyond {}x the median |y| drawn at the axis edge with their values",
                clipped.len(),
                self.y.clip_at_median.unwrap_or(0.0)
            ));
        }
        Prepared {
            series,
            x,
            y,
            notes,
            has_data,
            clipped,
        }
    }

    /// Moves points beyond `clip_at_median` × the median |y| to the edge
    /// (linear y axes without a fixed range only) and returns them.
    fn clip_y(&self, series: &mut [CleanSeries]) -> Vec<Clipped> {
        let Some(k) = self.y.clip_at_median.filter(|k| k.is_finite() && *k > 0.0) else {
            return Vec::new();
        };
        if self.y.log || self.y.range.is_some() {
            return Vec::new();
        }
        let abs: Vec<f64> = series
            .iter()
            .flat_map(CleanSeries::points)
            .map(|p| p.1.abs())
            .collect();
        let bound = match stats::median(&abs) {
            Some(m) if m > 0.0 => k * m,
            _ => return Vec::new(),
        };
        let mut out = Vec::new();
        for (i, s) in series.iter_mut().enumerate() {
            for p in s.runs.iter_mut().flatten() {
                if p.1.abs() > bound {
                    let value = p.1;
                    p.1 = bound.copysign(value);
                    out.push(Clipped {
                        series: i,
                        at: *p,
                        value,
                    });
                }
            }
        }
        out
    }

    /// Keeps the points that can be drawn, transformed to axis space, as
    /// runs separated where a point was dropped.
    fn clean_points(&self, points: &[(f64, f64)], dropped: &mut Dropped) -> Vec<Vec<(f64, f64)>> {
        let mut runs = vec![Vec::new()];
        for &(x, y) in points {
            let finite = Scale::forward(false, x).and(Scale::forward(false, y));
            let tx = Scale::forward(self.x.log, x);
            let ty = Scale::forward(self.y.log, y);
            match (finite, tx, ty) {
                (Some(_), Some(tx), Some(ty)) => {
                    if let Some(run) = runs.last_mut() {
                        run.push((tx, ty));
                    }
                    continue;
                }
                (None, _, _) => dropped.non_finite += 1,
                (_, None, _) => dropped.log_x += 1,
                (_, _, None) => dropped.log_y += 1,
            }
            if runs.last().is_some_and(|r| !r.is_empty()) {
                runs.push(Vec::new());
            }
        }
        runs.retain(|r| !r.is_empty());
        runs
    }

    /// Renders an SVG of the given size (in pixels) to `path`.
    pub fn render_svg_sized(&self, path: &Path, size: (u32, u32)) -> Result<(), ReportError> {
        chart::write_svg(self, path, size)
    }

    /// Renders the plot as an SVG string of the given size (for embedding).
    pub fn to_svg_string(&self, width: u32, height: u32) -> Result<String, ReportError> {
        chart::svg_string(self, width, height).map_err(|message| ReportError::Render {
            path: "<string>".into(),
            message,
        })
    }

    /// Renders an SVG of [`DEFAULT_SVG_SIZE`] to `path`, creating parent dirs.
    pub fn render_svg(&self, path: &Path) -> Result<(), ReportError> {
        chart::write_svg(self, path, DEFAULT_SVG_SIZE)
    }

    /// Renders a `width`×`height` PNG to `path`, creating parent dirs. Text
    /// uses an embedded font, so no system fonts are needed.
    pub fn render_png(&self, path: &Path, width: u32, height: u32) -> Result<(), ReportError> {
        chart::write_png(self, path, width, height)
    }
}

impl Render for Plot {
    fn render_svg(&self, path: &Path) -> Result<(), ReportError> {
        Plot::render_svg(self, path)
    }
    fn render_png(&self, path: &Path, width: u32, height: u32) -> Result<(), ReportError> {
        Plot::render_png(self, path, width, height)
    }
}

impl Dropped {
    fn notes(&self, kind: PlotKind) -> Vec<String> {
        let mut notes = Vec::new();
        if self.non_finite > 0 {
            notes.push(format!(
                "{} point(s) with NaN or infinite values omitted",
                self.non_finite
            ));
        }
        for (n, axis) in [(self.log_x, "x"), (self.log_y, "y")] {
            if n > 0 {
                notes.push(format!(
                    "{n} point(s) with {axis} <= 0 omitted (log {axis} axis)"
                ));
            }
        }
        if self.outside > 0 {
            let what = if kind == PlotKind::Scatter {
                "not shown"
            } else {
                "clipped"
            };
            notes.push(format!(
                "{} point(s) outside the fixed axis range {what}",
                self.outside
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fig. 4b as the SPNS run drew it: a speed axis from 5,430 kB/s made a
    /// 5 % difference look like a factor of several.
    #[test]
    fn fitted_value_axes_include_zero_unless_zoomed() {
        let pts = vec![(2.0, 5430.0), (32.0, 5700.0)];
        let plot = Plot::new("speed", "limit", "speed (kB/s)", PlotKind::Line)
            .with_series("SPNS", pts.clone());
        let p = plot.prepare(6, 6);
        assert_eq!(p.y.lo, 0.0);
        assert_eq!(p.x.lo, 0.0);
        assert!(p.notes.is_empty(), "{:?}", p.notes);
        let mut zoomed = plot;
        zoomed.y = zoomed.y.zoomed("the 1 % effect is the point");
        let p = zoomed.prepare(6, 6);
        assert!(p.y.lo > 5000.0, "{}", p.y.lo);
        assert!(p.notes[0].contains("does not start at 0: the 1 % effect"));
    }

    /// Fig. 10 of XLINK with one configuration far below the others.
    #[test]
    fn clipped_axis_keeps_the_rest_readable_and_labels_the_outlier() {
        let mut plot = Plot::new("fig10", "cost (%)", "reduction (%)", PlotKind::Scatter);
        for (l, y) in [("a", 60.0), ("b", 70.0), ("c", 80.0), ("single", -2000.0)] {
            plot = plot.with_series(l, vec![(1.0, y)]);
        }
        let unclipped = plot.prepare(6, 6);
        assert!(unclipped.y.lo < -2000.0);
        plot.y = plot.y.clipped_at_median(3.0);
        let p = plot.prepare(6, 6);
        // Median |y| = 75; the axis ends near -225, not -2000.
        assert!(p.y.lo > -260.0 && p.y.lo <= -225.0, "{}", p.y.lo);
        assert_eq!(p.clipped.len(), 1);
        assert_eq!((p.clipped[0].series, p.clipped[0].value), (3, -2000.0));
        assert!(p.y.contains(p.clipped[0].at.1));
        assert!(p.notes.iter().any(|n| n.contains("1 point(s) beyond 3x")));
        let svg = plot.to_svg_string(640, 400).expect("svg");
        assert!(svg.contains("-2000 (off scale)"), "label missing");
        // Nothing to clip: no change.
        let mut calm =
            Plot::new("t", "x", "y", PlotKind::Scatter).with_series("a", vec![(1.0, 2.0)]);
        calm.y = calm.y.clipped_at_median(3.0);
        assert!(calm.prepare(6, 6).clipped.is_empty());
    }
}
