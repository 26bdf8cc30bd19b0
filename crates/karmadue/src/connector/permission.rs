//! Adding one permission to a live connection (permissions document "Connector permissions":
//! "Nothing is ever added to an existing connection without the owner approving it on a
//! consent screen ... To add one permission, the owner opens
//! /oauth/add-permission?agent=<id>&scope=<scope>"). The page is `http::pages::add_permission`;
//! this holds the rule: the signed-in person must own the hosted agent's live connection, the
//! scope must be one a connected app may hold, and the connection's scopes grow only by an
//! update that names the consent record written in the same transaction
//! ([`store::add_scope`]). The hosted agent's owner link is granted again with the new scopes
//! (`owner.linked`), so its `verify_agent` and its tools follow at once, and its signed
//! passport is re-issued to state them (`agent.passport_reissued`, docs/decisions.md 405).

use kd_core::random::random_id;
use kd_kernel::Kernel;

use super::{ACTIONS_PER_DAY, BASE_SCOPES, ConnectorError, SCOPES, store};

/// `/oauth/add-permission`.
pub const ADD_PERMISSION_PATH: &str = "/oauth/add-permission";

/// What the consent screen for one added permission shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PermissionAsk {
    /// The connection that would get it.
    pub connection_id: String,
    /// The app's registered name (its own words).
    pub app: String,
    /// The scope asked for.
    pub scope: String,
    /// Whether the connection already holds it.
    pub held: bool,
}

/// The scopes a connection may be given later: the switches of the consent screen.
pub fn addable(scope: &str) -> bool {
    SCOPES.contains(&scope) && !BASE_SCOPES.contains(&scope)
}

/// Where a connected app's person approves `scope` for `agent_id`.
pub fn approve_url(issuer: &str, agent_id: &str, scope: &str) -> String {
    format!("{issuer}{ADD_PERMISSION_PATH}?agent={agent_id}&scope={scope}")
}

/// A connected app's `next_unlock` (permissions document: connected apps "can do only what
/// their owner approved ... Their next_unlock names the next permission to ask the owner
/// for"; docs/decisions.md 428): `{permission, approve_url, how_to_get, not_yet_approved}`,
/// the first scope the grant lacks that a person may add, in the consent screen's order, or
/// null when the grant holds them all. It never names the admission test: a hosted agent earns
/// no stamps.
pub fn next_unlock(issuer: &str, grant: &super::Grant) -> serde_json::Value {
    next_unlock_for(issuer, &grant.agent_id, &grant.scopes)
}

/// [`next_unlock`] of the hosted agent `agent_id` whose live connection holds `scopes`
/// (get_standing's `next_unlock` for a connected app's agent).
pub fn next_unlock_for(issuer: &str, agent_id: &str, scopes: &[String]) -> serde_json::Value {
    let missing: Vec<&str> = SCOPES
        .into_iter()
        .filter(|scope| addable(scope) && !scopes.iter().any(|held| held == scope))
        .collect();
    let Some(first) = missing.first() else {
        return serde_json::Value::Null;
    };
    serde_json::json!({
        "permission": first,
        "approve_url": approve_url(issuer, agent_id, first),
        "how_to_get": [
            "Give approve_url to your person: they approve this one permission on its own screen, and the connection keeps everything else.",
            "A connected app takes no admission test and earns no stamps: what it may do is what its person approved.",
        ],
        "not_yet_approved": missing,
    })
}

/// The ask for `person_id` to add `scope` to `agent_id`'s live connection.
///
/// # Errors
/// `invalid_scope` (not one a connected app may be given), `invalid_request` (no live
/// connection of this person writes as the agent), a store failure.
pub async fn ask(
    hub: &Kernel,
    person_id: &str,
    agent_id: &str,
    scope: &str,
) -> Result<PermissionAsk, ConnectorError> {
    if !addable(scope) {
        return Err(not_addable(scope));
    }
    let (person_id, agent_id, scope) =
        (person_id.to_owned(), agent_id.to_owned(), scope.to_owned());
    hub.store
        .read(move |conn| -> Result<PermissionAsk, ConnectorError> {
            let (connection_id, app, held) =
                store::persons_connection_of(conn, &agent_id, &person_id)?
                    .ok_or_else(no_connection)?;
            let held = held.split_whitespace().any(|held| held == scope);
            Ok(PermissionAsk {
                connection_id,
                app,
                scope,
                held,
            })
        })
        .await
}

/// The person's approval: adds `scope` to the live connection `agent_id` writes through,
/// with its consent record, and grants the hosted agent's owner link again. Answers the
/// connection's scopes now. A scope already held changes nothing.
///
/// # Errors
/// As [`ask`]; a store failure.
pub async fn add(
    hub: &Kernel,
    person_id: &str,
    agent_id: &str,
    scope: &str,
) -> Result<Vec<String>, ConnectorError> {
    if !addable(scope) {
        return Err(not_addable(scope));
    }
    let consent_id = random_id::<12>(hub.random.as_ref(), "kdcs_");
    let credential_id = random_id::<12>(hub.random.as_ref(), "kdp_");
    let key = hub.passport_key.clone();
    let (person_id, agent_id, scope) =
        (person_id.to_owned(), agent_id.to_owned(), scope.to_owned());
    hub.store
        .write(move |txn| -> Result<Vec<String>, ConnectorError> {
            let (connection_id, _, held) =
                store::persons_connection_of(txn.conn(), &agent_id, &person_id)?
                    .ok_or_else(no_connection)?;
            let held: Vec<&str> = held.split_whitespace().collect();
            if held.contains(&scope.as_str()) {
                return Ok(held.iter().map(|scope| (*scope).to_owned()).collect());
            }
            let scopes: Vec<&str> = SCOPES
                .iter()
                .copied()
                .filter(|known| held.contains(known) || *known == scope)
                .collect();
            store::insert_consent(
                txn.conn(),
                &consent_id,
                &connection_id,
                &person_id,
                &scope,
                txn.now_ms(),
            )?;
            if !store::add_scope(
                txn.conn(),
                &connection_id,
                &scopes.join(" "),
                &consent_id,
                &scope,
            )? {
                return Err(ConnectorError::InvalidRequest(
                    "The connection changed meanwhile; nothing was added.".into(),
                ));
            }
            crate::people::link(
                txn,
                &agent_id,
                &person_id,
                &connection_id,
                &scopes,
                ACTIONS_PER_DAY,
            )?;
            // The signed passport states the grant in force (docs/decisions.md 405).
            let grant = crate::identity::hosted::GrantLines {
                connection_id: &connection_id,
                scopes: &scopes,
                actions_per_day: ACTIONS_PER_DAY,
            };
            let actor = format!("person:{person_id}");
            crate::identity::hosted::reissue(txn, &key, &actor, &agent_id, &credential_id, grant)?;
            Ok(scopes.iter().map(|scope| (*scope).to_owned()).collect())
        })
        .await?
}

fn not_addable(scope: &str) -> ConnectorError {
    ConnectorError::InvalidScope(format!(
        "{scope} cannot be given to a connected app here (kd.outcomes.write, kd.listings.write and kd.proposals.write can)."
    ))
}

fn no_connection() -> ConnectorError {
    ConnectorError::InvalidRequest(
        "None of your connected apps writes as this agent. Connect the app first, from the app itself.".into(),
    )
}
