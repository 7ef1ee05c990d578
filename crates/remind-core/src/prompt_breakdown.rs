//! The prompt of a turn taken apart for the "show prompt" panel: which template
//! examples, which verified examples (and how similar), which clarifications (and why
//! each was attached), and the query.
//!
//! The panel explains the prompt; it must not be able to tell a different story from
//! the one sent. [`PromptBreakdown::render`] rebuilds the exact prompt from the parts,
//! and the turn is built from that, so the parts are by construction what was sent.

use crate::prompt::{Example, PromptMode, PromptTemplate, RenderedPrompt, ReplyForm};
use crate::record::RecordId;
use crate::turn::AppliedBecause;
use crate::verified_examples::ChosenExample;

/// Where the clarification attached to the query came from.
#[derive(Clone, Debug, PartialEq)]
pub enum ClarificationOrigin {
    /// A stored lesson, attached for the reason given.
    Stored {
        record: RecordId,
        version: u32,
        because: AppliedBecause,
    },
    /// Typed for this turn only ("just this once"); not stored.
    OneTime,
}

#[derive(Clone, Debug, PartialEq)]
pub struct AttachedClarification {
    pub text: String,
    pub origin: ClarificationOrigin,
}

/// The sent prompt, part by part, in the order the model reads them.
#[derive(Clone, Debug, PartialEq)]
pub struct PromptBreakdown {
    pub mode: PromptMode,
    /// The form the examples' replies take, and so the form the reply is read in.
    pub form: ReplyForm,
    /// The template's examples that were sent, in order.
    pub base_examples: Vec<Example>,
    /// How many of the template's oldest examples were left out to fit the token budget.
    pub base_examples_dropped: usize,
    /// The verified examples that were sent, right after the template's, most similar
    /// last.
    pub verified_examples: Vec<ChosenExample>,
    /// Verified examples chosen but left out because even without any template example
    /// the prompt would not have fit with them.
    pub verified_examples_dropped: usize,
    /// Every clarification attached, in the order the query carries them.
    pub clarifications: Vec<AttachedClarification>,
    /// Standing preferences not sent because more than
    /// [`crate::turn::STANDING_PREFERENCES_PER_TURN`] are stored.
    pub standing_left_out: usize,
    /// The question as typed.
    pub question: String,
    /// The query as sent: the question with its clarifications attached.
    pub query: String,
}

impl PromptBreakdown {
    /// Every example that was sent, template examples first.
    pub fn sent_examples(&self) -> Vec<Example> {
        self.base_examples
            .iter()
            .cloned()
            .chain(self.verified_examples.iter().map(|c| c.example.clone()))
            .collect()
    }

    /// The prompt these parts make: equal to the turn's request prompt.
    pub fn render(&self) -> RenderedPrompt {
        PromptTemplate::new(self.sent_examples(), self.form).rendered(self.mode, &self.query)
    }
}
