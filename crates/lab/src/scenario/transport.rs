//! The `[transport]` table of a scenario: the one file form of [`TransportConfig`] (the
//! command line's transport flags map onto it too), plus the lab's own `crypto` and
//! `zero_rtt`. It only maps keys onto the configuration; every range check is
//! [`TransportConfig::validate`]'s, whose errors are renamed to the key as written.

use std::fmt;

use mpquic_proto::cc::CcAlgorithm;
use mpquic_proto::reinjection::ReinjectionMode;
use mpquic_proto::scheduler::SchedulerKind;
use mpquic_proto::AckConfig;
use mpquic_proto::MtuDiscoveryConfig;
use mpquic_proto::{ConfigError, Duration, MultipathMode, SpnsRule, SpnsRules, TransportConfig};
use serde::{de, Deserialize, Deserializer, Serialize};

use super::checks;
use crate::units::{de_from_str, SimDuration};

/// [`SpnsRules`] from a preset string or a table of rule switches.
fn de_spns_rules<'de, D: Deserializer<'de>>(d: D) -> Result<SpnsRules, D::Error> {
    struct Visitor;
    impl<'de> de::Visitor<'de> for Visitor {
        type Value = SpnsRules;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str(
                "\"report\", \"naive\" (optionally with ,RULE or ,no-RULE) or a table of rules",
            )
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<SpnsRules, E> {
            v.parse().map_err(E::custom)
        }
        fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<SpnsRules, A::Error> {
            SpnsRules::deserialize(de::value::MapAccessDeserializer::new(map))
        }
    }
    d.deserialize_any(Visitor)
}

fn reinjection_default(mode: &ReinjectionMode) -> bool {
    *mode == ReinjectionMode::default()
}

/// Transport settings, mapped onto [`TransportConfig`] for both endpoints.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TransportSettings {
    /// Congestion controller (`newreno`, `cubic`, ...).
    #[serde(deserialize_with = "de_from_str")]
    pub cc: CcAlgorithm,
    /// Multipath design offered by both endpoints.
    #[serde(deserialize_with = "de_from_str")]
    pub multipath: MultipathMode,
    /// Path scheduler of the sender.
    #[serde(deserialize_with = "de_from_str")]
    pub scheduler: SchedulerKind,
    /// Default_Limit of ACK ranges (overrides `ack.default_range_limit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack_range_limit: Option<usize>,
    /// Full ACK policy; omitted fields keep their defaults.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ack: Option<AckConfig>,
    /// The SPNS report's rules: `"report"` (default), `"naive"`, a preset with changes
    /// (`"report,no-two-range-limits"`), or a table of
    /// [`SpnsRules`](mpquic_proto::SpnsRules) fields (missing ones on). Recorded in the run
    /// JSON in the string form.
    #[serde(
        deserialize_with = "de_spns_rules",
        serialize_with = "crate::units::ser_display"
    )]
    pub spns_rules: SpnsRules,
    /// Overrides `spns_rules.per_path_rtt_samples` (the older name of the §2.2 RTT rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rtt_sample_on_receiving_path: Option<bool>,
    /// Initial RTT estimate in milliseconds (RFC 9002: 333).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_rtt_ms: Option<f64>,
    /// Pace packets.
    pub pacing: bool,
    /// Idle timeout of both endpoints (default 30 s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_timeout: Option<SimDuration>,
    /// Largest UDP payload sent without path MTU discovery (default 1350).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_datagram_size: Option<u16>,
    /// Path MTU discovery (RFC 9000 §14.3, RFC 8899) on both endpoints: each path starts at
    /// 1200 bytes and probes up to `mtu_ceiling`. Off by default in the lab, unlike
    /// `TransportConfig`, so that scenarios keep their recorded figures (every packet
    /// `max_datagram_size`); `true` turns it on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu_discovery: Option<bool>,
    /// Largest UDP payload probed with `mtu_discovery` (default 1452).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtu_ceiling: Option<u16>,
    /// Re-injection policy of the sender (XLINK; default `tail`: a stranded tail only).
    #[serde(
        skip_serializing_if = "reinjection_default",
        deserialize_with = "checks::de_reinjection"
    )]
    pub reinjection: ReinjectionMode,
    /// Offer / accept the XLINK QoE feedback extension.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub qoe_feedback: bool,
    /// Initiate a 1-RTT key update every this many packets (RFC 9001 §6; default: only near
    /// the AEAD limits).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_update_interval: Option<u64>,
    /// 1-RTT packet protection: `real` (default; the negotiated AEAD) or `sim`, the
    /// simulator's **not secure** stand-in (plaintext payloads under a checksum tag of the
    /// same 16 bytes, see `mpquic_proto::crypto::sim`), which gives the same results faster.
    /// The TLS handshake stays real. Simulated runs only; always recorded in the run JSON.
    pub crypto: CryptoMode,
    /// ECN (RFC 9000 §13.4): mark ECT(0) and react to CE. Unset (the default): on exactly when
    /// a link of the scenario marks CE or bleaches the codepoint (`ecn=`, `ecn_bleach=`), so
    /// runs without such links keep the ACK frames (no ECN counts) and every figure recorded
    /// before ECN existed; `--no-ecn` sets false.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// TLS session resumption and 0-RTT (RFC 9001 §4.6) across the client's successive
    /// connections (`requests = { connections = N }`): the server issues tickets and accepts
    /// early data, the client keeps one session store for the whole run, so every connection
    /// after the first resumes and, over the custom protocol, sends its requests in 0-RTT
    /// packets. Off (and absent from the JSON) by default, which keeps tickets out of the
    /// recorded figures (`zero_rtt = false` is not echoed either).
    #[serde(default, skip_serializing_if = "zero_rtt_off")]
    pub zero_rtt: Option<bool>,
}

/// Whether `transport.zero_rtt` is off (not serialized then).
fn zero_rtt_off(v: &Option<bool>) -> bool {
    *v != Some(true)
}

/// How the simulated endpoints protect 1-RTT packets (`transport.crypto`, `--crypto`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum CryptoMode {
    /// The negotiated AEAD and header protection (rustls).
    #[default]
    Real,
    /// The simulator's stand-in: **not secure**, same packet sizes, much cheaper.
    Sim,
}

impl CryptoMode {
    /// The core's setting (see `mpquic_proto::Endpoint::new_for_simulation`).
    pub fn protection(self) -> mpquic_proto::crypto::PacketProtection {
        match self {
            CryptoMode::Real => mpquic_proto::crypto::PacketProtection::Real,
            CryptoMode::Sim => mpquic_proto::crypto::PacketProtection::SimulationOnly,
        }
    }
}

impl std::fmt::Display for CryptoMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CryptoMode::Real => "real",
            CryptoMode::Sim => "sim",
        })
    }
}

impl Default for TransportSettings {
    fn default() -> Self {
        let d = TransportConfig::default();
        Self {
            cc: d.congestion,
            multipath: d.multipath,
            scheduler: d.scheduler,
            ack_range_limit: None,
            ack: None,
            spns_rules: d.spns_rules,
            rtt_sample_on_receiving_path: None,
            initial_rtt_ms: None,
            pacing: d.pacing,
            idle_timeout: None,
            max_datagram_size: None,
            mtu_discovery: None,
            mtu_ceiling: None,
            reinjection: d.reinjection,
            qoe_feedback: d.qoe_feedback,
            key_update_interval: d.key_update_interval,
            crypto: CryptoMode::Real,
            ecn: None,
            zero_rtt: None,
        }
    }
}

impl TransportSettings {
    /// The transport configuration both endpoints use, validated
    /// ([`TransportConfig::validate`]); an error names the key as written here
    /// (`ack_range_limit`, `initial_rtt_ms`, `ack.max_ack_delay_ms`, ...), without the
    /// `transport.` prefix a scenario file adds.
    pub fn to_config(&self) -> Result<TransportConfig, ConfigError> {
        let spns_rules = self.spns_rules.with(
            SpnsRule::PerPathRttSamples,
            self.rtt_sample_on_receiving_path
                .unwrap_or(self.spns_rules.per_path_rtt_samples),
        );
        let mut c = TransportConfig::default()
            .congestion(self.cc)
            .multipath(self.multipath)
            .scheduler(self.scheduler)
            .spns_rules(spns_rules)
            .pacing(self.pacing)
            .reinjection(self.reinjection)
            .qoe_feedback(self.qoe_feedback)
            .key_update_interval(self.key_update_interval)
            .ecn(self.ecn.unwrap_or(false))
            .mtu_discovery(self.mtu_discovery());
        if let Some(ack) = &self.ack {
            c.ack = ack.clone();
        }
        if let Some(limit) = self.ack_range_limit {
            c.ack.default_range_limit = limit;
        }
        if let Some(ms) = self.initial_rtt_ms {
            // A NaN, negative or huge number is not a duration at all; the range is
            // validate()'s.
            c.initial_rtt = Duration::try_from_secs_f64(ms / 1000.0).map_err(|_| {
                ConfigError::new(
                    "initial_rtt_ms",
                    format!("{ms} is out of range: expected a positive number of milliseconds"),
                )
            })?;
        }
        if let Some(t) = self.idle_timeout {
            c.idle_timeout = Duration::from_nanos(t.nanos());
        }
        if let Some(size) = self.max_datagram_size {
            c.max_datagram_size = size;
        }
        c.validate().map_err(|e| self.key_of(e))?;
        Ok(c)
    }

    /// `e` with the configuration's field renamed to the key that set it.
    fn key_of(&self, e: ConfigError) -> ConfigError {
        let key = match e.field.as_str() {
            "ack.default_range_limit" if self.ack_range_limit.is_some() => "ack_range_limit",
            "initial_rtt" => "initial_rtt_ms",
            "congestion" => "cc",
            "mtu_discovery.ceiling" => "mtu_ceiling",
            _ => return e,
        };
        e.renamed(key)
    }

    /// Whether the endpoints use session resumption and 0-RTT (see the field).
    pub fn zero_rtt(&self) -> bool {
        self.zero_rtt == Some(true)
    }

    /// The discovery settings: None unless `mtu_discovery` is true (see the field).
    fn mtu_discovery(&self) -> Option<MtuDiscoveryConfig> {
        if self.mtu_discovery != Some(true) {
            return None;
        }
        let mut config = MtuDiscoveryConfig::default();
        if let Some(ceiling) = self.mtu_ceiling {
            config.ceiling = ceiling;
        }
        Some(config)
    }
}
