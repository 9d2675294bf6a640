//! Self-contained HTML reports.

use crate::chart::Render;
use crate::error::{write_file, ReportError};
use crate::table::Table;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// PNG size used by [`Figure::render`].
pub const FIGURE_PNG_SIZE: (u32, u32) = (1280, 800);

/// Escapes text for HTML element content and quoted attribute values.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Percent-encodes a relative path for use in `src`/`href`/`srcset`
/// (keeps `/`, so sub-directories work; encodes spaces, commas, quotes…).
fn url_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => {
                let _ = write!(out, "%{b:02X}");
            }
        }
    }
    out
}

/// A chart in the report, as files relative to the report directory.
///
/// Made by [`Figure::render`] (or `Figure::default()` and its fields); `#[non_exhaustive]` so
/// that another file format is not a breaking change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[non_exhaustive]
pub struct Figure {
    /// SVG file, relative to the report directory (shown when present).
    pub svg_path_relative: String,
    /// PNG file, relative to the report directory (the fallback).
    pub png_path_relative: String,
    /// Caption under the figure.
    pub caption: String,
}

impl Figure {
    /// A figure made of already-written files.
    pub fn new(
        svg_path_relative: impl Into<String>,
        png_path_relative: impl Into<String>,
        caption: impl Into<String>,
    ) -> Figure {
        Figure {
            svg_path_relative: svg_path_relative.into(),
            png_path_relative: png_path_relative.into(),
            caption: caption.into(),
        }
    }

    /// Renders `chart` to `dir/stem.svg` and `dir/stem.png` (PNG at
    /// [`FIGURE_PNG_SIZE`]) and returns the figure referencing them.
    /// `stem` may contain `/` to use a sub-directory.
    pub fn render(
        chart: &dyn Render,
        dir: &Path,
        stem: &str,
        caption: impl Into<String>,
    ) -> Result<Figure, ReportError> {
        let svg = format!("{stem}.svg");
        let png = format!("{stem}.png");
        chart.render_svg(&dir.join(&svg))?;
        let (w, h) = FIGURE_PNG_SIZE;
        chart.render_png(&dir.join(&png), w, h)?;
        Ok(Figure::new(svg, png, caption))
    }

    /// HTML for this figure; `dir` is used to flag files that do not exist.
    fn to_html(&self, dir: &Path) -> String {
        let exists = |p: &str| !p.is_empty() && dir.join(p).is_file();
        let (svg, png) = (
            self.svg_path_relative.as_str(),
            self.png_path_relative.as_str(),
        );
        let alt = escape(&self.caption);
        let mut out = String::from("<figure>\n");
        let main = if exists(svg) { svg } else { png };
        if !exists(svg) && !exists(png) {
            let _ = writeln!(
                out,
                "<div class=\"missing-figure\">figure file not found: {}</div>",
                escape(if svg.is_empty() { png } else { svg })
            );
        } else {
            let _ = write!(out, "<a href=\"{}\">", url_path(main));
            if exists(svg) && exists(png) {
                let _ = write!(
                    out,
                    "<picture><source srcset=\"{}\" type=\"image/svg+xml\">\
                     <img src=\"{}\" alt=\"{alt}\" loading=\"lazy\"></picture>",
                    url_path(svg),
                    url_path(png)
                );
            } else {
                let _ = write!(out, "<img src=\"{}\" alt=\"{alt}\">", url_path(main));
            }
            out.push_str("</a>\n");
        }
        let _ = write!(out, "<figcaption>{alt}");
        for (p, name) in [(svg, "SVG"), (png, "PNG")] {
            if exists(p) {
                let _ = write!(
                    out,
                    " <a class=\"file\" href=\"{}\">{name}</a>",
                    url_path(p)
                );
            }
        }
        out.push_str("</figcaption>\n</figure>\n");
        out
    }
}

/// One section of an [`HtmlReport`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Section {
    /// Section heading.
    pub heading: String,
    /// Plain-text paragraphs (escaped; no markup).
    pub paragraphs: Vec<String>,
    /// Our result tables.
    pub tables: Vec<Table>,
    /// Our figures.
    pub figures: Vec<Figure>,
    /// The paper's numbers, shown side by side with our tables.
    pub reference: Option<Table>,
    /// Configuration and seed of the run, shown verbatim in a collapsed `<pre>`.
    pub config: Option<String>,
}

impl Section {
    /// An empty section with a heading.
    pub fn new(heading: impl Into<String>) -> Section {
        Section {
            heading: heading.into(),
            ..Section::default()
        }
    }

    fn to_html(&self, id: &str, dir: &Path) -> String {
        let mut out = format!(
            "<section id=\"{id}\">\n<h2>{}</h2>\n",
            escape(&self.heading)
        );
        for p in &self.paragraphs {
            let _ = writeln!(out, "<p>{}</p>", escape(p));
        }
        let ours: String = self.tables.iter().map(Table::to_html).collect();
        match &self.reference {
            Some(reference) => {
                let _ =
                    write!(
                    out,
                    "<div class=\"compare\">\n<div class=\"side\"><h3>This run</h3>\n{}</div>\n\
                     <div class=\"side reference\"><h3>Paper (reference)</h3>\n{}</div>\n</div>\n",
                    if ours.is_empty() { "<p class=\"empty\">no table</p>\n".into() } else { ours },
                    reference.to_html()
                );
            }
            None => out.push_str(&ours),
        }
        if !self.figures.is_empty() {
            out.push_str("<div class=\"figures\">\n");
            for f in &self.figures {
                out.push_str(&f.to_html(dir));
            }
            out.push_str("</div>\n");
        }
        if let Some(config) = &self.config {
            // Collapsed: a suite's configuration lists every run and would push the plots
            // far down the page.
            let _ = write!(
                out,
                "<details class=\"config\"><summary>Configuration and seed ({} lines)</summary>\n<pre>{}</pre></details>\n",
                config.lines().count(),
                escape(config)
            );
        }
        out.push_str("</section>\n");
        out
    }
}

/// A single-page report: title, optional table of contents, sections.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct HtmlReport {
    /// Page title and top heading.
    pub title: String,
    /// The sections, in order.
    pub sections: Vec<Section>,
}

const CSS: &str = include_str!("report.css");

impl HtmlReport {
    /// An empty report.
    pub fn new(title: impl Into<String>) -> HtmlReport {
        HtmlReport {
            title: title.into(),
            sections: Vec::new(),
        }
    }

    /// The complete page. `dir` is where figure paths are resolved (to flag
    /// missing files); nothing is written.
    pub fn to_html(&self, dir: &Path) -> String {
        let title = escape(&self.title);
        let mut out = format!(
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{title}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n\
             <header><h1>{title}</h1></header>\n"
        );
        if self.sections.len() > 1 {
            out.push_str("<nav class=\"toc\"><ol>\n");
            for (i, s) in self.sections.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "<li><a href=\"#sec-{}\">{}</a></li>",
                    i + 1,
                    escape(&s.heading)
                );
            }
            out.push_str("</ol></nav>\n");
        }
        out.push_str("<main>\n");
        for (i, s) in self.sections.iter().enumerate() {
            out.push_str(&s.to_html(&format!("sec-{}", i + 1), dir));
        }
        out.push_str("</main>\n<footer>Generated by mpquic-report</footer>\n</body>\n</html>\n");
        out
    }

    /// Writes `dir/index.html` (creating `dir`) and returns its path.
    ///
    /// Figures are referenced, not copied: render them into `dir` first
    /// (see [`Figure::render`]). A figure whose files are missing is shown
    /// as a visible warning rather than a broken image.
    pub fn write(&self, dir: &Path) -> Result<PathBuf, ReportError> {
        std::fs::create_dir_all(dir).map_err(|e| ReportError::Io {
            path: dir.to_path_buf(),
            source: e,
        })?;
        let path = dir.join("index.html");
        write_file(&path, self.to_html(dir).as_bytes())?;
        Ok(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping() {
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(url_path("a b/c,d\".svg"), "a%20b/c%2Cd%22.svg");
    }
}
