//! Hosted connector agents (spec "Using KarmaDue from Claude or ChatGPT (OAuth connector)",
//! "Identity" and "Passport"): each (person, app) pair gets one agent of type
//! `hosted_connector`, labelled like "Maya's Claude", with no key. A connected app writes as
//! it by its access token and the approved scopes instead of a kd-mcp-v1 signature; every
//! event it writes records `auth_method: oauth` (`kd_core::eventlog::AUTH_METHOD_KEY`).
//!
//! The agent is an `agents` row whose `key_source` is [`KEY_SOURCE`] and whose `public_key`
//! is empty, projected from `agent.connected` (docs/decisions.md 316). Its passport is a
//! kd-connector-passport-v1 text stating the grant in force, re-issued whenever the grant
//! changes ([`reissue`], `agent.passport_reissued`; docs/decisions.md 405); the passport says
//! who vouches for it ([`note`]) and its passport score is capped at [`PASSPORT_SCORE_CAP`]
//! until verified.

use kd_core::keys::ServerKey;
use kd_core::store::WriteTxn;
use kd_kernel::error::ToolError;
use kd_protocol::ids::AgentId;

use super::{passport, store};
use crate::identity::events::{AgentConnected, PassportReissued};
pub use passport::GrantLines;

/// `agents.key_source` of a hosted connector agent.
pub const KEY_SOURCE: &str = "oauth";
/// The agent type verify_agent and the passport show.
pub const AGENT_TYPE: &str = "hosted_connector";
/// The passport score (OVR, 0–99) of a hosted agent is at most this until it is verified.
pub const PASSPORT_SCORE_CAP: u8 = 60;
/// Longest label, in characters (the person's name is shortened to fit).
const MAX_LABEL_CHARS: usize = 80;

/// Whether an agent row with this `key_source` is a hosted connector agent.
pub fn is_hosted(key_source: &str) -> bool {
    key_source == KEY_SOURCE
}

/// The label of the hosted agent of `person_name` and `app`: "Maya's Claude".
pub fn label(person_name: &str, app: &str) -> String {
    let app: String = app.trim().chars().take(60).collect();
    let room = MAX_LABEL_CHARS.saturating_sub(app.chars().count() + 3);
    let person: String = person_name.trim().chars().take(room).collect();
    if person.is_empty() {
        app
    } else {
        format!("{person}'s {app}")
    }
}

/// What the passport of a hosted agent says of it (spec "Passport").
pub fn note(app: &str) -> String {
    format!(
        "Connected through {app}. Identity is vouched for by its owner's KarmaDue sign-in, not its own key."
    )
}

/// An agent's passport as callers see it ([`passport::Passport::to_json`]); a hosted agent's
/// also says who vouches for it (`agent_type`, `note`, no key, `score_cap`).
pub fn passport_json(
    passport: &passport::Passport,
    key: &ServerKey,
    agent: &store::AgentRow,
) -> serde_json::Value {
    let mut json = passport.to_json(key);
    if is_hosted(&agent.key_source) {
        json["agent_type"] = AGENT_TYPE.into();
        json["public_key"] = serde_json::Value::Null;
        json["note"] = note(&agent.platform).into();
        json["score_cap"] = PASSPORT_SCORE_CAP.into();
    }
    json
}

/// The ids of a new hosted agent, drawn before the write.
#[derive(Debug, Clone)]
pub struct NewHosted {
    /// The agent id.
    pub agent_id: AgentId,
    /// Its `kdp_` passport id.
    pub credential_id: String,
}

/// Who the hosted agent is for.
#[derive(Debug, Clone, Copy)]
pub struct HostedFor<'a> {
    /// The person who approved the app.
    pub person_id: &'a str,
    /// The person's display name.
    pub person_name: &'a str,
    /// The OAuth client.
    pub client_id: &'a str,
    /// The app's registered name.
    pub app: &'a str,
}

/// Whether `agent_id` is an active hosted agent owned by `person_id` (a reconnection of the
/// same app keeps it; a revoked or released one is replaced).
///
/// # Errors
/// `internal` when the store fails.
pub fn still_theirs(
    conn: &kd_core::db::Connection,
    agent_id: &str,
    person_id: &str,
) -> Result<bool, ToolError> {
    Ok(store::agent_by_id(conn, agent_id)?.is_some_and(|agent| {
        agent.status == "active"
            && is_hosted(&agent.key_source)
            && agent.owner_id.as_deref() == Some(person_id)
    }))
}

/// Makes the hosted agent of `whom` in the caller's write transaction: its `agents` row, a
/// Listed connector passport stating `grant`, and `agent.connected` (by the person). The owner link is the people area's
/// (`people::link`).
///
/// # Errors
/// `internal` when the store fails.
pub fn create(
    txn: &mut WriteTxn<'_>,
    key: &ServerKey,
    ids: &NewHosted,
    whom: HostedFor<'_>,
    grant: GrantLines<'_>,
) -> Result<String, ToolError> {
    let id = ids.agent_id.to_string();
    let handle = ids.agent_id.handle().to_string();
    let name = label(whom.person_name, whom.app);
    let now = txn.now_ms();
    store::insert_hosted_agent(
        txn.conn(),
        &id,
        &handle,
        &name,
        whom.app,
        &ids.credential_id,
        now,
    )?;
    passport::issue_connector(
        txn.conn(),
        key,
        &ids.credential_id,
        &id,
        &handle,
        grant,
        now,
    )?;
    txn.record(
        format!("person:{}", whom.person_id),
        id.clone(),
        &AgentConnected {
            agent_id: id.clone(),
            handle,
            name,
            platform: whom.app.to_owned(),
            credential_id: ids.credential_id.clone(),
            person_id: whom.person_id.to_owned(),
            client_id: whom.client_id.to_owned(),
        },
    )?;
    Ok(id)
}

/// Re-issues the hosted agent's passport when `grant` differs from what its current one
/// states, in the caller's write transaction: the old passport is `superseded`, a new Listed
/// kd-connector-passport-v1 (`credential_id`, drawn before the write) becomes the agent's,
/// and `agent.passport_reissued` is recorded by `actor`. Answers the passport id in force.
///
/// # Errors
/// `not_found` when the agent is gone; `internal` when the store fails.
pub fn reissue(
    txn: &mut WriteTxn<'_>,
    key: &ServerKey,
    actor: &str,
    agent_id: &str,
    credential_id: &str,
    grant: GrantLines<'_>,
) -> Result<String, ToolError> {
    let agent = store::agent_by_id(txn.conn(), agent_id)?
        .ok_or_else(|| ToolError::not_found("agent_id", "No agent has this agent_id."))?;
    let current = passport::load(txn.conn(), &agent.credential_id)?;
    // Lines 5-8 of a connector passport: connection, scopes, $0, actions a day.
    let (scopes, actions) = (grant.scopes.join(" "), grant.actions_per_day.to_string());
    let wanted = [grant.connection_id, scopes.as_str(), "0", actions.as_str()];
    let states = |text: &str| {
        let lines: Vec<&str> = text.split('\n').collect();
        lines.len() == 9 && lines[0] == passport::CONNECTOR_RECIPE && lines[4..8] == wanted
    };
    if current
        .as_ref()
        .is_some_and(|held| held.state == "listed" && states(&held.signed_text))
    {
        return Ok(agent.credential_id);
    }
    let now = txn.now_ms();
    passport::end(txn.conn(), &agent.credential_id, "superseded", now)?;
    passport::issue_connector(
        txn.conn(),
        key,
        credential_id,
        agent_id,
        &agent.handle,
        grant,
        now,
    )?;
    store::set_credential(txn.conn(), agent_id, credential_id, now)?;
    txn.record(
        actor.to_owned(),
        agent_id.to_owned(),
        &PassportReissued {
            credential_id: credential_id.to_owned(),
            previous_credential_id: agent.credential_id,
            connection_id: grant.connection_id.to_owned(),
            scopes: grant
                .scopes
                .iter()
                .map(|scope| (*scope).to_owned())
                .collect(),
        },
    )?;
    Ok(credential_id.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_label_is_the_persons_app() {
        assert_eq!(label("Maya", "Claude"), "Maya's Claude");
        assert_eq!(label("  ", "Claude"), "Claude");
        let long = "M".repeat(200);
        assert_eq!(label(&long, "Claude").chars().count(), MAX_LABEL_CHARS);
        assert!(label(&long, "Claude").ends_with("'s Claude"));
    }
}
