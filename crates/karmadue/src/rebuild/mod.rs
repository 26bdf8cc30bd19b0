//! `karmadue ledger rebuild` (DESIGN rule 1: the log is the source of truth): replays the
//! event log, in `seq` order, into a fresh scratch store and compares the projection tables
//! it rebuilds with the live ones, row by row and column by column.
//!
//! Each area that owns a projection applies its own kinds ([`apply`] hands every row to the
//! area's `Replay`, listed in [`REPLAYS`]). [`REBUILT`] names the tables compared and their key;
//! [`NOT_REBUILT`] names every other table with the reason it is not compared: working state
//! that is not a projection of the log, or a projection whose rows hold information the log
//! never recorded (a post's text, a title kept only as its SHA-256, ...).

mod compare;

use std::path::Path;

use kd_core::db::{Connection, DbError, migrate};
use kd_core::eventlog::{EventPayload, EventRow};

use crate::replay::{Replay, ReplayError, payload};

pub use compare::{Difference, compare};

/// A projection table that is rebuilt and compared.
#[derive(Debug, Clone, Copy)]
pub struct Projection {
    /// The table.
    pub table: &'static str,
    /// The columns that identify a row.
    pub key: &'static [&'static str],
    /// The columns compared (the key included).
    pub columns: &'static [&'static str],
}

/// The tables the rebuild fills from the log and compares with the live ones.
pub const REBUILT: &[Projection] = &[
    Projection {
        table: "market_listings",
        key: &["listing_id"],
        // title, description and area are not in the log (text_sha256 is).
        columns: &[
            "listing_id",
            "agent_id",
            "owner_id",
            "operator",
            "kind",
            "category",
            "points",
            "title_sha256",
            "text_sha256",
            "status",
            "created_ms",
            "published_ms",
            "published_by",
            "retracted_ms",
            "reports",
            "event_seq",
        ],
    },
    Projection {
        table: "market_proposals",
        key: &["proposal_id"],
        // The terms are not in the log (their exact hash is).
        columns: &[
            "proposal_id",
            "listing_id",
            "proposer_id",
            "proposer_owner",
            "counterparty_id",
            "counterparty_owner",
            "terms_hash",
            "status",
            "proposer_approved_ms",
            "counterparty_approved_ms",
            "review_requested_ms",
            "decided_ms",
            "decided_by",
            "created_ms",
            "event_seq",
        ],
    },
    Projection {
        table: "market_handoffs",
        key: &["handoff_id"],
        // The payload is not in the log (its SHA-256 is).
        columns: &[
            "handoff_id",
            "from_agent",
            "to_agent",
            "to_owner",
            "proposal_id",
            "circle",
            "kind",
            "payload_sha256",
            "status",
            "requested_ms",
            "decided_ms",
            "decided_by",
            "created_ms",
            "event_seq",
        ],
    },
    Projection {
        table: "agents",
        key: &["agent_id"],
        columns: &[
            "agent_id",
            "handle",
            "name",
            "name_key",
            "platform",
            "public_key",
            "status",
            "owner_id",
            "referral",
            "credential_id",
            "key_source",
            "created_ms",
            "updated_ms",
            "paused_ms",
        ],
    },
    Projection {
        table: "owner_grants",
        key: &["agent_id"],
        columns: &[
            "agent_id",
            "person_id",
            "scopes",
            "spend_usd_per_day",
            "spend_usd_per_action",
            "actions_per_day",
            "granted_ms",
        ],
    },
    Projection {
        table: "stamps",
        key: &["stamp_id"],
        columns: &[
            "stamp_id",
            "agent_id",
            "stamp",
            "issued_ms",
            "expires_ms",
            "issuer",
            "credential_id",
            "detail",
            "event_seq",
        ],
    },
    Projection {
        table: "capabilities",
        key: &["agent_id", "capability"],
        columns: &[
            "agent_id",
            "capability",
            "granted_ms",
            "expires_ms",
            "source",
        ],
    },
    Projection {
        table: "resources",
        key: &["resource_id"],
        columns: &[
            "resource_id",
            "source",
            "locator",
            "title",
            "type",
            "description",
            "owner",
            "license",
            "version",
            "released_ms",
            "released_source",
            "popularity",
            "popularity_label",
            "curated",
            "archived",
            "risky",
            "demo",
            "package_ids",
            "registered_by",
            "record_hash",
            "imported_ms",
            "updated_ms",
        ],
    },
    Projection {
        table: "claims",
        key: &["claim_id"],
        columns: &[
            "claim_id",
            "resource_id",
            "version",
            "kind",
            "value",
            "method",
            "evidence_type",
            "evidence_label",
            "counts_as_verification",
            "source",
            "observed_ms",
            "status",
            "demo",
        ],
    },
    Projection {
        table: "outcome_reports",
        key: &["report_id"],
        columns: &[
            "report_id",
            "receipt_id",
            "resource_id",
            "version_used",
            "result",
            "reason_code",
            "note",
            "note_sha256",
            "agent_id",
            "owner_key",
            "canonical_text",
            "record_hash",
            "signature",
            "weight",
            "flags",
            "reasons",
            "outlier",
            "event_seq",
            "created_ms",
        ],
    },
    Projection {
        table: "verification_disputes",
        key: &["ask_id", "reviewer", "disputed_ms"],
        columns: &["ask_id", "reviewer", "disputed_ms", "event_seq"],
    },
    Projection {
        table: "linkdbots_cards",
        key: &["id"],
        columns: &[
            "id",
            "agent_id",
            "category",
            "tokens_in",
            "tokens_out",
            "cost_micros",
            "turns",
            "tool_calls",
            "wall_ms",
            "model",
            "engine",
            "host",
            "occurred_ms",
            "outcome",
            "is_digest",
            "playbook_refs",
            "provenance",
            "host_key_id",
            "source",
            "source_item",
            "created_ms",
        ],
    },
    Projection {
        table: "peer_signals",
        key: &["signal_id"],
        columns: &[
            "signal_id",
            "kind",
            "author_id",
            "subject_id",
            "counterparty_id",
            "task_ref",
            "outcome",
            "score",
            "work_claim",
            "skill",
            "promised",
            "accepted",
            "evidence_kind",
            "evidence_ref",
            "note",
            "signed_text",
            "signature",
            "counted",
            "reason",
            "weight",
            "points",
            "event_seq",
            "created_ms",
        ],
    },
    Projection {
        table: "forum_acceptances",
        key: &["post_id", "agent_id"],
        columns: &["post_id", "agent_id", "kind", "counted", "created_ms"],
    },
];

/// Every other table, with the reason it is not rebuilt. A test pins that [`REBUILT`] and this
/// list together name every table the migrations create.
pub const NOT_REBUILT: &[(&str, &str)] = &[
    ("events", "the log itself"),
    (
        "oauth_clients",
        "working state: the connector's registered clients (never logged)",
    ),
    (
        "oauth_codes",
        "working state: authorization codes, kept as hashes (never logged)",
    ),
    (
        "oauth_connections",
        "working state: the connector's connections and their revocation (never logged)",
    ),
    (
        "oauth_tokens",
        "working state: access and refresh tokens, kept as hashes (never logged)",
    ),
    (
        "oauth_consents",
        "working state: the consent records of permissions added to a connection (the grant they change is logged as owner.linked)",
    ),
    ("schema_migrations", "the store's own bookkeeping"),
    (
        "log_heads",
        "signed anchors of the log, not events (ledger verify checks them)",
    ),
    (
        "milestones",
        "working state: which first-start steps are done",
    ),
    ("server_keys", "configuration: the pinned public keys"),
    (
        "tlog_hashes",
        "the transparency log's Merkle tree, derived from events by the writer (ledger verify recomputes it)",
    ),
    (
        "tlog_checkpoints",
        "signed checkpoints of the transparency log, not events (ledger verify checks them)",
    ),
    ("nonces", "working state: spent nonces, pruned"),
    (
        "challenges",
        "working state: registration challenges, pruned",
    ),
    ("rate_slots", "working state: the shared per-minute limits"),
    (
        "actions",
        "working state: the rolling 24-hour quota count (one row per write call, not per event)",
    ),
    (
        "passports",
        "the signed passport documents are not in the log (agent.registered and agent.key_rotated name only the passport id)",
    ),
    (
        "people",
        "accounts: email and password hash are never logged (person.signed_up has the id and display name)",
    ),
    ("sessions", "working state: sign-in sessions"),
    (
        "signup_links",
        "working state: sign-ups waiting for their mailed link, kept as the token's SHA-256, never logged",
    ),
    (
        "connect_codes",
        "working state: connect codes, kept as their SHA-256, never logged",
    ),
    ("code_attempts", "working state: the connect-code limits"),
    (
        "claim_requests",
        "working state: the request_claim limits (the address is never logged)",
    ),
    (
        "outbox",
        "working state: the mail queue (addresses are never logged)",
    ),
    (
        "owner_requests",
        "a claim request's person and pitch are not in claim.requested (the email is looked up, never logged)",
    ),
    (
        "findings",
        "the title, text, evidence and claim code are not in finding.filed",
    ),
    (
        "admission_attempts",
        "the scenario text and seed are not in admission.started (only its SHA-256)",
    ),
    (
        "technical_bonuses",
        "not in admission.passed beyond the bonus figure (attempt, probe detail)",
    ),
    ("asks", "the title is kept as its SHA-256 in ask.published"),
    ("invitations", "the note is not in agent.invited"),
    (
        "capability_offers",
        "the title and description are not in capability.offered",
    ),
    (
        "agent_preferences",
        "the document is kept as its SHA-256 in preferences.updated",
    ),
    (
        "receipts",
        "check_before_acting is a read: receipts are issued without an event",
    ),
    (
        "content_reports",
        "the reporter's address is not in content.reported",
    ),
    (
        "watchlist_items",
        "the targets are kept as the list's SHA-256 in watchlist.set",
    ),
    (
        "watchlists",
        "the daily check's last_checked_day is not logged when nothing changed",
    ),
    (
        "verification_asks",
        "the criteria and reward note are kept as SHA-256 / a flag in verification.asked",
    ),
    (
        "jobs",
        "a job's title and detail are kept as SHA-256 in job.requested",
    ),
    (
        "disputes",
        "a dispute's reason and details are kept as SHA-256 in dispute.opened",
    ),
    (
        "forum_threads",
        "the title is not in forum.thread_created (only the text's SHA-256)",
    ),
    (
        "forum_posts",
        "the body is not in forum.*_created (only its SHA-256 and length)",
    ),
    (
        "forum_reports",
        "the reason is kept as its SHA-256 in forum.post_reported",
    ),
    (
        "ronin_events",
        "the signed Nostr event is not in ronin.event (only its id, kind and author)",
    ),
    ("ronin_keys", "follows ronin_events"),
    ("ronin_profiles", "follows ronin_events"),
    ("ronin_listings", "follows ronin_events"),
    (
        "ronin_tasks",
        "follows ronin_events (the task chain's signed events)",
    ),
    ("ronin_task_events", "follows ronin_events"),
    (
        "ronin_successors",
        "follows ronin_events (SUCCESSOR events)",
    ),
    ("ronin_claims", "follows ronin_events (CLAIM events)"),
    (
        "ronin_certifications",
        "follows ronin_events (CERTIFY events)",
    ),
    (
        "ronin_auth_seen",
        "working state: NIP-98 auth events taken by me, kept two minutes",
    ),
    (
        "ronin_artifacts",
        "uploads are not events: the metadata of the files kept on disk (decision 289)",
    ),
    (
        "ronin_bench_runs",
        "the tasks, answers and seed are not in ronin.bench_scored (only the score), and a start is not logged (decision 356)",
    ),
    (
        "ronin_callbacks",
        "the delivery queue of callbacks (tries, due times, what each receiver answered) is not an event (decision 361)",
    ),
    (
        "ronin_notify",
        "the e-mail addresses on file are never served nor logged, so no event holds them (decision 364)",
    ),
    (
        "linkdbots_pairing_codes",
        "codes are credentials, kept only as hashes and never logged (decision 345)",
    ),
    (
        "linkdbots_agents",
        "the key hash and the owner are not in linkdbots.agent_paired (decision 345)",
    ),
    (
        "linkdbots_host_keys",
        "Linkdbots logs pairings, cards and published texts only (decision 345)",
    ),
    (
        "linkdbots_budget_use",
        "working state: daily counters, never facts",
    ),
    (
        "linkdbots_board_versions",
        "working state: cards counted per category, the leaderboard cache's key (decision 346)",
    ),
    (
        "linkdbots_proposals",
        "a proposal's text is not logged; linkdbots.text_published names its hash (decision 345)",
    ),
    (
        "linkdbots_reactions",
        "Linkdbots logs pairings, cards and published texts only (decision 345)",
    ),
    (
        "linkdbots_follows",
        "Linkdbots logs pairings, cards and published texts only (decision 345)",
    ),
    (
        "linkdbots_budget_limits",
        "Linkdbots logs pairings, cards and published texts only (decision 345)",
    ),
    (
        "linkdbots_orgs",
        "Linkdbots logs pairings, cards and published texts only (decision 345)",
    ),
    (
        "linkdbots_teams",
        "Linkdbots logs pairings, cards and published texts only (decision 345)",
    ),
    (
        "linkdbots_team_members",
        "Linkdbots logs pairings, cards and published texts only (decision 345)",
    ),
    (
        "linkdbots_connects",
        "working state: a roster waiting 24 hours for its approval",
    ),
    (
        "linkdbots_category_proposals",
        "Linkdbots writes no log events yet (docs/decisions.md 205)",
    ),
];

/// Why a rebuild stopped.
#[derive(Debug, thiserror::Error)]
pub enum RebuildError {
    /// A database failed.
    #[error("database: {0}")]
    Db(#[from] DbError),
    /// The store failed.
    #[error("store: {0}")]
    Store(#[from] kd_core::store::StoreError),
    /// The scratch store could not be made.
    #[error("scratch store: {0}")]
    Scratch(String),
    /// A row did not replay in its area.
    #[error("replaying {area}'s projections")]
    Replay {
        /// The area whose replay failed.
        area: &'static str,
        /// Why.
        #[source]
        source: ReplayError,
    },
    /// Linkdbots' card row did not replay.
    #[error("replaying Linkdbots' cards")]
    Linkdbots(#[from] ReplayError),
}

/// Every area's replay, in the order a row is handed to them (identity's agents before the
/// grants and stamps that name them).
pub const REPLAYS: &[&dyn Replay] = &[
    &crate::identity::replay::IdentityReplay,
    &crate::people::replay::PeopleReplay,
    &crate::standing::replay::StandingReplay,
    &crate::catalog::replay::CatalogReplay,
    &crate::outcomes::replay::OutcomesReplay,
    &crate::help::replay::HelpReplay,
    &crate::signals::replay::SignalsReplay,
    &crate::market::replay::MarketReplay,
    &crate::forum::replay::ForumReplay,
];

/// Applies one row of the log to the projections of `conn` (the scratch store). Kinds no
/// rebuilt table follows are skipped.
///
/// # Errors
/// [`RebuildError`] when the payload does not fit its kind or a statement fails.
pub fn apply(conn: &Connection, row: &EventRow) -> Result<(), RebuildError> {
    for area in REPLAYS {
        area.apply(conn, row)
            .map_err(|source| RebuildError::Replay {
                area: area.area(),
                source,
            })?;
    }
    if row.kind == <kd_linkdbots::events::CardFiled as EventPayload>::KIND {
        let card: kd_linkdbots::events::CardFiled = payload(row)?;
        kd_linkdbots::store::insert_card(conn, &card.0)?;
    }
    Ok(())
}

/// A fresh SQLite store at `path`, migrated, for the rebuilt projections.
///
/// # Errors
/// [`RebuildError::Scratch`] when it cannot be made.
pub fn scratch(path: &Path) -> Result<Connection, RebuildError> {
    let conn =
        Connection::open_sqlite(path).map_err(|error| RebuildError::Scratch(error.to_string()))?;
    migrate::migrate(&conn, 0).map_err(|error| RebuildError::Scratch(error.to_string()))?;
    Ok(conn)
}

/// Replays every row of `live`'s log into `scratch` in `seq` order, in one transaction,
/// calling `progress` with each row's seq.
///
/// # Errors
/// [`RebuildError`] on the first row that does not replay.
pub fn replay(
    live: &Connection,
    scratch: &Connection,
    progress: &mut dyn FnMut(i64),
) -> Result<i64, RebuildError> {
    scratch.execute_batch("BEGIN")?;
    let mut after = 0;
    let mut rows = 0;
    loop {
        let batch = kd_core::eventlog::rows_after(live, after, 1000)?;
        let Some(last) = batch.last() else { break };
        after = last.seq;
        for row in &batch {
            apply(scratch, row)?;
            progress(row.seq);
            rows += 1;
        }
    }
    scratch.execute_batch("COMMIT")?;
    Ok(rows)
}

/// Rebuilds into a scratch store in `dir` and compares: the differences, none when the live
/// projections are what the log says.
///
/// # Errors
/// [`RebuildError`] when the replay or a read fails.
pub fn rebuild(
    live: &Connection,
    dir: &Path,
    progress: &mut dyn FnMut(i64),
) -> Result<Vec<Difference>, RebuildError> {
    let scratch = scratch(&dir.join("rebuild.sqlite"))?;
    replay(live, &scratch, progress)?;
    let mut differences = Vec::new();
    for projection in REBUILT {
        differences.extend(compare(live, &scratch, projection)?);
    }
    Ok(differences)
}

#[cfg(test)]
mod tests;
