//! The page's entry point: mounts the Leptos app (wasm32), or explains how to run it.

#[cfg(target_arch = "wasm32")]
fn main() {
    use remind_web::adapters::load_marks::{LoadStep, mark};
    console_error_panic_hook::set_once();
    mark(LoadStep::WasmStarted);
    remind_web::wiring::open_memory_ahead();
    leptos::mount::mount_to_body(remind_web::ui::app::App);
    mark(LoadStep::Mounted);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "Remind runs in the browser: start it with `scripts/run` and open http://127.0.0.1:8080/"
    );
    std::process::exit(2);
}
