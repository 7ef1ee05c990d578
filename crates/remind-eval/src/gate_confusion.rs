//! How well a retriever's gate separates "same request" from "different request" on
//! labelled pairs: the confusion counts and the precision and recall they give. One
//! definition for the pinned gate test and the τ calibration tool.

/// Counts of a gate's decisions against the truth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GateConfusion {
    pub true_positive: usize,
    pub false_positive: usize,
    pub false_negative: usize,
    pub true_negative: usize,
}

impl GateConfusion {
    /// Records one pair: whether the gate accepted it, and whether it should have.
    pub fn count(&mut self, accepted: bool, same: bool) {
        match (accepted, same) {
            (true, true) => self.true_positive += 1,
            (true, false) => self.false_positive += 1,
            (false, true) => self.false_negative += 1,
            (false, false) => self.true_negative += 1,
        }
    }

    /// Share of accepted pairs that were the same request (0 when none was accepted).
    pub fn precision(&self) -> f64 {
        self.true_positive as f64 / (self.true_positive + self.false_positive).max(1) as f64
    }

    /// Share of same-request pairs that were accepted (0 when there were none).
    pub fn recall(&self) -> f64 {
        self.true_positive as f64 / (self.true_positive + self.false_negative).max(1) as f64
    }

    pub fn f1(&self) -> f64 {
        let (p, r) = (self.precision(), self.recall());
        if p + r == 0.0 {
            0.0
        } else {
            2.0 * p * r / (p + r)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precision_and_recall_follow_the_counts() {
        let mut c = GateConfusion::default();
        for (accepted, same) in [(true, true), (true, true), (true, false), (false, true)] {
            c.count(accepted, same);
        }
        assert_eq!(c.precision(), 2.0 / 3.0);
        assert_eq!(c.recall(), 2.0 / 3.0);
        assert!((c.f1() - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn an_empty_gate_scores_zero_not_nan() {
        let c = GateConfusion::default();
        assert_eq!((c.precision(), c.recall(), c.f1()), (0.0, 0.0, 0.0));
    }
}
