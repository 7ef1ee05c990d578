//! Times the embedder's two loads natively (the ONNX file, and the conversion
//! `TractEmbedder::converted` writes for the worker's cache) up to the first embedding:
//! `cargo run --release -p remind-embedder --example load_timing` (model files from
//! scripts/setup-embedder).
use std::path::PathBuf;
use std::time::Instant;

use remind_embedder::tract_embedder::TractEmbedder;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::var_os("REMIND_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(std::env::var_os("HOME").unwrap_or_default()).join(".cache/remind")
        })
        .join("minilm");
    let onnx = std::fs::read(dir.join("model.onnx"))?;
    let vocab = std::fs::read_to_string(dir.join("vocab.txt"))?;
    let text = "What is like < fast > ?";
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
    for round in 0..3 {
        let t = Instant::now();
        let embedder = TractEmbedder::new("timing", &onnx, &vocab)?;
        let load = ms(t);
        embedder.warm_up_up_to(16)?;
        let plan = ms(t) - load;
        embedder.embed_counting_tokens(text)?;
        let onnx_first = ms(t);
        let t2 = Instant::now();
        let converted = embedder.converted()?;
        let write = ms(t2);
        drop(embedder);
        let t = Instant::now();
        let embedder = TractEmbedder::from_converted("timing", &converted, &vocab)?;
        let read = ms(t);
        embedder.warm_up_up_to(16)?;
        let plan_c = ms(t) - read;
        embedder.embed_counting_tokens(text)?;
        let conv_first = ms(t);
        let t = Instant::now();
        embedder.warm_up_up_to(32)?;
        let plan32 = ms(t);
        // The relaxed-SIMD worker's plans: the weight products on int8 weights, which a
        // plan build first recovers from the f32 the conversion holds.
        let quantized = TractEmbedder::from_converted("timing", &converted, &vocab)?;
        quantized.quantize_products()?;
        let t = Instant::now();
        quantized.warm_up_up_to(16)?;
        let plan_q = ms(t);
        let t = Instant::now();
        quantized.warm_up_up_to(32)?;
        let plan32_q = ms(t);
        println!(
            "round {round}: with the weight products on int8 weights, the 16-token plan {plan_q:.0} ms, then the 32-token plan {plan32_q:.0} ms"
        );
        println!(
            "round {round}: ONNX load {load:.0} + 16-token plan {plan:.0} -> first embedding {onnx_first:.0} ms; \
             conversion written in {write:.0} ms ({} bytes); converted load {read:.0} + plan {plan_c:.0} -> \
             first embedding {conv_first:.0} ms; then the 32-token plan {plan32:.0} ms",
            converted.len()
        );
    }
    Ok(())
}
