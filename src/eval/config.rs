//! The command line of remind-eval, parsed into an [`EvalConfig`] without side effects.
//!
//! The environment is passed in as a lookup, so parsing is a pure function and every
//! default and override is unit-tested.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::app::settings::{DEFAULT_BASE_URL, DEFAULT_MODEL, Endpoint};
use crate::domain::prompt::{PromptMode, TokenBudget};
use crate::eval::EvalError;
use crate::eval::arm::ArmKind;
use crate::eval::retry_policy::RetryPolicy;

pub const USAGE: &str = "\
remind-eval: replay the MemPrompt experiment against an OpenAI-compatible endpoint

USAGE: remind-eval [FLAGS]

Stream
  --stream PATH|NAME     task file, or linguistic | hin | pun | scrambling
                         (default: linguistic = <data>/tasks/linguistic/tasks_300.jsonl)
  --templates PATH       question templates (default <data>/derived/templates.jsonl)
  --data DIR             the memprompt-data directory (default ../shared/memprompt-data
                         next to the repository)
  --class NAME           template class (default from the stream path: linguistic, hin,
                         pun, synthetic_gpt3)
  --prompt lexical|scrambling   few-shot prompt (default from the stream)
  --limit N              only the first N tasks
Simulated user
  --pfb P                chance of feedback after a misread (default 1.0)
  --seed N               seeds the user's coin and is sent to the endpoint (default 2021)
Arms
  --arms LIST            comma-separated: no-mem, grow-prompt, mem-prompt-lev,
                         mem-prompt-hybrid, mem-prompt-semantic, verified,
                         verified-semantic, verified-recency
                         (default: all that can run; the semantic ones need --embedder-dir)
  --demos K              demonstrations per prompt in the verified arms (default 3)
  --tau T                cosine threshold of the semantic/hybrid retrievers (default 0.8)
  --embedder-dir DIR     directory with model.onnx and vocab.txt (all-MiniLM-L6-v2)
Endpoint (flags override REMIND_EVAL_BASE_URL, REMIND_EVAL_API_KEY, REMIND_EVAL_MODEL)
  --base-url URL         default http://127.0.0.1:8081/v1
  --api-key KEY
  --model NAME
  --mode completion|chat (default completion)
  --temperature T        (default 0)
  --max-tokens N         reply tokens (default 96)
  --context-tokens N     context size the prompt must fit (default 4096)
  --timeout SECONDS      per request (default 120)
  --retries N            extra attempts after a transient failure (default 3)
  --backoff-ms MS        first wait before a retry, doubling after (default 1000)
  --concurrency N        arms run at once (default 1); steps within an arm are sequential
Output
  --out DIR              table.md, accuracy-<arm>.svg, steps.jsonl (default eval-out).
                         Rerunning with the same --out resumes from steps.jsonl.
  --help
";

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
}

/// The stream files the short names stand for, under the data directory.
fn named_stream(data: &Path, name: &str) -> Option<PathBuf> {
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

fn number<T: std::str::FromStr>(flag: &str, value: &str) -> Result<T, EvalError> {
    value
        .trim()
        .parse()
        .map_err(|_| EvalError::Usage(format!("{flag} needs a number, got \"{value}\"")))
}

/// Parses the arguments (without the program name). `Ok(None)` means `--help`.
/// `env` looks up an environment variable; `data_default` is where memprompt-data is
/// when `--data` is not given.
pub fn parse_args(
    args: &[String],
    env: &dyn Fn(&str) -> Option<String>,
    data_default: &Path,
) -> Result<Option<EvalConfig>, EvalError> {
    let mut flags: Vec<(String, String)> = Vec::new();
    let mut iter = args.iter();
    while let Some(arg) = iter.next() {
        if arg == "--help" || arg == "-h" {
            return Ok(None);
        }
        let Some(name) = arg.strip_prefix("--") else {
            return Err(EvalError::Usage(format!("unexpected argument \"{arg}\"")));
        };
        let (name, value) = match name.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => {
                let value = iter
                    .next()
                    .ok_or_else(|| EvalError::Usage(format!("--{name} needs a value")))?;
                (name.to_string(), value.clone())
            }
        };
        flags.push((name, value));
    }
    let get = |name: &str| {
        flags
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    const KNOWN: [&str; 25] = [
        "stream",
        "templates",
        "data",
        "class",
        "prompt",
        "limit",
        "pfb",
        "seed",
        "arms",
        "demos",
        "tau",
        "embedder-dir",
        "base-url",
        "api-key",
        "model",
        "mode",
        "temperature",
        "max-tokens",
        "context-tokens",
        "timeout",
        "retries",
        "backoff-ms",
        "concurrency",
        "out",
        "help",
    ];
    if let Some((unknown, _)) = flags.iter().find(|(n, _)| !KNOWN.contains(&n.as_str())) {
        return Err(EvalError::Usage(format!("unknown flag --{unknown}")));
    }

    let data = get("data").map_or_else(|| data_default.to_path_buf(), PathBuf::from);
    let stream = match get("stream") {
        None => named_stream(&data, "linguistic").unwrap_or_default(),
        Some(s) => named_stream(&data, &s).unwrap_or_else(|| PathBuf::from(s)),
    };
    let (class, prompt) = class_of_stream(&stream);
    let prompt = match get("prompt").as_deref() {
        None => prompt,
        Some("lexical") => PromptChoice::Lexical,
        Some("scrambling") => PromptChoice::Scrambling,
        Some(other) => {
            return Err(EvalError::Usage(format!(
                "--prompt is lexical or scrambling, not \"{other}\""
            )));
        }
    };
    let embedder_dir = get("embedder-dir").map(PathBuf::from);
    let arms = match get("arms") {
        Some(list) => list
            .split(',')
            .filter(|a| !a.trim().is_empty())
            .map(|a| {
                ArmKind::from_name(a).ok_or_else(|| {
                    EvalError::Usage(format!(
                        "unknown arm \"{}\"; the arms are {}",
                        a.trim(),
                        ArmKind::ALL.map(ArmKind::name).join(", ")
                    ))
                })
            })
            .collect::<Result<Vec<_>, _>>()?,
        None => ArmKind::ALL
            .into_iter()
            .filter(|a| embedder_dir.is_some() || !a.needs_embeddings())
            .collect(),
    };
    if arms.is_empty() {
        return Err(EvalError::Usage("--arms names no arm".into()));
    }
    if arms.iter().enumerate().any(|(i, a)| arms[..i].contains(a)) {
        return Err(EvalError::Usage("--arms names an arm twice".into()));
    }
    let p_feedback: f64 = get("pfb").map_or(Ok(1.0), |v| number("--pfb", &v))?;
    if !(0.0..=1.0).contains(&p_feedback) {
        return Err(EvalError::Usage(format!(
            "--pfb is a probability between 0 and 1, got {p_feedback}"
        )));
    }
    let mode = match get("mode").as_deref() {
        None | Some("completion") => PromptMode::Completion,
        Some("chat") => PromptMode::Chat,
        Some(other) => {
            return Err(EvalError::Usage(format!(
                "--mode is completion or chat, not \"{other}\""
            )));
        }
    };
    let endpoint = Endpoint {
        base_url: get("base-url")
            .or_else(|| env("REMIND_EVAL_BASE_URL"))
            .unwrap_or_else(|| DEFAULT_BASE_URL.into()),
        api_key: get("api-key").or_else(|| env("REMIND_EVAL_API_KEY")),
        model: get("model")
            .or_else(|| env("REMIND_EVAL_MODEL"))
            .unwrap_or_else(|| DEFAULT_MODEL.into()),
        mode,
        timeout_seconds: get("timeout").map_or(Ok(120), |v| number("--timeout", &v))?,
    };
    endpoint.validate().map_err(EvalError::Usage)?;
    let retries: u32 = get("retries").map_or(Ok(3), |v| number("--retries", &v))?;
    let backoff_ms: u64 = get("backoff-ms").map_or(Ok(1000), |v| number("--backoff-ms", &v))?;
    let concurrency: usize = get("concurrency").map_or(Ok(1), |v| number("--concurrency", &v))?;
    Ok(Some(EvalConfig {
        templates: get("templates")
            .map_or_else(|| data.join("derived/templates.jsonl"), PathBuf::from),
        template_class: get("class").unwrap_or_else(|| class.to_string()),
        prompt,
        stream,
        limit: get("limit").map(|v| number("--limit", &v)).transpose()?,
        p_feedback,
        seed: get("seed").map_or(Ok(2021), |v| number("--seed", &v))?,
        arms,
        demos_k: get("demos").map_or(Ok(3), |v| number("--demos", &v))?,
        tau: get("tau").map_or(Ok(0.8), |v| number("--tau", &v))?,
        embedder_dir,
        endpoint,
        temperature: get("temperature").map_or(Ok(0.0), |v| number("--temperature", &v))?,
        budget: TokenBudget {
            context_tokens: get("context-tokens")
                .map_or(Ok(4096), |v| number("--context-tokens", &v))?,
            reply_tokens: get("max-tokens").map_or(Ok(96), |v| number("--max-tokens", &v))?,
        },
        retry: RetryPolicy {
            max_attempts: retries.saturating_add(1),
            base_delay: Duration::from_millis(backoff_ms),
            max_delay: Duration::from_secs(60).max(Duration::from_millis(backoff_ms)),
        },
        concurrency: concurrency.max(1),
        out: get("out").map_or_else(|| PathBuf::from("eval-out"), PathBuf::from),
    }))
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
        parse_args(&args(text), &no_env, Path::new("/data"))
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
    fn flags_override_the_environment() {
        let env = |name: &str| match name {
            "REMIND_EVAL_BASE_URL" => Some("http://env:1/v1".to_string()),
            "REMIND_EVAL_MODEL" => Some("env-model".to_string()),
            _ => None,
        };
        let c = parse_args(&args("--model flag-model"), &env, Path::new("/d"))
            .unwrap()
            .unwrap();
        assert_eq!(c.endpoint.base_url, "http://env:1/v1");
        assert_eq!(c.endpoint.model, "flag-model");
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
