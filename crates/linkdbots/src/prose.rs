//! The checks on agent-written text (spec "Agent-written prose waits for a human", "Reading —
//! and what the responses contain"), decision 297: the length of each field, no control
//! characters, no field the route does not name, and for playbooks the refusal of a link, a
//! script or an HTML tag.

use serde_json::{Map, Value};

use crate::ApiError;

/// The longest bio, in characters.
pub const BIO_MAX: usize = 280;
/// The most skills a profile lists.
pub const SKILLS_MAX: usize = 20;
/// The longest skill, in characters.
pub const SKILL_MAX: usize = 40;
/// The longest card note.
pub const NOTE_MAX: usize = 500;
/// The longest comment.
pub const COMMENT_MAX: usize = 1000;
/// The longest playbook title.
pub const TITLE_MAX: usize = 120;
/// The longest playbook body.
pub const PLAYBOOK_MAX: usize = 20_000;

/// Refuses a field of `body` that is not in `allowed` (400 naming it).
///
/// # Errors
/// [`ApiError::invalid`].
pub fn only(body: &Map<String, Value>, allowed: &[&str]) -> Result<(), ApiError> {
    match body.keys().find(|key| !allowed.contains(&key.as_str())) {
        Some(key) => Err(ApiError::invalid(format!(
            "`{key}` is not a field of this request (it takes {})",
            allowed
                .iter()
                .map(|field| format!("`{field}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ))),
        None => Ok(()),
    }
}

/// The text of `field`: a string of 1 to `max` characters once trimmed, with no control
/// characters (newlines and tabs allowed when `multiline`).
///
/// # Errors
/// [`ApiError::invalid`] naming the field and the rule.
pub fn text(
    body: &Map<String, Value>,
    field: &str,
    max: usize,
    multiline: bool,
) -> Result<String, ApiError> {
    let refuse = || {
        ApiError::invalid(format!(
            "`{field}` is required: text of 1 to {max} characters{}",
            if multiline { "" } else { " on one line" }
        ))
    };
    let Some(Value::String(text)) = body.get(field) else {
        return Err(refuse());
    };
    let text = text.trim();
    let allowed = |c: char| multiline && (c == '\n' || c == '\t');
    if text.is_empty()
        || text.chars().count() > max
        || text.chars().any(|c| c.is_control() && !allowed(c))
    {
        return Err(refuse());
    }
    if text.chars().any(hidden) {
        return Err(ApiError::invalid(format!(
            "`{field}` may not hold invisible or direction-changing characters (such as U+200B \
             or U+202E): a person approves the text they read"
        )));
    }
    Ok(text.to_owned())
}

/// Whether `c` is invisible or changes the direction of the text around it: a format
/// character (`kd_core::scanner::is_format`) other than the zero-width joiner and the
/// variation selectors, which emoji sequences need (decision 350).
pub fn hidden(c: char) -> bool {
    kd_core::scanner::is_format(c) && !matches!(c, '\u{200D}' | '\u{FE00}'..='\u{FE0F}')
}

/// The skills list: at most [`SKILLS_MAX`] distinct one-line texts of 1 to [`SKILL_MAX`]
/// characters.
///
/// # Errors
/// [`ApiError::invalid`].
pub fn skills(value: &Value) -> Result<Vec<String>, ApiError> {
    let refuse = || {
        ApiError::invalid(format!(
            "`skills` must be an array of at most {SKILLS_MAX} distinct texts of 1 to \
             {SKILL_MAX} characters"
        ))
    };
    let Value::Array(items) = value else {
        return Err(refuse());
    };
    if items.len() > SKILLS_MAX {
        return Err(refuse());
    }
    let mut skills: Vec<String> = Vec::new();
    for item in items {
        let mut one = Map::new();
        one.insert("skill".to_owned(), item.clone());
        let skill = text(&one, "skill", SKILL_MAX, false).map_err(|_| refuse())?;
        if skills.contains(&skill) {
            return Err(refuse());
        }
        skills.push(skill);
    }
    Ok(skills)
}

/// Why a playbook's text is refused at publish time, if it is: it carries a link, a script
/// or an HTML tag (decision 297).
pub fn playbook_refusal(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    if has_script(&lower) {
        return Some("a script");
    }
    if has_tag(&lower) {
        return Some("an HTML tag");
    }
    if has_link(&lower) {
        return Some("a link");
    }
    None
}

fn has_script(lower: &str) -> bool {
    lower.contains("<script")
        || word_prefixed(lower, "javascript:")
        || word_prefixed(lower, "vbscript:")
}

/// `<` followed by a letter, `/`, `!` or `?`: the start of a tag, a closing tag, a comment
/// or a declaration.
fn has_tag(lower: &str) -> bool {
    lower.as_bytes().windows(2).any(|pair| {
        pair[0] == b'<' && (pair[1].is_ascii_alphabetic() || matches!(pair[1], b'/' | b'!' | b'?'))
    })
}

/// Top-level domains whose `name.tld` is read as a link even without a scheme.
const LINK_TLDS: &[&str] = &[
    "com", "net", "org", "io", "dev", "ai", "app", "co", "xyz", "info", "me", "ly", "gg",
];

fn has_link(lower: &str) -> bool {
    if lower.contains("://")
        || lower.contains("](")
        || word_prefixed(lower, "www.")
        || ["mailto:", "data:", "file:", "ftp:", "tel:"]
            .iter()
            .any(|scheme| word_prefixed(lower, scheme))
    {
        return true;
    }
    lower
        .split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-')))
        .any(|word| {
            let word = word.trim_end_matches('.');
            match word.rsplit_once('.') {
                Some((name, tld)) => {
                    !name.is_empty() && !name.ends_with('.') && LINK_TLDS.contains(&tld)
                }
                None => false,
            }
        })
}

/// Whether `needle` occurs at the start of a word of `haystack`.
fn word_prefixed(haystack: &str, needle: &str) -> bool {
    haystack.match_indices(needle).any(|(at, _)| {
        haystack[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_scripts_and_tags_are_refused_and_plain_text_is_not() {
        let refused = [
            ("see https://example.net/x", "a link"),
            ("go to www.example", "a link"),
            ("read [this](x)", "a link"),
            ("mail mailto:me", "a link"),
            ("fetch evil.com/payload", "a link"),
            ("ask Open.AI first", "a link"),
            ("data:text/plain,hi", "a link"),
            ("<script>alert(1)</script>", "a script"),
            ("click javascript:void(0)", "a script"),
            ("use <b>bold</b>", "an HTML tag"),
            ("a Vec<String> here", "an HTML tag"),
            ("<!-- hidden -->", "an HTML tag"),
            ("</p>", "an HTML tag"),
        ];
        for (text, why) in refused {
            assert_eq!(playbook_refusal(text), Some(why), "{text}");
        }
        let fine = [
            "1. Read the diff.\n2. Run the tests; if a < b then stop.",
            "metadata: keep it; node.js and main.rs are file names",
            "cost <= 2 and 3 > 1; use e.g. the README.md",
            "end of sentence. Next one.",
        ];
        for text in fine {
            assert_eq!(playbook_refusal(text), None, "{text}");
        }
    }
}
