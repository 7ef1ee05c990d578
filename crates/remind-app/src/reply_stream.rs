//! A reply shown as it is generated, and the user's stop for it.
//!
//! The page hands one to the model port with each question: the port shows the text as
//! it arrives and gives the request up the moment the user presses stop, however long
//! the server stays silent. Platform-free (a waker, no timer), so the test fakes and the
//! browser adapter race the same stop.

use std::fmt;
use std::future::{Future, poll_fn};
use std::pin::pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll, Waker};

/// Where a streamed reply's text goes, and the stop that may end it.
pub struct ReplyStream<'a> {
    show: Box<dyn Fn(&str) + 'a>,
    stop: StopSignal,
}

impl<'a> ReplyStream<'a> {
    /// A reply whose text `show` receives, whole so far, each time it grows; `stop` is
    /// the signal the page's stop button presses (keep a clone of it there).
    pub fn new(stop: StopSignal, show: impl Fn(&str) + 'a) -> Self {
        ReplyStream {
            show: Box::new(show),
            stop,
        }
    }

    /// A reply shown to no one and never stopped: for callers that only want the
    /// finished turn (the tests, the harness's replays).
    pub fn unshown() -> Self {
        ReplyStream::new(StopSignal::new(), |_| {})
    }

    /// Shows the reply's whole text so far (not just what was added).
    pub fn show(&self, text_so_far: &str) {
        (self.show)(text_so_far);
    }

    /// The stop this reply listens to.
    pub fn stop_signal(&self) -> &StopSignal {
        &self.stop
    }

    pub fn is_stopped(&self) -> bool {
        self.stop.is_stopped()
    }

    /// Runs `work` until it finishes (`Some` of its output) or the user presses stop
    /// (`None`, and `work` is dropped unfinished, which aborts a fetch it holds). A stop
    /// pressed before the call returns `None` without starting `work`.
    pub async fn unless_stopped<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        let mut work = pin!(work);
        poll_fn(|cx| {
            if self.stop.poll_stopped(cx) {
                return Poll::Ready(None);
            }
            work.as_mut().poll(cx).map(Some)
        })
        .await
    }
}

impl fmt::Debug for ReplyStream<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReplyStream")
            .field("stop", &self.stop)
            .finish_non_exhaustive()
    }
}

/// The user's stop for one reply. Clones share it: the button keeps one and presses
/// [`StopSignal::stop`], the request waits on another. `Send` and `Sync`, so it may sit
/// in any signal or store of the UI. Once pressed it stays pressed: use a new one for
/// the next question.
#[derive(Clone, Default)]
pub struct StopSignal(Arc<Mutex<StopState>>);

#[derive(Default)]
struct StopState {
    stopped: bool,
    /// The tasks waiting on the stop, woken when it is pressed.
    waiting: Vec<Waker>,
}

impl StopSignal {
    pub fn new() -> Self {
        StopSignal::default()
    }

    /// Presses stop: every request waiting on this signal gives up at once.
    pub fn stop(&self) {
        let waiting = {
            let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
            state.stopped = true;
            std::mem::take(&mut state.waiting)
        };
        // Woken outside the lock, so a waker that polls at once cannot deadlock on it.
        for waker in waiting {
            waker.wake();
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .stopped
    }

    /// Whether stop was pressed; if not, the task of `cx` is woken when it is.
    fn poll_stopped(&self, cx: &mut Context<'_>) -> bool {
        let mut state = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if state.stopped {
            return true;
        }
        if !state.waiting.iter().any(|w| w.will_wake(cx.waker())) {
            state.waiting.push(cx.waker().clone());
        }
        false
    }
}

impl fmt::Debug for StopSignal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StopSignal")
            .field("stopped", &self.is_stopped())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::{Completion, CompletionRequest, Ending, LanguageModel, LlmError};
    use crate::settings::{Endpoint, Settings};
    use futures::executor::block_on;
    use remind_core::prompt::RenderedPrompt;
    use std::cell::RefCell;
    use std::future::pending;

    #[test]
    fn work_that_finishes_before_a_stop_gives_its_output() {
        let reply = ReplyStream::new(StopSignal::new(), |_| {});
        assert_eq!(block_on(reply.unless_stopped(async { 7 })), Some(7));
    }

    #[test]
    fn a_stop_pressed_before_the_work_starts_skips_it() {
        let stop = StopSignal::new();
        stop.stop();
        let reply = ReplyStream::new(stop, |_| {});
        let started = RefCell::new(false);
        let outcome = block_on(reply.unless_stopped(async {
            *started.borrow_mut() = true;
        }));
        assert_eq!(outcome, None);
        assert!(!*started.borrow());
    }

    #[test]
    fn a_stop_pressed_while_the_work_waits_for_ever_ends_the_wait() {
        let stop = StopSignal::new();
        let button = stop.clone();
        let reply = ReplyStream::new(stop, |_| {});
        // The work presses stop, then waits on a server that never answers: only the
        // stop's waker can end this, or block_on never returns.
        let outcome = block_on(reply.unless_stopped(async {
            button.stop();
            pending::<()>().await
        }));
        assert_eq!(outcome, None);
        assert!(reply.is_stopped());
    }

    #[test]
    fn show_passes_the_text_so_far_to_the_page() {
        let shown = RefCell::new(Vec::new());
        let reply = ReplyStream::new(StopSignal::new(), |text| {
            shown.borrow_mut().push(text.to_string())
        });
        reply.show("Hel");
        reply.show("Hello");
        assert_eq!(*shown.borrow(), ["Hel", "Hello"]);
    }

    /// A model that cannot stream: it answers whole, or, given no answer, never.
    struct WholeReplies(Option<&'static str>);

    impl LanguageModel for WholeReplies {
        async fn complete(
            &self,
            _endpoint: &Endpoint,
            _request: &CompletionRequest,
        ) -> Result<Completion, LlmError> {
            match self.0 {
                Some(text) => Ok(Completion {
                    text: text.into(),
                    ending: Ending::StopSequence,
                }),
                None => pending().await,
            }
        }
    }

    fn request() -> CompletionRequest {
        CompletionRequest {
            prompt: RenderedPrompt::Completion("p".into()),
            max_tokens: 8,
            temperature: 0.0,
            stop: vec![],
        }
    }

    #[test]
    fn a_model_that_cannot_stream_shows_its_whole_reply_once() {
        let shown = RefCell::new(Vec::new());
        let reply = ReplyStream::new(StopSignal::new(), |text| {
            shown.borrow_mut().push(text.to_string())
        });
        let endpoint = Settings::default().endpoint;
        let completion = block_on(WholeReplies(Some("a is b")).complete_streaming(
            &endpoint,
            &request(),
            &reply,
        ));
        assert_eq!(
            completion,
            Ok(Completion {
                text: "a is b".into(),
                ending: Ending::StopSequence,
            })
        );
        assert_eq!(*shown.borrow(), ["a is b"]);
    }

    #[test]
    fn a_stop_ends_the_wait_for_a_model_that_cannot_stream_with_nothing_shown() {
        let stop = StopSignal::new();
        let button = stop.clone();
        let reply = ReplyStream::new(stop, |_| panic!("nothing arrived to show"));
        let endpoint = Settings::default().endpoint;
        let model = WholeReplies(None);
        let completion = block_on(async {
            let request = request();
            let waiting = model.complete_streaming(&endpoint, &request, &reply);
            let press = async { button.stop() };
            futures::future::join(waiting, press).await.0
        });
        assert_eq!(completion, Ok(Completion::stopped_by_user(String::new())));
    }

    #[test]
    fn a_stop_signal_can_be_shared_across_threads() {
        fn shareable<T: Send + Sync + 'static>(_: &T) {}
        let stop = StopSignal::new();
        shareable(&stop);
        let button = stop.clone();
        std::thread::spawn(move || button.stop())
            .join()
            .expect("the button's thread ends");
        assert!(stop.is_stopped());
    }
}
