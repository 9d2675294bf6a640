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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
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
}

impl Axis {
    /// A linear axis fitted to the data.
    pub fn new(label: impl Into<String>) -> Axis {
        Axis {
            label: label.into(),
            log: false,
            range: None,
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
    pub fn points(&self) -> impl Iterator<Item = &(f64, f64)> + '_ {
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
        let all = || series.iter().flat_map(CleanSeries::points);
        let has_data = all().next().is_some();
        let (xr, x_note) = choose_range(self.x.log, self.x.range, extent(all().map(|p| p.0)), "x");
        let (yr, y_note) = choose_range(self.y.log, self.y.range, extent(all().map(|p| p.1)), "y");
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
        Prepared {
            series,
            x,
            y,
            notes,
            has_data,
        }
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
