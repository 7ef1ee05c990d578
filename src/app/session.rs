//! One user's session: the memory as loaded, the settings, and the ports, behind the
//! operations the page offers.
//!
//! The in-memory view changes only after the store confirmed a write, so what the
//! page shows is always what a reload would show.

use std::cell::RefCell;

use crate::app::ask::{self, AskError, Turn};
use crate::app::correct::{self, CorrectError, Correction, CorrectionOutcome};
use crate::app::ports::{Clock, IdSource, LanguageModel, MemoryStore, SettingsStore, StoreError};
use crate::app::settings::Settings;
use crate::domain::memory::FeedbackMemory;
use crate::domain::prompt::PromptTemplate;
use crate::domain::record::MemoryRecord;
use crate::domain::retrieval::{LevenshteinRetriever, Retriever};

/// The platform pieces a session runs on.
pub struct Ports<S, L, C, I, P> {
    pub store: S,
    pub llm: L,
    pub clock: C,
    pub ids: I,
    pub settings: P,
}

pub struct Session<S, L, C, I, P> {
    ports: Ports<S, L, C, I, P>,
    memory: RefCell<FeedbackMemory>,
    settings: RefCell<Settings>,
    template: PromptTemplate,
    retriever: Box<dyn Retriever>,
}

impl<S, L, C, I, P> Session<S, L, C, I, P>
where
    S: MemoryStore,
    L: LanguageModel,
    C: Clock,
    I: IdSource,
    P: SettingsStore,
{
    /// A session with the general prompt and the paper's Levenshtein retriever.
    pub fn new(ports: Ports<S, L, C, I, P>) -> Self {
        let settings = ports.settings.load().unwrap_or_default();
        Session {
            ports,
            memory: RefCell::new(FeedbackMemory::default()),
            settings: RefCell::new(settings),
            template: PromptTemplate::general(),
            retriever: Box::new(LevenshteinRetriever::default()),
        }
    }

    pub fn with_template(mut self, template: PromptTemplate) -> Self {
        self.template = template;
        self
    }

    /// Reads every stored record; returns how many lessons are current.
    pub async fn load(&self) -> Result<usize, StoreError> {
        let records = self.ports.store.load().await?;
        *self.memory.borrow_mut() = FeedbackMemory::from_records(records);
        Ok(self.current_count())
    }

    pub fn current_count(&self) -> usize {
        self.memory.borrow().current().count()
    }

    pub fn current_records(&self) -> Vec<MemoryRecord> {
        self.memory.borrow().current().cloned().collect()
    }

    pub fn settings(&self) -> Settings {
        self.settings.borrow().clone()
    }

    /// Validates and stores the settings; nothing changes when they are refused.
    pub fn save_settings(&self, settings: Settings) -> Result<(), String> {
        settings.endpoint.validate()?;
        self.ports
            .settings
            .save(&settings)
            .map_err(|e| e.to_string())?;
        *self.settings.borrow_mut() = settings;
        Ok(())
    }

    /// Asks the model, with the best-fitting stored lesson attached.
    pub async fn ask(&self, question: &str) -> Result<Turn, AskError> {
        self.ask_with(question, None).await
    }

    /// Asks again with a one-time clarification in place of any stored lesson.
    pub async fn ask_with(
        &self,
        question: &str,
        one_time_clarification: Option<&str>,
    ) -> Result<Turn, AskError> {
        let settings = self.settings();
        let prepared = ask::prepare(
            &self.memory.borrow(),
            self.retriever.as_ref(),
            &self.template,
            &settings,
            question,
            one_time_clarification,
        )?;
        ask::send(&self.ports.llm, &settings, prepared).await
    }

    /// Stores the user's clarification for a turn (or keeps it for this turn only).
    pub async fn correct(
        &self,
        turn: &Turn,
        correction: Correction,
    ) -> Result<CorrectionOutcome, CorrectError> {
        let snapshot = self.memory.borrow().clone();
        let outcome = correct::save_correction(
            &self.ports.store,
            &snapshot,
            &self.ports.clock,
            &self.ports.ids,
            turn,
            correction,
        )
        .await?;
        if let CorrectionOutcome::Saved(written) = &outcome {
            self.memory.borrow_mut().apply(written);
        }
        Ok(outcome)
    }
}
