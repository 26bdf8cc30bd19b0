//! Table ownership (issues 9 and 10; docs/architecture.md "Storage modules"): the hub's SQL
//! lives only in one storage module per area (`<area>/store.rs`), and an area's store names
//! only the tables its area owns. A read that needs another area's rows goes through that
//! area's store functions, or is one of the named read models listed in [`READ_MODELS`].

use std::collections::BTreeSet;

/// Which area owns which table: the one list (docs/architecture.md repeats it as a table).
/// An area's store module is `crates/karmadue/src/<area>/store.rs`. `kd-core` and `ronin`
/// are not hub areas: their tables are stored by `kd_core` and the `kd-ronin` crate.
pub(crate) const OWNERS: &[(&str, &[&str])] = &[
    (
        "identity",
        &[
            "agents",
            "challenges",
            "passports",
            "nonces",
            "name_variants",
        ],
    ),
    (
        "people",
        &[
            "people",
            "sessions",
            "signup_links",
            "outbox",
            "owner_grants",
            "owner_requests",
            "connect_codes",
            "code_attempts",
            "claim_requests",
            "findings",
            "invitations",
            "capability_offers",
            "agent_preferences",
        ],
    ),
    ("standing", &["stamps", "capabilities", "actions"]),
    (
        "catalog",
        &["resources", "claims", "content_reports", "milestones"],
    ),
    ("preflight", &["receipts"]),
    ("outcomes", &["outcome_reports"]),
    (
        "admission",
        &["admission_attempts", "technical_bonuses", "asks"],
    ),
    (
        "help",
        &[
            "verification_asks",
            "verification_disputes",
            "watchlists",
            "watchlist_items",
        ],
    ),
    ("jobs", &["jobs", "disputes"]),
    ("signals", &["peer_signals"]),
    (
        "market",
        &["market_listings", "market_proposals", "market_handoffs"],
    ),
    (
        "forum",
        &[
            "forum_threads",
            "forum_posts",
            "forum_reports",
            "forum_acceptances",
        ],
    ),
    ("ledger", &["events", "log_heads"]),
    (
        "connector",
        &[
            "oauth_clients",
            "oauth_codes",
            "oauth_connections",
            "oauth_tokens",
            "oauth_consents",
        ],
    ),
    (
        "kd-core",
        &[
            "rate_slots",
            "server_keys",
            "schema_migrations",
            "tlog_hashes",
            "tlog_checkpoints",
        ],
    ),
    (
        "ronin",
        &[
            "ronin_events",
            "ronin_keys",
            "ronin_listings",
            "ronin_profiles",
            "ronin_tasks",
            "ronin_task_events",
            "ronin_successors",
            "ronin_claims",
            "ronin_certifications",
            "ronin_auth_seen",
            "ronin_callbacks",
            "ronin_notify",
            "ronin_artifacts",
            "ronin_bench_runs",
        ],
    ),
    (
        "linkdbots",
        &[
            "linkdbots_pairing_codes",
            "linkdbots_agents",
            "linkdbots_host_keys",
            "linkdbots_cards",
            "linkdbots_budget_use",
            "linkdbots_proposals",
            "linkdbots_reactions",
            "linkdbots_follows",
            "linkdbots_budget_limits",
            "linkdbots_orgs",
            "linkdbots_teams",
            "linkdbots_team_members",
            "linkdbots_connects",
            "linkdbots_board_versions",
            "linkdbots_category_proposals",
        ],
    ),
];

/// The named read models: an area's store reading another area's table, and why. Each is a
/// join kept in one statement (a signed call's hot path, or a page that lists rows with the
/// names of their agents); everything else goes through the owner's store functions.
const READ_MODELS: &[(&str, &str, &str)] = &[
    (
        "standing",
        "owner_grants",
        "FACTS_COLUMNS: the hub reads a signer's key and standing (the owner's actions a day) in one query",
    ),
    (
        "standing",
        "people",
        "independent_reviews: a reviewing person counts once signed up a week before stamping",
    ),
    (
        "standing",
        "agents",
        "agent_facts over agents; independent_reviews: a reviewing agent's age",
    ),
    (
        "people",
        "agents",
        "the You page, Inbox, offers and preferences list an owner's agents with their handles",
    ),
    (
        "help",
        "agents",
        "asks show the requester's and subject's handles; the daily watch job skips revoked agents",
    ),
    (
        "admission",
        "agents",
        "the Technical bonus counts once per owner, by the bonus holder's current owner",
    ),
    (
        "forum",
        "agents",
        "threads and posts show their author's handle and label",
    ),
    (
        "forum",
        "people",
        "posts by a signed-in person show the person's display name",
    ),
    (
        "ledger",
        "forum_posts",
        "the public stream leaves out DEMO samples and posts by people",
    ),
];

/// Store modules and the area they belong to: `src/<area>/store.rs` or `src/<area>/store/…`.
fn store_area(relative: &str) -> Option<&str> {
    let rest = relative.strip_prefix("crates/karmadue/src/")?;
    let (area, tail) = rest.split_once('/')?;
    (tail == "store.rs" || tail.starts_with("store/")).then_some(area)
}

/// Files under `crates/karmadue/src` that may hold SQL outside a store module: `ledger
/// rebuild`'s comparison, which reads every compared table whole by its column list (it is a
/// tool over the schema, not an area), and its tests.
const SQL_ALLOWED: &[&str] = &[
    "crates/karmadue/src/rebuild/compare.rs",
    "crates/karmadue/src/rebuild/tests.rs",
];

fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
        .collect()
}

/// The first SQL statement in `text`, as its keyword: `SELECT … FROM`, `INSERT INTO`,
/// `UPDATE <table> SET`, `DELETE FROM` (upper case, as the project writes SQL).
fn sql_statement(text: &str) -> Option<&'static str> {
    let words = words(text);
    for (at, word) in words.iter().enumerate() {
        let next = |n: usize| words.get(at + n).copied();
        let found = match *word {
            "SELECT" => words
                .iter()
                .skip(at + 1)
                .take(80)
                .any(|word| *word == "FROM")
                .then_some("SELECT … FROM"),
            "INSERT" => (next(1) == Some("INTO")).then_some("INSERT INTO"),
            "DELETE" => (next(1) == Some("FROM")).then_some("DELETE FROM"),
            "UPDATE" => (next(2) == Some("SET")).then_some("UPDATE … SET"),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

/// The tables `text` names after `FROM`, `JOIN`, `INTO` or `UPDATE`.
fn tables_named(text: &str) -> BTreeSet<String> {
    let words = words(text);
    words
        .windows(2)
        .filter(|pair| matches!(pair[0], "FROM" | "JOIN" | "INTO" | "UPDATE"))
        .map(|pair| pair[1])
        .filter(|name| name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        .map(str::to_owned)
        .collect()
}

fn owner_of(table: &str) -> Option<&'static str> {
    OWNERS
        .iter()
        .find(|(_, tables)| tables.contains(&table))
        .map(|(area, _)| *area)
}

fn source_files() -> Vec<(String, std::path::PathBuf)> {
    crate::sql::workspace_files(|path| path.extension().is_some_and(|ext| ext == "rs"))
        .into_iter()
        .filter(|(relative, _)| relative.starts_with("crates/karmadue/src/"))
        .collect()
}

#[test]
fn sql_lives_only_in_the_store_modules() {
    let files = source_files();
    let mut offenders = Vec::new();
    for (relative, path) in &files {
        if store_area(relative).is_some() || SQL_ALLOWED.contains(&relative.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(path).unwrap();
        if let Some(found) = sql_statement(&text) {
            offenders.push(format!("{relative}: {found}"));
        }
    }
    assert!(files.len() > 50, "the lint read only {} files", files.len());
    assert!(
        offenders.is_empty(),
        "SQL outside the store modules (move it into <area>/store.rs): {offenders:?}"
    );
}

#[test]
fn each_store_names_only_its_own_tables_or_a_named_read_model() {
    let mut offenders = Vec::new();
    let mut stores = BTreeSet::new();
    let mut used_models = BTreeSet::new();
    for (relative, path) in &source_files() {
        let Some(area) = store_area(relative) else {
            continue;
        };
        stores.insert(area.to_owned());
        let text = std::fs::read_to_string(path).unwrap();
        for table in tables_named(&text) {
            match owner_of(&table) {
                None => offenders.push(format!("{relative}: {table} has no owner in OWNERS")),
                Some(owner) if owner == area => {}
                Some(owner) => {
                    if READ_MODELS
                        .iter()
                        .any(|(reader, read, _)| *reader == area && *read == table)
                    {
                        used_models.insert((area.to_owned(), table.clone()));
                    } else {
                        offenders.push(format!("{relative}: {table} belongs to {owner}"));
                    }
                }
            }
        }
    }
    for area in [
        "identity",
        "people",
        "standing",
        "catalog",
        "preflight",
        "outcomes",
        "admission",
        "help",
        "jobs",
        "signals",
        "market",
        "forum",
        "ledger",
    ] {
        assert!(stores.contains(area), "no store module for {area}");
    }
    assert!(
        offenders.is_empty(),
        "a store names another area's table: {offenders:?}"
    );
    // A read model that is gone leaves the list too.
    for (reader, read, _) in READ_MODELS {
        assert!(
            used_models.contains(&((*reader).to_owned(), (*read).to_owned())),
            "READ_MODELS lists {reader} reading {read}, which no longer happens"
        );
    }
}

#[test]
fn every_table_of_the_schema_has_one_owner() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../core/migrations");
    let mut tables = BTreeSet::new();
    // In migration order: a table a later migration drops (0021) is gone.
    let mut paths: Vec<_> = std::fs::read_dir(&root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(path).unwrap();
        let words = words(&text);
        for (at, pair) in words.windows(2).enumerate() {
            if pair == ["CREATE", "TABLE"] {
                let name = match words.get(at + 2) {
                    Some(&"IF") => words.get(at + 5),
                    other => other,
                };
                tables.insert((*name.unwrap()).to_owned());
            }
        }
        for drop in words.windows(3) {
            if let ["DROP", "TABLE", table] = drop {
                tables.remove(*table);
            }
        }
        // A table built under another name and renamed into place (0020) is the new name.
        for rename in words.windows(6) {
            if let ["ALTER", "TABLE", from, "RENAME", "TO", to] = rename {
                tables.remove(*from);
                tables.insert((*to).to_owned());
            }
        }
    }
    assert!(tables.len() > 40, "read only {} tables", tables.len());
    for table in &tables {
        let owners: Vec<&str> = OWNERS
            .iter()
            .filter(|(_, owned)| owned.contains(&table.as_str()))
            .map(|(area, _)| *area)
            .collect();
        assert_eq!(owners.len(), 1, "{table} has owners {owners:?}");
    }
}

#[test]
fn the_lint_sees_each_statement_and_its_tables() {
    for text in [
        "\"SELECT a FROM t WHERE x = ?1\"",
        "\"INSERT INTO t (a) VALUES (?1)\"",
        "\"UPDATE t SET a = ?2 WHERE b = ?1\"",
        "\"DELETE FROM t WHERE a = ?1\"",
        "\"SELECT COUNT(*),\n  MIN(x)\n FROM t\"",
    ] {
        assert!(sql_statement(text).is_some(), "{text}");
    }
    for text in [
        "/// Updates the row; a bounded `DELETE` through a subquery.",
        "/// select the tier from the caller",
        "let from = 3; // SELECT the tier",
    ] {
        assert!(sql_statement(text).is_none(), "{text}");
    }
    assert_eq!(
        tables_named(
            "SELECT a FROM agents a JOIN people p ON x LEFT JOIN stamps s; INSERT INTO nonces; UPDATE passports SET; FROM (SELECT 1)"
        ),
        ["agents", "nonces", "passports", "people", "stamps"]
            .into_iter()
            .map(str::to_owned)
            .collect()
    );
    assert_eq!(
        store_area("crates/karmadue/src/forum/store.rs"),
        Some("forum")
    );
    assert_eq!(
        store_area("crates/karmadue/src/people/store/offers.rs"),
        Some("people")
    );
    assert_eq!(store_area("crates/karmadue/src/forum/write.rs"), None);
}
