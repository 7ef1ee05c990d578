//! A reply shown as it streams, and the user's stop, through the scripted model the
//! session tests use: what the page will see before the browser's adapter is involved.
#![cfg(not(target_arch = "wasm32"))]

use std::cell::RefCell;

use remind_app::ports::{
    Completion, CompletionRequest, Ending, LanguageModel, ReplyStream, StopSignal,
};
use remind_app::settings::Settings;
use remind_core::prompt::RenderedPrompt;
use remind_test_support::scripted::{ScriptedModel, block_on};

fn request() -> CompletionRequest {
    CompletionRequest {
        prompt: RenderedPrompt::Completion("q".into()),
        max_tokens: 32,
        temperature: 0.0,
        stop: vec!["END".into()],
    }
}

#[test]
fn a_streamed_reply_is_shown_growing_and_ends_as_the_whole_reply() {
    let model = ScriptedModel::default();
    model.will_reply("the antonym for hot is cold END");
    let shown = RefCell::new(Vec::new());
    let reply = ReplyStream::new(StopSignal::new(), |text| {
        shown.borrow_mut().push(text.to_string())
    });
    let endpoint = Settings::default().endpoint;
    let completion = block_on(model.complete_streaming(&endpoint, &request(), &reply)).unwrap();
    assert_eq!(completion.text, "the antonym for hot is cold END");
    assert_eq!(completion.ending, Ending::Finished);
    drop(reply);
    let shown = shown.into_inner();
    assert_eq!(shown.first().map(String::as_str), Some("the "));
    assert_eq!(shown.last(), Some(&completion.text));
    assert!(
        shown.windows(2).all(|w| w[1].starts_with(&w[0])),
        "{shown:?}"
    );
}

#[test]
fn a_stop_pressed_mid_reply_keeps_what_was_shown_and_marks_it_stopped_by_the_user() {
    let model = ScriptedModel::default();
    model.will_reply("the antonym for hot is cold END");
    let stop = StopSignal::new();
    let button = stop.clone();
    let reply = ReplyStream::new(stop, |text| {
        if text == "the antonym " {
            button.stop();
        }
    });
    let endpoint = Settings::default().endpoint;
    let completion = block_on(model.complete_streaming(&endpoint, &request(), &reply)).unwrap();
    assert_eq!(
        completion,
        Completion::stopped_by_user("the antonym ".into())
    );
    assert!(completion.is_stopped_by_user());
    assert!(!completion.at_stop_sequence());
}

#[test]
fn a_stop_pressed_before_the_question_is_sent_sends_nothing() {
    let model = ScriptedModel::default();
    let stop = StopSignal::new();
    stop.stop();
    let reply = ReplyStream::new(stop, |text| panic!("nothing was asked, yet {text:?} shown"));
    let endpoint = Settings::default().endpoint;
    let completion = block_on(model.complete_streaming(&endpoint, &request(), &reply)).unwrap();
    assert_eq!(completion, Completion::stopped_by_user(String::new()));
    assert!(model.requests.borrow().is_empty());
}
