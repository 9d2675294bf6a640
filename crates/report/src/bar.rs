//! Grouped bar charts.

use crate::chart::{self, best_corner, color, err, Draw, Render, Theme, DEFAULT_SVG_SIZE};
use crate::error::ReportError;
use crate::lineplot::{build_chart, draw_legend, draw_mesh, legend_glyph_width, y_label_area};
use crate::scale::Scale;
use plotters::coord::Shift;
use plotters::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Fraction of a category slot covered by its bars.
const GROUP_WIDTH: f64 = 0.8;

/// A grouped bar chart: one cluster per category, one bar per group.
///
/// `groups[g].1[c]` is the value of group `g` in category `c`. Missing
/// values (a group vector shorter than `categories`) and non-finite values
/// leave a gap and are mentioned in a note under the chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BarChart {
    /// Title drawn above the chart.
    pub title: String,
    /// Vertical axis title including the unit.
    pub y_label: String,
    /// Category names along the x axis.
    pub categories: Vec<String>,
    /// `(legend label, one value per category)`.
    pub groups: Vec<(String, Vec<f64>)>,
}

impl BarChart {
    /// A bar chart with no groups yet.
    pub fn new(
        title: impl Into<String>,
        y_label: impl Into<String>,
        categories: Vec<String>,
    ) -> BarChart {
        BarChart {
            title: title.into(),
            y_label: y_label.into(),
            categories,
            groups: Vec::new(),
        }
    }

    /// Adds a group of bars (builder style).
    pub fn with_group(mut self, label: impl Into<String>, values: Vec<f64>) -> BarChart {
        self.groups.push((label.into(), values));
        self
    }

    /// Notes about values that cannot be drawn; also printed under the chart.
    pub fn data_notes(&self) -> Vec<String> {
        let n = self.categories.len();
        let mut notes = Vec::new();
        let bad: usize = self
            .groups
            .iter()
            .map(|(_, v)| v.iter().take(n).filter(|x| !shown(**x)).count())
            .sum();
        if bad > 0 {
            notes.push(format!("{bad} NaN or infinite value(s) omitted"));
        }
        for (label, values) in &self.groups {
            if values.len() != n {
                notes.push(format!(
                    "group \"{label}\" has {} value(s) for {n} categories",
                    values.len()
                ));
            }
        }
        notes
    }

    /// Finite values as `(group, category, value)`.
    fn bars(&self) -> impl Iterator<Item = (usize, usize, f64)> + '_ {
        let n = self.categories.len();
        self.groups
            .iter()
            .enumerate()
            .flat_map(move |(g, (_, values))| {
                values
                    .iter()
                    .take(n)
                    .enumerate()
                    .filter(|(_, v)| shown(**v))
                    .map(move |(c, v)| (g, c, *v))
            })
    }

    /// The value axis: always includes zero, padded away from it.
    fn y_scale(&self, ticks: usize) -> Scale {
        let (lo, hi) = self.bars().fold((0.0f64, 0.0f64), |(lo, hi), (_, _, v)| {
            (lo.min(v), hi.max(v))
        });
        let span = hi - lo;
        let (lo, hi) = if span > 0.0 {
            let lo = if lo < 0.0 { lo - 0.06 * span } else { 0.0 };
            let hi = if hi > 0.0 { hi + 0.06 * span } else { 0.0 };
            (lo, hi)
        } else {
            (0.0, 1.0)
        };
        Scale::new(false, lo, hi, ticks)
    }

    /// The category axis, with labels shortened to fit their slot.
    fn x_scale(&self, theme: &Theme, plot_width: f64) -> Scale {
        let n = self.categories.len().max(1);
        let mut scale = Scale::new(false, -0.5, n as f64 - 0.5, 1);
        let slot = plot_width / n as f64;
        let max_chars = ((slot / (theme.tick_px() * 0.6)).floor() as usize).max(2);
        scale.major = self
            .categories
            .iter()
            .enumerate()
            .map(|(i, c)| (i as f64, shorten(c, max_chars)))
            .collect();
        scale.minor.clear();
        scale
    }

    /// Renders an SVG of the given size to `path`.
    pub fn render_svg_sized(&self, path: &Path, size: (u32, u32)) -> Result<(), ReportError> {
        chart::write_svg(self, path, size)
    }

    /// Renders an SVG of [`DEFAULT_SVG_SIZE`] to `path`, creating parent dirs.
    pub fn render_svg(&self, path: &Path) -> Result<(), ReportError> {
        chart::write_svg(self, path, DEFAULT_SVG_SIZE)
    }

    /// Renders a `width`×`height` PNG to `path`, creating parent dirs.
    pub fn render_png(&self, path: &Path, width: u32, height: u32) -> Result<(), ReportError> {
        chart::write_png(self, path, width, height)
    }
}

impl Render for BarChart {
    fn render_svg(&self, path: &Path) -> Result<(), ReportError> {
        BarChart::render_svg(self, path)
    }
    fn render_png(&self, path: &Path, width: u32, height: u32) -> Result<(), ReportError> {
        BarChart::render_png(self, path, width, height)
    }
}

fn shown(v: f64) -> bool {
    v.is_finite() && v.abs() <= crate::scale::MAX_ABS
}

/// Cuts `s` to at most `max` characters, ending in an ellipsis if cut.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

impl Draw for BarChart {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        theme: &Theme,
    ) -> Result<(), String> {
        root.fill(&WHITE).map_err(err)?;
        let y = self.y_scale(theme.ticks(f64::from(theme.height) * 0.7, 55.0));
        let plot_width = f64::from(theme.width)
            - f64::from(y_label_area(&y, theme))
            - 4.0 * f64::from(theme.margin());
        let x = self.x_scale(theme, plot_width);
        let area = chart::notes_area(root, &self.data_notes(), theme)?;
        let mut chart = build_chart(&area, &self.title, (&x, &y), theme)?;
        draw_mesh(&mut chart, (&x, &y), ("", &self.y_label), theme, false)?;
        let groups = self.groups.len().max(1) as f64;
        let width = GROUP_WIDTH / groups;
        let mut occupied = Vec::new();
        let (xw, yw) = (x.hi - x.lo, y.hi - y.lo);
        for (g, (label, _)) in self.groups.iter().enumerate() {
            let fill = color(g).filled();
            let bars: Vec<(f64, f64, f64)> = self
                .bars()
                .filter(|b| b.0 == g)
                .map(|(_, c, v)| {
                    let x0 = c as f64 - GROUP_WIDTH / 2.0 + g as f64 * width;
                    (x0, x0 + width * 0.92, v)
                })
                .collect();
            for &(x0, _, v) in &bars {
                occupied.extend((0..=4).map(|k| {
                    let yv = v * f64::from(k) / 4.0;
                    ((x0 - x.lo) / xw, (yv - y.lo) / yw)
                }));
            }
            let anno = chart
                .draw_series(
                    bars.into_iter()
                        .map(|(x0, x1, v)| Rectangle::new([(x0, 0.0), (x1, v)], fill)),
                )
                .map_err(err)?;
            if !label.is_empty() {
                let gw = legend_glyph_width(theme);
                let h = (theme.legend_px() * 0.4) as i32;
                anno.label(label.as_str()).legend(move |(px, py)| {
                    Rectangle::new([(px, py - h), (px + gw, py + h)], fill)
                });
            }
        }
        if self.groups.iter().any(|(l, _)| !l.is_empty()) {
            draw_legend(&mut chart, best_corner(&occupied), theme)?;
        }
        if self.bars().next().is_none() {
            chart::draw_no_data(&chart.plotting_area().strip_coord_spec(), theme)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_value_axes_start_at_zero() {
        let chart = BarChart::new("speed", "speed (kB/s)", vec!["MPNS".into(), "SPNS".into()])
            .with_group("speed", vec![5700.0, 5430.0]);
        let y = chart.y_scale(6);
        assert_eq!(y.lo, 0.0);
        assert!(y.hi >= 5700.0);
    }
}
