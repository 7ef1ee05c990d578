//! The command line of remind-eval, parsed into an [`EvalConfig`] without side effects.
//!
//! clap reads the flags; the environment is passed in as a lookup, so filling in the
//! defaults that depend on it (or on other flags) is a pure function and every default
//! and override is unit-tested.

use std::error::Error as _;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Command, CommandFactory, FromArgMatches, Parser};

use crate::EvalError;
use crate::arm::ArmKind;
use crate::everyday::EverydayArm;
use remind_app::retry::RetryPolicy;
use remind_app::settings::{DEFAULT_BASE_URL, DEFAULT_MODEL, Endpoint};
use remind_core::prompt::{PromptMode, TokenBudget};

/// The scrambling stream has its own prompt; every other stream uses the lexical one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PromptChoice {
    Lexical,
    Scrambling,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EvalConfig {
    pub stream: PathBuf,
    pub templates: PathBuf,
    pub template_class: String,
    pub prompt: PromptChoice,
    pub limit: Option<usize>,
    pub p_feedback: f64,
    pub seed: u64,
    pub arms: Vec<ArmKind>,
    pub demos_k: usize,
    pub tau: f32,
    pub embedder_dir: Option<PathBuf>,
    pub endpoint: Endpoint,
    pub temperature: f32,
    pub budget: TokenBudget,
    pub retry: RetryPolicy,
    pub concurrency: usize,
    pub out: PathBuf,
    /// The everyday stream only: send follow-ups to the endpoint and judge answers
    /// (`false` with --retrieval-only).
    pub judge_answers: bool,
    /// The everyday stream's arms to replay, in this order.
    pub everyday_arms: Vec<EverydayArm>,
    /// The command as typed, for the reports.
    pub command_line: String,
}

/// The everyday stream's scenarios, beside the repository's other test fixtures.
pub const EVERYDAY_FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/everyday.jsonl"
);

impl EvalConfig {
    /// Whether the stream is the everyday scenarios rather than a paper task stream.
    pub fn is_everyday(&self) -> bool {
        self.stream
            .file_name()
            .is_some_and(|name| name.to_string_lossy().ends_with("everyday.jsonl"))
    }
}

// The flags as typed. Defaults that depend on another flag (the stream's class, the
// arms that can run without an embedder) or on the environment are left as `None` here
// and filled in by `into_config`, where they can be tested without a process.
#[derive(Parser, Debug)]
#[command(
    name = "remind-eval",
    about = "Replay the MemPrompt experiment against an OpenAI-compatible endpoint",
    long_about = None,
    // A repeated flag replaces the earlier value, so a wrapper script's defaults can be
    // overridden by appending flags.
    args_override_self = true
)]
struct Flags {
    /// Task file, or linguistic | hin | pun | scrambling | everyday [default: linguistic]
    #[arg(long, value_name = "PATH|NAME", help_heading = "Stream")]
    stream: Option<PathBuf>,
    /// Question templates [default: <data>/derived/templates.jsonl]
    #[arg(long, value_name = "PATH", help_heading = "Stream")]
    templates: Option<PathBuf>,
    /// The memprompt-data directory [default: ../shared/memprompt-data next to the repository]
    #[arg(long, value_name = "DIR", help_heading = "Stream")]
    data: Option<PathBuf>,
    /// Template class: linguistic, hin, pun or synthetic_gpt3 [default: from the stream's directory]
    #[arg(long, value_name = "NAME", help_heading = "Stream")]
    class: Option<String>,
    /// Few-shot prompt [default: from the stream]
    #[arg(long, value_name = "lexical|scrambling", value_parser = prompt_choice, help_heading = "Stream")]
    prompt: Option<PromptChoice>,
    /// Only the first N tasks
    #[arg(long, value_name = "N", value_parser = number::<usize>, help_heading = "Stream")]
    limit: Option<usize>,

    /// Chance of feedback after a misread
    #[arg(long = "pfb", value_name = "P", default_value_t = 1.0, value_parser = number::<f64>, help_heading = "Simulated user")]
    p_feedback: f64,
    /// Seeds the user's coin and is sent to the endpoint
    #[arg(long, value_name = "N", default_value_t = 2021, value_parser = number::<u64>, help_heading = "Simulated user")]
    seed: u64,

    #[arg(
        long,
        value_name = "LIST",
        value_parser = arm_list,
        help = format!(
            "Comma-separated arms out of {} [default: all that can run; the semantic ones need --embedder-dir]",
            ArmKind::ALL.map(ArmKind::name).join(", ")
        ),
        help_heading = "Arms"
    )]
    arms: Option<ArmList>,
    /// Demonstrations per prompt in the verified arms
    #[arg(long = "demos", value_name = "K", default_value_t = 3, value_parser = number::<usize>, help_heading = "Arms")]
    demos_k: usize,
    /// Cosine threshold of the semantic and hybrid retrievers
    #[arg(long, value_name = "T", default_value_t = 0.8, value_parser = number::<f32>, help_heading = "Arms")]
    tau: f32,
    /// Directory with model.onnx and vocab.txt (all-MiniLM-L6-v2)
    #[arg(long, value_name = "DIR", help_heading = "Arms")]
    embedder_dir: Option<PathBuf>,

    #[arg(
        long,
        value_name = "URL",
        help = format!("Endpoint base URL [env: REMIND_EVAL_BASE_URL] [default: {DEFAULT_BASE_URL}]"),
        help_heading = "Endpoint"
    )]
    base_url: Option<String>,
    /// Sent as a bearer token [env: REMIND_EVAL_API_KEY]
    #[arg(long, value_name = "KEY", help_heading = "Endpoint")]
    api_key: Option<String>,
    #[arg(
        long,
        value_name = "NAME",
        help = format!("Model name [env: REMIND_EVAL_MODEL] [default: {DEFAULT_MODEL}]"),
        help_heading = "Endpoint"
    )]
    model: Option<String>,
    /// Prompt format of the requests
    #[arg(long, value_name = "completion|chat", default_value = "completion", value_parser = prompt_mode, help_heading = "Endpoint")]
    mode: PromptMode,
    /// Sampling temperature
    #[arg(long, value_name = "T", default_value_t = 0.0, value_parser = number::<f32>, help_heading = "Endpoint")]
    temperature: f32,
    /// Reply tokens
    #[arg(long, value_name = "N", default_value_t = 96, value_parser = number::<usize>, help_heading = "Endpoint")]
    max_tokens: usize,
    /// Context size the prompt must fit
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = number::<usize>, help_heading = "Endpoint")]
    context_tokens: usize,
    /// Seconds per request
    #[arg(long = "timeout", value_name = "SECONDS", default_value_t = 120, value_parser = number::<u64>, help_heading = "Endpoint")]
    timeout_seconds: u64,
    /// Extra attempts after a transient failure
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = number::<u32>, help_heading = "Endpoint")]
    retries: u32,
    /// First wait before a retry, doubling after
    #[arg(long, value_name = "MS", default_value_t = 1000, value_parser = number::<u64>, help_heading = "Endpoint")]
    backoff_ms: u64,
    /// Arms run at once (0 counts as 1); steps within an arm are sequential
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = number::<usize>, help_heading = "Endpoint")]
    concurrency: usize,

    /// Directory for table.md, accuracy-<arm>.svg and steps.jsonl; rerunning with the same --out resumes
    #[arg(
        long,
        value_name = "DIR",
        default_value = "eval-out",
        help_heading = "Output"
    )]
    out: PathBuf,
    /// Everyday stream: measure which lessons attach without asking the endpoint for answers
    #[arg(long, help_heading = "Stream")]
    retrieval_only: bool,
    /// Everyday stream: replay only these arms (comma-separated) [default: every arm]
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        help_heading = "Stream"
    )]
    everyday_arms: Vec<EverydayArm>,
}

/// A whole `--arms` value: one type for the list, so a repeated `--arms` replaces the
/// list rather than adding to it.
#[derive(Clone, Debug)]
struct ArmList(Vec<ArmKind>);

/// The stream files the short names stand for, under the data directory.
fn named_stream(data: &Path, name: &str) -> Option<PathBuf> {
    if name == "everyday" {
        return Some(PathBuf::from(EVERYDAY_FIXTURE));
    }
    let relative = match name {
        "linguistic" | "lexical" => "tasks/linguistic/tasks_300.jsonl",
        "hin" | "hindi" => "tasks/hin/tasks_300.jsonl",
        "pun" | "punjabi" => "tasks/pun/tasks_300.jsonl",
        "scrambling" | "synthetic_gpt3" => "tasks/synthetic_gpt3/tasks_300.jsonl",
        _ => return None,
    };
    Some(data.join(relative))
}

/// The template class and prompt a stream file calls for, from its directory.
pub fn class_of_stream(stream: &Path) -> (&'static str, PromptChoice) {
    let parent = stream
        .parent()
        .and_then(Path::file_name)
        .and_then(|n| n.to_str())
        .unwrap_or("");
    match parent {
        "hin" => ("hin", PromptChoice::Lexical),
        "pun" => ("pun", PromptChoice::Lexical),
        "synthetic_gpt3" => ("synthetic_gpt3", PromptChoice::Scrambling),
        _ => ("linguistic", PromptChoice::Lexical),
    }
}

// The value parsers' messages follow the flag's name (see `usage_error`), so they read
// as "--limit needs a number, …".

/// Blanks around a number are forgiven: they come with values pasted from scripts.
fn number<T: FromStr>(value: &str) -> Result<T, String> {
    value
        .trim()
        .parse()
        .map_err(|_| format!("needs a number, got \"{value}\""))
}

fn prompt_choice(value: &str) -> Result<PromptChoice, String> {
    match value {
        "lexical" => Ok(PromptChoice::Lexical),
        "scrambling" => Ok(PromptChoice::Scrambling),
        other => Err(format!("is lexical or scrambling, not \"{other}\"")),
    }
}

fn prompt_mode(value: &str) -> Result<PromptMode, String> {
    PromptMode::NAMES.find(value).ok_or_else(|| {
        let names: Vec<&str> = PromptMode::NAMES.names().collect();
        format!("is {}, not \"{value}\"", names.join(" or "))
    })
}

/// Empty entries are skipped, so a trailing comma is harmless.
fn arm_list(value: &str) -> Result<ArmList, String> {
    let arms = value
        .split(',')
        .filter(|a| !a.trim().is_empty())
        .map(|a| {
            ArmKind::from_name(a).ok_or_else(|| {
                format!(
                    "names an unknown arm \"{}\"; the arms are {}",
                    a.trim(),
                    ArmKind::ALL.map(ArmKind::name).join(", ")
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    if arms.is_empty() {
        return Err("names no arm".into());
    }
    if arms.iter().enumerate().any(|(i, a)| arms[..i].contains(a)) {
        return Err("names an arm twice".into());
    }
    Ok(ArmList(arms))
}

/// The command line as clap sees it; `main` prints its help.
pub fn command() -> Command {
    // Every value may start with a dash (an API key, a negative number): the word after
    // a flag is always its value.
    Flags::command().mut_args(|arg| {
        if arg.get_action().takes_values() {
            arg.allow_hyphen_values(true)
        } else {
            arg
        }
    })
}

/// clap's error in the one-line wording of the tool's other usage errors, so `main`
/// reports every mistake the same way.
fn usage_error(error: &clap::Error) -> EvalError {
    let context = |kind| match error.get(kind) {
        Some(ContextValue::String(s)) => Some(s.as_str()),
        _ => None,
    };
    // clap names the flag with its placeholder ("--limit <N>"); the name alone reads better.
    let flag = context(ContextKind::InvalidArg).map(|a| a.split(' ').next().unwrap_or(a));
    let message = match (error.kind(), flag, error.source()) {
        (ErrorKind::UnknownArgument, Some(arg), _) if arg.starts_with("--") => {
            match context(ContextKind::SuggestedArg) {
                Some(similar) => format!("unknown flag {arg}; did you mean {similar}?"),
                None => format!("unknown flag {arg}"),
            }
        }
        (ErrorKind::UnknownArgument, Some(arg), _) => format!("unexpected argument \"{arg}\""),
        (ErrorKind::InvalidValue, Some(flag), _)
            if context(ContextKind::InvalidValue) == Some("") =>
        {
            format!("{flag} needs a value")
        }
        (ErrorKind::ValueValidation, Some(flag), Some(why)) => format!("{flag} {why}"),
        _ => {
            let rendered = error.render().to_string();
            let first = rendered.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_string()
        }
    };
    EvalError::Usage(message)
}

/// Parses the arguments (without the program name). `Ok(None)` means `--help`.
/// `env` looks up an environment variable; `data_default` is where memprompt-data is
/// when `--data` is not given.
pub fn parse_args<I>(
    args: I,
    env: &dyn Fn(&str) -> Option<String>,
    data_default: &Path,
) -> Result<Option<EvalConfig>, EvalError>
where
    I: IntoIterator,
    I::Item: Into<OsString>,
{
    let argv: Vec<OsString> = std::iter::once(OsString::from("remind-eval"))
        .chain(args.into_iter().map(Into::into))
        .collect();
    let command_line = argv
        .iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ");
    let flags = command()
        .try_get_matches_from(argv)
        .and_then(|matches| Flags::from_arg_matches(&matches));
    match flags {
        Ok(flags) => flags.into_config(env, data_default, command_line).map(Some),
        Err(e) if e.kind() == ErrorKind::DisplayHelp => Ok(None),
        Err(e) => Err(usage_error(&e)),
    }
}

impl Flags {
    fn into_config(
        self,
        env: &dyn Fn(&str) -> Option<String>,
        data_default: &Path,
        command_line: String,
    ) -> Result<EvalConfig, EvalError> {
        let data = self.data.unwrap_or_else(|| data_default.to_path_buf());
        let stream = match self.stream {
            None => named_stream(&data, "linguistic").unwrap_or_default(),
            Some(s) => s
                .to_str()
                .and_then(|name| named_stream(&data, name))
                .unwrap_or(s),
        };
        let (class, prompt) = class_of_stream(&stream);
        let arms = match self.arms {
            Some(ArmList(arms)) => arms,
            None => ArmKind::ALL
                .into_iter()
                .filter(|a| self.embedder_dir.is_some() || !a.needs_embeddings())
                .collect(),
        };
        if !(0.0..=1.0).contains(&self.p_feedback) {
            return Err(EvalError::Usage(format!(
                "--pfb is a probability between 0 and 1, got {}",
                self.p_feedback
            )));
        }
        let endpoint = Endpoint {
            base_url: self
                .base_url
                .or_else(|| env("REMIND_EVAL_BASE_URL"))
                .unwrap_or_else(|| DEFAULT_BASE_URL.into()),
            api_key: self.api_key.or_else(|| env("REMIND_EVAL_API_KEY")),
            model: self
                .model
                .or_else(|| env("REMIND_EVAL_MODEL"))
                .unwrap_or_else(|| DEFAULT_MODEL.into()),
            mode: self.mode,
            timeout_seconds: self.timeout_seconds,
        };
        endpoint.validate().map_err(EvalError::Usage)?;
        let backoff = Duration::from_millis(self.backoff_ms);
        Ok(EvalConfig {
            templates: self
                .templates
                .unwrap_or_else(|| data.join("derived/templates.jsonl")),
            template_class: self.class.unwrap_or_else(|| class.to_string()),
            prompt: self.prompt.unwrap_or(prompt),
            stream,
            limit: self.limit,
            p_feedback: self.p_feedback,
            seed: self.seed,
            arms,
            demos_k: self.demos_k,
            tau: self.tau,
            embedder_dir: self.embedder_dir,
            endpoint,
            temperature: self.temperature,
            budget: TokenBudget {
                context_tokens: self.context_tokens,
                reply_tokens: self.max_tokens,
            },
            retry: RetryPolicy::harness(self.retries, backoff),
            concurrency: self.concurrency.max(1),
            out: self.out,
            judge_answers: !self.retrieval_only,
            everyday_arms: if self.everyday_arms.is_empty() {
                EverydayArm::ALL.to_vec()
            } else {
                self.everyday_arms
            },
            command_line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(text: &str) -> Vec<String> {
        text.split_whitespace().map(str::to_string).collect()
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    fn parse(text: &str) -> Result<Option<EvalConfig>, EvalError> {
        parse_args(args(text), &no_env, Path::new("/data"))
    }

    #[test]
    fn the_defaults_replay_the_lexical_stream_with_every_arm_that_can_run() {
        let c = parse("").unwrap().unwrap();
        assert_eq!(
            c.stream,
            Path::new("/data/tasks/linguistic/tasks_300.jsonl")
        );
        assert_eq!(c.templates, Path::new("/data/derived/templates.jsonl"));
        assert_eq!(c.template_class, "linguistic");
        assert_eq!(c.prompt, PromptChoice::Lexical);
        assert_eq!(c.p_feedback, 1.0);
        assert_eq!(c.arms.len(), 6);
        assert!(c.arms.iter().all(|a| !a.needs_embeddings()));
        assert_eq!(c.endpoint.base_url, DEFAULT_BASE_URL);
        assert_eq!(c.retry.max_attempts, 4);
    }

    #[test]
    fn named_streams_pick_their_templates_and_prompt() {
        let c = parse("--stream scrambling").unwrap().unwrap();
        assert_eq!(c.template_class, "synthetic_gpt3");
        assert_eq!(c.prompt, PromptChoice::Scrambling);
        let c = parse("--stream /x/pun/tasks_100.jsonl --limit 7")
            .unwrap()
            .unwrap();
        assert_eq!(c.template_class, "pun");
        assert_eq!(c.limit, Some(7));
    }

    #[test]
    fn the_everyday_stream_is_named_and_judges_answers_unless_told_not_to() {
        let c = parse("--stream everyday").unwrap().unwrap();
        assert!(c.is_everyday());
        assert!(
            std::path::Path::new(&c.stream).exists(),
            "{}",
            c.stream.display()
        );
        assert!(c.judge_answers);
        assert_eq!(c.command_line, "remind-eval --stream everyday");
        let c = parse("--stream everyday --retrieval-only")
            .unwrap()
            .unwrap();
        assert!(!c.judge_answers);
        assert_eq!(c.everyday_arms, EverydayArm::ALL);
        let c = parse("--stream everyday --everyday-arms no-memory,chosen-scopes")
            .unwrap()
            .unwrap();
        assert_eq!(
            c.everyday_arms,
            [EverydayArm::NoMemory, EverydayArm::ChosenScopes]
        );
        assert!(!parse("--stream scrambling").unwrap().unwrap().is_everyday());
    }

    #[test]
    fn flags_override_the_environment() {
        let env = |name: &str| match name {
            "REMIND_EVAL_BASE_URL" => Some("http://env:1/v1".to_string()),
            "REMIND_EVAL_MODEL" => Some("env-model".to_string()),
            _ => None,
        };
        let c = parse_args(args("--model flag-model"), &env, Path::new("/d"))
            .unwrap()
            .unwrap();
        assert_eq!(c.endpoint.base_url, "http://env:1/v1");
        assert_eq!(c.endpoint.model, "flag-model");
    }

    #[test]
    fn a_repeated_flag_replaces_the_earlier_one_and_a_value_may_start_with_a_dash() {
        let c = parse("--seed 1 --arms no-mem --seed 2 --arms verified --api-key -k")
            .unwrap()
            .unwrap();
        assert_eq!(c.seed, 2);
        assert_eq!(
            c.arms,
            [ArmKind::Verified(crate::arm::DemoSelection::Levenshtein)]
        );
        assert_eq!(c.endpoint.api_key.as_deref(), Some("-k"));
    }

    #[test]
    fn blanks_around_a_number_are_forgiven() {
        assert_eq!(number::<usize>(" 7 "), Ok(7));
    }

    #[test]
    fn bad_flags_say_what_is_wrong() {
        for (text, says) in [
            ("--arms no-mem,mem-prompt", "unknown arm"),
            ("--pfb 2", "probability"),
            ("--limit x", "needs a number"),
            ("--mode fast", "completion or chat"),
            ("--bogus 1", "unknown flag"),
            ("--limit", "needs a value"),
            ("--base-url localhost:1", "http://"),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
        assert!(parse("--help").unwrap().is_none());
    }
}
