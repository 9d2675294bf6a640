//! WSP space-filling design (Santiago, Claeys-Bruno & Sergent, 2012), as
//! used by the CoNEXT 2017 and CCR 2022 multipath QUIC evaluations.
//!
//! Many random candidate points are drawn in the unit hypercube with a
//! seeded RNG; starting from the candidate nearest the centre, WSP keeps a
//! point, discards every candidate closer than `d_min` to it, and moves to
//! the nearest remaining candidate. [`design`] searches `d_min` by
//! bisection so that about `n` points are kept.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::SplitMix64;

/// The candidate generator of [`design`]: SplitMix64 (small, deterministic, enough for
/// experiment designs), seeded as the suites' published designs were.
fn candidate_rng(seed: u64) -> SplitMix64 {
    SplitMix64::seed_from_u64(seed ^ 0x5851_F42D_4C95_7F2D)
}

/// Uniform in `[0, 1)` from the top 53 bits of the next draw.
fn unit_f64(rng: &mut SplitMix64) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

fn dist2(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// One WSP pass over `candidates` with minimum distance `d_min`.
pub fn wsp_select(candidates: &[Vec<f64>], d_min: f64) -> Vec<Vec<f64>> {
    let Some(dim) = candidates.first().map(Vec::len) else {
        return Vec::new();
    };
    let centre = vec![0.5; dim];
    let mut alive: Vec<bool> = vec![true; candidates.len()];
    let mut current = (0..candidates.len())
        .min_by(|&a, &b| dist2(&candidates[a], &centre).total_cmp(&dist2(&candidates[b], &centre)))
        .expect("non-empty");
    let d2 = d_min * d_min;
    let mut kept = Vec::new();
    loop {
        kept.push(candidates[current].clone());
        alive[current] = false;
        for (i, c) in candidates.iter().enumerate() {
            if alive[i] && dist2(c, &candidates[current]) < d2 {
                alive[i] = false;
            }
        }
        let next = (0..candidates.len())
            .filter(|&i| alive[i])
            .min_by(|&a, &b| {
                dist2(&candidates[a], &candidates[current])
                    .total_cmp(&dist2(&candidates[b], &candidates[current]))
            });
        match next {
            Some(n) => current = n,
            None => return kept,
        }
    }
}

/// About `n` well-spread points in `[0,1]^dim`, deterministic in `seed`.
/// Uses `max(50 n, 500)` candidates and bisects `d_min` to get the count
/// closest to `n`.
pub fn design(n: usize, dim: usize, seed: u64) -> Vec<Vec<f64>> {
    if n == 0 || dim == 0 {
        return Vec::new();
    }
    let mut rng = candidate_rng(seed);
    let count = (50 * n).max(500);
    let candidates: Vec<Vec<f64>> = (0..count)
        .map(|_| (0..dim).map(|_| unit_f64(&mut rng)).collect())
        .collect();
    let (mut lo, mut hi) = (0.0, (dim as f64).sqrt());
    let mut best = wsp_select(&candidates, hi);
    for _ in 0..40 {
        let mid = (lo + hi) / 2.0;
        let pts = wsp_select(&candidates, mid);
        if pts.len().abs_diff(n) < best.len().abs_diff(n) {
            best = pts.clone();
        }
        if pts.len() == n {
            break;
        }
        if pts.len() > n {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    best
}

/// Maps `u` in `[0,1]` linearly onto `[lo, hi]`.
pub fn lin(u: f64, lo: f64, hi: f64) -> f64 {
    lo + u * (hi - lo)
}

/// Maps `u` in `[0,1]` logarithmically onto `[lo, hi]` (both positive).
pub fn log(u: f64, lo: f64, hi: f64) -> f64 {
    (lo.ln() + u * (hi.ln() - lo.ln())).exp()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn design_is_deterministic_and_near_n() {
        let a = design(10, 4, 7);
        let b = design(10, 4, 7);
        assert_eq!(a, b);
        assert!((8..=12).contains(&a.len()), "{}", a.len());
        assert!(a.iter().flatten().all(|x| (0.0..1.0).contains(x)));
    }

    /// The candidates are the SplitMix64 sequence the suites' designs were drawn from before
    /// `rand_xoshiro` replaced the hand-written generator (values from the published
    /// algorithm), so every suite's experiment points are unchanged.
    #[test]
    fn candidates_are_the_splitmix64_sequence() {
        let mut rng = candidate_rng(1);
        assert_eq!(rng.next_u64(), 0xc1b4_bb72_8dd9_6dc3);
        assert_eq!(rng.next_u64(), 0xfc94_d6cb_a1d4_622c);
        assert_eq!(
            unit_f64(&mut rng),
            (0xe3a8_c908_8ca4_fd45u64 >> 11) as f64 / (1u64 << 53) as f64
        );
    }

    #[test]
    fn maps() {
        assert!((log(0.5, 0.1, 100.0) - 100f64.sqrt() * 0.1f64.sqrt()).abs() < 1e-9);
        assert_eq!(lin(0.25, 0.0, 4.0), 1.0);
    }
}
