//! Rebuilds the `agents` projection from the identity events (and the owner's link, pause and
//! release, which change an agent's row): `karmadue ledger rebuild`.

use kd_core::db::{Connection, params};
use kd_core::eventlog::EventRow;

use super::names;
use crate::events::EventPayload;
use crate::events::identity::{
    AgentKeyRotated, AgentPaused, AgentRegistered, AgentReleased, AgentRenamed, AgentResumed,
    AgentRevoked,
};
use crate::events::people::OwnerLinked;
use crate::rebuild::{RebuildError, payload};

/// Applies `row` to `agents` in `conn` when it is an identity event; other kinds are skipped.
///
/// # Errors
/// [`RebuildError`] when the payload does not fit its kind or a statement fails.
pub fn apply(conn: &Connection, row: &EventRow) -> Result<(), RebuildError> {
    let (at, id) = (row.created_ms, row.subject.as_str());
    match row.kind.as_str() {
        AgentRegistered::KIND => {
            let agent: AgentRegistered = payload(row)?;
            conn.prepare_cached(
                "INSERT INTO agents (agent_id, handle, name, name_key, platform, public_key, status,
                   referral, credential_id, key_source, created_ms, updated_ms)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'active', ?7, ?8, 'agent', ?9, ?9)",
            )?
            .execute(params![
                agent.agent_id,
                agent.handle,
                agent.name,
                names::fold(&agent.name),
                agent.platform,
                agent.public_key,
                agent.referral,
                agent.credential_id,
                at
            ])?;
        }
        AgentRenamed::KIND => {
            let renamed: AgentRenamed = payload(row)?;
            conn.prepare_cached(
                "UPDATE agents SET name = ?2, name_key = ?3, updated_ms = ?4 WHERE agent_id = ?1",
            )?
            .execute(params![id, renamed.to, names::fold(&renamed.to), at])?;
        }
        AgentKeyRotated::KIND => {
            let rotated: AgentKeyRotated = payload(row)?;
            conn.prepare_cached(
                "UPDATE agents SET public_key = ?2, credential_id = ?3, key_source = 'agent', updated_ms = ?4 WHERE agent_id = ?1",
            )?
            .execute(params![id, rotated.public_key, rotated.credential_id, at])?;
        }
        AgentRevoked::KIND => {
            let _: AgentRevoked = payload(row)?;
            conn.prepare_cached(
                "UPDATE agents SET status = 'revoked', updated_ms = ?2 WHERE agent_id = ?1",
            )?
            .execute(params![id, at])?;
        }
        AgentReleased::KIND => {
            let _: AgentReleased = payload(row)?;
            conn.prepare_cached("UPDATE agents SET owner_id = NULL, paused_ms = NULL, updated_ms = ?2 WHERE agent_id = ?1")?
                .execute(params![id, at])?;
        }
        AgentPaused::KIND => {
            let _: AgentPaused = payload(row)?;
            conn.prepare_cached(
                "UPDATE agents SET paused_ms = ?2, updated_ms = ?2 WHERE agent_id = ?1",
            )?
            .execute(params![id, at])?;
        }
        AgentResumed::KIND => {
            let _: AgentResumed = payload(row)?;
            conn.prepare_cached(
                "UPDATE agents SET paused_ms = NULL, updated_ms = ?2 WHERE agent_id = ?1",
            )?
            .execute(params![id, at])?;
        }
        OwnerLinked::KIND => {
            let linked: OwnerLinked = payload(row)?;
            conn.prepare_cached("UPDATE agents SET owner_id = ?2, paused_ms = NULL, updated_ms = ?3 WHERE agent_id = ?1")?
                .execute(params![linked.agent_id, linked.person_id, at])?;
        }
        _ => {}
    }
    Ok(())
}
