//! Reading a reply that streams as server-sent events, chunk by chunk as the network
//! hands them over.
//!
//! A chunk may end anywhere (mid-line, mid-character, between `\r` and `\n`), so lines
//! are assembled from bytes and only whole lines are read. Each event's text is added
//! as it arrives, so the page can show the reply growing; how the reply ended and what
//! an error says read as a whole reply's would (`super::response`). A body that is not
//! a stream at all, from an endpoint that ignores `"stream": true`, is read whole by
//! `super::response`, so such endpoints keep working.
//!
//! Like every parser of outside input here, it never panics: any bytes become text, a
//! completion or an [`LlmError`].

use serde_json::{Value, json};

use crate::failure_text::{describe_non_json, without_choices};
use crate::ports::{Completion, Ending, LlmError};

/// A 2xx reply to a streaming request, read as its bytes arrive.
///
/// Feed it every chunk with [`StreamedReply::read`], then [`StreamedReply::end`] when
/// the body ends (or as soon as [`StreamedReply::is_done`]), or
/// [`StreamedReply::stopped_by_user`] when the user stops it. Statuses other than 2xx
/// are not its business: their bodies are errors, read whole by `super::response_with`.
#[derive(Debug)]
pub struct StreamedReply {
    shape: Shape,
    /// The bytes of the line not yet ended.
    line: Vec<u8>,
    /// The last line ended with `\r`: a `\n` right after it ends nothing more.
    after_cr: bool,
    event: PendingEvent,
    text: String,
    ending: Ending,
    /// At least one event carried a choice, so the stream is an answer.
    answered: bool,
    /// Events with data read so far: the server's signs of life (comments and blank
    /// lines are not, nor anything before the body is known to be a stream).
    events: usize,
    /// `data: [DONE]` arrived: the reply is complete.
    done: bool,
    failure: Option<LlmError>,
}

/// What the body turned out to be. Decided by its first bytes, not its Content-Type:
/// servers and proxies label streams `text/plain` and whole replies anything at all.
#[derive(Debug)]
enum Shape {
    /// Too little has arrived to tell; the bytes so far.
    Undecided(Vec<u8>),
    /// Server-sent events.
    Events,
    /// Anything else, kept until it ends and then read as a whole reply.
    Whole(Vec<u8>),
}

impl Default for Shape {
    fn default() -> Self {
        Shape::Undecided(Vec::new())
    }
}

/// The fields of the event being assembled, dispatched at the next blank line.
#[derive(Debug, Default)]
struct PendingEvent {
    /// Its `data` lines, each followed by `\n`.
    data: String,
    has_data: bool,
    /// Sent as an error: `event: error`, or llama.cpp's `error:` field.
    is_error: bool,
}

/// The field names a server-sent event stream starts with (a comment starts with `:`).
const EVENT_STARTS: [&[u8]; 6] = [b":", b"data:", b"event:", b"id:", b"retry:", b"error:"];

const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

impl Default for StreamedReply {
    fn default() -> Self {
        StreamedReply {
            shape: Shape::default(),
            line: Vec::new(),
            after_cr: false,
            event: PendingEvent::default(),
            text: String::new(),
            // A stream that never reports a finish reason ended without a stop.
            ending: Ending::Finished,
            answered: false,
            events: 0,
            done: false,
            failure: None,
        }
    }
}

impl StreamedReply {
    pub fn new() -> Self {
        StreamedReply::default()
    }

    /// Reads the next chunk of the body; `Ok(true)` when the reply's text grew. An
    /// error event, or an event that is not JSON, ends the reply in that error: this
    /// and every later call return it.
    pub fn read(&mut self, chunk: &[u8]) -> Result<bool, LlmError> {
        if let Some(failure) = &self.failure {
            return Err(failure.clone());
        }
        if self.done {
            return Ok(false);
        }
        let before = self.text.len();
        match std::mem::take(&mut self.shape) {
            Shape::Events => {
                self.shape = Shape::Events;
                self.read_event_bytes(chunk);
            }
            Shape::Whole(mut body) => {
                body.extend_from_slice(chunk);
                self.shape = Shape::Whole(body);
            }
            Shape::Undecided(mut head) => {
                head.extend_from_slice(chunk);
                self.decide(head, false);
            }
        }
        match &self.failure {
            Some(failure) => Err(failure.clone()),
            None => Ok(self.text.len() > before),
        }
    }

    /// The reply's text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How many events carrying data were read: a deadline between signs of life
    /// restarts when this grows, however little text the events carried (a chat
    /// stream's first event names only the role).
    pub fn events_read(&self) -> usize {
        self.events
    }

    /// Whether the stream said it is complete (`data: [DONE]`): nothing after it is
    /// read, so the body need not be read to its end.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The reply, once its body ended: the text of every complete event and how the
    /// server ended it; a body that was no stream, read as a whole reply. An event cut
    /// off by the end of the body is dropped, as the event-stream standard says.
    pub fn end(mut self) -> Result<Completion, LlmError> {
        if let Shape::Undecided(head) = &mut self.shape {
            let head = std::mem::take(head);
            self.decide(head, true);
        }
        if let Some(failure) = self.failure {
            return Err(failure);
        }
        match self.shape {
            Shape::Whole(body) => super::response(200, &String::from_utf8_lossy(&body)),
            Shape::Events | Shape::Undecided(_) if !self.answered => Err(LlmError::Unexpected {
                detail: "the stream of events ended without an answer".into(),
            }),
            Shape::Events | Shape::Undecided(_) => Ok(Completion {
                text: self.text,
                ending: self.ending,
            }),
        }
    }

    /// What had arrived when the user pressed stop, marked as stopped by the user.
    pub fn stopped_by_user(self) -> Completion {
        Completion::stopped_by_user(self.text)
    }

    /// Settles the body's shape from its first bytes `head`, once they tell (or the body
    /// `ended`), and reads them in that shape.
    fn decide(&mut self, head: Vec<u8>, ended: bool) {
        let head = head
            .strip_prefix(BYTE_ORDER_MARK)
            .map_or(head.clone(), <[u8]>::to_vec);
        let first = head.trim_ascii_start();
        let is_events = EVENT_STARTS.iter().any(|start| first.starts_with(start));
        let may_be_events = EVENT_STARTS
            .iter()
            .any(|start| start.starts_with(first) && !first.is_empty());
        if is_events {
            self.shape = Shape::Events;
            self.read_event_bytes(&head);
        } else if !ended && (first.is_empty() || may_be_events) {
            self.shape = Shape::Undecided(head);
        } else {
            self.shape = Shape::Whole(head);
        }
    }

    fn read_event_bytes(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            if std::mem::take(&mut self.after_cr) && byte == b'\n' {
                continue;
            }
            match byte {
                b'\n' => self.end_line(),
                b'\r' => {
                    self.end_line();
                    self.after_cr = true;
                }
                _ => self.line.push(byte),
            }
            if self.done || self.failure.is_some() {
                return;
            }
        }
    }

    /// Reads one whole line: a field of the pending event, a comment, or the blank line
    /// that dispatches the event.
    fn end_line(&mut self) {
        // Whole lines only, so a character split across chunks is whole again here.
        let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
        if line.is_empty() {
            self.dispatch();
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_str(), ""),
        };
        match field {
            "data" => self.event.add_data(value),
            "event" => self.event.is_error = value == "error",
            "error" => {
                self.event.is_error = true;
                self.event.add_data(value);
            }
            // `id`, `retry` and unknown fields say nothing about the reply.
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        let event = std::mem::take(&mut self.event);
        if !event.has_data {
            return;
        }
        self.events += 1;
        let data = event.data.strip_suffix('\n').unwrap_or(&event.data);
        if event.is_error {
            self.failure = Some(error_event(data));
        } else if data.trim() == "[DONE]" {
            self.done = true;
        } else {
            match serde_json::from_str::<Value>(data) {
                Ok(chunk) => self.take_chunk(&chunk),
                Err(e) => {
                    self.failure = Some(LlmError::NotJson {
                        detail: format!("an event of the stream: {e}; {}", describe_non_json(data)),
                    });
                }
            }
        }
    }

    /// One `chat.completion.chunk` or `text_completion` event: its text (`text` in
    /// completion mode, `delta.content` in chat mode) and perhaps its finish reason.
    fn take_chunk(&mut self, chunk: &Value) {
        match chunk["choices"].get(0) {
            Some(choice) => {
                self.answered = true;
                let delta = choice["text"]
                    .as_str()
                    .or_else(|| choice["delta"]["content"].as_str());
                if let Some(delta) = delta {
                    self.text.push_str(delta);
                }
                if let Some(reason) = choice["finish_reason"].as_str() {
                    self.ending = Ending::from_finish_reason(Some(reason));
                }
            }
            None if !chunk["error"].is_null() => {
                self.failure = Some(LlmError::Unexpected {
                    detail: without_choices(chunk),
                });
            }
            // A chunk with no choice carries usage or timings, not the reply.
            None => {}
        }
    }
}

impl PendingEvent {
    fn add_data(&mut self, value: &str) {
        self.data.push_str(value);
        self.data.push('\n');
        self.has_data = true;
    }
}

/// An error sent as an event, as the same error a whole reply carrying it gives: its
/// data may be `{"error": …}`, the error object itself (llama.cpp), or plain words.
fn error_event(data: &str) -> LlmError {
    let value = serde_json::from_str::<Value>(data).unwrap_or_else(|_| json!(data));
    let reply = if value["error"].is_null() {
        json!({ "error": value })
    } else {
        value
    };
    LlmError::Unexpected {
        detail: without_choices(&reply),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::openai_wire::response;
    use proptest::prelude::*;

    /// A stream of `data:` events, each ended by a blank line, then `[DONE]`.
    fn events(payloads: &[&str]) -> String {
        let mut body: String = payloads.iter().map(|p| format!("data: {p}\n\n")).collect();
        body.push_str("data: [DONE]\n\n");
        body
    }

    fn completion_chunk(text: &str, finish: Option<&str>) -> String {
        json!({"object": "text_completion", "choices": [{"index": 0, "text": text, "finish_reason": finish}]})
            .to_string()
    }

    fn chat_chunk(delta: Value, finish: Option<&str>) -> String {
        json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
            .to_string()
    }

    fn read_in(chunks: &[&[u8]]) -> Result<Completion, LlmError> {
        let mut reply = StreamedReply::new();
        for chunk in chunks {
            reply.read(chunk)?;
        }
        reply.end()
    }

    fn read_whole(body: &str) -> Result<Completion, LlmError> {
        read_in(&[body.as_bytes()])
    }

    #[test]
    fn completion_mode_events_add_up_to_the_reply_and_a_stop_reason_is_a_stop() {
        let body = events(&[
            &completion_chunk(" the synonym", None),
            &completion_chunk(" for a is b", None),
            &completion_chunk("", Some("stop")),
        ]);
        assert_eq!(
            read_whole(&body).unwrap(),
            Completion {
                text: " the synonym for a is b".into(),
                ending: Ending::StopSequence,
            }
        );
    }

    #[test]
    fn chat_mode_deltas_add_up_and_a_length_reason_is_no_stop() {
        let body = events(&[
            &chat_chunk(json!({"role": "assistant"}), None),
            &chat_chunk(json!({"content": "Under"}), None),
            &chat_chunk(json!({"content": "standing"}), None),
            &chat_chunk(json!({"content": null}), Some("length")),
        ]);
        assert_eq!(
            read_whole(&body).unwrap(),
            Completion {
                text: "Understanding".into(),
                ending: Ending::Finished,
            }
        );
    }

    #[test]
    fn a_line_and_a_character_split_across_chunks_are_read_whole() {
        let body = events(&[&completion_chunk("café", Some("stop"))]);
        let bytes = body.as_bytes();
        let e_acute = body.find('é').unwrap();
        // Cut inside "data:", inside the two bytes of é, and between the two newlines.
        let cuts = [3, e_acute + 1, body.find("\n\n").unwrap() + 1];
        let chunks = [
            &bytes[..cuts[0]],
            &bytes[cuts[0]..cuts[1]],
            &bytes[cuts[1]..cuts[2]],
            &bytes[cuts[2]..],
        ];
        assert_eq!(read_in(&chunks).unwrap().text, "café");
    }

    #[test]
    fn crlf_and_lone_cr_end_lines_as_lf_does() {
        let lf = events(&[
            &completion_chunk("a", None),
            &completion_chunk("b", Some("stop")),
        ]);
        let crlf = lf.replace('\n', "\r\n");
        let cr = lf.replace('\n', "\r");
        let expected = read_whole(&lf).unwrap();
        assert_eq!(expected.text, "ab");
        assert_eq!(read_whole(&crlf).unwrap(), expected);
        assert_eq!(read_whole(&cr).unwrap(), expected);
        // A CRLF split between its two bytes ends one line, not two.
        let at = crlf.find("\r\n").unwrap() + 1;
        let (head, tail) = crlf.as_bytes().split_at(at);
        assert_eq!(read_in(&[head, tail]).unwrap(), expected);
    }

    #[test]
    fn each_read_says_whether_the_text_grew_even_with_several_events_in_a_chunk() {
        let mut reply = StreamedReply::new();
        let two = format!(
            "data: {}\n\ndata: {}\n\n",
            completion_chunk("Hel", None),
            completion_chunk("lo", None)
        );
        assert!(reply.read(two.as_bytes()).unwrap());
        assert_eq!(reply.text(), "Hello");
        assert_eq!(reply.events_read(), 2);
        assert!(!reply.read(b": keep-alive\n\n").unwrap());
        assert!(!reply.read(b"data: {\"choi").unwrap());
        assert_eq!(reply.text(), "Hello");
        assert_eq!(
            reply.events_read(),
            2,
            "a comment and half an event are no events"
        );
        let role_only = br#"ces":[{"delta":{"role":"assistant"}}]}"#;
        assert!(!reply.read(role_only).unwrap());
        assert!(!reply.read(b"\n\n").unwrap());
        assert_eq!(reply.events_read(), 3, "an event without text is still one");
    }

    #[test]
    fn comments_ids_retries_and_event_names_are_not_the_reply() {
        let body = format!(
            ": ping\n\nevent: message\nid: 7\nretry: 1000\ndata: {}\n\n: done soon\ndata: [DONE]\n\n",
            completion_chunk("x", Some("stop"))
        );
        assert_eq!(
            read_whole(&body).unwrap(),
            Completion {
                text: "x".into(),
                ending: Ending::StopSequence,
            }
        );
    }

    #[test]
    fn done_completes_the_reply_and_anything_after_it_is_ignored() {
        let mut reply = StreamedReply::new();
        let body = events(&[&completion_chunk("ok", Some("stop"))]);
        reply.read(body.as_bytes()).unwrap();
        assert!(reply.is_done());
        assert!(!reply.read(b"data: not json\n\n").unwrap());
        assert_eq!(reply.end().unwrap().text, "ok");
    }

    #[test]
    fn a_stream_that_ends_without_done_keeps_its_complete_events_and_drops_a_cut_one() {
        let body = format!(
            "data: {}\n\ndata: {}",
            completion_chunk("kept", None),
            completion_chunk(" cut", None)
        );
        assert_eq!(read_whole(&body).unwrap().text, "kept");
    }

    #[test]
    fn a_usage_chunk_without_choices_is_not_the_reply() {
        let body = events(&[
            &chat_chunk(json!({"content": "x"}), Some("stop")),
            r#"{"choices":[],"usage":{"total_tokens":9}}"#,
        ]);
        assert_eq!(read_whole(&body).unwrap().text, "x");
    }

    #[test]
    fn an_error_event_mid_stream_is_the_error_a_whole_reply_carrying_it_gives() {
        let error = r#"{"error":{"message":"the request exceeds the available context size","type":"exceed_context_size_error"}}"#;
        let body = events(&[&completion_chunk("so far", None), error]);
        let err = read_whole(&body).unwrap_err();
        assert_eq!(err, response(200, error).unwrap_err());
        assert_eq!(
            err.to_string(),
            "The endpoint sent an unexpected reply: an error instead of an answer — the request exceeds the available context size"
        );
    }

    #[test]
    fn an_error_read_once_is_returned_by_every_later_read() {
        let mut reply = StreamedReply::new();
        let first = reply.read(b"data: {\"error\":\"busy\"}\n\n").unwrap_err();
        assert_eq!(reply.read(b"data: [DONE]\n\n").unwrap_err(), first);
        assert_eq!(reply.end().unwrap_err(), first);
    }

    #[test]
    fn an_error_sent_as_an_error_field_or_event_reports_its_message() {
        let expected = LlmError::Unexpected {
            detail: "an error instead of an answer — Loading model".into(),
        };
        // llama.cpp's server sends its error object in an `error:` field.
        let llama = "error: {\"code\":503,\"message\":\"Loading model\",\"type\":\"unavailable_error\"}\n\n";
        assert_eq!(read_whole(llama).unwrap_err(), expected);
        let named = "event: error\ndata: {\"error\":{\"message\":\"Loading model\"}}\n\n";
        assert_eq!(read_whole(named).unwrap_err(), expected);
        let words = "event: error\ndata: Loading model\n\n";
        assert_eq!(read_whole(words).unwrap_err(), expected);
    }

    #[test]
    fn an_event_that_is_not_json_is_named_as_such() {
        let err = read_whole("data: <html>oops</html>\n\n").unwrap_err();
        assert!(matches!(err, LlmError::NotJson { .. }), "{err:?}");
        assert!(err.to_string().contains("an event of the stream"), "{err}");
    }

    #[test]
    fn a_stream_of_events_without_an_answer_is_unexpected() {
        assert_eq!(
            read_whole(": ping\n\ndata: [DONE]\n\n").unwrap_err(),
            LlmError::Unexpected {
                detail: "the stream of events ended without an answer".into()
            }
        );
    }

    #[test]
    fn a_whole_json_reply_to_a_streaming_request_reads_as_the_non_streaming_reply_does() {
        for body in [
            r#"{"choices":[{"text":" the synonym for a is b","finish_reason":"stop"}]}"#,
            "\n  {\"choices\":[{\"message\":{\"role\":\"assistant\",\"content\":\"x\"},\"finish_reason\":\"length\"}]}",
            r#"{"error":{"message":"model not found"}}"#,
            "<!DOCTYPE html><html><head><title>Welcome to nginx!</title></head></html>",
            "Internal Server Error",
            "da",
            "",
        ] {
            // In three chunks: its first byte, up to its middle, the rest.
            let bytes = body.as_bytes();
            let first = bytes.len().min(1);
            let middle = (bytes.len() / 2).max(first);
            let chunks = [&bytes[..first], &bytes[first..middle], &bytes[middle..]];
            assert_eq!(read_in(&chunks), response(200, body), "{body:?}");
        }
    }

    #[test]
    fn a_whole_reply_shows_no_text_and_no_events_until_it_ends() {
        let mut reply = StreamedReply::new();
        // A whole reply trickling in (leading whitespace first) gives a deadline
        // between signs of life nothing to restart on.
        assert!(!reply.read(b"   ").unwrap());
        assert!(!reply.read(br#"{"choices":[{"text":"x"}]"#).unwrap());
        assert_eq!(reply.events_read(), 0);
        assert_eq!(reply.text(), "");
        assert!(!reply.read(b"}").unwrap());
        assert_eq!(reply.end().unwrap().text, "x");
    }

    #[test]
    fn a_byte_order_mark_before_the_stream_is_skipped() {
        let body = format!("\u{FEFF}{}", events(&[&completion_chunk("x", None)]));
        assert_eq!(read_whole(&body).unwrap().text, "x");
    }

    #[test]
    fn stopping_keeps_what_arrived_and_marks_it_stopped_by_the_user() {
        let mut reply = StreamedReply::new();
        let start = format!(
            "data: {}\n\n",
            chat_chunk(json!({"content": "Under"}), None)
        );
        reply.read(start.as_bytes()).unwrap();
        reply
            .read(b"data: {\"choices\":[{\"delta\":{\"content\":\"st")
            .unwrap();
        assert_eq!(
            reply.stopped_by_user(),
            Completion {
                text: "Under".into(),
                ending: Ending::StoppedByUser,
            }
        );
    }

    /// A stream of `deltas` in either mode, lines ended by `\n` or `\r\n`.
    fn stream_of(deltas: &[String], chat: bool, crlf: bool) -> String {
        let last = deltas.len().saturating_sub(1);
        let chunks: Vec<String> = deltas
            .iter()
            .enumerate()
            .map(|(i, delta)| {
                let finish = (i == last).then_some("stop");
                if chat {
                    chat_chunk(json!({ "content": delta }), finish)
                } else {
                    completion_chunk(delta, finish)
                }
            })
            .collect();
        let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
        let body = events(&refs);
        if crlf {
            body.replace('\n', "\r\n")
        } else {
            body
        }
    }

    proptest! {
        #[test]
        fn any_chunking_of_a_stream_gives_the_same_reply(
            deltas in proptest::collection::vec("\\PC{0,12}", 1..8),
            chat: bool,
            crlf: bool,
            cuts in proptest::collection::vec(any::<proptest::sample::Index>(), 0..12),
        ) {
            let body = stream_of(&deltas, chat, crlf);
            let bytes = body.as_bytes();
            let mut at: Vec<usize> = cuts.iter().map(|cut| cut.index(bytes.len() + 1)).collect();
            at.push(0);
            at.push(bytes.len());
            at.sort_unstable();
            let chunks: Vec<&[u8]> = at.windows(2).map(|w| &bytes[w[0]..w[1]]).collect();
            let expected = Completion { text: deltas.concat(), ending: Ending::StopSequence };
            prop_assert_eq!(read_in(&chunks), Ok(expected));
        }

        #[test]
        fn any_bytes_in_any_chunks_are_a_reply_or_an_error_never_a_panic(
            chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..6),
            text in "(data: |: |event: |error: |\\[DONE\\]|\\{|\\}|\"|choices|\r|\n|\\PC){0,60}",
        ) {
            let mut reply = StreamedReply::new();
            for chunk in &chunks {
                let _ = reply.read(chunk);
            }
            let _ = reply.end();
            let mut reply = StreamedReply::new();
            for piece in text.as_bytes().chunks(3) {
                let _ = reply.read(piece);
            }
            let _ = reply.text();
            let _ = reply.stopped_by_user();
        }
    }
}
