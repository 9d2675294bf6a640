//! Congestion controllers by name: the factory seam ([`ControllerFactory`]) and the registry of
//! the built-in algorithms. A new algorithm is a new file implementing [`CongestionController`]
//! and one line in [`BUILTIN`]; an application plugs in its own through
//! [`crate::TransportConfig::congestion_controller_factory`] without touching this crate.

use std::fmt::Debug;
use std::sync::Arc;

use super::{bbr, cubic, lia, new_reno, olia, CcConfig, CongestionController};

/// Makes the congestion controller of each new path (quinn's `ControllerFactory` plays the same
/// role). Shared by every connection of a configuration, hence `Send + Sync`.
pub trait ControllerFactory: Debug + Send + Sync {
    /// The algorithm's name ("newreno", "cubic", ...), as the command line and the lab spell it.
    fn name(&self) -> &str;
    /// A fresh controller for one path.
    fn build(&self, config: CcConfig) -> Box<dyn CongestionController>;
}

/// A built-in algorithm: its name and constructor.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    name: &'static str,
    build: fn(CcConfig) -> Box<dyn CongestionController>,
}

impl ControllerFactory for Builtin {
    fn name(&self) -> &str {
        self.name
    }
    fn build(&self, config: CcConfig) -> Box<dyn CongestionController> {
        (self.build)(config)
    }
}

/// Every built-in algorithm, by name.
pub static BUILTIN: [Builtin; 5] = [
    Builtin {
        name: "newreno",
        build: |c| Box::new(new_reno::NewReno::new(c)),
    },
    Builtin {
        name: "cubic",
        build: |c| Box::new(cubic::Cubic::new(c)),
    },
    // BBRv3 (draft-ietf-ccwg-bbr); needs pacing and delivery-rate samples.
    Builtin {
        name: "bbr",
        build: |c| Box::new(bbr::Bbr::new(c)),
    },
    // RFC 6356 coupled congestion control.
    Builtin {
        name: "lia",
        build: |c| Box::new(lia::Lia::new(c)),
    },
    // OLIA (Khalili et al., CoNEXT 2012) coupled congestion control.
    Builtin {
        name: "olia",
        build: |c| Box::new(olia::Olia::new(c)),
    },
];

/// The built-in algorithm called `name` (case-insensitive).
pub fn lookup(name: &str) -> Option<Arc<dyn ControllerFactory>> {
    BUILTIN
        .iter()
        .find(|b| b.name.eq_ignore_ascii_case(name))
        .map(|b| Arc::new(*b) as Arc<dyn ControllerFactory>)
}

/// The names of the built-in algorithms, for listings and error messages.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|b| b.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_builds_a_controller_of_its_name() {
        for name in names() {
            let factory = lookup(&name.to_ascii_uppercase()).expect("registered");
            assert_eq!(factory.name(), name);
            assert_eq!(factory.build(CcConfig::new(1200)).name(), name);
        }
        assert!(lookup("vegas").is_none());
    }
}
