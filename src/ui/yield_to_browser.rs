//! Handing the main thread back to the browser in the middle of long work, so it can
//! paint progress and answer input between slices (a large import is checked so).

use std::time::Duration;

use js_sys::{Array, Function, Promise};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::Closure;
use wasm_bindgen_futures::JsFuture;
use web_sys::{MessageChannel, MessagePort};

/// The page's own channel: a message posted to it is delivered in a task of its own,
/// where the promise waiting for it is resolved. One channel for the page's life, as
/// a port no longer referenced could be collected with a message still on its way.
struct Channel {
    sender: MessagePort,
    /// The resolve functions of the yields waiting, oldest first: messages arrive in
    /// the order they were posted, one per yield.
    waiting: Array,
    _receiver: MessagePort,
    _on_message: Closure<dyn FnMut()>,
}

thread_local! {
    static CHANNEL: Option<Channel> = MessageChannel::new().ok().map(|channel| {
        let waiting = Array::new();
        let resolving = waiting.clone();
        let on_message = Closure::<dyn FnMut()>::new(move || {
            if let Ok(resolve) = resolving.shift().dyn_into::<Function>() {
                let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
            }
        });
        let receiver = channel.port1();
        receiver.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        Channel {
            sender: channel.port2(),
            waiting,
            _receiver: receiver,
            _on_message: on_message,
        }
    });
}

/// Resolves in a later task of the event loop, after the browser has had the chance
/// to run input handlers and paint. A resolved promise would not do: its continuation
/// runs in the same task, so the page would stay frozen.
///
/// The task is a message posted to the page's own channel, not a `setTimeout(0)`: the
/// browser holds a timeout nested in timeouts for at least 4 ms, which over the 40
/// slices of a 10 000-lesson import was a sixth of its time spent waiting.
pub async fn yield_to_browser() {
    let later = Promise::new(&mut |resolve, _reject| {
        let posted = CHANNEL.with(|channel| {
            let channel = channel.as_ref()?;
            channel
                .sender
                .post_message(&wasm_bindgen::JsValue::NULL)
                .ok()?;
            // Delivered in a later task, so never before it is waited for here.
            channel.waiting.push(&resolve);
            Some(())
        });
        if posted.is_none() {
            // No channel to post on (never so on the page): go on at once.
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        }
    });
    let _ = JsFuture::from(later).await;
}

/// Resolves after `duration`, the main thread the browser's meanwhile.
pub async fn pause(duration: Duration) {
    let later = Promise::new(&mut |resolve, _reject| {
        let scheduled = web_sys::window().and_then(|window| {
            window
                .set_timeout_with_callback_and_timeout_and_arguments_0(
                    &resolve,
                    i32::try_from(duration.as_millis()).unwrap_or(i32::MAX),
                )
                .ok()
        });
        if scheduled.is_none() {
            // No window to wait on (never so on the page): go on at once.
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        }
    });
    let _ = JsFuture::from(later).await;
}
