//! Rendering infrastructure shared by [`Plot`](crate::Plot) and
//! [`BarChart`](crate::BarChart): sizes, colours, markers, legends and the
//! SVG/PNG output paths.

use crate::error::{write_file, ReportError};
use crate::font::{ensure_fonts, FAMILY};
use plotters::coord::Shift;
use plotters::element::{Drawable, PointCollection};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters_backend::{BackendCoord, DrawingErrorKind};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;

/// Size of SVG output when none is given, in pixels. Fonts and strokes are
/// designed for this size and scale with the output, so a PNG of another
/// aspect-compatible size looks the same, only sharper.
pub const DEFAULT_SVG_SIZE: (u32, u32) = (640, 400);
/// Smallest accepted image side, in pixels.
pub const MIN_SIDE: u32 = 64;
/// Largest accepted image side, in pixels.
pub const MAX_SIDE: u32 = 10_000;

/// Something that can draw itself onto a plotters drawing area.
pub(crate) trait Draw {
    /// Draws the whole figure (background included) onto `root`.
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        theme: &Theme,
    ) -> Result<(), String>;
}

/// Converts any plotters error into a message.
pub(crate) fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Font sizes and strokes scaled to the output size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Theme {
    pub width: u32,
    pub height: u32,
    scale: f64,
}

/// plotters draws text at `size / 1.24` pixels; we speak in real pixels.
const PLOTTERS_FONT_FACTOR: f64 = 1.24;

impl Theme {
    pub(crate) fn new(width: u32, height: u32) -> Theme {
        let (w0, h0) = DEFAULT_SVG_SIZE;
        let scale = (f64::from(width) / f64::from(w0))
            .min(f64::from(height) / f64::from(h0))
            .clamp(0.35, 8.0);
        Theme {
            width,
            height,
            scale,
        }
    }
    /// A size in real pixels, scaled from the reference size.
    fn px(&self, base: f64) -> f64 {
        (base * self.scale).max(6.0)
    }
    pub(crate) fn title_px(&self) -> f64 {
        self.px(18.0)
    }
    pub(crate) fn label_px(&self) -> f64 {
        self.px(15.0)
    }
    pub(crate) fn tick_px(&self) -> f64 {
        self.px(13.5)
    }
    pub(crate) fn legend_px(&self) -> f64 {
        self.px(13.5)
    }
    pub(crate) fn marker(&self) -> i32 {
        (3.5 * self.scale).round().max(2.0) as i32
    }
    pub(crate) fn stroke(&self) -> u32 {
        (1.8 * self.scale).round().max(1.0) as u32
    }
    pub(crate) fn margin(&self) -> i32 {
        (10.0 * self.scale).round() as i32
    }
    /// A text style whose glyphs are `px` real pixels high (em size).
    pub(crate) fn font(&self, px: f64) -> TextStyle<'static> {
        self.font_styled(px, FontStyle::Normal)
    }
    /// Like [`Theme::font`] with a font style (bold, italic).
    pub(crate) fn font_styled(&self, px: f64, style: FontStyle) -> TextStyle<'static> {
        (FAMILY, px * PLOTTERS_FONT_FACTOR, style)
            .into_font()
            .color(&BLACK)
    }
    /// Target number of ticks along an axis of `pixels` length, one tick
    /// per `spacing` reference pixels.
    pub(crate) fn ticks(&self, pixels: f64, spacing: f64) -> usize {
        ((pixels / (spacing * self.scale)).round() as usize).clamp(3, 10)
    }
    /// Rough width in pixels of `text` at `px` (DejaVu Sans averages ~0.6 em).
    pub(crate) fn text_width(&self, text: &str, px: f64) -> f64 {
        text.chars().count() as f64 * px * 0.6
    }
}

/// Colour-blind-friendly palette (Okabe & Ito), darkest first.
const PALETTE: [RGBColor; 8] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x33, 0x33, 0x33),
    RGBColor(0x8C, 0x56, 0x4B),
];

/// Colour of the `i`-th series.
pub(crate) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// Marker shapes; the count is coprime with the palette size so colour and
/// shape pairs repeat only after 56 series.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    Cross,
    TriangleDown,
    Plus,
}

const SHAPES: [Shape; 7] = [
    Shape::Circle,
    Shape::Square,
    Shape::TriangleUp,
    Shape::Diamond,
    Shape::Cross,
    Shape::TriangleDown,
    Shape::Plus,
];

/// Marker shape of the `i`-th series.
pub(crate) fn shape(i: usize) -> Shape {
    SHAPES[i % SHAPES.len()]
}

/// A marker drawn at one point, in any coordinate system.
pub(crate) struct Marker<C> {
    at: C,
    shape: Shape,
    size: i32,
    color: RGBColor,
}

impl<C> Marker<C> {
    pub(crate) fn new(at: C, shape: Shape, size: i32, color: RGBColor) -> Self {
        Marker {
            at,
            shape,
            size,
            color,
        }
    }
}

impl<'a, C: 'a> PointCollection<'a, C> for &'a Marker<C> {
    type Point = &'a C;
    type IntoIter = std::iter::Once<&'a C>;
    fn point_iter(self) -> Self::IntoIter {
        std::iter::once(&self.at)
    }
}

impl<C, DB: DrawingBackend> Drawable<DB> for Marker<C> {
    fn draw<I: Iterator<Item = BackendCoord>>(
        &self,
        mut pos: I,
        backend: &mut DB,
        _parent_dim: (u32, u32),
    ) -> Result<(), DrawingErrorKind<DB::ErrorType>> {
        let Some((x, y)) = pos.next() else {
            return Ok(());
        };
        let s = self.size;
        let fill = self.color.filled();
        let line = self.color.stroke_width((s / 2).max(2) as u32);
        let t = s + s / 4; // triangles and diamonds look smaller: enlarge
        match self.shape {
            Shape::Circle => backend.draw_circle((x, y), s as u32, &fill, true),
            Shape::Square => backend.draw_rect((x - s, y - s), (x + s, y + s), &fill, true),
            Shape::TriangleUp => {
                backend.fill_polygon(vec![(x, y - t), (x - t, y + s), (x + t, y + s)], &fill)
            }
            Shape::TriangleDown => {
                backend.fill_polygon(vec![(x, y + t), (x - t, y - s), (x + t, y - s)], &fill)
            }
            Shape::Diamond => {
                backend.fill_polygon(vec![(x, y - t), (x + t, y), (x, y + t), (x - t, y)], &fill)
            }
            Shape::Cross => {
                backend.draw_line((x - s, y - s), (x + s, y + s), &line)?;
                backend.draw_line((x - s, y + s), (x + s, y - s), &line)
            }
            Shape::Plus => {
                backend.draw_line((x - t, y), (x + t, y), &line)?;
                backend.draw_line((x, y - t), (x, y + t), &line)
            }
        }
    }
}

/// The four legend corners, in the order we prefer them on a tie.
const CORNERS: [(SeriesLabelPosition, f64, f64); 4] = [
    (SeriesLabelPosition::UpperRight, 1.0, 1.0),
    (SeriesLabelPosition::UpperLeft, 0.0, 1.0),
    (SeriesLabelPosition::LowerRight, 1.0, 0.0),
    (SeriesLabelPosition::LowerLeft, 0.0, 0.0),
];

/// Picks the legend corner covering the fewest of `points`, given in
/// normalised plot coordinates (`0..1` on both axes, y up).
pub(crate) fn best_corner(points: &[(f64, f64)]) -> SeriesLabelPosition {
    let crowd = |cx: f64, cy: f64| {
        points
            .iter()
            .filter(|(x, y)| (x - cx).abs() < 0.4 && (y - cy).abs() < 0.35)
            .count()
    };
    let mut best = (usize::MAX, SeriesLabelPosition::UpperRight);
    for (pos, cx, cy) in CORNERS {
        let n = crowd(cx, cy);
        if n < best.0 {
            best = (n, pos);
        }
    }
    best.1
}

/// Draws notes (e.g. "3 NaN values omitted") under the chart and returns
/// the area left for the chart itself.
pub(crate) fn notes_area<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    notes: &[String],
    theme: &Theme,
) -> Result<DrawingArea<DB, Shift>, String> {
    if notes.is_empty() {
        return Ok(root.clone());
    }
    let px = theme.tick_px() * 0.9;
    let line_h = (px * 1.3).ceil() as i32;
    let height = line_h * notes.len().min(4) as i32 + theme.margin() / 2;
    let (_, h) = root.dim_in_pixel();
    let (top, bottom) = root.split_vertically((h as i32 - height).max(h as i32 / 2));
    let style = theme
        .font_styled(px, FontStyle::Italic)
        .color(&RGBColor(0x80, 0x30, 0x00));
    for (i, note) in notes.iter().take(4).enumerate() {
        let text = format!("Note: {note}");
        bottom
            .draw(&Text::new(
                text,
                (theme.margin(), i as i32 * line_h),
                style.clone(),
            ))
            .map_err(err)?;
    }
    Ok(top)
}

/// Shrinks the title font until `title` fits the width.
pub(crate) fn title_font(title: &str, theme: &Theme) -> TextStyle<'static> {
    let mut px = theme.title_px();
    let room = f64::from(theme.width) * 0.94;
    let width = theme.text_width(title, px);
    if width > room {
        px = (px * room / width).max(8.0);
    }
    theme.font(px)
}

/// Writes "no data" in the middle of a pixel-coordinate area.
pub(crate) fn draw_no_data<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    theme: &Theme,
) -> Result<(), String> {
    let (w, h) = area.dim_in_pixel();
    let style = theme
        .font(theme.label_px())
        .color(&RGBColor(0x70, 0x70, 0x70))
        .pos(Pos::new(HPos::Center, VPos::Center));
    area.draw(&Text::new("no data", (w as i32 / 2, h as i32 / 2), style))
        .map_err(err)
}

/// Runs `f`, turning a panic inside plotters into an error message.
fn guarded(f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(f))
        .unwrap_or_else(|_| Err("internal error in the plotting library".into()))
}

fn check_size(path: &Path, width: u32, height: u32) -> Result<(), ReportError> {
    let ok = |v: u32| (MIN_SIDE..=MAX_SIDE).contains(&v);
    if ok(width) && ok(height) {
        return Ok(());
    }
    Err(ReportError::Invalid {
        path: path.to_path_buf(),
        message: format!("image size {width}x{height} outside {MIN_SIDE}..={MAX_SIDE} pixels"),
    })
}

/// Renders `figure` as an SVG document.
pub(crate) fn svg_string<D: Draw>(figure: &D, width: u32, height: u32) -> Result<String, String> {
    ensure_fonts();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (width, height)).into_drawing_area();
        guarded(|| figure.draw(&root, &Theme::new(width, height)))?;
        root.present().map_err(err)?;
    }
    Ok(out)
}

/// Renders `figure` as PNG file contents.
pub(crate) fn png_bytes<D: Draw>(figure: &D, width: u32, height: u32) -> Result<Vec<u8>, String> {
    ensure_fonts();
    let mut rgb = vec![255u8; width as usize * height as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
        guarded(|| figure.draw(&root, &Theme::new(width, height)))?;
        root.present().map_err(err)?;
    }
    let mut out = Vec::new();
    let mut encoder = png::Encoder::new(&mut out, width, height);
    encoder.set_color(png::ColorType::Rgb);
    encoder.set_depth(png::BitDepth::Eight);
    let mut writer = encoder.write_header().map_err(err)?;
    writer.write_image_data(&rgb).map_err(err)?;
    writer.finish().map_err(err)?;
    Ok(out)
}

/// Renders `figure` to an SVG file of the given size.
pub(crate) fn write_svg<D: Draw>(
    figure: &D,
    path: &Path,
    (width, height): (u32, u32),
) -> Result<(), ReportError> {
    check_size(path, width, height)?;
    let svg = svg_string(figure, width, height).map_err(|message| ReportError::Render {
        path: path.to_path_buf(),
        message,
    })?;
    write_file(path, svg.as_bytes())
}

/// Renders `figure` to a PNG file of the given size.
pub(crate) fn write_png<D: Draw>(
    figure: &D,
    path: &Path,
    width: u32,
    height: u32,
) -> Result<(), ReportError> {
    check_size(path, width, height)?;
    let png = png_bytes(figure, width, height).map_err(|message| ReportError::Render {
        path: path.to_path_buf(),
        message,
    })?;
    write_file(path, &png)
}

/// Charts that can be written as SVG and PNG files.
///
/// Implemented by [`Plot`](crate::Plot) and [`BarChart`](crate::BarChart), so
/// code such as [`Figure::render`](crate::Figure::render) can take either.
pub trait Render {
    /// Writes an SVG of [`DEFAULT_SVG_SIZE`] to `path` (parent dirs created).
    fn render_svg(&self, path: &Path) -> Result<(), ReportError>;
    /// Writes a `width`×`height` PNG to `path` (parent dirs created).
    fn render_png(&self, path: &Path, width: u32, height: u32) -> Result<(), ReportError>;
}
