//! Axis scales: data ranges, tick positions and tick labels.
//!
//! Log axes are implemented by plotting `log10(value)` on a linear axis and
//! labelling the ticks with the original values, which keeps one coordinate
//! type for every chart and gives decade ticks (`1, 10, 100`) rather than
//! arbitrary ones.

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use std::ops::Range;

/// Values larger than this in magnitude are treated like non-finite ones: they
/// would overflow range arithmetic.
pub(crate) const MAX_ABS: f64 = 1e300;

/// Upper bound on the number of ticks a scale will ever produce.
const MAX_TICKS: i64 = 200;

/// One axis, in transformed space (`log10` for log axes).
#[derive(Debug, Clone)]
pub(crate) struct Scale {
    pub log: bool,
    pub lo: f64,
    pub hi: f64,
    /// Labelled tick positions.
    pub major: Vec<(f64, String)>,
    /// Light grid positions.
    pub minor: Vec<f64>,
}

impl Scale {
    /// Maps a data value into transformed space, or `None` if it cannot be
    /// shown on this kind of axis (non-finite, huge, or `<= 0` on a log axis).
    pub(crate) fn forward(log: bool, v: f64) -> Option<f64> {
        if !v.is_finite() || v.abs() > MAX_ABS {
            None
        } else if log {
            (v > 0.0).then(|| v.log10())
        } else {
            Some(v)
        }
    }

    /// Builds a scale over `[lo, hi]` (transformed) with about `target` ticks.
    pub(crate) fn new(log: bool, lo: f64, hi: f64, target: usize) -> Scale {
        let (major, minor) = if log {
            log_ticks(lo, hi)
        } else {
            linear_ticks(lo, hi, target)
        };
        Scale {
            log,
            lo,
            hi,
            major,
            minor,
        }
    }

    /// The label of the tick at transformed position `t`.
    pub(crate) fn label(&self, t: f64) -> String {
        let eps = (self.hi - self.lo).abs() * 1e-9;
        self.major
            .iter()
            .find(|(p, _)| (p - t).abs() <= eps)
            .map(|(_, l)| l.clone())
            .unwrap_or_else(|| {
                let v = if self.log { 10f64.powf(t) } else { t };
                format!("{v:.3}")
            })
    }

    /// Whether transformed position `t` lies within the axis.
    pub(crate) fn contains(&self, t: f64) -> bool {
        t >= self.lo && t <= self.hi
    }

    /// The plotters coordinate for this axis.
    pub(crate) fn coord(&self) -> AxisCoord {
        AxisCoord {
            lo: self.lo,
            hi: self.hi,
            major: self.major.iter().map(|(p, _)| *p).collect(),
            minor: self.minor.clone(),
        }
    }
}

/// Chooses the transformed range of an axis.
///
/// A caller-given `fixed` range is used exactly when it is valid; otherwise
/// it is ignored with a note, and the data extent `data` (transformed) is
/// padded by 5% per side (or by a fixed amount when all values are equal).
/// With `anchor_zero` (linear axes) the extent is first widened to include 0
/// and no padding crosses 0, so a positive axis starts exactly at 0.
pub(crate) fn choose_range(
    log: bool,
    fixed: Option<(f64, f64)>,
    data: Option<(f64, f64)>,
    axis: &str,
    anchor_zero: bool,
) -> ((f64, f64), Option<String>) {
    let mut note = None;
    if let Some((a, b)) = fixed {
        match (Scale::forward(log, a), Scale::forward(log, b)) {
            (Some(lo), Some(hi)) if lo < hi => return ((lo, hi), None),
            _ => note = Some(format!("invalid {axis} range ({a}, {b}) ignored")),
        }
    }
    let range = match data {
        None => (0.0, 1.0),
        Some((lo, hi)) if anchor_zero && !log => {
            let (lo, hi) = (lo.min(0.0), hi.max(0.0));
            let (plo, phi) = pad(false, lo, hi);
            match (lo >= 0.0, hi <= 0.0) {
                (true, true) => (0.0, 1.0),
                (true, false) => (0.0, phi),
                (false, true) => (plo, 0.0),
                (false, false) => (plo, phi),
            }
        }
        Some((lo, hi)) => pad(log, lo, hi),
    };
    (range, note)
}

/// Pads a data extent so points do not sit on the frame.
fn pad(log: bool, lo: f64, hi: f64) -> (f64, f64) {
    let span = hi - lo;
    let magnitude = lo.abs().max(hi.abs());
    if span <= magnitude * 1e-12 || span <= f64::MIN_POSITIVE {
        let d = if log {
            0.5
        } else if magnitude == 0.0 {
            1.0
        } else {
            magnitude * 0.1
        };
        (lo - d, hi + d)
    } else {
        (lo - 0.05 * span, hi + 0.05 * span)
    }
}

/// A "nice" step (1, 2, 2.5 or 5 times a power of ten) close to `raw`.
fn nice_step(raw: f64) -> f64 {
    let base = 10f64.powf(raw.log10().floor());
    let m = raw / base;
    // Thresholds near the geometric means of neighbours, so the tick count
    // lands close to the target.
    let nice = if m < 1.4 {
        1.0
    } else if m < 2.2 {
        2.0
    } else if m < 3.5 {
        2.5
    } else if m < 7.0 {
        5.0
    } else {
        10.0
    };
    nice * base
}

/// Smallest number of decimals that shows multiples of `step` exactly.
fn decimals_for(step: f64) -> usize {
    (0..=12)
        .find(|&d| {
            let s = step * 10f64.powi(d as i32);
            (s - s.round()).abs() <= 1e-6 * s.max(1.0)
        })
        .unwrap_or(12)
}

/// Formats tick value `v` of a linear axis whose ticks are `step` apart and
/// whose largest tick magnitude is `magnitude`.
fn format_linear(v: f64, step: f64, magnitude: f64) -> String {
    // Snap rounding noise to an exact zero (and avoid "-0.0").
    let v = if v.abs() < step * 1e-9 { 0.0 } else { v };
    if magnitude >= 1e6 || step < 1e-4 {
        if v == 0.0 {
            return "0".to_string();
        }
        let exp = magnitude.log10().floor();
        let d = decimals_for(step / 10f64.powf(exp));
        format!("{v:.d$e}")
    } else {
        let d = decimals_for(step);
        format!("{v:.d$}")
    }
}

type Ticks = (Vec<(f64, String)>, Vec<f64>);

/// Evenly spaced "nice" ticks between `lo` and `hi`.
fn linear_ticks(lo: f64, hi: f64, target: usize) -> Ticks {
    let step = nice_step((hi - lo) / target.max(1) as f64);
    let fallback = || {
        (
            vec![(lo, format!("{lo:.3}")), (hi, format!("{hi:.3}"))],
            vec![],
        )
    };
    if !step.is_finite() || step <= 0.0 {
        return fallback();
    }
    let k0 = (lo / step).ceil();
    let k1 = (hi / step).floor();
    if !(k1 - k0).is_finite() || k1 - k0 > MAX_TICKS as f64 || k1 < k0 {
        return fallback();
    }
    let (k0, k1) = (k0 as i64, k1 as i64);
    let magnitude = (k0 as f64 * step).abs().max((k1 as f64 * step).abs());
    let major = (k0..=k1)
        .map(|k| {
            let t = k as f64 * step;
            (t, format_linear(t, step, magnitude))
        })
        .collect();
    let half = step / 2.0;
    let minor = ((lo / half).ceil() as i64..=(hi / half).floor() as i64)
        .take(2 * MAX_TICKS as usize)
        .map(|k| k as f64 * half)
        .collect();
    (major, minor)
}

/// Label for `m × 10^d` on a log axis.
fn format_log(m: u32, d: i32) -> String {
    if (-4..=5).contains(&d) {
        let v = f64::from(m) * 10f64.powi(d);
        let decimals = (-d).max(0) as usize;
        format!("{v:.decimals$}")
    } else {
        format!("{m}e{d}")
    }
}

/// Ticks for a log axis spanning `lo..hi` decades (transformed space).
fn log_ticks(lo: f64, hi: f64) -> Ticks {
    let d0 = lo.ceil() as i32;
    let d1 = hi.floor() as i32;
    let decades = d1 - d0 + 1;
    let at = |m: u32, d: i32| f64::from(m).log10() + f64::from(d);
    let in_range = |t: f64| t >= lo && t <= hi;
    // Wide ranges: decades only; narrower ones also get 2× and 5× ticks.
    if decades >= 2 && hi - lo > 2.5 {
        let every = ((f64::from(decades) / 8.0).ceil() as i32).max(1);
        let major = (d0..=d1)
            .filter(|d| d.rem_euclid(every) == 0)
            .map(|d| (f64::from(d), format_log(1, d)))
            .collect();
        let minor = if decades <= 12 {
            (d0 - 1..=d1)
                .flat_map(|d| (1..=9).map(move |m| at(m, d)))
                .filter(|&t| in_range(t))
                .collect()
        } else {
            (d0..=d1).map(f64::from).collect()
        };
        return (major, minor);
    }
    let candidates = |ms: &'static [u32]| {
        (d0 - 1..=d1 + 1)
            .flat_map(move |d| ms.iter().map(move |&m| (at(m, d), m, d)))
            .filter(|&(t, _, _)| in_range(t))
    };
    let major: Vec<(f64, String)> = candidates(&[1, 2, 5])
        .map(|(t, m, d)| (t, format_log(m, d)))
        .collect();
    if major.len() >= 3 {
        let minor = candidates(&[1, 2, 3, 4, 5, 6, 7, 8, 9])
            .map(|(t, _, _)| t)
            .collect();
        return (major, minor);
    }
    // Less than about half a decade: linear ticks in value space.
    let (vlo, vhi) = (10f64.powf(lo), 10f64.powf(hi));
    let (lin, _) = linear_ticks(vlo, vhi, 5);
    let major = lin
        .into_iter()
        .filter(|(v, _)| *v > 0.0)
        .map(|(v, l)| (v.log10(), l))
        .collect();
    (major, vec![])
}

/// A plotters coordinate with our own tick positions.
#[derive(Debug, Clone)]
pub(crate) struct AxisCoord {
    lo: f64,
    hi: f64,
    major: Vec<f64>,
    minor: Vec<f64>,
}

impl Ranged for AxisCoord {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = self.hi - self.lo;
        let frac = if span > 0.0 {
            (value - self.lo) / span
        } else {
            0.5
        };
        // Keep far-away values representable as pixels.
        let frac = if frac.is_finite() {
            frac.clamp(-10.0, 11.0)
        } else {
            0.5
        };
        limit.0 + ((limit.1 - limit.0) as f64 * frac).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.major.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.lo..self.hi
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(s: &Scale) -> Vec<&str> {
        s.major.iter().map(|(_, l)| l.as_str()).collect()
    }

    #[test]
    fn linear_nice_ticks() {
        let s = Scale::new(false, -0.3, 10.2, 6);
        assert_eq!(labels(&s), ["0", "2", "4", "6", "8", "10"]);
        let s = Scale::new(false, 0.0, 1.0, 4);
        assert_eq!(labels(&s), ["0.00", "0.25", "0.50", "0.75", "1.00"]);
        let s = Scale::new(false, 0.0, 3e6, 3);
        assert_eq!(labels(&s), ["0", "1e6", "2e6", "3e6"]);
    }

    #[test]
    fn log_decades() {
        let s = Scale::new(true, -0.2, 3.3, 6);
        assert_eq!(labels(&s), ["1", "10", "100", "1000"]);
        let s = Scale::new(true, -0.1, 2.1, 6);
        assert_eq!(labels(&s), ["1", "2", "5", "10", "20", "50", "100"]);
        let s = Scale::new(true, -0.1, 1.1, 6);
        assert_eq!(labels(&s), ["1", "2", "5", "10"]);
        let s = Scale::new(true, 0.0, 2.0f64.log10(), 6);
        assert!(s.major.len() >= 2, "{s:?}");
        let s = Scale::new(true, -12.0, 12.0, 6);
        assert!(s.major.len() <= 13);
        assert_eq!(s.label(-12.0), "1e-12");
    }

    #[test]
    fn degenerate_ranges() {
        assert_eq!(
            choose_range(false, None, Some((5.0, 5.0)), "x", false).0,
            (4.5, 5.5)
        );
        assert_eq!(
            choose_range(false, None, Some((0.0, 0.0)), "x", false).0,
            (-1.0, 1.0)
        );
        let (r, note) = choose_range(true, Some((0.0, 10.0)), None, "x", false);
        assert_eq!(r, (0.0, 1.0));
        assert!(note.unwrap().contains("invalid x range"));
        let s = Scale::new(false, -1e300, 1e300, 5);
        assert!(!s.major.is_empty());
    }

    #[test]
    fn speed_axes_start_at_zero() {
        // Fig. 4b of the SPNS report run: speeds of 5430..5700 kB/s. Fitted
        // tightly, the axis started at 5,430 and a 5 % difference filled it.
        let data = Some((5430.0, 5700.0));
        let (r, _) = choose_range(false, None, data, "y", true);
        assert_eq!(r.0, 0.0);
        assert!(r.1 >= 5700.0 && r.1 < 6100.0, "{r:?}");
        let (r, _) = choose_range(false, None, Some((-8.0, -2.0)), "y", true);
        assert_eq!(r.1, 0.0);
        assert!(r.0 < -8.0);
        let (r, _) = choose_range(false, None, Some((-2.0, 3.0)), "y", true);
        assert!(r.0 < -2.0 && r.1 > 3.0);
        assert_eq!(
            choose_range(false, None, Some((0.0, 0.0)), "y", true).0,
            (0.0, 1.0)
        );
        // Log axes cannot include 0; fixed ranges are used as given.
        let (r, _) = choose_range(true, None, Some((1.0, 2.0)), "y", true);
        assert!(r.0 > 0.0);
        assert_eq!(
            choose_range(false, Some((5.0, 6.0)), data, "y", true).0,
            (5.0, 6.0)
        );
    }
}
