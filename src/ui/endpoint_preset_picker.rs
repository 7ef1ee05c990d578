//! The preset picker of the settings: choosing a server (Ollama, LM Studio, …) fills
//! the base URL and mode it is reached by, so nobody has to know them.

use leptos::prelude::*;

use remind_app::endpoint_presets::{EndpointPreset, PRESETS};

/// The `<select>` value while the base URL is none of the presets'.
const CUSTOM: &str = "custom";

/// Shows the preset the base URL belongs to ("Custom" for any other) and hands the one
/// chosen to `on_pick`.
#[component]
pub fn EndpointPresetPicker(
    /// The base URL in the form, not the saved one, so the picker follows typing.
    #[prop(into)]
    base_url: Signal<String>,
    on_pick: Callback<&'static EndpointPreset>,
) -> impl IntoView {
    let selected = Memo::new(move |_| {
        EndpointPreset::matching(&base_url.get()).map_or(CUSTOM, |preset| preset.id)
    });
    let options = PRESETS
        .iter()
        .map(|preset| view! { <option value=preset.id>{preset.name}</option> })
        .collect_view();
    let on_change = move |ev| {
        if let Some(preset) = EndpointPreset::by_id(&event_target_value(&ev)) {
            on_pick.run(preset);
        }
    };
    view! {
        <label for="settings-preset">"Server"</label>
        <select id="settings-preset" prop:value=move || selected.get() on:change=on_change>
            {options}
            <option value=CUSTOM>"Custom (type the base URL below)"</option>
        </select>
    }
}
