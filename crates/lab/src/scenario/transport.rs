//! The `[transport]` table of a scenario: the core's transport schema (every key of
//! [`TransportConfig`]'s serde form, read by the core's own `Deserialize`), plus the lab's own
//! keys, which are not transport settings of an endpoint (`crypto`, `zero_rtt`, `ecn` decided
//! by the links) or are older names kept so that files and run records written before the one
//! schema read the same (`ack_range_limit`, `initial_rtt_ms`, `rtt_sample_on_receiving_path`,
//! `mtu_ceiling`). Every range check is [`TransportConfig::validate`]'s, whose errors are
//! renamed to the key as written.

use mpquic_proto::crypto::identity::LabIdentity;

use crate::units::SimDuration;
use mpquic_proto::{ConfigError, Duration, SpnsRule, TransportConfig};
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Transport settings of both endpoints: the core's configuration and the lab's own keys.
#[derive(Debug, Clone)]
pub struct TransportSettings {
    /// The core's configuration: every key of its schema (`cc`, `multipath`, `scheduler`,
    /// `spns_rules`, `reinjection`, `[transport.ack]`, `[transport.streams]`, ...). The lab's
    /// default differs in one key: `mtu_discovery` is off unless written (`true`, or a table
    /// of [`mpquic_proto::MtuDiscoveryConfig`] fields), so that scenarios keep their recorded
    /// figures (every packet `max_datagram_size`).
    pub config: TransportConfig,
    /// Older name of `ack.default_range_limit`, the report's Default_Limit of ACK ranges
    /// (overrides it).
    pub ack_range_limit: Option<usize>,
    /// Older name of `spns_rules.per_path_rtt_samples` (the §2.2 RTT rule; overrides it).
    pub rtt_sample_on_receiving_path: Option<bool>,
    /// Initial RTT in milliseconds, the older form of `initial_rtt` (overrides it).
    pub initial_rtt_ms: Option<f64>,
    /// Largest UDP payload probed when `mtu_discovery` is on: the older form of
    /// `mtu_discovery.ceiling` (overrides it).
    pub mtu_ceiling: Option<u16>,
    /// 1-RTT packet protection: `real` (default; the negotiated AEAD) or `sim`, the
    /// simulator's **not secure** stand-in (plaintext payloads under a checksum tag of the
    /// same 16 bytes, see `mpquic_proto::crypto::sim`), which gives the same results faster.
    /// The TLS handshake stays real. Simulated runs only; always recorded in the run JSON.
    pub crypto: CryptoMode,
    /// ECN (RFC 9000 §13.4): mark ECT(0) and react to CE. Unset (the default): on exactly when
    /// a link of the scenario marks CE or bleaches the codepoint (`ecn=`, `ecn_bleach=`), so
    /// runs without such links keep the ACK frames (no ECN counts) and every figure recorded
    /// before ECN existed; `--no-ecn` sets false. Overrides the core's `ecn`.
    pub ecn: Option<bool>,
    /// TLS session resumption and 0-RTT (RFC 9001 §4.6) across the client's successive
    /// connections (`requests = { connections = N }`): the server issues tickets and accepts
    /// early data, the client keeps one session store for the whole run, so every connection
    /// after the first resumes and, over the custom protocol, sends its requests in 0-RTT
    /// packets. Off (and absent from the JSON) by default, which keeps tickets out of the
    /// recorded figures (`zero_rtt = false` is not echoed either).
    pub zero_rtt: Option<bool>,
    /// Handshake racing (`crate::race`): with several paths the client starts one handshake
    /// per interface at once, keeps the first connection whose handshake completes (its path
    /// becomes path 0), closes the others and opens the remaining interfaces as paths. Off
    /// (and absent from the JSON) by default: the client connects from interface 0.
    pub race_paths: Option<bool>,
    /// Client-initiated migration (RFC 9000 §9): at this time the client moves path 0 to its
    /// second interface (the second path's link), as a device leaving one network for another;
    /// this is how a client without multipath changes networks, so it needs
    /// `multipath = "single"` and two paths or more; simulated only. Absent (from the JSON
    /// too) by default.
    pub migrate_at: Option<SimDuration>,
    /// Certificate compression (RFC 8879, zlib then brotli): the client offers it and
    /// the server compresses its certificate message. Off (and absent from the JSON) by
    /// default in the lab, which keeps the handshake bytes of every recorded figure; on by
    /// default on real sockets (`mpquic::tls`).
    pub cert_compression: Option<bool>,
    /// Subject alternative names the simulated server's certificate carries besides
    /// "localhost" (0 to [`LabIdentity::MAX_EXTRA_NAMES`]; absent from the JSON when 0): a
    /// large certificate, whose first flight exceeds the server's anti-amplification budget.
    pub cert_extra_names: Option<usize>,
    /// The core's keys the table wrote, so that the run JSON echoes them as written even
    /// where they equal the defaults.
    written: Vec<String>,
}

/// The lab's own keys of the `[transport]` table; every other key is the core's.
const LAB_KEYS: &[&str] = &[
    "ack_range_limit",
    "rtt_sample_on_receiving_path",
    "initial_rtt_ms",
    "mtu_ceiling",
    "crypto",
    "ecn",
    "zero_rtt",
    "race_paths",
    "migrate_at",
    "cert_compression",
    "cert_extra_names",
];

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
        Self {
            config: TransportConfig::default().mtu_discovery(None),
            ack_range_limit: None,
            rtt_sample_on_receiving_path: None,
            initial_rtt_ms: None,
            mtu_ceiling: None,
            crypto: CryptoMode::Real,
            ecn: None,
            zero_rtt: None,
            race_paths: None,
            migrate_at: None,
            cert_compression: None,
            cert_extra_names: None,
            written: Vec::new(),
        }
    }
}

impl TransportSettings {
    /// The transport configuration both endpoints use, validated
    /// ([`TransportConfig::validate`]); an error names the key as written here
    /// (`ack_range_limit`, `initial_rtt_ms`, `ack.max_ack_delay_ms`, ...), without the
    /// `transport.` prefix a scenario file adds.
    pub fn to_config(&self) -> Result<TransportConfig, ConfigError> {
        let mut c = self.config.clone().ecn(self.ecn.unwrap_or(false));
        if let Some(on) = self.rtt_sample_on_receiving_path {
            c.spns_rules = c.spns_rules.with(SpnsRule::PerPathRttSamples, on);
        }
        if let Some(limit) = self.ack_range_limit {
            c.ack.default_range_limit = limit;
        }
        if let (Some(mtud), Some(ceiling)) = (&mut c.mtu_discovery, self.mtu_ceiling) {
            mtud.ceiling = ceiling;
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
        c.validate().map_err(|e| self.key_of(e))?;
        if let Some(n) = self
            .cert_extra_names
            .filter(|&n| n > LabIdentity::MAX_EXTRA_NAMES)
        {
            return Err(ConfigError::new(
                "cert_extra_names",
                format!("{n} is too many: at most {}", LabIdentity::MAX_EXTRA_NAMES),
            ));
        }
        Ok(c)
    }

    /// `e` with the configuration's field renamed to the older key that set it.
    fn key_of(&self, e: ConfigError) -> ConfigError {
        let key = match e.field.as_str() {
            "ack.default_range_limit" if self.ack_range_limit.is_some() => "ack_range_limit",
            "initial_rtt" if self.initial_rtt_ms.is_some() => "initial_rtt_ms",
            "mtu_discovery.ceiling" if self.mtu_ceiling.is_some() => "mtu_ceiling",
            _ => return e,
        };
        e.renamed(key)
    }

    /// Whether the endpoints use session resumption and 0-RTT (see the field).
    pub fn zero_rtt(&self) -> bool {
        self.zero_rtt == Some(true)
    }

    /// Whether the client races its handshake over every interface (see the field).
    pub fn race_paths(&self) -> bool {
        self.race_paths == Some(true)
    }

    /// The simulated endpoints' TLS identity: certificate size and compression.
    pub fn identity(&self) -> LabIdentity {
        LabIdentity {
            extra_names: self.cert_extra_names.unwrap_or(0),
            cert_compression: self.cert_compression == Some(true),
        }
    }

    /// Reads one of the lab's own keys ([`LAB_KEYS`]); its value is next in `map`.
    fn read_lab_key<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
    ) -> Result<(), A::Error> {
        match key {
            "ack_range_limit" => self.ack_range_limit = Some(map.next_value()?),
            "rtt_sample_on_receiving_path" => {
                self.rtt_sample_on_receiving_path = Some(map.next_value()?)
            }
            "initial_rtt_ms" => self.initial_rtt_ms = Some(map.next_value()?),
            "mtu_ceiling" => self.mtu_ceiling = Some(map.next_value()?),
            "crypto" => self.crypto = map.next_value()?,
            "ecn" => self.ecn = Some(map.next_value()?),
            "zero_rtt" => self.zero_rtt = Some(map.next_value()?),
            "race_paths" => self.race_paths = Some(map.next_value()?),
            "migrate_at" => self.migrate_at = Some(map.next_value()?),
            "cert_compression" => self.cert_compression = Some(map.next_value()?),
            "cert_extra_names" => self.cert_extra_names = Some(map.next_value()?),
            other => unreachable!("`{other}` is not in LAB_KEYS"),
        }
        Ok(())
    }
}

/// Reads a transport file (`mpquic client|server|demo --transport FILE`): a TOML table of the
/// core's schema, the keys of a scenario's `[transport]` table without the lab's own ones, with
/// the core's defaults (path MTU discovery and ECN on, as on real sockets). Not validated here:
/// the caller applies its flags first, then [`TransportConfig::validate`]. Errors are one
/// line, `FILE:LINE:COLUMN: KEY: MESSAGE`, as for scenario files.
pub fn read_transport_file(path: &std::path::Path) -> Result<TransportConfig, crate::LabError> {
    let text = std::fs::read_to_string(path).map_err(|error| crate::LabError::Io {
        path: path.to_owned(),
        error,
    })?;
    TransportConfig::deserialize(toml::Deserializer::new(&text))
        .map_err(|e| super::checks::toml_error(&path.display().to_string(), &text, &e))
}

/// The table is read by the core's derived `Deserialize` of [`TransportConfig`] through
/// `LabKeys`, which takes the lab's own keys out of the way: every core key's value is
/// read straight from the file's deserializer, so errors keep their position and key.
impl<'de> Deserialize<'de> for TransportSettings {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> de::Visitor<'de> for Visitor {
            type Value = TransportSettings;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a table of transport settings")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TransportSettings, A::Error> {
                let mut settings = TransportSettings::default();
                let keys = LabKeys {
                    map,
                    settings: &mut settings,
                };
                let config =
                    TransportConfig::deserialize(de::value::MapAccessDeserializer::new(keys))?;
                let mtud_written = settings.written.iter().any(|k| k == "mtu_discovery");
                settings.config = if mtud_written {
                    config
                } else {
                    config.mtu_discovery(None)
                };
                Ok(settings)
            }
        }
        d.deserialize_map(Visitor)
    }
}

/// A map of the `[transport]` table as the core's `Deserialize` sees it: without the lab's
/// keys, which are read into `settings` on the way.
struct LabKeys<'a, A> {
    map: A,
    settings: &'a mut TransportSettings,
}

/// A key of the table: the core's (its field, as the core's key seed read it, and the name)
/// or the lab's.
enum Key<K> {
    Core(K, String),
    Lab(String),
}

/// Reads a key's name and hands it to the core's key seed unless it is one of [`LAB_KEYS`]
/// (the seed is kept for the next key then).
struct KeySeed<'s, K>(&'s mut Option<K>);

impl<'de, K: DeserializeSeed<'de>> DeserializeSeed<'de> for KeySeed<'_, K> {
    type Value = Key<K::Value>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        let name = String::deserialize(d)?;
        if LAB_KEYS.contains(&name.as_str()) {
            return Ok(Key::Lab(name));
        }
        let seed = self.0.take().expect("the core's seed is used once");
        let field = seed.deserialize(
            <String as IntoDeserializer<'de, D::Error>>::into_deserializer(name.clone()),
        )?;
        Ok(Key::Core(field, name))
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for LabKeys<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let mut seed = Some(seed);
        loop {
            match self.map.next_key_seed(KeySeed(&mut seed))? {
                None => return Ok(None),
                Some(Key::Core(field, name)) => {
                    self.settings.written.push(name);
                    return Ok(Some(field));
                }
                Some(Key::Lab(name)) => self.settings.read_lab_key(&name, &mut self.map)?,
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

/// The run JSON's record of the table, in the form every earlier record has: `cc`,
/// `multipath`, `scheduler`, `spns_rules`, `pacing` and `crypto` always, the lab's keys when
/// set, and any other core key when the table wrote it or it differs from the lab's default
/// (in the core's form; read back, the record gives the same configuration).
impl Serialize for TransportSettings {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut echo = Echo::new(self).map_err(<S::Error as serde::ser::Error>::custom)?;
        let mut m = s.serialize_map(None)?;
        for key in ["cc", "multipath", "scheduler"] {
            echo.value(&mut m, key, true)?;
        }
        if let Some(limit) = self.ack_range_limit {
            m.serialize_entry("ack_range_limit", &limit)?;
        }
        echo.typed(&mut m, "ack", &self.config.ack)?;
        echo.value(&mut m, "spns_rules", true)?;
        if let Some(on) = self.rtt_sample_on_receiving_path {
            m.serialize_entry("rtt_sample_on_receiving_path", &on)?;
        }
        if let Some(ms) = self.initial_rtt_ms {
            m.serialize_entry("initial_rtt_ms", &ms)?;
        }
        for key in ["initial_rtt", "pacing", "idle_timeout", "max_datagram_size"] {
            echo.value(&mut m, key, key == "pacing")?;
        }
        echo.value(&mut m, "mtu_discovery", false)?;
        if let Some(ceiling) = self.mtu_ceiling {
            m.serialize_entry("mtu_ceiling", &ceiling)?;
        }
        echo.typed(&mut m, "reinjection", &self.config.reinjection)?;
        echo.value(&mut m, "qoe_feedback", false)?;
        echo.value(&mut m, "key_update_interval", false)?;
        m.serialize_entry("crypto", &self.crypto)?;
        if let Some(on) = self.ecn {
            m.serialize_entry("ecn", &on)?;
        }
        if self.zero_rtt() {
            m.serialize_entry("zero_rtt", &true)?;
        }
        if self.race_paths() {
            m.serialize_entry("race_paths", &true)?;
        }
        if let Some(at) = self.migrate_at {
            m.serialize_entry("migrate_at", &at)?;
        }
        let identity = self.identity();
        if identity.cert_compression {
            m.serialize_entry("cert_compression", &true)?;
        }
        if identity.extra_names > 0 {
            m.serialize_entry("cert_extra_names", &identity.extra_names)?;
        }
        echo.rest(&mut m)?;
        m.end()
    }
}

/// Which core keys the record of a [`TransportSettings`] has, each once.
struct Echo<'a> {
    /// The configuration in the core's form.
    full: serde_json::Map<String, serde_json::Value>,
    /// The lab's default configuration in the core's form.
    base: serde_json::Map<String, serde_json::Value>,
    written: &'a [String],
    /// Keys already recorded (or replaced by a lab key: `ecn`).
    done: Vec<String>,
}

impl<'a> Echo<'a> {
    fn new(settings: &'a TransportSettings) -> serde_json::Result<Self> {
        let form = |c: &TransportConfig| match serde_json::to_value(c)? {
            serde_json::Value::Object(map) => Ok(map),
            _ => unreachable!("a struct serializes as a map"),
        };
        Ok(Self {
            full: form(&settings.config)?,
            base: form(&TransportSettings::default().config)?,
            written: &settings.written,
            done: vec!["ecn".to_owned()],
        })
    }

    /// Whether `key` is recorded: written by the table or away from the lab's default.
    fn wanted(&mut self, key: &str, always: bool) -> bool {
        if self.done.iter().any(|k| k == key) {
            return false;
        }
        self.done.push(key.to_owned());
        let present = self.full.get(key).is_some_and(|v| !v.is_null());
        present
            && (always
                || self.written.iter().any(|k| k == key)
                || self.full.get(key) != self.base.get(key))
    }

    /// `key` in the core's form (scalars: a JSON map has no field order to keep).
    fn value<M: SerializeMap>(
        &mut self,
        m: &mut M,
        key: &str,
        always: bool,
    ) -> Result<(), M::Error> {
        if self.wanted(key, always) {
            m.serialize_entry(key, &self.full[key])?;
        }
        Ok(())
    }

    /// `key` through its own `Serialize`, which keeps a table's field order.
    fn typed<M: SerializeMap, T: Serialize>(
        &mut self,
        m: &mut M,
        key: &str,
        value: &T,
    ) -> Result<(), M::Error> {
        if self.wanted(key, false) {
            m.serialize_entry(key, value)?;
        }
        Ok(())
    }

    /// The core keys not recorded yet (keys the lab added since the record's form was set).
    fn rest<M: SerializeMap>(&mut self, m: &mut M) -> Result<(), M::Error> {
        let keys: Vec<String> = self.full.keys().cloned().collect();
        for key in keys {
            self.value(m, &key, false)?;
        }
        Ok(())
    }
}
