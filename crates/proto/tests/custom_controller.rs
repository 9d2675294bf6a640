//! The seams are open to code outside the crate: a congestion controller, a scheduler and a
//! re-injection policy defined here, plugged in through `TransportConfig`'s factories, drive a
//! real transfer.

mod common;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use common::{payload, NetConfig, Pair};
use mpquic_proto::cc::{
    AckEvent, CcConfig, CcStats, CongestionController, ControllerFactory, Coupling, LossEvent,
};
use mpquic_proto::reinjection::{ReinjectionContext, ReinjectionFactory, ReinjectionPolicy};
use mpquic_proto::scheduler::{Backlog, PathView, Scheduler, SchedulerFactory};
use mpquic_proto::{Duration, MultipathMode, PathId, Timestamp, TransportConfig};

/// A window that never moves, whatever is acknowledged or lost. It counts the events it sees.
#[derive(Debug)]
struct FixedWindow {
    window: u64,
    acks: Arc<AtomicU64>,
    losses: Arc<AtomicU64>,
}

impl CongestionController for FixedWindow {
    fn on_packet_sent(&mut self, _now: Timestamp, _bytes: u64, _bytes_in_flight: u64) {}
    fn on_ack(&mut self, ack: &AckEvent<'_>, _coupling: Coupling<'_>) {
        self.acks.fetch_add(ack.bytes_acked, Ordering::Relaxed);
    }
    fn on_congestion_event(&mut self, _loss: &LossEvent<'_>, _coupling: Coupling<'_>) {
        self.losses.fetch_add(1, Ordering::Relaxed);
    }
    fn window(&self) -> u64 {
        self.window
    }
    fn name(&self) -> &'static str {
        "fixed"
    }
    fn stats(&self) -> CcStats {
        CcStats {
            cwnd: self.window,
            state: "fixed",
            ..CcStats::default()
        }
    }
}

/// Makes [`FixedWindow`]s sharing the counters, and counts how many it made.
#[derive(Debug, Default)]
struct FixedWindowFactory {
    window: u64,
    built: AtomicU64,
    acks: Arc<AtomicU64>,
    losses: Arc<AtomicU64>,
}

impl ControllerFactory for FixedWindowFactory {
    fn name(&self) -> &str {
        "fixed"
    }
    fn build(&self, _config: CcConfig) -> Box<dyn CongestionController> {
        self.built.fetch_add(1, Ordering::Relaxed);
        Box::new(FixedWindow {
            window: self.window,
            acks: self.acks.clone(),
            losses: self.losses.clone(),
        })
    }
}

/// The lowest path ID that may send, counting its choices.
#[derive(Debug)]
struct LowestId(Arc<AtomicU64>);

impl Scheduler for LowestId {
    fn select(&mut self, paths: &[PathView], _backlog: &Backlog) -> Option<PathId> {
        self.0.fetch_add(1, Ordering::Relaxed);
        paths.iter().find(|p| p.usable && p.can_send).map(|p| p.id)
    }
    fn name(&self) -> &'static str {
        "lowest-id"
    }
}

#[derive(Debug, Default)]
struct LowestIdFactory(Arc<AtomicU64>);

impl SchedulerFactory for LowestIdFactory {
    fn name(&self) -> &str {
        "lowest-id"
    }
    fn build(&self) -> Box<dyn Scheduler> {
        Box::new(LowestId(self.0.clone()))
    }
}

/// Never re-injects; counts the connections it was made for.
#[derive(Debug)]
struct Abstain;

impl ReinjectionPolicy for Abstain {
    fn should_reinject(&self, _ctx: &ReinjectionContext) -> bool {
        false
    }
    fn name(&self) -> &'static str {
        "abstain"
    }
}

#[derive(Debug, Default)]
struct AbstainFactory(AtomicU64);

impl ReinjectionFactory for AbstainFactory {
    fn name(&self) -> &str {
        "abstain"
    }
    fn build(&self) -> Box<dyn ReinjectionPolicy> {
        self.0.fetch_add(1, Ordering::Relaxed);
        Box::new(Abstain)
    }
}

#[test]
fn a_congestion_controller_from_outside_the_crate_drives_a_transfer() {
    const WINDOW: u64 = 23_456;
    for mode in [MultipathMode::Single, MultipathMode::Mpns] {
        let factory = Arc::new(FixedWindowFactory {
            window: WINDOW,
            ..FixedWindowFactory::default()
        });
        let client = TransportConfig::default()
            .multipath(mode)
            .with_congestion_controller_factory(factory.clone());
        let server = TransportConfig::default().multipath(mode);
        let mut pair = Pair::new(71, client, server, NetConfig::default());
        let data = payload(300_000, 3);
        let (ch, _, received) = pair.upload(&data, Duration::from_secs(60));
        assert!(
            received == data,
            "{mode:?}: {} of {} bytes",
            received.len(),
            data.len()
        );
        assert!(
            factory.built.load(Ordering::Relaxed) >= 1,
            "{mode:?}: never built"
        );
        // Let the last ACKs reach the client: then every byte the server read was
        // acknowledged to some controller of ours.
        pair.run_for(Duration::from_millis(200));
        let acked = factory.acks.load(Ordering::Relaxed);
        assert!(
            acked >= data.len() as u64,
            "{mode:?}: controllers saw {acked} bytes acked"
        );
        let conn = pair.client.connection(ch).expect("client connection");
        for path in conn.path_stats() {
            assert_eq!(path.cc.cwnd, WINDOW, "{mode:?} path {}", path.id);
            assert_eq!(path.cc.state, "fixed", "{mode:?} path {}", path.id);
        }
    }
}

#[test]
fn a_per_path_algorithm_overrides_the_applications_controller() {
    let factory = Arc::new(FixedWindowFactory {
        window: 50_000,
        ..FixedWindowFactory::default()
    });
    let config = TransportConfig::default()
        .with_congestion_controller_factory(factory)
        .path_congestion([(PathId::new(1), mpquic_proto::cc::CcAlgorithm::NewReno)].into());
    assert_eq!(config.controller_factory_for(PathId::ZERO).name(), "fixed");
    assert_eq!(
        config.controller_factory_for(PathId::new(1)).name(),
        "newreno"
    );
    assert_eq!(
        TransportConfig::default()
            .controller_factory_for(PathId::ZERO)
            .name(),
        "cubic"
    );
}

#[test]
fn a_scheduler_and_a_reinjection_policy_from_outside_the_crate_are_used() {
    let scheduler = Arc::new(LowestIdFactory::default());
    let reinjection = Arc::new(AbstainFactory::default());
    let client = TransportConfig::default()
        .multipath(MultipathMode::Mpns)
        .with_scheduler_factory(scheduler.clone())
        .with_reinjection_factory(reinjection.clone());
    let server = TransportConfig::default().multipath(MultipathMode::Mpns);
    let mut pair = Pair::new(72, client, server, NetConfig::default());
    let data = payload(200_000, 4);
    let (_, _, received) = pair.upload(&data, Duration::from_secs(60));
    assert!(
        received == data,
        "{} of {} bytes",
        received.len(),
        data.len()
    );
    assert!(
        scheduler.0.load(Ordering::Relaxed) > 0,
        "scheduler never asked"
    );
    assert_eq!(
        reinjection.0.load(Ordering::Relaxed),
        1,
        "one policy per connection"
    );
}
