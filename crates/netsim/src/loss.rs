//! Random loss models.
//!
//! Random loss is applied at **link entry**, before the drop-tail queue: a
//! randomly lost packet never occupies queue space and is counted under
//! [`crate::stats::DropCause::RandomLoss`]. This mirrors a lossy medium in
//! front of the bottleneck buffer and keeps queue statistics independent of
//! whether a packet would later have been lost.

use rand::Rng;
use serde::{Deserialize, Serialize};

/// A random loss process, evaluated once per packet entering a link.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
#[non_exhaustive]
pub enum LossModel {
    /// No random loss.
    #[default]
    None,
    /// Independent loss with probability `p` per packet.
    Bernoulli {
        /// Loss probability in `[0, 1]`.
        p: f64,
    },
    /// Two-state Gilbert–Elliott model producing bursty loss.
    ///
    /// For each packet the loss decision uses the current state's loss
    /// probability, then the state transitions (Good→Bad with
    /// `p_good_to_bad`, Bad→Good with `p_bad_to_good`). The chain starts in
    /// the Good state.
    GilbertElliott {
        /// Per-packet probability of moving from Good to Bad.
        p_good_to_bad: f64,
        /// Per-packet probability of moving from Bad to Good.
        p_bad_to_good: f64,
        /// Loss probability while in the Good state.
        loss_in_good: f64,
        /// Loss probability while in the Bad state.
        loss_in_bad: f64,
    },
}

impl LossModel {
    /// Bernoulli loss with probability `p`.
    pub fn bernoulli(p: f64) -> Self {
        LossModel::Bernoulli { p }
    }

    /// Gilbert–Elliott loss (see [`LossModel::GilbertElliott`]).
    pub fn gilbert_elliott(
        p_good_to_bad: f64,
        p_bad_to_good: f64,
        loss_in_good: f64,
        loss_in_bad: f64,
    ) -> Self {
        LossModel::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            loss_in_good,
            loss_in_bad,
        }
    }

    /// Checks that every probability lies in `[0, 1]`.
    pub fn validate(&self) -> Result<(), String> {
        let check = |name: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(())
            } else {
                Err(format!("{name} must be a probability in [0, 1], got {v}"))
            }
        };
        match *self {
            LossModel::None => Ok(()),
            LossModel::Bernoulli { p } => check("loss probability", p),
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => {
                check("p_good_to_bad", p_good_to_bad)?;
                check("p_bad_to_good", p_bad_to_good)?;
                check("loss_in_good", loss_in_good)?;
                check("loss_in_bad", loss_in_bad)
            }
        }
    }

    /// Long-run average loss probability of the model.
    pub fn mean_loss(&self) -> f64 {
        match *self {
            LossModel::None => 0.0,
            LossModel::Bernoulli { p } => p,
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => {
                let denom = p_good_to_bad + p_bad_to_good;
                if denom <= 0.0 {
                    // Never leaves the initial Good state.
                    return loss_in_good;
                }
                let pi_bad = p_good_to_bad / denom;
                (1.0 - pi_bad) * loss_in_good + pi_bad * loss_in_bad
            }
        }
    }
}

/// Runtime state of a loss process (the Gilbert–Elliott chain state).
#[derive(Debug, Clone, Default)]
pub(crate) struct LossState {
    model: LossModel,
    in_bad: bool,
}

impl LossState {
    pub(crate) fn new(model: LossModel) -> Self {
        Self {
            model,
            in_bad: false,
        }
    }

    /// Replaces the model and resets the chain to the Good state.
    pub(crate) fn set_model(&mut self, model: LossModel) {
        *self = Self::new(model);
    }

    /// Decides whether the next packet is lost, advancing the chain.
    pub(crate) fn should_drop<R: Rng>(&mut self, rng: &mut R) -> bool {
        match self.model {
            LossModel::None => false,
            LossModel::Bernoulli { p } => p > 0.0 && rng.gen::<f64>() < p,
            LossModel::GilbertElliott {
                p_good_to_bad,
                p_bad_to_good,
                loss_in_good,
                loss_in_bad,
            } => {
                let p_loss = if self.in_bad {
                    loss_in_bad
                } else {
                    loss_in_good
                };
                let lost = rng.gen::<f64>() < p_loss;
                let p_switch = if self.in_bad {
                    p_bad_to_good
                } else {
                    p_good_to_bad
                };
                if rng.gen::<f64>() < p_switch {
                    self.in_bad = !self.in_bad;
                }
                lost
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn validate_rejects_out_of_range() {
        assert!(LossModel::bernoulli(1.5).validate().is_err());
        assert!(LossModel::bernoulli(f64::NAN).validate().is_err());
        assert!(LossModel::gilbert_elliott(0.1, 0.2, 0.0, -0.1)
            .validate()
            .is_err());
        assert!(LossModel::gilbert_elliott(0.1, 0.2, 0.0, 1.0)
            .validate()
            .is_ok());
    }

    #[test]
    fn ge_mean_loss_matches_simulation() {
        let model = LossModel::gilbert_elliott(0.01, 0.1, 0.0, 0.5);
        let mut st = LossState::new(model);
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let n = 400_000;
        let lost = (0..n).filter(|_| st.should_drop(&mut rng)).count();
        let rate = lost as f64 / n as f64;
        assert!((rate - model.mean_loss()).abs() < 0.01, "{rate}");
    }

    #[test]
    fn extremes() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let mut none = LossState::new(LossModel::None);
        let mut all = LossState::new(LossModel::bernoulli(1.0));
        for _ in 0..100 {
            assert!(!none.should_drop(&mut rng));
            assert!(all.should_drop(&mut rng));
        }
    }
}
