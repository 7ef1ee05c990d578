//! The exact bytes the model is sent: the paper's two prompts must match the reference
//! rendering, and the page's general prompt with a clarified query is snapshotted in
//! both endpoint modes so any change to what is sent shows up in review.
//!
//! Run with `UPDATE_SNAPSHOTS=1` to rewrite the snapshot files after an intended change.
#![cfg(not(target_arch = "wasm32"))]

use std::path::{Path, PathBuf};

use remind_core::prompt::{PromptMode, PromptTemplate, RenderedPrompt, attach_clarification};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn read_fixture(name: &str) -> String {
    let path = fixture(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

/// Where two texts first differ, as line numbers and both lines, so a failure says
/// what changed without dumping kilobytes of prompt.
fn first_difference(expected: &str, actual: &str) -> String {
    let mut expected_lines = expected.split('\n');
    let mut actual_lines = actual.split('\n');
    for line in 1.. {
        match (expected_lines.next(), actual_lines.next()) {
            (Some(e), Some(a)) if e == a => continue,
            (e, a) => {
                return format!(
                    "first difference at line {line}:\n  expected: {e:?}\n  actual:   {a:?}\n\
                     (expected {} bytes, actual {} bytes)",
                    expected.len(),
                    actual.len()
                );
            }
        }
    }
    unreachable!("the loop returns at the first difference")
}

/// Compares with the snapshot file, or rewrites it when `UPDATE_SNAPSHOTS=1`.
fn assert_snapshot(name: &str, actual: &str) {
    let path = fixture(&format!("snapshots/{name}"));
    if std::env::var("UPDATE_SNAPSHOTS").is_ok_and(|v| v == "1") {
        std::fs::create_dir_all(path.parent().expect("a snapshots folder"))
            .expect("creating tests/fixtures/snapshots");
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "no snapshot at {} ({e}); run `UPDATE_SNAPSHOTS=1 cargo test --test prompt_snapshots` to create it",
            path.display()
        )
    });
    assert!(
        expected == actual,
        "snapshot {name} differs; {}\nIf the change is intended, run \
         `UPDATE_SNAPSHOTS=1 cargo test --test prompt_snapshots` and review the diff.",
        first_difference(&expected, actual)
    );
}

fn assert_same_bytes(what: &str, expected: &str, actual: &str) {
    assert!(
        expected == actual,
        "{what} differs from the reference rendering; {}",
        first_difference(expected, actual)
    );
}

#[test]
fn the_lexical_prompt_renders_byte_for_byte_as_the_reference() {
    assert_same_bytes(
        "prompt_lexical_qa",
        &read_fixture("prompt_lexical_qa.rendered.txt"),
        &PromptTemplate::paper_lexical().render(),
    );
}

#[test]
fn the_scrambling_prompt_renders_byte_for_byte_as_the_reference() {
    assert_same_bytes(
        "prompt_gpt3_synthetic_tasks",
        &read_fixture("prompt_gpt3_synthetic_tasks.rendered.txt"),
        &PromptTemplate::paper_scrambling().render(),
    );
}

#[test]
fn a_query_follows_the_reference_rendering_after_one_separator() {
    // The reference files end after the last example; the query is appended after the
    // separator and followed by one more, where the model starts its reply.
    let reference = read_fixture("prompt_lexical_qa.rendered.txt");
    let sent = PromptTemplate::paper_lexical().completion_text("What is like < fast > ?");
    assert_same_bytes(
        "the lexical prompt with a query",
        &format!("{reference}\n\n###\n\n/What is like < fast > ?\n\n###\n\n/"),
        &sent,
    );
}

fn clarified_query() -> String {
    attach_clarification(
        "What is like < swift > ?",
        "clarification: when I ask for like, I want a synonym.",
    )
}

#[test]
fn the_general_prompt_with_a_clarified_query_in_completion_mode_matches_its_snapshot() {
    let RenderedPrompt::Completion(text) =
        PromptTemplate::general().rendered(PromptMode::Completion, &clarified_query())
    else {
        panic!("completion mode renders text");
    };
    assert!(text.ends_with(
        "/What is like < swift > ? | clarification: when I ask for like, I want a synonym.\n\n###\n\n/"
    ));
    assert_snapshot("general_clarified_completion.txt", &text);
}

#[test]
fn the_general_prompt_with_a_clarified_query_in_chat_mode_matches_its_snapshot() {
    let RenderedPrompt::Chat(messages) =
        PromptTemplate::general().rendered(PromptMode::Chat, &clarified_query())
    else {
        panic!("chat mode renders messages");
    };
    assert_eq!(
        messages.last().map(|m| m.content.clone()),
        Some(clarified_query())
    );
    let json = serde_json::to_string_pretty(&messages).expect("messages serialise");
    assert_snapshot("general_clarified_chat.json", &format!("{json}\n"));
}
