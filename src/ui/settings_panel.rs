//! Where the endpoint is chosen (a preset, or base URL, key, model, prompt mode,
//! timeout), tested, and how strictly a rephrased question must match a stored lesson.
//!
//! The panel stays open until the settings work: it opens on load unless the saved
//! endpoint passed a connection test, and folds after a tested endpoint is saved.

use leptos::ev::SubmitEvent;
use leptos::prelude::*;

use crate::ui::endpoint_preset_picker::EndpointPresetPicker;
use crate::ui::page_context::use_page;
use crate::wiring::page_model_catalog;
use remind_app::connection_check::{
    ConnectionProblem, ConnectionReport, check_connection, known_to_work,
};
use remind_app::endpoint_presets::EndpointPreset;
use remind_app::settings::Endpoint;
use remind_core::prompt::PromptMode;

/// The state of the last connection test, mirrored in `data-state` for tests and styling.
fn test_state(pending: bool, report: Option<&ConnectionReport>) -> &'static str {
    match (pending, report) {
        (true, _) => "testing",
        (false, None) => "untested",
        (false, Some(report)) if report.works() => "works",
        (false, Some(_)) => "fails",
    }
}

/// This page's origin, the one a server's CORS settings must allow.
fn page_origin() -> String {
    window()
        .location()
        .origin()
        .unwrap_or_else(|_| "this page's origin".into())
}

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
    // Whether the saved endpoint passed a connection test; the panel opens when not.
    let working = RwSignal::new(initial.connection_checked);
    let open = RwSignal::new(!initial.connection_checked);
    let last_test = RwSignal::new(None::<ConnectionReport>);

    // The endpoint as the form has it, or why it is not one yet.
    let form_endpoint = move || -> Result<Endpoint, String> {
        let Ok(seconds) = timeout.get_untracked().trim().parse::<u64>() else {
            return Err("the timeout must be a whole number of seconds".into());
        };
        let key = api_key.get_untracked();
        Ok(Endpoint {
            base_url: base_url.get_untracked().trim().to_string(),
            api_key: (!key.trim().is_empty()).then_some(key),
            model: model.get_untracked().trim().to_string(),
            mode: mode.get_untracked(),
            timeout_seconds: seconds,
        })
    };

    let test_connection = Action::new_local(move |endpoint: &Endpoint| {
        let endpoint = endpoint.clone();
        async move {
            let report = check_connection(&page_model_catalog(), &endpoint, &page_origin()).await;
            // A server that serves one model leaves nothing to choose: a name it does
            // not list is taken to be a leftover of another server.
            if let [only] = report.models()
                && model.get_untracked().trim() != only
            {
                model.set(only.clone());
            }
            last_test.set(Some(report));
        }
    });
    let testing = test_connection.pending();
    let on_test = move |_| match form_endpoint() {
        Ok(endpoint) => {
            test_connection.dispatch(endpoint);
        }
        Err(reason) => last_test.set(Some(ConnectionReport::Fails(
            ConnectionProblem::BadSettings(reason),
        ))),
    };
    let connection_message = Memo::new(move |_| {
        if testing.get() {
            return "Testing the connection…".to_string();
        }
        last_test.with(|report| {
            report
                .as_ref()
                .map(|report| report.message(model.get().trim()))
                .unwrap_or_default()
        })
    });
    let connection_state =
        move || last_test.with(|report| test_state(testing.get(), report.as_ref()));
    let listed_models = Memo::new(move |_| {
        last_test.with(|report| {
            report
                .as_ref()
                .map(|r| r.models().to_vec())
                .unwrap_or_default()
        })
    });
    let model_options = move || {
        listed_models
            .get()
            .into_iter()
            .map(|id| view! { <option value=id.clone()>{id.clone()}</option> })
            .collect_view()
    };
    let key_note = Memo::new(move |_| {
        let needs_key = EndpointPreset::matching(&base_url.get()).is_some_and(|p| p.needs_key);
        (needs_key && api_key.with(|key| key.trim().is_empty()))
            .then_some("This server needs an API key.")
    });
    let summary_note = move || working.get().then_some(" — working");

    let on_pick = Callback::new(move |preset: &'static EndpointPreset| {
        let Ok(current) = form_endpoint() else {
            // A broken timeout is the user's to fix; the preset still sets its parts.
            base_url.set(preset.base_url.to_string());
            mode.set(preset.mode);
            return;
        };
        let next = preset.apply_to(&current);
        base_url.set(next.base_url);
        api_key.set(next.api_key.unwrap_or_default());
        model.set(next.model);
        mode.set(next.mode);
        // The last test was of another server.
        last_test.set(None);
    });

    let on_submit = move |ev: SubmitEvent| {
        ev.prevent_default();
        let session = page.session();
        let previous = session.settings();
        let endpoint = match form_endpoint() {
            Ok(endpoint) => endpoint,
            Err(reason) => {
                status.set(format!("Not saved: {reason}"));
                return;
            }
        };
        let Ok(threshold) = tau.get_untracked().trim().parse::<f32>() else {
            status.set("Not saved: the match threshold must be a number such as 0.80".into());
            return;
        };
        let mut settings = previous.clone();
        settings.connection_checked =
            last_test.with_untracked(|report| known_to_work(&previous, report.as_ref(), &endpoint));
        settings.endpoint = endpoint;
        settings.semantic_tau = threshold;
        let works = settings.connection_checked;
        match session.save_settings(settings) {
            Ok(()) => {
                status.set("Settings saved".into());
                working.set(works);
                if works {
                    open.set(false);
                }
            }
            Err(e) => status.set(format!("Not saved: {e}")),
        }
    };
    view! {
        <details class="settings" prop:open=move || open.get()
            on:toggle=move |ev| open.set(event_target::<web_sys::Element>(&ev).has_attribute("open"))>
            <summary>"Model endpoint" {summary_note}</summary>
            <form on:submit=on_submit>
                <EndpointPresetPicker base_url=base_url on_pick=on_pick/>
                <label for="settings-base-url">"Base URL"</label>
                <input id="settings-base-url" type="url" prop:value=base_url
                    on:input=move |ev| base_url.set(event_target_value(&ev))/>
                <label for="settings-api-key">"API key (optional, stays in this browser)"</label>
                <input id="settings-api-key" type="password" autocomplete="off" prop:value=api_key
                    on:input=move |ev| api_key.set(event_target_value(&ev))/>
                <span id="settings-key-note" class="hint">{move || key_note.get()}</span>
                <label for="settings-model">"Model"</label>
                <input id="settings-model" type="text" prop:value=model
                    on:input=move |ev| model.set(event_target_value(&ev))/>
                <Show when=move || !listed_models.with(Vec::is_empty)>
                    <label for="settings-model-choice">"Models the endpoint serves"</label>
                    <select id="settings-model-choice" prop:value=move || model.get()
                        on:change=move |ev| model.set(event_target_value(&ev))>
                        <option value="" disabled=true>"Choose a model"</option>
                        {model_options}
                    </select>
                </Show>
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
                <div class="connection-test">
                    <button id="settings-test-connection" type="button" on:click=on_test
                        disabled=move || testing.get()>
                        "Test connection"
                    </button>
                    <p id="settings-connection-status" class="connection-status" role="status"
                        data-state=connection_state>
                        {move || connection_message.get()}
                    </p>
                </div>
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
