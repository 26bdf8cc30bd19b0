//! From a need in plain words to a search plan: the specific words (each with its stems and
//! synonyms), the category hints of generic words, the exact names to try, and whether the need
//! asks for risky capabilities.
//!
//! User text never reaches a query parser: it is split into words by the same tokenizer the
//! index uses, so quotes, `*`, `-`, `:`, `(`, `AND` or `NEAR(` are only separators or plain
//! words.

use super::index::Analyzers;
use super::words::{GENERIC, GROUPS, NARROWER, RISK_WORDS, STOPWORDS, join_phrases};

/// The longest need accepted, in characters.
pub const MAX_NEED_CHARS: usize = 500;

/// At most this many specific words are searched; the rest of a long need is ignored.
pub const MAX_CONCEPTS: usize = 8;

/// Kinds of record a generic word can hint at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// `mcp_server`.
    McpServer,
    /// `skill`.
    Skill,
    /// `package`.
    Package,
    /// `repo` (frameworks, clients and tools listed in curated MCP lists).
    Repo,
}

impl Category {
    /// The stem the `type` field holds for this category.
    pub fn kind_stem(self) -> &'static str {
        match self {
            Self::McpServer => "mcp",
            Self::Skill => "skill",
            Self::Package => "packag",
            Self::Repo => "repo",
        }
    }

    /// The bit of this category in [`super::index::Signals::category`].
    pub fn code(self) -> u64 {
        match self {
            Self::McpServer => 1,
            Self::Package => 2,
            Self::Skill => 4,
            Self::Repo => 8,
        }
    }

    /// What a need without category words is taken to want: something an agent can use
    /// directly (an MCP server, a skill, a listed repository) rather than a library.
    pub const AGENT_READY: [Category; 3] = [Category::McpServer, Category::Skill, Category::Repo];

    /// Plain words for notes.
    pub fn words(self) -> &'static str {
        match self {
            Self::McpServer => "an MCP server",
            Self::Skill => "an agent skill",
            Self::Package => "a package",
            Self::Repo => "a listed repository",
        }
    }
}

/// One form a concept may take in a record.
#[derive(Debug, Clone, PartialEq)]
pub struct Alternative {
    /// The word as the synonym table or the user wrote it.
    pub word: String,
    /// Its stem (what the stemmed fields hold).
    pub stem: String,
    /// 1 for the user's own word, less for a synonym.
    pub weight: f32,
}

/// One thing the need asks for: a word or a known phrase, with its alternatives.
#[derive(Debug, Clone, PartialEq)]
pub struct Concept {
    /// The user's word or phrase.
    pub label: String,
    /// The forms that count as a match.
    pub alternatives: Vec<Alternative>,
    /// Raw (unstemmed) words to try with a fuzzy match on titles when no record holds any
    /// alternative (a typo).
    pub fuzzy: Vec<String>,
    /// The word as typed, to match as the start of a title word (`kube` → kubernetes): set
    /// for the need's last word, and for every word of a short need ([`PREFIX_MIN_CHARS`]
    /// letters or more).
    pub prefix: Option<String>,
    /// Matched in titles only: a common word (the, for, ...) of a need that has nothing else.
    pub title_only: bool,
}

/// What a need asks for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Specific concepts; they drive the match. Empty for a listing.
    pub concepts: Vec<Concept>,
    /// Categories hinted at by generic words (connector, server, mcp, tool, skill, ...).
    pub hints: Vec<Category>,
    /// No category word: agent-ready kinds ([`Category::AGENT_READY`]) get the category lift.
    pub default_hint: bool,
    /// Generic words seen, for the message.
    pub generic: Vec<String>,
    /// Common words dropped (the, for, a, ...).
    pub ignored: Vec<String>,
    /// Exact names to try (lowercased need, its compact form, without `npm:` and so on).
    pub names: Vec<String>,
    /// A compact name worth a fuzzy try (a short need that looks like a name).
    pub fuzzy_name: Option<String>,
    /// The need is one token that looks like an identifier (`npm:0nmcp`, `whisper.cpp`,
    /// `@21st-dev/magic`): a record with exactly that name comes first.
    pub identifier: bool,
    /// The need mentions captchas, stealth or bot detection, so risky tools are not lowered.
    pub asks_risky: bool,
    /// No need given: list the catalog by popularity and evidence.
    pub listing: bool,
    /// Only generic words ("mcp server", "connector"): list the hinted categories by
    /// popularity and evidence, with records of exactly that name first among equals.
    pub category_listing: bool,
    /// Only common words ("the of and"): they are searched in titles, all of them required.
    pub common_only: bool,
}

/// Shortest word matched as the start of a title word.
pub const PREFIX_MIN_CHARS: usize = 3;

/// A need of at most this many words has every word matched as a prefix too, not only its
/// last one.
const SHORT_NEED_WORDS: usize = 2;

/// Weight of a synonym relative to the user's own word.
const SYNONYM_WEIGHT: f32 = 0.7;

/// Shortest word a fuzzy title match is tried for.
const FUZZY_MIN_CHARS: usize = 5;

/// Fuzzy distance for a word of `chars` characters: 1 from 5, 2 from 9.
pub fn fuzzy_distance(chars: usize) -> u8 {
    if chars >= 9 { 2 } else { 1 }
}

impl Plan {
    /// Reads a need. `None` or blank text is a listing.
    pub fn read(need: Option<&str>, analyzers: &Analyzers) -> Plan {
        let Some(need) = need.map(str::trim).filter(|need| !need.is_empty()) else {
            return Plan {
                listing: true,
                ..Plan::default()
            };
        };
        let mut plan = Plan {
            names: name_forms(need),
            identifier: looks_like_identifier(need),
            ..Plan::default()
        };
        let words = analyzers.words(need);
        if words.len() <= 3 {
            plan.fuzzy_name = plan
                .names
                .iter()
                .find(|name| name.chars().all(char::is_alphanumeric))
                .filter(|name| {
                    name.chars().count() >= FUZZY_MIN_CHARS && name.chars().count() <= 40
                })
                .cloned();
        }
        let prefixed = prefixed_words(&words);
        plan.read_words(&join_phrases(&words), &prefixed, analyzers);
        // A need made only of generic words ("mcp server") lists that category.
        plan.category_listing = plan.concepts.is_empty() && !plan.hints.is_empty();
        plan.default_hint = plan.hints.is_empty();
        // Only common words: search titles for them rather than answer nothing.
        if plan.concepts.is_empty() && plan.hints.is_empty() && !plan.ignored.is_empty() {
            plan.common_only = true;
            for word in plan.ignored.iter().take(MAX_CONCEPTS) {
                let mut common = concept(word, prefixed.contains(word), analyzers);
                common.title_only = true;
                common.fuzzy.clear();
                plan.concepts.push(common);
            }
        }
        plan
    }

    /// Sorts the need's words (phrases joined) into risk words, common words, generic words
    /// and concepts; `prefixed` are the words also matched as the start of a title word.
    fn read_words(&mut self, words: &[String], prefixed: &[String], analyzers: &Analyzers) {
        for word in words {
            if RISK_WORDS.contains(&word.as_str()) {
                self.asks_risky = true;
            }
            if STOPWORDS.contains(&word.as_str()) {
                push_unique(&mut self.ignored, word);
                continue;
            }
            if let Some((_, category)) = GENERIC.iter().find(|(generic, _)| generic == word) {
                if !self.hints.contains(category) {
                    self.hints.push(*category);
                }
                push_unique(&mut self.generic, word);
                continue;
            }
            if self.concepts.len() < MAX_CONCEPTS
                && !self.concepts.iter().any(|known| &known.label == word)
            {
                self.concepts
                    .push(concept(word, prefixed.contains(word), analyzers));
            }
        }
    }

    /// The category bits that get the category lift.
    pub fn lifted_categories(&self) -> u64 {
        let categories: &[Category] = if self.default_hint {
            &Category::AGENT_READY
        } else {
            &self.hints
        };
        categories
            .iter()
            .fold(0, |bits, category| bits | category.code())
    }

    /// How many concepts a record must match: every word of an identifier (`faster-whisper`
    /// is one name, not two words) or of a need of common words only; otherwise one of one to
    /// three words (coverage ranks them), and all but two of a longer need.
    pub fn minimum_match(&self) -> usize {
        let count = self.concepts.len();
        if self.identifier || self.common_only {
            count
        } else if count <= 3 {
            1
        } else {
            count - 2
        }
    }
}

/// One token with punctuation or digits in it: a package, repository or resource name rather
/// than words.
fn looks_like_identifier(need: &str) -> bool {
    !need.chars().any(char::is_whitespace)
        && need
            .chars()
            .any(|c| matches!(c, ':' | '/' | '@' | '.' | '-' | '_') || c.is_ascii_digit())
}

fn push_unique(list: &mut Vec<String>, word: &str) {
    if !list.iter().any(|known| known == word) {
        list.push(word.to_owned());
    }
}

/// The words (as typed, lowercased) also matched as the start of a title word: the last one,
/// and every one of a short need, when long enough.
fn prefixed_words(words: &[String]) -> Vec<String> {
    let chosen: &[String] = if words.len() <= SHORT_NEED_WORDS {
        words
    } else {
        &words[words.len() - 1..]
    };
    chosen
        .iter()
        .filter(|word| word.chars().count() >= PREFIX_MIN_CHARS)
        .cloned()
        .collect()
}

fn concept(word: &str, prefix: bool, analyzers: &Analyzers) -> Concept {
    let mut alternatives = vec![Alternative {
        word: word.to_owned(),
        stem: analyzers.stem(word),
        weight: 1.0,
    }];
    let mut add = |other: &str| {
        let stem = analyzers.stem(other);
        if !alternatives.iter().any(|known| known.stem == stem) {
            alternatives.push(Alternative {
                word: other.to_owned(),
                stem,
                weight: SYNONYM_WEIGHT,
            });
        }
    };
    for group in GROUPS.iter().filter(|group| group.contains(&word)) {
        for other in group.iter() {
            add(other);
        }
    }
    for (_, narrower) in NARROWER.iter().filter(|(broad, _)| *broad == word) {
        for other in narrower.iter() {
            add(other);
        }
    }
    let fuzzy = if word.chars().count() >= FUZZY_MIN_CHARS {
        vec![word.to_owned()]
    } else {
        Vec::new()
    };
    Concept {
        label: word.to_owned(),
        alternatives,
        fuzzy,
        prefix: prefix.then(|| word.to_owned()),
        title_only: false,
    }
}

/// The need as exact names: lowercased; without a registry prefix; its compact form
/// (letters and digits only).
pub fn name_forms(need: &str) -> Vec<String> {
    let lowered = need.trim().to_lowercase();
    let mut forms = Vec::new();
    let mut add = |form: &str| {
        let form = form.trim();
        if !form.is_empty()
            && form.len() <= 300
            && !forms.iter().any(|known: &String| known == form)
        {
            forms.push(form.to_owned());
        }
    };
    add(&lowered);
    for prefix in [
        "npm:",
        "pypi:",
        "github:",
        "https://github.com/",
        "http://github.com/",
        "github.com/",
    ] {
        if let Some(rest) = lowered.strip_prefix(prefix) {
            add(rest.trim_end_matches('/'));
        }
    }
    add(&compact(&lowered));
    forms
}

/// Letters and digits only, lowercased: `Whisper.cpp` → `whispercpp`.
pub fn compact(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn analyzers() -> Analyzers {
        Analyzers::new()
    }

    #[test]
    fn generic_words_only_hint_at_a_category() {
        let plan = Plan::read(Some("postgres mcp server"), &analyzers());
        assert_eq!(plan.concepts.len(), 1);
        assert_eq!(plan.concepts[0].label, "postgres");
        let stems: Vec<&str> = plan.concepts[0]
            .alternatives
            .iter()
            .map(|alt| alt.stem.as_str())
            .collect();
        assert!(stems.contains(&"postgresql"), "{stems:?}");
        assert_eq!(plan.hints, vec![Category::McpServer]);
        assert_eq!(plan.generic, vec!["mcp", "server"]);
    }

    #[test]
    fn a_need_of_generic_words_only_lists_its_category() {
        let plan = Plan::read(Some("mcp connector"), &analyzers());
        assert!(plan.concepts.is_empty() && plan.category_listing);
        assert_eq!(plan.hints, vec![Category::McpServer]);
        let skills = Plan::read(Some("skills"), &analyzers());
        assert!(skills.category_listing && skills.hints == vec![Category::Skill]);
    }

    #[test]
    fn phrases_become_one_concept_and_stopwords_drop() {
        let plan = Plan::read(Some("speech to text on device"), &analyzers());
        let labels: Vec<&str> = plan
            .concepts
            .iter()
            .map(|concept| concept.label.as_str())
            .collect();
        assert_eq!(labels, vec!["stt", "ondevice"]);
        let words: Vec<&str> = plan.concepts[0]
            .alternatives
            .iter()
            .map(|alt| alt.word.as_str())
            .collect();
        assert!(
            words.contains(&"whisper") && words.contains(&"transcription"),
            "{words:?}"
        );
        let local: Vec<&str> = plan.concepts[1]
            .alternatives
            .iter()
            .map(|alt| alt.word.as_str())
            .collect();
        assert!(
            local.contains(&"local") && local.contains(&"offline"),
            "{local:?}"
        );
    }

    #[test]
    fn query_syntax_is_only_separators_and_words() {
        let plan = Plan::read(Some("\"foo* -bar (baz:qux) AND NEAR(x, y)"), &analyzers());
        let labels: Vec<&str> = plan
            .concepts
            .iter()
            .map(|concept| concept.label.as_str())
            .collect();
        assert_eq!(labels, vec!["foo", "bar", "baz", "qux", "near", "x", "y"]);
        assert!(plan.ignored.contains(&"and".to_owned()));
    }

    #[test]
    fn names_are_tried_exactly_without_registry_prefixes() {
        assert_eq!(
            name_forms("npm:0nmcp"),
            vec!["npm:0nmcp", "0nmcp", "npm0nmcp"]
        );
        assert_eq!(
            name_forms("@21st-dev/magic"),
            vec!["@21st-dev/magic", "21stdevmagic"]
        );
        assert_eq!(
            name_forms("https://github.com/ggml-org/whisper.cpp/"),
            vec![
                "https://github.com/ggml-org/whisper.cpp/",
                "ggml-org/whisper.cpp",
                "httpsgithubcomggmlorgwhispercpp"
            ]
        );
    }

    #[test]
    fn identifiers_are_single_tokens_with_punctuation_or_digits() {
        for need in [
            "npm:0nmcp",
            "whisper.cpp",
            "@21st-dev/magic",
            "mcp-server-git",
            "k8s",
        ] {
            assert!(Plan::read(Some(need), &analyzers()).identifier, "{need}");
        }
        for need in ["slack", "web search", "postgres mcp server"] {
            assert!(!Plan::read(Some(need), &analyzers()).identifier, "{need}");
        }
    }

    #[test]
    fn blank_need_is_a_listing_and_risk_words_are_noticed() {
        assert!(Plan::read(None, &analyzers()).listing);
        assert!(Plan::read(Some("   "), &analyzers()).listing);
        assert!(Plan::read(Some("solve recaptcha"), &analyzers()).asks_risky);
        assert!(Plan::read(Some("get past bot detection"), &analyzers()).asks_risky);
        assert!(!Plan::read(Some("browser automation"), &analyzers()).asks_risky);
    }
    #[test]
    fn the_last_word_and_every_word_of_a_short_need_are_prefixes_too() {
        let prefixes = |need: &str| -> Vec<Option<String>> {
            Plan::read(Some(need), &analyzers())
                .concepts
                .into_iter()
                .map(|concept| concept.prefix)
                .collect()
        };
        assert_eq!(prefixes("kuber"), vec![Some("kuber".to_owned())]);
        assert_eq!(
            prefixes("postgres datab"),
            vec![Some("postgres".to_owned()), Some("datab".to_owned())]
        );
        assert_eq!(
            prefixes("kuber cluster monit"),
            vec![None, None, Some("monit".to_owned())]
        );
        assert_eq!(prefixes("ku"), vec![None], "too short to be a prefix");
    }

    #[test]
    fn a_hyphenated_identifier_needs_every_word_and_common_words_are_searched_in_titles() {
        let plan = Plan::read(Some("faster-whisper"), &analyzers());
        assert!(plan.identifier);
        assert_eq!(plan.minimum_match(), 2);
        let plain = Plan::read(Some("faster whisper"), &analyzers());
        assert_eq!(plain.minimum_match(), 1);
        let common = Plan::read(Some("the of and"), &analyzers());
        assert!(common.common_only && !common.category_listing);
        assert!(common.concepts.iter().all(|concept| concept.title_only));
        assert_eq!(common.minimum_match(), 3);
    }
}
