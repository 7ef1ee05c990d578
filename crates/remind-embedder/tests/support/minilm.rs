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

/// The bytes of one of the installed model's files (`model.onnx`, `vocab.txt`).
pub fn read(name: &str) -> Vec<u8> {
    let path = model_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| {
        panic!(
            "cannot read {} ({e}): run scripts/setup-embedder to install the embedding model",
            path.display()
        )
    })
}

/// BERT's vocabulary, as the embedder takes it.
pub fn vocab() -> String {
    String::from_utf8(read("vocab.txt")).expect("vocab.txt is UTF-8")
}

/// all-MiniLM-L6-v2 (int8), its embeddings tagged `model_id`.
pub fn load(model_id: &str) -> TractEmbedder {
    TractEmbedder::new(model_id, &read("model.onnx"), &vocab())
        .expect("the model and vocabulary load")
}
