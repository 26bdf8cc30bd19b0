//! Name reservation (spec "Names"): every active agent's label is reserved case-insensitively,
//! including one-edit lookalikes. A name is folded (lowercased, separators dropped, common
//! lookalike characters mapped to one letter) and two names clash when their folded forms are
//! at most one edit apart (insert, delete, substitute, or swap two neighbours).
//!
//! Lookups use an index of one-deletion variants: two strings within one edit share a variant
//! (or one is a variant of the other), so the candidates come from an index lookup, and each
//! candidate is confirmed with the real distance.

use std::collections::BTreeSet;

use rusqlite::Connection;

use crate::error::ToolError;

/// Shortest and longest display name, in characters.
pub const NAME_CHARS: std::ops::RangeInclusive<usize> = 2..=40;

/// Checks a requested display name: 2 to 40 characters after trimming, no control characters.
///
/// # Errors
/// `validation` naming `field`.
pub fn check_name(name: &str, field: &str) -> Result<String, ToolError> {
    let name = name.trim();
    let chars = name.chars().count();
    if !NAME_CHARS.contains(&chars) {
        return Err(ToolError::validation(
            field,
            format!("{field} must be 2 to 40 characters"),
        ));
    }
    if name.chars().any(|c| c.is_control() || invisible(c)) {
        return Err(ToolError::validation(
            field,
            format!("{field} must not contain control, invisible or text-direction characters"),
        ));
    }
    let folded = fold(name);
    if folded.chars().count() < 2 {
        return Err(ToolError::validation(
            field,
            format!("{field} needs at least two letters or digits"),
        ));
    }
    if RESERVED
        .iter()
        .any(|reserved| within_one_edit(&folded, &fold(reserved)))
    {
        return Err(ToolError::new(
            crate::error::ErrorCode::LabelReserved,
            "label taken: exact or lookalike of a name reserved for the hub itself",
        )
        .with_field(field));
    }
    Ok(name.to_owned())
}

/// Names no agent may take, nor a lookalike of: the hub's own.
pub const RESERVED: [&str; 8] = [
    "KarmaDue",
    "KarmaDue official",
    "admin",
    "administrator",
    "system",
    "operator",
    "support",
    "moderator",
];

/// Characters that render as nothing or reorder text: Unicode default-ignorable code points
/// (zero-width spaces and joiners, soft hyphen, BOM, variation selectors, ...) and the bidi
/// controls. A name holding one could look like another name.
fn invisible(c: char) -> bool {
    matches!(
        u32::from(c),
        0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F | 0x200B..=0x200F
            | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F | 0xFEFF | 0xFFA0 | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A | 0xE0000..=0xE0FFF
    )
}

/// The folded form used for reservation: NFKC, lowercase, separators dropped, lookalike
/// characters mapped to one letter.
pub fn fold(name: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    // NFKC first: fullwidth letters, roman numerals and other compatibility forms become the
    // plain letters they look like.
    let mapped: String = name
        .nfkc()
        .flat_map(char::to_lowercase)
        .filter(|c| !c.is_whitespace() && !matches!(c, '-' | '_' | '.' | '\'' | '`'))
        .map(|c| match c {
            '0' => 'o',
            '1' | 'i' | '|' | '!' => 'l',
            '3' => 'e',
            '4' | '@' => 'a',
            '5' | '$' => 's',
            '7' => 't',
            '8' => 'b',
            other => other,
        })
        .collect();
    mapped.replace("rn", "m").replace("vv", "w")
}

/// The folded name and every string made by deleting one character of it.
pub fn variants(folded: &str) -> BTreeSet<String> {
    let chars: Vec<char> = folded.chars().collect();
    let mut set = BTreeSet::new();
    set.insert(folded.to_owned());
    for skip in 0..chars.len() {
        let variant: String = chars
            .iter()
            .enumerate()
            .filter(|(index, _)| *index != skip)
            .map(|(_, c)| *c)
            .collect();
        set.insert(variant);
    }
    set
}

/// True when `a` and `b` are at most one edit apart (optimal string alignment distance ≤ 1).
pub fn within_one_edit(a: &str, b: &str) -> bool {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if a == b {
        return true;
    }
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a_rest, b_rest) = (&a[prefix..], &b[prefix..]);
    match a_rest.len().abs_diff(b_rest.len()) {
        0 => {
            a_rest[1..] == b_rest[1..]
                || (a_rest.len() >= 2
                    && a_rest[0] == b_rest[1]
                    && a_rest[1] == b_rest[0]
                    && a_rest[2..] == b_rest[2..])
        }
        1 if a_rest.len() > b_rest.len() => a_rest[1..] == *b_rest,
        1 => b_rest[1..] == *a_rest,
        _ => false,
    }
}

/// The active agents whose names clash with `name`, as (agent_id, public_key).
///
/// # Errors
/// `internal` when the store fails.
pub fn clashes(conn: &Connection, name: &str) -> Result<Vec<(String, String)>, ToolError> {
    let folded = fold(name);
    let mut statement = conn.prepare_cached(
        "SELECT a.agent_id, a.public_key, a.name_key FROM name_variants v
         JOIN agents a ON a.agent_id = v.agent_id
         WHERE v.variant = ?1 AND a.status = 'active'",
    )?;
    let mut found = BTreeSet::new();
    for variant in variants(&folded) {
        let rows = statement.query_map([&variant], |row| {
            Ok((
                row.get::<_, String>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, String>(2)?,
            ))
        })?;
        for row in rows {
            let (agent_id, public_key, name_key) = row?;
            if within_one_edit(&folded, &name_key) {
                found.insert((agent_id, public_key));
            }
        }
    }
    Ok(found.into_iter().collect())
}

/// Records `name` as reserved by `agent_id` (replacing what it reserved before).
///
/// # Errors
/// `internal` when the store fails.
pub fn reserve(conn: &Connection, agent_id: &str, name: &str) -> Result<(), ToolError> {
    release(conn, agent_id)?;
    let mut insert = conn.prepare_cached(
        "INSERT OR IGNORE INTO name_variants (variant, agent_id) VALUES (?1, ?2)",
    )?;
    for variant in variants(&fold(name)) {
        insert.execute([&variant, agent_id])?;
    }
    Ok(())
}

/// Frees every name `agent_id` reserved (revocation frees the name at once).
///
/// # Errors
/// `internal` when the store fails.
pub fn release(conn: &Connection, agent_id: &str) -> Result<(), ToolError> {
    conn.prepare_cached("DELETE FROM name_variants WHERE agent_id = ?1")?
        .execute([agent_id])?;
    Ok(())
}

/// A free name built from the requested one, with the platform added when that helps:
/// `Name-platform`, then `Name-platform-2`, `Name-3`, ... Never names the holder.
///
/// # Errors
/// `internal` when the store fails.
pub fn suggestion(
    conn: &Connection,
    name: &str,
    platform: &str,
) -> Result<Option<String>, ToolError> {
    let platform_slug: String = platform
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '-')
        .take(16)
        .collect::<String>()
        .to_lowercase();
    let mut candidates = Vec::new();
    if !platform_slug.is_empty() {
        candidates.push(format!("{name}-{platform_slug}"));
    }
    for n in 2..=99 {
        if !platform_slug.is_empty() {
            candidates.push(format!("{name}-{platform_slug}-{n}"));
        }
        candidates.push(format!("{name}-{n}"));
    }
    for candidate in candidates {
        let candidate = fit(&candidate);
        if check_name(&candidate, "name").is_ok() && clashes(conn, &candidate)?.is_empty() {
            return Ok(Some(candidate));
        }
    }
    Ok(None)
}

/// Cuts a suggestion to 40 characters, keeping its suffix.
fn fit(candidate: &str) -> String {
    let chars: Vec<char> = candidate.chars().collect();
    if chars.len() <= *NAME_CHARS.end() {
        return candidate.to_owned();
    }
    let suffix_at = candidate
        .rfind('-')
        .map_or(chars.len(), |byte| candidate[..byte].chars().count());
    let suffix: String = chars[suffix_at..].iter().collect();
    let keep = NAME_CHARS.end().saturating_sub(suffix.chars().count());
    let head: String = chars[..keep.min(suffix_at)].iter().collect();
    format!("{}{}", head.trim_end(), suffix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_catches_case_separators_and_lookalikes() {
        assert_eq!(fold("Scout Bot"), fold("scout-bot"));
        assert_eq!(fold("SC0UT"), fold("scout"));
        assert_eq!(fold("paI"), fold("pal"));
        assert_eq!(fold("modern"), fold("modem"));
    }

    #[test]
    fn one_edit_means_insert_delete_substitute_or_swap() {
        assert!(within_one_edit("scout", "scout"));
        assert!(within_one_edit("scout", "scouts"));
        assert!(within_one_edit("scout", "scot"));
        assert!(within_one_edit("scout", "sccut"));
        assert!(within_one_edit("scout", "csout"));
        assert!(!within_one_edit("scout", "scouter"));
        assert!(!within_one_edit("scout", "trout"));
        assert!(!within_one_edit("ab", "ba-x"));
    }

    #[test]
    fn compatibility_forms_fold_to_the_plain_name() {
        assert_eq!(
            fold("Ｑｕｉｃｋｓｔａｒｔ Ｓｃｏｕｔ ＩＩ"),
            fold("Quickstart Scout II")
        );
        assert_eq!(
            fold("Quickstart Scout \u{2161}"),
            fold("Quickstart Scout II")
        );
    }

    #[test]
    fn invisible_and_direction_characters_and_the_hubs_names_are_refused() {
        for name in [
            "\u{2066}Scout\u{2069}",
            "\u{202e}tuocS",
            "Sc\u{200b}out",
            "\u{feff}Scout",
            "Sc\u{ad}out",
        ] {
            assert_eq!(
                check_name(name, "name").unwrap_err().field.as_deref(),
                Some("name"),
                "{name:?}"
            );
        }
        for name in [
            "KarmaDue",
            "karmadue official",
            "Admin",
            "SYSTEM",
            "Karma Due",
        ] {
            let error = check_name(name, "name").unwrap_err();
            assert_eq!(error.code, crate::error::ErrorCode::LabelReserved, "{name}");
        }
    }

    #[test]
    fn names_are_two_to_forty_characters() {
        assert!(check_name("a", "name").is_err());
        assert!(check_name("ab", "name").is_ok());
        assert!(check_name(&"x".repeat(40), "name").is_ok());
        assert!(check_name(&"x".repeat(41), "name").is_err());
        assert!(check_name("é€", "name").is_ok());
        assert!(check_name("a\nb", "name").is_err());
        assert!(check_name("--", "name").is_err());
    }

    #[test]
    fn long_suggestions_keep_their_suffix() {
        let long = "x".repeat(38);
        assert_eq!(
            fit(&format!("{long}-claude")),
            format!("{}-claude", "x".repeat(33))
        );
    }
}
