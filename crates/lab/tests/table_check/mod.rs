//! Helpers for "no number in a report that is not computed from a run":
//! the tests read a report's CSV tables and the raw run JSON files, and
//! recompute every cell from the JSON with their own code (never the
//! suite's), so a report number that does not follow from the runs is a
//! mismatch. Checks return `Err` (not panic) so a test can also show that
//! a tampered run file makes the check fail.

#![allow(dead_code)] // each test binary uses a different subset

use std::path::Path;

use mpquic_report::{Cell, Table};
use serde_json::Value;

/// A check's outcome: `Err` lists the first mismatch.
pub type Check = Result<(), String>;

/// Reads `dir/tables/STEM.csv`.
pub fn read_table(dir: &Path, stem: &str) -> Result<Table, String> {
    let path = dir.join("tables").join(format!("{stem}.csv"));
    let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    Table::from_csv(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Every run file of `dir/runs`, as `(run ID, JSON)`, sorted by ID.
pub fn read_runs(dir: &Path) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir.join("runs")).expect("runs dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let id = path
            .file_stem()
            .and_then(|s| s.to_str())
            .expect("file stem")
            .to_owned();
        let text = std::fs::read_to_string(&path).expect("run file");
        out.push((id, serde_json::from_str(&text).expect("run JSON")));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Multiplies the number at `pointer` in the run file `dir/runs/ID.json`
/// by `factor` (to show that a check notices a change of the runs).
pub fn tamper(dir: &Path, id: &str, pointer: &str, factor: f64) {
    let path = dir.join("runs").join(format!("{id}.json"));
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("run")).expect("json");
    let slot = v.pointer_mut(pointer).expect("pointer");
    let x = slot.as_f64().expect("number");
    *slot = serde_json::json!(x * factor);
    std::fs::write(&path, serde_json::to_string(&v).expect("json")).expect("write");
}

/// Adds `delta` to the number at `pointer` in the run file `dir/runs/ID.json` (for counts that
/// may be zero, where [`tamper`] would change nothing).
pub fn tamper_add(dir: &Path, id: &str, pointer: &str, delta: f64) {
    let path = dir.join("runs").join(format!("{id}.json"));
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("run")).expect("json");
    let slot = v.pointer_mut(pointer).expect("pointer");
    let x = slot.as_f64().expect("number");
    *slot = serde_json::json!(x + delta);
    std::fs::write(&path, serde_json::to_string(&v).expect("json")).expect("write");
}

/// Whether a number cell matches `expected` to the cell's decimals
/// (`None` expects a missing cell).
pub fn num_cell(cell: &Cell, expected: Option<f64>, what: &str) -> Check {
    match (cell, expected) {
        (Cell::Num(v, d), Some(e)) if e.is_finite() => {
            let tol = 0.5 * 10f64.powi(-(*d as i32)) + 1e-9 * e.abs();
            if (v - e).abs() <= tol {
                Ok(())
            } else {
                Err(format!("{what}: table {v} vs runs {e}"))
            }
        }
        (Cell::Missing, None) => Ok(()),
        other => Err(format!("{what}: cell/expected {other:?}")),
    }
}

/// Whether a text cell reads `expected`.
pub fn text_cell(cell: &Cell, expected: &str, what: &str) -> Check {
    match cell {
        Cell::Text(t) if t == expected => Ok(()),
        other => Err(format!(
            "{what}: cell {other:?}, expected text {expected:?}"
        )),
    }
}

/// The text of a cell (row labels).
pub fn label(cell: &Cell) -> String {
    match cell {
        Cell::Text(t) => t.clone(),
        Cell::Num(v, _) => v.to_string(),
        Cell::Missing => String::new(),
    }
}

/// Arithmetic mean (`None` when empty).
pub fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// The `p`-th percentile with linear interpolation between closest ranks
/// (NumPy's default), over the finite values.
pub fn percentile(v: &[f64], p: f64) -> Option<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    let last = s.len().checked_sub(1)?;
    let rank = p / 100.0 * last as f64;
    let (lo, hi) = (rank.floor() as usize, rank.ceil() as usize);
    Some(s[lo] + (s[hi] - s[lo]) * (rank - lo as f64))
}

/// `(b - a) / a` in percent.
pub fn rate(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    let (a, b) = (a?, b?);
    (a != 0.0).then(|| (b - a) / a * 100.0)
}

/// A number field of a JSON object.
pub fn f(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("field {key} missing in {v}"))
}
