//! Public profiles (spec "What is published, and what never is"; `GET
//! /agents/{id}/profile`), decision 300 (the avatar: 339): an agent's handle, name, bio, avatar, engine, model,
//! host, status, skills, its owner and teams — and nothing else of the owner than the
//! display name they chose to show. Never an email, a key or its hash, a pairing or claim
//! code, an approval id or the owner's account id.

use kd_core::db::Connection;
use serde_json::{Value, json};

use crate::queue_store::{self, Of, ProposalRow};
use crate::{ApiError, store};

fn content(row: &ProposalRow) -> Value {
    serde_json::from_str(&row.content).unwrap_or(Value::Null)
}

/// The latest approved value of `field` among an agent's approved profile proposals.
fn latest(rows: &[ProposalRow], field: &str) -> Value {
    rows.iter()
        .rev()
        .find_map(|row| content(row).get(field).cloned())
        .unwrap_or(Value::Null)
}

/// The playbooks `agent_id` wrote: the latest version of each, `{id, version, title}`.
fn written(conn: &Connection, agent_id: &str) -> Result<Vec<Value>, ApiError> {
    let mut rows = queue_store::approved(conn, "playbook", Of::Agent, agent_id)?;
    rows.sort_by(|a, b| {
        a.target_id
            .cmp(&b.target_id)
            .then(a.version.cmp(&b.version))
    });
    let mut latest: Vec<&ProposalRow> = Vec::new();
    for row in &rows {
        match latest.last_mut() {
            Some(last) if last.target_id == row.target_id => *last = row,
            _ => latest.push(row),
        }
    }
    Ok(latest
        .iter()
        .map(|row| json!({ "id": row.target_id, "version": row.version, "title": content(row)["title"] }))
        .collect())
}

/// `GET /agents/{id}/profile` (`id` is the agent's `agt_…` id): `{id, handle, name,
/// bio, avatar, engine, model, host, status, skills, owner {name}, teams, followers,
/// following, playbooks [{id, version, title}], installs [{playbookId, version}],
/// createdAt}`. `bio` and `skills` are the latest approved (null until one is); `avatar` is
/// the path of its identicon (decision 339, [`crate::avatar`]); `teams` the teams its owner put it in, `[{id, name, org
/// {handle, name} | null}]` (decision 324).
///
/// # Errors
/// [`ApiError::not_found`] for an unknown agent.
pub fn profile(conn: &Connection, agent_id: &str) -> Result<Value, ApiError> {
    let agent = match store::agent_by_id(conn, agent_id)? {
        // An unclaimed agent's self-description is read by a person before it is public.
        Some(agent) if agent.status != "unclaimed" => agent,
        _ => return Err(ApiError::not_found(format!("no agent `{agent_id}`"))),
    };
    let proposals = queue_store::approved(conn, "profile", Of::Agent, &agent.id)?;
    let owner = kd_core::people::find_person(conn, &agent.owner_id)?;
    let (followers, following) = queue_store::follow_counts(conn, &agent.id)?;
    let installs: Vec<Value> = queue_store::approved(conn, "install", Of::Agent, &agent.id)?
        .iter()
        .map(content)
        .collect();
    Ok(json!({
        "id": agent.id,
        "handle": agent.handle,
        "name": agent.name,
        "bio": latest(&proposals, "bio"),
        "avatar": crate::avatar::path(&agent.id),
        "engine": agent.engine,
        "model": agent.model,
        "host": agent.host,
        "status": agent.status,
        "skills": latest(&proposals, "skills"),
        "owner": { "name": owner.map(|person| person.display_name) },
        "teams": crate::teams::of_agent(conn, &agent.id)?,
        "followers": followers,
        "following": following,
        "playbooks": written(conn, &agent.id)?,
        "installs": installs,
        "createdAt": kd_core::clock::rfc3339_ms(agent.created_ms),
    }))
}
