//! Turning a [`PathSpec`] into link configurations.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{CapacitySpec, DirSpec, PathSpec, Preset, QueueSpec, SpecError, TraceSource};
use crate::generate::GeneratorConfig;
use crate::link::{Capacity, Jitter, LinkAction, LinkConfig, ScheduledAction};
use crate::loss::LossModel;
use crate::queue::QueueLimit;
use crate::time::SimTime;
use crate::trace::MahimahiTrace;

/// The two link configurations of a resolved path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResolvedPath {
    /// Link from the first endpoint to the second.
    pub up: LinkConfig,
    /// Link from the second endpoint to the first.
    pub down: LinkConfig,
    /// Round-trip propagation delay used for BDP sizing (sum of both delays).
    pub rtt: SimTime,
}

#[derive(Clone, Copy)]
enum Dir {
    Up,
    Down,
}

impl Dir {
    fn prefix(self) -> &'static str {
        match self {
            Dir::Up => "up.",
            Dir::Down => "down.",
        }
    }
}

impl PathSpec {
    fn scope(&self, dir: Dir) -> &DirSpec {
        match dir {
            Dir::Up => &self.up,
            Dir::Down => &self.down,
        }
    }

    /// Key as written, for messages: prefixed if it came from the direction.
    fn key_of(&self, dir: Dir, key: &str, from_dir: bool) -> String {
        if from_dir {
            format!("{}{key}", dir.prefix())
        } else {
            key.to_owned()
        }
    }

    fn delay(&self, dir: Dir) -> Result<SimTime, SpecError> {
        let d = self.scope(dir);
        let delay = d.delay.or(self.shared.delay);
        match (self.rtt, delay) {
            (Some(_), Some(_)) => Err(SpecError::Conflict(
                "`rtt` and `delay` are mutually exclusive".to_owned(),
            )),
            (Some(rtt), None) => Ok(rtt / 2),
            (None, d) => Ok(d.unwrap_or(0)),
        }
    }

    /// Resolves the spec, loading trace files relative to the current
    /// directory.
    pub fn resolve(&self) -> Result<ResolvedPath, SpecError> {
        self.resolve_in(None)
    }

    /// Resolves the spec, loading relative trace paths from `base` (e.g. the
    /// directory of the TOML file the spec came from).
    pub fn resolve_relative_to(&self, base: &Path) -> Result<ResolvedPath, SpecError> {
        self.resolve_in(Some(base))
    }

    fn resolve_in(&self, base: Option<&Path>) -> Result<ResolvedPath, SpecError> {
        let rtt = self.delay(Dir::Up)?.saturating_add(self.delay(Dir::Down)?);
        let up = self.resolve_dir(Dir::Up, rtt, base)?;
        let down = self.resolve_dir(Dir::Down, rtt, base)?;
        Ok(ResolvedPath { up, down, rtt })
    }

    fn resolve_dir(
        &self,
        dir: Dir,
        rtt: SimTime,
        base: Option<&Path>,
    ) -> Result<LinkConfig, SpecError> {
        let d = self.scope(dir);
        let (cap, from_dir) = match (&d.capacity, &self.shared.capacity) {
            (Some(c), _) => (c, true),
            (None, Some(c)) => (c, false),
            (None, None) => {
                return Err(SpecError::Conflict(format!(
                    "no capacity for the {} direction: give `rate` or `trace` (or `{}rate` / `{}trace`)",
                    dir.prefix().trim_end_matches('.'),
                    dir.prefix(),
                    dir.prefix()
                )))
            }
        };
        let start = d.trace_start.or(self.shared.trace_start);
        let capacity = match cap {
            CapacitySpec::Rate(_) if start.is_some() => {
                return Err(SpecError::Conflict(format!(
                    "{}trace_start needs a trace capacity, not `rate`",
                    dir.prefix()
                )))
            }
            CapacitySpec::Rate(bps) => Capacity::Rate { bits_per_sec: *bps },
            CapacitySpec::Trace(src) => {
                let key = self.key_of(dir, "trace", from_dir);
                let trace = load_trace(&key, src, base)?;
                let start_ms = start.unwrap_or(0) / crate::time::MILLISECOND;
                Capacity::Trace(trace.with_start(start_ms))
            }
        };
        // One BDP of a trace link uses the trace's mean capacity over its whole
        // period (not a fixed guess, and not the stretch replayed first), times
        // the propagation RTT.
        let rate = capacity.nominal_rate_bps().unwrap_or(0.0);
        let limit = |q: QueueSpec| match q {
            QueueSpec::Packets(n) => QueueLimit::Packets(n),
            QueueSpec::Bytes(n) => QueueLimit::Bytes(n),
            QueueSpec::Infinite => QueueLimit::Infinite,
            QueueSpec::Bdp(f) => QueueLimit::bdp_multiple(rate.round() as u64, rtt, f),
        };
        let queue = limit(d.queue.or(self.shared.queue).unwrap_or(QueueSpec::Bdp(1.0)));
        let ecn_threshold = match d.ecn.or(self.shared.ecn) {
            None | Some(QueueSpec::Infinite) => None,
            Some(q) => Some(limit(q)),
        };
        let ecn_bleach = d.ecn_bleach.or(self.shared.ecn_bleach).unwrap_or(false);
        let loss = d.loss.or(self.shared.loss).unwrap_or(LossModel::None);
        let jitter = Jitter {
            max: d.jitter.or(self.shared.jitter).unwrap_or(0),
            allow_reordering: d.reorder.or(self.shared.reorder).unwrap_or(false),
        };
        let events = self.events(d);
        let config = LinkConfig {
            capacity,
            delay: self.delay(dir)?,
            queue,
            loss,
            jitter,
            events,
            mtu: d.mtu.or(self.shared.mtu).flatten(),
            ecn_threshold,
            ecn_bleach,
            random_streams: self
                .streams
                .map(|n| format!("path{n}.{}", dir.prefix().trim_end_matches('.'))),
        };
        config.validate().map_err(SpecError::Conflict)?;
        Ok(config)
    }
}

impl PathSpec {
    /// The scheduled actions of a direction (shared ones first, then the direction's own; the
    /// simulator applies them in time order, ties in this order).
    fn events(&self, d: &DirSpec) -> Vec<ScheduledAction> {
        let both = [&self.shared, d];
        let at = |at, action| ScheduledAction { at, action };
        let downs = both.iter().flat_map(|s| &s.down_at);
        let ups = both.iter().flat_map(|s| &s.up_at);
        let rates = both.iter().flat_map(|s| &s.rate_at);
        let delays = both.iter().flat_map(|s| &s.delay_at);
        let losses = both.iter().flat_map(|s| &s.loss_at);
        let mtus = both.iter().flat_map(|s| &s.mtu_at);
        downs
            .map(|&t| at(t, LinkAction::Down))
            .chain(ups.map(|&t| at(t, LinkAction::Up)))
            .chain(rates.map(|&(t, bits_per_sec)| at(t, LinkAction::SetRate { bits_per_sec })))
            .chain(delays.map(|&(t, delay)| at(t, LinkAction::SetDelay { delay })))
            .chain(losses.map(|&(t, l)| at(t, LinkAction::SetLoss(l))))
            .chain(mtus.map(|&(t, m)| at(t, LinkAction::SetMtu(m))))
            .collect()
    }
}

fn load_trace(
    key: &str,
    src: &TraceSource,
    base: Option<&Path>,
) -> Result<MahimahiTrace, SpecError> {
    let err = |reason: String| SpecError::Trace {
        key: key.to_owned(),
        value: src.to_string(),
        reason,
    };
    match src {
        TraceSource::File(p) => {
            let path = match base {
                Some(b) if p.is_relative() => b.join(p),
                _ => p.clone(),
            };
            MahimahiTrace::load(&path).map_err(|e| err(e.to_string()))
        }
        TraceSource::Generated {
            preset,
            seed,
            duration_ms,
        } => {
            let mut cfg = match preset {
                Preset::Wifi => GeneratorConfig::wifi_like(),
                Preset::Lte => GeneratorConfig::lte_like(),
            };
            if let Some(d) = duration_ms {
                cfg.duration_ms = *d;
            }
            cfg.generate(*seed).map_err(|e| err(e.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::ms;

    #[test]
    fn rtt_and_bdp() {
        let r = PathSpec::parse("rate=20mbit,rtt=40ms,queue=1.5bdp,down.rate=40mbit")
            .expect("parse")
            .resolve()
            .expect("resolve");
        assert_eq!(r.rtt, ms(40));
        assert_eq!(r.up.delay, ms(20));
        assert_eq!(r.down.delay, ms(20));
        // 20 Mbit/s * 40 ms = 100 kB; x1.5.
        assert_eq!(r.up.queue, QueueLimit::Bytes(150_000));
        assert_eq!(r.down.queue, QueueLimit::Bytes(300_000));
        assert_eq!(
            r.down.capacity,
            Capacity::Rate {
                bits_per_sec: 40_000_000
            }
        );
    }

    #[test]
    fn mtu_and_mtu_changes() {
        let spec =
            PathSpec::parse("rate=8mbit,mtu=1500,down.mtu=1280,mtu_at=3s:1200b,up.mtu_at=5s:inf")
                .expect("parse");
        assert_eq!(
            PathSpec::parse(&spec.to_string()).expect("round trip"),
            spec
        );
        let r = spec.resolve().expect("resolve");
        assert_eq!(r.up.mtu, Some(1500));
        assert_eq!(r.down.mtu, Some(1280));
        assert_eq!(
            r.down.events,
            vec![ScheduledAction {
                at: ms(3000),
                action: LinkAction::SetMtu(Some(1200))
            }]
        );
        assert_eq!(r.up.events.len(), 2);
        assert_eq!(r.up.events[1].action, LinkAction::SetMtu(None));
        let none = PathSpec::parse("rate=8mbit")
            .expect("parse")
            .resolve()
            .expect("resolve");
        assert_eq!(none.up.mtu, None, "no limit by default");
        assert!(PathSpec::parse("rate=8mbit,mtu=20").is_err());
        assert!(PathSpec::parse("rate=8mbit,mtu_at=1s").is_err());
    }

    #[test]
    fn defaults_and_events() {
        let r = PathSpec::parse("rate=8mbit,delay=10ms,jitter=1ms,reorder=yes,down_at=2s,up_at=5s")
            .expect("parse")
            .resolve()
            .expect("resolve");
        // Default queue: 1 BDP = 8 Mbit/s * 20 ms = 20 kB.
        assert_eq!(r.up.queue, QueueLimit::Bytes(20_000));
        assert_eq!(
            r.up.jitter,
            Jitter {
                max: ms(1),
                allow_reordering: true
            }
        );
        assert_eq!(r.down.events.len(), 2);
        assert_eq!(r.down.events[0].action, LinkAction::Down);
        assert_eq!(r.down.events[1].at, ms(5000));
        let r = PathSpec::parse("rate=8mbit,rate_at=1s:2mbit,down.delay_at=2s:30ms,loss_at=3s:1%")
            .expect("parse")
            .resolve()
            .expect("resolve");
        let actions: Vec<_> = r.down.events.iter().map(|e| (e.at, &e.action)).collect();
        assert_eq!(
            actions,
            [
                (
                    ms(1000),
                    &LinkAction::SetRate {
                        bits_per_sec: 2_000_000
                    }
                ),
                (ms(2000), &LinkAction::SetDelay { delay: ms(30) }),
                (ms(3000), &LinkAction::SetLoss(LossModel::bernoulli(0.01))),
            ]
        );
        assert_eq!(r.up.events.len(), 2);
    }

    #[test]
    fn conflicts_and_missing_things() {
        let e = PathSpec::parse("rate=1mbit,rtt=10ms,delay=1ms")
            .expect("p")
            .resolve();
        assert!(matches!(e, Err(SpecError::Conflict(_))));
        let e = PathSpec::parse("up.rate=1mbit")
            .expect("p")
            .resolve()
            .unwrap_err();
        assert!(e.to_string().contains("down"), "{e}");
        let e = PathSpec::parse("up.trace=/no/such/file.up,rate=1mbit")
            .expect("p")
            .resolve()
            .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("up.trace: cannot use trace `/no/such/file.up`"),
            "{msg}"
        );
    }

    #[test]
    fn ecn_keys_set_marking_and_bleaching_per_direction() {
        let spec = "rate=20mbit,rtt=40ms,queue=1bdp,ecn=20kb,down.ecn=off,up.ecn_bleach=true";
        let p = PathSpec::parse(spec).expect("parse");
        let r = p.resolve().expect("resolve");
        assert_eq!(r.up.ecn_threshold, Some(QueueLimit::Bytes(20_000)));
        assert_eq!(r.down.ecn_threshold, None);
        assert!(r.up.ecn_bleach && !r.down.ecn_bleach);
        let plain = PathSpec::parse("rate=20mbit,rtt=40ms").expect("parse");
        let plain = plain.resolve().expect("resolve");
        assert_eq!((plain.up.ecn_threshold, plain.up.ecn_bleach), (None, false));
        // Round trip through text and TOML.
        let again = PathSpec::parse(&p.to_string()).expect("reparse");
        assert_eq!(again, p);
        let toml = toml::to_string(&p).expect("toml");
        assert_eq!(toml::from_str::<PathSpec>(&toml).expect("from toml"), p);
    }

    #[test]
    fn trace_queue_is_one_bdp_of_the_mean_rate() {
        // 3 opportunities every 2 ms = 18 Mbit/s; RTT 2 x 30 ms; 1 BDP =
        // 18e6 / 8 x 0.06 = 135 kB (90 packets), whatever the start point.
        let dir = std::env::temp_dir().join(format!("netsim-bdp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("c.down"), "1\n2\n2\n").expect("write");
        let spec = "trace=c.down,delay=30ms,queue=1bdp,trace_start=1ms";
        let r = PathSpec::parse(spec)
            .expect("parse")
            .resolve_relative_to(&dir)
            .expect("resolve");
        assert_eq!(r.down.queue, QueueLimit::Bytes(135_000));
        match &r.down.capacity {
            Capacity::Trace(t) => assert_eq!(t.start_ms(), 1),
            other => panic!("unexpected {other:?}"),
        }
        let e = PathSpec::parse("rate=1mbit,down.trace_start=5ms")
            .expect("parse")
            .resolve()
            .unwrap_err();
        assert!(e.to_string().contains("trace_start needs a trace"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn generated_trace_and_relative_base() {
        let r = PathSpec::parse("trace=gen:wifi:3:10s,delay=5ms,queue=100pkt")
            .expect("parse")
            .resolve()
            .expect("resolve");
        match &r.up.capacity {
            Capacity::Trace(t) => assert_eq!(t.period_ms(), 10_000),
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(r.up.capacity, r.down.capacity);
        let dir = std::env::temp_dir().join(format!("netsim-spec-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("t.up"), "1\n").expect("write");
        let r = PathSpec::parse("trace=t.up")
            .expect("parse")
            .resolve_relative_to(&dir)
            .expect("resolve");
        assert_eq!(r.up.capacity.nominal_rate_bps(), Some(12e6));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
