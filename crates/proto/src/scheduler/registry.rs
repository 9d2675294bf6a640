//! Schedulers by name: the factory seam ([`SchedulerFactory`]) and the registry of the built-in
//! ones. A new scheduler is a new file implementing [`Scheduler`] and one line in [`BUILTIN`];
//! an application plugs in its own through [`crate::TransportConfig::scheduler_factory`].

use std::fmt::Debug;
use std::sync::Arc;

use super::{BackupAware, Blest, Ecf, MinRtt, Redundant, RoundRobin, Scheduler};

/// Makes the scheduler of each new connection.
pub trait SchedulerFactory: Debug + Send + Sync {
    /// The scheduler's name ("min-rtt", "ecf", ...), as the command line and the lab spell it.
    fn name(&self) -> &str;
    /// A fresh scheduler for one connection.
    fn build(&self) -> Box<dyn Scheduler>;
}

/// A built-in scheduler: its name and constructor.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    name: &'static str,
    build: fn() -> Box<dyn Scheduler>,
}

impl SchedulerFactory for Builtin {
    fn name(&self) -> &str {
        self.name
    }
    fn build(&self) -> Box<dyn Scheduler> {
        (self.build)()
    }
}

/// Every built-in scheduler, by name.
pub static BUILTIN: [Builtin; 6] = [
    Builtin {
        name: "min-rtt",
        build: || Box::new(MinRtt),
    },
    Builtin {
        name: "round-robin",
        build: || Box::new(RoundRobin::default()),
    },
    Builtin {
        name: "redundant",
        build: || Box::new(Redundant),
    },
    Builtin {
        name: "backup-aware",
        build: || Box::new(BackupAware),
    },
    Builtin {
        name: "ecf",
        build: || Box::new(Ecf::default()),
    },
    Builtin {
        name: "blest",
        build: || Box::new(Blest::default()),
    },
];

/// The built-in scheduler called `name` (case-insensitive).
pub fn lookup(name: &str) -> Option<Arc<dyn SchedulerFactory>> {
    BUILTIN
        .iter()
        .find(|b| b.name.eq_ignore_ascii_case(name))
        .map(|b| Arc::new(*b) as Arc<dyn SchedulerFactory>)
}

/// The names of the built-in schedulers, for listings and error messages.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|b| b.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_builds_a_scheduler_of_its_name() {
        for name in names() {
            let factory = lookup(name).expect("registered");
            assert_eq!(factory.name(), name);
            assert_eq!(factory.build().name(), name);
        }
        assert!(lookup("fastest").is_none());
    }
}
