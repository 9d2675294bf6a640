//! Small descriptive statistics helpers.
//!
//! All functions ignore non-finite samples (NaN, ±∞) so that one broken
//! measurement does not poison a whole summary, and return `None` when no
//! finite sample is left.

use serde::{Deserialize, Serialize};

fn finite(samples: &[f64]) -> impl Iterator<Item = f64> + '_ {
    samples.iter().copied().filter(|v| v.is_finite())
}

fn sorted_finite(samples: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = finite(samples).collect();
    v.sort_by(f64::total_cmp);
    v
}

/// Arithmetic mean of the finite samples.
pub fn mean(samples: &[f64]) -> Option<f64> {
    let (sum, n) = finite(samples).fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// Median (the 50th [`percentile`]) of the finite samples.
pub fn median(samples: &[f64]) -> Option<f64> {
    percentile(samples, 50.0)
}

/// The `p`-th percentile (`p` in `[0, 100]`, clamped) of the finite samples.
///
/// Uses linear interpolation between closest ranks (the default of NumPy and
/// R's type 7): `percentile(&[1, 2, 3, 4], 50) == 2.5`. Returns `None` for
/// no finite samples or a NaN `p`.
pub fn percentile(samples: &[f64], p: f64) -> Option<f64> {
    if p.is_nan() {
        return None;
    }
    let sorted = sorted_finite(samples);
    percentile_sorted(&sorted, p)
}

/// [`percentile`] on data that is already sorted and finite.
fn percentile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let rank = p.clamp(0.0, 100.0) / 100.0 * last as f64;
    let lo = rank.floor() as usize;
    let hi = rank.ceil() as usize;
    let frac = rank - lo as f64;
    Some(sorted[lo] + (sorted[hi] - sorted[lo]) * frac)
}

/// Sample standard deviation (Bessel-corrected, divides by `n - 1`).
///
/// A single sample has a standard deviation of `0.0`.
pub fn stddev(samples: &[f64]) -> Option<f64> {
    let m = mean(samples)?;
    let (ss, n) = finite(samples).fold((0.0, 0usize), |(s, n), v| (s + (v - m).powi(2), n + 1));
    if n < 2 {
        return Some(0.0);
    }
    Some((ss / (n - 1) as f64).sqrt())
}

/// Empirical CDF: for each distinct finite sample `x` (ascending), the
/// fraction of finite samples `<= x`. The last point always has `y == 1.0`.
///
/// `ecdf(&[3.0, 1.0, 2.0, 2.0]) == [(1.0, 0.25), (2.0, 0.75), (3.0, 1.0)]`.
pub fn ecdf(samples: &[f64]) -> Vec<(f64, f64)> {
    let sorted = sorted_finite(samples);
    let n = sorted.len() as f64;
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (i, &x) in sorted.iter().enumerate() {
        let y = (i + 1) as f64 / n;
        match out.last_mut() {
            Some(last) if last.0 == x => last.1 = y,
            _ => out.push((x, y)),
        }
    }
    out
}

/// A one-line summary of a sample, handy for table rows.
///
/// Computed by [`summary`] only (`#[non_exhaustive]`: another statistic may join).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Summary {
    /// Number of finite samples.
    pub n: usize,
    /// Number of samples that were ignored because they were NaN or infinite.
    pub non_finite: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Sample standard deviation.
    pub stddev: f64,
    /// Smallest sample.
    pub min: f64,
    /// 5th percentile.
    pub p5: f64,
    /// Median.
    pub median: f64,
    /// 95th percentile.
    pub p95: f64,
    /// Largest sample.
    pub max: f64,
}

/// Computes a [`Summary`] of the finite samples, or `None` if there are none.
pub fn summary(samples: &[f64]) -> Option<Summary> {
    let sorted = sorted_finite(samples);
    let pct = |p| percentile_sorted(&sorted, p);
    Some(Summary {
        n: sorted.len(),
        non_finite: samples.len() - sorted.len(),
        mean: mean(&sorted)?,
        stddev: stddev(&sorted)?,
        min: *sorted.first()?,
        p5: pct(5.0)?,
        median: pct(50.0)?,
        p95: pct(95.0)?,
        max: *sorted.last()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        let d = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(mean(&d), Some(2.5));
        assert_eq!(median(&d), Some(2.5));
        assert_eq!(percentile(&d, 0.0), Some(1.0));
        assert_eq!(percentile(&d, 100.0), Some(4.0));
        assert_eq!(percentile(&d, 25.0), Some(1.75));
        assert!((stddev(&d).unwrap() - 1.290_994_448_735_805_6).abs() < 1e-12);
        assert_eq!(stddev(&[5.0]), Some(0.0));
    }

    #[test]
    fn empty_and_non_finite() {
        assert_eq!(mean(&[]), None);
        assert_eq!(median(&[f64::NAN]), None);
        assert_eq!(percentile(&[1.0], f64::NAN), None);
        assert_eq!(mean(&[1.0, f64::INFINITY, 3.0]), Some(2.0));
        assert!(ecdf(&[f64::NAN]).is_empty());
        let s = summary(&[2.0, f64::NAN, 4.0]).unwrap();
        assert_eq!((s.n, s.non_finite, s.median), (2, 1, 3.0));
        assert_eq!(summary(&[]), None);
    }

    #[test]
    fn ecdf_ties() {
        assert_eq!(
            ecdf(&[3.0, 1.0, 2.0, 2.0]),
            vec![(1.0, 0.25), (2.0, 0.75), (3.0, 1.0)]
        );
    }
}
