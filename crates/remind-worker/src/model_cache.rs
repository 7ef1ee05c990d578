//! Model files fetched once and kept in the browser's Cache API, so a second visit
//! does not download 23 MB again.
//!
//! Runs inside the embedder worker (any global with `caches` and `fetch` would do). A
//! download streams its body so the page can show progress; it is cached only once it
//! arrived whole, so an interrupted download is fetched again next time. The worker also
//! keeps its converted model here, under a URL of its own that no server answers.

use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, ReadableStreamDefaultReader, Request, Response, WorkerGlobalScope};

use remind_embedder_wire::CACHE_PREFIX;

/// Bytes of one file, and whether they came from the cache.
pub struct Fetched {
    pub bytes: Vec<u8>,
    pub from_cache: bool,
}

/// Where a model file could not be had, in words the page can show.
#[derive(Debug, thiserror::Error)]
pub enum ModelFetchError {
    #[error("could not download {url}: {detail}")]
    Download { url: String, detail: String },
    #[error("{url} answered HTTP {status}")]
    Http { url: String, status: u16 },
}

fn js_detail(value: JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}

/// The model cache `cache_name`, after deleting caches of other models.
pub async fn open(cache_name: &str) -> Result<Cache, String> {
    let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
    let caches = scope.caches().map_err(js_detail)?;
    let names = JsFuture::from(caches.keys()).await.map_err(js_detail)?;
    for name in js_sys::Array::from(&names)
        .iter()
        .filter_map(|n| n.as_string())
    {
        if name.starts_with(CACHE_PREFIX) && name != cache_name {
            // A stale model only wastes space; failing to delete it is not an error.
            let _ = JsFuture::from(caches.delete(&name)).await;
        }
    }
    let cache = JsFuture::from(caches.open(cache_name))
        .await
        .map_err(js_detail)?;
    Ok(cache.unchecked_into())
}

/// The bytes at `url`: from `cache` if there, else downloaded (calling `progress` with
/// bytes so far and the expected total) and then cached.
pub async fn fetch(
    cache: Option<&Cache>,
    url: &str,
    progress: &dyn Fn(f64, Option<f64>),
) -> Result<Fetched, ModelFetchError> {
    let download = |detail: String| ModelFetchError::Download {
        url: url.to_string(),
        detail,
    };
    if let Some(cache) = cache
        && let Some(bytes) = cached(cache, url).await.map_err(download)?
    {
        return Ok(Fetched {
            bytes,
            from_cache: true,
        });
    }
    let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
    let response: Response = JsFuture::from(scope.fetch_with_str(url))
        .await
        .map_err(|e| download(js_detail(e)))?
        .unchecked_into();
    if !response.ok() {
        return Err(ModelFetchError::Http {
            url: url.to_string(),
            status: response.status(),
        });
    }
    let total = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|n| n.parse::<f64>().ok());
    let mut bytes = read_body(&response, total, progress)
        .await
        .map_err(download)?;
    if let Some(cache) = cache {
        // A failed put (quota) only costs the next visit a download.
        let _ = store(cache, url, &mut bytes).await;
    }
    Ok(Fetched {
        bytes,
        from_cache: false,
    })
}

/// The bytes `cache` holds for `url`, if it holds any.
pub async fn cached(cache: &Cache, url: &str) -> Result<Option<Vec<u8>>, String> {
    let hit = JsFuture::from(cache.match_with_str(url))
        .await
        .map_err(js_detail)?;
    let Ok(response) = hit.dyn_into::<Response>() else {
        return Ok(None);
    };
    let buffer = JsFuture::from(response.array_buffer().map_err(js_detail)?)
        .await
        .map_err(js_detail)?;
    Ok(Some(Uint8Array::new(&buffer).to_vec()))
}

/// The converted model the worker's loader began reading before this wasm ran
/// (`remind-embedder_loader.js`, as `self.remindEarlyRead`), when it read the copy at
/// `converted_url` of `model_url` in `cache_name`: `None` when it read nothing or
/// another copy, and the caller reads the cache itself. Taken once, so its bytes are
/// freed and a later load reads afresh.
pub async fn read_early(cache_name: &str, model_url: &str, converted_url: &str) -> Option<Vec<u8>> {
    let global = js_sys::global();
    let key = JsValue::from_str(EARLY_READ);
    let promise = Reflect::get(&global, &key).ok()?;
    let _ = Reflect::delete_property(global.unchecked_ref::<js_sys::Object>(), &key);
    let read = JsFuture::from(promise.dyn_into::<js_sys::Promise>().ok()?)
        .await
        .ok()?;
    let field = |name: &str| Reflect::get(&read, &name.into()).ok();
    let text = |name: &str| field(name).and_then(|v| v.as_string());
    let same_copy = text("cache").as_deref() == Some(cache_name)
        && text("model_url").as_deref() == Some(model_url)
        && text("url") == absolute(converted_url).ok();
    if !same_copy {
        return None;
    }
    let bytes = field("bytes")?.dyn_into::<js_sys::ArrayBuffer>().ok()?;
    Some(Uint8Array::new(&bytes).to_vec())
}

/// The global the loader leaves its read under.
const EARLY_READ: &str = "remindEarlyRead";

/// Keeps `bytes` in `cache` under `url` (the response copies them into its body).
pub async fn store(cache: &Cache, url: &str, bytes: &mut [u8]) -> Result<(), String> {
    let response = Response::new_with_opt_u8_array(Some(bytes)).map_err(js_detail)?;
    JsFuture::from(cache.put_with_str(url, &response))
        .await
        .map_err(js_detail)?;
    Ok(())
}

/// Deletes the entries of `cache` whose URL contains `marker` but is not `keep`: the
/// conversions an older worker made, which this one would never read.
pub async fn forget_others(cache: &Cache, marker: &str, keep: &str) -> Result<(), String> {
    let keep = absolute(keep)?;
    let requests = JsFuture::from(cache.keys()).await.map_err(js_detail)?;
    for request in js_sys::Array::from(&requests).iter() {
        let request: Request = request.unchecked_into();
        let url = request.url();
        if url.contains(marker) && url != keep {
            JsFuture::from(cache.delete_with_request(&request))
                .await
                .map_err(js_detail)?;
        }
    }
    Ok(())
}

/// `url` resolved against the worker's own, as the cache lists its keys.
fn absolute(url: &str) -> Result<String, String> {
    let scope: WorkerGlobalScope = js_sys::global().unchecked_into();
    let base = scope.location().href();
    web_sys::Url::new_with_base(url, &base)
        .map(|u| u.href())
        .map_err(js_detail)
}

async fn read_body(
    response: &Response,
    total: Option<f64>,
    progress: &dyn Fn(f64, Option<f64>),
) -> Result<Vec<u8>, String> {
    let body = response.body().ok_or("the response has no body")?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut bytes = Vec::with_capacity(total.unwrap_or(0.0) as usize);
    loop {
        let chunk = JsFuture::from(reader.read()).await.map_err(js_detail)?;
        let done = Reflect::get(&chunk, &"done".into()).map_err(js_detail)?;
        if done.as_bool() == Some(true) {
            break;
        }
        let value = Reflect::get(&chunk, &"value".into()).map_err(js_detail)?;
        bytes.extend(value.unchecked_into::<Uint8Array>().to_vec());
        progress(bytes.len() as f64, total);
    }
    Ok(bytes)
}
