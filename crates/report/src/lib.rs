//! Report generation (in progress).
