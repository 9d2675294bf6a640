//! Re-injection policies by name: the factory seam ([`ReinjectionFactory`]) and the registry of
//! the built-in ones. A new policy is a new file implementing [`ReinjectionPolicy`] and one
//! line in [`BUILTIN`]; an application plugs in its own through
//! [`crate::TransportConfig::reinjection_factory`].

use std::fmt::Debug;
use std::sync::Arc;

use super::{Always, Never, ReinjectionPolicy, StrandedTail};

/// Makes the re-injection policy of each new connection.
pub trait ReinjectionFactory: Debug + Send + Sync {
    /// The policy's name ("off", "tail", ...), as the command line and the lab spell it.
    fn name(&self) -> &str;
    /// A fresh policy for one connection.
    fn build(&self) -> Box<dyn ReinjectionPolicy>;
}

/// A built-in policy without parameters: its name and constructor.
#[derive(Debug, Clone, Copy)]
pub struct Builtin {
    name: &'static str,
    build: fn() -> Box<dyn ReinjectionPolicy>,
}

impl ReinjectionFactory for Builtin {
    fn name(&self) -> &str {
        self.name
    }
    fn build(&self) -> Box<dyn ReinjectionPolicy> {
        (self.build)()
    }
}

/// Every built-in policy without parameters, by name. The QoE policy has thresholds: a
/// configured [`super::QoeControlled`] is its own factory.
pub static BUILTIN: [Builtin; 3] = [
    Builtin {
        name: "off",
        build: || Box::new(Never),
    },
    Builtin {
        name: "always",
        build: || Box::new(Always),
    },
    Builtin {
        name: "tail",
        build: || Box::new(StrandedTail),
    },
];

/// The built-in policy called `name` (case-insensitive).
pub fn lookup(name: &str) -> Option<Arc<dyn ReinjectionFactory>> {
    BUILTIN
        .iter()
        .find(|b| b.name.eq_ignore_ascii_case(name))
        .map(|b| Arc::new(*b) as Arc<dyn ReinjectionFactory>)
}

/// The names of the built-in policies without parameters.
pub fn names() -> impl Iterator<Item = &'static str> {
    BUILTIN.iter().map(|b| b.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_builds_a_policy_of_its_name() {
        for name in names() {
            let factory = lookup(name).expect("registered");
            assert_eq!(factory.name(), name);
            assert_eq!(factory.build().name(), name);
        }
        assert!(lookup("sometimes").is_none());
    }
}
