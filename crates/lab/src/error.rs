//! Errors of scenario loading and runs.

use std::path::PathBuf;

use mpquic_netsim::{SimError, SpecError};

/// Why a scenario could not be loaded or run. Messages name the offending
/// key (`paths[1]`, `transport.ack_range_limit`, ...) and value.
#[derive(Debug, thiserror::Error)]
pub enum LabError {
    /// A file could not be read or written.
    #[error("{}: {error}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        error: std::io::Error,
    },
    /// The scenario text is not valid TOML or does not match the format
    /// (unknown key, bad unit, wrong type); `message` includes the line.
    #[error("{origin}: {message}")]
    Parse {
        /// File name or `<inline>`.
        origin: String,
        /// The parser's message.
        message: String,
    },
    /// A path specification is invalid or its trace cannot be loaded.
    #[error("{key}: {error}")]
    Spec {
        /// Which spec (`paths[0]`, `shared_bottleneck`, `--path #2`).
        key: String,
        /// The spec error (names the spec key, e.g. `up.trace`).
        error: SpecError,
    },
    /// A value is out of range or inconsistent with another.
    #[error("{key}: {message}")]
    Invalid {
        /// The key.
        key: String,
        /// What is wrong.
        message: String,
    },
    /// The simulator rejected the network built from the scenario.
    #[error("simulator: {0}")]
    Sim(#[from] SimError),
    /// A run on real sockets could not be set up (sockets, emulator, runtime).
    #[error("real run: {0}")]
    Real(String),
    /// An output file cannot be written (checked before any work starts).
    #[error("{key} {}: cannot write: {why}", path.display())]
    Output {
        /// The option naming the file (`--json`).
        key: String,
        /// The file.
        path: PathBuf,
        /// Why not.
        why: String,
    },
}

/// A transport setting refused by `TransportConfig::validate`, named by its scenario key
/// (`transport.ack_range_limit`).
impl From<mpquic_proto::ConfigError> for LabError {
    fn from(e: mpquic_proto::ConfigError) -> Self {
        LabError::Invalid {
            key: format!("transport.{}", e.field),
            message: e.problem,
        }
    }
}

impl LabError {
    /// Whether the error is about the input (a scenario, a path spec, an output path) rather
    /// than a failure of the work: the command line exits with code 2 for these.
    pub fn is_input(&self) -> bool {
        !matches!(self, LabError::Sim(_) | LabError::Real(_))
    }

    pub(crate) fn invalid(key: &str, message: impl Into<String>) -> Self {
        LabError::Invalid {
            key: key.to_owned(),
            message: message.into(),
        }
    }
}
