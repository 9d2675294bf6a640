//! Chained setters of [`TransportConfig`], so that code outside this crate builds one from
//! the defaults (the struct is `#[non_exhaustive]`, so literals would break with each new
//! field): `TransportConfig::default().multipath(MultipathMode::Mpns).pacing(false)`. Each
//! setter takes and returns the configuration by value; [`TransportConfig::validate`] checks
//! the result.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{MultipathMode, TransportConfig};
use crate::ack::AckConfig;
use crate::cc::CcAlgorithm;
use crate::mtud::MtuDiscoveryConfig;
use crate::path::PathId;
use crate::qlog::QlogConfig;
use crate::reinjection::ReinjectionMode;
use crate::scheduler::SchedulerKind;
use crate::spns_rules::SpnsRules;
use crate::streams::StreamsConfig;
use crate::time::Duration;

/// One by-value setter per field, documented by the field it sets.
macro_rules! setters {
    ($($field:ident: $ty:ty),* $(,)?) => {
        impl TransportConfig {
            $(
                #[doc = concat!("Sets [`TransportConfig::", stringify!($field), "`].")]
                #[must_use]
                pub fn $field(mut self, value: $ty) -> Self {
                    self.$field = value;
                    self
                }
            )*
        }
    };
}

setters! {
    idle_timeout: Duration,
    initial_rtt: Duration,
    max_datagram_size: u16,
    mtu_discovery: Option<MtuDiscoveryConfig>,
    congestion: CcAlgorithm,
    path_congestion: BTreeMap<PathId, CcAlgorithm>,
    ack: AckConfig,
    streams: StreamsConfig,
    multipath: MultipathMode,
    max_path_id: u32,
    scheduler: SchedulerKind,
    active_connection_id_limit: u8,
    spns_rules: SpnsRules,
    pacing: bool,
    key_update_interval: Option<u64>,
    path_failure_ptos: u32,
    max_packet_threshold: u64,
    max_time_threshold: f64,
    path_idle_timeout: Option<Duration>,
    reinjection: ReinjectionMode,
    qoe_feedback: bool,
    qlog: Option<QlogConfig>,
    datagram_receive_buffer: Option<usize>,
    datagram_send_buffer: usize,
    raw_transport_params: Vec<u8>,
    ecn: bool,
}

impl TransportConfig {
    /// Sets [`TransportConfig::congestion_controller_factory`]: the application's own
    /// congestion controller for every path without a `path_congestion` entry.
    #[must_use]
    pub fn with_congestion_controller_factory(
        mut self,
        factory: Arc<dyn crate::cc::ControllerFactory>,
    ) -> Self {
        self.congestion_controller_factory = Some(factory);
        self
    }

    /// Sets [`TransportConfig::scheduler_factory`]: the application's own path scheduler.
    #[must_use]
    pub fn with_scheduler_factory(
        mut self,
        factory: Arc<dyn crate::scheduler::SchedulerFactory>,
    ) -> Self {
        self.scheduler_factory = Some(factory);
        self
    }

    /// Sets [`TransportConfig::reinjection_factory`]: the application's own re-injection
    /// policy.
    #[must_use]
    pub fn with_reinjection_factory(
        mut self,
        factory: Arc<dyn crate::reinjection::ReinjectionFactory>,
    ) -> Self {
        self.reinjection_factory = Some(factory);
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setters_chain_from_the_defaults() {
        let c = TransportConfig::default()
            .multipath(MultipathMode::Spns)
            .congestion(CcAlgorithm::NewReno)
            .idle_timeout(Duration::from_secs(5))
            .pacing(false);
        assert_eq!(c.multipath, MultipathMode::Spns);
        assert_eq!(c.congestion, CcAlgorithm::NewReno);
        assert_eq!(c.idle_timeout, Duration::from_secs(5));
        assert!(!c.pacing);
        assert_eq!(c.max_path_id, TransportConfig::default().max_path_id);
    }
}
