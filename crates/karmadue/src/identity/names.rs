//! Name reservation (spec "Names"): every active agent's label is reserved case-insensitively,
//! including one-edit lookalikes. A name is folded (lowercased, separators dropped, common
//! lookalike characters mapped to one letter) and two names clash when their folded forms are
//! at most one edit apart (insert, delete, substitute, or swap two neighbours).
//!
//! Lookups use an index of one-deletion variants: two strings within one edit share a variant
//! (or one is a variant of the other), so the candidates come from an index lookup, and each
//! candidate is confirmed with the real distance.

use std::collections::BTreeSet;
use std::hash::BuildHasher;

use kd_core::db::Connection;
use kd_core::store::WriteTxn;

use kd_kernel::error::ToolError;

use super::IdentityError;

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
        return Err(IdentityError::NameLength(field.to_owned()).into());
    }
    if name.chars().any(|c| c.is_control() || invisible(c)) {
        return Err(IdentityError::NameCharacters(field.to_owned()).into());
    }
    let folded = fold(name);
    if folded.chars().count() < 2 {
        return Err(IdentityError::NameTooFewLetters(field.to_owned()).into());
    }
    if RESERVED
        .iter()
        .any(|reserved| within_one_edit(&folded, &fold(reserved)))
    {
        return Err(IdentityError::NameReservedForHub(field.to_owned()).into());
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

/// Whether `text` is one plain line: no control characters, no line or paragraph separators
/// (U+2028, U+2029) and nothing [`invisible`] (trust_query's and find_collaborators' `skill`).
pub fn one_plain_line(text: &str) -> bool {
    !text
        .chars()
        .any(|c| c.is_control() || invisible(c) || matches!(c, '\u{2028}' | '\u{2029}'))
}

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

/// Which agents may hold a name with a given one-deletion variant: an in-memory index the
/// writer keeps, in place of a table of variants (which cost the writer about 80 µs of SQL per
/// rename: ~17 deletes, ~17 inserts and ~17 probes; docs/performance.md).
///
/// It answers with a superset: every active agent's current folded name (as the writer's
/// transaction sees it, this batch's earlier jobs included) has its variants in the index,
/// and entries are never removed (a renamed or revoked agent's old variants stay until the
/// next rebuild). [`clashes`] therefore confirms each candidate against the `agents` row in
/// the same transaction, so a stale, rolled-back or colliding entry never refuses a name.
/// Variants are kept as 64-bit keyed hashes (per-process random keys, so nobody can aim
/// collisions), agents as indexes into one list of ids.
///
/// It is built from the store when the hub starts ([`NameIndex::build`], from `prepare`), on
/// first use otherwise, again whenever the writer's epoch moved
/// ([`kd_core::store::WriteTxn::epoch`]: another process appended, or a batch failed
/// and rolled back what its jobs had added or built), and again when stale entries (renames
/// and revocations since the build) outnumber live agents by more than 1,024.
#[derive(Debug, Default)]
pub struct NameIndex {
    state: std::sync::Mutex<Option<IndexState>>,
}

/// The agents (indexes into `IndexState::agents`) that may hold a variant: almost always one.
#[derive(Debug)]
enum Holders {
    One(u32),
    Many(Vec<u32>),
}

impl Holders {
    fn add(&mut self, index: u32) {
        match self {
            Self::One(one) if *one == index => {}
            Self::One(one) => *self = Self::Many(vec![*one, index]),
            Self::Many(many) => {
                if !many.contains(&index) {
                    many.push(index);
                }
            }
        }
    }

    fn as_slice(&self) -> &[u32] {
        match self {
            Self::One(one) => std::slice::from_ref(one),
            Self::Many(many) => many,
        }
    }
}

#[derive(Debug)]
struct IndexState {
    /// The writer's epoch when it was built.
    built_at: u64,
    hasher: std::hash::RandomState,
    by_variant: std::collections::HashMap<u64, Holders>,
    agents: Vec<String>,
    agent_index: std::collections::HashMap<String, u32>,
    /// Active agents when built, plus registrations since.
    live: usize,
    /// Renames and revocations since it was built: entries that only widen the candidates.
    stale: usize,
}

impl IndexState {
    fn empty(built_at: u64) -> Self {
        Self {
            built_at,
            hasher: std::hash::RandomState::new(),
            by_variant: std::collections::HashMap::new(),
            agents: Vec::new(),
            agent_index: std::collections::HashMap::new(),
            live: 0,
            stale: 0,
        }
    }

    fn build(conn: &Connection, built_at: u64) -> Result<Self, ToolError> {
        let mut state = Self::empty(built_at);
        let active = super::store::active_name_keys(conn)?;
        for (agent_id, name_key) in active {
            state.add(&agent_id, &name_key)?;
        }
        state.stale = 0;
        Ok(state)
    }

    /// Whether it still vouches for the store as the writer's transaction sees it.
    fn current(&self, epoch: u64) -> bool {
        self.built_at == epoch && self.stale <= self.live + 1024
    }

    fn add(&mut self, agent_id: &str, folded: &str) -> Result<(), ToolError> {
        let index = match self.agent_index.get(agent_id) {
            Some(index) => {
                self.stale += 1;
                *index
            }
            None => {
                // Fails closed: past 2^32 agents a name is refused rather than unindexed.
                let index =
                    u32::try_from(self.agents.len()).map_err(|_| IdentityError::NameIndexFull)?;
                self.agents.push(agent_id.to_owned());
                self.agent_index.insert(agent_id.to_owned(), index);
                self.live += 1;
                index
            }
        };
        for variant in variants(folded) {
            let hash = self.hasher.hash_one(&variant);
            match self.by_variant.get_mut(&hash) {
                Some(holders) => holders.add(index),
                None => {
                    self.by_variant.insert(hash, Holders::One(index));
                }
            }
        }
        Ok(())
    }

    fn candidates(&self, folded: &str) -> BTreeSet<&str> {
        variants(folded)
            .iter()
            .filter_map(|variant| self.by_variant.get(&self.hasher.hash_one(variant)))
            .flat_map(Holders::as_slice)
            .filter_map(|index| self.agents.get(*index as usize).map(String::as_str))
            .collect()
    }
}

impl NameIndex {
    /// Builds the index from the store now (so that the first name a hub checks does not wait
    /// for it inside the writer).
    ///
    /// # Errors
    /// `internal` when the store fails.
    pub fn build(&self, txn: &WriteTxn<'_>) -> Result<(), ToolError> {
        self.with(txn, |_| Ok(()))
    }

    /// Runs `use_state` on the index, building it first when it is missing or stale.
    fn with<T>(
        &self,
        txn: &WriteTxn<'_>,
        use_state: impl FnOnce(&mut IndexState) -> Result<T, ToolError>,
    ) -> Result<T, ToolError> {
        let mut guard = self
            .state
            .lock()
            .map_err(|_| IdentityError::NameIndexPoisoned)?;
        let epoch = txn.epoch();
        if !guard.as_ref().is_some_and(|state| state.current(epoch)) {
            *guard = Some(IndexState::build(txn.conn(), epoch)?);
        }
        match guard.as_mut() {
            Some(state) => use_state(state),
            None => Err(IdentityError::NameIndexMissing.into()),
        }
    }
}

/// The active agents whose names clash with `name`, as (agent_id, public_key), read inside
/// the writer's transaction: the index's candidates, each confirmed against its `agents` row
/// (active, and its current folded name within one edit).
///
/// # Errors
/// `internal` when the store fails.
pub fn clashes(
    txn: &WriteTxn<'_>,
    index: &NameIndex,
    name: &str,
) -> Result<Vec<(String, String)>, ToolError> {
    let folded = fold(name);
    let candidates: Vec<String> = index.with(txn, |state| {
        Ok(state
            .candidates(&folded)
            .into_iter()
            .map(str::to_owned)
            .collect())
    })?;
    let mut found = BTreeSet::new();
    for agent_id in candidates {
        let row = super::store::active_key_and_name_key(txn.conn(), &agent_id)?;
        if let Some((public_key, name_key)) = row
            && within_one_edit(&folded, &name_key)
        {
            found.insert((agent_id, public_key));
        }
    }
    Ok(found.into_iter().collect())
}

/// Records `name` as reserved by `agent_id` (its name from now on, in this transaction).
///
/// # Errors
/// `internal` when the store fails.
pub fn reserve(
    txn: &WriteTxn<'_>,
    index: &NameIndex,
    agent_id: &str,
    name: &str,
) -> Result<(), ToolError> {
    let folded = fold(name);
    index.with(txn, |state| state.add(agent_id, &folded))
}

/// Notes that `agent_id` gave its name up (revoked): its entries stay as stale candidates
/// until the next rebuild, which this brings closer.
///
/// # Errors
/// `internal` when the index lock fails or a rebuild fails.
pub fn release(txn: &WriteTxn<'_>, index: &NameIndex) -> Result<(), ToolError> {
    index.with(txn, |state| {
        state.stale += 1;
        state.live = state.live.saturating_sub(1);
        Ok(())
    })
}

/// A free name built from the requested one, with the platform added when that helps:
/// `Name-platform`, then `Name-platform-2`, `Name-3`, ... Never names the holder.
///
/// # Errors
/// `internal` when the store fails.
pub fn suggestion(
    txn: &WriteTxn<'_>,
    index: &NameIndex,
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
        if check_name(&candidate, "name").is_ok() && clashes(txn, index, &candidate)?.is_empty() {
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
            assert_eq!(
                error.code,
                kd_kernel::error::ErrorCode::LabelReserved,
                "{name}"
            );
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
    fn the_index_only_grows_and_asks_for_a_rebuild_when_stale_or_the_epoch_moved() {
        let mut state = IndexState::empty(3);
        state.add("a", &fold("Scout")).unwrap();
        // "scot" shares variants with "scout": those hold two agents.
        state.add("b", &fold("Scot")).unwrap();
        let found = state.candidates(&fold("Sc0ut"));
        assert!(found.contains("a") && found.contains("b"), "{found:?}");
        assert!(state.candidates(&fold("Ranger")).is_empty());
        assert!(state.current(3));
        assert!(!state.current(4), "another epoch: rebuild");
        // Renames add and never remove: the old name stays a candidate (the confirmation
        // against the agents row drops it), until the stale entries pass live + 1024.
        for n in 0..1026 {
            state.add("a", &fold(&format!("Wanderer {n}"))).unwrap();
        }
        assert!(state.candidates(&fold("Scout")).contains("a"));
        assert!(state.candidates(&fold("Wanderer 1025")).contains("a"));
        assert!(state.current(3), "1026 stale entries, 2 live agents");
        state.add("a", &fold("One More")).unwrap();
        assert!(!state.current(3), "1027 stale entries, 2 live agents");
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
