//! Synthetic, seeded Mahimahi traces.
//!
//! # Model
//!
//! Capacity follows a **Markov-modulated Poisson process**:
//!
//! * A continuous-time Markov chain moves between capacity *states*. State
//!   `i` has a mean rate `rate_bps` and an exponentially distributed holding
//!   time with mean `mean_dwell_ms`. When it is left, the next state is drawn
//!   with probability proportional to row `i` of `transition_weights`
//!   (uniform over the other states when no matrix is given).
//! * Within a state, time is cut into slots of `variation_period_ms`; in each
//!   slot the rate is multiplied by a factor drawn uniformly from
//!   `[1 - variation, 1 + variation]` (short-timescale variability).
//! * Within a slot, 1500-byte delivery opportunities arrive as a Poisson
//!   process of intensity `rate / 12000` per second; each opportunity's time
//!   is truncated to whole milliseconds.
//! * A final opportunity is placed at `duration_ms`, so the trace's period
//!   (its last timestamp) is exactly the requested duration.
//!
//! Everything is driven by a `ChaCha20Rng` seeded from the given `u64`, so a
//! `(config, seed)` pair always yields the same trace.
//!
//! Presets: [`GeneratorConfig::wifi_like`] (10–60 Mbit/s with fast changes and
//! occasional short drops to 2 Mbit/s) and [`GeneratorConfig::lte_like`]
//! (2–30 Mbit/s with slower changes and deep fades to 0.3 Mbit/s).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};

use crate::trace::{MahimahiTrace, OPPORTUNITY_BYTES};

/// Longest trace generated (one hour). A trace repeats with its period, so a longer one adds
/// only memory and time (about 2.4 MB per minute at 60 Mbit/s): without a bound, a spec such as
/// `gen:lte:1:1000000000s` made the generator run out of memory.
pub const MAX_DURATION_MS: u64 = 3_600_000;

/// Invalid generator parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid trace generator configuration: {0}")]
pub struct GenerateError(
    /// What is wrong with the configuration.
    pub String,
);

/// One state of the capacity chain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CapacityState {
    /// Mean capacity in this state (bit/s, may be 0 for an outage).
    pub rate_bps: f64,
    /// Mean holding time in milliseconds (exponentially distributed).
    pub mean_dwell_ms: f64,
}

/// Parameters of the Markov-modulated capacity process (see module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GeneratorConfig {
    /// Short name used in the trace's source name (`gen:NAME:SEED`).
    pub name: String,
    /// The capacity states.
    pub states: Vec<CapacityState>,
    /// Optional `states.len()²` matrix of transition weights (diagonal ignored).
    #[serde(default)]
    pub transition_weights: Option<Vec<Vec<f64>>>,
    /// Index of the starting state.
    #[serde(default)]
    pub initial_state: usize,
    /// Relative rate variation per slot, in `[0, 1)`.
    #[serde(default)]
    pub variation: f64,
    /// Slot length for the variation, in milliseconds (positive).
    pub variation_period_ms: u64,
    /// Length of the generated trace (its period), in milliseconds.
    pub duration_ms: u64,
}

fn st(mbit: f64, dwell_ms: f64) -> CapacityState {
    CapacityState {
        rate_bps: mbit * 1e6,
        mean_dwell_ms: dwell_ms,
    }
}

impl GeneratorConfig {
    /// Wi-Fi-like capacity: 60/40/25/10 Mbit/s states changing every
    /// 0.5–2 s, ±30 % variation per 10 ms, rare 150 ms drops to 2 Mbit/s.
    /// Duration 60 s.
    pub fn wifi_like() -> Self {
        Self {
            name: "wifi".to_owned(),
            states: vec![
                st(60.0, 2000.0),
                st(40.0, 1500.0),
                st(25.0, 1000.0),
                st(10.0, 500.0),
                st(2.0, 150.0),
            ],
            transition_weights: Some(vec![
                vec![0.0, 0.7, 0.2, 0.05, 0.05],
                vec![0.45, 0.0, 0.4, 0.1, 0.05],
                vec![0.2, 0.4, 0.0, 0.3, 0.1],
                vec![0.1, 0.3, 0.5, 0.0, 0.1],
                vec![0.3, 0.5, 0.2, 0.0, 0.0],
            ]),
            initial_state: 1,
            variation: 0.3,
            variation_period_ms: 10,
            duration_ms: 60_000,
        }
    }

    /// LTE-like capacity: 30/18/8/2 Mbit/s states changing every 2–4 s,
    /// ±20 % variation per 50 ms, and deep fades to 0.3 Mbit/s (~0.6 s).
    /// Duration 60 s.
    pub fn lte_like() -> Self {
        Self {
            name: "lte".to_owned(),
            states: vec![
                st(30.0, 4000.0),
                st(18.0, 4000.0),
                st(8.0, 3000.0),
                st(2.0, 2000.0),
                st(0.3, 600.0),
            ],
            transition_weights: Some(vec![
                vec![0.0, 0.7, 0.2, 0.05, 0.05],
                vec![0.35, 0.0, 0.45, 0.1, 0.1],
                vec![0.1, 0.45, 0.0, 0.3, 0.15],
                vec![0.05, 0.2, 0.5, 0.0, 0.25],
                vec![0.1, 0.2, 0.4, 0.3, 0.0],
            ]),
            initial_state: 1,
            variation: 0.2,
            variation_period_ms: 50,
            duration_ms: 60_000,
        }
    }

    /// Sets the duration (trace period) in milliseconds.
    pub fn with_duration_ms(mut self, duration_ms: u64) -> Self {
        self.duration_ms = duration_ms;
        self
    }

    /// Checks the parameters.
    pub fn validate(&self) -> Result<(), GenerateError> {
        let err = |m: String| Err(GenerateError(m));
        let n = self.states.len();
        if n == 0 {
            return err("at least one state is required".into());
        }
        if self.duration_ms == 0 {
            return err("duration_ms must be positive".into());
        }
        if self.duration_ms > MAX_DURATION_MS {
            return err(format!(
                "duration_ms {} is longer than the maximum {MAX_DURATION_MS} (one hour)",
                self.duration_ms
            ));
        }
        if self.variation_period_ms == 0 {
            return err("variation_period_ms must be positive".into());
        }
        if !(0.0..1.0).contains(&self.variation) {
            return err(format!(
                "variation must be in [0, 1), got {}",
                self.variation
            ));
        }
        if self.initial_state >= n {
            return err(format!("initial_state {} out of range", self.initial_state));
        }
        for (i, s) in self.states.iter().enumerate() {
            if !(s.rate_bps.is_finite() && s.rate_bps >= 0.0) {
                return err(format!("state {i}: rate_bps must be >= 0"));
            }
            if !(s.mean_dwell_ms.is_finite() && s.mean_dwell_ms > 0.0) {
                return err(format!("state {i}: mean_dwell_ms must be > 0"));
            }
        }
        if let Some(w) = &self.transition_weights {
            if w.len() != n || w.iter().any(|row| row.len() != n) {
                return err(format!("transition_weights must be a {n}x{n} matrix"));
            }
            for (i, row) in w.iter().enumerate() {
                if row.iter().any(|x| !(x.is_finite() && *x >= 0.0)) {
                    return err(format!("transition_weights row {i}: weights must be >= 0"));
                }
                let out: f64 = row
                    .iter()
                    .enumerate()
                    .filter(|(j, _)| *j != i)
                    .map(|(_, x)| x)
                    .sum();
                if n > 1 && out <= 0.0 {
                    return err(format!(
                        "transition_weights row {i}: no way out of state {i}"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Generates a trace (see the module docs for the model).
    pub fn generate(&self, seed: u64) -> Result<MahimahiTrace, GenerateError> {
        self.validate()?;
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let duration = self.duration_ms as f64;
        let mut out = Vec::new();
        let mut state = self.initial_state;
        let mut t = 0.0f64;
        while t < duration {
            let s = &self.states[state];
            let end = (t + exponential(&mut rng, s.mean_dwell_ms)).min(duration);
            self.fill_state(&mut rng, s.rate_bps, t, end, &mut out);
            t = end;
            state = self.next_state(&mut rng, state);
        }
        out.push(self.duration_ms);
        let name = format!("gen:{}:{seed}", self.name);
        MahimahiTrace::from_timestamps(out, name).map_err(|e| GenerateError(e.to_string()))
    }

    /// Poisson opportunities in `[start, end)` ms for a state of `rate_bps`.
    fn fill_state(
        &self,
        rng: &mut ChaCha20Rng,
        rate_bps: f64,
        start: f64,
        end: f64,
        out: &mut Vec<u64>,
    ) {
        let slot = self.variation_period_ms as f64;
        let mut s = start;
        while s < end {
            let seg_end = (((s / slot).floor() + 1.0) * slot).min(end);
            let factor = 1.0 + self.variation * (2.0 * rng.gen::<f64>() - 1.0);
            // Opportunities per millisecond.
            let lambda = rate_bps * factor / (OPPORTUNITY_BYTES * 8) as f64 / 1000.0;
            if lambda > 0.0 {
                let mut a = s + exponential(rng, 1.0 / lambda);
                while a < seg_end {
                    out.push(a.floor() as u64);
                    a += exponential(rng, 1.0 / lambda);
                }
            }
            s = seg_end;
        }
    }

    fn next_state(&self, rng: &mut ChaCha20Rng, cur: usize) -> usize {
        let n = self.states.len();
        if n == 1 {
            return cur;
        }
        let weight = |j: usize| -> f64 {
            if j == cur {
                return 0.0;
            }
            match &self.transition_weights {
                Some(w) => w[cur][j],
                None => 1.0,
            }
        };
        let total: f64 = (0..n).map(weight).sum();
        let mut x = rng.gen::<f64>() * total;
        for j in 0..n {
            let w = weight(j);
            if w > 0.0 && x < w {
                return j;
            }
            x -= w;
        }
        // Rounding fallback: the last state with positive weight.
        (0..n).rev().find(|&j| weight(j) > 0.0).unwrap_or(cur)
    }
}

/// Exponential sample with the given mean.
fn exponential(rng: &mut ChaCha20Rng, mean: f64) -> f64 {
    let u: f64 = rng.gen();
    -mean * (1.0 - u).ln()
}

/// Wi-Fi-like trace of `duration_ms` (see [`GeneratorConfig::wifi_like`]).
pub fn wifi_like(seed: u64, duration_ms: u64) -> Result<MahimahiTrace, GenerateError> {
    GeneratorConfig::wifi_like()
        .with_duration_ms(duration_ms)
        .generate(seed)
}

/// LTE-like trace of `duration_ms` (see [`GeneratorConfig::lte_like`]).
pub fn lte_like(seed: u64, duration_ms: u64) -> Result<MahimahiTrace, GenerateError> {
    GeneratorConfig::lte_like()
        .with_duration_ms(duration_ms)
        .generate(seed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duration_is_bounded() {
        // Regression: the duration was unbounded, so this spec value exhausted memory.
        assert!(lte_like(1, MAX_DURATION_MS + 1).is_err());
        let spec = crate::PathSpec::parse("trace=gen:lte:1:1000000000s").expect("parses");
        assert!(spec.resolve().is_err());
    }

    #[test]
    fn deterministic_and_seed_dependent() {
        let a = wifi_like(1, 5000).expect("gen");
        let b = wifi_like(1, 5000).expect("gen");
        let c = wifi_like(2, 5000).expect("gen");
        assert_eq!(a, b);
        assert_ne!(a.timestamps_ms(), c.timestamps_ms());
        assert_eq!(a.period_ms(), 5000);
        assert_eq!(a.source(), "gen:wifi:1");
        let text = a.to_text();
        assert_eq!(
            MahimahiTrace::parse(&text, "x")
                .expect("parse")
                .timestamps_ms(),
            a.timestamps_ms()
        );
    }

    #[test]
    fn mean_rates_are_plausible() {
        for seed in 0..4 {
            let w = wifi_like(seed, 120_000).expect("gen").mean_rate_bps() / 1e6;
            assert!((8.0..=60.0).contains(&w), "wifi {w}");
            let l = lte_like(seed, 120_000).expect("gen").mean_rate_bps() / 1e6;
            assert!((1.0..=30.0).contains(&l), "lte {l}");
        }
    }

    #[test]
    fn single_constant_state_matches_rate() {
        let cfg = GeneratorConfig {
            name: "c".into(),
            states: vec![st(12.0, 1e9)],
            transition_weights: None,
            initial_state: 0,
            variation: 0.0,
            variation_period_ms: 100,
            duration_ms: 100_000,
        };
        let r = cfg.generate(3).expect("gen").mean_rate_bps();
        assert!((r / 12e6 - 1.0).abs() < 0.02, "{r}");
    }

    #[test]
    fn rejects_bad_configs() {
        let mut c = GeneratorConfig::wifi_like();
        c.states.clear();
        assert!(c.generate(0).is_err());
        let mut c = GeneratorConfig::lte_like();
        c.transition_weights = Some(vec![vec![1.0]]);
        assert!(c.validate().is_err());
        let mut c = GeneratorConfig::lte_like();
        c.variation = 1.0;
        assert!(c.validate().is_err());
        assert!(GeneratorConfig::lte_like()
            .with_duration_ms(0)
            .validate()
            .is_err());
        let mut c = GeneratorConfig::wifi_like();
        c.states[0].mean_dwell_ms = 0.0;
        assert!(c.validate().is_err());
    }

    #[test]
    fn outage_state_gives_valid_trace() {
        let cfg = GeneratorConfig {
            name: "z".into(),
            states: vec![st(0.0, 10.0)],
            transition_weights: None,
            initial_state: 0,
            variation: 0.0,
            variation_period_ms: 10,
            duration_ms: 50,
        };
        let t = cfg.generate(0).expect("gen");
        assert_eq!(t.timestamps_ms(), &[50]);
    }
}
