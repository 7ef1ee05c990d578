//! An embedding's vector as an export file carries it: the little-endian bytes of its
//! 32-bit numbers in base64. That is 2 048 characters for MiniLM's 384 values, against
//! about 4 000 as numbers in text, and it reads back bit for bit.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use thiserror::Error;

/// Why a text is not a packed vector. The messages complete a sentence whose subject
/// is the vector (an import names it by its path).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum UnpackError {
    #[error("is not base64 ({0}); an embedding is packed as the base64 of its 32-bit numbers")]
    NotBase64(String),
    #[error("holds {0} bytes, which is not a whole number of 32-bit numbers")]
    PartialNumber(usize),
}

/// `vector` packed for an export file.
pub fn pack_vector(vector: &[f32]) -> String {
    let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    STANDARD.encode(bytes)
}

/// The numbers [`pack_vector`] packed into `text`. Whether they make an embedding
/// (finite, of unit length) is [`crate::record::StoredEmbedding::check`]'s to say.
pub fn unpack_vector(text: &str) -> Result<Vec<f32>, UnpackError> {
    let bytes = STANDARD
        .decode(text)
        .map_err(|e| UnpackError::NotBase64(e.to_string()))?;
    let numbers = bytes.chunks_exact(4);
    if !numbers.remainder().is_empty() {
        return Err(UnpackError::PartialNumber(bytes.len()));
    }
    Ok(numbers
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_vector_unpacks_bit_for_bit_negative_zero_and_subnormals_included() {
        let vector = vec![0.6, -0.0, 1e-40, -0.8, f32::MIN_POSITIVE, 0.123_456_79];
        let unpacked = unpack_vector(&pack_vector(&vector)).unwrap();
        let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&unpacked), bits(&vector));
    }

    #[test]
    fn a_minilm_vector_packs_into_2048_characters() {
        assert_eq!(pack_vector(&[0.05; 384]).len(), 2048);
    }

    #[test]
    fn text_that_is_not_base64_is_refused_saying_how_a_vector_is_packed() {
        let problem = unpack_vector("not base64!").unwrap_err();
        assert!(matches!(problem, UnpackError::NotBase64(_)));
        assert!(problem.to_string().contains("base64 of its 32-bit numbers"));
    }

    #[test]
    fn bytes_that_end_inside_a_number_are_refused() {
        assert_eq!(
            unpack_vector("AAAAAAA=").unwrap_err(),
            UnpackError::PartialNumber(5)
        );
    }
}
