//! The text scanner (DESIGN "core": the text scanner; Ronin document "The scanner").
//!
//! It reads text for patterns that turn text into an attack on the agent that reads it:
//! piping a download into a shell, password-protected archives, "ignore your instructions",
//! fake system messages, invisible characters, requests to send secrets (and the services
//! that collect them), bare public IP addresses, paste sites and link shorteners. The rules are
//! data (`scanner/rules.json`, versioned, served as they are); two kinds are checked in code:
//! `invisible` (code-point ranges) and `public_ip` (addresses classified with `std::net`).
//!
//! A [`Scan`] is `{level, label, flags, reasons: [{rule, why, excerpt}]}`: `level` is `clean`
//! ("no flags found"), `review` ("questionable") or `high` ("questionable: high-risk
//! pattern"), the highest level of any rule that matched; `flags` are the matched categories;
//! each reason names one matched rule with the text that set it off (at most
//! [`EXCERPT_CHARS`] characters, invisible characters written as `\u{…}`). Nothing is
//! certified safe: "no flags found" means only that no rule matched.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use regex::Regex;
use serde::Serialize;

/// The rule file, as shipped and served.
pub const RULES_JSON: &str = include_str!("../scanner/rules.json");

/// The longest excerpt a reason quotes, in characters.
pub const EXCERPT_CHARS: usize = 160;

/// Characters of context an excerpt shows on each side of a match.
const CONTEXT_CHARS: usize = 40;

/// How questionable a text is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// No rule matched.
    Clean,
    /// A rule matched: read it before acting.
    Review,
    /// A high-risk rule matched.
    High,
}

impl Level {
    /// The plain words for the level.
    pub fn label(self) -> &'static str {
        match self {
            Self::Clean => "no flags found",
            Self::Review => "questionable",
            Self::High => "questionable: high-risk pattern",
        }
    }
}

/// One matched rule and the text that set it off.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// The rule id, e.g. `pipe_to_shell.download`.
    pub rule: String,
    /// Why it matters, in plain words.
    pub why: String,
    /// The matched text with a little context, at most [`EXCERPT_CHARS`] characters.
    pub excerpt: String,
}

/// The verdict on one text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Scan {
    /// The highest level of any matched rule.
    pub level: Level,
    /// [`Level::label`].
    pub label: &'static str,
    /// The matched categories, sorted, each once.
    pub flags: Vec<String>,
    /// One reason per matched rule, in rule order.
    pub reasons: Vec<Reason>,
}

#[derive(serde::Deserialize)]
struct RuleFile {
    version: String,
    rules: Vec<RuleSpec>,
}

#[derive(serde::Deserialize)]
struct RuleSpec {
    id: String,
    category: String,
    level: RuleLevel,
    why: String,
    kind: String,
    pattern: String,
    #[serde(default)]
    unless_negated: bool,
}

#[derive(serde::Deserialize, Clone, Copy)]
#[serde(rename_all = "lowercase")]
enum RuleLevel {
    Review,
    High,
}

enum Check {
    /// A pattern; with `true`, a match in a negated sentence ("never send your key") is
    /// skipped.
    Pattern(Regex, bool),
    /// Invisible characters: the hidden kind (zero-width, format, private use, controls).
    Hidden,
    /// Invisible characters: bidirectional overrides and tag characters.
    Smuggling,
    PublicIp,
}

struct Rule {
    id: String,
    category: String,
    level: Level,
    why: String,
    check: Check,
}

/// The compiled rules.
pub struct Scanner {
    version: String,
    rules: Vec<Rule>,
}

impl std::fmt::Debug for Scanner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scanner")
            .field("version", &self.version)
            .field("rules", &self.rules.len())
            .finish()
    }
}

impl Scanner {
    /// Compiles a rule file.
    ///
    /// # Errors
    /// A message naming the rule whose pattern or kind is wrong, or the file's shape.
    pub fn from_json(text: &str) -> Result<Self, String> {
        let file: RuleFile =
            serde_json::from_str(text).map_err(|error| format!("rule file: {error}"))?;
        let mut rules = Vec::with_capacity(file.rules.len());
        for spec in file.rules {
            let check = match spec.kind.as_str() {
                "regex" => Check::Pattern(
                    regex::RegexBuilder::new(&spec.pattern)
                        .size_limit(1 << 22)
                        .build()
                        .map_err(|error| format!("rule {}: {error}", spec.id))?,
                    spec.unless_negated,
                ),
                "invisible_hidden" => Check::Hidden,
                "invisible_smuggling" => Check::Smuggling,
                "public_ip" => Check::PublicIp,
                other => return Err(format!("rule {}: unknown kind {other}", spec.id)),
            };
            rules.push(Rule {
                level: match spec.level {
                    RuleLevel::Review => Level::Review,
                    RuleLevel::High => Level::High,
                },
                id: spec.id,
                category: spec.category,
                why: spec.why,
                check,
            });
        }
        Ok(Self {
            version: file.version,
            rules,
        })
    }

    /// The shipped rules ([`RULES_JSON`]), compiled once per process.
    ///
    /// # Panics
    /// Never in a released build: a test compiles the shipped file.
    #[allow(clippy::expect_used)]
    pub fn shipped() -> &'static Scanner {
        static SHIPPED: OnceLock<Scanner> = OnceLock::new();
        SHIPPED.get_or_init(|| {
            Scanner::from_json(RULES_JSON).expect("the shipped scanner rules compile (tested)")
        })
    }

    /// The rule file's version.
    pub fn version(&self) -> &str {
        &self.version
    }

    /// Scans `text`. Patterns and addresses are looked for in the text with format characters
    /// taken out ([`strip_format`]); invisible characters in the text as given.
    pub fn scan(&self, text: &str) -> Scan {
        let stripped = strip_format(text);
        let mut reasons = Vec::new();
        let mut level = Level::Clean;
        let mut flags: Vec<String> = Vec::new();
        for rule in &self.rules {
            let found = match &rule.check {
                Check::Pattern(pattern, unless_negated) => pattern
                    .find_iter(&stripped)
                    .find(|m| !(*unless_negated && negated(&stripped, m.start())))
                    .map(|m| (stripped.as_str(), m.start(), m.end())),
                Check::Hidden => find_hidden(text).map(|(start, end)| (text, start, end)),
                Check::Smuggling => {
                    find_char(text, is_smuggling).map(|(start, end)| (text, start, end))
                }
                Check::PublicIp => {
                    find_public_ip(&stripped).map(|(start, end)| (stripped.as_str(), start, end))
                }
            };
            let Some((source, start, end)) = found else {
                continue;
            };
            level = level.max(rule.level);
            if !flags.contains(&rule.category) {
                flags.push(rule.category.clone());
            }
            reasons.push(Reason {
                rule: rule.id.clone(),
                why: rule.why.clone(),
                excerpt: excerpt(source, start, end),
            });
        }
        flags.sort();
        Scan {
            level,
            label: level.label(),
            flags,
            reasons,
        }
    }
}

/// Scans `text` with the shipped rules.
pub fn scan(text: &str) -> Scan {
    Scanner::shipped().scan(text)
}

/// Zero-width, format, private-use and control characters a person cannot see. TAB, LF and
/// CR are ordinary, and so are the zero-width joiner and non-joiner (U+200C, U+200D), which
/// emoji sequences and several scripts need, except between two ASCII letters
/// ([`find_hidden`]).
fn is_hidden(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{B}' | '\u{C}' | '\u{E}'..='\u{1F}' | '\u{7F}'..='\u{9F}'
        | '\u{AD}' | '\u{61C}' | '\u{200B}' | '\u{200E}' | '\u{200F}' | '\u{2060}'..='\u{2064}'
        | '\u{206A}'..='\u{206F}' | '\u{FEFF}' | '\u{E000}'..='\u{F8FF}'
        | '\u{E0100}'..='\u{E01EF}' | '\u{F0000}'..='\u{10FFFF}')
}

/// The first hidden character ([`is_hidden`]), or joiner between two ASCII letters.
fn find_hidden(text: &str) -> Option<(usize, usize)> {
    let mut previous: Option<char> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        let joiner_in_word = matches!(c, '\u{200C}' | '\u{200D}')
            && previous.is_some_and(|p| p.is_ascii_alphabetic())
            && chars
                .peek()
                .is_some_and(|(_, next)| next.is_ascii_alphabetic());
        if is_hidden(c) || joiner_in_word {
            return Some((at, at + c.len_utf8()));
        }
        previous = Some(c);
    }
    None
}

/// Whether `c` is a format character the patterns do not see: joiners, soft hyphens, bidi
/// marks and overrides, word joiners and invisible operators, variation selectors, the BOM
/// and tag characters. Taking them out first means a hidden character cannot split a word a
/// rule looks for.
pub fn is_format(c: char) -> bool {
    matches!(c,
        '\u{AD}' | '\u{61C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}'
        | '\u{E0000}'..='\u{E007F}' | '\u{E0100}'..='\u{E01EF}')
}

/// `text` without its format characters ([`is_format`]).
pub fn strip_format(text: &str) -> String {
    text.chars().filter(|c| !is_format(*c)).collect()
}

/// Whether the sentence holding byte `at` says never, don't, do not or not before it (looking
/// back at most 60 characters, to the last `.`, `!`, `?` or line break).
fn negated(text: &str, at: usize) -> bool {
    let before: String = text[..at]
        .chars()
        .rev()
        .take(60)
        .take_while(|c| !matches!(c, '.' | '!' | '?' | '\n'))
        .collect::<Vec<char>>()
        .into_iter()
        .rev()
        .collect::<String>()
        .to_lowercase();
    before
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '\u{2019}')
        .any(|word| {
            matches!(
                word,
                "never" | "not" | "don't" | "dont" | "don\u{2019}t" | "mustn't" | "shouldn't"
            )
        })
}

/// Bidirectional overrides and isolates (Trojan Source) and tag characters (ASCII smuggling).
fn is_smuggling(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}' | '\u{E0000}'..='\u{E007F}')
}

fn find_char(text: &str, test: fn(char) -> bool) -> Option<(usize, usize)> {
    text.char_indices()
        .find(|(_, c)| test(*c))
        .map(|(at, c)| (at, at + c.len_utf8()))
}

fn address_patterns() -> &'static (Regex, Regex) {
    static PATTERNS: OnceLock<(Regex, Regex)> = OnceLock::new();
    #[allow(clippy::expect_used)]
    PATTERNS.get_or_init(|| {
        (
            Regex::new(r"[0-9]{1,3}(?:\.[0-9]{1,3}){3}").expect("a constant pattern"),
            Regex::new(r"\[([0-9A-Fa-f:.]{2,45})\]").expect("a constant pattern"),
        )
    })
}

/// The first public IPv4 literal standing alone (not part of a longer dotted number or a
/// word) or bracketed IPv6 literal.
fn find_public_ip(text: &str) -> Option<(usize, usize)> {
    let (v4, v6) = address_patterns();
    let bytes = text.as_bytes();
    let alone = |start: usize, end: usize| {
        let before = start.checked_sub(1).map(|at| bytes[at]);
        let after = bytes.get(end).copied();
        let after_next = bytes.get(end + 1).copied();
        let joined_before = before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'.');
        let joined_after = after.is_some_and(|b| b.is_ascii_alphanumeric())
            || (after == Some(b'.') && after_next.is_some_and(|b| b.is_ascii_digit()));
        !(joined_before || joined_after)
    };
    let first_v4 = v4.find_iter(text).find(|found| {
        alone(found.start(), found.end())
            && found
                .as_str()
                .parse::<Ipv4Addr>()
                .is_ok_and(|address| is_public(IpAddr::V4(address)))
    });
    let first_v6 = v6
        .captures_iter(text)
        .filter_map(|captures| captures.get(1))
        .find(|found| {
            found
                .as_str()
                .parse::<Ipv6Addr>()
                .is_ok_and(|address| is_public(IpAddr::V6(address)))
        });
    match (first_v4, first_v6) {
        (Some(a), Some(b)) if b.start() < a.start() => Some((b.start(), b.end())),
        (Some(a), _) => Some((a.start(), a.end())),
        (None, Some(b)) => Some((b.start(), b.end())),
        (None, None) => None,
    }
}

/// Whether an address is globally routable: not private, loopback, link-local, CGNAT
/// (100.64.0.0/10), documentation, benchmarking, multicast, broadcast, unspecified or reserved
/// (and for IPv6 also not unique-local, link-local or documentation 2001:db8::/32; an
/// IPv4-mapped address is judged as IPv4).
pub fn is_public(address: IpAddr) -> bool {
    match address {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_unspecified()
                || v4.is_documentation()
                || a == 0
                || (a == 100 && (64..128).contains(&b))
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (b == 18 || b == 19))
                || a >= 240)
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00
                || (first & 0xffc0) == 0xfe80
                || (first == 0x2001 && v6.segments()[1] == 0x0db8))
        }
    }
}

/// The match with up to [`CONTEXT_CHARS`] characters of context on each side, at most
/// [`EXCERPT_CHARS`] characters written out in all (the match first: a long match is cut to
/// the budget and context shrinks to fit), line breaks as spaces and invisible characters as
/// `\u{…}` (each escape counts its own length).
fn excerpt(text: &str, start: usize, end: usize) -> String {
    fn shown(c: char) -> String {
        if is_hidden(c) || is_smuggling(c) || is_format(c) {
            format!("\\u{{{:X}}}", u32::from(c))
        } else if matches!(c, '\n' | '\r' | '\t' | '\u{2028}' | '\u{2029}' | '\u{85}') {
            " ".to_owned()
        } else {
            c.to_string()
        }
    }
    let mut budget = EXCERPT_CHARS;
    let mut matched = String::new();
    for c in text[start..end].chars() {
        let piece = shown(c);
        if piece.chars().count() > budget {
            break;
        }
        budget -= piece.chars().count();
        matched.push_str(&piece);
    }
    let side = (budget / 2).min(CONTEXT_CHARS);
    let mut before = Vec::new();
    let mut left = side;
    for c in text[..start].chars().rev() {
        let piece = shown(c);
        if piece.chars().count() > left {
            break;
        }
        left -= piece.chars().count();
        before.push(piece);
    }
    let mut after = String::new();
    let mut right = side;
    for c in text[end..].chars() {
        let piece = shown(c);
        if piece.chars().count() > right {
            break;
        }
        right -= piece.chars().count();
        after.push_str(&piece);
    }
    before.reverse();
    format!("{}{matched}{after}", before.concat())
        .trim()
        .to_owned()
}

/// The rules as `GET …/scan/rules` serves them: `{version, levels, rules: [{id, category,
/// level, why, kind, pattern}]}` (the shipped file, parsed, plus the level labels).
pub fn rules_document() -> serde_json::Value {
    let mut document: serde_json::Value =
        serde_json::from_str(RULES_JSON).unwrap_or(serde_json::Value::Null);
    document["levels"] = serde_json::json!({
        "clean": Level::Clean.label(),
        "review": Level::Review.label(),
        "high": Level::High.label(),
    });
    document
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_rules_compile() {
        let scanner = Scanner::from_json(RULES_JSON).unwrap();
        assert_eq!(scanner.rules.len(), 19);
        assert_eq!(scanner.version(), "2026-11-30.2");
    }

    #[test]
    fn a_bad_rule_is_named() {
        let bad = r#"{"version":"x","rules":[{"id":"r1","category":"c","level":"high","why":"w","kind":"regex","pattern":"("}]}"#;
        assert!(Scanner::from_json(bad).unwrap_err().starts_with("rule r1:"));
        let unknown = r#"{"version":"x","rules":[{"id":"r2","category":"c","level":"review","why":"w","kind":"yara","pattern":""}]}"#;
        assert!(Scanner::from_json(r#"{"version":"x"}"#).is_err());
        assert_eq!(
            Scanner::from_json(unknown).unwrap_err(),
            "rule r2: unknown kind yara"
        );
    }

    #[test]
    fn public_addresses_are_told_from_private_and_reserved_ones() {
        for public in ["8.8.8.8", "45.61.1.2", "2606:4700::1111", "::ffff:8.8.4.4"] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
        for private in [
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "127.0.0.1",
            "169.254.1.1",
            "100.64.0.1",
            "192.0.2.7",
            "198.51.100.1",
            "203.0.113.9",
            "224.0.0.1",
            "255.255.255.255",
            "0.0.0.0",
            "198.18.0.1",
            "240.0.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "2001:db8::1",
            "::ffff:10.0.0.1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
    }

    #[test]
    fn excerpts_show_hidden_characters_and_stay_short() {
        let text = format!("{}pay\u{200B}ment{}", "a".repeat(300), "b".repeat(300));
        let scan = scan(&text);
        let reason = &scan.reasons[0];
        assert!(
            reason.excerpt.contains("pay\\u{200B}ment"),
            "{}",
            reason.excerpt
        );
        assert!(reason.excerpt.chars().count() <= EXCERPT_CHARS);
    }
}
