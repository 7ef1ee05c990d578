//! Where the endpoint is chosen (base URL, key, model, prompt mode, timeout), and how
//! strictly a rephrased question must match a stored lesson.

use leptos::ev::SubmitEvent;
use leptos::prelude::*;

use crate::ui::page_context::use_page;
use remind_core::prompt::PromptMode;

#[component]
pub fn SettingsPanel() -> impl IntoView {
    let page = use_page();
    let initial = page.session().settings();
    let base_url = RwSignal::new(initial.endpoint.base_url.clone());
    let api_key = RwSignal::new(initial.endpoint.api_key.clone().unwrap_or_default());
    let model = RwSignal::new(initial.endpoint.model.clone());
    let mode = RwSignal::new(initial.endpoint.mode);
    let mode_options = PromptMode::NAMES
        .names()
        .map(|name| view! { <option value=name>{name}</option> })
        .collect_view();
    let timeout = RwSignal::new(initial.endpoint.timeout_seconds.to_string());
    let tau = RwSignal::new(format!("{:.2}", initial.semantic_tau));
    let status = RwSignal::new(String::new());

    let on_submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        let session = page.session();
        let mut settings = session.settings();
        settings.endpoint.base_url = base_url.get_untracked().trim().to_string();
        let key = api_key.get_untracked();
        settings.endpoint.api_key = (!key.trim().is_empty()).then_some(key);
        settings.endpoint.model = model.get_untracked().trim().to_string();
        settings.endpoint.mode = mode.get_untracked();
        let Ok(seconds) = timeout.get_untracked().trim().parse::<u64>() else {
            status.set("Not saved: the timeout must be a whole number of seconds".into());
            return;
        };
        settings.endpoint.timeout_seconds = seconds;
        let Ok(threshold) = tau.get_untracked().trim().parse::<f32>() else {
            status.set("Not saved: the match threshold must be a number such as 0.80".into());
            return;
        };
        settings.semantic_tau = threshold;
        status.set(match session.save_settings(settings) {
            Ok(()) => "Settings saved".into(),
            Err(e) => format!("Not saved: {e}"),
        });
    };
    view! {
        <details class="settings" open>
            <summary>"Model endpoint"</summary>
            <form on:submit=on_submit>
                <label for="settings-base-url">"Base URL"</label>
                <input id="settings-base-url" type="url" prop:value=base_url
                    on:input=move |ev| base_url.set(event_target_value(&ev))/>
                <label for="settings-api-key">"API key (optional, stays in this browser)"</label>
                <input id="settings-api-key" type="password" autocomplete="off" prop:value=api_key
                    on:input=move |ev| api_key.set(event_target_value(&ev))/>
                <label for="settings-model">"Model"</label>
                <input id="settings-model" type="text" prop:value=model
                    on:input=move |ev| model.set(event_target_value(&ev))/>
                <label for="settings-mode">"Mode"</label>
                <select id="settings-mode" prop:value=move || PromptMode::NAMES.name(mode.get())
                    on:change=move |ev| {
                        mode.set(PromptMode::NAMES.find(&event_target_value(&ev)).unwrap_or_default())
                    }>
                    {mode_options}
                </select>
                <label for="settings-timeout">"Timeout (seconds)"</label>
                <input id="settings-timeout" type="number" min="1" prop:value=timeout
                    on:input=move |ev| timeout.set(event_target_value(&ev))/>
                <label for="settings-tau">
                    "Match threshold (cosine a rephrased question needs to reuse a lesson; higher is stricter)"
                </label>
                <input id="settings-tau" type="number" min="0" max="1" step="0.01" prop:value=tau
                    on:input=move |ev| tau.set(event_target_value(&ev))/>
                <button id="settings-save" type="submit">"Save settings"</button>
                <span id="settings-status" class="status">{move || status.get()}</span>
            </form>
        </details>
    }
}
