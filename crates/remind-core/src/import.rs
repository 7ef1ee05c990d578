//! Reading an export document back: the whole file is validated before anything of
//! it is used, and every problem is named by its JSON path.
//!
//! The file comes from outside (another browser, a backup, a hand edit, an attacker),
//! so parsing never panics, has a size limit, refuses control characters, and passes
//! every stored text (question, clarification, an example's understanding and answer,
//! history records included) through the write gate's secret and length checks. Each
//! record's key must be the one the memory computes from its question, since the key
//! decides which questions a lesson is applied to. The history the file describes must
//! be consistent (ids unique, supersede links pointing at records that exist and agree,
//! at most one current record per key); the same check runs again on the memory a
//! merge would leave ([`crate::import_plan::plan_import`]).
//! HTML or script in strings is accepted as plain text: the page renders record text
//! only as text nodes, never as markup.

use std::collections::{BTreeMap, HashMap};

use serde_json::value::RawValue;
use serde_json::{Map, Value};
use thiserror::Error;

use crate::export::{EXPORT_FORMAT, EXPORT_VERSION};
use crate::memory::Lesson;
use crate::packed_vector::unpack_vector;
use crate::record::{
    EmbeddingError, MAX_EXCEPTIONS_PER_LESSON, MAX_PATTERNS_PER_LESSON, MemoryRecord, RecordId,
    RecordState, StoredEmbedding, Timestamp,
};
use crate::request_pattern::RequestPattern;
use crate::stored_record::{
    StoredActor, StoredChangeReason, StoredKindName, StoredRecord, StoredScope, StoredSource,
    StoredState,
};
use crate::write_gate::{MAX_CLARIFICATION_CHARS, find_secret};

/// The most a file's lessons may take, their packed embeddings aside: far above any
/// real memory, small enough for a tab.
pub const MAX_IMPORT_BYTES: usize = 5 * 1024 * 1024;
/// The largest file accepted, embeddings included, refused before it is read. An
/// exported record takes at least 500 bytes, so [`MAX_IMPORT_BYTES`] of lessons are at
/// most some 10 500 records, and their MiniLM embeddings (384 numbers, 2.2 kB packed
/// in an indented file) add at most 23 MB: any export of a memory this Remind can
/// import fits, with room for a model of longer vectors.
pub const MAX_IMPORT_FILE_BYTES: usize = 64 * 1024 * 1024;
/// Past this many problems the rest are summarised; the user fixes the first ones.
pub const MAX_REPORTED_PROBLEMS: usize = 50;

/// One problem in an import file; every variant but the whole-file ones names the
/// JSON path (e.g. `records[3].clarification`) where it is.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum ImportError {
    #[error("the file is {size} bytes; the limit is {limit} bytes, so it is not a Remind export")]
    TooLarge { size: usize, limit: usize },
    #[error(
        "the file's lessons take more than {limit} bytes (their embeddings aside), past {path}; that is more than a memory holds, so it is not imported"
    )]
    LessonsTooLarge { path: String, limit: usize },
    #[error("the file is not valid JSON (line {line}, column {column}): {detail}")]
    Malformed {
        line: usize,
        column: usize,
        detail: String,
    },
    #[error(
        "{path}: expected \"{EXPORT_FORMAT}\", found {found}; this is not a Remind memory export"
    )]
    WrongFormat { path: String, found: String },
    #[error(
        "{path}: version {found} was written by a newer Remind (this one reads up to {supported}); update the app first"
    )]
    FutureVersion {
        path: String,
        found: u64,
        supported: u32,
    },
    #[error("{path}: missing")]
    Missing { path: String },
    #[error("{path}: expected {expected}, found {found}")]
    WrongType {
        path: String,
        expected: &'static str,
        found: &'static str,
    },
    #[error("{path}: {detail}")]
    Invalid { path: String, detail: String },
    #[error(
        "{path}: contains the control character U+{code:04X}; only line breaks and tabs are allowed"
    )]
    ControlCharacter { path: String, code: u32 },
    #[error(
        "{path}: looks like it contains {kind}; memories must never hold secrets, so the file is refused"
    )]
    Secret { path: String, kind: &'static str },
    #[error("{path}: the id \"{id}\" is also used by {first}; every record needs its own id")]
    DuplicateId {
        path: String,
        id: String,
        first: String,
    },
    #[error(
        "{path}: is \"{found}\", but the record's question has the key \"{expected}\"; a lesson is only ever applied to questions of its own key, so the file is refused"
    )]
    WrongKey {
        path: String,
        found: String,
        expected: String,
    },
    #[error("{path}: points at \"{id}\", which is not a record of the same key")]
    MissingLink { path: String, id: String },
    #[error("{path}: {detail}")]
    BrokenChain { path: String, detail: String },
    #[error("{path}: key \"{key}\" already has a current record ({first}); a key has at most one")]
    TwoCurrent {
        path: String,
        key: String,
        first: String,
    },
    #[error("and {0} more problems")]
    More(usize),
}

/// Why an import file was refused: every problem found, in document order.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
#[error("the file was not imported: {}", summary(.problems))]
pub struct ImportRejection {
    pub problems: Vec<ImportError>,
}

fn summary(problems: &[ImportError]) -> String {
    let shown: Vec<String> = problems.iter().take(3).map(ToString::to_string).collect();
    let rest = problems.len().saturating_sub(shown.len());
    if rest == 0 {
        shown.join("; ")
    } else {
        format!("{}; and {rest} more", shown.join("; "))
    }
}

/// A validated export file: its header, and its records as the domain holds them.
#[derive(Clone, Debug, PartialEq)]
pub struct ImportedFile {
    pub version: u32,
    pub exported_at: Timestamp,
    pub app_version: String,
    pub records: Vec<MemoryRecord>,
}

/// Validates an export file completely and returns its content, or every problem.
pub fn parse_import(bytes: &[u8]) -> Result<ImportedFile, ImportRejection> {
    ImportCheck::start(bytes)?.finish()
}

/// How far a check of a file's records has come.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckProgress {
    pub checked: usize,
    pub total: usize,
}

/// An import file checked a slice of records at a time: [`ImportCheck::start`] reads
/// the JSON and the header, [`ImportCheck::check_next`] checks the next records, and
/// [`ImportCheck::finish`] checks whatever is left and then the history the records
/// describe. A caller that must stay responsive (a page's main thread, where checking
/// thousands of records at once freezes the page) pauses between slices; the result
/// is the same as [`parse_import`]'s, which is this run in one go.
pub struct ImportCheck<'file> {
    version: u32,
    exported_at: Option<i64>,
    app_version: Option<String>,
    /// The file's records as their JSON text, unread; `None` when `records` is
    /// missing or not an array (a problem already noted).
    items: Option<Vec<&'file RawValue>>,
    next: usize,
    /// The bytes of the file read so far, its records' packed vectors aside: what
    /// [`MAX_IMPORT_BYTES`] limits.
    lesson_bytes: usize,
    records: Vec<MemoryRecord>,
    problems: Problems,
}

impl<'file> ImportCheck<'file> {
    /// Reads the file's JSON and header; refused at once when the file is too large,
    /// not JSON, or not an export this build can read (its records would only add
    /// noise to the reason).
    pub fn start(bytes: &'file [u8]) -> Result<Self, ImportRejection> {
        let reject = |problem| ImportRejection {
            problems: vec![problem],
        };
        if bytes.len() > MAX_IMPORT_FILE_BYTES {
            return Err(reject(ImportError::TooLarge {
                size: bytes.len(),
                limit: MAX_IMPORT_FILE_BYTES,
            }));
        }
        // Editors on some systems save JSON with a byte-order mark; it is not content.
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let malformed = |e: serde_json::Error| {
            reject(ImportError::Malformed {
                line: e.line(),
                column: e.column(),
                detail: e.to_string(),
            })
        };
        // The syntax of the whole file is checked here, but its records are kept as
        // their JSON text and read one by one in `check_next`: reading megabytes of
        // JSON into values at once would itself freeze a page.
        let mut problems = Problems::default();
        let Ok(mut fields) = serde_json::from_slice::<BTreeMap<String, &RawValue>>(bytes) else {
            // Not JSON, or not an object: read it whole, to say where or what it is.
            let root: Value = serde_json::from_slice(bytes).map_err(malformed)?;
            problems.push(wrong_type("$", "an object", &root));
            return Err(problems.into_rejection());
        };
        let records = fields.remove("records");
        let mut header = Map::new();
        for (name, raw) in fields {
            match serde_json::from_str::<Value>(raw.get()) {
                Ok(value) => {
                    header.insert(name, value);
                }
                // Valid JSON that is no value here (a number beyond any float).
                Err(e) => problems.push(ImportError::Invalid {
                    path: truncated(&name),
                    detail: e.to_string(),
                }),
            }
        }
        match read_header(header, records, &mut problems) {
            Some(mut check) => {
                // The header and the punctuation between records count as lessons.
                let records_bytes: usize = check
                    .items
                    .iter()
                    .flatten()
                    .map(|raw| raw.get().len())
                    .sum();
                check.lesson_bytes = bytes.len().saturating_sub(records_bytes);
                Ok(check)
            }
            None => Err(problems.into_rejection()),
        }
    }

    pub fn progress(&self) -> CheckProgress {
        CheckProgress {
            checked: self.next,
            total: self.items.as_ref().map_or(0, Vec::len),
        }
    }

    /// Checks up to `at_most` more records, in file order.
    pub fn check_next(&mut self, at_most: usize) -> CheckProgress {
        if let Some(items) = self.items.as_ref() {
            let end = self.next.saturating_add(at_most).min(items.len());
            for (i, raw) in items[self.next..end].iter().enumerate() {
                let path = format!("records[{}]", self.next + i);
                let item = match serde_json::from_str::<Value>(raw.get()) {
                    Ok(item) => item,
                    // Valid JSON that is no value here (a number beyond any float).
                    Err(e) => {
                        self.problems.push(ImportError::Invalid {
                            path,
                            detail: e.to_string(),
                        });
                        continue;
                    }
                };
                self.lesson_bytes += raw.get().len().saturating_sub(packed_vector_len(&item));
                if self.lesson_bytes > MAX_IMPORT_BYTES {
                    // The rest is not read, and what was found in the records before
                    // is beside the point: a file this large is no memory of ours.
                    self.problems = Problems::default();
                    self.problems.push(ImportError::LessonsTooLarge {
                        path,
                        limit: MAX_IMPORT_BYTES,
                    });
                    self.next = items.len();
                    return self.progress();
                }
                if let Some(record) = read_record(item, &path, &mut self.problems) {
                    self.records.push(record);
                }
            }
            self.next = end;
        }
        self.progress()
    }

    /// Checks the records not checked yet, then the history they describe; the
    /// file's content, or every problem found.
    pub fn finish(mut self) -> Result<ImportedFile, ImportRejection> {
        self.check_next(usize::MAX);
        let (Some(exported_at), Some(app_version), Some(_)) =
            (self.exported_at, self.app_version, self.items)
        else {
            return Err(self.problems.into_rejection());
        };
        if !self.problems.is_empty() {
            return Err(self.problems.into_rejection());
        }
        check_history(&self.records, &at_position, &mut self.problems);
        if !self.problems.is_empty() {
            return Err(self.problems.into_rejection());
        }
        Ok(ImportedFile {
            version: self.version,
            exported_at: Timestamp(exported_at),
            app_version,
            records: self.records,
        })
    }
}

/// Checks that records form a consistent history; the problems name `records[i]` by
/// the records' positions in `records`.
pub fn history_problems(records: &[MemoryRecord]) -> Vec<ImportError> {
    history_problems_named(records, &at_position)
}

/// [`history_problems`], with each record named by `name(i)` (a merge result has no
/// file positions, so its records are named by id). At most
/// [`MAX_REPORTED_PROBLEMS`] are listed, then [`ImportError::More`].
pub fn history_problems_named(
    records: &[MemoryRecord],
    name: &dyn Fn(usize) -> String,
) -> Vec<ImportError> {
    let mut problems = Problems::default();
    check_history(records, name, &mut problems);
    problems.into_rejection().problems
}

/// How a record of the file is named in problems: by its place in `records`.
fn at_position(i: usize) -> String {
    format!("records[{i}]")
}

#[derive(Default)]
struct Problems {
    list: Vec<ImportError>,
    dropped: usize,
}

impl Problems {
    fn push(&mut self, problem: ImportError) {
        if self.list.len() < MAX_REPORTED_PROBLEMS {
            self.list.push(problem);
        } else {
            self.dropped += 1;
        }
    }

    fn is_empty(&self) -> bool {
        self.list.is_empty() && self.dropped == 0
    }

    fn into_rejection(mut self) -> ImportRejection {
        if self.dropped > 0 {
            self.list.push(ImportError::More(self.dropped));
        }
        ImportRejection {
            problems: self.list,
        }
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn wrong_type(path: &str, expected: &'static str, found: &Value) -> ImportError {
    ImportError::WrongType {
        path: path.to_string(),
        expected,
        found: type_name(found),
    }
}

/// The header, and the records left unread; `None` when the file is not an export
/// this build can read at all (then the record problems would only be noise).
fn read_header<'file>(
    object: Map<String, Value>,
    records: Option<&'file RawValue>,
    problems: &mut Problems,
) -> Option<ImportCheck<'file>> {
    let version = match check_format(&object).and_then(|()| read_version(&object)) {
        Ok(version) => version,
        Err(problem) => {
            problems.push(problem);
            return None;
        }
    };
    let mut fields = Fields {
        object: &object,
        path: String::new(),
        problems,
    };
    let exported_at = fields.integer("exported_at", i64::MIN, i64::MAX);
    let app_version = fields.string("app_version").map(str::to_string);
    let items = match unread_records(records) {
        Ok(items) => Some(items),
        Err(problem) => {
            problems.push(problem);
            None
        }
    };
    Some(ImportCheck {
        version,
        exported_at,
        app_version,
        items,
        next: 0,
        lesson_bytes: 0,
        records: Vec::new(),
        problems: std::mem::take(problems),
    })
}

/// `format` must name a Remind export; any other file is refused by this alone.
fn check_format(object: &Map<String, Value>) -> Result<(), ImportError> {
    match object.get("format") {
        None => Err(ImportError::Missing {
            path: "format".into(),
        }),
        Some(Value::String(format)) if format == EXPORT_FORMAT => Ok(()),
        Some(other) => Err(ImportError::WrongFormat {
            path: "format".into(),
            found: truncated(&other.to_string()),
        }),
    }
}

/// `version`: a whole number from 1 up to the newest this build reads; a newer one
/// may hold fields this build would drop, so it is refused rather than guessed at.
fn read_version(object: &Map<String, Value>) -> Result<u32, ImportError> {
    let Some(value) = object.get("version") else {
        return Err(ImportError::Missing {
            path: "version".into(),
        });
    };
    match value.as_u64() {
        Some(v) if v > u64::from(EXPORT_VERSION) => Err(ImportError::FutureVersion {
            path: "version".into(),
            found: v,
            supported: EXPORT_VERSION,
        }),
        Some(v) if v >= 1 => Ok(v as u32),
        Some(_) => Err(ImportError::Invalid {
            path: "version".into(),
            detail: "must be 1 or more".into(),
        }),
        None => Err(wrong_type("version", "a whole number", value)),
    }
}

/// `records`, split into each record's JSON text but not read yet (`check_next`
/// reads them a slice at a time).
fn unread_records(records: Option<&RawValue>) -> Result<Vec<&RawValue>, ImportError> {
    let Some(raw) = records else {
        return Err(ImportError::Missing {
            path: "records".into(),
        });
    };
    serde_json::from_str::<Vec<&RawValue>>(raw.get()).map_err(|_| {
        let found = serde_json::from_str::<Value>(raw.get()).unwrap_or(Value::Null);
        wrong_type("records", "an array", &found)
    })
}

/// Reads the object fields of one level, reporting problems under `path`.
struct Fields<'v, 'p> {
    object: &'v Map<String, Value>,
    path: String,
    problems: &'p mut Problems,
}

impl<'v> Fields<'v, '_> {
    fn at(&self, name: &str) -> String {
        if self.path.is_empty() {
            name.to_string()
        } else {
            format!("{}.{name}", self.path)
        }
    }

    fn required(&mut self, name: &str) -> Option<&'v Value> {
        let value = self.object.get(name);
        if value.is_none() {
            let path = self.at(name);
            self.problems.push(ImportError::Missing { path });
        }
        value
    }

    fn string(&mut self, name: &str) -> Option<&'v str> {
        let value = self.required(name)?;
        let text = value.as_str();
        if text.is_none() {
            let path = self.at(name);
            self.problems.push(wrong_type(&path, "a string", value));
        }
        text
    }

    fn non_empty_string(&mut self, name: &str) -> Option<&'v str> {
        let text = self.string(name)?;
        if text.trim().is_empty() {
            let path = self.at(name);
            self.problems.push(ImportError::Invalid {
                path,
                detail: "must not be empty".into(),
            });
            return None;
        }
        Some(text)
    }

    fn optional_string(&mut self, name: &str) {
        match self.object.get(name) {
            None | Some(Value::Null) | Some(Value::String(_)) => {}
            Some(other) => {
                let path = self.at(name);
                self.problems
                    .push(wrong_type(&path, "a string or null", other));
            }
        }
    }

    fn integer(&mut self, name: &str, min: i64, max: i64) -> Option<i64> {
        let value = self.required(name)?;
        let Some(n) = value.as_i64() else {
            let path = self.at(name);
            self.problems
                .push(wrong_type(&path, "a whole number", value));
            return None;
        };
        if n < min || n > max {
            let path = self.at(name);
            self.problems.push(ImportError::Invalid {
                path,
                detail: format!("must be between {min} and {max}"),
            });
            return None;
        }
        Some(n)
    }

    /// A field whose value must be one of the names of the stored enum `T`; the
    /// names come from `T` itself (its serde names), so a new variant is accepted as
    /// soon as the type has it.
    fn variant<T: serde::de::DeserializeOwned>(&mut self, name: &str) -> Option<T> {
        let text = self.string(name)?;
        match serde_json::from_value::<T>(Value::String(text.to_string())) {
            Ok(value) => Some(value),
            Err(e) => {
                let path = self.at(name);
                self.problems.push(ImportError::Invalid {
                    path,
                    detail: format!("\"{}\": {e}", truncated(text)),
                });
                None
            }
        }
    }

    /// An optional nested object, read by `read` with its own path.
    fn optional_object(&mut self, name: &str, read: impl FnOnce(&mut Fields<'v, '_>)) {
        match self.object.get(name) {
            None | Some(Value::Null) => {}
            Some(Value::Object(object)) => {
                let mut nested = Fields {
                    object,
                    path: self.at(name),
                    problems: self.problems,
                };
                read(&mut nested);
            }
            Some(other) => {
                let path = self.at(name);
                self.problems
                    .push(wrong_type(&path, "an object or null", other));
            }
        }
    }
}

const RECORD_FIELDS_CHECKED: &str = "the record's fields do not fit together";

/// One record of the file, checked field by field so that every problem is named;
/// `None` when it has any.
fn read_record(item: Value, path: &str, problems: &mut Problems) -> Option<MemoryRecord> {
    let Some(object) = item.as_object() else {
        problems.push(wrong_type(path, "an object", &item));
        return None;
    };
    let before = problems.list.len() + problems.dropped;
    check_strings(&item, &|| path.to_string(), problems);
    let mut fields = Fields {
        object,
        path: path.to_string(),
        problems,
    };
    check_lesson_fields(&mut fields);
    let embedding = check_bookkeeping_fields(&mut fields);
    if problems.list.len() + problems.dropped > before {
        return None;
    }
    decode_record(item, embedding, path, problems)
}

/// What the record teaches: its id and key, its question, its kind and texts, and
/// where it applies.
fn check_lesson_fields(fields: &mut Fields<'_, '_>) {
    fields.non_empty_string("id");
    // The key is not checked for secrets itself: it must equal the key of the
    // question (checked in `decode_record`), so it holds nothing the question does not.
    fields.non_empty_string("key");
    if let Some(question) = fields.non_empty_string("question") {
        check_text(fields, "question", question);
    }
    let kind = fields.variant::<StoredKindName>("kind");
    check_lesson_texts(fields, kind);
    let scope = fields.variant::<StoredScope>("scope");
    check_exceptions(fields, kind);
    check_patterns(fields, kind, scope);
}

/// The texts a record of `kind` stores beside its question: a clarification's words,
/// or a verified example's understanding and answer.
fn check_lesson_texts(fields: &mut Fields<'_, '_>, kind: Option<StoredKindName>) {
    if let Some(clarification) = fields.string("clarification") {
        // A verified example's clarification is empty on disk; a clarification with
        // no words is what the write gate refuses as "nothing to save".
        if kind == Some(StoredKindName::Clarification) && clarification.trim().is_empty() {
            let path = fields.at("clarification");
            fields.problems.push(ImportError::Invalid {
                path,
                detail: "must not be empty for a clarification".into(),
            });
        } else {
            check_text(fields, "clarification", clarification);
        }
    }
    if kind == Some(StoredKindName::VerifiedExample) {
        for name in ["understanding", "answer"] {
            if let Some(text) = fields.string(name) {
                check_text(fields, name, text);
            }
        }
    }
}

/// What the memory keeps about the record: where it came from, when, its version and
/// links, its state, its counts, its last change and its embedding, which is returned
/// as read when it passed (a packed vector is decoded once, here).
fn check_bookkeeping_fields(fields: &mut Fields<'_, '_>) -> Option<StoredEmbedding> {
    fields.variant::<StoredSource>("source");
    fields.integer("created_at", i64::MIN, i64::MAX);
    fields.integer("version", 1, i64::from(u32::MAX));
    fields.optional_string("supersedes");
    fields.optional_string("superseded_by");
    fields.variant::<StoredState>("state");
    fields.optional_object("stats", |stats| {
        stats.integer("times_applied", 0, i64::from(u32::MAX));
        stats.integer("times_failed_after_applied", 0, i64::from(u32::MAX));
    });
    fields.optional_object("change", |change| {
        change.integer("at", i64::MIN, i64::MAX);
        change.variant::<StoredActor>("by");
        change.variant::<StoredChangeReason>("reason");
    });
    let mut read = None;
    fields.optional_object("embedding", |embedding| {
        let model = embedding.string("model");
        let vector = embedding
            .required("vector")
            .and_then(|vector| check_vector(embedding, vector));
        read = model
            .zip(vector)
            .and_then(|(model, vector)| StoredEmbedding::new(model, vector).ok());
    });
    read
}

/// The record as the domain holds it, from an item whose fields all passed and the
/// embedding their check read.
fn decode_record(
    mut item: Value,
    embedding: Option<StoredEmbedding>,
    path: &str,
    problems: &mut Problems,
) -> Option<MemoryRecord> {
    // Read apart by the check, since it may be packed, which the stored form is not.
    if let Some(object) = item.as_object_mut() {
        object.remove("embedding");
    }
    // The field checks cover every field; this is the last word on the shape, so a
    // gap between them and the record type is still reported rather than let through.
    match serde_json::from_value::<StoredRecord>(item) {
        Ok(record) => {
            let record = MemoryRecord {
                embedding,
                ..MemoryRecord::from(record)
            };
            check_key(&record, path, problems);
            Some(record)
        }
        Err(e) => {
            problems.push(ImportError::Invalid {
                path: path.to_string(),
                detail: format!("{RECORD_FIELDS_CHECKED}: {e}"),
            });
            None
        }
    }
}

/// The key must be the one the memory gives the record's question (an example's in
/// the examples' own namespace): a record under another key would be attached to
/// questions it was never taught for, and would sit beside that key's own lessons.
fn check_key(record: &MemoryRecord, path: &str, problems: &mut Problems) {
    let lesson = Lesson {
        question: record.question.clone(),
        kind: record.kind.clone(),
        source: record.source,
    };
    let expected = lesson.key();
    // A clarification may also carry the key an earlier Remind gave its question.
    let accepted = if record.kind.is_clarification() {
        record.key.belongs_to(&record.question)
    } else {
        record.key == expected
    };
    if !accepted {
        problems.push(ImportError::WrongKey {
            path: format!("{path}.key"),
            found: truncated(record.key.as_str()),
            expected: truncated(expected.as_str()),
        });
    }
}

/// A list a record may hold, when present: an array (`expected`, as a wrong type's
/// message says it) of at most `limit` `items_are`, and none where `refused` says the
/// record cannot hold one; each item then goes to `check_item` with its own name
/// (`not_for[2]`).
fn check_list(
    fields: &mut Fields<'_, '_>,
    name: &str,
    expected: &'static str,
    items_are: &str,
    limit: usize,
    refused: Option<&str>,
    mut check_item: impl FnMut(&mut Fields<'_, '_>, &str, &Value),
) {
    let Some(value) = fields.object.get(name) else {
        return;
    };
    let path = fields.at(name);
    let Some(items) = value.as_array() else {
        fields.problems.push(wrong_type(&path, expected, value));
        return;
    };
    let detail = match refused {
        Some(why) if !items.is_empty() => Some(why.to_string()),
        _ if items.len() > limit => Some(format!(
            "holds {} {items_are}; a lesson keeps at most {limit}",
            items.len()
        )),
        _ => None,
    };
    if let Some(detail) = detail {
        fields.problems.push(ImportError::Invalid { path, detail });
        return;
    }
    for (i, item) in items.iter().enumerate() {
        check_item(fields, &format!("{name}[{i}]"), item);
    }
}

/// `not_for`, when present: a clarification's questions the user marked "not relevant
/// here", each a stored text like any question, at most [`MAX_EXCEPTIONS_PER_LESSON`].
fn check_exceptions(fields: &mut Fields<'_, '_>, kind: Option<StoredKindName>) {
    let refused = (kind == Some(StoredKindName::VerifiedExample))
        .then_some("only a clarification can be marked not relevant to a question");
    check_list(
        fields,
        "not_for",
        "an array of questions",
        "questions",
        MAX_EXCEPTIONS_PER_LESSON,
        refused,
        |fields, name, item| match item.as_str() {
            Some(question) if !question.trim().is_empty() => check_text(fields, name, question),
            Some(_) => {
                let path = fields.at(name);
                fields.problems.push(ImportError::Invalid {
                    path,
                    detail: "must not be empty".into(),
                });
            }
            None => {
                let path = fields.at(name);
                fields.problems.push(wrong_type(&path, "a string", item));
            }
        },
    );
}

/// The most numbers an embedding may hold; MiniLM's hold 384, the largest sentence
/// models' a few thousand. A longer vector is no embedding, whatever its length.
pub const MAX_EMBEDDING_NUMBERS: usize = 4096;

/// An embedding's `vector` as [`read_vector`] reads it, or `None` with its problem
/// noted.
fn check_vector(fields: &mut Fields<'_, '_>, vector: &Value) -> Option<Vec<f32>> {
    let problem = match read_vector(vector) {
        Ok(numbers) => return Some(numbers),
        Err(problem) => problem,
    };
    let path = fields.at("vector");
    fields.problems.push(match problem {
        VectorProblem::NotAVector => wrong_type(
            &path,
            "a packed vector (base64) or an array of numbers",
            vector,
        ),
        VectorProblem::Invalid(detail) => ImportError::Invalid { path, detail },
    });
    None
}

/// Why a `vector` is no embedding.
enum VectorProblem {
    /// Neither a string nor an array of numbers.
    NotAVector,
    /// What is wrong with it, completing a sentence whose subject is the vector.
    Invalid(String),
}

/// An embedding's `vector`, packed (version 2, [`crate::packed_vector`]) or an array
/// of numbers (version 1): at most [`MAX_EMBEDDING_NUMBERS`] numbers, finite once
/// narrowed to the `f32` a record holds (JSON's numbers are wider: `1e39` would become
/// an infinity, which IndexedDB stores as `null`), and of unit length; as
/// [`StoredEmbedding::check`] holds every record's. Anything else would be accepted now
/// and read back as a different record, or compared as NaN. One problem per vector: a
/// hostile one may hold hundreds of bad values.
fn read_vector(vector: &Value) -> Result<Vec<f32>, VectorProblem> {
    let numbers = match vector {
        Value::String(packed) => {
            unpack_vector(packed).map_err(|e| VectorProblem::Invalid(e.to_string()))?
        }
        Value::Array(items) => {
            let wide = items
                .iter()
                .map(Value::as_f64)
                .collect::<Option<Vec<f64>>>()
                .ok_or(VectorProblem::NotAVector)?;
            wide.iter()
                .enumerate()
                .map(|(index, &value)| {
                    // `as` rounds to the nearest f32, as reading the record does; a value
                    // beyond f32's range becomes an infinity, reported with the file's value.
                    let narrowed = value as f32;
                    if narrowed.is_finite() {
                        Ok(narrowed)
                    } else {
                        Err(VectorProblem::Invalid(
                            EmbeddingError::NotFinite { index, value }.to_string(),
                        ))
                    }
                })
                .collect::<Result<Vec<f32>, VectorProblem>>()?
        }
        _ => return Err(VectorProblem::NotAVector),
    };
    if numbers.len() > MAX_EMBEDDING_NUMBERS {
        return Err(VectorProblem::Invalid(format!(
            "holds {} numbers; an embedding holds at most {MAX_EMBEDDING_NUMBERS}",
            numbers.len()
        )));
    }
    StoredEmbedding::check(&numbers).map_err(|e| VectorProblem::Invalid(e.to_string()))?;
    Ok(numbers)
}

/// How many bytes of a record's text are its packed vector, which
/// [`MAX_IMPORT_BYTES`] does not count.
fn packed_vector_len(item: &Value) -> usize {
    item.get("embedding")
        .and_then(|embedding| embedding.get("vector"))
        .and_then(Value::as_str)
        .map_or(0, str::len)
}

/// `applies_to`, when present: a clarification's patterns under the scope `always`,
/// each in [`RequestPattern`]'s text form, at most [`MAX_PATTERNS_PER_LESSON`].
fn check_patterns(
    fields: &mut Fields<'_, '_>,
    kind: Option<StoredKindName>,
    scope: Option<StoredScope>,
) {
    let refused = match (kind, scope) {
        (Some(StoredKindName::VerifiedExample), _) => {
            Some("only a clarification has patterns of questions it applies to")
        }
        (_, Some(StoredScope::EveryQuestion)) => {
            Some("a lesson for every question has no patterns")
        }
        _ => None,
    };
    check_list(
        fields,
        "applies_to",
        "an array of patterns",
        "patterns",
        MAX_PATTERNS_PER_LESSON,
        refused,
        |fields, name, item| {
            let path = fields.at(name);
            match item.as_str().map(RequestPattern::parse) {
                Some(Ok(_)) => {}
                Some(Err(why)) => fields.problems.push(ImportError::Invalid {
                    path,
                    detail: why.to_string(),
                }),
                None => fields.problems.push(wrong_type(&path, "a string", item)),
            }
        },
    );
}

/// A stored text (a question or a lesson): within the write gate's length limit and
/// free of secrets, as the gate holds every text the page stores.
fn check_text(fields: &mut Fields<'_, '_>, name: &str, text: &str) {
    let len = text.chars().count();
    if len > MAX_CLARIFICATION_CHARS {
        let path = fields.at(name);
        fields.problems.push(ImportError::Invalid {
            path,
            detail: format!("is {len} characters; the limit is {MAX_CLARIFICATION_CHARS}"),
        });
    } else if let Some(kind) = find_secret(text) {
        let path = fields.at(name);
        fields.problems.push(ImportError::Secret { path, kind });
    }
}

/// Refuses control characters (other than line breaks and tabs) in every string of a
/// record, keys included: they hide text from the person reviewing the preview.
/// `path` names the value; it is written out only for a problem, as a file of thousands
/// of records has a dozen strings and numbers in each.
fn check_strings(value: &Value, path: &dyn Fn() -> String, problems: &mut Problems) {
    let bad = |text: &str| {
        // Most strings are printable ASCII throughout, a packed vector's 2 048
        // characters among them: one pass over the bytes, which the compiler turns into
        // vector instructions, clears them without decoding a character.
        let printable = |b: u8| (b' '..=b'~').contains(&b) || b == b'\n' || b == b'\t';
        if text.bytes().all(printable) {
            return None;
        }
        text.chars()
            .find(|&c| c.is_control() && c != '\n' && c != '\t')
    };
    match value {
        Value::String(text) => {
            if let Some(c) = bad(text) {
                problems.push(ImportError::ControlCharacter {
                    path: path(),
                    code: c as u32,
                });
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                check_strings(item, &|| format!("{}[{i}]", path()), problems);
            }
        }
        Value::Object(object) => {
            for (name, item) in object {
                if let Some(c) = bad(name) {
                    problems.push(ImportError::ControlCharacter {
                        path: format!("{} (a field name)", path()),
                        code: c as u32,
                    });
                }
                check_strings(item, &|| format!("{}.{name}", path()), problems);
            }
        }
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// The history the records describe: ids unique, links that agree with each other,
/// at most one current record per key, and no loops.
fn check_history(
    records: &[MemoryRecord],
    name: &dyn Fn(usize) -> String,
    problems: &mut Problems,
) {
    let by_id = index_ids(records, name, problems);
    let history = History {
        records,
        by_id: &by_id,
        name,
    };
    let mut current_of_key: HashMap<&str, usize> = HashMap::new();
    // One record's problems together, in the order its fields are named.
    for i in 0..records.len() {
        let found = [
            history.supersedes_problem(i),
            history.superseded_by_problem(i),
            second_current_problem(&mut current_of_key, records, i, name),
        ];
        for problem in found.into_iter().flatten() {
            problems.push(problem);
        }
    }
    check_cycles(records, &by_id, name, problems);
}

/// Each id's first position; a later record with the same id is a problem.
fn index_ids<'r>(
    records: &'r [MemoryRecord],
    name: &dyn Fn(usize) -> String,
    problems: &mut Problems,
) -> HashMap<&'r RecordId, usize> {
    let mut by_id: HashMap<&RecordId, usize> = HashMap::new();
    for (i, record) in records.iter().enumerate() {
        if let Some(&first) = by_id.get(&record.id) {
            problems.push(ImportError::DuplicateId {
                path: format!("{}.id", name(i)),
                id: truncated(&record.id.0),
                first: name(first),
            });
        } else {
            by_id.insert(&record.id, i);
        }
    }
    by_id
}

/// The records, where each id is, and how problems name a record, for following a
/// record's links.
struct History<'r> {
    records: &'r [MemoryRecord],
    by_id: &'r HashMap<&'r RecordId, usize>,
    name: &'r dyn Fn(usize) -> String,
}

impl<'r> History<'r> {
    /// The record `id` names, if there is one of the same key as `of`: a link to
    /// another key's record would join two lessons' histories.
    fn linked(&self, id: &RecordId, of: &MemoryRecord) -> Option<(usize, &'r MemoryRecord)> {
        self.by_id
            .get(id)
            .map(|&j| (j, &self.records[j]))
            .filter(|(_, r)| r.key == of.key)
    }

    /// What is wrong with record `i`'s `supersedes` link, if anything.
    fn supersedes_problem(&self, i: usize) -> Option<ImportError> {
        let (record, name) = (&self.records[i], self.name);
        let previous = record.supersedes.as_ref()?;
        if previous == &record.id {
            Some(broken(
                &name(i),
                "supersedes",
                "a record cannot supersede itself",
            ))
        } else if self.linked(previous, record).is_none() {
            Some(ImportError::MissingLink {
                path: format!("{}.supersedes", name(i)),
                id: truncated(&previous.0),
            })
        } else {
            None
        }
    }

    /// What is wrong with record `i`'s `superseded_by` link given its state, if
    /// anything: the link and the state must tell the story the successor's
    /// `supersedes` tells.
    fn superseded_by_problem(&self, i: usize) -> Option<ImportError> {
        let (record, name) = (&self.records[i], self.name);
        match (&record.superseded_by, record.state) {
            (Some(next), _) if next == &record.id => Some(broken(
                &name(i),
                "superseded_by",
                "a record cannot be superseded by itself",
            )),
            (Some(next), state) => match self.linked(next, record) {
                None => Some(ImportError::MissingLink {
                    path: format!("{}.superseded_by", name(i)),
                    id: truncated(&next.0),
                }),
                Some((j, successor)) if successor.supersedes.as_ref() != Some(&record.id) => {
                    Some(broken(
                        &name(i),
                        "superseded_by",
                        &format!("{} does not say it supersedes this record", name(j)),
                    ))
                }
                Some(_) if state == RecordState::Current => Some(broken(
                    &name(i),
                    "state",
                    "a current record cannot have been superseded",
                )),
                Some(_) => None,
            },
            (None, RecordState::Superseded) => Some(broken(
                &name(i),
                "superseded_by",
                "a superseded record must name the record that superseded it",
            )),
            (None, _) => None,
        }
    }
}

/// Record `i` as a second current record of its key, if it is one; otherwise notes
/// it in `current_of_key` when it is current.
fn second_current_problem<'r>(
    current_of_key: &mut HashMap<&'r str, usize>,
    records: &'r [MemoryRecord],
    i: usize,
    name: &dyn Fn(usize) -> String,
) -> Option<ImportError> {
    let record = &records[i];
    if !record.is_current() {
        return None;
    }
    match current_of_key.get(record.key.as_str()) {
        Some(&first) => Some(ImportError::TwoCurrent {
            path: format!("{}.state", name(i)),
            key: truncated(record.key.as_str()),
            first: name(first),
        }),
        None => {
            current_of_key.insert(record.key.as_str(), i);
            None
        }
    }
}

/// A chain of `supersedes` links must end; a loop has no first lesson. Each record
/// has at most one link, so one walk per chain (linear in the file) finds every loop.
fn check_cycles(
    records: &[MemoryRecord],
    by_id: &HashMap<&RecordId, usize>,
    name: &dyn Fn(usize) -> String,
    problems: &mut Problems,
) {
    #[derive(Clone, Copy, PartialEq)]
    enum Walk {
        Unvisited,
        OnPath,
        Done,
    }
    let mut walk = vec![Walk::Unvisited; records.len()];
    for start in 0..records.len() {
        let mut path = Vec::new();
        let mut at = Some(start);
        while let Some(i) = at {
            match walk[i] {
                Walk::Done => break,
                Walk::OnPath => {
                    problems.push(broken(
                        &name(i),
                        "supersedes",
                        "the supersede links form a loop",
                    ));
                    break;
                }
                Walk::Unvisited => {
                    walk[i] = Walk::OnPath;
                    path.push(i);
                    at = records[i]
                        .supersedes
                        .as_ref()
                        .and_then(|id| by_id.get(id).copied());
                }
            }
        }
        for i in path {
            walk[i] = Walk::Done;
        }
    }
}

fn broken(path: &str, field: &str, detail: &str) -> ImportError {
    ImportError::BrokenChain {
        path: format!("{path}.{field}"),
        detail: detail.to_string(),
    }
}

/// Quotes of file text in messages are kept short; the file may be hostile.
pub(crate) fn truncated(text: &str) -> String {
    const MAX: usize = 80;
    if text.chars().count() <= MAX {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(MAX).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::export::{Embeddings, export};
    use crate::memory::FeedbackMemory;
    use crate::memory_key::MemoryKey;
    use crate::record::RecordKind;
    use crate::verified_examples::example_key;

    /// One clarification and one verified example, as an export holds them.
    fn document() -> Value {
        let mut memory = FeedbackMemory::default();
        let written = memory.plan_write(
            Lesson::user_clarification("What is like < fast > ?", "I want a synonym"),
            RecordId("c".into()),
            Timestamp(1),
        );
        memory.apply(&written);
        let written = memory.plan_write(
            Lesson {
                question: "capital of France?".into(),
                kind: RecordKind::VerifiedExample {
                    understanding: "the capital of France".into(),
                    answer: "Paris".into(),
                },
                source: crate::record::Source::UserStated,
            },
            RecordId("e".into()),
            Timestamp(2),
        );
        memory.apply(&written);
        serde_json::to_value(export(
            memory.records().iter().map(AsRef::as_ref),
            Timestamp(3),
            "test",
            Embeddings::Omit,
        ))
        .unwrap()
    }

    fn problems_of(document: &Value) -> Vec<ImportError> {
        parse_import(document.to_string().as_bytes())
            .expect_err("the file is refused")
            .problems
    }

    fn position(document: &Value, id: &str) -> usize {
        document["records"]
            .as_array()
            .and_then(|records| records.iter().position(|r| r["id"] == id))
            .unwrap()
    }

    #[test]
    fn a_document_whose_keys_are_its_questions_keys_is_accepted() {
        let file = parse_import(document().to_string().as_bytes()).expect("a valid export");
        let example = file.records.iter().find(|r| r.id.0 == "e").unwrap();
        assert_eq!(example.key, example_key("capital of France?"));
    }

    #[test]
    fn a_key_that_is_not_its_questions_key_is_refused_with_the_key_it_should_have() {
        let mut document = document();
        let i = position(&document, "c");
        document["records"][i]["key"] = json!("how do i boil an egg?");
        let found = problems_of(&document);
        assert_eq!(
            found,
            [ImportError::WrongKey {
                path: format!("records[{i}].key"),
                found: "how do i boil an egg?".into(),
                expected: "what is like < > ?".into(),
            }]
        );
    }

    #[test]
    fn an_example_under_the_clarification_key_of_its_question_is_refused() {
        let mut document = document();
        let i = position(&document, "e");
        document["records"][i]["key"] = json!("capital of france?");
        let found = problems_of(&document);
        assert!(
            matches!(&found[..], [ImportError::WrongKey { path, expected, .. }]
                if path == &format!("records[{i}].key") && expected == example_key("capital of France?").as_str()),
            "{found:?}"
        );
    }

    #[test]
    fn a_secret_in_a_question_is_refused_with_the_questions_path() {
        let mut document = document();
        let i = position(&document, "c");
        let question = "What is like < fast > ? password: hunter2";
        document["records"][i]["question"] = json!(question);
        document["records"][i]["key"] = json!(MemoryKey::of_question(question).as_str());
        let found = problems_of(&document);
        assert!(
            matches!(&found[..], [ImportError::Secret { path, .. }] if path == &format!("records[{i}].question")),
            "{found:?}"
        );
    }

    #[test]
    fn a_clarifications_exceptions_are_read_back_and_checked_like_questions() {
        let mut document = document();
        let i = position(&document, "c");
        document["records"][i]["not_for"] = json!(["What is like a < fast > car?"]);
        let file = parse_import(document.to_string().as_bytes()).expect("valid");
        let record = file.records.iter().find(|r| r.id.0 == "c").unwrap();
        assert_eq!(record.kind.not_for(), ["What is like a < fast > car?"]);

        document["records"][i]["not_for"] = json!(["fine", "", "password: hunter2", 7]);
        let found = problems_of(&document);
        let paths: Vec<String> = found.iter().map(|p| p.to_string()).collect();
        assert!(
            matches!(&found[..], [
                ImportError::Invalid { path: empty, .. },
                ImportError::Secret { path: secret, .. },
                ImportError::WrongType { path: number, .. },
            ] if *empty == format!("records[{i}].not_for[1]")
                && *secret == format!("records[{i}].not_for[2]")
                && *number == format!("records[{i}].not_for[3]")),
            "{paths:?}"
        );
    }

    #[test]
    fn a_clarifications_patterns_are_read_back_and_a_bad_one_is_refused_naming_it() {
        let mut document = document();
        let i = position(&document, "c");
        document["records"][i]["applies_to"] = json!(["what is like ___", "what is akin to ___"]);
        let file = parse_import(document.to_string().as_bytes()).expect("valid");
        let record = file.records.iter().find(|r| r.id.0 == "c").unwrap();
        let patterns: Vec<String> = record
            .kind
            .patterns()
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(patterns, ["what is like ___", "what is akin to ___"]);

        document["records"][i]["applies_to"] = json!(["what is like ___", "___", "<b>", 3]);
        let found = problems_of(&document);
        let paths: Vec<String> = found.iter().map(|p| p.to_string()).collect();
        assert!(
            matches!(&found[..], [
                ImportError::Invalid { path: slots_only, .. },
                ImportError::Invalid { path: markup, .. },
                ImportError::WrongType { path: number, .. },
            ] if *slots_only == format!("records[{i}].applies_to[1]")
                && *markup == format!("records[{i}].applies_to[2]")
                && *number == format!("records[{i}].applies_to[3]")),
            "{paths:?}"
        );
        let e = position(&document, "e");
        document["records"][i]["applies_to"] = json!([]);
        document["records"][e]["applies_to"] = json!(["what is ___"]);
        let found = problems_of(&document);
        assert!(
            matches!(&found[..], [ImportError::Invalid { path, .. }] if *path == format!("records[{e}].applies_to")),
            "{found:?}"
        );
    }

    #[test]
    fn exceptions_on_an_example_or_past_the_limit_are_refused() {
        let mut document = document();
        let e = position(&document, "e");
        document["records"][e]["not_for"] = json!(["What is the capital of Spain?"]);
        let c = position(&document, "c");
        let many: Vec<String> = (0..=MAX_EXCEPTIONS_PER_LESSON)
            .map(|n| format!("question {n}?"))
            .collect();
        document["records"][c]["not_for"] = json!(many);
        let found = problems_of(&document);
        let paths: Vec<&str> = found
            .iter()
            .filter_map(|p| match p {
                ImportError::Invalid { path, .. } => Some(path.as_str()),
                _ => None,
            })
            .collect();
        let mut expected = vec![
            format!("records[{c}].not_for"),
            format!("records[{e}].not_for"),
        ];
        expected.sort();
        let mut paths: Vec<String> = paths.into_iter().map(String::from).collect();
        paths.sort();
        assert_eq!(paths, expected, "{found:?}");
    }

    #[test]
    fn a_clarification_with_no_words_is_refused_as_the_write_gate_would() {
        let mut document = document();
        let i = position(&document, "c");
        document["records"][i]["clarification"] = json!("  ");
        let found = problems_of(&document);
        assert!(
            matches!(&found[..], [ImportError::Invalid { path, .. }] if path == &format!("records[{i}].clarification")),
            "{found:?}"
        );
    }

    #[test]
    fn a_question_longer_than_the_write_gate_allows_is_refused() {
        let mut document = document();
        let i = position(&document, "c");
        let question = format!(
            "What is like < fast > ?{}",
            " and".repeat(MAX_CLARIFICATION_CHARS)
        );
        document["records"][i]["key"] = json!(MemoryKey::of_question(&question).as_str());
        document["records"][i]["question"] = json!(question);
        let found = problems_of(&document);
        assert!(
            matches!(&found[..], [ImportError::Invalid { path, .. }] if path.ends_with(".question")),
            "{found:?}"
        );
    }

    /// The place of record "c" and the one problem of the document once its embedding
    /// holds `vector`.
    fn embedding_problem(vector: Value) -> (usize, String) {
        let mut document = document();
        let i = position(&document, "c");
        document["records"][i]["embedding"] = json!({ "model": "m", "vector": vector });
        let found = problems_of(&document);
        assert_eq!(found.len(), 1, "{found:?}");
        (i, found[0].to_string())
    }

    #[test]
    fn an_import_whose_embedding_overflows_f32_is_refused_naming_the_field() {
        for (vector, value) in [
            (json!([1e39, 0.0]), "1e39"),
            (json!([0.0, -1e39]), "-1e39"),
            (json!([0.6, f64::MAX]), "1.7976931348623157e308"),
        ] {
            let (i, problem) = embedding_problem(vector);
            assert!(
                problem.starts_with(&format!(
                    "records[{i}].embedding.vector: holds {value} at ["
                )) && problem.contains("which is not a finite number"),
                "{problem}"
            );
        }
    }

    #[test]
    fn an_import_whose_embedding_is_not_of_unit_length_is_refused_naming_the_field() {
        for vector in [
            Value::from(vec![3e38; 384]),
            Value::from(vec![0.0; 384]),
            json!([]),
            json!([0.6, 0.9]),
        ] {
            let (i, problem) = embedding_problem(vector);
            assert!(
                problem.starts_with(&format!(
                    "records[{i}].embedding.vector: is not of unit length"
                )),
                "{problem}"
            );
        }
        let mut document = document();
        let i = position(&document, "c");
        document["records"][i]["embedding"] = json!({ "model": "m", "vector": [0.6, 0.8] });
        let file = parse_import(document.to_string().as_bytes()).expect("a unit vector");
        let record = file.records.iter().find(|r| r.id.0 == "c").unwrap();
        assert_eq!(
            record.embedding.as_ref().map(|e| e.vector()),
            Some(&[0.6, 0.8][..])
        );
    }

    #[test]
    fn a_file_checked_a_slice_at_a_time_reads_as_it_does_in_one_go() {
        let bytes = document().to_string();
        let mut check = ImportCheck::start(bytes.as_bytes()).expect("a readable header");
        assert_eq!(
            check.progress(),
            CheckProgress {
                checked: 0,
                total: 2
            }
        );
        assert_eq!(check.check_next(1).checked, 1);
        assert_eq!(check.check_next(5).checked, 2);
        assert_eq!(check.check_next(5).checked, 2, "nothing is left to check");
        assert_eq!(check.finish(), parse_import(bytes.as_bytes()));
    }

    #[test]
    fn problems_found_in_separate_slices_are_all_reported_in_file_order() {
        let mut document = document();
        document["records"][0]["version"] = json!(0);
        document["records"][1]["state"] = json!("gone");
        let bytes = document.to_string();
        let mut check = ImportCheck::start(bytes.as_bytes()).expect("a readable header");
        check.check_next(1);
        let sliced = check.finish().expect_err("both records are bad").problems;
        let paths: Vec<String> = sliced
            .iter()
            .filter_map(|p| match p {
                ImportError::Invalid { path, .. } => Some(path.clone()),
                _ => None,
            })
            .collect();
        assert_eq!(paths, ["records[0].version", "records[1].state"]);
        assert_eq!(sliced, problems_of(&document));
    }

    #[test]
    fn a_file_that_is_not_an_export_is_refused_before_any_record_is_checked() {
        let refused = ImportCheck::start(br#"{"format": "other", "records": [1, 2]}"#)
            .err()
            .expect("not an export");
        assert!(
            matches!(&refused.problems[..], [ImportError::WrongFormat { .. }]),
            "{refused:?}"
        );
    }

    #[test]
    fn history_problems_can_name_records_by_id() {
        let file = parse_import(document().to_string().as_bytes()).unwrap();
        let mut records = file.records.clone();
        let c = records.iter().find(|r| r.id.0 == "c").unwrap().clone();
        records.push(c);
        let found =
            history_problems_named(&records, &|i| format!("record \"{}\"", records[i].id.0));
        assert!(
            matches!(&found[..], [ImportError::DuplicateId { path, first, .. }, ..]
                if path == "record \"c\".id" && first == "record \"c\""),
            "{found:?}"
        );
    }

    #[test]
    fn control_characters_are_found_past_the_printable_ascii_fast_path() {
        let codes = |text: &str| {
            let mut problems = Problems::default();
            check_strings(
                &json!({ "clarification": text }),
                &|| "r".to_string(),
                &mut problems,
            );
            problems
                .list
                .iter()
                .map(|problem| match problem {
                    ImportError::ControlCharacter { code, .. } => *code,
                    other => panic!("{other:?}"),
                })
                .collect::<Vec<u32>>()
        };
        assert_eq!(codes("a synonym,\nplease\t~"), Vec::<u32>::new());
        assert_eq!(codes("café, naïve – “quoted”"), Vec::<u32>::new());
        assert_eq!(codes("delete\u{7f}"), vec![0x7f]);
        assert_eq!(codes("a carriage\rreturn"), vec![0x0d]);
        assert_eq!(codes("é then next line\u{85}"), vec![0x85]);
    }
}
