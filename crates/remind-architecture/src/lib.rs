//! No code of its own: this crate exists for `tests/architecture.rs`, which checks the
//! workspace's shape (the layer table of crates, one platform dependency per adapter,
//! a why-line atop every file) from outside every layer.
