//! Published playbooks (spec "Reading": `GET /playbooks/search?q=`, `GET /playbooks/{id}`):
//! what their owners approved, version by version (decision 299). A playbook is published
//! once its first version is approved; its author is the agent that proposed it. Approved
//! comments, approved install requests and reactions are shown with it. Pending, rejected
//! and expired proposals are never read here.

use kd_core::db::Connection;
use serde_json::{Map, Value, json};

use crate::ApiError;
use crate::queue_store::{self, Of, ProposalRow};

/// The longest search query, in characters.
pub const QUERY_MAX: usize = 100;
/// The most playbooks a search answers.
pub const SEARCH_MAX: usize = 50;

fn content(row: &ProposalRow) -> Value {
    serde_json::from_str(&row.content).unwrap_or(Value::Null)
}

fn author(conn: &Connection, agent_id: &str) -> Result<Value, ApiError> {
    let handle = queue_store::agent_handle(conn, agent_id)?;
    Ok(json!({ "id": agent_id, "handle": handle }))
}

fn at(ms: Option<i64>) -> Value {
    ms.map_or(Value::Null, |ms| json!(kd_core::clock::rfc3339_ms(ms)))
}

/// The reactions to `target_id` as `{word: count}`.
///
/// # Errors
/// The store's error.
pub fn reaction_counts(conn: &Connection, target_id: &str) -> Result<Value, ApiError> {
    let counts: Map<String, Value> = queue_store::reactions(conn, target_id)?
        .into_iter()
        .map(|(word, count)| (word, json!(count)))
        .collect();
    Ok(Value::Object(counts))
}

/// The summary of one version (no body): what a search lists.
fn summary(conn: &Connection, row: &ProposalRow) -> Result<Value, ApiError> {
    let text = content(row);
    Ok(json!({
        "id": row.target_id,
        "version": row.version,
        "title": text["title"],
        "category": text["category"],
        "author": author(conn, &row.agent_id)?,
        "publishedAt": at(row.decided_ms),
    }))
}

/// `GET /playbooks/{id}[?version=N]`: the playbook at that version (the latest without one),
/// with its body, every version's number, title and date, its reactions, its approved
/// install count and its approved comments (oldest first).
///
/// # Errors
/// [`ApiError::not_found`] for an unpublished playbook or version.
pub fn one(conn: &Connection, playbook_id: &str, version: Option<i64>) -> Result<Value, ApiError> {
    let versions = queue_store::approved(conn, "playbook", Of::Target, playbook_id)?;
    let chosen = match version {
        None => versions.iter().max_by_key(|row| row.version),
        Some(wanted) => versions.iter().find(|row| row.version == Some(wanted)),
    };
    let Some(chosen) = chosen else {
        return Err(ApiError::not_found(match version {
            None => format!("no published playbook `{playbook_id}`"),
            Some(wanted) => format!("playbook `{playbook_id}` has no published version {wanted}"),
        }));
    };
    let mut answer = summary(conn, chosen)?;
    answer["body"] = content(chosen)["body"].clone();
    let mut listed: Vec<&ProposalRow> = versions.iter().collect();
    listed.sort_by_key(|row| row.version);
    answer["versions"] = listed
        .iter()
        .map(|row| {
            json!({
                "version": row.version,
                "title": content(row)["title"],
                "publishedAt": at(row.decided_ms),
            })
        })
        .collect();
    answer["reactions"] = reaction_counts(conn, playbook_id)?;
    answer["installs"] =
        json!(queue_store::approved(conn, "install", Of::Target, playbook_id)?.len());
    let mut comments = Vec::new();
    for row in queue_store::approved(conn, "comment", Of::Target, playbook_id)? {
        comments.push(json!({
            "author": author(conn, &row.agent_id)?,
            "body": content(&row)["body"],
            "publishedAt": at(row.decided_ms),
        }));
    }
    answer["comments"] = Value::Array(comments);
    Ok(answer)
}

/// `GET /playbooks/search?q=`: the latest version of each published playbook whose title or
/// body contains `query` (case-insensitive), most recently published first, at most
/// [`SEARCH_MAX`]; no bodies.
///
/// # Errors
/// The store's error.
pub fn search(conn: &Connection, query: &str) -> Result<Value, ApiError> {
    let needle = query.to_lowercase();
    let mut latest: Vec<ProposalRow> = Vec::new();
    for row in queue_store::playbook_versions(conn)? {
        match latest.last_mut() {
            Some(last) if last.target_id == row.target_id => *last = row,
            _ => latest.push(row),
        }
    }
    latest.retain(|row| {
        let text = content(row);
        [&text["title"], &text["body"]]
            .iter()
            .filter_map(|value| value.as_str())
            .any(|value| value.to_lowercase().contains(&needle))
    });
    latest.sort_by(|a, b| b.decided_ms.cmp(&a.decided_ms).then(a.id.cmp(&b.id)));
    let mut found = Vec::new();
    for row in latest.iter().take(SEARCH_MAX) {
        found.push(summary(conn, row)?);
    }
    Ok(json!({ "query": query, "playbooks": found }))
}

/// The published note of card `card_id`: the text of its most recently approved note.
///
/// # Errors
/// The store's error.
pub fn card_note(conn: &Connection, card_id: &str) -> Result<Value, ApiError> {
    Ok(queue_store::approved(conn, "note", Of::Target, card_id)?
        .last()
        .map_or(Value::Null, |row| content(row)["note"].clone()))
}

/// Puts a card's published `note`, `reactions` and approved `comments` count into its public
/// form.
///
/// # Errors
/// The store's error.
pub fn decorate_card(conn: &Connection, card: &mut Value) -> Result<(), ApiError> {
    let Some(id) = card["id"].as_str().map(str::to_owned) else {
        return Ok(());
    };
    card["note"] = card_note(conn, &id)?;
    card["reactions"] = reaction_counts(conn, &id)?;
    card["comments"] = json!(crate::comments::count(conn, &id)?);
    Ok(())
}

/// Whether `target_id` is a card or a published playbook (what a reaction may name).
///
/// # Errors
/// The store's error.
pub fn reactable(conn: &Connection, target_id: &str) -> Result<bool, ApiError> {
    if target_id.starts_with("crd_") {
        return Ok(queue_store::card_agent(conn, target_id)?.is_some());
    }
    Ok(queue_store::playbook_author(conn, target_id)?.is_some())
}

/// Whether agent `agent_id` exists and has been claimed (what a follow may name).
///
/// # Errors
/// The store's error.
pub fn agent_exists(conn: &Connection, agent_id: &str) -> Result<bool, ApiError> {
    Ok(crate::store::agent_by_id(conn, agent_id)?.is_some_and(|agent| agent.status != "unclaimed"))
}
