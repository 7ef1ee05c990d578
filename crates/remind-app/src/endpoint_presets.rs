//! The servers people usually point Remind at, as data: where each listens, how it is
//! addressed, whether it wants a key, and how to let this page through its CORS check.
//!
//! A preset fills settings; it is never stored. The settings keep only what it filled,
//! so a preset can be recognised again from its base URL.

use crate::settings::{DEFAULT_BASE_URL, DEFAULT_MODEL, Endpoint};
use remind_core::prompt::PromptMode;

/// A kind of server and the settings that reach it where it listens by default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EndpointPreset {
    /// Stable name for the page's `<select>` and the tests.
    pub id: &'static str,
    pub name: &'static str,
    pub base_url: &'static str,
    pub mode: PromptMode,
    /// Whether the server refuses requests without an API key.
    pub needs_key: bool,
    /// The model the preset names, when it has one to name (the local default does).
    pub model: Option<&'static str>,
    /// How this server lets a page of another origin call it; `{origin}` stands for the
    /// page's origin.
    cors_fix: &'static str,
}

/// The presets in the order the page offers them; the local default first.
pub const PRESETS: &[EndpointPreset] = &[
    EndpointPreset {
        id: "local",
        name: "Local default (the llama.cpp server scripts/run starts)",
        base_url: DEFAULT_BASE_URL,
        mode: PromptMode::Completion,
        needs_key: false,
        model: Some(DEFAULT_MODEL),
        cors_fix: "scripts/run starts llama-server, which allows any origin unless it was started with --cors-origins; if it was, add {origin} to that list.",
    },
    EndpointPreset {
        id: "openai",
        name: "OpenAI",
        base_url: "https://api.openai.com/v1",
        mode: PromptMode::Chat,
        needs_key: true,
        model: None,
        cors_fix: "OpenAI accepts calls from web pages that send a key; check the network connection and that the key is set.",
    },
    EndpointPreset {
        id: "ollama",
        name: "Ollama",
        base_url: "http://localhost:11434/v1",
        mode: PromptMode::Chat,
        needs_key: false,
        model: None,
        cors_fix: "Ollama only answers pages it knows: stop it and start it as OLLAMA_ORIGINS={origin} ollama serve (for the desktop app or the system service, set OLLAMA_ORIGINS in its environment and restart it).",
    },
    EndpointPreset {
        id: "llama-cpp",
        name: "llama.cpp server (llama-server)",
        base_url: "http://localhost:8080/v1",
        mode: PromptMode::Chat,
        needs_key: false,
        model: None,
        cors_fix: "llama-server allows any origin unless it was started with --cors-origins; if it was, add {origin} to that list.",
    },
    EndpointPreset {
        id: "lm-studio",
        name: "LM Studio",
        base_url: "http://localhost:1234/v1",
        mode: PromptMode::Chat,
        needs_key: false,
        model: None,
        cors_fix: "In LM Studio's server settings turn on \"Enable CORS\" (or start the server with lms server start --cors), then test again.",
    },
    EndpointPreset {
        id: "vllm",
        name: "vLLM",
        base_url: "http://localhost:8000/v1",
        mode: PromptMode::Chat,
        needs_key: false,
        model: None,
        cors_fix: "vLLM allows any origin unless it was started with --allowed-origins; if it was, include \"{origin}\" in that list.",
    },
];

/// What to do about CORS when the server is none of the presets.
const GENERIC_CORS_FIX: &str = "Allow requests from {origin} in the server's CORS settings (Ollama: OLLAMA_ORIGINS; LM Studio: Enable CORS; vLLM: --allowed-origins; llama-server: --cors-origins).";

impl EndpointPreset {
    pub fn by_id(id: &str) -> Option<&'static EndpointPreset> {
        PRESETS.iter().find(|preset| preset.id == id)
    }

    /// The preset whose base URL this is, whether written with `localhost` or
    /// `127.0.0.1` and with or without a trailing slash.
    pub fn matching(base_url: &str) -> Option<&'static EndpointPreset> {
        let wanted = comparable(base_url);
        PRESETS
            .iter()
            .find(|preset| comparable(preset.base_url) == wanted)
    }

    /// The endpoint with this preset's base URL and mode. A key belongs to the server it
    /// was issued by, so it is dropped when the base URL changes: switching from OpenAI
    /// to Ollama must not send the OpenAI key to another server. The model changes only
    /// when the preset names one; otherwise the connection test lists the server's.
    pub fn apply_to(&self, endpoint: &Endpoint) -> Endpoint {
        let same_server = comparable(&endpoint.base_url) == comparable(self.base_url);
        Endpoint {
            base_url: self.base_url.to_string(),
            api_key: endpoint.api_key.clone().filter(|_| same_server),
            model: self
                .model
                .map_or_else(|| endpoint.model.clone(), str::to_string),
            mode: self.mode,
            timeout_seconds: endpoint.timeout_seconds,
        }
    }

    /// How to let a page at `page_origin` call this server.
    pub fn cors_fix(&self, page_origin: &str) -> String {
        self.cors_fix.replace("{origin}", page_origin)
    }
}

/// How to let a page at `page_origin` call the server at `base_url`: its preset's fix,
/// or the usual switches of the common servers.
pub fn cors_fix_for(base_url: &str, page_origin: &str) -> String {
    EndpointPreset::matching(base_url).map_or_else(
        || GENERIC_CORS_FIX.replace("{origin}", page_origin),
        |preset| preset.cors_fix(page_origin),
    )
}

/// A base URL as compared with a preset's: lower case, no trailing slash, `localhost`
/// for the loopback address.
fn comparable(base_url: &str) -> String {
    base_url
        .trim()
        .trim_end_matches('/')
        .to_ascii_lowercase()
        .replace("://127.0.0.1", "://localhost")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;

    #[test]
    fn the_local_default_preset_is_what_a_fresh_install_uses() {
        let local = EndpointPreset::by_id("local").unwrap();
        let fresh = Settings::default().endpoint;
        assert_eq!(local.apply_to(&fresh), fresh);
        assert_eq!(EndpointPreset::matching(&fresh.base_url), Some(local));
    }

    #[test]
    fn every_preset_but_the_local_default_speaks_chat_at_a_v1_url() {
        for preset in PRESETS.iter().filter(|p| p.id != "local") {
            assert_eq!(preset.mode, PromptMode::Chat, "{}", preset.id);
            assert!(preset.base_url.ends_with("/v1"), "{}", preset.id);
        }
        assert_eq!(PRESETS[0].mode, PromptMode::Completion);
    }

    #[test]
    fn only_openai_needs_a_key() {
        let keyed: Vec<_> = PRESETS
            .iter()
            .filter(|p| p.needs_key)
            .map(|p| p.id)
            .collect();
        assert_eq!(keyed, ["openai"]);
    }

    #[test]
    fn a_preset_fills_base_url_and_mode_and_keeps_the_timeout() {
        let mut endpoint = Settings::default().endpoint;
        endpoint.timeout_seconds = 90;
        let ollama = EndpointPreset::by_id("ollama").unwrap().apply_to(&endpoint);
        assert_eq!(ollama.base_url, "http://localhost:11434/v1");
        assert_eq!(ollama.mode, PromptMode::Chat);
        assert_eq!(ollama.timeout_seconds, 90);
    }

    #[test]
    fn a_key_is_not_carried_to_another_server() {
        let mut openai = EndpointPreset::by_id("openai")
            .unwrap()
            .apply_to(&Settings::default().endpoint);
        openai.api_key = Some("sk-live".into());
        let ollama = EndpointPreset::by_id("ollama").unwrap().apply_to(&openai);
        assert_eq!(ollama.api_key, None);
    }

    #[test]
    fn choosing_the_preset_already_in_use_keeps_its_key() {
        let mut openai = EndpointPreset::by_id("openai")
            .unwrap()
            .apply_to(&Settings::default().endpoint);
        openai.api_key = Some("sk-live".into());
        let again = EndpointPreset::by_id("openai").unwrap().apply_to(&openai);
        assert_eq!(again.api_key.as_deref(), Some("sk-live"));
    }

    #[test]
    fn a_preset_without_a_model_keeps_the_one_typed() {
        let mut endpoint = Settings::default().endpoint;
        endpoint.model = "llama3.2".into();
        let vllm = EndpointPreset::by_id("vllm").unwrap().apply_to(&endpoint);
        assert_eq!(vllm.model, "llama3.2");
        let local = EndpointPreset::by_id("local").unwrap().apply_to(&vllm);
        assert_eq!(local.model, DEFAULT_MODEL);
    }

    #[test]
    fn a_base_url_is_recognised_however_loopback_and_slashes_are_written() {
        let ollama = EndpointPreset::by_id("ollama");
        assert_eq!(
            EndpointPreset::matching("http://127.0.0.1:11434/v1/"),
            ollama
        );
        assert_eq!(
            EndpointPreset::matching("http://LOCALHOST:11434/v1"),
            ollama
        );
        assert_eq!(EndpointPreset::matching("http://localhost:11435/v1"), None);
    }

    #[test]
    fn the_ollama_fix_names_the_variable_and_the_pages_origin() {
        let fix = cors_fix_for("http://localhost:11434/v1", "http://localhost:8080");
        assert!(
            fix.contains("OLLAMA_ORIGINS=http://localhost:8080 ollama serve"),
            "{fix}"
        );
    }

    #[test]
    fn an_unknown_server_gets_every_usual_switch_with_the_pages_origin() {
        let fix = cors_fix_for("http://gpu-box:9000/v1", "https://remind.example");
        for switch in [
            "OLLAMA_ORIGINS",
            "Enable CORS",
            "--allowed-origins",
            "--cors-origins",
        ] {
            assert!(fix.contains(switch), "{switch} missing from {fix}");
        }
        assert!(fix.contains("https://remind.example"), "{fix}");
    }
}
