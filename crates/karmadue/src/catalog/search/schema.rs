//! What the search index holds: the analyzers the index and the planner share, the fields,
//! the packed ranking signals, the record a document is made of (with its names and locator
//! words), and the BM25 statistics over live documents (see [`super::index`]).

use sha2::{Digest, Sha256};
use tantivy::query::Bm25StatisticsProvider;
use tantivy::schema::{
    FAST, Field, IndexRecordOption, STRING, Schema, TextFieldIndexing, TextOptions,
};
use tantivy::tokenizer::{
    AsciiFoldingFilter, Language, LowerCaser, RawTokenizer, RemoveLongFilter, SimpleTokenizer,
    Stemmer, TextAnalyzer, TokenStream,
};
use tantivy::{DocSet, Index, Searcher, TERMINATED, TantivyDocument, Term};

use super::plan::{self, Category};
use super::words::looks_risky;

/// The stemmed analyzer's name (title, locator, type, description).
const STEMMED: &str = "kd_stemmed";
/// Lowercased words without stemming (fuzzy title matches).
const WORDS: &str = "kd_words";
/// One lowercased token per value (exact names).
const NAMES: &str = "kd_names";

/// Average field lengths BM25 normalises by. Fixed, so that scores depend only on each record
/// and on which records exist (not on deleted-but-unmerged documents).
const AVERAGE_LENGTH: [(&str, u64); 4] = [
    ("title", 3),
    ("locator", 4),
    ("kind", 2),
    ("description", 14),
];

/// The analyzers the index and the planner share.
#[derive(Clone)]
pub struct Analyzers {
    stemmed: TextAnalyzer,
    words: TextAnalyzer,
}

impl std::fmt::Debug for Analyzers {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("Analyzers")
    }
}

impl Default for Analyzers {
    fn default() -> Self {
        Self::new()
    }
}

impl Analyzers {
    /// The stemmed English analyzer and the plain-words analyzer.
    pub fn new() -> Self {
        let stemmed = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(60))
            .filter(LowerCaser)
            .filter(AsciiFoldingFilter)
            .filter(Stemmer::new(Language::English))
            .build();
        let words = TextAnalyzer::builder(SimpleTokenizer::default())
            .filter(RemoveLongFilter::limit(60))
            .filter(LowerCaser)
            .filter(AsciiFoldingFilter)
            .build();
        Self { stemmed, words }
    }

    /// The lowercased words of `text`, in order.
    pub fn words(&self, text: &str) -> Vec<String> {
        collect(&mut self.words.clone(), text)
    }

    /// The stems of `text`, in order.
    pub fn stems(&self, text: &str) -> Vec<String> {
        collect(&mut self.stemmed.clone(), text)
    }

    /// The stem of one word (the word itself when it has no stem).
    pub fn stem(&self, word: &str) -> String {
        self.stems(word)
            .into_iter()
            .next()
            .unwrap_or_else(|| word.to_owned())
    }

    pub(super) fn register(&self, index: &Index) {
        let manager = index.tokenizers();
        manager.register(STEMMED, self.stemmed.clone());
        manager.register(WORDS, self.words.clone());
        manager.register(
            NAMES,
            TextAnalyzer::builder(RawTokenizer::default())
                .filter(LowerCaser)
                .build(),
        );
    }
}

fn collect(analyzer: &mut TextAnalyzer, text: &str) -> Vec<String> {
    let mut stream = analyzer.token_stream(text);
    let mut out = Vec::new();
    while stream.advance() {
        out.push(stream.token().text.clone());
    }
    out
}

/// The index's fields.
#[derive(Debug, Clone, Copy)]
pub struct Fields {
    /// The resource id: exact, and a fast column for the tie-break and the answer.
    pub id: Field,
    /// Title, stemmed.
    pub title: Field,
    /// Title words, not stemmed (fuzzy fallback).
    pub title_words: Field,
    /// The locator without scheme and host, stemmed.
    pub locator: Field,
    /// The type (`mcp_server`, `package`, ...), stemmed.
    pub kind: Field,
    /// Description, stemmed.
    pub description: Field,
    /// Exact names: id, locator, title, package and repository names, and their compact forms.
    pub names: Field,
    /// Packed ranking signals ([`Signals`]).
    pub signals: Field,
    /// A hash of the owner, for "at most 2 per owner".
    pub owner: Field,
}

impl Fields {
    /// The text fields scored by BM25, with their weights.
    pub fn weighted(&self) -> [(Field, f32); 4] {
        [
            (self.title, 3.0),
            (self.locator, 1.5),
            (self.kind, 0.5),
            (self.description, 1.0),
        ]
    }

    pub(super) fn schema() -> (Schema, Fields) {
        let mut builder = Schema::builder();
        let text = |analyzer: &str, record: IndexRecordOption| {
            TextOptions::default().set_indexing_options(
                TextFieldIndexing::default()
                    .set_tokenizer(analyzer)
                    .set_index_option(record),
            )
        };
        let fields = Fields {
            id: builder.add_text_field("id", STRING | FAST),
            title: builder.add_text_field("title", text(STEMMED, IndexRecordOption::WithFreqs)),
            title_words: builder
                .add_text_field("title_words", text(WORDS, IndexRecordOption::Basic)),
            locator: builder.add_text_field("locator", text(STEMMED, IndexRecordOption::WithFreqs)),
            kind: builder.add_text_field("kind", text(STEMMED, IndexRecordOption::WithFreqs)),
            description: builder
                .add_text_field("description", text(STEMMED, IndexRecordOption::WithFreqs)),
            names: builder.add_text_field("names", text(NAMES, IndexRecordOption::Basic)),
            signals: builder.add_u64_field("signals", FAST),
            owner: builder.add_u64_field("owner", FAST),
        };
        (builder.build(), fields)
    }

    fn name_of(&self, field: Field) -> &'static str {
        match field {
            field if field == self.title => "title",
            field if field == self.locator => "locator",
            field if field == self.kind => "kind",
            field if field == self.description => "description",
            _ => "",
        }
    }
}

/// Ranking signals packed in one fast field.
///
/// Bits 0–19: popularity × 1,000,000 (0..=1,000,000). Bit 20 curated, 21 verification-grade
/// evidence, 22 archived upstream, 23 demo, 24 risky. Bits 25–28: category ([`Category::code`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Signals(pub u64);

impl Signals {
    const CURATED: u64 = 1 << 20;
    const VERIFIED: u64 = 1 << 21;
    const ARCHIVED: u64 = 1 << 22;
    const DEMO: u64 = 1 << 23;
    const RISKY: u64 = 1 << 24;
    const CATEGORY_SHIFT: u32 = 25;

    /// Packs the signals of one record.
    pub fn pack(record: &Record) -> Signals {
        let popularity = if record.popularity.is_finite() {
            record.popularity.clamp(0.0, 1.0)
        } else {
            0.0
        };
        // In range 0..=1_000_000 by the clamp above.
        let mut bits = (popularity * 1_000_000.0).round() as u64;
        for (flag, bit) in [
            (record.curated, Self::CURATED),
            (record.verified, Self::VERIFIED),
            (record.archived, Self::ARCHIVED),
            (record.demo, Self::DEMO),
            (record.risky, Self::RISKY),
        ] {
            if flag {
                bits |= bit;
            }
        }
        let category = match record.kind.as_str() {
            "mcp_server" => Category::McpServer.code(),
            "package" => Category::Package.code(),
            "skill" => Category::Skill.code(),
            "repo" => Category::Repo.code(),
            _ => 0,
        };
        Signals(bits | (category << Self::CATEGORY_SHIFT))
    }

    /// Popularity, 0..1.
    pub fn popularity(self) -> f32 {
        (self.0 & 0xF_FFFF) as f32 / 1_000_000.0
    }
    /// A curated, well-known tool.
    pub fn curated(self) -> bool {
        self.0 & Self::CURATED != 0
    }
    /// Has verification-grade evidence.
    pub fn verified(self) -> bool {
        self.0 & Self::VERIFIED != 0
    }
    /// Archived upstream.
    pub fn archived(self) -> bool {
        self.0 & Self::ARCHIVED != 0
    }
    /// A demo fixture.
    pub fn demo(self) -> bool {
        self.0 & Self::DEMO != 0
    }
    /// Flagged risky, or described as getting past bot defences.
    pub fn risky(self) -> bool {
        self.0 & Self::RISKY != 0
    }
    /// The category bits.
    pub fn category(self) -> u64 {
        (self.0 >> Self::CATEGORY_SHIFT) & 0b1111
    }
}

/// What the index needs of one resource (read from the `resources` and `claims` tables).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// `kd:res:...`.
    pub resource_id: String,
    /// github | npm | pypi | skill | registered | demo.
    pub source: String,
    /// Display title.
    pub title: String,
    /// `mcp_server`, `package`, ...
    pub kind: String,
    /// Locator.
    pub locator: String,
    /// Description.
    pub description: Option<String>,
    /// Publisher.
    pub owner: String,
    /// 0..1.
    pub popularity: f64,
    /// Curated, well known.
    pub curated: bool,
    /// Has a public verification-grade claim.
    pub verified: bool,
    /// Archived upstream.
    pub archived: bool,
    /// Demo fixture.
    pub demo: bool,
    /// Flagged risky in the store, or described as getting past bot defences.
    pub risky: bool,
}

/// The locator as searchable words: without scheme, `github.com`, `tree/<branch>` or
/// `blob/<commit>`, and without the `npm:` / `pypi:` prefix.
pub fn locator_words(locator: &str) -> String {
    let rest = locator
        .strip_prefix("https://")
        .or_else(|| locator.strip_prefix("http://"))
        .unwrap_or(locator);
    let rest = rest.strip_prefix("github.com/").unwrap_or(rest);
    let rest = rest
        .strip_prefix("npm:")
        .or_else(|| rest.strip_prefix("pypi:"))
        .unwrap_or(rest);
    let mut parts = Vec::new();
    let mut skip_next = false;
    for part in rest.split('/') {
        if skip_next {
            skip_next = false;
            continue;
        }
        if part == "tree" || part == "blob" {
            skip_next = true;
            continue;
        }
        parts.push(part);
    }
    parts.join("/")
}

/// The exact names a record answers to.
pub fn record_names(record: &Record) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        let name = name.trim().to_lowercase();
        if !name.is_empty() && !names.contains(&name) {
            names.push(name);
        }
    };
    add(&record.resource_id);
    add(&record.locator);
    add(&record.title);
    add(&plan::compact(&record.title));
    let path = locator_words(&record.locator);
    add(&path);
    let segments: Vec<&str> = path
        .split('/')
        .filter(|segment| !segment.is_empty())
        .collect();
    if record.source == "github" {
        if let [owner, repo, ..] = segments.as_slice() {
            add(&format!("{owner}/{repo}"));
            add(repo);
            add(&plan::compact(repo));
        }
        if let Some(last) = segments.last() {
            add(last);
        }
    }
    if let Some(name) = record
        .locator
        .strip_prefix("npm:")
        .or_else(|| record.locator.strip_prefix("pypi:"))
    {
        add(name);
        add(&plan::compact(name));
    }
    names
}

fn owner_key(owner: &str) -> u64 {
    let digest = Sha256::digest(owner.trim().to_lowercase().as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(bytes)
}

/// BM25 statistics over live documents only, with fixed average lengths: identical for any
/// two indexes holding the same records, however they were built.
pub struct AliveStatistics<'a> {
    searcher: &'a Searcher,
    fields: Fields,
}

impl<'a> AliveStatistics<'a> {
    /// Statistics for `searcher`.
    pub fn new(searcher: &'a Searcher, fields: Fields) -> Self {
        Self { searcher, fields }
    }

    /// Whether a live document of `field` holds a term that starts with `prefix`.
    ///
    /// # Errors
    /// When the index cannot be read.
    pub fn has_prefix(&self, field: Field, prefix: &str) -> tantivy::Result<bool> {
        for segment in self.searcher.segment_readers() {
            let inverted = segment.inverted_index(field)?;
            let mut terms = inverted
                .terms()
                .range()
                .ge(prefix.as_bytes())
                .into_stream()?;
            while terms.advance() {
                if !terms.key().starts_with(prefix.as_bytes()) {
                    break;
                }
                let info = terms.value().clone();
                let Some(alive) = segment
                    .alive_bitset()
                    .filter(|_| segment.num_deleted_docs() > 0)
                else {
                    return Ok(true);
                };
                let mut postings =
                    inverted.read_postings_from_terminfo(&info, IndexRecordOption::Basic)?;
                let mut doc = postings.doc();
                while doc != TERMINATED {
                    if alive.is_alive(doc) {
                        return Ok(true);
                    }
                    doc = postings.advance();
                }
            }
        }
        Ok(false)
    }

    /// Whether `query` matches a live document.
    ///
    /// # Errors
    /// When the index cannot be read.
    pub fn matches_any(&self, query: &dyn tantivy::query::Query) -> tantivy::Result<bool> {
        Ok(self.count(query)? > 0)
    }

    /// How many live documents `query` matches.
    ///
    /// # Errors
    /// When the index cannot be read.
    pub fn count(&self, query: &dyn tantivy::query::Query) -> tantivy::Result<u64> {
        Ok(self.searcher.search(query, &tantivy::collector::Count)? as u64)
    }
}

impl Bm25StatisticsProvider for AliveStatistics<'_> {
    fn total_num_tokens(&self, field: Field) -> tantivy::Result<u64> {
        let name = self.fields.name_of(field);
        let average = AVERAGE_LENGTH
            .iter()
            .find(|(known, _)| *known == name)
            .map_or(4, |(_, length)| *length);
        Ok(average * self.total_num_docs()?)
    }

    fn total_num_docs(&self) -> tantivy::Result<u64> {
        Ok(self.searcher.num_docs().max(1))
    }

    fn doc_freq(&self, term: &Term) -> tantivy::Result<u64> {
        let mut total = 0u64;
        for segment in self.searcher.segment_readers() {
            let inverted = segment.inverted_index(term.field())?;
            match segment
                .alive_bitset()
                .filter(|_| segment.num_deleted_docs() > 0)
            {
                None => total += u64::from(inverted.doc_freq(term)?),
                Some(alive) => {
                    if let Some(mut postings) =
                        inverted.read_postings(term, IndexRecordOption::Basic)?
                    {
                        let mut doc = postings.doc();
                        while doc != TERMINATED {
                            if alive.is_alive(doc) {
                                total += 1;
                            }
                            doc = postings.advance();
                        }
                    }
                }
            }
        }
        Ok(total)
    }
}

/// The document of one record.
pub fn document(fields: &Fields, record: &Record, analyzers: &Analyzers) -> TantivyDocument {
    let description = record.description.as_deref().unwrap_or_default();
    let mut record_signals = record.clone();
    if !record_signals.risky {
        let words = analyzers.words(&format!("{} {description}", record.title));
        record_signals.risky = looks_risky(&words);
    }
    let mut doc = TantivyDocument::default();
    doc.add_text(fields.id, &record.resource_id);
    doc.add_text(fields.title, &record.title);
    doc.add_text(fields.title_words, &record.title);
    doc.add_text(fields.locator, locator_words(&record.locator));
    doc.add_text(fields.kind, &record.kind);
    if !description.is_empty() {
        doc.add_text(fields.description, description);
    }
    for name in record_names(record) {
        doc.add_text(fields.names, name);
    }
    doc.add_u64(fields.signals, Signals::pack(&record_signals).0);
    doc.add_u64(fields.owner, owner_key(&record.owner));
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use tantivy::schema::Value as _;

    fn first_text(doc: &TantivyDocument, field: Field) -> Option<String> {
        doc.get_first(field)
            .and_then(|value| value.as_str())
            .map(str::to_owned)
    }

    fn record(id: &str, title: &str) -> Record {
        Record {
            resource_id: id.into(),
            source: "github".into(),
            title: title.into(),
            kind: "mcp_server".into(),
            locator: format!(
                "https://github.com/{}",
                id.trim_start_matches("kd:res:github:")
            ),
            description: Some("Stealth browser that bypasses bot detection".into()),
            owner: "acme".into(),
            popularity: 0.25,
            curated: true,
            verified: false,
            archived: false,
            demo: false,
            risky: false,
        }
    }

    #[test]
    fn locators_become_their_path_words() {
        assert_eq!(
            locator_words("https://github.com/modelcontextprotocol/servers/tree/main/src/postgres"),
            "modelcontextprotocol/servers/src/postgres"
        );
        assert_eq!(locator_words("npm:@21st-dev/magic"), "@21st-dev/magic");
        assert_eq!(
            locator_words("https://github.com/obra/superpowers/blob/44c9b2/skills/tdd/SKILL.md"),
            "obra/superpowers/skills/tdd/SKILL.md"
        );
    }

    #[test]
    fn signals_pack_and_unpack() {
        let record = record("kd:res:github:acme/stealth", "Stealth");
        let fields = Fields::schema().1;
        let doc = document(&fields, &record, &Analyzers::new());
        let signals = Signals(
            doc.get_first(fields.signals)
                .and_then(|value| value.as_u64())
                .unwrap(),
        );
        assert!(
            signals.curated()
                && signals.risky()
                && !signals.verified()
                && !signals.archived()
                && !signals.demo()
        );
        assert!((signals.popularity() - 0.25).abs() < 1e-6);
        assert_eq!(signals.category(), Category::McpServer.code());
        assert_eq!(
            first_text(&doc, fields.id).as_deref(),
            Some("kd:res:github:acme/stealth")
        );
    }

    #[test]
    fn github_records_answer_to_their_repository_names() {
        let names = record_names(&record("kd:res:github:ggml-org/whisper.cpp", "whisper.cpp"));
        for name in [
            "whisper.cpp",
            "whispercpp",
            "ggml-org/whisper.cpp",
            "https://github.com/ggml-org/whisper.cpp",
        ] {
            assert!(names.contains(&name.to_owned()), "{name}: {names:?}");
        }
    }
}
