//! The rules of ARCHITECTURE.md the compiler cannot hold by itself: which package may
//! depend on which (read from the real dependency graph, `cargo metadata`, against the
//! one package table in ARCHITECTURE.md), what the core may not call from `std`, one
//! platform dependency per adapter, and a why-line atop every file.
#![cfg(not(target_arch = "wasm32"))]

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

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

/// The page's package: the workspace root.
const PAGE: &str = "remind-web";

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

struct Package {
    dir: PathBuf,
    /// Every crate it depends on to build (normal and build dependencies, on any
    /// target); dev-dependencies are the tests' business.
    builds_with: BTreeSet<String>,
    /// The workspace packages among those.
    uses: BTreeSet<String>,
    /// Every crate it names in any dependency table, dev-dependencies included.
    names: BTreeSet<String>,
}

/// The workspace's packages as Cargo sees them.
fn packages() -> &'static BTreeMap<String, Package> {
    static PACKAGES: OnceLock<BTreeMap<String, Package>> = OnceLock::new();
    PACKAGES.get_or_init(|| {
        let output = Command::new(env!("CARGO"))
            .args(["metadata", "--format-version", "1", "--no-deps"])
            .current_dir(workspace())
            .output()
            .expect("cargo metadata runs");
        assert!(
            output.status.success(),
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let metadata: Value = serde_json::from_slice(&output.stdout).expect("metadata is JSON");
        let listed = metadata["packages"].as_array().expect("a package list");
        let ours: BTreeSet<&str> = listed
            .iter()
            .map(|p| p["name"].as_str().expect("a package name"))
            .collect();
        listed
            .iter()
            .map(|p| {
                let dependencies = p["dependencies"].as_array().expect("a dependency list");
                let name_of = |d: &Value| d["name"].as_str().expect("a name").to_string();
                let builds_with: BTreeSet<String> = dependencies
                    .iter()
                    .filter(|d| d["kind"].as_str() != Some("dev"))
                    .map(name_of)
                    .collect();
                let uses = builds_with
                    .iter()
                    .filter(|d| ours.contains(d.as_str()))
                    .cloned()
                    .collect();
                let names = dependencies.iter().map(name_of).collect();
                let manifest = PathBuf::from(p["manifest_path"].as_str().expect("a manifest"));
                let package = Package {
                    dir: manifest.parent().expect("a directory").to_path_buf(),
                    builds_with,
                    uses,
                    names,
                };
                (p["name"].as_str().unwrap().to_string(), package)
            })
            .collect()
    })
}

fn package(name: &str) -> &'static Package {
    packages()
        .get(name)
        .unwrap_or_else(|| panic!("{name} is not a workspace package"))
}

/// ARCHITECTURE.md's package table: each package and the workspace packages it may
/// depend on. The first code span of a row names the package; the code spans of its
/// last column that name workspace packages are what it may use.
fn layer_table() -> BTreeMap<String, BTreeSet<String>> {
    let path = workspace().join("ARCHITECTURE.md");
    let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {path:?}: {e}"));
    let code_spans = |cell: &str| -> Vec<String> {
        cell.split('`')
            .skip(1)
            .step_by(2)
            .map(str::to_string)
            .collect()
    };
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|line| !line.starts_with("| package |"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .collect();
    assert!(
        !rows.is_empty(),
        "ARCHITECTURE.md has no table headed `| package |`"
    );
    let mut table = BTreeMap::new();
    for row in rows {
        let cells: Vec<&str> = row.trim_matches('|').split('|').collect();
        let name = code_spans(cells[0])
            .into_iter()
            .next()
            .unwrap_or_else(|| panic!("a row without a package name: {row}"));
        let may_use = code_spans(cells[cells.len() - 1])
            .into_iter()
            .filter(|n| packages().contains_key(n))
            .collect();
        assert!(
            table.insert(name.clone(), may_use).is_none(),
            "{name} has two rows"
        );
    }
    table
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

/// Every Rust file a package builds from, its tests and examples included. Only these
/// folders: the root package's directory also holds the other crates and build output.
fn package_files(name: &str) -> Vec<PathBuf> {
    ["src", "tests", "examples", "benches"]
        .iter()
        .flat_map(|dir| rust_files(&package(name).dir.join(dir)))
        .collect()
}

/// The code of a file without its comments, so a doc comment may name what it avoids.
fn code_of(path: &Path) -> String {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("reading {path:?}: {e}"))
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Whether `word` occurs in `code` as a whole identifier, however it is spaced or
/// nested (`crate::adapters`, `crate :: adapters`, `use crate::{adapters::…}`).
fn names_identifier(code: &str, word: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices(word).any(|(at, _)| {
        let before = code[..at].chars().next_back();
        let after = code[at + word.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

fn relative(path: &Path) -> String {
    path.strip_prefix(workspace())
        .unwrap_or(path)
        .to_string_lossy()
        .replace('\\', "/")
}

#[test]
fn the_package_table_lists_every_workspace_package_once() {
    let listed: BTreeSet<String> = layer_table().into_keys().collect();
    let in_workspace: BTreeSet<String> = packages().keys().cloned().collect();
    assert_eq!(
        listed, in_workspace,
        "ARCHITECTURE.md's package table and the workspace differ"
    );
}

#[test]
fn each_package_depends_only_on_the_layers_its_row_allows() {
    for (name, allowed) in layer_table() {
        let used = &package(&name).uses;
        assert!(
            used.is_subset(&allowed),
            "{name} depends on {:?}, beyond its row of ARCHITECTURE.md {allowed:?}",
            used.difference(&allowed).collect::<Vec<_>>()
        );
    }
}

#[test]
fn the_page_never_links_tract_the_harness_or_test_code() {
    // The workspace packages the page's build reaches, and every crate they name.
    let mut reached = BTreeSet::from([PAGE.to_string()]);
    let mut queue = vec![PAGE.to_string()];
    while let Some(name) = queue.pop() {
        for used in &package(&name).uses {
            if reached.insert(used.clone()) {
                queue.push(used.clone());
            }
        }
    }
    for forbidden in [
        "remind-embedder",
        "remind-eval",
        "remind-test-support",
        "tract-onnx",
        "instant-distance",
        "ureq",
    ] {
        let through: Vec<&String> = reached
            .iter()
            .filter(|p| *p == forbidden || package(p).builds_with.contains(forbidden))
            .collect();
        assert!(
            through.is_empty(),
            "the page's build reaches {forbidden} through {through:?}"
        );
    }
}

#[test]
fn the_core_and_the_use_cases_name_no_platform_crate() {
    for name in ["remind-core", "remind-app"] {
        let platform: Vec<&&str> = PLATFORM_CRATES
            .iter()
            .filter(|p| package(name).names.contains(**p))
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
    for file in rust_files(&package("remind-core").dir.join("src")) {
        let code: String = code_of(&file).split_whitespace().collect();
        for word in forbidden {
            if code.contains(word) {
                found.push(format!("{} uses `{word}`", relative(&file)));
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
    let ui = package(PAGE).dir.join("src/ui");
    let mut files = rust_files(&ui);
    files.push(ui.with_extension("rs"));
    let mut found = Vec::new();
    for file in files {
        let code = code_of(&file);
        for word in ["adapters", "reqwest", "gloo_storage", "IdbDatabase"] {
            if names_identifier(&code, word) {
                found.push(format!("{} names `{word}`", relative(&file)));
            }
        }
    }
    assert!(
        found.is_empty(),
        "the UI must go through use-cases (src/wiring.rs joins them to the adapters):\n{}",
        found.join("\n")
    );
}

#[test]
fn the_identifier_check_sees_every_spelling_of_a_path() {
    for code in [
        "use crate::adapters::idb_store::IdbStore;",
        "use crate :: adapters :: idb_store;",
        "use crate::{adapters::idb_store::IdbStore, wiring};",
        "use crate::{\n    wiring,\n    adapters,\n};",
        "let s = crate::adapters::local_settings::LocalSettings;",
    ] {
        assert!(names_identifier(code, "adapters"), "missed: {code}");
    }
    for code in [
        "use crate::wiring::page_adapters;",
        "let adapters_seen = 1;",
    ] {
        assert!(
            !names_identifier(code, "adapters"),
            "wrongly flagged: {code}"
        );
    }
}

#[test]
fn each_platform_dependency_lives_in_one_adapter() {
    let homes = [
        ("reqwest", "src/adapters/http_llm.rs"),
        ("gloo_storage", "src/adapters/local_settings.rs"),
        ("IdbDatabase", "src/adapters/idb_store.rs"),
        ("BeforeUnloadEvent", "src/adapters/leave_guard.rs"),
        ("BroadcastChannel", "src/adapters/tab_broadcast.rs"),
        ("Worker::new", "src/adapters/worker_embedder.rs"),
        ("match_with_str", "crates/remind-worker/src/model_cache.rs"),
        ("tract_onnx", "crates/remind-embedder/src/tract_embedder.rs"),
        ("ureq", "crates/remind-eval/src/blocking_http_llm.rs"),
    ];
    // HTTP and localStorage have one adapter per port they fill; the tract embedder has
    // its own operator beside it (the weight products on int8 weights).
    let other_homes = [
        ("reqwest", "src/adapters/http_model_catalog.rs"),
        ("gloo_storage", "src/adapters/local_conversations.rs"),
        (
            "tract_onnx",
            "crates/remind-embedder/src/quantized_product.rs",
        ),
    ];
    let sources: Vec<PathBuf> = packages()
        .values()
        .flat_map(|p| rust_files(&p.dir.join("src")))
        .collect();
    for (dependency, home) in homes {
        let mut allowed: Vec<String> = other_homes
            .iter()
            .filter(|(d, _)| *d == dependency)
            .map(|(_, other)| other.to_string())
            .chain([home.to_string()])
            .collect();
        allowed.sort();
        let users: Vec<String> = sources
            .iter()
            .filter(|f| code_of(f).contains(dependency))
            .map(|f| relative(f))
            .collect();
        assert_eq!(
            users,
            allowed,
            "`{dependency}` belongs to {} alone",
            allowed.join(" and ")
        );
    }
}

#[test]
fn every_source_file_says_why_it_exists_and_no_module_is_a_mod_rs() {
    let mut problems = Vec::new();
    for name in packages().keys() {
        for file in package_files(name) {
            let text = fs::read_to_string(&file).expect("readable source");
            if !text.starts_with("//!") {
                problems.push(format!("{} does not open with a //! line", relative(&file)));
            }
            let stem = file.file_stem().unwrap().to_string_lossy().to_string();
            if [
                "mod", "utils", "helpers", "manager", "data", "misc", "common",
            ]
            .contains(&stem.as_str())
            {
                problems.push(format!("{} has a name that says nothing", relative(&file)));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
