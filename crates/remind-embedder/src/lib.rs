//! all-MiniLM-L6-v2 sentence embeddings: the BERT WordPiece tokeniser and the int8
//! ONNX model run through tract, natively and in the page's embedder worker.
//!
//! Its own crate so that only what embeds links tract: the page's wasm does not depend
//! on it (tract's operator registry would add 4 MB to the page).

pub mod quantized_product;
pub mod tract_embedder;
pub mod wordpiece;
