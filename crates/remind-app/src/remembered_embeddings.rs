//! An embedding service that remembers the vectors of the last few single texts it
//! embedded, so a question embedded while it was being typed
//! ([`crate::session::Session::prepare_question`]) is not embedded again when it is
//! asked: the question then goes out without waiting for the model.
//!
//! Only the vectors of the model now ready are recalled: a vector of another model is
//! not comparable with the stored lessons'. Batches of more than one text (lessons
//! embedded in the background) are not remembered; they would push out the questions.

use std::cell::RefCell;
use std::collections::VecDeque;

use crate::ports::{EmbedError, EmbedderStatus, EmbeddingService};

/// How many single texts are remembered: the question being typed, and a few before
/// it that a person may ask again.
pub const REMEMBERED_TEXTS: usize = 8;

pub struct RememberedEmbeddings<E> {
    inner: E,
    /// `(model, text, vector)`, the latest last.
    remembered: RefCell<VecDeque<(String, String, Vec<f32>)>>,
}

impl<E> RememberedEmbeddings<E> {
    pub fn new(inner: E) -> Self {
        RememberedEmbeddings {
            inner,
            remembered: RefCell::new(VecDeque::new()),
        }
    }

    fn recall(&self, model: &str, text: &str) -> Option<Vec<f32>> {
        self.remembered
            .borrow()
            .iter()
            .find(|(m, t, _)| m == model && t == text)
            .map(|(_, _, vector)| vector.clone())
    }

    fn remember(&self, model: &str, text: &str, vector: &[f32]) {
        let mut remembered = self.remembered.borrow_mut();
        remembered.retain(|(m, t, _)| !(m == model && t == text));
        if remembered.len() == REMEMBERED_TEXTS {
            remembered.pop_front();
        }
        remembered.push_back((model.to_string(), text.to_string(), vector.to_vec()));
    }
}

impl<E: EmbeddingService> EmbeddingService for RememberedEmbeddings<E> {
    fn status(&self) -> EmbedderStatus {
        self.inner.status()
    }

    fn begin(&self) {
        self.inner.begin();
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let EmbedderStatus::Ready { model_id, .. } = self.inner.status() else {
            return self.inner.embed(texts).await;
        };
        let known: Vec<Option<Vec<f32>>> =
            texts.iter().map(|t| self.recall(&model_id, t)).collect();
        let missing: Vec<String> = texts
            .iter()
            .zip(&known)
            .filter(|(_, known)| known.is_none())
            .map(|(text, _)| text.clone())
            .collect();
        let computed = if missing.is_empty() {
            Vec::new()
        } else {
            self.inner.embed(&missing).await?
        };
        if computed.len() != missing.len() {
            return Err(EmbedError::Failed(format!(
                "{} vectors came back for {} texts",
                computed.len(),
                missing.len()
            )));
        }
        if let ([text], [vector]) = (texts, computed.as_slice()) {
            self.remember(&model_id, text, vector);
        }
        let mut computed = computed.into_iter();
        Ok(known
            .into_iter()
            .map(|known| known.or_else(|| computed.next()).unwrap_or_default())
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use futures::executor::block_on;

    use super::*;

    /// Embeds each text as `[its length, call number]` under `model`, counting calls.
    struct CountingEmbedder {
        model: RefCell<String>,
        calls: Cell<usize>,
        texts_sent: RefCell<Vec<String>>,
    }

    impl CountingEmbedder {
        fn of(model: &str) -> Self {
            CountingEmbedder {
                model: RefCell::new(model.into()),
                calls: Cell::new(0),
                texts_sent: RefCell::new(Vec::new()),
            }
        }
    }

    impl EmbeddingService for &CountingEmbedder {
        fn status(&self) -> EmbedderStatus {
            EmbedderStatus::Ready {
                model_id: self.model.borrow().clone(),
                from_cache: true,
                load_ms: 0,
            }
        }

        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
            self.calls.set(self.calls.get() + 1);
            self.texts_sent.borrow_mut().extend(texts.iter().cloned());
            let call = self.calls.get() as f32;
            Ok(texts.iter().map(|t| vec![t.len() as f32, call]).collect())
        }
    }

    fn texts(texts: &[&str]) -> Vec<String> {
        texts.iter().map(|t| t.to_string()).collect()
    }

    #[test]
    fn a_question_embedded_while_typed_is_not_embedded_again_when_asked() {
        let inner = CountingEmbedder::of("m");
        let remembered = RememberedEmbeddings::new(&inner);
        let typed = block_on(remembered.embed(&texts(&["what is like < >"]))).unwrap();
        let asked = block_on(remembered.embed(&texts(&["what is like < >"]))).unwrap();
        assert_eq!(asked, typed);
        assert_eq!(inner.calls.get(), 1);
    }

    #[test]
    fn a_batch_sends_only_the_texts_not_remembered_and_keeps_their_order() {
        let inner = CountingEmbedder::of("m");
        let remembered = RememberedEmbeddings::new(&inner);
        block_on(remembered.embed(&texts(&["question"]))).unwrap();
        let batch = block_on(remembered.embed(&texts(&["a lesson", "question", "b"]))).unwrap();
        assert_eq!(batch, vec![vec![8.0, 2.0], vec![8.0, 1.0], vec![1.0, 2.0]]);
        assert_eq!(
            *inner.texts_sent.borrow(),
            texts(&["question", "a lesson", "b"])
        );
    }

    #[test]
    fn a_vector_of_another_model_is_never_recalled() {
        let inner = CountingEmbedder::of("old");
        let remembered = RememberedEmbeddings::new(&inner);
        block_on(remembered.embed(&texts(&["question"]))).unwrap();
        *inner.model.borrow_mut() = "new".into();
        let again = block_on(remembered.embed(&texts(&["question"]))).unwrap();
        assert_eq!(again, vec![vec![8.0, 2.0]], "embedded by the new model");
        assert_eq!(inner.calls.get(), 2);
    }

    #[test]
    fn batches_are_not_remembered_and_only_the_latest_texts_are() {
        let inner = CountingEmbedder::of("m");
        let remembered = RememberedEmbeddings::new(&inner);
        block_on(remembered.embed(&texts(&["x", "y"]))).unwrap();
        block_on(remembered.embed(&texts(&["x"]))).unwrap();
        assert_eq!(inner.calls.get(), 2, "a batch's vectors are not recalled");
        for i in 0..REMEMBERED_TEXTS {
            block_on(remembered.embed(&[format!("q{i}")])).unwrap();
        }
        block_on(remembered.embed(&texts(&["x"]))).unwrap();
        assert_eq!(inner.calls.get(), 3 + REMEMBERED_TEXTS, "x was pushed out");
        block_on(remembered.embed(&texts(&["q7"]))).unwrap();
        assert_eq!(inner.calls.get(), 3 + REMEMBERED_TEXTS, "q7 is still there");
    }
}
