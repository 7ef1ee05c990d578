//! remind-eval: the command that replays the MemPrompt experiment against an endpoint.
//!
//! Only the process boundary lives here (arguments, environment, exit code); the
//! harness itself is the `remind_eval` library.

use std::path::Path;
use std::process::ExitCode;

use remind_eval::{parse_args, run};

fn main() -> ExitCode {
    // A variable set but blank (as `export X=` leaves it) counts as unset, so the default holds.
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    // The data set sits next to the repository (see memprompt-data's README).
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/memprompt-data");
    let config = match parse_args(std::env::args_os().skip(1), &env, &data) {
        Ok(Some(config)) => config,
        Ok(None) => {
            return match remind_eval::config::command().print_help() {
                Ok(()) => ExitCode::SUCCESS,
                Err(_) => ExitCode::FAILURE,
            };
        }
        Err(e) => {
            eprintln!("remind-eval: {e}");
            return ExitCode::from(2);
        }
    };
    match run(&config) {
        Ok(report) => {
            eprintln!(
                "{} steps replayed from the log, {} requested; wrote {}",
                report.replayed_steps,
                report.requested_steps,
                report.table_path.display()
            );
            if report.stopped_arms.is_empty() {
                ExitCode::SUCCESS
            } else {
                for e in &report.stopped_arms {
                    eprintln!("remind-eval: {e}");
                }
                ExitCode::FAILURE
            }
        }
        Err(e) => {
            eprintln!("remind-eval: {e}");
            ExitCode::FAILURE
        }
    }
}
