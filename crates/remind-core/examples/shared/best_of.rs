//! The timing both of remind-core's benchmarks use: the best of a few runs, printed in
//! milliseconds. A run's best is the figure least moved by the rest of the machine.

use std::time::{Duration, Instant};

/// The best of `runs` runs of `work`, and what the last run returned.
pub fn best_of<T>(runs: usize, mut work: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs.max(1) {
        let started = Instant::now();
        let out = work();
        best = best.min(started.elapsed());
        last = Some(out);
    }
    (best, last.expect("at least one run"))
}

pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}
