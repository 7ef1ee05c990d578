//! Handing JSON text to the browser as a file download: the memory's export, or one
//! stored record this Remind cannot read, so nothing has to be lost to be removed.

use leptos::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{Blob, BlobPropertyBag, HtmlAnchorElement, Url};

/// Offers `json` as a download named `file_name`.
pub fn offer_json_download(json: &str, file_name: &str) -> Result<(), String> {
    let describe = |e: wasm_bindgen::JsValue| format!("{e:?}");
    let parts = js_sys::Array::of1(&wasm_bindgen::JsValue::from_str(json));
    let options = BlobPropertyBag::new();
    options.set_type("application/json");
    let blob = Blob::new_with_str_sequence_and_options(&parts, &options).map_err(describe)?;
    let url = Url::create_object_url_with_blob(&blob).map_err(describe)?;
    let anchor: HtmlAnchorElement = document()
        .create_element("a")
        .map_err(describe)?
        .unchecked_into();
    anchor.set_href(&url);
    anchor.set_download(file_name);
    anchor.click();
    // Revoked later, not at once: the browser may still be reading the blob.
    set_timeout(
        move || {
            let _ = Url::revoke_object_url(&url);
        },
        std::time::Duration::from_secs(30),
    );
    Ok(())
}
