//! `get_standing` and the standing `verify_agent` shows (spec tool reference "get_standing",
//! "Live permissions", permissions document "What your passport unlocks"): an agent's tier,
//! next unlock, stamps, capabilities and quota (standing), joined with the help it gave and
//! the asks about it (help) and, for a connected app's agent, its next permission
//! (connector). A view: it reads principals and work, and nothing below calls it.

use kd_core::db::Connection;
use kd_core::tiers::AccessTiers;
use kd_kernel::Ctx;
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use kd_kernel::policy::ToolPolicy;
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};
use kd_kernel::tiers::{self, Subject};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::standing::{StandingError, agent_facts, quota, stamps};

/// The standing of an agent as `get_standing` and `verify_agent` show it (spec "Live
/// permissions", "What your passport unlocks").
#[derive(Debug, Serialize)]
pub struct AgentStanding {
    /// The tier with its per-minute limits (the kernel's tier object); null for an agent that
    /// is not active.
    pub tier: Value,
    /// Which stamp would unlock what, and how to get it (the kernel's object); null for an
    /// agent that is not active.
    pub next_unlock: Value,
    /// Live stamps: `{stamp_id, stamp, issued_at, expires_at, issuer, credential_id, detail,
    /// event_seq}`.
    pub stamps: Vec<Value>,
    /// Live capabilities: `{capability, granted_at, expires_at, source}`.
    pub capabilities: Vec<Value>,
    /// Whether a person owns the agent.
    pub owner_linked: bool,
    /// Whether the agent holds a live admission-passed stamp.
    pub admitted: bool,
    /// The help it gave as a reviewer (help's record); absent for an agent that is not active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verifier_record: Option<Value>,
    /// Resolved asks about it, refusals included; absent for an agent that is not active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verifications: Option<Vec<Value>>,
    /// Its daily actions, for an owner-linked agent with a limit; absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quota: Option<quota::QuotaView>,
}

impl AgentStanding {
    /// An agent that is not active: no tier, no stamps, nothing unlocked.
    fn inactive() -> Self {
        Self {
            tier: Value::Null,
            next_unlock: Value::Null,
            stamps: Vec::new(),
            capabilities: Vec::new(),
            owner_linked: false,
            admitted: false,
            verifier_record: None,
            verifications: None,
            quota: None,
        }
    }
}

/// The standing of an active agent at `now_ms`.
///
/// # Errors
/// `internal` when the store fails.
pub fn agent_standing(
    conn: &Connection,
    tiers: &AccessTiers,
    agent_id: &str,
    now_ms: i64,
) -> Result<AgentStanding, ToolError> {
    let facts = agent_facts(conn, agent_id, now_ms)?;
    let subject = Subject::Agent {
        agent_id: agent_id.to_owned(),
        facts,
    };
    let quota = facts
        .actions_per_day
        .map(|actions_per_day| quota::read(conn, agent_id, actions_per_day, now_ms))
        .transpose()?;
    Ok(AgentStanding {
        tier: tiers::tier_json(tiers, &subject),
        next_unlock: tiers::next_unlock(tiers, &subject),
        stamps: stamps::live(conn, agent_id, now_ms)?
            .iter()
            .map(stamps::Stamp::to_json)
            .collect(),
        capabilities: stamps::live_capabilities(conn, agent_id, now_ms)?
            .iter()
            .map(stamps::Capability::to_json)
            .collect(),
        owner_linked: facts.owner_linked(),
        admitted: facts.admitted(),
        verifier_record: Some(crate::help::verification::verifier_record(conn, agent_id)?),
        verifications: Some(crate::help::verification::subject_record(conn, agent_id)?),
        quota: quota.as_ref().map(quota::Quota::view),
    })
}

/// `get_standing`'s `data`: the agent's [`AgentStanding`] and who it is.
#[derive(Debug, Serialize)]
pub struct SubjectStanding {
    /// The standing.
    #[serde(flatten)]
    pub standing: AgentStanding,
    /// The agent's id.
    pub subject_id: String,
    /// Always `agent`.
    pub subject_type: &'static str,
    /// The agent's handle.
    pub handle: String,
    /// `active`, `revoked`, ...
    pub status: String,
}

kd_kernel::output!(SubjectStanding);

/// The reviewer's evidence link of each verification record is third-party text: lifted into
/// `untrusted_content` (spec "Null text fields").
pub const VERIFICATIONS_LIFT: Lift = Lift::rows("verifications", "ask_id", &["evidence_ref"]);

/// `get_standing` (spec tool reference): standing for an agent, never a person.
pub static GET_STANDING: Tool = Tool {
    name: "get_standing",
    title: "Get standing",
    description: "Standing for an agent, operator, or provider. Never a person. Shows the tier with its per-minute limits, next_unlock (which stamp would unlock what, and how to get it), live stamps and capabilities, and for an owner-linked agent its quota of actions in a rolling 24 hours. Without subject_id it answers for the agent named in x-karmadue-agent.",
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[VERIFICATIONS_LIFT],
    arguments: Arguments::Typed(kd_kernel::input!(GetStanding)),
    policy: ToolPolicy::READ,
    handler: kd_kernel::typed!(GET_STANDING, get_standing),
};

/// get_standing's arguments. The refusal names the name sent, so `agent_id` is a field of its
/// own, not an alias row.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetStanding {
    /// Agent id or key id.
    subject_id: Option<String>,
    /// Alias for subject_id.
    agent_id: Option<String>,
}

/// `get_standing`: the standing of the agent named (by id, handle or key id), or of the signed
/// caller.
///
/// # Errors
/// `validation` naming `subject_id` (none, unsigned) or the name sent (a person's `kdh_` id);
/// `not_found` (no such agent); `internal` when the store fails.
async fn get_standing(ctx: Ctx, input: GetStanding) -> Result<SubjectStanding, StandingError> {
    let field = if input.subject_id.text().is_some() {
        "subject_id"
    } else {
        "agent_id"
    };
    let reference = match (
        kd_kernel::input::first_sent(&[&input.subject_id, &input.agent_id]).text(),
        &ctx.caller,
    ) {
        (Some(reference), _) => reference.to_owned(),
        (None, kd_kernel::Caller::Agent(signed)) => signed.agent_id.to_string(),
        (None, _) => {
            return Err(StandingError::SubjectRequired);
        }
    };
    if reference.starts_with("kdh_") {
        return Err(StandingError::PersonNotAgent(field));
    }
    let now_ms = ctx.kernel.clock.now_ms();
    let hub = std::sync::Arc::clone(&ctx.kernel);
    ctx.read(move |conn| {
        // "Agent id or key id": an agent's public key (base64url) names it too.
        let by_key: Option<String> = if reference.len() == 43 {
            crate::identity::store::agent_with_key(conn, &reference, false)?
        } else {
            None
        };
        let agent =
            crate::identity::require_agent(conn, by_key.as_deref().unwrap_or(&reference), field)?;
        let mut standing = if agent.status == "active" {
            agent_standing(conn, &hub.config.access_tiers, &agent.agent_id, now_ms)?
        } else {
            AgentStanding::inactive()
        };
        // A connected app's agent climbs no ladder: its next unlock is the next permission its
        // person approves (docs/decisions.md 428), or nothing once its app is removed.
        if crate::identity::hosted::is_hosted(&agent.key_source) {
            standing.next_unlock = match crate::connector::connection_of(conn, &agent.agent_id)? {
                Some(connection) => crate::connector::permission::next_unlock_for(
                    &crate::connector::issuer(&hub.config),
                    &agent.agent_id,
                    &connection.scopes,
                ),
                None => Value::Null,
            };
        }
        Ok(SubjectStanding {
            standing,
            subject_id: agent.agent_id,
            subject_type: "agent",
            handle: agent.handle,
            status: agent.status,
        })
    })
    .await
    .map_err(StandingError::from)
}
