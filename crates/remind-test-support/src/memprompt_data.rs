//! Reads the MemPrompt data set that lives beside the repository (`../shared/
//! memprompt-data`, too big to copy into tests/fixtures), failing with what to do
//! when it is missing.

use std::path::PathBuf;

/// The text of a file of the data set, e.g. `tasks/hin/tasks_300.jsonl`.
pub fn shared_file(relative: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/memprompt-data")
        .join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}). These tests run on the MemPrompt data set; put a copy of \
             memprompt-data (see its README.md) at ../shared/memprompt-data next to the repo.",
            path.display()
        )
    })
}
