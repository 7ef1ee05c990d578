//! The workspace's shape as data: which crate is which layer and which crates each may
//! depend on. `tests/architecture.rs` holds every manifest to it.
