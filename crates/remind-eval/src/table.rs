//! `table.md`: the run as the paper's Tables 3 and 4 lay it out (arms × task types),
//! plus what the paper leaves out: prompt cost, retrieval quality and the endpoint's
//! reliability.

use std::fmt::Write;

use crate::answer_match::has_gold_word;
use crate::metrics::{ArmMetrics, Tally};
use crate::task_stream::TaskType;

/// What the table's heading states about the run.
#[derive(Clone, Debug, PartialEq)]
pub struct RunDescription {
    pub stream: String,
    pub steps: usize,
    pub model: String,
    pub mode: String,
    pub p_feedback: f64,
    pub seed: u64,
}

/// "65.0 (13/20)", or "–" when nothing was counted.
fn cell(numerator: usize, denominator: usize) -> String {
    if denominator == 0 {
        return "–".into();
    }
    format!(
        "{:.1} ({numerator}/{denominator})",
        100.0 * numerator as f64 / denominator as f64
    )
}

fn u_cell(t: &Tally) -> String {
    cell(t.understood, t.steps)
}

fn y_cell(t: &Tally) -> String {
    cell(t.answers_correct, t.answers_scored)
}

/// The task types present in any arm, in the paper's order.
fn types_in(metrics: &[ArmMetrics]) -> Vec<TaskType> {
    TaskType::ALL
        .into_iter()
        .filter(|t| metrics.iter().any(|m| m.by_type.contains_key(t)))
        .collect()
}

pub fn render_table(run: &RunDescription, metrics: &[ArmMetrics]) -> String {
    let types = types_in(metrics);
    let mut out = String::new();
    let _ = writeln!(out, "# remind-eval results\n");
    let _ = writeln!(
        out,
        "Stream `{}`, {} steps per arm; model `{}` ({} mode); P(fb) = {}, seed {}.\n",
        run.stream, run.steps, run.model, run.mode, run.p_feedback, run.seed
    );

    let _ = writeln!(
        out,
        "## Acc(u): the understanding names the asked-for relation (%)\n"
    );
    let mut header = String::from("| arm |");
    let mut rule = String::from("|---|");
    for t in &types {
        let _ = write!(header, " {t} |");
        rule.push_str("---:|");
    }
    header.push_str(" all | first half | second half |");
    rule.push_str("---:|---:|---:|");
    let _ = writeln!(out, "{header}\n{rule}");
    for m in metrics {
        let mut row = format!("| {} |", m.arm);
        for t in &types {
            let _ = write!(
                row,
                " {} |",
                u_cell(&m.by_type.get(t).copied().unwrap_or_default())
            );
        }
        let _ = write!(
            row,
            " **{}** | {} | {} |",
            u_cell(&m.overall),
            u_cell(&m.first_half),
            u_cell(&m.second_half)
        );
        let _ = writeln!(out, "{row}");
    }

    let scored: Vec<TaskType> = types
        .iter()
        .copied()
        .filter(|t| has_gold_word(*t))
        .collect();
    if !scored.is_empty() {
        let _ = writeln!(
            out,
            "\n## Acc(y): the answer is the gold word, exactly or by lemma (%)\n"
        );
        let mut header = String::from("| arm |");
        let mut rule = String::from("|---|");
        for t in &scored {
            let _ = write!(header, " {t} |");
            rule.push_str("---:|");
        }
        let _ = writeln!(out, "{header} all scored |\n{rule}---:|");
        for m in metrics {
            let mut row = format!("| {} |", m.arm);
            for t in &scored {
                let _ = write!(
                    row,
                    " {} |",
                    y_cell(&m.by_type.get(t).copied().unwrap_or_default())
                );
            }
            let _ = writeln!(out, "{row} **{}** |", y_cell(&m.overall));
        }
    }

    let _ = writeln!(out, "\n## Cost, retrieval and endpoint\n");
    let _ = writeln!(
        out,
        "| arm | steps | prompt tokens / step | prompt tokens total | memory hits | wrong-type retrievals | feedback given | requests | failed requests | retried steps | s / step |"
    );
    let _ = writeln!(
        out,
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for m in metrics {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            m.arm,
            m.overall.steps,
            m.prompt_tokens_per_step()
                .map_or("–".into(), |v| format!("{v:.0}")),
            m.prompt_tokens_total,
            m.memory_hits,
            m.wrong_type_retrievals,
            m.feedback_given,
            m.requests,
            m.failed_requests,
            m.retried_steps,
            m.seconds_per_step()
                .map_or("–".into(), |v| format!("{v:.2}")),
        );
    }
    let _ = writeln!(
        out,
        "\nPrompt tokens are the harness's estimate (`estimate_tokens`, about 3 characters a token), the same the page budgets with."
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::arm_metrics;
    use crate::step_log::sample;

    #[test]
    fn the_table_has_one_row_per_arm_and_exact_cells() {
        let mut steps: Vec<_> = (0..4).map(|i| sample("mem-prompt-lev", i)).collect();
        steps[0].understood = false;
        steps[3].task_type = "sent".into();
        steps[3].answer_correct = None;
        let metrics = vec![
            arm_metrics("no-mem", &[]),
            arm_metrics("mem-prompt-lev", &steps),
        ];
        let run = RunDescription {
            stream: "s".into(),
            steps: 4,
            model: "m".into(),
            mode: "completion".into(),
            p_feedback: 1.0,
            seed: 1,
        };
        let table = render_table(&run, &metrics);
        assert!(
            table.contains("| arm | syn | sent | all | first half | second half |"),
            "{table}"
        );
        assert!(table.contains("| mem-prompt-lev | 66.7 (2/3) | 100.0 (1/1) | **75.0 (3/4)** | 50.0 (1/2) | 100.0 (2/2) |"), "{table}");
        assert!(
            table.contains("| no-mem | – | – | **–** | – | – |"),
            "{table}"
        );
        assert!(
            table.contains("| mem-prompt-lev | 0.0 (0/3) | **0.0 (0/3)** |"),
            "{table}"
        );
        assert!(
            table.contains("| mem-prompt-lev | 4 | 1 | 4 | 0 | 0 | 0 | 4 | 0 | 0 | 0.50 |"),
            "{table}"
        );
    }
}
