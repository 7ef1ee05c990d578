//! Tells the other tabs of this browser that the memory changed, over a
//! BroadcastChannel, and lets the page hear what they announce.
//!
//! One channel object per page: a channel never receives its own messages, so the
//! tab that wrote is not told to re-read what it just wrote.

use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use web_sys::{BroadcastChannel, MessageEvent};

use remind_app::ports::ChangeFeed;

const CHANNEL_NAME: &str = "remind-memory";

thread_local! {
    static CHANNEL: Option<BroadcastChannel> = BroadcastChannel::new(CHANNEL_NAME).ok();
}

#[derive(Clone, Copy, Default)]
pub struct TabBroadcast;

impl ChangeFeed for TabBroadcast {
    fn announce(&self) {
        CHANNEL.with(|channel| {
            if let Some(channel) = channel {
                let _ = channel.post_message(&JsValue::from_str("changed"));
            }
        });
    }
}

impl TabBroadcast {
    /// Calls `on_change` whenever another tab announces a change. Meant to be called
    /// once per page: the handler lives as long as the page does.
    pub fn listen(on_change: impl Fn() + 'static) {
        CHANNEL.with(|channel| {
            if let Some(channel) = channel {
                let handler =
                    Closure::<dyn FnMut(MessageEvent)>::new(move |_: MessageEvent| on_change());
                channel.set_onmessage(Some(handler.as_ref().unchecked_ref()));
                handler.forget();
            }
        });
    }
}
