//! The words that frame a request rather than name its specifics, so the proposed scope
//! keeps them fixed and offers every other word as a slot.
//!
//! Capitals, numbers and quotes mark only some specifics ("How much does a blue whale
//! weigh?", "Define entropy"). What is left once the framing is taken away is what a
//! person would swap for another thing of the same kind, so the proposal slots it and
//! the user clicks back any word that matters. The list is English's closed classes
//! (articles, pronouns, prepositions, conjunctions, auxiliaries, question words) and the
//! verbs and nouns people use to ask an assistant for something, not any one topic.

/// Determiners that go with the specific after them: a slot takes them in, so "the
/// Eiffel Tower" and "Big Ben" fill the same slot. Not "that", which more often starts
/// a clause ("a function that sums prices") than points at a thing.
#[rustfmt::skip]
pub const LEADING_DETERMINERS: &[&str] = &[
    "a", "an", "the", "my", "your", "our", "his", "her", "their", "its", "this", "these",
    "those", "some", "any",
];

/// Words that ask: the content word right after one is what is asked about ("how *far*",
/// "what *time*", "which *editor*"), so it stays fixed as well.
#[rustfmt::skip]
pub const QUESTION_WORDS: &[&str] = &[
    "how", "what", "what's", "whats", "which", "who", "who's", "whom", "whose", "when", "when's",
    "where", "where's", "why", "why's",
];

/// Words that may sit between a question word and what it asks about ("how *is* the
/// ...", "what *does* a ...").
#[rustfmt::skip]
pub const AUXILIARIES: &[&str] = &[
    "is", "are", "was", "were", "do", "does", "did", "can", "could", "will", "would", "should",
    "has", "have", "had",
];

/// English's closed classes but for the question words, which [`QUESTION_WORDS`] holds.
#[rustfmt::skip]
const CLOSED_CLASS: &[&str] = &[
    // articles, determiners, quantifiers
    "a", "an", "the", "this", "that", "these", "those", "some", "any", "each", "every",
    "all", "both", "either", "neither", "no", "other", "another", "such", "much",
    "many", "more", "most", "few", "less", "least", "own", "same",
    // pronouns and possessives
    "i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "he", "him",
    "his", "she", "her", "hers", "it", "its", "itself", "we", "us", "our", "ours",
    "they", "them", "their", "theirs", "one", "ones", "something", "anything",
    "someone", "anyone", "i'm", "i'd", "i'll", "i've", "you're", "it's", "we're",
    "they're", "there", "there's", "here",
    // prepositions
    "about", "above", "across", "after", "against", "along", "among", "around", "as",
    "at", "before", "behind", "below", "beneath", "beside", "between", "beyond", "by",
    "down", "during", "except", "for", "from", "in", "inside", "into", "like", "near",
    "of", "off", "on", "onto", "out", "outside", "over", "past", "per", "since",
    "than", "through", "throughout", "till", "to", "toward", "towards", "under",
    "unlike", "until", "up", "upon", "via", "with", "within", "without",
    // conjunctions
    "and", "but", "or", "nor", "so", "yet", "if", "because", "while", "whether",
    "though", "although", "unless", "then",
    // auxiliaries and modals, with their contractions
    "be", "is", "am", "are", "was", "were", "been", "being", "do", "does", "did",
    "done", "doing", "have", "has", "had", "having", "can", "could", "will", "would",
    "shall", "should", "may", "might", "must", "don't", "doesn't", "didn't", "can't",
    "cannot", "won't", "wouldn't", "shouldn't", "isn't", "aren't", "wasn't",
    // adverbs and particles that shape a request
    "not", "very", "too", "also", "just", "only", "please", "again", "really", "ever",
    "always", "never", "usually", "often",
];

/// How people ask an assistant for something, whatever it is about.
#[rustfmt::skip]
const REQUEST_WORDS: &[&str] = &[
    // verbs of asking
    "give", "tell", "show", "suggest", "recommend", "explain", "define", "describe",
    "translate", "summarise", "summarize", "write", "rewrite", "list", "name", "call",
    "say", "mean", "stand", "spell", "pronounce", "convert", "compare", "calculate",
    "use", "put", "get", "make", "need", "find", "help", "know", "think", "want",
    "rhyme", "rhymes", "sound", "sounds",
    // what is asked for
    "word", "words", "name", "names", "meaning", "definition", "synonym", "synonyms",
    "antonym", "opposite", "plural", "singular", "example", "examples", "sentence",
    "sentences", "title", "summary", "plot", "steps", "step", "way", "ways", "idea",
    "ideas", "tips", "recipe", "list", "difference", "time", "date", "distance",
    "height", "weight", "temperature", "speed", "price", "cost", "language",
];

/// Whether `word` (as [`super::question_words`] reads it) frames the request.
pub fn frames_a_request(word: &str) -> bool {
    is_closed_class(word) || REQUEST_WORDS.contains(&word)
}

/// Whether `word` is one of English's closed classes: it carries no content.
pub fn is_closed_class(word: &str) -> bool {
    CLOSED_CLASS.contains(&word) || QUESTION_WORDS.contains(&word)
}
