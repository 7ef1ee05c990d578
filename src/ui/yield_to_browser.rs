//! Handing the main thread back to the browser in the middle of long work, so it can
//! paint progress and answer input between slices (a large import is checked so).

use js_sys::Promise;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// Resolves in a later task of the event loop (a `setTimeout(0)`), after the browser
/// has had the chance to run input handlers and paint. A resolved promise would not
/// do: its continuation runs in the same task, so the page would stay frozen.
pub async fn yield_to_browser() {
    let later = Promise::new(&mut |resolve, _reject| {
        let scheduled = web_sys::window().map(|window| {
            window.set_timeout_with_callback_and_timeout_and_arguments_0(resolve.unchecked_ref(), 0)
        });
        if !matches!(scheduled, Some(Ok(_))) {
            // No window to schedule on (never so on the page): go on at once.
            let _ = resolve.call0(&wasm_bindgen::JsValue::NULL);
        }
    });
    let _ = JsFuture::from(later).await;
}
