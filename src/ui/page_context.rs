//! What every component shares: the session, its memory as one signal, and the
//! conversation, each turn with a state of its own.

use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::ui::record_labels::applied_because_label;
use crate::ui::yield_to_browser::{pause, yield_to_browser};
use crate::wiring::{PageConversations, PageSession};
use remind_app::ask::Turn;
use remind_app::conversation::{ConversationError, Conversations, SavedTurn};
use remind_app::ports::{EmbedderStatus, ReplyStream, StopSignal, WriteProgress};
use remind_app::question_embedding::LessonsEmbedded;
use remind_app::session::AskMode;
use remind_core::memory::FeedbackMemory;
use remind_core::record::RecordId;
use remind_core::stored_rows::UnreadableRecord;

/// Where one turn of the conversation stands.
#[derive(Clone, Debug, PartialEq)]
pub enum TurnState {
    Asking,
    Answered(Box<Turn>),
    /// Kept from an earlier visit: shown as it was, made whole again when the user
    /// corrects or confirms it.
    Restored(Box<SavedTurn>),
    Failed(String),
}

/// One turn of the conversation in view.
#[derive(Clone, Debug)]
pub struct ConversationEntry {
    /// Names the turn in the page (its element ids, the keyed list).
    pub key: u64,
    pub question: String,
    /// Asked in a temporary conversation: memory was not read, and nothing about this
    /// turn may be written.
    pub temporary: bool,
    pub state: RwSignal<TurnState>,
    /// The reply as it streams in, while the turn is asking.
    pub streamed: RwSignal<String>,
    /// The stop button's end of this turn's reply.
    pub stop: StopSignal,
}

/// How a question is asked.
#[derive(Clone, Debug, PartialEq)]
pub enum AskKind {
    /// With the stored lessons that fit it.
    WithMemory,
    /// Again, with the user's clarification for this turn in place of stored lessons.
    WithClarificationForThisTurn(String),
}

#[derive(Clone, Copy)]
pub struct PageContext {
    session: StoredValue<Rc<PageSession>, LocalStorage>,
    conversations: StoredValue<Rc<PageConversations>, LocalStorage>,
    /// The conversation in view, oldest turn first.
    pub conversation: RwSignal<Vec<ConversationEntry>>,
    /// The conversations set aside by "new conversation", newest first.
    pub earlier_conversations: RwSignal<Vec<Vec<SavedTurn>>>,
    /// Set when the conversation log could not be read or written.
    pub conversation_error: RwSignal<Option<String>>,
    /// A temporary conversation is in view: memory is not read and nothing is kept.
    pub temporary: RwSignal<bool>,
    /// Whether the latest turn is still waiting for its reply.
    pub asking: Memo<bool>,
    next_entry_key: StoredValue<u64>,
    /// The session's memory: its latest snapshot, set by the session itself whenever it
    /// takes on a new one, so every count and list derived from it stays current. The
    /// page's only watch of the session's memory (see [`PageContext::new`]).
    pub memory: RwSignal<Arc<FeedbackMemory>>,
    pub memory_count: Memo<usize>,
    /// Whether the store has been read once this visit (or failed to be): until then
    /// the count of 0 means nothing yet. A first visit after an upgrade of how the
    /// memory is stored can take seconds with thousands of lessons.
    pub memory_read: RwSignal<bool>,
    /// Stored rows the session could not read, as of its last load.
    pub unreadable: RwSignal<Arc<Vec<UnreadableRecord>>>,
    /// Set when stored memory could not be read; shown instead of a count.
    pub memory_error: RwSignal<Option<String>>,
    /// The outcome of the last change made in the memory browser or the import panel.
    pub memory_notice: RwSignal<Option<Notice>>,
    /// Where the embedding model stands, as the embedder last reported.
    pub embedder_status: RwSignal<EmbedderStatus>,
    /// How far the store's last large write (an import) has come, as it last reported;
    /// `None` until one reports. A view that starts a write clears it first.
    pub write_progress: RwSignal<Option<WriteProgress>>,
    /// The lesson a chip under an answer asked the memory browser to show.
    pub shown_lesson: RwSignal<Option<RecordId>>,
    /// The background embedding of lessons that lack an embedding (after an import or
    /// a model change): how many still wait, or why it stopped.
    pub background_embedding: RwSignal<BackgroundEmbedding>,
    /// When the person last typed in the question box or was answered (the page's
    /// monotonic clock, in ms): the background embedding leaves them the worker for
    /// [`PERSON_QUIET`] after it.
    last_at_the_question_box: StoredValue<f64>,
}

/// Where the background embedding of waiting lessons stands.
#[derive(Clone, Debug, PartialEq)]
pub enum BackgroundEmbedding {
    /// Nothing waits, or the model is not ready to embed.
    Idle,
    /// `waiting` is unknown until the first batch is done.
    Running { waiting: Option<usize> },
    /// Stopped for this visit; the waiting lessons are matched by wording.
    Stopped { waiting: Option<usize>, why: String },
}

/// Lessons embedded per background step: each step is one request to the worker and
/// one transaction on its own records. The worker embeds a text at a time, the next
/// from the request with the fewest left, so a question asked meanwhile waits for one
/// lesson whatever the step (asked at once at 10 000 lessons: 70 ms, against 140–200 ms
/// when the worker answered a step of 4 whole first; docs/performance.md). Smaller steps
/// cost a little more in all: 1 000 lessons took 29.5 s in steps of 4, 28.5 s in
/// steps of 8.
const BACKGROUND_EMBEDDING_BATCH: usize = 4;

/// How often the background embedding looks whether the question being asked is
/// answered, to store what it embedded or go on with its next step.
const ASKING_POLL: Duration = Duration::from_millis(25);

/// How long the background embedding starts no step after the person last typed in
/// the question box or was answered: longer than a pause between keystrokes, or
/// between the last one and Enter, so a typed question finds the worker idle (one
/// pasted and asked within a lesson's embedding, 10–20 ms, still waits for it).
const PERSON_QUIET: Duration = Duration::from_secs(1);

/// A one-line outcome shown to the user; errors are styled and announced as alerts.
#[derive(Clone, Debug, PartialEq)]
pub struct Notice {
    pub text: String,
    pub is_error: bool,
}

impl Notice {
    pub fn done(text: impl Into<String>) -> Self {
        Notice {
            text: text.into(),
            is_error: false,
        }
    }

    pub fn failed(error: impl std::fmt::Display) -> Self {
        Notice {
            text: error.to_string(),
            is_error: true,
        }
    }
}

impl PageContext {
    /// Watches the session's memory and unreadable rows, the one place the page does:
    /// every view reads these signals, never the session's snapshot directly.
    pub fn new(
        session: Rc<PageSession>,
        conversations: Rc<PageConversations>,
        embedder_status: RwSignal<EmbedderStatus>,
        write_progress: RwSignal<Option<WriteProgress>>,
    ) -> Self {
        let memory = RwSignal::new(session.memory());
        let memory_read = RwSignal::new(false);
        session.watch_memory(move |snapshot| {
            memory.set(snapshot);
            memory_read.set(true);
        });
        let unreadable = RwSignal::new(session.unreadable());
        session.watch_unreadable(move |rows| unreadable.set(rows));
        let conversation = RwSignal::new(Vec::<ConversationEntry>::new());
        let asking = Memo::new(move |_| {
            conversation.with(|entries| {
                entries
                    .last()
                    .is_some_and(|entry| entry.state.get() == TurnState::Asking)
            })
        });
        PageContext {
            session: StoredValue::new_local(session),
            conversations: StoredValue::new_local(conversations),
            conversation,
            earlier_conversations: RwSignal::new(Vec::new()),
            conversation_error: RwSignal::new(None),
            temporary: RwSignal::new(false),
            asking,
            next_entry_key: StoredValue::new(0),
            memory,
            memory_count: Memo::new(move |_| memory.with(|m| m.current().count())),
            memory_read,
            unreadable,
            memory_error: RwSignal::new(None),
            memory_notice: RwSignal::new(None),
            embedder_status,
            write_progress,
            shown_lesson: RwSignal::new(None),
            background_embedding: RwSignal::new(BackgroundEmbedding::Idle),
            last_at_the_question_box: StoredValue::new(f64::NEG_INFINITY),
        }
    }

    /// Shows the outcome of a change. What is shown of the memory follows the session's
    /// snapshot by itself, a refused change (stale version, re-read store) included.
    pub fn report<T, E: std::fmt::Display>(
        &self,
        outcome: Result<T, E>,
        done: impl FnOnce(T) -> String,
    ) {
        let notice = match outcome {
            Ok(value) => Notice::done(done(value)),
            Err(error) => Notice::failed(error),
        };
        self.memory_notice.set(Some(notice));
    }

    /// Re-reads the store (another tab wrote); the new snapshot reaches every view.
    pub async fn reload_memory(&self) {
        match self.session().reload().await {
            Ok(_) => self.memory_error.set(None),
            Err(e) => self.memory_error.set(Some(e.to_string())),
        }
        self.memory_read.set(true);
    }

    pub fn session(&self) -> Rc<PageSession> {
        self.session.get_value()
    }

    /// Embeds the lessons that wait for an embedding, a batch at a time, in the
    /// background, unless that is already under way or stopped for this visit. Called
    /// whenever the memory or the model changes; questions asked meanwhile match the
    /// waiting lessons by wording.
    pub fn embed_waiting_lessons(&self) {
        if self.background_embedding.get_untracked() != BackgroundEmbedding::Idle {
            return;
        }
        let page = *self;
        page.background_embedding
            .set(BackgroundEmbedding::Running { waiting: None });
        spawn_local(async move {
            let mut waiting = None;
            loop {
                let step = page
                    .session()
                    .embed_waiting_lessons(BACKGROUND_EMBEDDING_BATCH, page.no_question_asked())
                    .await;
                let next = match step {
                    Ok(LessonsEmbedded {
                        embedded: 1..,
                        waiting: left @ 1..,
                    }) => {
                        waiting = Some(left);
                        BackgroundEmbedding::Running { waiting }
                    }
                    Ok(_) => BackgroundEmbedding::Idle,
                    Err(error) => BackgroundEmbedding::Stopped {
                        waiting,
                        why: error.to_string(),
                    },
                };
                let running = matches!(next, BackgroundEmbedding::Running { .. });
                page.background_embedding.set(next);
                if !running {
                    return;
                }
                yield_to_browser().await;
                // A question asked or being typed meanwhile has the worker to itself:
                // the next step waits until the person has been quiet for a while.
                page.person_quiet().await;
            }
        });
    }

    /// Resolves once no question is being asked: a background step neither starts nor
    /// stores what it embedded while one is (storing reads and rewrites the lessons'
    /// blocks and draws the new snapshot, 5–8 ms of the main thread at 10 000 lessons,
    /// which the question's reply would wait behind).
    async fn no_question_asked(self) {
        while self.asking.get_untracked() {
            pause(ASKING_POLL).await;
        }
    }

    /// Notes that the person is typing a question, or has just been answered: see
    /// [`PageContext::person_quiet`].
    pub fn note_person_at_the_question_box(&self) {
        if let Some(now) = page_clock_ms() {
            self.last_at_the_question_box.set_value(now);
        }
    }

    /// Resolves once no question is being asked and the person has neither typed one
    /// nor been answered for [`PERSON_QUIET`]. The worker embeds one text at a time, so
    /// a question that comes while it embeds a lesson waits for that lesson (5–20 ms);
    /// held from the first keystroke, the background has left the worker idle by the
    /// time the question is embedded, as it is for the next question of someone who
    /// has just been answered.
    async fn person_quiet(self) {
        loop {
            self.no_question_asked().await;
            let Some(now) = page_clock_ms() else { return };
            let since = now - self.last_at_the_question_box.get_value();
            let quiet = PERSON_QUIET.as_secs_f64() * 1000.0;
            // Never held longer than the quiet itself, whatever the clock said before.
            let left = (quiet - since).min(quiet);
            // Past (negative), or not a number: quiet long enough.
            match Duration::try_from_secs_f64(left / 1000.0) {
                Ok(wait) if !wait.is_zero() => pause(wait).await,
                _ => return,
            }
        }
    }

    /// Shows the kept conversation as the log holds it (on load, and when a temporary
    /// conversation ends). Another tab's turns appear here after a reload.
    pub fn show_kept_conversation(&self) {
        let loaded = self.conversations.get_value().load();
        self.show_conversations(loaded);
    }

    /// Asks `question` as a new turn at the end of the conversation; returns once the
    /// turn has its reply or its error. A turn of a conversation that is not temporary
    /// is kept in the log once answered.
    pub async fn ask(&self, question: String, kind: AskKind) {
        let temporary = self.temporary.get_untracked();
        let entry = self.new_entry(question.clone(), temporary, TurnState::Asking);
        let (state, streamed) = (entry.state, entry.streamed);
        let reply = ReplyStream::new(entry.stop.clone(), move |text| {
            streamed.set(text.to_string())
        });
        self.conversation.update(|entries| entries.push(entry));
        let mode = match (&kind, temporary) {
            (_, true) => AskMode::Temporary,
            (AskKind::WithMemory, false) => AskMode::WithMemory,
            (AskKind::WithClarificationForThisTurn(clarification), false) => {
                AskMode::WithClarificationForThisTurn(clarification)
            }
        };
        let session = self.session();
        let outcome = session.answer_shown(&question, mode, &reply).await;
        // Noted before the turn stops asking: the background's next step, which waits
        // for that, then also waits for the quiet after it.
        self.note_person_at_the_question_box();
        match outcome {
            Ok(turn) => {
                if !temporary {
                    let kept = self
                        .conversations
                        .get_value()
                        .keep(&turn, applied_because_label);
                    self.conversation_error
                        .set(kept.err().map(|error| error.to_string()));
                }
                // The answer is shown before its statistics are written.
                state.set(TurnState::Answered(Box::new(turn.clone())));
                session.note_answered(&turn, mode).await;
            }
            Err(error) => state.set(TurnState::Failed(error.to_string())),
        }
    }

    /// "New conversation": the kept one is set aside, to be reopened later; a temporary
    /// one in view is discarded and the new one is not temporary.
    pub fn start_new_conversation(&self) {
        self.temporary.set(false);
        let started = self.conversations.get_value().start_afresh();
        self.show_conversations(started);
    }

    /// "Clear": the conversation in view is erased from this device.
    pub fn clear_conversation(&self) {
        if self.temporary.get_untracked() {
            self.conversation.set(Vec::new());
            return;
        }
        let cleared = self.conversations.get_value().clear();
        self.show_conversations(cleared);
    }

    /// Brings an earlier conversation (newest first) back into view.
    pub fn reopen_conversation(&self, index: usize) {
        self.temporary.set(false);
        let reopened = self.conversations.get_value().reopen(index);
        self.show_conversations(reopened);
    }

    /// Switches a temporary conversation on (an empty one in view, the kept one left
    /// as it is) or off (the kept conversation back in view).
    pub fn set_temporary(&self, on: bool) {
        self.temporary.set(on);
        if on {
            self.conversation.set(Vec::new());
        } else {
            self.show_kept_conversation();
        }
    }

    fn show_conversations(&self, outcome: Result<Conversations, ConversationError>) {
        match outcome {
            Ok(conversations) => {
                let entries = conversations
                    .current
                    .into_iter()
                    .map(|saved| self.restored_entry(saved))
                    .collect();
                self.conversation.set(entries);
                self.earlier_conversations.set(conversations.earlier);
                self.conversation_error.set(None);
            }
            Err(error) => self.conversation_error.set(Some(error.to_string())),
        }
    }

    fn restored_entry(&self, saved: SavedTurn) -> ConversationEntry {
        let question = saved.question.clone();
        self.new_entry(question, false, TurnState::Restored(Box::new(saved)))
    }

    fn new_entry(&self, question: String, temporary: bool, state: TurnState) -> ConversationEntry {
        let key = self.next_entry_key.get_value();
        self.next_entry_key.set_value(key + 1);
        ConversationEntry {
            key,
            question,
            temporary,
            state: RwSignal::new(state),
            streamed: RwSignal::new(String::new()),
            stop: StopSignal::new(),
        }
    }
}

/// Milliseconds on the page's monotonic clock (`performance.now()`), which a change of
/// the system's time does not move: a wall clock set back an hour would have held the
/// background embedding for that hour. `None` without one (never so on the page): the
/// background is then not held at all.
fn page_clock_ms() -> Option<f64> {
    web_sys::window()
        .and_then(|window| window.performance())
        .map(|performance| performance.now())
}

pub fn use_page() -> PageContext {
    expect_context::<PageContext>()
}
