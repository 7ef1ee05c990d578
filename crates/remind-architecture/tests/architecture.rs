//! The rules of ARCHITECTURE.md the compiler cannot hold by itself: which crate may
//! depend on which (the compiler then refuses any other use), what the pure crates may
//! not call from `std`, one platform dependency per adapter, and a why-line atop every
//! file.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

/// Each crate and the workspace crates its library may depend on, innermost first.
const LAYERS: &[(&str, &[&str])] = &[
    ("remind-core", &[]),
    ("remind-app", &["remind-core"]),
    ("remind-embedder-wire", &[]),
    ("remind-embedder", &["remind-app"]),
    (
        "remind-web",
        &["remind-core", "remind-app", "remind-embedder-wire"],
    ),
    (
        "remind-worker",
        &["remind-app", "remind-embedder", "remind-embedder-wire"],
    ),
    (
        "remind-eval",
        &["remind-core", "remind-app", "remind-embedder"],
    ),
    ("remind-test-support", &["remind-core", "remind-app"]),
    ("remind-architecture", &[]),
];

/// Crates that reach a platform: the pure layers may not name them at all.
const PLATFORM_CRATES: &[&str] = &[
    "web-sys",
    "js-sys",
    "wasm-bindgen",
    "wasm-bindgen-futures",
    "leptos",
    "reqwest",
    "gloo-storage",
    "tract-onnx",
    "ureq",
    "instant-distance",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn crate_dir(name: &str) -> PathBuf {
    workspace().join("crates").join(name)
}

fn manifest(name: &str) -> toml::Table {
    let path = crate_dir(name).join("Cargo.toml");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path:?}: {e}"));
    text.parse()
        .unwrap_or_else(|e| panic!("{path:?} is not TOML: {e}"))
}

/// The names in every `[dependencies]` table of a manifest, target-specific ones
/// included; dev-dependencies only when asked.
fn dependencies(manifest: &toml::Table, with_dev: bool) -> BTreeSet<String> {
    let mut tables = vec![manifest.get("dependencies")];
    if with_dev {
        tables.push(manifest.get("dev-dependencies"));
    }
    if let Some(targets) = manifest.get("target").and_then(|t| t.as_table()) {
        for target in targets.values() {
            tables.push(target.get("dependencies"));
            if with_dev {
                tables.push(target.get("dev-dependencies"));
            }
        }
    }
    tables
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_table())
        .flat_map(|t| t.keys().cloned())
        .collect()
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries {
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

/// The code of a file without its comments, so a doc comment may name what it avoids.
fn code_of(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {path:?}: {e}"))
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn every_crate_of_the_workspace_has_a_place_in_the_layer_table() {
    let on_disk: BTreeSet<String> = fs::read_dir(workspace().join("crates"))
        .expect("crates/ exists")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let listed: BTreeSet<String> = LAYERS.iter().map(|(name, _)| name.to_string()).collect();
    assert_eq!(
        on_disk, listed,
        "add the new crate to LAYERS and ARCHITECTURE.md"
    );
}

#[test]
fn each_crate_depends_only_on_the_layers_beneath_it() {
    let workspace_crates: BTreeSet<&str> = LAYERS.iter().map(|(name, _)| *name).collect();
    for (name, allowed) in LAYERS {
        let used: BTreeSet<String> = dependencies(&manifest(name), false)
            .into_iter()
            .filter(|d| workspace_crates.contains(d.as_str()))
            .collect();
        let allowed: BTreeSet<String> = allowed.iter().map(|s| s.to_string()).collect();
        assert!(
            used.is_subset(&allowed),
            "{name} depends on {:?}, beyond its layers {allowed:?}",
            used.difference(&allowed).collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_page_never_links_tract_or_the_harness() {
    let page = dependencies(&manifest("remind-web"), false);
    for forbidden in [
        "remind-embedder",
        "remind-eval",
        "tract-onnx",
        "instant-distance",
    ] {
        assert!(
            !page.contains(forbidden),
            "remind-web depends on {forbidden}"
        );
    }
}

#[test]
fn the_core_and_the_use_cases_name_no_platform_crate() {
    for name in ["remind-core", "remind-app"] {
        let deps = dependencies(&manifest(name), true);
        let platform: Vec<&&str> = PLATFORM_CRATES
            .iter()
            .filter(|p| deps.contains(**p))
            .collect();
        assert!(platform.is_empty(), "{name} depends on {platform:?}");
    }
}

#[test]
fn the_core_does_no_io_and_reads_no_clock() {
    let forbidden = [
        "std::fs",
        "std::net",
        "std::env",
        "std::io::stdin",
        "SystemTime",
        "Instant::now",
        "println!",
    ];
    let mut found = Vec::new();
    for file in rust_files(&crate_dir("remind-core").join("src")) {
        let code = code_of(&file);
        for word in forbidden {
            if code.contains(word) {
                found.push(format!("{} uses `{word}`", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the core must stay pure:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_page_components_call_use_cases_never_adapters() {
    let mut found = Vec::new();
    for file in rust_files(&crate_dir("remind-web").join("src/ui")) {
        let code = code_of(&file);
        for word in ["crate::adapters", "reqwest", "gloo_storage", "IdbDatabase"] {
            if code.contains(word) {
                found.push(format!("{} uses `{word}`", file.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the UI must go through use-cases:\n{}",
        found.join("\n")
    );
}

#[test]
fn each_platform_dependency_lives_in_one_adapter() {
    let homes = [
        ("reqwest", "remind-web/src/adapters/http_llm.rs"),
        ("gloo_storage", "remind-web/src/adapters/local_settings.rs"),
        ("IdbDatabase", "remind-web/src/adapters/idb_store.rs"),
        (
            "BeforeUnloadEvent",
            "remind-web/src/adapters/leave_guard.rs",
        ),
        (
            "BroadcastChannel",
            "remind-web/src/adapters/tab_broadcast.rs",
        ),
        ("Worker::new", "remind-web/src/adapters/worker_embedder.rs"),
        ("match_with_str", "remind-worker/src/model_cache.rs"),
        ("tract_onnx", "remind-embedder/src/tract_embedder.rs"),
        ("ureq", "remind-eval/src/blocking_http_llm.rs"),
    ];
    let crates = workspace().join("crates");
    let sources: Vec<PathBuf> = LAYERS
        .iter()
        .flat_map(|(name, _)| rust_files(&crate_dir(name).join("src")))
        .collect();
    for (dependency, home) in homes {
        let users: Vec<String> = sources
            .iter()
            .filter(|f| code_of(f).contains(dependency))
            .map(|f| {
                f.strip_prefix(&crates)
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
    for (name, _) in LAYERS {
        for file in rust_files(&crate_dir(name)) {
            let text = fs::read_to_string(&file).expect("readable source");
            if !text.starts_with("//!") {
                problems.push(format!("{} does not open with a //! line", file.display()));
            }
            let stem = file.file_stem().unwrap().to_string_lossy().to_string();
            if [
                "mod", "utils", "helpers", "manager", "data", "misc", "common",
            ]
            .contains(&stem.as_str())
            {
                problems.push(format!("{} has a name that says nothing", file.display()));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
