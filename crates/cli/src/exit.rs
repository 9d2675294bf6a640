//! Exit codes: 2 when the input was refused (arguments, key files, scenario files, output paths
//! that cannot be written), as clap does for malformed arguments; 1 when the work itself failed
//! (a transfer, a simulated run). Either way the error is one line on stderr.

use std::io::Write;
use std::process::ExitCode;

/// The command could not start because of its input; exits with code 2.
#[derive(Debug)]
pub struct UsageError(String);

impl UsageError {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Exit code of input errors (clap uses the same for malformed arguments).
pub const USAGE: u8 = 2;
/// Exit code of failed work.
pub const FAILURE: u8 = 1;

/// Whether `error` (or any error it wraps) is about the input rather than the work.
fn is_usage(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        cause.is::<UsageError>()
            || cause
                .downcast_ref::<mpquic_lab::LabError>()
                .is_some_and(mpquic_lab::LabError::is_input)
    })
}

/// Print one readable error line and give the exit code of its kind.
pub fn fail(error: &anyhow::Error) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "error: {error:#}");
    ExitCode::from(if is_usage(error) { USAGE } else { FAILURE })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_are_found_behind_context() {
        let usage = anyhow::Error::new(UsageError::new("bad key")).context("starting");
        assert!(is_usage(&usage));
        assert!(!is_usage(&anyhow::anyhow!("transfer failed")));
    }
}
