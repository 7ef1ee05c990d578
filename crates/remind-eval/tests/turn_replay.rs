//! The experiment measures what the page sends: a harness step, replayed through the
//! page's own session with the same lessons taught the page's way, gives the same
//! request, byte for byte, and the page stores the same lessons. Both go through
//! `remind_core::turn::build_turn` and the lesson path (`Lesson::from_correction`,
//! `Lesson::from_confirmed_reply`, `plan_correction`); this pins that the
//! configurations the harness passes stay the page's.

use remind_app::correct::Correction;
use remind_app::session::{Ports, Session};
use remind_app::settings::Settings;
use remind_core::memory::FeedbackMemory;
use remind_core::memory_key::MemoryKey;
use remind_core::prompt::{PromptMode, PromptTemplate, ReplyForm};
use remind_core::record::{Reach, RecordKind, Source};
use remind_core::reply::parse_reply;
use remind_core::write_gate::Durability;
use remind_eval::arm::{ArmKind, ArmSettings, ArmState, DemoSelection, LessonRetrieval};
use remind_eval::task_stream::{RenderedTask, TaskType};
use remind_test_support::in_process_embeddings::NoEmbeddings;
use remind_test_support::scripted::{
    CountingIds, ScriptedModel, SettingsInMemory, SharedStore, TickingClock, block_on, session_over,
};

/// What a stored lesson says, without the ids and times each side draws for itself.
fn lessons(memory: &FeedbackMemory) -> Vec<(String, MemoryKey, RecordKind, Source, u32)> {
    memory
        .records()
        .iter()
        .map(|r| {
            (
                r.question.clone(),
                r.key.clone(),
                r.kind.clone(),
                r.source,
                r.version,
            )
        })
        .collect()
}

fn task(question: &str, task_type: TaskType, word: &str, clarification: &str) -> RenderedTask {
    RenderedTask {
        line: 1,
        task_type,
        template_id: "t".into(),
        word: word.into(),
        question: question.into(),
        clarification: clarification.into(),
        gold_reply: format!("{} is gold", task_type.understanding_of(word)),
        gold_understanding: task_type.understanding_of(word),
    }
}

/// The harness run with the page's settings: completion mode, the page's token budget,
/// temperature 0, every misread clarified.
fn page_like(kind: ArmKind) -> ArmState {
    ArmState::new(
        kind,
        PromptTemplate::paper_lexical(),
        ArmSettings {
            mode: PromptMode::Completion,
            budget: Settings::default().budget,
            temperature: 0.0,
            demos_k: 2,
            tau: 0.8,
            p_feedback: 1.0,
            seed: 7,
        },
    )
}

#[test]
fn a_mem_prompt_step_replays_through_the_page_to_the_same_bytes() {
    let taught = task(
        "What is like < fast > ?",
        TaskType::Synonym,
        "fast",
        "clarification: when I ask for like, I want a synonym.",
    );
    let next = task("What is like < happy > ?", TaskType::Synonym, "happy", "");
    let mut arm = page_like(ArmKind::MemPrompt(LessonRetrieval::Levenshtein));
    let judged = arm.observe(
        0,
        &taught,
        None,
        &parse_reply(ReplyForm::Restated, " the homonym for fast is fasst", true),
    );
    let feedback = judged.feedback.expect("a misread is clarified");
    let logged = arm.prepare(&next, None).unwrap();
    assert!(logged.memory.is_some(), "the harness attached the lesson");

    let store = SharedStore::default();
    let page = session_over(&store, "page").with_template(PromptTemplate::paper_lexical());
    let first = block_on(page.ask(&taught.question)).unwrap();
    block_on(page.correct(
        &first,
        Correction {
            clarification: feedback,
            durability: Durability::Lasting,
            reach: Reach::default(),
        },
    ))
    .unwrap();
    let replayed = block_on(page.ask(&next.question)).unwrap();

    assert_eq!(lessons(&page.memory()), lessons(arm.memory()));
    assert_eq!(replayed.prepared.request, logged.request);
    assert_eq!(
        replayed.prepared.request.prompt.display_text(),
        logged.request.prompt.display_text()
    );
}

#[test]
fn a_verified_step_replays_through_the_page_to_the_same_bytes() {
    let confirmed = task("What is unlike < hot > ?", TaskType::Antonym, "hot", "");
    let next = task("What is unlike < cold > ?", TaskType::Antonym, "cold", "");
    let mut arm = page_like(ArmKind::Verified(DemoSelection::Levenshtein));
    let right = parse_reply(ReplyForm::Restated, " the antonym for hot is cold", true);
    assert!(arm.observe(0, &confirmed, None, &right).understood);
    let logged = arm.prepare(&next, None).unwrap();
    assert_eq!(logged.demonstrations, ["What is unlike < hot > ?"]);

    let model = ScriptedModel::default();
    model.will_reply(" the antonym for hot is cold END");
    let page = Session::new(Ports {
        store: SharedStore::default(),
        llm: model,
        clock: TickingClock::default(),
        ids: CountingIds::new("page"),
        settings: SettingsInMemory::default(),
        embedder: NoEmbeddings,
    })
    .with_template(PromptTemplate::paper_lexical());
    let first = block_on(page.ask(&confirmed.question)).unwrap();
    block_on(page.confirm_answer(&first)).unwrap();
    let replayed = block_on(page.ask(&next.question)).unwrap();

    assert_eq!(lessons(&page.memory()), lessons(arm.memory()));
    assert_eq!(replayed.prepared.request, logged.request);
}
