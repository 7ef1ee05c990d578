//! The numbers of the paper's tables, computed from logged steps alone.
//!
//! Metrics never look at live state: a resumed run and an uninterrupted one report the
//! same numbers because both read the same log.

use std::collections::BTreeMap;

use crate::step_log::StepRecord;
use crate::task_stream::TaskType;

/// Counts over a set of steps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    pub steps: usize,
    /// Acc(u) numerator.
    pub understood: usize,
    /// Steps whose answer is scored against a gold word (syn, ant, hom).
    pub answers_scored: usize,
    /// Acc(y) numerator.
    pub answers_correct: usize,
}

impl Tally {
    fn add(&mut self, step: &StepRecord) {
        self.steps += 1;
        self.understood += usize::from(step.understood);
        if let Some(correct) = step.answer_correct {
            self.answers_scored += 1;
            self.answers_correct += usize::from(correct);
        }
    }

    pub fn accuracy_u(&self) -> Option<f64> {
        ratio(self.understood, self.steps)
    }

    pub fn accuracy_y(&self) -> Option<f64> {
        ratio(self.answers_correct, self.answers_scored)
    }
}

fn ratio(n: usize, d: usize) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct ArmMetrics {
    pub arm: String,
    pub by_type: BTreeMap<TaskType, Tally>,
    pub overall: Tally,
    /// The first ⌊n/2⌋ steps and the rest: learning shows as a rising second half.
    pub first_half: Tally,
    pub second_half: Tally,
    pub prompt_tokens_total: usize,
    /// A stored clarification of the step's own task type was attached.
    pub memory_hits: usize,
    /// A stored clarification of another task type was attached.
    pub wrong_type_retrievals: usize,
    pub feedback_given: usize,
    pub requests: usize,
    pub failed_requests: usize,
    /// Steps that needed more than one request.
    pub retried_steps: usize,
    pub seconds_total: f64,
    /// Acc(u) over the first i+1 steps, for the running-accuracy plot.
    pub running_accuracy: Vec<f64>,
}

impl ArmMetrics {
    pub fn prompt_tokens_per_step(&self) -> Option<f64> {
        ratio(self.prompt_tokens_total, self.overall.steps)
    }

    pub fn seconds_per_step(&self) -> Option<f64> {
        (self.overall.steps > 0).then(|| self.seconds_total / self.overall.steps as f64)
    }
}

/// The metrics of one arm from its steps, which must be in stream order.
pub fn arm_metrics(arm: &str, steps: &[StepRecord]) -> ArmMetrics {
    let mut m = ArmMetrics {
        arm: arm.to_string(),
        ..ArmMetrics::default()
    };
    let half = steps.len() / 2;
    for (position, step) in steps.iter().enumerate() {
        m.overall.add(step);
        if let Some(t) = TaskType::from_code(&step.task_type) {
            m.by_type.entry(t).or_default().add(step);
        }
        if position < half {
            m.first_half.add(step);
        } else {
            m.second_half.add(step);
        }
        m.prompt_tokens_total += step.prompt_tokens;
        match &step.memory {
            Some(hit) if hit.right_type => m.memory_hits += 1,
            Some(_) => m.wrong_type_retrievals += 1,
            None => {}
        }
        m.feedback_given += usize::from(step.feedback.is_some());
        m.requests += step.attempts as usize;
        m.failed_requests += step.errors.len();
        m.retried_steps += usize::from(step.attempts > 1);
        m.seconds_total += step.seconds;
        m.running_accuracy
            .push(m.overall.understood as f64 / m.overall.steps as f64);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::step_log::{MemoryHit, sample};

    fn hit(right_type: bool) -> Option<MemoryHit> {
        Some(MemoryHit {
            question: "q".into(),
            clarification: "c".into(),
            score: 0.0,
            lesson_type: Some("syn".into()),
            right_type,
        })
    }

    #[test]
    fn every_count_adds_up() {
        let mut steps: Vec<StepRecord> = (0..5).map(|i| sample("a", i)).collect();
        steps[0].understood = false;
        steps[0].feedback = Some("fb".into());
        steps[1].task_type = "defn".into();
        steps[1].answer_correct = None;
        steps[2].answer_correct = Some(true);
        steps[2].memory = hit(true);
        steps[3].memory = hit(false);
        steps[3].understood = false;
        steps[4].attempts = 3;
        steps[4].errors = vec!["e1".into(), "e2".into()];
        steps[4].prompt_tokens = 10;
        let m = arm_metrics("a", &steps);
        assert_eq!(m.overall.steps, 5);
        assert_eq!(m.overall.understood, 3);
        assert_eq!(m.overall.answers_scored, 4);
        assert_eq!(m.overall.answers_correct, 1);
        assert_eq!(m.by_type[&TaskType::Synonym].steps, 4);
        assert_eq!(m.by_type[&TaskType::Definition].understood, 1);
        assert_eq!((m.first_half.steps, m.first_half.understood), (2, 1));
        assert_eq!((m.second_half.steps, m.second_half.understood), (3, 2));
        assert_eq!(m.prompt_tokens_total, 14);
        assert_eq!((m.memory_hits, m.wrong_type_retrievals), (1, 1));
        assert_eq!(m.feedback_given, 1);
        assert_eq!((m.requests, m.failed_requests, m.retried_steps), (7, 2, 1));
        assert_eq!(m.running_accuracy, vec![0.0, 0.5, 2.0 / 3.0, 0.5, 0.6]);
        assert_eq!(m.overall.accuracy_y(), Some(0.25));
    }

    #[test]
    fn no_steps_means_no_accuracy_rather_than_zero() {
        let m = arm_metrics("a", &[]);
        assert_eq!(m.overall.accuracy_u(), None);
        assert_eq!(m.prompt_tokens_per_step(), None);
    }
}
