//! Random JSON documents for the canonical-text property tests and the PostgreSQL differential
//! test. Shared by `canonical_properties.rs` and `pg_differential.rs`; each uses part of it.
#![allow(dead_code)]

use std::collections::HashSet;

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};

/// One generated document.
pub struct Doc {
    /// The raw JSON text, as a client would send it.
    pub text: String,
    /// True when every number in it prints the same through serde_json's `Value` as from its
    /// literal: no exponent, no trailing fractional zero, at most 15 significant digits. Only
    /// such documents can be compared between `canonical_text` and `canonical_value_text`.
    pub serde_stable: bool,
}

/// Generates documents that PostgreSQL and `canonical_text` both accept: unique keys (after
/// unescaping), no `\u0000`, no lone surrogates, numbers printing in at most 100 characters,
/// nesting of at most 64.
pub struct Generator {
    rng: StdRng,
    serde_stable: bool,
}

/// Characters keys are drawn from: few, so that keys of equal byte length (and equal keys,
/// which are then skipped) come up often; 1-, 2-, 3- and 4-byte UTF-8 all present.
const KEY_CHARS: &[char] = &[
    'a', 'b', 'A', '_', '1', ' ', 'é', '€', '😀', '\n', '"', '\u{7f}',
];

/// Raw non-ASCII and odd characters that PostgreSQL prints unescaped.
const ODD_CHARS: &[char] = &[
    'é',
    '€',
    '😀',
    '中',
    '\u{2028}',
    '\u{2029}',
    '\u{7f}',
    '\u{80}',
    '\u{a0}',
    '\u{feff}',
    '\u{fffe}',
    '\u{ffff}',
    '\u{10ffff}',
    '\u{301}',
    '\u{200d}',
    '/',
    '<',
    '\'',
];

/// Numbers whose printing is a known edge.
const EDGE_NUMBERS: &[&str] = &[
    "0",
    "-0",
    "0.0",
    "-0.0",
    "-0.00",
    "0e5",
    "0E+5",
    "-0e-3",
    "0.000e2",
    "0e1073741822",
    "1e2",
    "1E+2",
    "1e02",
    "1e-2",
    "1e-6",
    "1.0e-7",
    "1.50e1",
    "100e-2",
    "0.00001e5",
    "2.50",
    "1.000",
    "0.10",
    "12.3400",
    "9007199254740993",
    "-9223372036854775808",
    "18446744073709551616",
    "1e-98",
    "-1e-97",
    "1e99",
    "0.5e1",
    "5e-1",
    "1e-0",
    "1E-00",
    "123456789012345678901234567890",
];

const SHORT_ESCAPES: &[&str] = &["\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t"];
const WHITESPACE: &[char] = &[' ', '\t', '\n', '\r'];

impl Generator {
    /// A generator whose output depends only on `seed`.
    pub fn new(seed: u64) -> Self {
        Self {
            rng: StdRng::seed_from_u64(seed),
            serde_stable: true,
        }
    }

    /// The random source, for tests that build their own variations.
    pub fn rng(&mut self) -> &mut StdRng {
        &mut self.rng
    }

    /// A document: usually an object (as tool arguments are), sometimes an array, a scalar, or
    /// a chain nested right up to the 64 limit.
    pub fn document(&mut self) -> Doc {
        self.serde_stable = true;
        let mut text = String::new();
        self.whitespace(&mut text);
        match self.rng.gen_range(0..100) {
            0..=69 => self.object(&mut text, 1),
            70..=81 => self.array(&mut text, 1),
            82..=97 => self.scalar(&mut text),
            _ => self.deep_chain(&mut text),
        }
        self.whitespace(&mut text);
        Doc {
            text,
            serde_stable: self.serde_stable,
        }
    }

    fn whitespace(&mut self, out: &mut String) {
        if self.rng.gen_bool(0.6) {
            return;
        }
        for _ in 0..self.rng.gen_range(1..=3) {
            out.push(*WHITESPACE.choose(&mut self.rng).unwrap_or(&' '));
        }
    }

    fn value(&mut self, out: &mut String, depth: usize) {
        // Containers get rarer with depth so documents stay small.
        let container_odds = match depth {
            0..=1 => 0.45,
            2 => 0.3,
            3..=4 => 0.15,
            _ => 0.0,
        };
        if self.rng.gen_bool(container_odds) {
            if self.rng.gen_bool(0.5) {
                self.object(out, depth + 1);
            } else {
                self.array(out, depth + 1);
            }
        } else {
            self.scalar(out);
        }
    }

    fn scalar(&mut self, out: &mut String) {
        match self.rng.gen_range(0..10) {
            0 => out.push_str(
                ["true", "false", "null"]
                    .choose(&mut self.rng)
                    .unwrap_or(&"null"),
            ),
            1..=4 => {
                let number = self.number();
                out.push_str(&number);
            }
            _ => {
                self.string(out);
            }
        }
    }

    fn object(&mut self, out: &mut String, depth: usize) {
        out.push('{');
        let mut seen = HashSet::new();
        let mut first = true;
        for _ in 0..self.rng.gen_range(0..=6) {
            let decoded: String = (0..self.rng.gen_range(0..=3))
                .map(|_| *KEY_CHARS.choose(&mut self.rng).unwrap_or(&'a'))
                .collect();
            if !seen.insert(decoded.clone()) {
                continue;
            }
            if !first {
                out.push(',');
            }
            first = false;
            self.whitespace(out);
            self.encode_string(out, &decoded);
            self.whitespace(out);
            out.push(':');
            self.whitespace(out);
            self.value(out, depth);
            self.whitespace(out);
        }
        if first {
            self.whitespace(out);
        }
        out.push('}');
    }

    fn array(&mut self, out: &mut String, depth: usize) {
        out.push('[');
        let count = self.rng.gen_range(0..=6);
        for i in 0..count {
            if i > 0 {
                out.push(',');
            }
            self.whitespace(out);
            self.value(out, depth);
            self.whitespace(out);
        }
        if count == 0 {
            self.whitespace(out);
        }
        out.push(']');
    }

    /// Objects and arrays nested to a random depth up to exactly 64.
    fn deep_chain(&mut self, out: &mut String) {
        let depth = if self.rng.gen_bool(0.3) {
            64
        } else {
            self.rng.gen_range(6..64)
        };
        let mut closers = Vec::new();
        for level in 0..depth {
            if self.rng.gen_bool(0.5) {
                out.push_str("{\"k");
                out.push_str(&level.to_string());
                out.push_str("\":");
                closers.push('}');
            } else {
                out.push('[');
                closers.push(']');
            }
            self.whitespace(out);
        }
        self.scalar(out);
        while let Some(closer) = closers.pop() {
            out.push(closer);
        }
    }

    /// Writes `decoded` as a JSON string literal, each character raw or escaped at random.
    fn encode_string(&mut self, out: &mut String, decoded: &str) {
        out.push('"');
        for c in decoded.chars() {
            let must_escape = c == '"' || c == '\\' || (c as u32) < 0x20;
            if must_escape || self.rng.gen_bool(0.3) {
                self.escape_char(out, c);
            } else {
                out.push(c);
            }
        }
        out.push('"');
    }

    fn escape_char(&mut self, out: &mut String, c: char) {
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' => Some("\\/"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        match short {
            Some(escape) if self.rng.gen_bool(0.7) => out.push_str(escape),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    self.unicode_escape(out, u32::from(*unit));
                }
            }
        }
    }

    fn unicode_escape(&mut self, out: &mut String, unit: u32) {
        let hex = format!("{unit:04x}");
        out.push_str("\\u");
        // PostgreSQL reads hex digits in either case; mix them.
        for digit in hex.chars() {
            out.push(if self.rng.gen_bool(0.5) {
                digit.to_ascii_uppercase()
            } else {
                digit
            });
        }
    }

    /// A string value made of random pieces: plain ASCII, raw odd characters, every short
    /// escape, `\u` escapes of BMP characters and controls, surrogate-pair escapes of astral
    /// characters, raw astral characters.
    fn string(&mut self, out: &mut String) {
        out.push('"');
        for _ in 0..self.rng.gen_range(0..=8) {
            match self.rng.gen_range(0..9) {
                0 | 1 => {
                    for _ in 0..self.rng.gen_range(1..=6) {
                        let c = char::from(self.rng.gen_range(0x20u8..0x7f));
                        if c == '"' || c == '\\' {
                            self.escape_char(out, c);
                        } else {
                            out.push(c);
                        }
                    }
                }
                2 => out.push(*ODD_CHARS.choose(&mut self.rng).unwrap_or(&'é')),
                3 => out.push_str(SHORT_ESCAPES.choose(&mut self.rng).unwrap_or(&"\\n")),
                4 => {
                    let unit = loop {
                        let unit = self.rng.gen_range(1..=0xffffu32);
                        if !(0xd800..=0xdfff).contains(&unit) {
                            break unit;
                        }
                    };
                    self.unicode_escape(out, unit);
                }
                5 => {
                    let unit = if self.rng.gen_bool(0.9) {
                        self.rng.gen_range(1..0x20)
                    } else {
                        0x7f
                    };
                    self.unicode_escape(out, unit);
                }
                6 => {
                    let c = self.astral();
                    self.escape_char(out, c);
                }
                7 => {
                    let c = self.astral();
                    out.push(c);
                }
                _ => {
                    // Any scalar value at all, raw unless it must be escaped.
                    let c = loop {
                        if let Some(c) = char::from_u32(self.rng.gen_range(1..=0x10ffff)) {
                            break c;
                        }
                    };
                    if (c as u32) < 0x20 || c == '"' || c == '\\' {
                        self.escape_char(out, c);
                    } else {
                        out.push(c);
                    }
                }
            }
        }
        out.push('"');
    }

    fn astral(&mut self) -> char {
        loop {
            if let Some(c) = char::from_u32(self.rng.gen_range(0x10000..=0x10ffff)) {
                return c;
            }
        }
    }

    /// A number literal in JSON's grammar whose PostgreSQL form is at most 100 characters:
    /// at most 40 integer digits, 30 fraction digits and an exponent up to ±40.
    fn number(&mut self) -> String {
        if self.rng.gen_bool(0.15) {
            self.serde_stable = false;
            return (*EDGE_NUMBERS.choose(&mut self.rng).unwrap_or(&"0")).to_owned();
        }
        let mut text = String::new();
        if self.rng.gen_bool(0.25) {
            text.push('-');
        }
        if self.rng.gen_bool(0.3) {
            text.push('0');
        } else {
            let count = if self.rng.gen_bool(0.8) {
                self.rng.gen_range(1..=6)
            } else {
                self.rng.gen_range(7..=40)
            };
            text.push(char::from(b'0' + self.rng.gen_range(1..=9u8)));
            for _ in 1..count {
                text.push(self.digit());
            }
        }
        let mut fraction = String::new();
        if self.rng.gen_bool(0.45) {
            let count = if self.rng.gen_bool(0.8) {
                self.rng.gen_range(1..=4)
            } else {
                self.rng.gen_range(5..=30)
            };
            for _ in 0..count {
                fraction.push(self.digit());
            }
            text.push('.');
            text.push_str(&fraction);
        }
        // Significant digits of the mantissa, counted before any exponent is appended.
        let significant = text
            .bytes()
            .filter(u8::is_ascii_digit)
            .skip_while(|&d| d == b'0')
            .count();
        let negative_zero = text.starts_with('-') && significant == 0;
        let has_exponent = self.rng.gen_bool(0.25);
        if has_exponent {
            text.push(if self.rng.gen_bool(0.5) { 'e' } else { 'E' });
            text.push_str(["", "+", "-"].choose(&mut self.rng).unwrap_or(&""));
            for _ in 0..self.rng.gen_range(0..=2) {
                text.push('0');
            }
            text.push_str(&self.rng.gen_range(0..=40).to_string());
        }
        // serde_json reads `-0` as the float -0.0, drops trailing fractional zeros and keeps
        // about 15 significant digits, so only other numbers print alike on both paths.
        let stable =
            !has_exponent && !fraction.ends_with('0') && !negative_zero && significant <= 15;
        if !stable {
            self.serde_stable = false;
        }
        text
    }

    fn digit(&mut self) -> char {
        // Zeros are over-represented: leading zeros in fractions and trailing zeros matter.
        if self.rng.gen_bool(0.3) {
            '0'
        } else {
            char::from(b'0' + self.rng.gen_range(0..=9u8))
        }
    }
}

/// Fragments that PostgreSQL refuses as JSON (or as numeric), each placed where a value goes.
/// None contains a raw NUL byte, which PostgreSQL text cannot carry at all.
pub const INVALID_VALUES: &[&str] = &[
    "\"a\u{1}b\"",
    "\"\t\"",
    "\"\u{1f}\"",
    "\"\n\"",
    "\"\\u0000\"",
    "\"a\\u0000b\"",
    "\"\\ud83d\"",
    "\"\\ude00\"",
    "\"\\ud83dx\"",
    "\"\\ud83d\\ud83d\"",
    "\"\\ud83d\\u0041\"",
    "\"\\ud83d\\n\"",
    "\"\\udbff\\u0000\"",
    "\"\\x41\"",
    "\"\\'\"",
    "\"\\u12\"",
    "\"\\u12g4\"",
    "\"\\U0041\"",
    "\"\\\"",
    "\"\\",
    "\"unterminated",
    "01",
    "-01",
    "00",
    "-",
    "+1",
    ".5",
    "1.",
    "1.e5",
    "1e",
    "1e+",
    "--1",
    "1.5.2",
    "0x10",
    "1_000",
    "NaN",
    "Infinity",
    "-Infinity",
    "TRUE",
    "True",
    "nul",
    "nulll",
    "truex",
    "undefined",
    "'a'",
    "[1,]",
    "[,1]",
    "[1 2]",
    "{\"a\":1,}",
    "{\"a\" 1}",
    "{1:2}",
    "{,}",
    "{\"a\"}",
    "[",
    "]",
    "\u{c}1",
    "\u{a0}1",
    "\u{feff}1",
    "\u{b}1",
    "1e1073741823",
    "0e1073741823",
    "-0e-1073741823",
    "1e-16384",
    "1e131072",
];

/// Numbers at the edges of PostgreSQL's numeric input and of our 100-character rule, for the
/// differential test to put to the server one by one.
pub const EDGE_NUMBERS_FOR_PG: &[&str] = &[
    "0e1073741822",
    "0e1073741823",
    "-0e1073741822",
    "0e-1073741822",
    "1e-16383",
    "1e-16384",
    "0e-16383",
    "0e-16384",
    "1e131071",
    "1e131072",
    "1e99",
    "1e100",
    "-1e98",
    "-1e99",
    "1e-98",
    "1e-99",
    "0.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "0.000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "-0.00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000",
    "1e0000000000000000000000000000002",
    "1.7976931348623157e308",
    "5e-324",
];

/// Places `fragment` where one value of a small valid document goes. Returns the document and
/// the top-level key whose value then holds the fragment, if any.
pub fn embed(rng: &mut StdRng, fragment: &str) -> (String, Option<&'static str>) {
    match rng.gen_range(0..5) {
        0 => (fragment.to_owned(), None),
        1 => (format!("{{\"a\": {fragment}}}"), Some("a")),
        2 => (
            format!("{{\"x\": 1, \"y\": [true, {fragment}], \"z\": null}}"),
            Some("y"),
        ),
        3 => (format!("[1, {{\"k\": {fragment}}}]"), None),
        _ => (
            format!("{{\"outer\": {{\"inner\": [{fragment}]}}}}"),
            Some("outer"),
        ),
    }
}

/// Damages a document at random: cut it short, delete a byte, insert or swap in a JSON
/// metacharacter. The result may be valid or not; callers compare both sides either way.
pub fn mutate(rng: &mut StdRng, text: &str) -> String {
    const METACHARACTERS: &[&str] = &[
        "{", "}", "[", "]", ",", ":", "\"", "\\", "-", "0", "e", ".", " ", "\u{1}", "\\u", "+",
    ];
    let boundaries: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .collect();
    let at = *boundaries.choose(rng).unwrap_or(&0);
    let next = boundaries
        .iter()
        .copied()
        .find(|&b| b > at)
        .unwrap_or(text.len());
    let insert = *METACHARACTERS.choose(rng).unwrap_or(&",");
    match rng.gen_range(0..4) {
        0 => text[..at].to_owned(),
        1 => format!("{}{}", &text[..at], &text[next..]),
        2 => format!("{}{}{}", &text[..at], insert, &text[at..]),
        _ => format!("{}{}{}", &text[..at], insert, &text[next..]),
    }
}
