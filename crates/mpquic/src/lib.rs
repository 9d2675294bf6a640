//! Tokio runtime for mpquic (in progress).
