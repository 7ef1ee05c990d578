//! The paper's simulated user: silent when the model understood, and after a misread
//! gives the task's clarification with probability P(fb).
//!
//! The coin is a seeded [`SplitMix64`], so a replay with the same seed gives the same
//! feedback on every machine; the user holds no other state.

use crate::split_mix64::SplitMix64;
use crate::task_stream::RenderedTask;

#[derive(Clone, Debug, PartialEq)]
pub struct SimulatedUser {
    p_feedback: f64,
    rng: SplitMix64,
}

impl SimulatedUser {
    /// `p_feedback` is the chance of clarifying after a misread (clamped to `[0, 1]`).
    pub fn new(p_feedback: f64, seed: u64) -> Self {
        SimulatedUser {
            p_feedback: p_feedback.clamp(0.0, 1.0),
            rng: SplitMix64::new(seed),
        }
    }

    pub fn p_feedback(&self) -> f64 {
        self.p_feedback
    }

    /// The user's reaction to one reply. Draws a coin only after a misread, so how
    /// often the model is right does not shift which misreads get feedback.
    pub fn feedback(&mut self, task: &RenderedTask, understood: bool) -> Option<String> {
        if understood {
            return None;
        }
        self.rng
            .chance(self.p_feedback)
            .then(|| task.clarification.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::task_stream::TaskType;

    fn task() -> RenderedTask {
        RenderedTask {
            line: 1,
            task_type: TaskType::Synonym,
            template_id: "syn0".into(),
            word: "fast".into(),
            question: "What is like < fast > ?".into(),
            clarification: "clarification: when I ask for like, I want a synonym.".into(),
            gold_reply: "the synonym for fast is quick".into(),
            gold_understanding: "the synonym for fast".into(),
        }
    }

    #[test]
    fn a_user_says_nothing_when_understood() {
        let mut user = SimulatedUser::new(1.0, 1);
        assert_eq!(user.feedback(&task(), true), None);
    }

    #[test]
    fn a_user_always_clarifies_a_misread_at_p_one() {
        let mut user = SimulatedUser::new(1.0, 1);
        assert!((0..100).all(|_| user.feedback(&task(), false).as_deref()
            == Some("clarification: when I ask for like, I want a synonym.")));
    }

    #[test]
    fn a_user_clarifies_about_half_the_misreads_at_p_half_and_replays_identically() {
        let run = |seed| {
            let mut user = SimulatedUser::new(0.5, seed);
            (0..1000)
                .map(|_| user.feedback(&task(), false).is_some())
                .collect::<Vec<_>>()
        };
        let given = run(9).iter().filter(|&&g| g).count();
        assert!((450..550).contains(&given), "{given}");
        assert_eq!(run(9), run(9));
        assert_ne!(run(9), run(10));
    }

    #[test]
    fn a_user_never_clarifies_at_p_zero() {
        let mut user = SimulatedUser::new(0.0, 3);
        assert!((0..100).all(|_| user.feedback(&task(), false).is_none()));
    }
}
