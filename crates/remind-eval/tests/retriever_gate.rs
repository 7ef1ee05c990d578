//! How well each retriever's gate tells "same task type" from "different task type" on
//! the paper's retriever pairs, and where the edit-distance gate is known to confuse
//! types (the paper's "like" vs "unlike", and the romanised Hindi and Punjabi phrasings).
//!
//! Gates are compared on masked keys alone: the semantic part of the hybrid needs model
//! embeddings, so only its key and polarity rules are measured here.
#![cfg(not(target_arch = "wasm32"))]

use remind_test_support as support;

use std::collections::{BTreeMap, HashMap};

use remind_core::levenshtein;
use remind_core::memory_key::MemoryKey;
use remind_core::retrieval::hybrid::polarity_differs;
use remind_eval::gate_confusion::GateConfusion;
use remind_eval::task_stream::{TaskType, TemplateSet};
use support::memprompt_data::shared_file;

fn templates() -> TemplateSet {
    TemplateSet::parse(&shared_file("derived/templates.jsonl")).expect("templates parse")
}

/// The masked key of each template of a class, with its task type and id.
fn template_keys(class: &str) -> Vec<(MemoryKey, TaskType, String)> {
    templates()
        .of_class(class)
        .map(|t| {
            let question = t.question.replace("{word1}", "w").replace("{word}", "w");
            (
                MemoryKey::of_question(&question),
                t.task_type,
                t.template_id.clone(),
            )
        })
        .collect()
}

/// A gate: accepts a stored key for a query key, or not.
type Gate = fn(&str, &str) -> bool;

fn levenshtein_gate(a: &str, b: &str) -> bool {
    levenshtein::distance(a, b) < 6
}

fn normalised_gate(a: &str, b: &str) -> bool {
    levenshtein::normalised(a, b) <= 0.25
}

/// The hybrid without embeddings: only the same masked key is accepted outright.
fn hybrid_key_gate(a: &str, b: &str) -> bool {
    a == b
}

/// The edit-distance gate with the hybrid's polarity veto on top.
fn levenshtein_with_polarity_veto_gate(a: &str, b: &str) -> bool {
    levenshtein_gate(a, b) && !polarity_differs(a, b)
}

const GATES: [(&str, Gate); 4] = [
    ("levenshtein d<6", levenshtein_gate),
    ("normalised d<=0.25", normalised_gate),
    ("hybrid same-key", hybrid_key_gate),
    (
        "levenshtein+polarity veto",
        levenshtein_with_polarity_veto_gate,
    ),
];

/// `(key1, key2, same type)` for every pair of `data/sim/test.jsonl`.
fn test_pairs() -> Vec<(MemoryKey, MemoryKey, bool)> {
    shared_file("data/sim/test.jsonl")
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let v: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("data/sim/test.jsonl line {}: {e}", i + 1));
            let text = |f: &str| v[f].as_str().unwrap_or_default().to_string();
            (
                MemoryKey::of_question(&text("sentence1")),
                MemoryKey::of_question(&text("sentence2")),
                v["label"].as_f64() == Some(1.0),
            )
        })
        .collect()
}

fn confusion(pairs: &[(MemoryKey, MemoryKey, bool)], gate: Gate) -> GateConfusion {
    // Only 15 distinct keys occur, so decide each key pair once.
    let mut decided: HashMap<(&str, &str), bool> = HashMap::new();
    let mut c = GateConfusion::default();
    for (a, b, same) in pairs {
        let accepted = *decided
            .entry((a.as_str(), b.as_str()))
            .or_insert_with(|| gate(a.as_str(), b.as_str()));
        c.count(accepted, *same);
    }
    c
}

#[test]
fn every_gate_has_its_pinned_precision_and_recall_for_same_task_type_on_the_test_pairs() {
    let pairs = test_pairs();
    assert_eq!(pairs.len(), 28_542);
    assert_eq!(pairs.iter().filter(|p| p.2).count(), 13_912);
    let mut observed = Vec::new();
    for (name, gate) in GATES {
        let c = confusion(&pairs, gate);
        println!(
            "{name:<28} precision {:.4} recall {:.4}  (tp {} fp {} fn {} tn {})",
            c.precision(),
            c.recall(),
            c.true_positive,
            c.false_positive,
            c.false_negative,
            c.true_negative
        );
        assert_eq!(
            c.true_positive + c.false_positive + c.false_negative + c.true_negative,
            pairs.len()
        );
        observed.push((name, c.true_positive, c.false_positive, c.false_negative));
    }
    assert_eq!(
        observed,
        vec![
            ("levenshtein d<6", 4514, 148, 9398),
            ("normalised d<=0.25", 5088, 148, 8824),
            ("hybrid same-key", 4514, 0, 9398),
            ("levenshtein+polarity veto", 4514, 0, 9398),
        ],
        "(gate, tp, fp, fn) changed"
    );
}

#[test]
fn the_levenshtein_gate_takes_unlike_for_like_every_time_and_the_polarity_veto_never_does() {
    let like = MemoryKey::of_question("What is like < w > ?");
    let unlike = MemoryKey::of_question("What is unlike < w > ?");
    let pairs: Vec<_> = test_pairs()
        .into_iter()
        .filter(|(a, b, _)| (a == &like && b == &unlike) || (a == &unlike && b == &like))
        .collect();
    let accepted = |gate: Gate| {
        pairs
            .iter()
            .filter(|(a, b, _)| gate(a.as_str(), b.as_str()))
            .count()
    };
    println!(
        "like/unlike pairs in test.jsonl: {}, accepted by levenshtein {}, by levenshtein+veto {}",
        pairs.len(),
        accepted(levenshtein_gate),
        accepted(levenshtein_with_polarity_veto_gate)
    );
    assert_eq!(pairs.len(), 148);
    assert!(
        pairs.iter().all(|p| !p.2),
        "like and unlike are different task types"
    );
    // Wrong-type rate 1.0: every accepted pair is of the wrong type.
    assert_eq!(accepted(levenshtein_gate), pairs.len());
    assert_eq!(accepted(normalised_gate), pairs.len());
    assert_eq!(accepted(levenshtein_with_polarity_veto_gate), 0);
    assert_eq!(accepted(hybrid_key_gate), 0);
}

/// Template pairs of different task types whose masked keys the gate accepts.
fn colliding_templates(class: &str, gate: Gate) -> Vec<String> {
    let keys = template_keys(class);
    let mut found = Vec::new();
    for (i, (ka, ta, ia)) in keys.iter().enumerate() {
        for (kb, tb, ib) in &keys[i + 1..] {
            if ta != tb && gate(ka.as_str(), kb.as_str()) {
                found.push(format!(
                    "{ia}~{ib} (d={})",
                    levenshtein::distance(ka.as_str(), kb.as_str())
                ));
            }
        }
    }
    found
}

#[test]
fn the_levenshtein_gate_confuses_exactly_these_template_pairs_per_language() {
    let mut observed = BTreeMap::new();
    for class in ["linguistic", "hin", "pun"] {
        let found = colliding_templates(class, levenshtein_gate);
        println!("levenshtein d<6 cross-type template collisions, {class}: {found:?}");
        observed.insert(class, found);
    }
    let pinned = |pairs: &[&str]| pairs.iter().map(|p| p.to_string()).collect::<Vec<_>>();
    let expected = BTreeMap::from([
        ("linguistic", pinned(&["syn0~ant0 (d=2)"])),
        (
            "hin",
            pinned(&[
                "syn0~ant0 (d=5)",
                "syn2~defn0 (d=5)",
                "ant0~defn1 (d=3)",
                "ant0~sent1 (d=4)",
                "ant2~defn1 (d=5)",
                "ant2~sent1 (d=4)",
                "defn1~sent1 (d=5)",
            ]),
        ),
        ("pun", pinned(&["syn1~defn0 (d=5)", "ant1~defn1 (d=4)"])),
    ]);
    assert_eq!(observed, expected);
}

/// Of all question pairs in a class's `data/sim/*.jsonl` that the gate accepts, the
/// share that are of different task types: how often a stored lesson of another type
/// would be attached if every question were stored.
fn wrong_type_rate(file: &str, gate: Gate) -> (usize, usize) {
    let mut per_key: BTreeMap<MemoryKey, (String, usize)> = BTreeMap::new();
    for (i, line) in shared_file(file).lines().enumerate() {
        let v: serde_json::Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{file} line {}: {e}", i + 1));
        let key = MemoryKey::of_question(v["ques"].as_str().unwrap_or_default());
        let task = v["type"].as_str().unwrap_or_default().to_string();
        let entry = per_key.entry(key).or_insert((task.clone(), 0));
        assert_eq!(entry.0, task, "{file}: one key, one task type");
        entry.1 += 1;
    }
    let keys: Vec<_> = per_key.iter().collect();
    let (mut accepted, mut wrong) = (0, 0);
    for (i, (ka, (ta, na))) in keys.iter().enumerate() {
        accepted += na * (na - 1) / 2; // same key: always accepted, always right
        for (kb, (tb, nb)) in &keys[i + 1..] {
            if gate(ka.as_str(), kb.as_str()) {
                accepted += na * nb;
                if ta != tb {
                    wrong += na * nb;
                }
            }
        }
    }
    (wrong, accepted)
}

#[test]
fn the_levenshtein_wrong_type_rate_per_language_is_pinned_and_the_veto_lowers_it() {
    let mut observed = Vec::new();
    for (class, file) in [
        ("linguistic", "data/sim/all.jsonl"),
        ("hin", "data/sim/hin.jsonl"),
        ("pun", "data/sim/pun.jsonl"),
    ] {
        for (name, gate) in GATES {
            let (wrong, accepted) = wrong_type_rate(file, gate);
            println!(
                "{class:<10} {name:<28} wrong-type {wrong} of {accepted} accepted pairs ({:.4})",
                wrong as f64 / accepted as f64
            );
            observed.push((class, name, wrong, accepted));
        }
    }
    let wrong = |class: &str, gate: &str| {
        observed
            .iter()
            .find(|o| o.0 == class && o.1 == gate)
            .map(|o| o.2)
            .expect("measured")
    };
    for class in ["linguistic", "hin", "pun"] {
        assert!(wrong(class, "levenshtein+polarity veto") <= wrong(class, "levenshtein d<6"));
        assert_eq!(wrong(class, "hybrid same-key"), 0);
    }
    assert_eq!(
        observed,
        vec![
            ("linguistic", "levenshtein d<6", 99712, 932264),
            ("linguistic", "normalised d<=0.25", 99712, 1051984),
            ("linguistic", "hybrid same-key", 0, 832552),
            ("linguistic", "levenshtein+polarity veto", 0, 832552),
            ("hin", "levenshtein d<6", 788964, 1724032),
            ("hin", "normalised d<=0.25", 896720, 1831788),
            ("hin", "hybrid same-key", 0, 833316),
            ("hin", "levenshtein+polarity veto", 231644, 1166712),
            ("pun", "levenshtein d<6", 231244, 1500267),
            ("pun", "normalised d<=0.25", 867683, 2136706),
            ("pun", "hybrid same-key", 0, 832400),
            ("pun", "levenshtein+polarity veto", 231244, 1393342),
        ],
        "(language, gate, wrong-type pairs, accepted pairs) changed"
    );
}
