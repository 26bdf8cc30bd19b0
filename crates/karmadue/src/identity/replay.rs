//! Rebuilds the `agents` projection from the identity events (and the owner's link, pause and
//! release, which change an agent's row): `karmadue ledger rebuild`.

use kd_core::db::Connection;
use kd_core::eventlog::EventRow;

use super::names;
use super::store::{self, NewAgent, Ownership};
use crate::events::EventPayload;
use crate::identity::events::{
    AgentConnected, AgentKeyRotated, AgentPaused, AgentRegistered, AgentReleased, AgentRenamed,
    AgentResumed, AgentRevoked, PassportReissued,
};
use crate::people::events::OwnerLinked;
use crate::replay::{Replay, ReplayError, payload};

/// The identity area's replay (`crate::replay::Replay`).
pub struct IdentityReplay;

impl Replay for IdentityReplay {
    fn area(&self) -> &'static str {
        "identity"
    }

    fn apply(&self, conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
        apply_row(conn, row)
    }
}

/// Applies `row` to `agents` in `conn` when it is an identity event; other kinds are skipped.
///
/// # Errors
/// [`ReplayError`] when the payload does not fit its kind or a statement fails.
fn apply_row(conn: &Connection, row: &EventRow) -> Result<(), ReplayError> {
    let (at, id) = (row.created_ms, row.subject.as_str());
    match row.kind.as_str() {
        AgentRegistered::KIND => {
            let agent: AgentRegistered = payload(row)?;
            store::insert_agent(
                conn,
                &NewAgent {
                    agent_id: &agent.agent_id,
                    handle: &agent.handle,
                    name: &agent.name,
                    name_key: &names::fold(&agent.name),
                    platform: &agent.platform,
                    public_key: &agent.public_key,
                    referral: agent.referral.as_deref(),
                    credential_id: &agent.credential_id,
                    now_ms: at,
                },
            )?;
        }
        AgentConnected::KIND => {
            let agent: AgentConnected = payload(row)?;
            store::insert_hosted_agent(
                conn,
                &agent.agent_id,
                &agent.handle,
                &agent.name,
                &agent.platform,
                &agent.credential_id,
                at,
            )?;
        }
        PassportReissued::KIND => {
            let reissued: PassportReissued = payload(row)?;
            store::set_credential(conn, id, &reissued.credential_id, at)?;
        }
        AgentRenamed::KIND => {
            let renamed: AgentRenamed = payload(row)?;
            store::rename(conn, id, &renamed.to, &names::fold(&renamed.to), at)?;
        }
        AgentKeyRotated::KIND => {
            let rotated: AgentKeyRotated = payload(row)?;
            store::set_key(conn, id, &rotated.public_key, &rotated.credential_id, at)?;
        }
        AgentRevoked::KIND => {
            let _: AgentRevoked = payload(row)?;
            store::revoke(conn, id, at)?;
        }
        AgentReleased::KIND => {
            let _: AgentReleased = payload(row)?;
            store::change_ownership(conn, id, Ownership::Release, at)?;
        }
        AgentPaused::KIND => {
            let _: AgentPaused = payload(row)?;
            store::change_ownership(conn, id, Ownership::Pause, at)?;
        }
        AgentResumed::KIND => {
            let _: AgentResumed = payload(row)?;
            store::change_ownership(conn, id, Ownership::Resume, at)?;
        }
        OwnerLinked::KIND => {
            let linked: OwnerLinked = payload(row)?;
            store::set_owner(conn, &linked.agent_id, &linked.person_id, at)?;
        }
        _ => {}
    }
    Ok(())
}
