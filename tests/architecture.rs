//! The layering rules of ARCHITECTURE.md, checked on the source text so a change that
//! breaks them fails the build instead of slipping through review.
#![cfg(not(target_arch = "wasm32"))]

use std::fs;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("reading {dir:?}: {e}")) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

fn src(sub: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(sub)
}

/// The code of a file without its comments, so a doc comment may name what it avoids.
fn code_of(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {path:?}: {e}"))
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn offenders(dir: &str, forbidden: &[&str]) -> Vec<String> {
    let mut found = Vec::new();
    for file in rust_files(&src(dir)) {
        let code = code_of(&file);
        for word in forbidden {
            if code.contains(word) {
                found.push(format!("{} uses `{word}`", file.display()));
            }
        }
    }
    found
}

#[test]
fn the_domain_does_no_io_reads_no_clock_and_knows_no_platform() {
    let forbidden = [
        "web_sys",
        "js_sys",
        "wasm_bindgen",
        "leptos",
        "reqwest",
        "tract",
        "gloo",
        "std::fs",
        "std::net",
        "std::env",
        "std::io::stdin",
        "SystemTime",
        "Instant::now",
        "crate::app",
        "crate::adapters",
        "crate::ui",
        "println!",
    ];
    let found = offenders("domain", &forbidden);
    assert!(
        found.is_empty(),
        "the domain must stay pure:\n{}",
        found.join("\n")
    );
}

#[test]
fn use_cases_reach_the_platform_only_through_ports() {
    let forbidden = [
        "web_sys",
        "js_sys",
        "leptos",
        "reqwest",
        "tract",
        "gloo",
        "crate::adapters",
        "crate::ui",
    ];
    let found = offenders("app", &forbidden);
    assert!(
        found.is_empty(),
        "use-cases must not name adapters:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_page_calls_use_cases_never_adapters() {
    let found = offenders(
        "ui",
        &["crate::adapters", "reqwest", "tract", "gloo_storage"],
    );
    assert!(
        found.is_empty(),
        "the UI must go through use-cases:\n{}",
        found.join("\n")
    );
}

#[test]
fn each_platform_dependency_lives_in_one_adapter() {
    let homes = [
        ("reqwest", "adapters/http_llm.rs"),
        ("gloo_storage", "adapters/local_settings.rs"),
        ("IdbDatabase", "adapters/idb_store.rs"),
        // The crate path, not "tract": adapters.rs names the module `tract_embedder`.
        ("tract_onnx", "adapters/tract_embedder.rs"),
        ("ureq", "adapters/blocking_http_llm.rs"),
        ("Worker::new", "adapters/worker_embedder.rs"),
        ("match_with_str", "adapters/model_cache.rs"),
    ];
    for (dependency, home) in homes {
        let users: Vec<String> = rust_files(&src(""))
            .into_iter()
            .filter(|f| code_of(f).contains(dependency))
            .map(|f| {
                f.strip_prefix(src(""))
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        assert_eq!(
            users,
            vec![home.to_string()],
            "`{dependency}` belongs to {home} alone"
        );
    }
}

#[test]
fn every_source_file_says_why_it_exists_and_no_module_is_a_mod_rs() {
    let mut problems = Vec::new();
    for file in rust_files(&src("")) {
        let text = fs::read_to_string(&file).expect("readable source");
        if !text.starts_with("//!") {
            problems.push(format!("{} does not open with a //! line", file.display()));
        }
        let name = file.file_stem().unwrap().to_string_lossy().to_string();
        if [
            "mod", "utils", "helpers", "manager", "data", "misc", "common",
        ]
        .contains(&name.as_str())
        {
            problems.push(format!("{} has a name that says nothing", file.display()));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
