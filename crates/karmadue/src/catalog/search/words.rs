//! The planner's word lists: common words, generic (category) words, phrases read as one word,
//! synonym groups, one-way expansions and the words of risky needs; and the two readers of
//! them that need no index (phrases, risky descriptions).

use super::plan::Category;

/// Words that carry no need.
pub(super) const STOPWORDS: &[&str] = &[
    "a",
    "an",
    "and",
    "any",
    "are",
    "as",
    "at",
    "be",
    "best",
    "by",
    "can",
    "could",
    "do",
    "does",
    "find",
    "for",
    "from",
    "get",
    "good",
    "help",
    "helps",
    "how",
    "i",
    "in",
    "into",
    "is",
    "it",
    "its",
    "just",
    "let",
    "lets",
    "like",
    "look",
    "looking",
    "me",
    "my",
    "need",
    "needs",
    "not",
    "of",
    "on",
    "or",
    "our",
    "please",
    "should",
    "so",
    "some",
    "something",
    "that",
    "the",
    "these",
    "this",
    "those",
    "to",
    "use",
    "using",
    "via",
    "want",
    "we",
    "what",
    "which",
    "with",
    "without",
    "would",
    "you",
    "your",
];

/// Generic words: they only hint at a category, unless the need has nothing else.
pub(super) const GENERIC: &[(&str, Category)] = &[
    ("mcp", Category::McpServer),
    ("server", Category::McpServer),
    ("servers", Category::McpServer),
    ("connector", Category::McpServer),
    ("connectors", Category::McpServer),
    ("integration", Category::McpServer),
    ("integrations", Category::McpServer),
    ("tool", Category::McpServer),
    ("tools", Category::McpServer),
    ("plugin", Category::McpServer),
    ("plugins", Category::McpServer),
    ("skill", Category::Skill),
    ("skills", Category::Skill),
    ("package", Category::Package),
    ("packages", Category::Package),
    ("library", Category::Package),
    ("libraries", Category::Package),
];

/// Phrases read as one word before anything else (`speech to text` is not `text`).
pub(super) const PHRASES: &[(&[&str], &str)] = &[
    (&["speech", "to", "text"], "stt"),
    (&["text", "to", "speech"], "tts"),
    (&["on", "device"], "ondevice"),
    (&["self", "hosted"], "selfhosted"),
    (&["e", "mail"], "email"),
    (&["model", "context", "protocol"], "mcp"),
    (&["file", "system"], "filesystem"),
    (&["time", "zone"], "timezone"),
    (&["data", "base"], "database"),
    (&["google", "drive"], "gdrive"),
    (&["google", "calendar"], "gcal"),
    (&["amazon", "web", "services"], "aws"),
    (&["google", "cloud"], "gcp"),
    (&["bot", "detection"], "botdetection"),
];

/// Synonym groups: any word of a group also matches the others (at a lower weight).
pub(super) const GROUPS: &[&[&str]] = &[
    &[
        "stt",
        "transcription",
        "transcribe",
        "transcribing",
        "speech",
        "whisper",
        "asr",
        "dictation",
    ],
    &["ondevice", "local", "offline", "selfhosted"],
    &["mcp", "connector", "integration", "server"],
    &["tts", "voice", "synthesis"],
    &["postgres", "postgresql", "psql"],
    &["database", "db"],
    &["calendar", "gcal", "ical", "caldav"],
    &["email", "mail", "gmail", "imap", "smtp", "inbox"],
    &["kubernetes", "k8s", "kubectl"],
    &[
        "scrape", "scraping", "scraper", "crawl", "crawler", "crawling",
    ],
    &["weather", "meteo"],
    &["youtube", "yt"],
    &["spreadsheet", "excel", "xlsx", "sheets"],
    &["repo", "repository"],
    &["python", "py"],
    &["typescript", "ts"],
    &["javascript", "js"],
    &["monitoring", "observability"],
    &["markdown", "md"],
    &["gdrive", "drive"],
    &["gcp", "bigquery"],
    &["filesystem", "files"],
    &["timezone", "zone"],
];

/// One-way expansions: the word on the left also matches the words on the right.
pub(super) const NARROWER: &[(&str, &[&str])] = &[
    (
        "browser",
        &[
            "playwright",
            "puppeteer",
            "selenium",
            "chromium",
            "headless",
        ],
    ),
    ("vector", &["embedding", "embeddings"]),
    ("file", &["filesystem"]),
    ("time", &["timezone"]),
    ("search", &["websearch"]),
    ("web", &["websearch"]),
    ("payments", &["payment", "checkout"]),
];

/// Words that mean the need asks for tools that get past bot defences.
pub(super) const RISK_WORDS: &[&str] = &[
    "captcha",
    "captchas",
    "recaptcha",
    "stealth",
    "undetected",
    "undetectable",
    "antidetect",
    "botdetection",
    "bypass",
    "evade",
    "evasion",
    "cloudflare",
    "fingerprint",
    "fingerprinting",
];

/// Joins known phrases into one word, longest first.
pub(super) fn join_phrases(words: &[String]) -> Vec<String> {
    let mut joined = Vec::with_capacity(words.len());
    let mut index = 0;
    'words: while index < words.len() {
        for (phrase, word) in PHRASES {
            let end = index + phrase.len();
            if end <= words.len()
                && words[index..end]
                    .iter()
                    .zip(phrase.iter())
                    .all(|(have, want)| have == want)
            {
                joined.push((*word).to_owned());
                index = end;
                continue 'words;
            }
        }
        joined.push(words[index].clone());
        index += 1;
    }
    joined
}

/// True when text (a record's title and description) describes getting past bot defences.
pub fn looks_risky(words: &[String]) -> bool {
    let has = |prefix: &str| words.iter().any(|word| word.starts_with(prefix));
    has("stealth")
        || has("undetect")
        || has("antidetect")
        || (has("bypass") && (has("captcha") || has("bot") || has("cloudflare") || has("detect")))
        || (has("captcha") && (has("solv") || has("solve")))
        || (has("evad") && has("detect"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn risky_descriptions_are_recognised_by_their_words() {
        let words = |text: &str| {
            text.split_whitespace()
                .map(str::to_lowercase)
                .collect::<Vec<_>>()
        };
        assert!(looks_risky(&words("Stealth browser MCP server")));
        assert!(looks_risky(&words("solving captchas via CapMonster")));
        assert!(looks_risky(&words("bypasses bot-detection that")));
        assert!(!looks_risky(&words(
            "React component wrapper for Google reCAPTCHA"
        )));
    }
}
