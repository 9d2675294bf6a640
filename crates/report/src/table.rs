//! Tables: CSV in and out, HTML out.

use crate::error::{write_file, ReportError};
use crate::html::escape;
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;
use std::path::Path;

/// Largest number of decimals honoured when formatting a [`Cell::Num`].
const MAX_DECIMALS: usize = 17;

/// One table cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Cell {
    /// Free text.
    Text(String),
    /// A number and how many decimals to show.
    Num(f64, usize),
    /// No value (empty in CSV, a dash in HTML).
    Missing,
}

impl Cell {
    /// A text cell.
    pub fn text(s: impl Into<String>) -> Cell {
        Cell::Text(s.into())
    }

    /// A number shown with `decimals` decimals.
    pub fn num(v: f64, decimals: usize) -> Cell {
        Cell::Num(v, decimals)
    }

    /// A number, or [`Cell::Missing`] for `None`.
    pub fn opt(v: Option<f64>, decimals: usize) -> Cell {
        v.map_or(Cell::Missing, |v| Cell::Num(v, decimals))
    }

    /// The cell as displayed (numbers rounded, missing as the empty string).
    pub fn display(&self) -> String {
        match self {
            Cell::Text(s) => s.clone(),
            Cell::Num(v, d) => format_num(*v, *d),
            Cell::Missing => String::new(),
        }
    }

    /// Parses one CSV field: empty is [`Cell::Missing`], a plain decimal
    /// number (`-12`, `3.250`, `NaN`, `inf`) is [`Cell::Num`] keeping its
    /// number of decimals, anything else is [`Cell::Text`].
    pub fn parse(field: &str) -> Cell {
        if field.is_empty() {
            return Cell::Missing;
        }
        match parse_num(field) {
            Some((v, d)) => Cell::Num(v, d),
            None => Cell::Text(field.to_string()),
        }
    }
}

fn format_num(v: f64, decimals: usize) -> String {
    let d = decimals.min(MAX_DECIMALS);
    let s = format!("{v:.d$}");
    // Avoid "-0.00" for values that round to zero.
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// Recognises the number formats [`format_num`] produces.
fn parse_num(s: &str) -> Option<(f64, usize)> {
    match s {
        "NaN" => return Some((f64::NAN, 0)),
        "inf" => return Some((f64::INFINITY, 0)),
        "-inf" => return Some((f64::NEG_INFINITY, 0)),
        _ => {}
    }
    let body = s.strip_prefix('-').unwrap_or(s);
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || (body.contains('.') && frac.is_empty()) {
        return None;
    }
    s.parse().ok().map(|v| (v, frac.len()))
}

/// A titled table of [`Cell`]s.
///
/// Rows shorter than `columns` are padded with [`Cell::Missing`] on output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Table {
    /// Caption (HTML) — not stored in CSV.
    pub title: String,
    /// Column headers.
    pub columns: Vec<String>,
    /// Data rows.
    pub rows: Vec<Vec<Cell>>,
}

/// Quotes a CSV field when needed (RFC 4180).
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) || s.starts_with(' ') || s.ends_with(' ') {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Table {
    /// An empty table with the given headers.
    pub fn new(title: impl Into<String>, columns: Vec<String>) -> Table {
        Table {
            title: title.into(),
            columns,
            rows: Vec::new(),
        }
    }

    /// Appends a row (builder style).
    pub fn with_row(mut self, row: Vec<Cell>) -> Table {
        self.rows.push(row);
        self
    }

    /// Number of columns to output: the header count or the widest row.
    fn width(&self) -> usize {
        self.rows
            .iter()
            .map(Vec::len)
            .max()
            .unwrap_or(0)
            .max(self.columns.len())
    }

    /// CSV text (RFC 4180, `\n` line ends): a header line, then the rows.
    /// The title is not included.
    pub fn to_csv(&self) -> String {
        let width = self.width();
        let mut out = String::new();
        let line = |cells: Vec<String>| {
            let mut l = cells
                .iter()
                .map(|c| csv_field(c))
                .collect::<Vec<_>>()
                .join(",");
            l.push('\n');
            l
        };
        let mut header = self.columns.clone();
        header.resize(width, String::new());
        out.push_str(&line(header));
        for row in &self.rows {
            let mut cells: Vec<String> = row.iter().map(Cell::display).collect();
            cells.resize(width, String::new());
            out.push_str(&line(cells));
        }
        out
    }

    /// Writes [`Table::to_csv`] to `path`, creating parent dirs.
    pub fn write_csv(&self, path: &Path) -> Result<(), ReportError> {
        write_file(path, self.to_csv().as_bytes())
    }

    /// Parses CSV produced by [`Table::to_csv`] (or any RFC 4180 CSV with a
    /// header line). Cells are typed with [`Cell::parse`]; the title is empty.
    /// Short rows are padded with [`Cell::Missing`]; rows longer than the
    /// header are an error.
    pub fn from_csv(text: &str) -> Result<Table, ReportError> {
        let mut records = parse_csv(text)?.into_iter();
        let (_, columns) = records.next().ok_or(ReportError::Csv {
            line: 1,
            message: "no header line".into(),
        })?;
        let mut rows = Vec::new();
        for (line, fields) in records {
            if fields.len() > columns.len() {
                return Err(ReportError::Csv {
                    line,
                    message: format!("{} fields for {} columns", fields.len(), columns.len()),
                });
            }
            let mut row: Vec<Cell> = fields.iter().map(|f| Cell::parse(f)).collect();
            row.resize(columns.len(), Cell::Missing);
            rows.push(row);
        }
        Ok(Table {
            title: String::new(),
            columns,
            rows,
        })
    }

    /// An HTML `<table>` with the title as caption; all text is escaped.
    /// Numbers are right-aligned (class `num`), missing cells show a dash.
    pub fn to_html(&self) -> String {
        let width = self.width();
        let mut out = String::from("<table class=\"data\">\n");
        if !self.title.is_empty() {
            let _ = writeln!(out, "<caption>{}</caption>", escape(&self.title));
        }
        out.push_str("<thead><tr>");
        for i in 0..width {
            let h = self.columns.get(i).map_or("", String::as_str);
            let _ = write!(out, "<th>{}</th>", escape(h));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        for row in &self.rows {
            out.push_str("<tr>");
            for i in 0..width {
                match row.get(i).unwrap_or(&Cell::Missing) {
                    Cell::Text(s) => {
                        let _ = write!(out, "<td>{}</td>", escape(s));
                    }
                    c @ Cell::Num(..) => {
                        let _ = write!(out, "<td class=\"num\">{}</td>", escape(&c.display()));
                    }
                    Cell::Missing => out.push_str("<td class=\"missing\">–</td>"),
                }
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table>\n");
        out
    }
}

/// Splits CSV text into records of fields, each with its 1-based start line.
fn parse_csv(text: &str) -> Result<Vec<(usize, Vec<String>)>, ReportError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    let mut field = String::new();
    let (mut line, mut start) = (1usize, 1usize);
    let mut chars = text.chars().peekable();
    let mut quoted = false;
    let mut at_field_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => quoted = false,
                _ => {
                    line += usize::from(c == '\n');
                    field.push(c);
                }
            }
            continue;
        }
        match c {
            '"' if at_field_start => {
                quoted = true;
                at_field_start = false;
            }
            ',' => {
                fields.push(std::mem::take(&mut field));
                at_field_start = true;
            }
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' => {
                fields.push(std::mem::take(&mut field));
                records.push((start, std::mem::take(&mut fields)));
                line += 1;
                start = line;
                at_field_start = true;
            }
            _ => {
                field.push(c);
                at_field_start = false;
            }
        }
    }
    if quoted {
        return Err(ReportError::Csv {
            line: start,
            message: "unterminated quoted field".into(),
        });
    }
    if !field.is_empty() || !fields.is_empty() {
        fields.push(field);
        records.push((start, fields));
    }
    // Blank lines carry no record.
    records.retain(|(_, f)| !(f.len() == 1 && f[0].is_empty()));
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_parse_back() {
        assert_eq!(Cell::parse("3.250"), Cell::Num(3.25, 3));
        assert_eq!(Cell::parse("-12"), Cell::Num(-12.0, 0));
        assert_eq!(Cell::parse("1e5"), Cell::text("1e5"));
        assert_eq!(Cell::parse("1."), Cell::text("1."));
        assert_eq!(Cell::parse(".5"), Cell::text(".5"));
        assert_eq!(Cell::parse(""), Cell::Missing);
        assert_eq!(Cell::num(-0.001, 2).display(), "0.00");
    }

    #[test]
    fn quoted_fields() {
        let t = Table::from_csv("a,b\n\"x, \"\"y\"\"\n z\",1\r\n\n").unwrap();
        assert_eq!(
            t.rows,
            vec![vec![Cell::text("x, \"y\"\n z"), Cell::Num(1.0, 0)]]
        );
        assert!(Table::from_csv("a\n\"open").is_err());
        assert!(Table::from_csv("").is_err());
        let e = Table::from_csv("a\n1,2\n").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
    }
}
