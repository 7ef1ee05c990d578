// The embedder worker's first script: starts reading the converted model from the
// Cache API, then loads the worker's wasm, so the read (0.3 s for 55 MB on a 2-core
// machine) overlaps compiling the wasm instead of following it.
//
// The page names the worker with the cache and the model (`EarlyRead` in
// crates/remind-embedder-wire, as JSON). The worker's Rust (`model_cache::read_early`)
// takes the read as `self.remindEarlyRead` and uses it only when it is the copy it would
// have read itself; a worker without a name, or a cache without a copy, reads as before.
// Shared by both builds (Trunk copies it, scripts/build-relaxed-worker copies it as the
// relaxed one's): the wasm's files are named as this script is, less `_loader.js`.
'use strict';

self.remindEarlyRead = (() => {
  let named;
  try {
    named = JSON.parse(self.name);
  } catch {
    return null;
  }
  if (typeof named?.cache !== 'string' || typeof named?.model_url !== 'string' || !self.caches) return null;
  // The converted copy's URL names the tract that wrote it, which only the Rust side
  // knows: any kept copy of this model is read, and the Rust side checks which it is.
  const prefix = `${new URL(named.model_url, self.location.href).href}.tract-`;
  return caches.open(named.cache)
    .then(async (cache) => {
      const kept = (await cache.keys()).find((request) => request.url.startsWith(prefix));
      const response = kept && (await cache.match(kept));
      if (!response) return null;
      return { cache: named.cache, model_url: named.model_url, url: kept.url, bytes: await response.arrayBuffer() };
    })
    .catch(() => null);
})();

const built = self.location.pathname.replace(/_loader\.js$/, '');
importScripts(`${built}.js`);
wasm_bindgen({ module_or_path: `${built}_bg.wasm` });
