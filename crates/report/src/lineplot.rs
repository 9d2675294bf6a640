//! Drawing [`Plot`]s with plotters.

use crate::chart::{self, best_corner, color, err, shape, Draw, Marker, Theme};
use crate::plot::{CleanSeries, Plot, PlotKind, Prepared};
use crate::scale::{AxisCoord, Scale};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// At most this many markers are drawn on a line or step series.
const LINE_MARKERS: usize = 10;

type Chart<'a, DB> = ChartContext<'a, DB, Cartesian2d<AxisCoord, AxisCoord>>;
type Pt = (f64, f64);

/// Pixel width reserved left of the plot for y tick labels and the y title.
pub(crate) fn y_label_area(scale: &Scale, theme: &Theme) -> u32 {
    let widest = scale
        .major
        .iter()
        .map(|(_, l)| theme.text_width(l, theme.tick_px()))
        .fold(0.0, f64::max);
    (widest + theme.label_px() * 1.6 + 12.0).ceil() as u32
}

/// Pixel height reserved under the plot for x tick labels and the x title.
pub(crate) fn x_label_area(theme: &Theme) -> u32 {
    (theme.tick_px() * 1.7 + theme.label_px() * 1.7 + 6.0).ceil() as u32
}

/// Applies the common mesh (grid, tick labels, axis titles) to a chart.
pub(crate) fn draw_mesh<DB: DrawingBackend>(
    chart: &mut Chart<'_, DB>,
    (x, y): (&Scale, &Scale),
    (x_desc, y_desc): (&str, &str),
    theme: &Theme,
    x_grid: bool,
) -> Result<(), String> {
    let xf = |v: &f64| x.label(*v);
    let yf = |v: &f64| y.label(*v);
    let mut mesh = chart.configure_mesh();
    mesh.x_desc(x_desc)
        .y_desc(y_desc)
        .x_label_formatter(&xf)
        .y_label_formatter(&yf)
        .label_style(theme.font(theme.tick_px()))
        .axis_desc_style(theme.font(theme.label_px()))
        .bold_line_style(RGBColor(0xd4, 0xd4, 0xd4))
        .light_line_style(RGBColor(0xf0, 0xf0, 0xf0))
        .axis_style(RGBColor(0x40, 0x40, 0x40));
    if !x_grid {
        mesh.disable_x_mesh();
    }
    mesh.draw().map_err(err)
}

/// Builds the chart frame (title, margins, coordinates) on `area`.
pub(crate) fn build_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    title: &str,
    (x, y): (&Scale, &Scale),
    theme: &Theme,
) -> Result<Chart<'a, DB>, String> {
    ChartBuilder::on(area)
        .caption(title, chart::title_font(title, theme))
        .margin(theme.margin())
        .margin_right(theme.margin() * 2)
        .x_label_area_size(x_label_area(theme))
        .y_label_area_size(y_label_area(y, theme))
        .build_cartesian_2d(x.coord(), y.coord())
        .map_err(err)
}

impl Draw for Plot {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        theme: &Theme,
    ) -> Result<(), String> {
        root.fill(&WHITE).map_err(err)?;
        let (w, h) = (f64::from(theme.width), f64::from(theme.height));
        let prep = self.prepare(theme.ticks(w * 0.8, 90.0), theme.ticks(h * 0.7, 55.0));
        let area = chart::notes_area(root, &prep.notes, theme)?;
        let scales = (&prep.x, &prep.y);
        let mut chart = build_chart(&area, &self.title, scales, theme)?;
        draw_mesh(
            &mut chart,
            scales,
            (&self.x.label, &self.y.label),
            theme,
            true,
        )?;
        let mut occupied = Vec::new();
        for (i, s) in prep.series.iter().enumerate() {
            let path = draw_series(&mut chart, self.kind, i, s, &prep, theme)?;
            occupied.extend(normalised_samples(&path, &prep));
        }
        draw_clipped(&mut chart, &prep, theme)?;
        if prep.series.iter().any(|s| !s.label.is_empty()) {
            draw_legend(&mut chart, best_corner(&occupied), theme)?;
        }
        if !prep.has_data {
            chart::draw_no_data(&chart.plotting_area().strip_coord_spec(), theme)?;
        }
        Ok(())
    }
}

/// Labels each point moved to the edge of a clipped axis with its real
/// value, so the chart stays readable without hiding how far out it was.
fn draw_clipped<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    prep: &Prepared,
    theme: &Theme,
) -> Result<(), String> {
    let px = theme.tick_px();
    let gap = theme.marker() * 2;
    for c in &prep.clipped {
        let ink = color(c.series);
        let style = theme
            .font(px)
            .color(&ink)
            .pos(Pos::new(HPos::Left, VPos::Center));
        let text = format!("{} (off scale)", format_value(c.value));
        chart
            .draw_series(std::iter::once(
                EmptyElement::at(c.at) + Text::new(text, (gap, 0), style),
            ))
            .map_err(err)?;
    }
    Ok(())
}

/// A value with about three significant digits.
pub(crate) fn format_value(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// Draws the legend box in `corner`.
pub(crate) fn draw_legend<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    corner: SeriesLabelPosition,
    theme: &Theme,
) -> Result<(), String> {
    chart
        .configure_series_labels()
        .position(corner)
        .label_font(theme.font(theme.legend_px()))
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(0xb0, 0xb0, 0xb0))
        .margin(theme.margin() / 2 + 2)
        .legend_area_size(legend_glyph_width(theme) + theme.margin() / 2)
        .draw()
        .map_err(err)
}

/// Width of the line sample in a legend entry.
pub(crate) fn legend_glyph_width(theme: &Theme) -> i32 {
    (theme.legend_px() * 2.0).round() as i32
}

/// Draws one series and returns the polylines that were drawn (for legend
/// placement).
fn draw_series<'a, DB: DrawingBackend + 'a>(
    chart: &mut Chart<'a, DB>,
    kind: PlotKind,
    i: usize,
    s: &CleanSeries,
    prep: &Prepared,
    theme: &Theme,
) -> Result<Vec<Vec<Pt>>, String> {
    let (c, shp, size) = (color(i), shape(i), theme.marker());
    let xr = (prep.x.lo, prep.x.hi);
    let yr = (prep.y.lo, prep.y.hi);
    let line = c.stroke_width(theme.stroke());
    let inside = |p: &Pt| prep.x.contains(p.0) && prep.y.contains(p.1);
    let (pieces, markers): (Vec<Vec<Pt>>, Vec<Pt>) = match kind {
        PlotKind::Scatter => (s.runs.clone(), s.points().copied().collect()),
        PlotKind::Line | PlotKind::Step => {
            let last = s.runs.len().saturating_sub(1);
            let pieces: Vec<Vec<Pt>> = s
                .runs
                .iter()
                .enumerate()
                .flat_map(|(k, run)| {
                    let path = match kind {
                        // Only the last run extends to the right edge.
                        PlotKind::Step => {
                            step_path(run, if k == last { prep.x.hi } else { f64::MIN })
                        }
                        _ => run.clone(),
                    };
                    clip_polyline(&path, xr, yr)
                })
                .collect();
            chart
                .draw_series(pieces.iter().map(|p| PathElement::new(p.clone(), line)))
                .map_err(err)?;
            let all: Vec<Pt> = s.points().copied().collect();
            (pieces, marker_subset(&all, i))
        }
    };
    let anno = chart
        .draw_series(
            markers
                .into_iter()
                .filter(inside)
                .map(|p| Marker::new(p, shp, size, c)),
        )
        .map_err(err)?;
    if !s.label.is_empty() {
        let gw = legend_glyph_width(theme);
        let with_line = kind != PlotKind::Scatter;
        anno.label(s.label.as_str()).legend(move |(x, y)| {
            let sample = if with_line {
                vec![(0, 0), (gw, 0)]
            } else {
                vec![]
            };
            EmptyElement::at((x, y))
                + PathElement::new(sample, line)
                + Marker::new((gw / 2, 0), shp, size, c)
        });
    }
    Ok(pieces)
}

/// Up to [`LINE_MARKERS`] evenly spaced points, offset per series so markers
/// of overlapping series do not hide each other.
fn marker_subset(points: &[Pt], series: usize) -> Vec<Pt> {
    if points.len() <= LINE_MARKERS {
        return points.to_vec();
    }
    let stride = points.len() / LINE_MARKERS;
    let offset = (series * stride / 3) % stride;
    points
        .iter()
        .skip(offset)
        .step_by(stride)
        .copied()
        .collect()
}

/// Staircase through `points` (horizontal first), extended to `x_end`.
pub(crate) fn step_path(points: &[Pt], x_end: f64) -> Vec<Pt> {
    let mut out = Vec::with_capacity(points.len() * 2 + 1);
    for &p in points {
        if let Some(&(_, prev_y)) = out.last() {
            out.push((p.0, prev_y));
        }
        out.push(p);
    }
    if let Some(&(x, y)) = out.last() {
        if x_end > x {
            out.push((x_end, y));
        }
    }
    out
}

/// Liang–Barsky clipping of segment `a`–`b` to a rectangle.
fn clip_segment(a: Pt, b: Pt, xr: Pt, yr: Pt) -> Option<(Pt, Pt)> {
    let (dx, dy) = (b.0 - a.0, b.1 - a.1);
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    for (p, q) in [
        (-dx, a.0 - xr.0),
        (dx, xr.1 - a.0),
        (-dy, a.1 - yr.0),
        (dy, yr.1 - a.1),
    ] {
        if p == 0.0 {
            if q < 0.0 {
                return None;
            }
            continue;
        }
        let r = q / p;
        if p < 0.0 {
            t0 = t0.max(r);
        } else {
            t1 = t1.min(r);
        }
        if t0 > t1 {
            return None;
        }
    }
    let at = |t: f64| (a.0 + t * dx, a.1 + t * dy);
    let start = if t0 == 0.0 { a } else { at(t0) };
    let end = if t1 == 1.0 { b } else { at(t1) };
    Some((start, end))
}

/// Clips a polyline to a rectangle, splitting it where it leaves.
pub(crate) fn clip_polyline(points: &[Pt], xr: Pt, yr: Pt) -> Vec<Vec<Pt>> {
    let mut out: Vec<Vec<Pt>> = Vec::new();
    for w in points.windows(2) {
        let Some((a, b)) = clip_segment(w[0], w[1], xr, yr) else {
            continue;
        };
        match out.last_mut() {
            Some(cur) if cur.last() == Some(&a) => cur.push(b),
            _ => out.push(vec![a, b]),
        }
    }
    out
}

/// Points along `pieces` in `0..1` plot coordinates, for legend placement.
fn normalised_samples(pieces: &[Vec<Pt>], prep: &Prepared) -> Vec<Pt> {
    let (xw, yw) = (prep.x.hi - prep.x.lo, prep.y.hi - prep.y.lo);
    let norm = |p: Pt| ((p.0 - prep.x.lo) / xw, (p.1 - prep.y.lo) / yw);
    let mut out = Vec::new();
    for piece in pieces {
        let stride = (piece.len() / 500).max(1);
        let sparse: Vec<Pt> = piece.iter().step_by(stride).copied().collect();
        out.extend(sparse.iter().map(|&p| norm(p)));
        for w in sparse.windows(2) {
            let (a, b) = (norm(w[0]), norm(w[1]));
            out.extend((1..8).map(|k| {
                let t = f64::from(k) / 8.0;
                (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1))
            }));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_clipping() {
        let p = step_path(&[(0.0, 0.0), (1.0, 0.5), (2.0, 1.0)], 3.0);
        assert_eq!(
            p,
            vec![
                (0.0, 0.0),
                (1.0, 0.0),
                (1.0, 0.5),
                (2.0, 0.5),
                (2.0, 1.0),
                (3.0, 1.0)
            ]
        );
        let pieces = clip_polyline(
            &[(-1.0, 0.5), (0.5, 0.5), (2.0, 0.5), (0.5, 0.2)],
            (0.0, 1.0),
            (0.0, 1.0),
        );
        assert_eq!(pieces.len(), 2);
        assert_eq!(pieces[0], vec![(0.0, 0.5), (0.5, 0.5), (1.0, 0.5)]);
        let (a, b) = (pieces[1][0], pieces[1][1]);
        assert!(
            (a.0 - 1.0).abs() < 1e-12 && (a.1 - 0.3).abs() < 1e-12,
            "{a:?}"
        );
        assert_eq!(b, (0.5, 0.2));
        assert!(clip_polyline(&[(5.0, 5.0), (6.0, 6.0)], (0.0, 1.0), (0.0, 1.0)).is_empty());
    }
}
