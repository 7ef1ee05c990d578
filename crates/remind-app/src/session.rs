//! One user's session: the memory as loaded, the settings, and the ports, behind the
//! operations the page offers.
//!
//! The in-memory view changes only after the store confirmed a write (or after a read
//! of the store), so what the page shows is always what a reload would show.
//!
//! Every method that changes the memory reads the store first and plans against what
//! it holds, so a lesson changed in another tab is refused as stale, never overwritten.
//! When another tab broadcasts a change, the page calls [`Session::reload`].

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::sync::Arc;

use crate::ask::{self, AskError, Turn};
use crate::confirm::{self, Confirmed, ExampleError};
use crate::conversation::SavedTurn;
use crate::correct::{self, CorrectError, Correction, CorrectionOutcome};
use crate::ports::{
    Clock, Completion, EmbedError, EmbedderStatus, EmbeddingService, Ending, IdSource,
    LanguageModel, MemoryStore, ReplyStream, SettingsStore, StoreError,
};
use crate::question_embedding::{self, LessonsAlong, LessonsEmbedded, embed_question};
use crate::reflect::{self, ReflectError};
use crate::revise::{self, Adoption, RecordsRevision, ReviseError};
use crate::settings::{SaveSettingsError, Settings};
use crate::transfer::{self, PendingImport, TransferError};
use crate::watched::Watched;
use remind_core::export::Embeddings;
use remind_core::import::CheckProgress;
use remind_core::import_plan::{ImportMode, ImportPlan};
use remind_core::learning_curve::{
    LearningCurve, QUESTIONS_PER_BUCKET, TurnEvent, TurnEventKind, TurnId, learning_curve,
};
use remind_core::memory::{FeedbackMemory, PlannedWrite, ScopeChange};
use remind_core::memory_key::MemoryKey;
use remind_core::prompt::PromptTemplate;
use remind_core::record::{MemoryRecord, Reach, RecordId};
use remind_core::reflection::{self, AcceptPreview, RuleProposal};
use remind_core::retrieval::embedding_refresh::keys_to_embed;
use remind_core::retrieval::{HybridRetriever, LevenshteinRetriever, Retriever};
use remind_core::stored_rows::UnreadableRecord;
use remind_core::turn::{
    ExampleSelection, LessonMatching, PreparedTurn, TurnError, TurnInput, build_turn,
};
use remind_core::verified_examples::ExampleBudget;
use remind_core::withdrawal::{UndoOutcome, Undone};

/// The platform pieces a session runs on.
pub struct Ports<S, L, C, I, P, E> {
    pub store: S,
    pub llm: L,
    pub clock: C,
    pub ids: I,
    pub settings: P,
    /// Sentence embeddings for semantic retrieval; `NoEmbeddings` for wording only.
    pub embedder: E,
}

/// How the page asks a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AskMode<'a> {
    /// With the stored lessons and verified examples that fit it.
    WithMemory,
    /// Again, with the user's clarification for this turn in place of the stored
    /// lessons (standing preferences stay); not a new point on the learning curve.
    WithClarificationForThisTurn(&'a str),
    /// A temporary conversation: no lesson or example is read, and nothing is written
    /// (no count, no turn log); the question goes to the model as asked.
    Temporary,
}

/// Whether a turn reads the memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum MemoryUse<'a> {
    /// Lessons and examples as the settings choose, or a one-time clarification in
    /// place of the stored lessons.
    Read {
        one_time_clarification: Option<&'a str>,
    },
    /// A temporary conversation: the question as asked.
    None,
}

impl MemoryUse<'static> {
    /// The memory as the settings choose, no one-time clarification: a plain ask.
    const WITH_MEMORY: Self = MemoryUse::Read {
        one_time_clarification: None,
    };
}

pub struct Session<S, L, C, I, P, E> {
    ports: Ports<S, L, C, I, P, E>,
    /// The one owner of the memory as loaded: the page watches it (invariant 10)
    /// rather than keeping a copy of its own.
    memory: Watched<FeedbackMemory>,
    /// Rows the store holds that this Remind cannot read: kept, shown, never written.
    unreadable: Watched<Vec<UnreadableRecord>>,
    settings: RefCell<Settings>,
    template: PromptTemplate,
    example_budget: ExampleBudget,
    /// Loads whose records are shown but whose embeddings are still being read: until
    /// they are in, no lesson is embedded afresh, since most of those waiting only wait
    /// for the read.
    loads_reading_embeddings: Cell<usize>,
    /// The turn built for the question being typed ([`Session::prepare_question`]),
    /// taken by the ask that follows when nothing it was built from has changed.
    turn_ahead: RefCell<Option<TurnAhead>>,
}

/// A turn built before it was asked, with everything it was built from: `build_turn`
/// is a function of these alone, so an ask with the same ones would build the same
/// turn. With ten thousand lessons that is milliseconds of comparing vectors, spent
/// while the person pauses typing rather than after they ask.
struct TurnAhead {
    question: String,
    memory: Arc<FeedbackMemory>,
    settings: Settings,
    embedding: Option<Vec<f32>>,
    prepared: PreparedTurn,
    /// The ready model no lesson of `memory` lacked an embedding from, if one was:
    /// the ask then need not look through every lesson again for those to embed with
    /// the question.
    nothing_waiting_for: Option<String>,
}

impl<S, L, C, I, P, E> Session<S, L, C, I, P, E>
where
    S: MemoryStore,
    L: LanguageModel,
    C: Clock,
    I: IdSource,
    P: SettingsStore,
    E: EmbeddingService,
{
    /// A session with the general prompt. Questions are matched semantically (the
    /// hybrid retriever) while the embedder is ready, and by wording (the paper's
    /// Levenshtein retriever) otherwise.
    pub fn new(ports: Ports<S, L, C, I, P, E>) -> Self {
        let settings = ports.settings.load().unwrap_or_default();
        Session {
            ports,
            memory: Watched::default(),
            unreadable: Watched::default(),
            settings: RefCell::new(settings),
            template: PromptTemplate::general(),
            example_budget: ExampleBudget::default(),
            loads_reading_embeddings: Cell::new(0),
            turn_ahead: RefCell::new(None),
        }
    }

    pub fn with_template(mut self, template: PromptTemplate) -> Self {
        self.template = template;
        self
    }

    /// How many verified examples a prompt may carry (default: 2, similar ones only).
    pub fn with_example_budget(mut self, budget: ExampleBudget) -> Self {
        self.example_budget = budget;
        self
    }

    /// Reads every stored record; returns how many lessons are current. Rows that
    /// cannot be read are set aside (see [`Session::unreadable`]), never a reason to
    /// show no memory at all.
    ///
    /// A store that keeps embeddings apart is read in two steps: the records first,
    /// taken on (and so shown) at once, then their embeddings, attached in a second
    /// snapshot. A question asked between the two matches by wording the lessons whose
    /// embedding is not in yet; none is embedded afresh meanwhile.
    pub async fn load(&self) -> Result<usize, StoreError> {
        let stored = self.ports.store.load_all_but_embeddings().await;
        // The model loads once the memory is shown (or could not be read), not while it
        // is read: the two compete for the same cores.
        self.ports.embedder.begin();
        let stored = stored?;
        self.memory
            .replace(FeedbackMemory::from_records(stored.records));
        self.unreadable.replace(stored.unreadable);
        self.loads_reading_embeddings
            .set(self.loads_reading_embeddings.get() + 1);
        let embeddings = self.ports.store.load_embeddings().await;
        self.loads_reading_embeddings
            .set(self.loads_reading_embeddings.get() - 1);
        let embeddings = embeddings?;
        if !embeddings.is_empty() {
            let mut memory = FeedbackMemory::clone(&self.memory.get());
            memory.attach_embeddings(embeddings);
            self.memory.replace(memory);
        }
        Ok(self.memory.with(|memory| memory.current().count()))
    }

    /// Whether a load has shown records whose embeddings it is still reading.
    fn reading_embeddings(&self) -> bool {
        self.loads_reading_embeddings.get() > 0
    }

    /// The stored rows the last load could not read, with their raw text.
    pub fn unreadable(&self) -> Arc<Vec<UnreadableRecord>> {
        self.unreadable.get()
    }

    /// Calls `watcher` with the unreadable rows after every load. Watchers add up: one
    /// never replaces another.
    pub fn watch_unreadable(&self, watcher: impl Fn(Arc<Vec<UnreadableRecord>>) + 'static) {
        self.unreadable.watch(watcher);
    }

    /// Deletes unreadable rows for good (named by [`UnreadableRecord::key`]), then
    /// re-reads the store; returns how many lessons are current.
    pub async fn erase_unreadable(&self, keys: &[String]) -> Result<usize, StoreError> {
        self.ports.store.erase_unreadable(keys).await?;
        self.load().await
    }

    /// The memory as the session holds it now: a snapshot that later changes do not
    /// alter. Cheap (an `Arc` clone).
    pub fn memory(&self) -> Arc<FeedbackMemory> {
        self.memory.get()
    }

    /// Calls `watcher` with every new snapshot the session takes on (after a load, a
    /// committed change, or a refusal that re-read the store). The page watches once
    /// and keeps it in one signal, so nothing shown has to be refreshed by hand.
    /// Watchers add up: one never replaces another.
    pub fn watch_memory(&self, watcher: impl Fn(Arc<FeedbackMemory>) + 'static) {
        self.memory.watch(watcher);
    }

    /// Asks the browser to keep the memory under storage pressure; says whether it
    /// will (browsers may decline, e.g. for a site never bookmarked or installed).
    pub async fn request_persistence(&self) -> Result<bool, StoreError> {
        self.ports.store.request_persistence().await
    }

    /// Re-reads the store, e.g. after another tab broadcast that it changed the
    /// memory. The view is kept as it was if the read fails.
    pub async fn reload(&self) -> Result<usize, StoreError> {
        self.load().await
    }

    /// Replaces a current lesson's text. `expected` is the version the user was shown
    /// (`record.version`); a stale one is refused with the current lesson in the error.
    pub async fn edit(
        &self,
        id: &RecordId,
        expected: u32,
        clarification: &str,
    ) -> Result<PlannedWrite, ReviseError> {
        let (new_id, now) = (self.ports.ids.next_id(), self.ports.clock.now());
        let revision =
            revise::edit(&self.ports.store, id, expected, clarification, new_id, now).await;
        self.adopt_store_memory(revision.memory, revision.outcome)
    }

    /// "Not relevant here" under a turn (the applied lesson `id` at the version the turn
    /// carried is kept off questions of `question`'s kind), or taking such a mark back
    /// in the memory browser.
    pub async fn change_scope(
        &self,
        id: &RecordId,
        expected: u32,
        question: &str,
        change: ScopeChange,
    ) -> Result<PlannedWrite, ReviseError> {
        let (new_id, now) = (self.ports.ids.next_id(), self.ports.clock.now());
        let revision = revise::change_scope(
            &self.ports.store,
            id,
            expected,
            question,
            change,
            new_id,
            now,
        )
        .await;
        self.adopt_store_memory(revision.memory, revision.outcome)
    }

    /// Sets where a current clarification applies, from the memory browser's scope
    /// editor: a new version goes with the questions of `reach`, the old one stays in
    /// history for undo. `expected` is the version the user was shown.
    pub async fn change_reach(
        &self,
        id: &RecordId,
        expected: u32,
        reach: Reach,
    ) -> Result<PlannedWrite, ReviseError> {
        let (new_id, now) = (self.ports.ids.next_id(), self.ports.clock.now());
        let revision =
            revise::change_reach(&self.ports.store, id, expected, reach, new_id, now).await;
        self.adopt_store_memory(revision.memory, revision.outcome)
    }

    /// Withdraws a current lesson: it stops applying and stays in history.
    pub async fn withdraw(
        &self,
        id: &RecordId,
        expected: u32,
    ) -> Result<MemoryRecord, ReviseError> {
        let now = self.ports.clock.now();
        let revision = revise::withdraw(&self.ports.store, id, expected, now).await;
        self.adopt_store_memory(revision.memory, revision.outcome)
    }

    /// Undoes a current lesson with an outcome its undo choices offer
    /// (`FeedbackMemory::undo_choices` on [`Session::memory`]).
    pub async fn undo(
        &self,
        id: &RecordId,
        expected: u32,
        outcome: UndoOutcome,
    ) -> Result<Undone, ReviseError> {
        let now = self.ports.clock.now();
        let revision = revise::undo(&self.ports.store, id, expected, outcome, now).await;
        self.adopt_store_memory(revision.memory, revision.outcome)
    }

    /// Erases every record of a key for good; returns how many records were erased.
    pub async fn forget(&self, key: &MemoryKey) -> Result<usize, ReviseError> {
        let revision = revise::forget(&self.ports.store, key).await;
        self.adopt_store_memory(revision.memory, revision.outcome)
            .map(|ids| ids.len())
    }

    /// The stored memory as the text of an export file (history included, settings
    /// and API key never). The page offers it as a download.
    pub async fn export_json(&self, embeddings: Embeddings) -> Result<String, TransferError> {
        transfer::export_json(&self.ports.store, self.ports.clock.now(), embeddings).await
    }

    /// Validates an import file and previews it; nothing is written yet. Show
    /// `pending.preview`, then call [`Session::apply_import_paced`] with the chosen
    /// mode. `pause` is awaited between slices of records with how far the check has
    /// come: the page yields to the browser there and shows the progress, so a large
    /// file never freezes it.
    pub async fn preview_import_paced<Paused: Future<Output = ()>>(
        &self,
        bytes: &[u8],
        pause: impl FnMut(CheckProgress) -> Paused,
    ) -> Result<PendingImport, TransferError> {
        transfer::preview_import(&self.ports.store, bytes, pause).await
    }

    /// Applies a previewed import in one store call; refused with
    /// [`ReviseError::ChangedSincePreview`] if the memory changed since the preview.
    /// `pause` is awaited between the steps of planning it: the page yields to the
    /// browser there, so a large import never freezes it.
    pub async fn apply_import_paced<Paused: Future<Output = ()>>(
        &self,
        pending: &PendingImport,
        mode: ImportMode,
        pause: impl FnMut() -> Paused,
    ) -> Result<ImportPlan, ReviseError> {
        let revision = transfer::apply_import(&self.ports.store, pending, mode, pause).await;
        self.adopt_store_memory(revision.memory, revision.outcome)
    }

    /// Ends a use-case that read the store: the view becomes the memory the store
    /// holds now whenever the use-case read it (after a commit, or after a refusal that
    /// re-read the store), and the use-case's outcome is passed on. Every change to the
    /// memory ends here, so what the page shows is what a reload would show.
    fn adopt_store_memory<T, Er>(
        &self,
        memory: Option<FeedbackMemory>,
        outcome: Result<T, Er>,
    ) -> Result<T, Er> {
        if let Some(memory) = memory {
            self.memory.replace(memory);
        }
        outcome
    }

    /// Ends a use-case that changed a few records ([`revise::revise_records`]): the
    /// view takes on the records the store committed, or, when another tab had changed
    /// one of them, the memory a full read finds; either way what a reload would show.
    async fn adopt_store_records<T>(&self, revision: RecordsRevision<T>) -> Result<T, ReviseError> {
        match revision.adopted_by(&self.memory.get()) {
            Adoption::Unchanged => {}
            Adoption::Updated(memory) => self.memory.replace(memory),
            // The view is kept as it was if this read fails; the next load mends it.
            Adoption::ReadAgain => drop(self.load().await),
        }
        revision.outcome
    }

    pub fn settings(&self) -> Settings {
        self.settings.borrow().clone()
    }

    /// Validates and stores the settings; nothing changes when they are refused.
    pub fn save_settings(&self, settings: Settings) -> Result<(), SaveSettingsError> {
        settings.validate().map_err(SaveSettingsError::Invalid)?;
        self.ports.settings.save(&settings)?;
        *self.settings.borrow_mut() = settings;
        Ok(())
    }

    /// Asks the model, with the best-fitting stored lesson attached.
    pub async fn ask(&self, question: &str) -> Result<Turn, AskError> {
        self.ask_shown(question, AskMode::WithMemory, &ReplyStream::unshown())
            .await
    }

    /// Asks again with a one-time clarification in place of any stored lesson.
    pub async fn ask_with(
        &self,
        question: &str,
        one_time_clarification: Option<&str>,
    ) -> Result<Turn, AskError> {
        let mode = match one_time_clarification {
            Some(clarification) => AskMode::WithClarificationForThisTurn(clarification),
            None => AskMode::WithMemory,
        };
        self.ask_shown(question, mode, &ReplyStream::unshown())
            .await
    }

    /// A temporary conversation's turn (see [`AskMode::Temporary`]).
    pub async fn ask_temporarily(&self, question: &str) -> Result<Turn, AskError> {
        self.ask_shown(question, AskMode::Temporary, &ReplyStream::unshown())
            .await
    }

    /// Asks `question` as `mode` says, showing the reply through `reply` as it is
    /// generated; the user's stop on `reply` ends it with what had arrived
    /// ([`crate::ports::Ending::StoppedByUser`]). Then notes the turn
    /// ([`Session::note_answered`]).
    pub async fn ask_shown(
        &self,
        question: &str,
        mode: AskMode<'_>,
        reply: &ReplyStream<'_>,
    ) -> Result<Turn, AskError> {
        let turn = self.answer_shown(question, mode, reply).await?;
        self.note_answered(&turn, mode).await;
        Ok(turn)
    }

    /// [`Session::ask_shown`] up to the reply, without noting the turn: a page shows
    /// the answer first and notes it after ([`Session::note_answered`]), so the answer
    /// does not wait for two IndexedDB writes that only keep statistics.
    pub async fn answer_shown(
        &self,
        question: &str,
        mode: AskMode<'_>,
        reply: &ReplyStream<'_>,
    ) -> Result<Turn, AskError> {
        let memory_use = match mode {
            AskMode::WithMemory => MemoryUse::Read {
                one_time_clarification: None,
            },
            AskMode::WithClarificationForThisTurn(clarification) => MemoryUse::Read {
                one_time_clarification: Some(clarification),
            },
            AskMode::Temporary => MemoryUse::None,
        };
        let (prepared, id) = self.prepare(question, memory_use).await?;
        ask::send(&self.ports.llm, &self.settings(), prepared, id, reply).await
    }

    /// Keeps the statistics of an answered turn: the learning curve's event (a question
    /// asked with memory), then a use of each lesson applied. Bookkeeping only: a failed
    /// write loses one statistic, never a lesson, so nothing here can fail the turn. A
    /// temporary turn keeps nothing.
    pub async fn note_answered(&self, turn: &Turn, mode: AskMode<'_>) {
        if mode == AskMode::Temporary {
            return;
        }
        // A retry with a one-time clarification is the same question again, not a new
        // point on the learning curve. Logged first: a correction the user makes next
        // is logged after it.
        if mode == AskMode::WithMemory {
            let examples_used = u32::try_from(turn.prepared.examples.len()).unwrap_or(u32::MAX);
            let asked = TurnEventKind::Asked {
                lesson_applied: !turn.prepared.applied.is_empty(),
                examples_used,
            };
            self.log_turn(&turn.id, asked).await;
        }
        let applied: Vec<RecordId> = turn
            .prepared
            .applied
            .iter()
            .map(|a| a.record.id.clone())
            .collect();
        if !applied.is_empty() {
            let revision = revise::count_applied(&self.ports.store, &applied).await;
            let _ = self.adopt_store_records(revision).await;
        }
    }

    /// A turn kept from an earlier visit, made whole again so it can be corrected or
    /// confirmed: its question is prepared against the memory as it is now (a lesson
    /// it had may since have been replaced) and paired with the reply it got then.
    /// Nothing is sent and nothing is written.
    pub async fn resume_turn(&self, saved: &SavedTurn) -> Result<Turn, AskError> {
        let memory_use = MemoryUse::Read {
            one_time_clarification: saved.one_time.as_deref(),
        };
        let (prepared, _) = self.prepare(&saved.question, memory_use).await?;
        Ok(Turn {
            id: saved.id.clone(),
            prepared,
            completion: Completion {
                text: saved.completion.clone(),
                ending: if saved.stopped_by_user {
                    Ending::StoppedByUser
                } else {
                    Ending::Finished
                },
            },
            reply: saved.reply.clone(),
        })
    }

    /// The turn as it would be sent now, and a fresh id for it: the one built while
    /// the question was typed when nothing it was built from has changed since.
    async fn prepare(
        &self,
        question: &str,
        memory_use: MemoryUse<'_>,
    ) -> Result<(PreparedTurn, TurnId), AskError> {
        let settings = self.settings();
        let embedding = match memory_use {
            MemoryUse::Read { .. } => self.question_embedding(question).await,
            MemoryUse::None => None,
        };
        let memory = self.memory.get();
        let ahead = self.turn_ahead.take().filter(|ahead| {
            memory_use == MemoryUse::WITH_MEMORY
                && ahead.question == question
                && Arc::ptr_eq(&ahead.memory, &memory)
                && ahead.settings == settings
                && ahead.embedding == embedding
        });
        let prepared = match ahead {
            Some(ahead) => ahead.prepared,
            None => self.build(
                question,
                &memory,
                &settings,
                embedding.as_deref(),
                memory_use,
            )?,
        };
        Ok((prepared, TurnId(self.ports.ids.next_id().0)))
    }

    /// `build_turn` with the page's configuration: the hybrid retriever while the
    /// embedder is ready (`embedding` is the question's), by wording otherwise.
    fn build(
        &self,
        question: &str,
        memory: &FeedbackMemory,
        settings: &Settings,
        embedding: Option<&[f32]>,
        memory_use: MemoryUse<'_>,
    ) -> Result<PreparedTurn, TurnError> {
        let retriever: Box<dyn Retriever> = match embedding {
            Some(_) => Box::new(HybridRetriever {
                tau: settings.semantic_tau,
            }),
            None => Box::new(LevenshteinRetriever::default()),
        };
        let mut config = ask::page_turn_config(
            settings,
            &self.template,
            retriever.as_ref(),
            self.example_budget,
        );
        let one_time_clarification = match memory_use {
            MemoryUse::Read {
                one_time_clarification,
            } => one_time_clarification,
            MemoryUse::None => {
                config.lessons = LessonMatching::Off;
                config.examples = ExampleSelection::None;
                None
            }
        };
        let input = TurnInput {
            question,
            question_embedding: embedding,
            one_time_clarification,
        };
        build_turn(memory, &config, &input)
    }

    /// Where the embedding model stands (the page shows it beside the ask form).
    pub fn embedder_status(&self) -> EmbedderStatus {
        self.ports.embedder.status()
    }

    /// Gets a question ready while it is being typed, so that asking it waits for
    /// neither the model nor the memory: embeds it (the page's embedder remembers the
    /// last few it embedded, [`crate::remembered_embeddings::RememberedEmbeddings`]),
    /// then builds its turn against the memory as it is, for the ask to take if the
    /// memory, the settings and the embedding are still the same then. Nothing is
    /// stored and nothing is sent.
    pub async fn prepare_question(&self, question: &str) {
        let embedding = question_embedding::prepare_question(&self.ports.embedder, question).await;
        let (memory, settings) = (self.memory.get(), self.settings());
        let nothing_waiting_for = match self.ports.embedder.status() {
            EmbedderStatus::Ready { model_id, .. }
                if keys_to_embed(&memory, &model_id).next().is_none() =>
            {
                Some(model_id)
            }
            _ => None,
        };
        let built = self.build(
            question,
            &memory,
            &settings,
            embedding.as_deref(),
            MemoryUse::WITH_MEMORY,
        );
        // A question the ask would refuse (empty) is refused again then.
        *self.turn_ahead.borrow_mut() = built.ok().map(|prepared| TurnAhead {
            question: question.to_string(),
            memory,
            settings,
            embedding,
            prepared,
            nothing_waiting_for,
        });
    }

    /// The question's embedding when the model is ready, embedding stored lessons that
    /// lack one on the way. `None` (match by wording) when it is not ready or failed on
    /// this question: a turn never fails for want of an embedding.
    async fn question_embedding(&self, question: &str) -> Option<Vec<f32>> {
        let view = self.memory();
        let lessons = if self.reading_embeddings() || self.nothing_waiting_in(&view) {
            LessonsAlong::QuestionOnly
        } else {
            LessonsAlong::FewWaiting
        };
        let (revision, embedding) = embed_question(
            &self.ports.store,
            &self.ports.embedder,
            &view,
            question,
            lessons,
        )
        .await;
        if let Some(revision) = revision {
            // Stored embeddings are a cache: a failed write costs a recomputation later.
            let _ = self.adopt_store_records(revision).await;
        }
        embedding.ok().flatten()
    }

    /// Whether the turn built while typing found no lesson of `view` waiting for an
    /// embedding from the model ready now.
    fn nothing_waiting_in(&self, view: &Arc<FeedbackMemory>) -> bool {
        let EmbedderStatus::Ready { model_id, .. } = self.ports.embedder.status() else {
            return false;
        };
        self.turn_ahead.borrow().as_ref().is_some_and(|ahead| {
            Arc::ptr_eq(&ahead.memory, view)
                && ahead.nothing_waiting_for.as_deref() == Some(model_id.as_str())
        })
    }

    /// Embeds up to `at_most` of the lessons still waiting for an embedding from the
    /// ready model (after an import or a model change), stores them once
    /// `free_to_store` resolves, and says how many still wait. The page calls it in the
    /// background until none do; meanwhile those lessons are matched by wording, so no
    /// question waits for them. The page holds the storing while a question is asked:
    /// reading and rewriting the lessons' blocks and showing the new snapshot take the
    /// main thread for milliseconds the question's reply would otherwise wait.
    pub async fn embed_waiting_lessons(
        &self,
        at_most: usize,
        free_to_store: impl Future<Output = ()>,
    ) -> Result<LessonsEmbedded, EmbedError> {
        if self.reading_embeddings() {
            // The load's second snapshot, with the embeddings read, calls for this again.
            return Ok(LessonsEmbedded::NONE);
        }
        let view = self.memory();
        let (revision, progress) = question_embedding::embed_waiting_lessons(
            &self.ports.store,
            &self.ports.embedder,
            &view,
            at_most,
            free_to_store,
        )
        .await;
        if let Some(revision) = revision {
            let _ = self.adopt_store_records(revision).await;
        }
        progress
    }

    /// Appends to the turn log. Bookkeeping only: a lost event costs one point of the
    /// learning curve, never a lesson, so it never fails the operation it records.
    async fn log_turn(&self, turn: &TurnId, kind: TurnEventKind) {
        let event = TurnEvent {
            turn: turn.clone(),
            at: self.ports.clock.now(),
            kind,
        };
        let _ = self.ports.store.append_turn_event(&event).await;
    }

    /// Stores the user's clarification for a turn (or keeps it for this turn only).
    pub async fn correct(
        &self,
        turn: &Turn,
        correction: Correction,
    ) -> Result<CorrectionOutcome, CorrectError> {
        let view = self.memory();
        let (memory, outcome) = correct::save_correction(
            &self.ports.store,
            &view,
            &self.ports.clock,
            &self.ports.ids,
            turn,
            correction,
        )
        .await;
        let outcome = self.adopt_store_memory(memory, outcome);
        if outcome.is_ok() {
            self.log_turn(&turn.id, TurnEventKind::Corrected).await;
        }
        outcome
    }

    // --- Reflection: a general rule from the user's correction ---------------------

    /// Asks the model to turn the user's words about a misread turn into one general
    /// rule. Writes nothing: show the proposal with [`Session::preview_accept`], then
    /// call [`Session::accept_rule`] only if the user accepts (or edits) it. A reply
    /// with no usable rule is [`ReflectError::NoProposal`]; offer the user's own words.
    pub async fn propose_rule(
        &self,
        turn: &Turn,
        user_words: &str,
    ) -> Result<RuleProposal, ReflectError> {
        if user_words.trim().is_empty() {
            return Err(ReflectError::EmptyWords);
        }
        // The user said the understanding was wrong, whatever the model proposes.
        self.log_turn(&turn.id, TurnEventKind::Corrected).await;
        reflect::propose_rule(&self.ports.llm, &self.settings(), turn, user_words).await
    }

    /// What accepting `proposal` (with `edited` text, if any) would do, from the page's
    /// view: the text to store, the current lesson it replaces ("this replaces: …"),
    /// the version to pass to [`Session::accept_rule`], and a refusal the gate would
    /// give (e.g. a secret). Pure; writes nothing.
    pub fn preview_accept(&self, proposal: &RuleProposal, edited: Option<&str>) -> AcceptPreview {
        reflection::preview_accept(&self.memory.get(), proposal, edited)
    }

    /// Stores the accepted rule (`edited_text` if the user changed it) as the lesson
    /// of the proposal's question, superseding the current one. `expected_version` is
    /// `preview.expected_version`; if the lesson changed since, the write is refused
    /// with the current lesson. Rejecting a proposal is simply not calling this.
    pub async fn accept_rule(
        &self,
        proposal: &RuleProposal,
        edited_text: Option<String>,
        expected_version: Option<u32>,
    ) -> Result<PlannedWrite, ReflectError> {
        let (memory, outcome) = reflect::accept_rule(
            &self.ports.store,
            &self.ports.clock,
            &self.ports.ids,
            proposal,
            edited_text.as_deref(),
            expected_version,
        )
        .await;
        self.adopt_store_memory(memory, outcome)
    }

    // --- Verified examples ---------------------------------------------------------

    /// Keeps a turn the user confirmed as right as a verified example: similar
    /// questions later get it as a demonstration (see `turn.prepared.examples`). An
    /// earlier example of the same request is superseded; its clarification is not.
    pub async fn confirm_answer(&self, turn: &Turn) -> Result<Confirmed, ExampleError> {
        let view = self.memory();
        let (memory, outcome) = confirm::confirm_answer(
            &self.ports.store,
            &view,
            &self.ports.clock,
            &self.ports.ids,
            turn,
        )
        .await;
        let outcome = self.adopt_store_memory(memory, outcome);
        if outcome.is_ok() {
            self.log_turn(&turn.id, TurnEventKind::Confirmed).await;
        }
        outcome
    }

    /// Withdraws a verified example (`expected`: the version shown); it stops being
    /// used and stays in history. Refuses a clarification ([`ExampleError::NotAnExample`]).
    pub async fn remove_example(
        &self,
        id: &RecordId,
        expected: u32,
    ) -> Result<MemoryRecord, ExampleError> {
        let view = self.memory();
        let now = self.ports.clock.now();
        let (memory, outcome) =
            confirm::remove_example(&self.ports.store, &view, id, expected, now).await;
        self.adopt_store_memory(memory, outcome)
    }

    // --- Learning curve ------------------------------------------------------------

    /// Per block of 20 questions (oldest first): the share the user had to correct, and
    /// the share of turns with memory applied that needed no correction.
    pub async fn learning_curve(&self) -> Result<LearningCurve, StoreError> {
        let events = self.ports.store.load_turn_events().await?;
        Ok(learning_curve(&events, QUESTIONS_PER_BUCKET))
    }
}
