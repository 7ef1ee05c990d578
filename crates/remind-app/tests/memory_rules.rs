//! The rules that keep the memory true (issue 5), checked through the session the
//! page drives and through the pure memory: one current lesson per key, corrections
//! that supersede and keep history, version checks, undo with a named outcome,
//! withdraw, forget, statistics, and the write gate.
#![cfg(not(target_arch = "wasm32"))]

use remind_test_support as support;
use remind_test_support::session_reads::SessionReads;

use remind_app::correct::{CorrectError, Correction, CorrectionOutcome};
use remind_app::ports::StoreError;
use remind_app::revise::ReviseError;
use remind_core::memory::{FeedbackMemory, Lesson, MemoryError, ScopeChange};
use remind_core::memory_key::MemoryKey;
use remind_core::memory_query::{KindFilter, MemoryFilter, StateFilter, list};
use remind_core::record::{
    ChangeReason, MemoryRecord, Reach, RecordId, RecordKind, RecordState, Timestamp,
};
use remind_core::request_pattern::RequestPattern;
use remind_core::turn::AppliedBecause;
use remind_core::withdrawal::UndoOutcome;
use remind_core::write_gate::{Durability, Refusal, StoredText};
use support::in_memory_store::InMemoryStore;
use support::scripted::{SharedStore, TestSession, block_on, session_over};

const SOUNDS_LIKE: &str = "when I ask what is like a word, I mean a word that rhymes with it";
const SYNONYM: &str = "by like I always mean a synonym of the word";

fn lasting(text: &str) -> Correction {
    Correction {
        clarification: text.into(),
        durability: Durability::Lasting,
        reach: Reach::default(),
    }
}

fn like_key() -> MemoryKey {
    MemoryKey::of_question("What is like < fast > ?")
}

/// Asks and corrects; returns the written lesson.
fn teach(session: &TestSession, question: &str, clarification: &str) -> CorrectionOutcome {
    let turn = block_on(session.ask(question)).expect("the model answers");
    block_on(session.correct(&turn, lasting(clarification))).expect("the correction is saved")
}

/// A memory where the "like" lesson was stated (the fact), then corrected after it
/// was applied to a differently worded question of the same key.
fn fact_then_correction() -> (SharedStore, TestSession) {
    let store = SharedStore::default();
    let session = session_over(&store, "tab");
    teach(&session, "What is like < fast > ?", SOUNDS_LIKE);
    teach(&session, "what is like <happy>?", SYNONYM);
    (store, session)
}

fn count_clarifications(query: &str) -> usize {
    query.matches("clarification:").count()
}

// --- The five checks of the correction test plan ---------------------------------

#[test]
fn check_1_a_fact_then_a_correction_leaves_one_current_record_and_one_replaced() {
    let (store, session) = fact_then_correction();
    let history = session.history(&like_key());
    assert_eq!(history.len(), 2);
    let states: Vec<RecordState> = history.iter().map(|r| r.state).collect();
    assert_eq!(states, [RecordState::Superseded, RecordState::Current]);
    assert_eq!(session.current_count(), 1);
    assert_eq!(session.current_records()[0].clarification(), Some(SYNONYM));
    assert_eq!(
        store.0.snapshot().len(),
        2,
        "the replaced lesson stays stored"
    );
    let replaced = &history[0];
    assert_eq!(replaced.superseded_by, Some(history[1].id.clone()));
    let note = replaced.change.expect("the replaced lesson says why");
    assert_eq!(note.reason, ChangeReason::CorrectedAfterApplied);
}

#[test]
fn check_2_a_differently_worded_correction_finds_its_target_by_key() {
    let store = SharedStore::default();
    let session = session_over(&store, "tab");
    let CorrectionOutcome::Saved(fact) = teach(&session, "What is like < fast > ?", SOUNDS_LIKE)
    else {
        panic!("the fact is stored")
    };
    let turn = block_on(session.ask("  WHAT is like <happy> ?")).unwrap();
    let [applied] = turn.prepared.applied.as_slice() else {
        panic!("the fact, and only it, is applied")
    };
    assert_eq!(applied.record.id, fact.current.id);
    let outcome = block_on(session.correct(&turn, lasting(SYNONYM))).unwrap();
    let CorrectionOutcome::Saved(written) = outcome else {
        panic!("the correction is stored")
    };
    let replaced = written.replaced.expect("the fact is the target");
    assert_eq!(replaced.id, fact.current.id);
    assert_eq!(written.current.supersedes, Some(fact.current.id));
    assert_eq!(written.current.key, like_key());
    assert_eq!(replaced.stats.times_failed_after_applied, 1);
}

#[test]
fn a_lesson_applied_because_its_scope_fits_counts_as_misfired_when_the_turn_is_corrected() {
    let store = SharedStore::default();
    let session = session_over(&store, "tab");
    let turn = block_on(session.ask("Define entropy.")).unwrap();
    let scoped = Correction {
        reach: Reach::QuestionsLike(vec![RequestPattern::parse("define ___").unwrap()]),
        ..lasting("I want a one-line definition")
    };
    block_on(session.correct(&turn, scoped)).expect("saved");
    let turn = block_on(session.ask("Define inflation.")).unwrap();
    let [applied] = turn.prepared.applied.as_slice() else {
        panic!("the scoped lesson, and only it, is applied")
    };
    assert!(matches!(applied.because, AppliedBecause::FitsScope(_)));
    let outcome = block_on(session.correct(&turn, lasting("I want an example too"))).unwrap();
    let CorrectionOutcome::Saved(written) = outcome else {
        panic!("the correction is stored")
    };
    let misfired = written
        .misfired
        .first()
        .expect("the applied lesson misfired");
    assert_eq!(misfired.id, applied.record.id);
    assert_eq!(misfired.stats.times_failed_after_applied, 1);
}

#[test]
fn check_3_a_fresh_session_serves_the_correction_for_a_specific_and_a_broad_question() {
    let (store, _first_tab) = fact_then_correction();
    let reloaded = session_over(&store, "reload");
    assert_eq!(reloaded.current_count(), 1);

    let specific = block_on(reloaded.ask("What is like < slow > ?")).unwrap();
    let broad = block_on(reloaded.ask("what's like < bright > ?")).unwrap();
    for turn in [&specific, &broad] {
        let [applied] = turn.prepared.applied.as_slice() else {
            panic!("the lesson, and only it, applies")
        };
        assert_eq!(applied.record.clarification(), Some(SYNONYM));
        assert!(
            turn.prepared
                .query
                .ends_with(&format!("clarification: {SYNONYM}"))
        );
        assert_eq!(
            turn.reply.understanding.as_deref(),
            Some(&*format!(
                "the synonym for {}",
                if std::ptr::eq(turn, &specific) {
                    "slow"
                } else {
                    "bright"
                }
            ))
        );
    }
}

#[test]
fn check_4_undo_gives_the_outcome_written_down_beforehand() {
    let (store, session) = fact_then_correction();
    let current = session.current_records().remove(0);
    let choices = session.undo_choices(&current.id);
    assert_eq!(
        choices,
        [UndoOutcome::RestorePredecessor, UndoOutcome::WithdrawBoth]
    );

    let promised = UndoOutcome::RestorePredecessor;
    let undone = block_on(session.undo(&current.id, current.version, promised)).unwrap();
    assert_eq!(undone.outcome, promised);
    let restored = undone.restored.expect("the predecessor comes back");
    assert_eq!(restored.clarification(), Some(SOUNDS_LIKE));
    assert_eq!(session.current_records(), std::slice::from_ref(&restored));
    let withdrawn = session.record(&current.id).unwrap();
    assert_eq!(withdrawn.state, RecordState::Withdrawn);
    assert_eq!(session_over(&store, "reload").current_records(), [restored]);
}

#[test]
fn check_4b_undo_that_withdraws_both_leaves_the_key_without_a_lesson() {
    let (_store, session) = fact_then_correction();
    let current = session.current_records().remove(0);
    let undone =
        block_on(session.undo(&current.id, current.version, UndoOutcome::WithdrawBoth)).unwrap();
    assert_eq!(undone.withdrawn.len(), 2);
    assert_eq!(session.current_count(), 0);
    let history = session.history(&like_key());
    assert!(history.iter().all(|r| r.state == RecordState::Withdrawn));
    let turn = block_on(session.ask("What is like < fast > ?")).unwrap();
    assert_eq!(turn.prepared.applied, Vec::new());
}

#[test]
fn check_5_the_assembled_prompt_carries_one_clarification_not_two() {
    let (_store, session) = fact_then_correction();
    let turn = block_on(session.ask("What is like < slow > ?")).unwrap();
    assert_eq!(count_clarifications(&turn.prepared.query), 1);
    assert!(!turn.prepared.query.contains(SOUNDS_LIKE));
    let prompt = turn.prepared.request.prompt.display_text();
    assert!(
        !prompt.contains(SOUNDS_LIKE),
        "the replaced lesson is not sent"
    );
    assert_eq!(prompt.matches(SYNONYM).count(), 1);
}

// --- What the page hears ---------------------------------------------------------

#[test]
fn every_memory_watcher_hears_a_saved_lesson_and_none_silences_another() {
    let session = session_over(&SharedStore::default(), "tab");
    let (page, browser) = (
        std::rc::Rc::new(std::cell::Cell::new(0)),
        std::rc::Rc::new(std::cell::Cell::new(0)),
    );
    let heard = page.clone();
    session.watch_memory(move |memory| heard.set(memory.current().count()));
    let heard = browser.clone();
    session.watch_memory(move |memory| heard.set(memory.current().count()));

    teach(&session, "What is like < fast > ?", SYNONYM);

    assert_eq!((page.get(), browser.get()), (1, 1));
}

// --- Versions, failures and the write gate ---------------------------------------

#[test]
fn an_edit_naming_a_stale_version_is_refused_with_the_current_lesson() {
    let store = SharedStore::default();
    let tab_a = session_over(&store, "a");
    teach(&tab_a, "What is like < fast > ?", SOUNDS_LIKE);
    let tab_b = session_over(&store, "b");
    let seen_by_b = tab_b.current_records().remove(0);

    let edited = block_on(tab_a.edit(&seen_by_b.id, seen_by_b.version, SYNONYM)).unwrap();
    let refused = block_on(tab_b.edit(&seen_by_b.id, seen_by_b.version, "I want an antonym"));
    match refused {
        Err(ReviseError::Memory(MemoryError::Stale { expected, current })) => {
            assert_eq!(expected, Some(seen_by_b.version));
            assert_eq!(current.as_deref(), Some(&edited.current));
        }
        other => panic!("expected a stale refusal, got {other:?}"),
    }
    assert_eq!(
        tab_b.current_records(),
        std::slice::from_ref(&edited.current),
        "b now shows the truth"
    );
    assert_eq!(
        store.0.snapshot().iter().filter(|r| r.is_current()).count(),
        1
    );
}

#[test]
fn a_correction_based_on_a_stale_view_is_refused_not_stacked() {
    let store = SharedStore::default();
    let tab_a = session_over(&store, "a");
    let tab_b = session_over(&store, "b");
    let turn_b = block_on(tab_b.ask("What is like < fast > ?")).unwrap();
    teach(&tab_a, "What is like < slow > ?", SOUNDS_LIKE);

    let refused = block_on(tab_b.correct(&turn_b, lasting(SYNONYM)));
    assert!(matches!(
        refused,
        Err(CorrectError::Revise(ReviseError::Memory(
            MemoryError::Stale {
                expected: None,
                current: Some(_)
            }
        )))
    ));
    assert_eq!(store.0.snapshot().len(), 1);
}

#[test]
fn a_failed_write_is_never_reported_saved_and_changes_nothing() {
    let (store, session) = fact_then_correction();
    let before_store = store.0.snapshot();
    let before_view = session.list(&MemoryFilter {
        state: StateFilter::Any,
        ..MemoryFilter::default()
    });
    let current = session.current_records().remove(0);

    store.0.fail_next_write(StoreError::QuotaExceeded);
    let turn = block_on(session.ask_with("What is like < fast > ?", Some("just for now"))).unwrap();
    let failed = block_on(session.correct(&turn, lasting("I want an antonym")));
    assert_eq!(
        failed,
        Err(CorrectError::Revise(ReviseError::Store(
            StoreError::QuotaExceeded
        )))
    );
    store
        .0
        .fail_next_write(StoreError::Failed("aborted".into()));
    let withdrawn = block_on(session.withdraw(&current.id, current.version));
    assert!(matches!(withdrawn, Err(ReviseError::Store(_))));
    store
        .0
        .fail_next_write(StoreError::Failed("aborted".into()));
    let edited = block_on(session.edit(&current.id, current.version, "I want an antonym"));
    assert!(matches!(edited, Err(ReviseError::Store(_))));
    store.0.fail_next_write(StoreError::QuotaExceeded);
    let undone = block_on(session.undo(&current.id, current.version, UndoOutcome::WithdrawBoth));
    assert!(matches!(undone, Err(ReviseError::Store(_))));
    store.0.fail_next_write(StoreError::QuotaExceeded);
    assert!(block_on(session.forget(&like_key())).is_err());

    assert_eq!(store.0.snapshot(), before_store);
    let after_view = session.list(&MemoryFilter {
        state: StateFilter::Any,
        ..MemoryFilter::default()
    });
    assert_eq!(after_view, before_view);
}

#[test]
fn forgetting_a_key_erases_every_record_of_it_and_nothing_else() {
    let (store, session) = fact_then_correction();
    teach(&session, "What is unlike < fast > ?", "I want an antonym");
    assert_eq!(block_on(session.forget(&like_key())), Ok(2));
    let left = store.0.snapshot();
    assert_eq!(left.len(), 1);
    assert_eq!(
        left[0].key,
        MemoryKey::of_question("What is unlike < x > ?")
    );
    assert!(session.history(&like_key()).is_empty());
    assert!(
        session_over(&store, "reload")
            .history(&like_key())
            .is_empty()
    );
}

#[test]
fn a_one_time_clarification_is_used_for_the_turn_and_never_stored() {
    let store = SharedStore::default();
    let session = session_over(&store, "tab");
    let turn = block_on(session.ask("What is like < fast > ?")).unwrap();
    let outcome = block_on(session.correct(
        &turn,
        Correction {
            clarification: "give me a synonym".into(),
            durability: Durability::JustThisOnce,
            reach: Reach::default(),
        },
    ))
    .unwrap();
    let CorrectionOutcome::ThisTurnOnly { clarification } = outcome else {
        panic!("a one-time clarification is not saved")
    };
    let again =
        block_on(session.ask_with("What is like < fast > ?", Some(&clarification))).unwrap();
    assert_eq!(count_clarifications(&again.prepared.query), 1);
    assert!(store.0.snapshot().is_empty());
    assert_eq!(session.current_count(), 0);
}

#[test]
fn a_secret_is_refused_in_a_correction_and_in_an_edit() {
    let (store, session) = fact_then_correction();
    let before = store.0.snapshot();
    let turn = block_on(session.ask("What is like < fast > ?")).unwrap();
    let refused = block_on(session.correct(&turn, lasting("my password: hunter2")));
    assert_eq!(
        refused,
        Err(CorrectError::Refused(Refusal::Secret {
            text: StoredText::Clarification,
            kind: "a password or key"
        }))
    );
    let current = session.current_records().remove(0);
    let edit = block_on(session.edit(&current.id, current.version, "use card 4111 1111 1111 1111"));
    assert_eq!(
        edit,
        Err(ReviseError::Memory(MemoryError::Refused(Refusal::Secret {
            text: StoredText::EditedLesson,
            kind: "a card number"
        })))
    );
    let after: Vec<_> = store
        .0
        .snapshot()
        .into_iter()
        .map(|r| (r.id, r.state))
        .collect();
    let before: Vec<_> = before.into_iter().map(|r| (r.id, r.state)).collect();
    assert_eq!(after, before);
}

#[test]
fn an_edit_supersedes_the_lesson_and_keeps_the_old_text_in_history() {
    let (_store, session) = fact_then_correction();
    let current = session.current_records().remove(0);
    let written =
        block_on(session.edit(&current.id, current.version, "I want a close synonym")).unwrap();
    assert_eq!(written.current.version, current.version + 1);
    assert_eq!(written.current.question, current.question);
    assert_eq!(
        written.replaced.as_ref().map(|r| r.state),
        Some(RecordState::Superseded)
    );
    assert_eq!(written.current.change.unwrap().reason, ChangeReason::Edited);
    assert_eq!(session.history(&like_key()).len(), 3);
    let unchanged = block_on(session.edit(
        &written.current.id,
        written.current.version,
        "I want a close synonym",
    ));
    assert_eq!(unchanged, Err(ReviseError::Memory(MemoryError::Unchanged)));
}

#[test]
fn withdrawing_keeps_history_and_stops_the_lesson_applying() {
    let (store, session) = fact_then_correction();
    let current = session.current_records().remove(0);
    let withdrawn = block_on(session.withdraw(&current.id, current.version)).unwrap();
    assert_eq!(withdrawn.state, RecordState::Withdrawn);
    assert_eq!(withdrawn.change.unwrap().reason, ChangeReason::Withdrawn);
    assert_eq!(session.current_count(), 0);
    assert_eq!(store.0.snapshot().len(), 2);
    let again = block_on(session.withdraw(&current.id, current.version));
    assert!(matches!(
        again,
        Err(ReviseError::Memory(MemoryError::Stale {
            current: None,
            ..
        }))
    ));
    assert_eq!(session.undo_choices(&current.id), []);
}

#[test]
fn asking_counts_applications_and_a_correction_counts_the_failure() {
    let store = SharedStore::default();
    let session = session_over(&store, "tab");
    teach(&session, "What is like < fast > ?", SOUNDS_LIKE);
    block_on(session.ask("What is like < slow > ?")).unwrap();
    let turn = block_on(session.ask("What is like < bright > ?")).unwrap();
    let before = session.current_records().remove(0);
    assert_eq!(before.stats.times_applied, 2);
    assert_eq!(
        store.0.snapshot()[0].stats.times_applied,
        2,
        "counted in the store"
    );

    block_on(session.correct(&turn, lasting(SYNONYM))).unwrap();
    let replaced = session.record(&before.id).unwrap();
    assert_eq!(replaced.stats.times_applied, 2);
    assert_eq!(replaced.stats.times_failed_after_applied, 1);
}

#[test]
fn a_lesson_that_misfires_on_a_neighbouring_key_is_counted_and_then_flagged() {
    let store = SharedStore::default();
    let session = session_over(&store, "tab");
    teach(&session, "What is like < fast > ?", SYNONYM);
    let like = session.current_records().remove(0);
    for (i, word) in ["hot", "cold"].into_iter().enumerate() {
        let turn = block_on(session.ask(&format!("What is unlike < {word} > ?"))).unwrap();
        if i == 0 {
            assert_eq!(
                turn.prepared
                    .applied
                    .iter()
                    .map(|a| &a.record.id)
                    .collect::<Vec<_>>(),
                vec![&like.id]
            );
            let CorrectionOutcome::Saved(written) =
                block_on(session.correct(&turn, lasting("I want an antonym"))).unwrap()
            else {
                panic!("saved")
            };
            assert_eq!(written.replaced, None, "the like lesson is not replaced");
            assert_eq!(
                written.misfired.iter().map(|r| &r.id).collect::<Vec<_>>(),
                vec![&like.id]
            );
        }
    }
    let like_now = session.record(&like.id).unwrap();
    assert!(like_now.is_current());
    assert_eq!(like_now.stats.times_failed_after_applied, 1);
    assert!(!like_now.is_flagged());

    // A second misfire on another neighbour flags it for review.
    let turn = block_on(session.ask("What is likely < fast > ?")).unwrap();
    assert!(turn.prepared.applied.iter().any(|a| a.record.id == like.id));
    block_on(session.correct(&turn, lasting("I want a probability"))).unwrap();
    let like_now = session.record(&like.id).unwrap();
    assert_eq!(like_now.stats.times_failed_after_applied, 2);
    assert!(like_now.is_flagged());
    assert_eq!(session.flagged_count(), 1);
    let flagged = session.list(&MemoryFilter {
        flagged_only: true,
        ..MemoryFilter::default()
    });
    assert_eq!(flagged, [like_now]);
}

#[test]
fn reload_picks_up_what_another_tab_wrote() {
    let store = SharedStore::default();
    let tab_a = session_over(&store, "a");
    let tab_b = session_over(&store, "b");
    teach(&tab_a, "What is like < fast > ?", SYNONYM);
    assert_eq!(tab_b.current_count(), 0);
    assert_eq!(block_on(tab_b.reload()), Ok(1));
    assert_eq!(tab_b.current_records(), tab_a.current_records());
}

// --- The pure memory ---------------------------------------------------------------

fn memory_with(lessons: &[(&str, &str)]) -> FeedbackMemory {
    let mut memory = FeedbackMemory::default();
    for (i, (question, clarification)) in lessons.iter().enumerate() {
        let written = memory.plan_write(
            Lesson::user_clarification(question, clarification),
            RecordId(format!("r{i}")),
            Timestamp(i as i64 + 1),
        );
        memory.apply(&written);
    }
    memory
}

#[test]
fn a_first_write_must_believe_there_is_no_lesson_yet() {
    let memory = memory_with(&[("What is like < fast > ?", SYNONYM)]);
    let planned = memory.plan_correction(
        Lesson::user_clarification("What is like < slow > ?", SOUNDS_LIKE),
        None,
        &[],
        RecordId("new".into()),
        Timestamp(9),
    );
    assert!(
        matches!(planned, Err(MemoryError::Stale { expected: None, current: Some(c) }) if c.id.0 == "r0")
    );
    let planned = memory
        .plan_correction(
            Lesson::user_clarification("What is like < slow > ?", SOUNDS_LIKE),
            Some(1),
            &[],
            RecordId("new".into()),
            Timestamp(9),
        )
        .unwrap();
    assert_eq!(planned.current.version, 2);
    assert_eq!(
        planned.replaced.unwrap().change.unwrap().reason,
        ChangeReason::Corrected
    );
}

#[test]
fn versions_are_never_reused_after_an_undo() {
    let mut memory = memory_with(&[
        ("What is like < fast > ?", SOUNDS_LIKE),
        ("What is like < slow > ?", SYNONYM),
    ]);
    let undone = memory
        .plan_undo(
            &RecordId("r1".into()),
            2,
            UndoOutcome::RestorePredecessor,
            Timestamp(5),
        )
        .unwrap();
    memory.apply_records(&undone.records());
    assert_eq!(memory.current_version(&like_key()), Some(1));
    let next = memory
        .plan_correction(
            Lesson::user_clarification("what is like <x>?", "I want an antonym"),
            Some(1),
            &[],
            RecordId("r2".into()),
            Timestamp(6),
        )
        .unwrap();
    assert_eq!(next.current.version, 3);
}

#[test]
fn restoring_is_refused_when_there_is_nothing_to_restore() {
    let memory = memory_with(&[("What is like < fast > ?", SYNONYM)]);
    let id = RecordId("r0".into());
    assert_eq!(memory.undo_choices(&id), [UndoOutcome::WithdrawBoth]);
    assert_eq!(
        memory.plan_undo(&id, 1, UndoOutcome::RestorePredecessor, Timestamp(3)),
        Err(MemoryError::NothingToRestore)
    );
    let undone = memory
        .plan_undo(&id, 1, UndoOutcome::WithdrawBoth, Timestamp(3))
        .unwrap();
    assert_eq!(undone.withdrawn.len(), 1);
}

#[test]
fn the_memory_list_searches_and_filters_without_showing_history_by_default() {
    let mut memory = memory_with(&[
        ("What is like < fast > ?", SOUNDS_LIKE),
        ("What is like < slow > ?", SYNONYM),
        ("What is unlike < fast > ?", "I want an antonym"),
    ]);
    memory.upsert(MemoryRecord {
        kind: RecordKind::VerifiedExample {
            understanding: "the capital of France".into(),
            answer: "Paris".into(),
        },
        ..memory
            .plan_write(
                Lesson::user_clarification("capital of France?", ""),
                RecordId("ex".into()),
                Timestamp(9),
            )
            .current
    });
    let ids = |filter: &MemoryFilter| -> Vec<String> {
        list(&memory, filter)
            .into_iter()
            .map(|r| r.id.0.clone())
            .collect()
    };
    assert_eq!(ids(&MemoryFilter::default()), ["ex", "r2", "r1"]);
    assert_eq!(
        ids(&MemoryFilter {
            text: "SYNONYM".into(),
            ..MemoryFilter::default()
        }),
        ["r1"]
    );
    assert_eq!(
        ids(&MemoryFilter {
            text: "paris".into(),
            ..MemoryFilter::default()
        }),
        ["ex"]
    );
    assert_eq!(
        ids(&MemoryFilter {
            kind: KindFilter::Clarification,
            ..MemoryFilter::default()
        }),
        ["r2", "r1"]
    );
    assert_eq!(
        ids(&MemoryFilter {
            state: StateFilter::Superseded,
            ..MemoryFilter::default()
        }),
        ["r0"]
    );
    assert_eq!(
        ids(&MemoryFilter {
            state: StateFilter::Any,
            text: "rhymes".into(),
            ..MemoryFilter::default()
        }),
        ["r0"]
    );
}

#[test]
fn the_in_memory_store_commits_puts_and_erases_together() {
    let store = InMemoryStore::default();
    let memory = memory_with(&[
        ("What is like < fast > ?", SYNONYM),
        ("What is unlike < x > ?", "antonym"),
    ]);
    block_on(remind_app::ports::MemoryStore::write(
        &store,
        &memory.to_records(),
    ))
    .unwrap();
    store.fail_next_write(StoreError::QuotaExceeded);
    assert!(
        block_on(remind_app::ports::MemoryStore::commit(
            &store,
            &[],
            &[RecordId("r0".into())]
        ))
        .is_err()
    );
    assert_eq!(store.snapshot().len(), 2);
    block_on(remind_app::ports::MemoryStore::commit(
        &store,
        &[],
        &[RecordId("r0".into())],
    ))
    .unwrap();
    assert_eq!(store.snapshot().len(), 1);
}

#[test]
fn not_relevant_here_keeps_a_lesson_off_that_kind_of_question_across_reloads_until_undone() {
    let store = SharedStore::default();
    let session = session_over(&store, "tab");
    teach(&session, "What is like < fast > ?", SYNONYM);
    let turn = block_on(session.ask("What is unlike < hot > ?")).unwrap();
    let [applied] = turn.prepared.applied.as_slice() else {
        panic!("the like lesson is applied to its neighbour by wording")
    };
    let written = block_on(session.change_scope(
        &applied.record.id,
        applied.record.version,
        &turn.prepared.question,
        ScopeChange::NotRelevantHere,
    ))
    .expect("the mark is saved");
    assert_eq!(written.current.kind.not_for(), ["What is unlike < hot > ?"]);

    let reloaded = session_over(&store, "reload");
    let same_kind = block_on(reloaded.ask("What is unlike < cold > ?")).unwrap();
    assert!(same_kind.prepared.applied.is_empty());
    let own_kind = block_on(reloaded.ask("What is like < slow > ?")).unwrap();
    assert_eq!(
        own_kind
            .prepared
            .applied
            .iter()
            .map(|a| &a.record.id)
            .collect::<Vec<_>>(),
        vec![&written.current.id]
    );

    // A second mark on the same kind of question is refused, and writes nothing.
    let twice = block_on(reloaded.change_scope(
        &written.current.id,
        written.current.version,
        "What is unlike < cold > ?",
        ScopeChange::NotRelevantHere,
    ));
    assert!(matches!(
        twice,
        Err(ReviseError::Memory(MemoryError::AlreadyNotRelevant))
    ));
    assert_eq!(reloaded.history(&like_key()).len(), 2);

    block_on(reloaded.undo(
        &written.current.id,
        written.current.version,
        UndoOutcome::RestorePredecessor,
    ))
    .expect("undo restores the lesson without the mark");
    let again = block_on(reloaded.ask("What is unlike < cold > ?")).unwrap();
    assert_eq!(again.prepared.applied.len(), 1);
}

#[test]
fn a_not_relevant_mark_is_taken_back_in_the_memory_browser() {
    let store = SharedStore::default();
    let session = session_over(&store, "tab");
    teach(&session, "What is like < fast > ?", SYNONYM);
    let lesson = session.current_records().remove(0);
    let marked = block_on(session.change_scope(
        &lesson.id,
        lesson.version,
        "What is unlike < hot > ?",
        ScopeChange::NotRelevantHere,
    ))
    .unwrap();
    let back = block_on(session.change_scope(
        &marked.current.id,
        marked.current.version,
        "What is unlike < hot > ?",
        ScopeChange::RelevantAgain,
    ))
    .unwrap();
    assert!(back.current.kind.not_for().is_empty());
    let turn = block_on(session.ask("What is unlike < cold > ?")).unwrap();
    assert_eq!(turn.prepared.applied.len(), 1);
}

#[test]
fn a_scope_set_in_the_memory_browser_reaches_new_questions_survives_a_reload_and_refuses_a_stale_tab()
 {
    let store = SharedStore::default();
    let session = session_over(&store, "tab");
    let other_tab = session_over(&store, "other");
    teach(&session, "Define entropy", SYNONYM);
    let lesson = session.current_records().remove(0);
    let define = RequestPattern::parse("define ___").unwrap();
    let written = block_on(session.change_reach(
        &lesson.id,
        lesson.version,
        Reach::QuestionsLike(vec![define.clone()]),
    ))
    .expect("the scope is saved");
    assert_eq!(
        written.current.kind.patterns(),
        std::slice::from_ref(&define)
    );

    // The other tab still shows the old version: its save is refused, not written.
    let stale = block_on(other_tab.change_reach(&lesson.id, lesson.version, Reach::EveryQuestion));
    assert!(
        matches!(&stale, Err(ReviseError::Memory(MemoryError::Stale { .. }))),
        "{stale:?}"
    );

    let reloaded = session_over(&store, "reload");
    let turn = block_on(reloaded.ask("Define inflation")).unwrap();
    let [applied] = turn.prepared.applied.as_slice() else {
        panic!("the lesson goes with a question that fits its new scope")
    };
    assert_eq!(applied.because, AppliedBecause::FitsScope(define));
    assert_eq!(
        reloaded
            .history(&MemoryKey::of_question("Define entropy"))
            .len(),
        2
    );
}
