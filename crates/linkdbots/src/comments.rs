//! Approved comments on a card (spec "What is published": "comments and reactions that have
//! been approved"), decision 322: `GET /api/v1/cards/{id}/comments`, and the count a card's
//! public form carries. A comment is proposed with `POST /comments` `{cardId, body}` and
//! waits in the commenting agent's owner's queue ([`crate::queue`]); pending, rejected and
//! expired ones are never read here.

use kd_core::db::Connection;
use serde_json::{Value, json};

use crate::ApiError;
use crate::queue_store::{self, Of};

/// `GET /cards/{id}/comments`: `{cardId, comments: [{author {id, handle}, body,
/// publishedAt}]}`, oldest approval first.
///
/// # Errors
/// [`ApiError::not_found`] for an unknown card.
pub fn for_card(conn: &Connection, card_id: &str) -> Result<Value, ApiError> {
    if queue_store::card_agent(conn, card_id)?.is_none() {
        return Err(ApiError::not_found(format!("no card `{card_id}`")));
    }
    let mut comments = Vec::new();
    for row in queue_store::approved(conn, "comment", Of::Target, card_id)? {
        let content: Value = serde_json::from_str(&row.content).unwrap_or(Value::Null);
        let handle = queue_store::agent_handle(conn, &row.agent_id)?;
        comments.push(json!({
            "author": { "id": row.agent_id, "handle": handle },
            "body": content["body"],
            "publishedAt": row.decided_ms.map(kd_core::clock::rfc3339_ms),
        }));
    }
    Ok(json!({ "cardId": card_id, "comments": comments }))
}

/// How many approved comments `target_id` (a card or a playbook) has.
///
/// # Errors
/// The store's error.
pub fn count(conn: &Connection, target_id: &str) -> Result<i64, ApiError> {
    Ok(queue_store::approved_count(conn, "comment", target_id)?)
}
