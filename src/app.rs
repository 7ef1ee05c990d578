//! Use-cases.
