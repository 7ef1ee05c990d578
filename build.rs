//! Keeps the page's `target_features` section when the release build strips its wasm.
//!
//! The release profile strips the page (`strip = "symbols"`, wasm-ld's `--strip-all`):
//! its name section, 1.3 MB of a 3.4 MB file that only a debugger reads, is otherwise
//! fetched and streamed through the compiler on every load. wasm-bindgen reads the
//! `target_features` section to know which wasm features the module uses, so that one
//! section is kept.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo::rustc-link-arg-bins=--keep-section=target_features");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
