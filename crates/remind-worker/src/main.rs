//! The embedder worker's entry point: Trunk builds it as a Web Worker beside the page
//! (`data-type="worker"` in index.html), and the page starts it to run MiniLM.

#[cfg(target_arch = "wasm32")]
fn main() {
    console_error_panic_hook::set_once();
    remind_worker::start();
}

#[cfg(not(target_arch = "wasm32"))]
fn main() {
    eprintln!("remind-embedder is the page's Web Worker; it runs in the browser (see scripts/run)");
    std::process::exit(2);
}
