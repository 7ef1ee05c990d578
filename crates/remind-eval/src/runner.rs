//! Runs the arms: replays what the log already holds, requests the rest, writes reports.
//!
//! Arms run on up to `--concurrency` threads; within an arm steps are sequential,
//! because each step's prompt depends on the feedback of the steps before it. Every
//! judged step is appended to `steps.jsonl` at once, so a run stopped at any point
//! resumes where it stopped without repeating a request.

use std::collections::{HashMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Instant;

use crate::EvalError;
use crate::accuracy_plot::render_svg;
use crate::answer_match::answer_is_correct;
use crate::arm::{ArmKind, ArmSettings, ArmState, Judgement, PreparedStep};
use crate::blocking_http_llm::{BlockingHttpLlm, Sent};
use crate::config::EvalConfig;
use crate::everyday::{
    AskEndpoint, EverydayArm, EverydayRun, EverydaySettings, ProbeOutcome, Round, SuggestionAnswer,
    headline, parse_scenarios, render_report, replay_arm,
};
use crate::metrics::{ArmMetrics, arm_metrics};
use crate::progress::progress_line;
use crate::step_log::{self, MemoryHit, StepRecord};
use crate::stream_source::{base_prompt, load_tasks, read_text};
use crate::table::{RunDescription, render_table};
use crate::task_stream::RenderedTask;
use remind_app::ports::{Completion, CompletionRequest, EmbedError, Embedder, Ending};
use remind_core::prompt::PromptMode;
use remind_core::reply::{ParsedReply, parse_reply};
use remind_embedder::tract_embedder::TractEmbedder;

/// What a run produced. `stopped_arms` holds the arms that could not finish (their
/// steps so far are logged and count in `metrics`).
#[derive(Debug)]
pub struct RunReport {
    pub metrics: Vec<ArmMetrics>,
    pub stopped_arms: Vec<EvalError>,
    pub table_path: PathBuf,
    /// Steps taken from the log instead of requested.
    pub replayed_steps: usize,
    /// Steps requested in this run.
    pub requested_steps: usize,
}

struct ArmJob {
    state: ArmState,
    next: usize,
}

struct Shared<'a> {
    tasks: &'a [RenderedTask],
    embeddings: &'a [Option<Vec<f32>>],
    config: &'a EvalConfig,
    llm: BlockingHttpLlm,
    log: Mutex<File>,
    log_path: PathBuf,
    progress: Mutex<Progress>,
}

struct Progress {
    done: usize,
    total: usize,
    live: usize,
    started: Instant,
}

fn write_file(path: &Path, text: &str) -> Result<(), EvalError> {
    std::fs::write(path, text).map_err(|source| EvalError::Write {
        path: path.to_path_buf(),
        source,
    })
}

pub fn run(config: &EvalConfig) -> Result<RunReport, EvalError> {
    if config.is_everyday() {
        return run_everyday(config);
    }
    let tasks = load_tasks(config)?;
    let base = base_prompt(config.prompt);
    let embeddings = embed_questions(config, &tasks)?;
    std::fs::create_dir_all(&config.out).map_err(|source| EvalError::Write {
        path: config.out.clone(),
        source,
    })?;
    let log_path = config.out.join("steps.jsonl");
    let logged = read_log(&log_path)?;
    let logged_by_arm = step_log::by_arm(&logged);

    let settings = ArmSettings {
        mode: config.endpoint.mode,
        budget: config.budget,
        temperature: config.temperature,
        demos_k: config.demos_k,
        tau: config.tau,
        p_feedback: config.p_feedback,
        seed: config.seed,
    };
    let mut jobs = VecDeque::new();
    let mut replayed_steps = 0;
    for &kind in &config.arms {
        let mut state = ArmState::new(kind, base.clone(), settings.clone());
        let mut next = 0;
        if let Some(steps) = logged_by_arm.get(kind.name()) {
            while next < tasks.len() {
                let Some(record) = steps.get(&next) else {
                    break;
                };
                replay_step(
                    &mut state,
                    next,
                    &tasks[next],
                    embedding_for(kind, &embeddings, next),
                    record,
                )?;
                next += 1;
            }
        }
        replayed_steps += next;
        jobs.push_back(ArmJob { state, next });
    }

    let log = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|source| EvalError::Write {
            path: log_path.clone(),
            source,
        })?;
    let total = tasks.len() * config.arms.len();
    let shared = Shared {
        tasks: &tasks,
        embeddings: &embeddings,
        config,
        llm: BlockingHttpLlm::new(Some(config.seed)),
        log: Mutex::new(log),
        log_path: log_path.clone(),
        progress: Mutex::new(Progress {
            done: replayed_steps,
            total,
            live: 0,
            started: Instant::now(),
        }),
    };
    if replayed_steps > 0 {
        eprintln!(
            "resuming: {replayed_steps} of {total} steps replayed from {}",
            log_path.display()
        );
    }
    let queue = Mutex::new(jobs);
    let stopped: Mutex<Vec<EvalError>> = Mutex::new(Vec::new());
    let workers = config.concurrency.min(config.arms.len()).max(1);
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    let job = queue.lock().map(|mut q| q.pop_front()).unwrap_or(None);
                    let Some(job) = job else { break };
                    if let Err(e) = run_arm(&shared, job) {
                        eprintln!("{e}");
                        if let Ok(mut s) = stopped.lock() {
                            s.push(e);
                        }
                    }
                }
            });
        }
    });
    let requested_steps = shared.progress.lock().map(|p| p.live).unwrap_or(0);
    let stopped_arms = stopped.into_inner().unwrap_or_default();

    // The reports are computed from the log alone, as a later reader would.
    let final_log = read_log(&log_path)?;
    let final_by_arm = step_log::by_arm(&final_log);
    let metrics: Vec<ArmMetrics> = config
        .arms
        .iter()
        .map(|kind| {
            let steps: Vec<StepRecord> = final_by_arm
                .get(kind.name())
                .map(|s| s.range(..tasks.len()).map(|(_, r)| r.clone()).collect())
                .unwrap_or_default();
            arm_metrics(kind.name(), &steps)
        })
        .collect();
    let run = RunDescription {
        stream: config.stream.display().to_string(),
        steps: tasks.len(),
        model: config.endpoint.model.clone(),
        mode: format!("{:?}", config.endpoint.mode).to_lowercase(),
        p_feedback: config.p_feedback,
        seed: config.seed,
    };
    let table_path = config.out.join("table.md");
    write_file(&table_path, &render_table(&run, &metrics))?;
    let subtitle = format!(
        "{} steps, P(fb) = {}, {}",
        tasks.len(),
        config.p_feedback,
        config.endpoint.model
    );
    for m in &metrics {
        write_file(
            &config.out.join(format!("accuracy-{}.svg", m.arm)),
            &render_svg(&m.arm, &subtitle, &m.running_accuracy),
        )?;
    }
    Ok(RunReport {
        metrics,
        stopped_arms,
        table_path,
        replayed_steps,
        requested_steps,
    })
}

/// The log's records; a line cut off by a killed run is removed from the file so the
/// next append starts on a fresh line.
fn read_log(path: &Path) -> Result<Vec<StepRecord>, EvalError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    let text = read_text(path)?;
    let parsed = step_log::parse_log(&text).map_err(|bad| EvalError::BadLog {
        path: path.to_path_buf(),
        line: bad.line,
        reason: bad.reason,
    })?;
    if parsed.complete_len < text.len() {
        eprintln!(
            "{}: dropping an unfinished last line left by an interrupted run",
            path.display()
        );
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(parsed.complete_len as u64));
        file.map_err(|source| EvalError::Write {
            path: path.to_path_buf(),
            source,
        })?;
    }
    Ok(parsed.records)
}

/// The everyday stream: every arm over the scenarios, one report (`everyday.md`) and
/// every probe's outcome (`everyday-probes.jsonl`) in `--out`.
fn run_everyday(config: &EvalConfig) -> Result<RunReport, EvalError> {
    let scenarios =
        parse_scenarios(&read_text(&config.stream)?).map_err(|source| EvalError::Scenarios {
            path: config.stream.clone(),
            source,
        })?;
    let Some(dir) = &config.embedder_dir else {
        return Err(EvalError::EverydayNeedsEmbedder);
    };
    let embedder = load_embedder(dir)?;
    let mut cache: HashMap<String, Vec<f32>> = HashMap::new();
    let mut embed = |text: &str| -> Result<Vec<f32>, EmbedError> {
        if let Some(vector) = cache.get(text) {
            return Ok(vector.clone());
        }
        let vector = embedder.embed(text)?;
        cache.insert(text.to_string(), vector.clone());
        Ok(vector)
    };
    let llm = BlockingHttpLlm::new(Some(config.seed));
    std::fs::create_dir_all(&config.out).map_err(|source| EvalError::Write {
        path: config.out.clone(),
        source,
    })?;
    // Every answer is kept by its prompt as it arrives: a run the endpoint stopped
    // resumes from there, and a prompt two arms share is asked once.
    let answers_path = config.out.join("everyday-answers.jsonl");
    let mut answers = read_answers(&answers_path);
    let mut requested = 0;
    let mut ask = |request: &CompletionRequest| {
        let prompt = request.prompt.display_text();
        if let Some(known) = answers.get(&prompt) {
            return Ok(known.clone());
        }
        requested += 1;
        eprint!("\r{requested} answers requested");
        let completion = llm
            .complete_with_retries(&config.endpoint, request, &config.retry)
            .map(|sent| sent.completion)
            .map_err(|(_, error)| error)?;
        keep_answer(&answers_path, &prompt, &completion);
        answers.insert(prompt, completion.clone());
        Ok(completion)
    };
    let settings = EverydaySettings {
        tau: config.tau,
        mode: config.endpoint.mode,
        budget: config.budget,
        temperature: config.temperature,
    };
    let mut outcomes = Vec::new();
    for &arm in &config.everyday_arms {
        eprintln!("everyday: {}", arm.name());
        let judge: Option<AskEndpoint<'_>> = if config.judge_answers {
            Some(&mut ask)
        } else {
            None
        };
        outcomes.push(replay_arm(arm, &scenarios, &settings, &mut embed, judge)?);
    }
    eprintln!();
    std::fs::create_dir_all(&config.out).map_err(|source| EvalError::Write {
        path: config.out.clone(),
        source,
    })?;
    let probes: String = outcomes
        .iter()
        .flat_map(|o| o.probes.iter().map(move |p| probe_line(o.arm, p)))
        .collect();
    write_file(&config.out.join("everyday-probes.jsonl"), &probes)?;
    let run = EverydayRun {
        command: config.command_line.clone(),
        model: config.endpoint.model.clone(),
        mode: PromptMode::NAMES.name(config.endpoint.mode).to_string(),
        tau: config.tau,
        answers_judged: config.judge_answers,
    };
    let table_path = config.out.join("everyday.md");
    write_file(&table_path, &render_report(&run, &outcomes))?;
    if let Some(headline) = headline(&outcomes) {
        eprintln!("{}", headline.summary_line());
    }
    Ok(RunReport {
        metrics: Vec::new(),
        stopped_arms: Vec::new(),
        table_path,
        replayed_steps: 0,
        requested_steps: requested,
    })
}

/// The answers an earlier run of the everyday stream kept, by prompt; none if there is
/// no such file. A line that does not read (a run cut mid-write) is skipped.
fn read_answers(path: &Path) -> HashMap<String, Completion> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
        .filter_map(|v| {
            Some((
                v["prompt"].as_str()?.to_string(),
                Completion {
                    text: v["text"].as_str()?.to_string(),
                    ending: if v["stopped"].as_bool()? {
                        Ending::StopSequence
                    } else {
                        Ending::Finished
                    },
                },
            ))
        })
        .collect()
}

/// Appends one answer to the kept answers. Losing it only costs asking again.
fn keep_answer(path: &Path, prompt: &str, completion: &Completion) {
    use std::io::Write;
    let line = serde_json::json!({
        "prompt": prompt,
        "text": completion.text,
        "stopped": completion.at_stop_sequence(),
    });
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| writeln!(file, "{line}"));
    if let Err(error) = written {
        eprintln!(
            "\nremind-eval: could not keep an answer in {}: {error}",
            path.display()
        );
    }
}

fn probe_line(arm: EverydayArm, probe: &ProbeOutcome) -> String {
    let line = serde_json::json!({
        "arm": arm.name(),
        "scenario": probe.scenario,
        "kind": probe.kind,
        "question": probe.question,
        "round": match probe.round { Round::First => 1, Round::Second => 2 },
        "should_apply": probe.should_apply,
        "applied_from": probe.applied_from,
        "suggested_from": probe.suggested_from,
        "suggestion_answer": probe.suggestion_answer.map(|a| match a {
            SuggestionAnswer::Accepted => "accepted",
            SuggestionAnswer::Declined => "declined",
        }),
        "leaked": probe.leaked,
        "taught_again": probe.taught_again,
        "wrongly_applied": probe.wrongly_applied(),
        "obeyed": probe.obeyed,
        "answer": probe.answer,
        "prompt_tokens": probe.prompt_tokens,
    });
    format!("{line}\n")
}

fn load_embedder(dir: &Path) -> Result<TractEmbedder, EvalError> {
    let model_path = dir.join("model.onnx");
    let onnx = std::fs::read(&model_path).map_err(|source| EvalError::Read {
        path: model_path.clone(),
        source,
    })?;
    let vocab = read_text(&dir.join("vocab.txt"))?;
    Ok(TractEmbedder::new(
        &format!("minilm-{}", onnx.len()),
        &onnx,
        &vocab,
    )?)
}

fn embed_questions(
    config: &EvalConfig,
    tasks: &[RenderedTask],
) -> Result<Vec<Option<Vec<f32>>>, EvalError> {
    if let Some(arm) = config.arms.iter().find(|a| a.needs_embeddings())
        && config.embedder_dir.is_none()
    {
        return Err(EvalError::NeedsEmbedder {
            arm: arm.name().to_string(),
        });
    }
    let Some(dir) = &config.embedder_dir else {
        return Ok(vec![None; tasks.len()]);
    };
    if !config.arms.iter().any(|a| a.uses_embeddings()) {
        return Ok(vec![None; tasks.len()]);
    }
    let embedder = load_embedder(dir)?;
    eprintln!(
        "embedding {} questions with {}",
        tasks.len(),
        embedder.model_id()
    );
    tasks
        .iter()
        .map(|t| {
            embedder
                .embed(&t.question)
                .map(Some)
                .map_err(EvalError::from)
        })
        .collect()
}

fn embedding_for(kind: ArmKind, embeddings: &[Option<Vec<f32>>], index: usize) -> Option<&[f32]> {
    if !kind.uses_embeddings() {
        return None;
    }
    embeddings.get(index).and_then(|e| e.as_deref())
}

/// Rebuilds one step's effect on the arm from its log line, checking that the log
/// belongs to this stream and these settings.
fn replay_step(
    state: &mut ArmState,
    index: usize,
    task: &RenderedTask,
    embedding: Option<&[f32]>,
    record: &StepRecord,
) -> Result<(), EvalError> {
    let arm = state.kind().name().to_string();
    let mismatch = |what: String| EvalError::LogMismatch {
        arm: arm.clone(),
        index,
        what,
    };
    if record.question != task.question {
        return Err(mismatch(format!(
            "it asked \"{}\", the stream asks \"{}\"",
            record.question, task.question
        )));
    }
    let prepared = state
        .prepare(task, embedding)
        .map_err(|source| EvalError::Prompt {
            arm: arm.clone(),
            index,
            source,
        })?;
    if prepared.request.prompt.display_text() != record.prompt {
        return Err(mismatch(
            "the prompt built now differs from the logged one".into(),
        ));
    }
    let reply = parse_reply(prepared.form, &record.completion, record.stopped);
    let judged = state.observe(index, task, embedding, &reply);
    if judged.feedback != record.feedback {
        return Err(mismatch(
            "the simulated user's feedback differs (another --pfb or --seed?)".into(),
        ));
    }
    Ok(())
}

fn run_arm(shared: &Shared<'_>, job: ArmJob) -> Result<(), EvalError> {
    let ArmJob { mut state, next } = job;
    let kind = state.kind();
    let arm = kind.name();
    for index in next..shared.tasks.len() {
        let started = Instant::now();
        let task = &shared.tasks[index];
        let embedding = embedding_for(kind, shared.embeddings, index);
        let prepared = state
            .prepare(task, embedding)
            .map_err(|source| EvalError::Prompt {
                arm: arm.to_string(),
                index,
                source,
            })?;
        let sent = shared
            .llm
            .complete_with_retries(
                &shared.config.endpoint,
                &prepared.request,
                &shared.config.retry,
            )
            .map_err(|(attempts, source)| EvalError::Llm {
                arm: arm.to_string(),
                index,
                attempts,
                source,
            })?;
        let reply = parse_reply(
            prepared.form,
            &sent.completion.text,
            sent.completion.at_stop_sequence(),
        );
        let judged = state.observe(index, task, embedding, &reply);
        let record = step_record(
            arm,
            index,
            task,
            &prepared,
            &sent,
            &reply,
            &judged,
            started.elapsed().as_secs_f64(),
        );
        let line = step_log::render_line(&record);
        let written = shared
            .log
            .lock()
            .map_err(|_| std::io::Error::other("another arm panicked while writing the log"))
            .and_then(|mut f| f.write_all(line.as_bytes()).and_then(|()| f.flush()));
        written.map_err(|source| EvalError::Write {
            path: shared.log_path.clone(),
            source,
        })?;
        if let Ok(mut p) = shared.progress.lock() {
            p.done += 1;
            p.live += 1;
            eprintln!(
                "{}",
                progress_line(
                    arm,
                    index + 1,
                    shared.tasks.len(),
                    p.done,
                    p.total,
                    p.live,
                    p.started.elapsed().as_secs_f64()
                )
            );
        }
    }
    Ok(())
}

/// The log line of one judged step.
#[allow(clippy::too_many_arguments)]
fn step_record(
    arm: &str,
    index: usize,
    task: &RenderedTask,
    prepared: &PreparedStep,
    sent: &Sent,
    reply: &ParsedReply,
    judged: &Judgement,
    seconds: f64,
) -> StepRecord {
    StepRecord {
        arm: arm.to_string(),
        index,
        line: task.line,
        task_type: task.task_type.code().to_string(),
        question: task.question.clone(),
        query: prepared.query.clone(),
        prompt: prepared.request.prompt.display_text(),
        prompt_tokens: prepared.request.prompt.estimated_tokens(),
        completion: sent.completion.text.clone(),
        stopped: sent.completion.at_stop_sequence(),
        understanding: reply.understanding.clone(),
        answer: reply.answer.clone(),
        problems: reply.problems.clone(),
        memory: prepared.memory.as_ref().map(|m| MemoryHit {
            question: m.question.clone(),
            clarification: m.clarification.clone(),
            score: m.score,
            lesson_type: m.lesson_type.map(|t| t.code().to_string()),
            right_type: m.lesson_type == Some(task.task_type),
        }),
        demonstrations: prepared.demonstrations.clone(),
        understood: judged.understood,
        answer_correct: answer_is_correct(task, reply.answer.as_deref()),
        feedback: judged.feedback.clone(),
        attempts: sent.attempts,
        errors: sent.errors.clone(),
        seconds,
    }
}
