//! Tables, plots (SVG/PNG) and HTML reports for the mpquic lab.
//!
//! This crate is a leaf: it knows nothing about QUIC or the simulator and
//! takes plain data.
//!
//! * [`Plot`] — line, scatter and step/CDF plots with linear or log axes;
//!   [`BarChart`] — grouped bars. Both render to SVG and PNG; PNG text uses
//!   an embedded DejaVu Sans font, so no system fonts are required.
//! * [`Table`] — CSV in/out and HTML out.
//! * [`HtmlReport`] — a self-contained `index.html` (inline CSS) with
//!   sections holding paragraphs, tables, a paper reference table shown side
//!   by side with ours, figures and the run's configuration.
//! * [`stats`] — mean, median, percentiles, standard deviation, ECDF.
//!
//! Degenerate data never panics: empty series, NaN/∞ values, single points
//! and constant values all render, with a note under the chart about any
//! value that had to be dropped.
//!
//! ```no_run
//! use mpquic_report::{Figure, HtmlReport, Plot, Section, Table, Cell};
//! # fn main() -> Result<(), mpquic_report::ReportError> {
//! let dir = std::path::Path::new("out");
//! let plot = Plot::cdf(
//!     "Download completion time",
//!     "time (s)",
//!     vec![("MPQUIC".into(), vec![1.0, 1.2, 1.1]), ("QUIC".into(), vec![1.5, 1.7])],
//! );
//! let mut section = Section::new("Experiment 1");
//! section.figures.push(Figure::render(&plot, dir, "fig/cdf", "CDF of completion time")?);
//! section.tables.push(
//!     Table::new("Medians", vec!["stack".into(), "median (s)".into()])
//!         .with_row(vec![Cell::text("MPQUIC"), Cell::num(1.1, 2)]),
//! );
//! let report = HtmlReport { title: "Lab report".into(), sections: vec![section] };
//! let index = report.write(dir)?;
//! # let _ = index; Ok(()) }
//! ```
//!
//! Feature note: the embedded font relies on plotters' `ab_glyph` text
//! backend. If any crate in the build enables plotters' `ttf` feature, that
//! backend wins and PNG text needs system fonts again, so depend on this
//! crate rather than on plotters with `ttf`.

#![warn(unreachable_pub, missing_docs)]

mod bar;
mod chart;
mod error;
mod font;
mod html;
mod lineplot;
mod plot;
mod scale;
pub mod stats;
mod table;

pub use bar::BarChart;
pub use chart::{Render, DEFAULT_SVG_SIZE, MAX_SIDE, MIN_SIDE};
pub use error::ReportError;
pub use html::{escape, Figure, HtmlReport, Section, FIGURE_PNG_SIZE};
pub use plot::{Axis, Plot, PlotKind, Series};
pub use table::{Cell, Table};
