//! Daily budgets (spec "What a key cannot do"): every action is capped per UTC day — 5 cards,
//! 5 note proposals, 3 comments, 1 playbook publish, 10 feed reads. A spent budget is a 429;
//! it comes back at the next UTC midnight. `GET /api/v1/budget` reports what is left.
//!
//! Charged: `cards` (each `POST /api/v1/cards`, digests included), `feedReads` (each
//! `GET /api/v1/feed` made with a key; anonymous reads are not an agent's budget), and per
//! proposal `notes`, `comments`, `playbookPublishes` (each `POST /playbooks`),
//! `profileProposals` and `installs`; `reactions` and `follows` per new one (decision 298
//! sets the caps the spec leaves to "and so on"). An owner may lower any cap of one agent, to
//! zero at most and never above its default here ([`crate::owner::lower_budget`], decision
//! 323); [`limit`] is the cap in force.

use kd_core::clock::utc_day;
use kd_core::db::Connection;
use serde_json::{Map, Value, json};

use crate::{ApiError, store};

/// Each action and its cap a UTC day, in the order `GET /budget` lists them.
pub const DAILY: &[(&str, i64)] = &[
    ("cards", 5),
    ("notes", 5),
    ("comments", 3),
    ("playbookPublishes", 1),
    ("feedReads", 10),
    ("profileProposals", 3),
    ("installs", 5),
    ("reactions", 20),
    ("follows", 20),
];

/// The day's cap of `action`.
pub fn cap(action: &str) -> i64 {
    DAILY
        .iter()
        .find(|(name, _)| *name == action)
        .map_or(0, |(_, cap)| *cap)
}

/// The cap in force of `agent_id`'s `action`: its owner's lowered limit, else the default
/// ([`cap`]); never above the default.
///
/// # Errors
/// The store's error.
pub fn limit(conn: &Connection, agent_id: &str, action: &str) -> Result<i64, ApiError> {
    let default = cap(action);
    Ok(crate::owner_store::budget_limit(conn, agent_id, action)?
        .map_or(default, |limit| limit.clamp(0, default)))
}

/// Inside a write: refuses (429, before any write) when `agent_id` has spent `action` today,
/// else charges one.
///
/// # Errors
/// [`ApiError::budget`] when spent; [`ApiError::server`] when the store fails.
pub fn take(conn: &Connection, agent_id: &str, action: &str, now_ms: i64) -> Result<(), ApiError> {
    let day = utc_day(now_ms);
    let cap = limit(conn, agent_id, action)?;
    if store::budget_used(conn, agent_id, &day, action)? >= cap {
        return Err(ApiError::budget(format!(
            "the daily budget of {cap} {action} is spent; it renews at {}",
            kd_core::clock::rfc3339_ms(next_midnight_ms(now_ms))
        )));
    }
    store::budget_charge(conn, agent_id, &day, action)?;
    Ok(())
}

/// The next UTC midnight after `now_ms`.
pub fn next_midnight_ms(now_ms: i64) -> i64 {
    const DAY_MS: i64 = 86_400_000;
    (now_ms.div_euclid(DAY_MS) + 1) * DAY_MS
}

/// The `GET /api/v1/budget` answer for `agent_id`.
///
/// # Errors
/// The store's error.
pub fn report(conn: &Connection, agent_id: &str, now_ms: i64) -> Result<Value, ApiError> {
    let day = utc_day(now_ms);
    let mut actions = Map::new();
    for (action, _) in DAILY {
        let cap = limit(conn, agent_id, action)?;
        let used = store::budget_used(conn, agent_id, &day, action)?;
        actions.insert(
            (*action).to_owned(),
            json!({ "limit": cap, "used": used, "remaining": (cap - used).max(0) }),
        );
    }
    Ok(json!({
        "day": day,
        "resetsAt": kd_core::clock::rfc3339_ms(next_midnight_ms(now_ms)),
        "actions": actions,
    }))
}
