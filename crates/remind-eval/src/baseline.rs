//! GROW-PROMPT, the paper's strongest baseline against MemPrompt (NO-MEM, the other,
//! is the turn pipeline with memory off; see `arm.rs`).
//!
//! GROW-PROMPT puts every clarified question with its gold reply into the prompt, so it
//! learns from feedback too but pays for it in context; when the budget runs out the
//! oldest grown example goes first. It is a value: feedback makes a new baseline instead
//! of changing one in place.

use remind_core::prompt::{
    END, Example, PromptError, PromptMode, PromptTemplate, RenderedPrompt, ReplyForm, TokenBudget,
    attach_clarification, estimate_tokens,
};

/// GROW-PROMPT: the base examples, then the clarified examples in the order the
/// feedback came, newest last (nearest the query).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GrowPrompt {
    base: PromptTemplate,
    grown: Vec<Example>,
    budget: TokenBudget,
}

/// The example GROW-PROMPT adds after feedback: `x | clarification: fb` → the gold
/// reply, in the paper's reply form (a leading space, `END` at the end).
pub fn feedback_example(question: &str, clarification: &str, gold_reply: &str) -> Example {
    Example {
        query: attach_clarification(question, clarification),
        reply: format!(" {} {END}", gold_reply.trim()),
    }
}

impl GrowPrompt {
    pub fn new(base: PromptTemplate, budget: TokenBudget) -> Self {
        GrowPrompt {
            base,
            grown: Vec::new(),
            budget,
        }
    }

    /// The grown examples still kept, oldest first.
    pub fn grown(&self) -> &[Example] {
        &self.grown
    }

    /// The baseline after one more piece of feedback. Grown examples that no longer fit
    /// the budget together with the base prompt are dropped, oldest first; the base
    /// prompt itself is never dropped here.
    pub fn with_feedback(&self, question: &str, clarification: &str, gold_reply: &str) -> Self {
        let mut grown = self.grown.clone();
        grown.push(feedback_example(question, clarification, gold_reply));
        let available = self.budget.prompt_tokens();
        let mut skip = 0;
        while skip < grown.len() && self.template_tokens(&grown[skip..]) > available {
            skip += 1;
        }
        GrowPrompt {
            base: self.base.clone(),
            grown: grown.split_off(skip),
            budget: self.budget,
        }
    }

    /// The prompt for a question, asked bare (GROW-PROMPT retrieves nothing). The
    /// oldest grown examples make room for the question first; only if the base prompt
    /// alone is too long are its own oldest examples dropped.
    pub fn render(&self, mode: PromptMode, question: &str) -> Result<RenderedPrompt, PromptError> {
        self.template_for(mode, question)
            .render_within(mode, question, self.budget)
    }

    /// The template [`GrowPrompt::render`] renders a question with: the base examples
    /// and the newest grown ones that fit beside the question, or the base alone (whose
    /// own oldest examples the budget then drops). The harness hands it to the turn
    /// pipeline.
    pub fn template_for(&self, mode: PromptMode, question: &str) -> PromptTemplate {
        let available = self.budget.prompt_tokens();
        (0..=self.grown.len())
            .map(|skip| self.template(&self.grown[skip..]))
            .find(|template| template.rendered(mode, question).estimated_tokens() <= available)
            .unwrap_or_else(|| self.base.clone())
    }

    fn template(&self, grown: &[Example]) -> PromptTemplate {
        let mut examples = self.base.examples().to_vec();
        examples.extend_from_slice(grown);
        PromptTemplate::new(examples, ReplyForm::Restated)
    }

    fn template_tokens(&self, grown: &[Example]) -> usize {
        estimate_tokens(&self.template(grown).render())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_base() -> PromptTemplate {
        PromptTemplate::new(
            vec![Example {
                query: "What is the synonym for < surrogate > ?".into(),
                reply: " the synonym for surrogate is substitute END".into(),
            }],
            ReplyForm::Restated,
        )
    }

    fn roomy() -> TokenBudget {
        TokenBudget {
            context_tokens: 4096,
            reply_tokens: 96,
        }
    }

    fn text(rendered: RenderedPrompt) -> String {
        match rendered {
            RenderedPrompt::Completion(t) => t,
            RenderedPrompt::Chat(_) => panic!("completion mode renders text"),
        }
    }

    #[test]
    fn feedback_becomes_a_clarified_example_with_the_gold_reply() {
        assert_eq!(
            feedback_example(
                "What is like < fast > ?",
                "clarification: when I ask for like, I want a synonym.",
                "the synonym for fast is quick"
            ),
            Example {
                query: "What is like < fast > ? | clarification: when I ask for like, I want a synonym.".into(),
                reply: " the synonym for fast is quick END".into(),
            }
        );
    }

    #[test]
    fn grow_prompt_appends_each_feedback_after_the_base_examples() {
        let grown = GrowPrompt::new(small_base(), roomy())
            .with_feedback(
                "What is like < fast > ?",
                "I want a synonym.",
                "the synonym for fast is quick",
            )
            .with_feedback(
                "What is unlike < hot > ?",
                "I want an antonym.",
                "the antonym for hot is cold",
            );
        let sent = text(
            grown
                .render(PromptMode::Completion, "What is like < slow > ?")
                .unwrap(),
        );
        let base_at = sent.find("surrogate").unwrap();
        let first_at = sent
            .find("< fast > ? | clarification: I want a synonym.")
            .unwrap();
        let second_at = sent
            .find("< hot > ? | clarification: I want an antonym.")
            .unwrap();
        assert!(base_at < first_at && first_at < second_at);
        // The question itself goes out bare: GROW-PROMPT does not retrieve.
        assert!(sent.ends_with("/What is like < slow > ?\n\n###\n\n/"));
    }

    #[test]
    fn grow_prompt_is_a_value_and_the_old_one_is_unchanged() {
        let before = GrowPrompt::new(small_base(), roomy());
        let after = before.with_feedback("q < a > ?", "fb", "gold");
        assert!(before.grown().is_empty());
        assert_eq!(after.grown().len(), 1);
    }

    #[test]
    fn over_budget_the_oldest_grown_example_is_dropped_and_the_base_stays() {
        let base = small_base();
        let one = feedback_example(
            "What is like < w0 > ?",
            "I want a synonym.",
            "the synonym for w0 is x",
        );
        let base_tokens = estimate_tokens(&base.render());
        let per_example =
            estimate_tokens(&PromptTemplate::new(vec![one], ReplyForm::Restated).render()) + 4;
        // Room for the base and about three grown examples.
        let budget = TokenBudget {
            context_tokens: base_tokens + 3 * per_example + 10,
            reply_tokens: 10,
        };
        let mut grow = GrowPrompt::new(base.clone(), budget);
        for i in 0..10 {
            grow = grow.with_feedback(
                &format!("What is like < w{i} > ?"),
                "I want a synonym.",
                &format!("the synonym for w{i} is x"),
            );
        }
        let kept: Vec<&str> = grow.grown().iter().map(|e| e.query.as_str()).collect();
        assert!((1..10).contains(&kept.len()), "{kept:?}");
        assert!(
            kept.last().unwrap().contains("< w9 >"),
            "the newest is kept"
        );
        assert!(
            !kept.iter().any(|q| q.contains("< w0 >")),
            "the oldest goes first"
        );
        let sent = text(
            grow.render(PromptMode::Completion, "What is like < z > ?")
                .unwrap(),
        );
        assert!(sent.starts_with(&base.render()));
        assert!(estimate_tokens(&sent) <= budget.prompt_tokens());
    }

    #[test]
    fn a_long_question_pushes_out_grown_examples_before_the_base() {
        let base = small_base();
        let mut grow = GrowPrompt::new(
            base.clone(),
            TokenBudget {
                context_tokens: 200,
                reply_tokens: 10,
            },
        );
        for i in 0..3 {
            grow = grow.with_feedback(&format!("q{i} < a > ?"), "fb", "gold");
        }
        assert_eq!(grow.grown().len(), 3);
        let long_question = "word ".repeat(60);
        let sent = text(grow.render(PromptMode::Completion, &long_question).unwrap());
        assert!(sent.starts_with(&base.render()));
        assert!(!sent.contains("q0 < a >"));
    }

    #[test]
    fn grow_prompt_renders_chat_mode_with_grown_pairs() {
        let grow = GrowPrompt::new(small_base(), roomy()).with_feedback("q < a > ?", "fb", "gold");
        let RenderedPrompt::Chat(messages) = grow.render(PromptMode::Chat, "next").unwrap() else {
            panic!("chat mode renders messages");
        };
        assert_eq!(messages.len(), 1 + 2 * 2 + 1);
        assert_eq!(messages[3].content, "q < a > ? | clarification: fb");
        assert_eq!(messages[4].content, "gold END");
    }
}
