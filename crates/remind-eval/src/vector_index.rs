//! Finding the stored embedding nearest a question's: an exact scan for the memories
//! people actually have, an HNSW graph once a memory is big enough for it to pay off.
//! Measured here (`examples/bench_vector_index.rs`); the page's semantic retriever scans
//! exactly, and no browser memory has yet reached the size where HNSW wins.
//!
//! Both answer with the position of the vector (in the order given) and its cosine,
//! so a caller can swap one for the other by size alone, see [`choose_index`].

use instant_distance::{Builder, HnswMap, Point, Search};

/// The most similar stored vector: its position in build order, and its cosine.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbour {
    pub position: usize,
    pub cosine: f32,
}

/// A nearest-neighbour index over unit vectors compared by cosine.
pub trait VectorIndex {
    fn len(&self) -> usize;
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    fn nearest(&self, query: &[f32]) -> Option<Neighbour>;
}

/// Scales a vector to unit length, so cosine becomes a dot product; a zero vector
/// stays zero and is then similar to nothing.
fn unit(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    if a.len() != b.len() {
        return 0.0;
    }
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Compares the query with every stored vector; the earliest wins a tie, as in the
/// retrievers.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExactIndex {
    vectors: Vec<Vec<f32>>,
}

impl ExactIndex {
    pub fn new(vectors: Vec<Vec<f32>>) -> Self {
        ExactIndex {
            vectors: vectors.into_iter().map(unit).collect(),
        }
    }
}

impl VectorIndex for ExactIndex {
    fn len(&self) -> usize {
        self.vectors.len()
    }

    fn nearest(&self, query: &[f32]) -> Option<Neighbour> {
        let query = unit(query.to_vec());
        let mut best: Option<Neighbour> = None;
        for (position, v) in self.vectors.iter().enumerate() {
            let cosine = dot(&query, v);
            if best.is_none_or(|b| cosine > b.cosine) {
                best = Some(Neighbour { position, cosine });
            }
        }
        best
    }
}

/// A unit vector as instant-distance sees it: distance is `1 - cosine`.
#[derive(Clone, Debug, PartialEq)]
struct UnitPoint(Vec<f32>);

impl Point for UnitPoint {
    fn distance(&self, other: &Self) -> f32 {
        1.0 - dot(&self.0, &other.0)
    }
}

/// How many candidates a search keeps: enough for recall@1 = 1.0 on clustered
/// 384-dimensional vectors up to 20 000, and ≥ 0.99 on uniform random ones up to 2 000.
pub const HNSW_EF_SEARCH: usize = 200;
/// How many candidates an insertion considers; higher builds slower, searches better.
pub const HNSW_EF_CONSTRUCTION: usize = 100;

/// An approximate index (Malkov & Yashunin's HNSW, via instant-distance). It is built
/// in one go; a memory that changes rebuilds it.
pub struct HnswIndex {
    map: HnswMap<UnitPoint, usize>,
    len: usize,
}

impl HnswIndex {
    /// Builds the graph; `seed` fixes its random layer assignment, so a build replays.
    pub fn build(vectors: Vec<Vec<f32>>, seed: u64) -> Self {
        let len = vectors.len();
        let points = vectors.into_iter().map(|v| UnitPoint(unit(v))).collect();
        let map = Builder::default()
            .seed(seed)
            .ef_search(HNSW_EF_SEARCH)
            .ef_construction(HNSW_EF_CONSTRUCTION)
            // The neighbour-diversity heuristic re-prunes every reverse link with pairwise
            // distances, which made builds ~quadratic in M (tens of seconds for 1 000
            // vectors, opt-level z); plain nearest links keep recall 1.0 on clustered data.
            .select_heuristic(None)
            .build(points, (0..len).collect());
        HnswIndex { map, len }
    }
}

impl VectorIndex for HnswIndex {
    fn len(&self) -> usize {
        self.len
    }

    fn nearest(&self, query: &[f32]) -> Option<Neighbour> {
        let mut search = Search::default();
        let query = UnitPoint(unit(query.to_vec()));
        self.map
            .search(&query, &mut search)
            .next()
            .map(|item| Neighbour {
                position: *item.value,
                cosine: 1.0 - item.distance,
            })
    }
}

/// The size from which HNSW answers a lookup faster than the exact scan. Measured with
/// `cargo run --release --example bench_vector_index [--clustered]` (384 dimensions,
/// native, the shipped `opt-level = "z"` release profile, 2 busy cores, 200 queries):
///
/// | vectors | exact query | HNSW query, clustered | HNSW build, clustered | recall |
/// |--------:|------------:|----------------------:|----------------------:|-------:|
/// |   1 000 |      0.31 ms |               0.57 ms |                0.22 s |  1.000 |
/// |   5 000 |      1.55 ms |               1.65 ms |                2.2 s  |  1.000 |
/// |  10 000 |      3.17 ms |               1.68 ms |                4.4 s  |  1.000 |
/// |  20 000 |      6.39 ms |               0.86 ms |                7.8 s  |  1.000 |
///
/// On clustered vectors (100 centres, like embeddings of related questions) HNSW
/// lookups overtake the scan between 5 000 and 10 000 vectors, and at 10 000 the
/// build is earned back after about 2 900 lookups. On uniform random vectors (no
/// structure) HNSW never won up to 20 000 (5.8 ms vs 3.2 ms at 10 000, recall 0.905 at
/// 10 000 and 0.765 at 20 000), so below this size the exact scan is both faster and
/// exact. The graph cannot take insertions, so a memory this big should rebuild it
/// in the background, not on every new lesson.
pub const HNSW_FROM_LEN: usize = 10_000;

/// Which index a memory of `len` embeddings should use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexKind {
    Exact,
    Hnsw,
}

/// Exact below [`HNSW_FROM_LEN`] vectors, HNSW from there on.
pub fn choose_index(len: usize) -> IndexKind {
    if len >= HNSW_FROM_LEN {
        IndexKind::Hnsw
    } else {
        IndexKind::Exact
    }
}

/// Builds the index [`choose_index`] picks for these vectors.
pub fn build_index(vectors: Vec<Vec<f32>>, seed: u64) -> Box<dyn VectorIndex> {
    match choose_index(vectors.len()) {
        IndexKind::Exact => Box::new(ExactIndex::new(vectors)),
        IndexKind::Hnsw => Box::new(HnswIndex::build(vectors, seed)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_exact_index_finds_the_most_similar_vector_and_the_earliest_on_ties() {
        let index = ExactIndex::new(vec![vec![1.0, 0.0], vec![0.0, 2.0], vec![0.0, 1.0]]);
        let found = index.nearest(&[0.1, 1.0]).unwrap();
        assert_eq!(found.position, 1);
        assert!(found.cosine > 0.99);
        assert_eq!(ExactIndex::default().nearest(&[1.0]), None);
    }

    #[test]
    fn hnsw_finds_an_exact_copy_of_a_stored_vector() {
        let vectors: Vec<Vec<f32>> = (0..50)
            .map(|i| vec![(i as f32).cos(), (i as f32).sin(), 0.5])
            .collect();
        let index = HnswIndex::build(vectors.clone(), 1);
        assert_eq!(index.len(), 50);
        let found = index.nearest(&vectors[17]).unwrap();
        assert_eq!(found.position, 17);
        assert!((found.cosine - 1.0).abs() < 1e-5);
    }

    #[test]
    fn an_empty_hnsw_index_finds_nothing() {
        assert_eq!(HnswIndex::build(Vec::new(), 1).nearest(&[1.0, 0.0]), None);
    }

    #[test]
    fn small_memories_are_searched_exactly_and_large_ones_by_hnsw() {
        assert_eq!(choose_index(0), IndexKind::Exact);
        assert_eq!(choose_index(HNSW_FROM_LEN - 1), IndexKind::Exact);
        assert_eq!(choose_index(HNSW_FROM_LEN), IndexKind::Hnsw);
    }
}
