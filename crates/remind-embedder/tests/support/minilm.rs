//! The MiniLM embedder as native tests load it: from the files `scripts/setup-embedder`
//! installed, failing loudly without them (a skipped check would let a broken embedder
//! ship).

use std::path::PathBuf;

use remind_embedder::tract_embedder::TractEmbedder;

fn model_dir() -> PathBuf {
    let cache = std::env::var_os("REMIND_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").expect("HOME is set")).join(".cache/remind")
        });
    cache.join("minilm")
}

/// all-MiniLM-L6-v2 (int8), its embeddings tagged `model_id`.
pub fn load(model_id: &str) -> TractEmbedder {
    let dir = model_dir();
    let read = |name: &str| {
        std::fs::read(dir.join(name)).unwrap_or_else(|e| {
            panic!(
                "cannot read {} ({e}): run scripts/setup-embedder to install the embedding model",
                dir.join(name).display()
            )
        })
    };
    let vocab = String::from_utf8(read("vocab.txt")).expect("vocab.txt is UTF-8");
    TractEmbedder::new(model_id, &read("model.onnx"), &vocab)
        .expect("the model and vocabulary load")
}
