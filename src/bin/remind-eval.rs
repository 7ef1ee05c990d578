//! remind-eval: the command that replays the MemPrompt experiment against an endpoint.
//!
//! Only the process boundary lives here (arguments, environment, exit code); the
//! harness itself is `remind::eval`. It is a native tool: built for the browser
//! target (as `--all-targets` does) it is an empty program.

#[cfg(target_arch = "wasm32")]
fn main() {}

#[cfg(not(target_arch = "wasm32"))]
fn main() -> std::process::ExitCode {
    use std::path::Path;
    use std::process::ExitCode;

    use remind::eval::config::USAGE;
    use remind::eval::{parse_args, run};

    let args: Vec<String> = std::env::args().skip(1).collect();
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    // The data set sits next to the repository (see memprompt-data's README).
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/memprompt-data");
    let config = match parse_args(&args, &env, &data) {
        Ok(Some(config)) => config,
        Ok(None) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
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
