//! Platform adapters.
