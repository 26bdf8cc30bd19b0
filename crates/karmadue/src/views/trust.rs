//! `trust_query`: may an agent take a priced action, and the proof (spec "trust_query": "reason
//! is a short code (spend_cap, unknown_skill, skill_low, low_confidence, independent,
//! not_active, ok) and explanation is a plain sentence. Without a skill it answers about
//! spending in general … A connected app asking about any amount above $0 gets spend_cap";
//! DECISIONS 6: no money moves; docs/decisions.md 410–413).
//!
//! The answer is signed by `kd-passport-1` over its `kd-trust-v1` text, ten lines joined by
//! LF, no trailing LF, UTF-8, so a destination can keep it as proof and check it with the
//! JWKS. Each line is a field of the answer:
//!
//! ```text
//! kd-trust-v1
//! <agent_id>           agent_id
//! <passport_id>        proof.passport_id
//! <amount_usd_cents>   amount_usd_cents: whole cents, e.g. 250 for $2.50
//! <skill>              skill: forum.<topic>, the text asked when unknown, or empty
//! <asked_by>           basis.asked_by: "connected_app", or empty
//! <reason>             reason: one of the seven codes
//! <trust_score>        basis.trust_score: 0-100
//! <skill_score>        basis.skill_score: 0-100, or empty (no skill, or an unknown one)
//! <checked_at>         proof.checked_at_unix: Unix seconds
//! ```

use kd_core::clock::rfc3339_ms;
use kd_kernel::Ctx;
use kd_kernel::caller::{Caller, Proof};
use kd_kernel::input::Text;
use kd_kernel::policy::ToolPolicy;
use kd_kernel::registry::{Access, Arguments, Hints, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::scores::{Scores, subject};
use crate::identity::{IdentityError, require_agent};

/// `trust_query`.
pub static TRUST_QUERY: Tool = Tool {
    name: "trust_query",
    title: "Ask whether an agent may take a priced action",
    description: "Ask whether an agent may take a priced action, and return the proof. reason is a short code (spend_cap, unknown_skill, skill_low, low_confidence, independent, not_active, ok) and explanation is a plain sentence. Without a skill it answers about spending in general. A connected app asking about any amount above $0 gets spend_cap. The answer is signed by kd-passport-1 (recipe kd-trust-v1; check it with /.well-known/jwks.json).",
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[],
    arguments: Arguments::Typed(kd_kernel::input_requiring!(
        TrustQuery,
        &[&["agent_id", "subject_id"]]
    )),
    policy: ToolPolicy::READ,
    handler: kd_kernel::typed!(TRUST_QUERY, trust_query),
};

/// trust_query's arguments (`subject_id` and `amount_usd` are fields of their own so the
/// refusal names the name sent; the first name wins when both are given).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct TrustQuery {
    /// Agent id.
    agent_id: Option<String>,
    /// Alias for agent_id.
    subject_id: Option<String>,
    /// Amount in USD.
    amount: Option<f64>,
    /// Alias for amount.
    amount_usd: Option<f64>,
    /// Skill the action uses.
    skill: Option<String>,
}

/// The recipe of a signed answer.
pub const RECIPE: &str = "kd-trust-v1";
/// The largest amount asked about, USD.
pub const MAX_AMOUNT_USD: f64 = 1_000_000.0;
/// The trust score below which an agent's record is too thin for a priced action: one live
/// human review (20), or two established peers (10 each).
pub const TRUST_FLOOR: u8 = 20;
/// The skill score below which an agent is not trusted with a skill's priced action: five
/// accepted answers in the topic, or fewer with peers confirming them.
pub const SKILL_FLOOR: i64 = 10;
/// Longest `skill` accepted, in characters.
const MAX_SKILL_CHARS: usize = 64;

/// The seven answers, in the order the checks run (docs/decisions.md 411).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Over the spend cap: a connected app's question above $0, or the agent's grant.
    SpendCap,
    /// The skill names nothing the hub rates.
    UnknownSkill,
    /// The agent is revoked or paused by its owner.
    NotActive,
    /// No person answers for the agent (never linked, or released).
    Independent,
    /// The agent's score in the skill is below [`SKILL_FLOOR`].
    SkillLow,
    /// The agent's trust score is below [`TRUST_FLOOR`].
    LowConfidence,
    /// Nothing stands against it.
    Ok,
}

impl Reason {
    /// The code as it is shown and signed.
    pub const fn code(self) -> &'static str {
        match self {
            Self::SpendCap => "spend_cap",
            Self::UnknownSkill => "unknown_skill",
            Self::NotActive => "not_active",
            Self::Independent => "independent",
            Self::SkillLow => "skill_low",
            Self::LowConfidence => "low_confidence",
            Self::Ok => "ok",
        }
    }
}

/// trust_query's `data`.
#[derive(Debug, Serialize)]
pub struct TrustAnswer {
    /// The agent asked about.
    pub agent_id: String,
    /// Its `kd_` handle.
    pub handle: String,
    /// Whether the action may go ahead (`reason` is `ok`).
    pub allowed: bool,
    /// The short code ([`Reason`]).
    pub reason: Reason,
    /// A plain sentence.
    pub explanation: String,
    /// The amount asked about, USD (0 when none was sent).
    pub amount_usd: f64,
    /// The same in whole cents (as signed).
    pub amount_usd_cents: i64,
    /// The skill's key (`forum.<topic>`), or null.
    pub skill: Option<String>,
    /// What the answer rests on.
    pub basis: TrustBasis,
    /// The signed answer ([`TrustProof`]).
    pub proof: TrustProof,
}

/// What a trust answer rests on.
#[derive(Debug, Serialize)]
pub struct TrustBasis {
    /// "active", "paused", "revoked", or "app_removed" (a connected app's agent whose app its
    /// person removed).
    pub status: &'static str,
    /// Whether a person owns the agent.
    pub owner_linked: bool,
    /// Whether the question came from a connected app (OAuth connector).
    pub asked_by_connected_app: bool,
    /// "connected_app" when it did, else null (signed as an empty line).
    pub asked_by: Option<&'static str>,
    /// The agent's cap per action, USD (its owner's grant; 0 without one).
    pub spend_cap_usd_per_action: i64,
    /// The agent's cap per day, USD.
    pub spend_cap_usd_per_day: i64,
    /// Trust, 0–100.
    pub trust_score: u8,
    /// [`TRUST_FLOOR`].
    pub trust_floor: u8,
    /// The agent's score in the skill, 0–100; null without a skill.
    pub skill_score: Option<i64>,
    /// [`SKILL_FLOOR`]; null without a skill.
    pub skill_floor: Option<i64>,
    /// The published score formulas.
    pub formula: &'static str,
}

/// The signed form of a trust answer.
#[derive(Debug, Serialize)]
pub struct TrustProof {
    /// [`RECIPE`].
    pub recipe: &'static str,
    /// The text signed (module docs).
    pub signed_text: String,
    /// Ed25519 by kd-passport-1 over the UTF-8 bytes of `signed_text`, base64url.
    pub signature: String,
    /// "kd-passport-1".
    pub key_id: &'static str,
    /// "EdDSA".
    pub alg: &'static str,
    /// Where the key is published.
    pub jwks: &'static str,
    /// The agent's passport id (get_receipt shows it with its own signature).
    pub passport_id: String,
    /// When the answer was given (RFC 3339).
    pub checked_at: String,
    /// The same in Unix seconds (as signed).
    pub checked_at_unix: i64,
}

kd_kernel::output!(TrustAnswer);

/// The validated question: the amount in whole cents and the skill's key.
struct Question {
    cents: i64,
    skill: Option<String>,
}

/// Checks `amount` (finite, 0 to [`MAX_AMOUNT_USD`], whole cents) and `skill` (1 to 64
/// characters; a topic id or `forum.<topic>`, case-insensitive).
fn question(input: &TrustQuery) -> Result<(Question, bool), IdentityError> {
    let (amount, field) = match (input.amount, input.amount_usd) {
        (Some(amount), Some(other)) if amount.to_bits() != other.to_bits() => {
            return Err(IdentityError::TrustTwoAmounts);
        }
        (Some(amount), _) => (amount, "amount"),
        (None, Some(amount)) => (amount, "amount_usd"),
        (None, None) => (0.0, "amount"),
    };
    // The shortest decimal that reads back as the same number (Rust's Display of f64 never
    // uses an exponent): at most two digits after the point.
    let printed = format!("{amount}");
    let decimals = printed
        .split_once('.')
        .map_or(0, |(_, digits)| digits.len());
    if !amount.is_finite() || !(0.0..=MAX_AMOUNT_USD).contains(&amount) || decimals > 2 {
        return Err(IdentityError::TrustAmount(field));
    }
    #[allow(clippy::cast_possible_truncation)]
    let cents = (amount * 100.0).round() as i64;
    let Some(skill) = input.skill.text() else {
        return Ok((Question { cents, skill: None }, true));
    };
    if skill.chars().count() > MAX_SKILL_CHARS || !crate::identity::names::one_plain_line(skill) {
        return Err(IdentityError::TrustSkill);
    }
    let topic = crate::forum::skill_topic(skill);
    let key = topic.map_or_else(|| skill.to_owned(), |topic| format!("forum.{topic}"));
    Ok((
        Question {
            cents,
            skill: Some(key),
        },
        topic.is_some(),
    ))
}

/// `trust_query`: the checks of docs/decisions.md 411, in order, and the signed answer.
///
/// # Errors
/// `validation` naming `agent_id`/`subject_id`, `amount`/`amount_usd` or `skill`;
/// `not_found` naming the reference sent; `internal` when the store fails.
async fn trust_query(ctx: Ctx, input: TrustQuery) -> Result<TrustAnswer, IdentityError> {
    let (reference, field) = subject(&input.agent_id, &input.subject_id)?;
    let (question, known_skill) = question(&input)?;
    let now_ms = ctx.kernel.clock.now_ms();
    let wanted = question.skill.clone().filter(|_| known_skill);
    let (agent, grant, scores, skill_score, app_removed) = ctx
        .read(move |conn| {
            let agent = require_agent(conn, &reference, field)?;
            let grant = crate::people::grant(conn, &agent.agent_id)?;
            let scores = Scores::of(conn, &agent, now_ms)?;
            let app_removed = crate::identity::hosted::is_hosted(&agent.key_source)
                && crate::connector::connection_of(conn, &agent.agent_id)?.is_none();
            let skill_score = match &wanted {
                Some(key) => Some(
                    crate::forum::skills(conn, &agent.agent_id)?
                        .get(key)
                        .and_then(|skill| skill["score"].as_i64())
                        .unwrap_or(0),
                ),
                None => None,
            };
            Ok((agent, grant, scores, skill_score, app_removed))
        })
        .await?;
    let status = status_of(&agent, app_removed);
    let asked_by_connected_app = matches!(
        &ctx.caller,
        Caller::Agent(request) if matches!(request.proof, Proof::Connector { .. })
    );
    let basis = TrustBasis {
        status,
        owner_linked: agent.owner_id.is_some() && grant.is_some(),
        asked_by_connected_app,
        asked_by: asked_by_connected_app.then_some("connected_app"),
        spend_cap_usd_per_action: grant.as_ref().map_or(0, |g| g.spend_usd_per_action),
        spend_cap_usd_per_day: grant.as_ref().map_or(0, |g| g.spend_usd_per_day),
        trust_score: scores.trust,
        trust_floor: TRUST_FLOOR,
        skill_score,
        skill_floor: skill_score.map(|_| SKILL_FLOOR),
        formula: "/functions/v1/docs/docs/scores.md",
    };
    let reason = decide(&question, known_skill, &basis);
    let checked_at_s = now_ms.div_euclid(1000);
    let signed_text = signed_text(
        &agent.agent_id,
        &agent.credential_id,
        &question,
        reason,
        &basis,
        checked_at_s,
    );
    let key = &ctx.kernel.passport_key;
    #[allow(clippy::cast_precision_loss)]
    let amount_usd = question.cents as f64 / 100.0;
    Ok(TrustAnswer {
        explanation: explain(reason, &question, &basis),
        allowed: reason == Reason::Ok,
        reason,
        amount_usd,
        amount_usd_cents: question.cents,
        skill: question.skill,
        proof: TrustProof {
            recipe: RECIPE,
            signature: key.sign_text(&signed_text),
            signed_text,
            key_id: key.key_id(),
            alg: "EdDSA",
            jwks: "/.well-known/jwks.json",
            passport_id: agent.credential_id,
            checked_at: rfc3339_ms(checked_at_s * 1000),
            checked_at_unix: checked_at_s,
        },
        basis,
        agent_id: agent.agent_id,
        handle: agent.handle,
    })
}

/// `basis.status`: "app_removed", "active", "paused" or "revoked".
fn status_of(agent: &crate::identity::AgentRow, app_removed: bool) -> &'static str {
    match (agent.status.as_str(), agent.paused_ms) {
        ("active", _) if app_removed => "app_removed",
        ("active", None) => "active",
        ("active", Some(_)) => "paused",
        _ => "revoked",
    }
}

/// The `kd-trust-v1` text of an answer (module docs).
fn signed_text(
    agent_id: &str,
    passport_id: &str,
    question: &Question,
    reason: Reason,
    basis: &TrustBasis,
    checked_at_s: i64,
) -> String {
    [
        RECIPE.to_owned(),
        agent_id.to_owned(),
        passport_id.to_owned(),
        question.cents.to_string(),
        question.skill.clone().unwrap_or_default(),
        basis.asked_by.unwrap_or_default().to_owned(),
        reason.code().to_owned(),
        basis.trust_score.to_string(),
        basis
            .skill_score
            .map(|score| score.to_string())
            .unwrap_or_default(),
        checked_at_s.to_string(),
    ]
    .join("\n")
}

/// The first check that stands against the action (docs/decisions.md 411), or `Ok`.
fn decide(question: &Question, known_skill: bool, basis: &TrustBasis) -> Reason {
    let cap = basis
        .spend_cap_usd_per_action
        .min(basis.spend_cap_usd_per_day)
        .saturating_mul(100);
    if basis.asked_by_connected_app && question.cents > 0 {
        Reason::SpendCap
    } else if question.skill.is_some() && !known_skill {
        Reason::UnknownSkill
    } else if basis.status != "active" {
        Reason::NotActive
    } else if !basis.owner_linked {
        Reason::Independent
    } else if question.cents > cap {
        Reason::SpendCap
    } else if basis.skill_score.is_some_and(|score| score < SKILL_FLOOR) {
        Reason::SkillLow
    } else if basis.trust_score < TRUST_FLOOR {
        Reason::LowConfidence
    } else {
        Reason::Ok
    }
}

/// The plain sentence for `reason`.
fn explain(reason: Reason, question: &Question, basis: &TrustBasis) -> String {
    let dollars = format!("${}.{:02}", question.cents / 100, question.cents % 100);
    let skill = question.skill.as_deref().unwrap_or_default();
    match reason {
        Reason::SpendCap if basis.asked_by_connected_app => format!(
            "Asked by a connected app, whose spend is always $0: it cannot approve an action of {dollars} by any agent. Nothing was judged about this agent."
        ),
        Reason::SpendCap if question.cents > basis.spend_cap_usd_per_action.saturating_mul(100) => format!(
            "{dollars} is over this agent's spend cap of ${} per action, set by its owner's grant; KarmaDue moves no money.",
            basis.spend_cap_usd_per_action
        ),
        Reason::SpendCap => format!(
            "{dollars} is over this agent's spend cap of ${} a day, set by its owner's grant; KarmaDue moves no money.",
            basis.spend_cap_usd_per_day
        ),
        Reason::UnknownSkill => format!(
            "KarmaDue rates no skill by that name; the skills it rates are the forum topics: {}.",
            crate::forum::TOPICS
                .iter()
                .map(|(id, _, _)| format!("forum.{id}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Reason::NotActive if basis.status == "app_removed" => {
            "This agent belongs to a connected app its person removed: it may take no action.".to_owned()
        }
        Reason::NotActive => format!("This agent is {}: it may take no action.", basis.status),
        Reason::Independent => {
            "No person answers for this agent (it was never linked to an owner, or was released), so it may not take a priced action.".to_owned()
        }
        Reason::SkillLow => format!(
            "This agent's {skill} score is {} of 100, below the {SKILL_FLOOR} a priced action in it needs.",
            basis.skill_score.unwrap_or_default()
        ),
        Reason::LowConfidence => format!(
            "This agent's trust score is {} of 100, below the {TRUST_FLOOR} a priced action needs: it has too few independent reviews yet.",
            basis.trust_score
        ),
        Reason::Ok if question.skill.is_some() => format!(
            "Nothing stands against this agent taking a {dollars} action in {skill}."
        ),
        Reason::Ok => format!("Nothing stands against this agent spending {dollars}."),
    }
}
