//! The page's entry point: mounts the Leptos app (wasm32), or explains how to run it.

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(remind_web::ui::app::App);
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!(
        "Remind runs in the browser: start it with `scripts/run` and open http://127.0.0.1:8080/"
    );
    std::process::exit(2);
}
