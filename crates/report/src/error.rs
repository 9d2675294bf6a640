//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong while writing tables, plots or reports.
///
/// Every variant that concerns a file carries the path, so a failing
/// experiment suite can say which artefact it could not produce.
///
/// Non-exhaustive: a new kind of artefact may bring a new way to fail.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// Creating a directory or writing/reading a file failed.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// The file or directory concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// The plotting backend or the PNG encoder failed.
    #[error("cannot render {}: {message}", path.display())]
    Render {
        /// The output file that was being produced.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The caller asked for something impossible (e.g. a 0×0 image).
    #[error("invalid request for {}: {message}", path.display())]
    Invalid {
        /// The output file that was requested.
        path: PathBuf,
        /// What is wrong with the request.
        message: String,
    },
    /// [`Table::from_csv`](crate::Table::from_csv) could not parse its input.
    #[error("CSV error at line {line}: {message}")]
    Csv {
        /// 1-based line number where the problem was found.
        line: usize,
        /// What is wrong.
        message: String,
    },
}

impl ReportError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        ReportError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Writes `bytes` to `path`, creating missing parent directories first.
pub(crate) fn write_file(path: &std::path::Path, bytes: &[u8]) -> Result<(), ReportError> {
    if let Some(parent) = path.parent() {
        if !parent.as_os_str().is_empty() {
            std::fs::create_dir_all(parent).map_err(|e| ReportError::io(parent, e))?;
        }
    }
    std::fs::write(path, bytes).map_err(|e| ReportError::io(path, e))
}
