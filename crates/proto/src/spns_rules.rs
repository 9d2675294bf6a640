//! The Alibaba SPNS report's rules (seed 000, §2.1, §2.2 and §2.4) as switches.
//!
//! Each rule is configuration read by the seam that implements it: the loss detector
//! ([`crate::recovery`]), RTT sampling ([`crate::recovery::sampling`]) and the receiver's ACK
//! policy ([`crate::ack`]). Connection code passes the rules through and never branches on
//! the multipath design. [`SpnsRules::report`] (the default) turns every rule on;
//! [`SpnsRules::naive`] turns them all off, which is what early SPNS implementations did: one
//! loss detector over the shared space, ACKs on any path, RTT samples from any ACK (the
//! behaviour the CCR 2022 measurements saw, seed 003).
//!
//! The rules are "fully applicable for MPNS" (report §2.2): with one space per path most of
//! them coincide with plain RFC 9000 / RFC 9002 behaviour, so they change little there.

use std::fmt;

/// The report's rules; each `true` field is one rule turned on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SpnsRules {
    /// §2.1: loss detection per path. The packet threshold counts packets sent on the same
    /// path before that path's largest acknowledged one, and only packets sent before it are
    /// candidates for the time threshold. Off: one detector over the shared space compares
    /// packet numbers (largest acknowledged in the space minus kPacketThreshold, RFC 9002
    /// §6.1.1) on every path.
    pub per_path_loss_detection: bool,
    /// §2.2 (sender): a path takes an RTT sample only from an ACK received on that path whose
    /// Largest Acknowledged was sent on it. Off: the ACK's newly acknowledged Largest
    /// Acknowledged gives the receiving path a sample, whichever path sent it (samples mix
    /// the uplink of one path with the downlink of another).
    pub per_path_rtt_samples: bool,
    /// §2.2 (receiver): an ack-eliciting threshold and an ACK timer per path, and the ACK goes
    /// back on the path that received the packets. Off: one threshold and timer for the space,
    /// and the ACK goes on the path a min-RTT scheduler picks (the lowest smoothed RTT), so
    /// with heterogeneous paths every ACK takes the fast path.
    pub ack_on_receiving_path: bool,
    /// §2.2 (receiver): an ACK frame starts at the largest packet received on the path it is
    /// sent on (Largest Acknowledged and ACK Delay of that path). Off: at the space's largest
    /// received packet (RFC 9000 §13.2.5).
    pub ack_from_path_largest: bool,
    /// §2.4: two range limits: Default_Limit may be exceeded to cover a packet received since
    /// the last ACK, up to Maximum_Limit. Off: Default_Limit is a hard limit (RFC 9000 §13.2.4
    /// practice: the ranges nearest the largest, older ones dropped).
    pub two_range_limits: bool,
    /// §2.4: a gap in the shared space is not "out of order" (paths interleave their packet
    /// numbers), so it does not trigger an immediate ACK; only a packet below its own path's
    /// largest does (when `AckConfig::immediate_ack_on_reorder`). Off: every gap in the space
    /// triggers an immediate ACK (RFC 9000 §13.2.1 applied to the shared space).
    pub ack_threshold_despite_gaps: bool,
}

/// One rule of [`SpnsRules`], for ablations and the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SpnsRule {
    /// [`SpnsRules::per_path_loss_detection`] (§2.1).
    PerPathLossDetection,
    /// [`SpnsRules::per_path_rtt_samples`] (§2.2).
    PerPathRttSamples,
    /// [`SpnsRules::ack_on_receiving_path`] (§2.2).
    AckOnReceivingPath,
    /// [`SpnsRules::ack_from_path_largest`] (§2.2).
    AckFromPathLargest,
    /// [`SpnsRules::two_range_limits`] (§2.4).
    TwoRangeLimits,
    /// [`SpnsRules::ack_threshold_despite_gaps`] (§2.4).
    AckThresholdDespiteGaps,
}

impl SpnsRule {
    /// Every rule, in the report's order.
    pub const ALL: [SpnsRule; 6] = [
        SpnsRule::PerPathLossDetection,
        SpnsRule::PerPathRttSamples,
        SpnsRule::AckOnReceivingPath,
        SpnsRule::AckFromPathLargest,
        SpnsRule::TwoRangeLimits,
        SpnsRule::AckThresholdDespiteGaps,
    ];

    /// Kebab-case name (command line, run IDs).
    pub fn name(self) -> &'static str {
        match self {
            SpnsRule::PerPathLossDetection => "per-path-loss-detection",
            SpnsRule::PerPathRttSamples => "per-path-rtt-samples",
            SpnsRule::AckOnReceivingPath => "ack-on-receiving-path",
            SpnsRule::AckFromPathLargest => "ack-from-path-largest",
            SpnsRule::TwoRangeLimits => "two-range-limits",
            SpnsRule::AckThresholdDespiteGaps => "ack-threshold-despite-gaps",
        }
    }

    /// The report section that states the rule.
    pub fn section(self) -> &'static str {
        match self {
            SpnsRule::PerPathLossDetection => "§2.1",
            SpnsRule::PerPathRttSamples
            | SpnsRule::AckOnReceivingPath
            | SpnsRule::AckFromPathLargest => "§2.2",
            SpnsRule::TwoRangeLimits | SpnsRule::AckThresholdDespiteGaps => "§2.4",
        }
    }
}

impl std::str::FromStr for SpnsRule {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let s = s.trim().to_ascii_lowercase().replace('_', "-");
        SpnsRule::ALL
            .into_iter()
            .find(|r| r.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = SpnsRule::ALL.iter().map(|r| r.name()).collect();
                format!(
                    "unknown SPNS rule '{s}' (expected one of {})",
                    names.join(", ")
                )
            })
    }
}

impl Default for SpnsRules {
    fn default() -> Self {
        Self::report()
    }
}

impl SpnsRules {
    /// Every rule of the report on (the default).
    pub const fn report() -> Self {
        Self {
            per_path_loss_detection: true,
            per_path_rtt_samples: true,
            ack_on_receiving_path: true,
            ack_from_path_largest: true,
            two_range_limits: true,
            ack_threshold_despite_gaps: true,
        }
    }

    /// Every rule off: "naive SPNS" as early implementations had it.
    pub const fn naive() -> Self {
        Self {
            per_path_loss_detection: false,
            per_path_rtt_samples: false,
            ack_on_receiving_path: false,
            ack_from_path_largest: false,
            two_range_limits: false,
            ack_threshold_despite_gaps: false,
        }
    }

    /// Whether `rule` is on.
    pub fn get(&self, rule: SpnsRule) -> bool {
        match rule {
            SpnsRule::PerPathLossDetection => self.per_path_loss_detection,
            SpnsRule::PerPathRttSamples => self.per_path_rtt_samples,
            SpnsRule::AckOnReceivingPath => self.ack_on_receiving_path,
            SpnsRule::AckFromPathLargest => self.ack_from_path_largest,
            SpnsRule::TwoRangeLimits => self.two_range_limits,
            SpnsRule::AckThresholdDespiteGaps => self.ack_threshold_despite_gaps,
        }
    }

    /// These rules with `rule` set to `on`.
    pub fn with(mut self, rule: SpnsRule, on: bool) -> Self {
        let slot = match rule {
            SpnsRule::PerPathLossDetection => &mut self.per_path_loss_detection,
            SpnsRule::PerPathRttSamples => &mut self.per_path_rtt_samples,
            SpnsRule::AckOnReceivingPath => &mut self.ack_on_receiving_path,
            SpnsRule::AckFromPathLargest => &mut self.ack_from_path_largest,
            SpnsRule::TwoRangeLimits => &mut self.two_range_limits,
            SpnsRule::AckThresholdDespiteGaps => &mut self.ack_threshold_despite_gaps,
        };
        *slot = on;
        self
    }
}

/// `report`, `naive`, or a preset followed by changes: `report,no-two-range-limits`,
/// `naive,per-path-rtt-samples`.
impl std::str::FromStr for SpnsRules {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut parts = s.split(',').map(str::trim);
        let mut rules = match parts.next().map(str::to_ascii_lowercase).as_deref() {
            Some("report") | Some("on") => SpnsRules::report(),
            Some("naive") | Some("off") => SpnsRules::naive(),
            _ => {
                return Err(format!(
                    "unknown SPNS rules '{s}' (expected report or naive, optionally followed by \
                     ,RULE or ,no-RULE)"
                ))
            }
        };
        for part in parts {
            let (on, name) = match part.strip_prefix("no-") {
                Some(name) => (false, name),
                None => (true, part),
            };
            rules = rules.with(name.parse()?, on);
        }
        Ok(rules)
    }
}

/// The shortest form [`FromStr`](std::str::FromStr) reads back: `report`, `naive`, or
/// `report,no-RULE,...`.
impl fmt::Display for SpnsRules {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let off = SpnsRule::ALL.iter().filter(|r| !self.get(**r)).count();
        let (base, base_on) = if off * 2 > SpnsRule::ALL.len() {
            ("naive", false)
        } else {
            ("report", true)
        };
        f.write_str(base)?;
        for rule in SpnsRule::ALL {
            match (self.get(rule), base_on) {
                (true, false) => write!(f, ",{}", rule.name())?,
                (false, true) => write!(f, ",no-{}", rule.name())?,
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_turn_every_rule_on_or_off() {
        for rule in SpnsRule::ALL {
            assert!(SpnsRules::report().get(rule), "{rule:?}");
            assert!(!SpnsRules::naive().get(rule), "{rule:?}");
            let one_off = SpnsRules::report().with(rule, false);
            for other in SpnsRule::ALL {
                assert_eq!(one_off.get(other), other != rule);
            }
        }
        assert_eq!(SpnsRules::default(), SpnsRules::report());
    }

    #[test]
    fn names_round_trip() {
        assert_eq!("report".parse(), Ok(SpnsRules::report()));
        assert_eq!("naive".parse(), Ok(SpnsRules::naive()));
        let r: SpnsRules = "report, no-two-range-limits".parse().unwrap();
        assert_eq!(r, SpnsRules::report().with(SpnsRule::TwoRangeLimits, false));
        assert_eq!(r.to_string(), "report,no-two-range-limits");
        let n = SpnsRules::naive().with(SpnsRule::PerPathRttSamples, true);
        assert_eq!(n.to_string(), "naive,per-path-rtt-samples");
        for rules in [SpnsRules::report(), SpnsRules::naive(), r, n] {
            assert_eq!(rules.to_string().parse(), Ok(rules));
        }
        assert!("report,no-such-rule".parse::<SpnsRules>().is_err());
        assert!("everything".parse::<SpnsRules>().is_err());
    }
}
