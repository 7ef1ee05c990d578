//! The progress line on stderr: steps done, time per step and the time left.
//!
//! Runs against a CPU-bound local model take the better part of an hour, so the line
//! says early whether to wait or to lower `--limit`.

/// Seconds as "1h02m", "3m05s" or "12s".
pub fn duration_label(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match (s / 3600, (s % 3600) / 60, s % 60) {
        (0, 0, sec) => format!("{sec}s"),
        (0, m, sec) => format!("{m}m{sec:02}s"),
        (h, m, _) => format!("{h}h{m:02}m"),
    }
}

/// One progress line. `done` counts all finished steps (replayed ones included) out of
/// `total`; the rate is measured on the `live` steps requested in this session over
/// `elapsed` wall-clock seconds, so concurrency is already in it.
pub fn progress_line(
    arm: &str,
    arm_done: usize,
    arm_total: usize,
    done: usize,
    total: usize,
    live: usize,
    elapsed: f64,
) -> String {
    let mut line = format!("[{arm} {arm_done}/{arm_total}] {done}/{total} steps");
    if live > 0 {
        let per_step = elapsed / live as f64;
        let left = per_step * total.saturating_sub(done) as f64;
        line.push_str(&format!(
            ", {per_step:.2} s/step, ETA {}",
            duration_label(left)
        ));
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(duration_label(12.4), "12s");
        assert_eq!(duration_label(185.0), "3m05s");
        assert_eq!(duration_label(3720.0), "1h02m");
    }

    #[test]
    fn the_eta_uses_the_live_rate_for_the_remaining_steps() {
        assert_eq!(
            progress_line("no-mem", 3, 10, 13, 20, 4, 8.0),
            "[no-mem 3/10] 13/20 steps, 2.00 s/step, ETA 14s"
        );
        assert_eq!(progress_line("a", 0, 1, 0, 1, 0, 0.0), "[a 0/1] 0/1 steps");
    }
}
