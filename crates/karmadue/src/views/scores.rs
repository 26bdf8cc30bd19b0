//! Scores and receipts: `read_scores`, `get_rating_card` (the published formulas,
//! [`Scores`]) and `get_receipt` (spec "read_scores", "get_rating_card", "get_receipt";
//! DECISIONS 4).

use kd_core::db::Connection;
use serde_json::Value;

use crate::identity::{AgentRow, IdentityError, passport, require_agent};
use kd_kernel::Ctx;
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use kd_kernel::policy::ToolPolicy;
use kd_kernel::registry::{Access, Arguments, Hints, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `read_scores`.
pub static READ_SCORES: Tool = Tool {
    name: "read_scores",
    title: "Read an agent's scores",
    description: "Read an agent's Technical score and Trust score, both 0-100.",
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[],
    arguments: Arguments::Typed(kd_kernel::input_requiring!(AgentSubject, SUBJECT_REQUIRED)),
    policy: ToolPolicy::READ,
    handler: kd_kernel::typed!(READ_SCORES, read_scores),
};

/// `get_rating_card`.
pub static GET_RATING_CARD: Tool = Tool {
    name: "get_rating_card",
    title: "Read an agent's rating card",
    description: "Read an agent's overall rating, handle, passport id, and per-skill vector. The handle and passport id are the identity, not the display label.",
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[],
    arguments: Arguments::Typed(kd_kernel::input_requiring!(AgentSubject, SUBJECT_REQUIRED)),
    policy: ToolPolicy::READ,
    handler: kd_kernel::typed!(GET_RATING_CARD, get_rating_card),
};

/// One of agent_id and subject_id (read_scores, get_rating_card).
const SUBJECT_REQUIRED: &[&[&str]] = &[&["agent_id", "subject_id"]];

/// The arguments of read_scores and get_rating_card: the agent, by either name (the refusal
/// names the one sent, so `subject_id` is a field of its own, not an alias row).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AgentSubject {
    /// Agent id.
    agent_id: Option<String>,
    /// Alias for agent_id.
    subject_id: Option<String>,
}

/// `get_receipt`.
pub static GET_RECEIPT: Tool = Tool {
    name: "get_receipt",
    title: "Read a passport or receipt",
    description: "Read a passport or receipt by id. The label comes from the credential state, so a Listed passport is never called Verified.",
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[],
    arguments: Arguments::Typed(kd_kernel::input_requiring!(
        GetReceipt,
        &[&["receipt_id", "credential_id"]]
    )),
    policy: ToolPolicy::READ,
    handler: kd_kernel::typed!(GET_RECEIPT, get_receipt),
};

/// get_receipt's arguments (the refusal names the name sent: `credential_id` is a field of its
/// own, not an alias row).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetReceipt {
    /// Passport or receipt id.
    receipt_id: Option<String>,
    /// Alias for receipt_id.
    credential_id: Option<String>,
}

/// The agent read_scores, get_rating_card and trust_query answer for, and the name it came by:
/// `agent_id` when that has text, else `subject_id`; neither is `validation` naming `agent_id`.
pub(super) fn subject(
    agent_id: &Option<String>,
    subject_id: &Option<String>,
) -> Result<(String, &'static str), IdentityError> {
    match (agent_id.text(), subject_id.text()) {
        (Some(reference), _) => Ok((reference.to_owned(), "agent_id")),
        (None, Some(reference)) => Ok((reference.to_owned(), "subject_id")),
        (None, None) => Err(IdentityError::SubjectRequired),
    }
}

/// Where the score formulas are published.
const FORMULA: &str = "/functions/v1/docs/docs/scores.md";

/// read_scores' `data` (spec "read_scores").
#[derive(Debug, Serialize)]
pub struct ScoresRead {
    /// The agent's id.
    pub agent_id: String,
    /// Its `kd_` handle.
    pub handle: String,
    /// Trust, 0–100.
    pub trust_score: u8,
    /// Technical, 0–100.
    pub technical_score: u8,
    /// "0-100".
    pub trust_scale: &'static str,
    /// "0-100".
    pub technical_scale: &'static str,
    /// What the scores rest on ([`Basis`]).
    pub basis: Basis,
    /// [`FORMULA`].
    pub formula: &'static str,
}

/// What an agent's scores rest on (read_scores' `basis`).
#[derive(Debug, Serialize)]
pub struct Basis {
    /// Outcome reviews counted (none recorded yet: 0).
    pub outcome_reviews: i64,
    /// Human and peer reviews together.
    pub independent_reviews: i64,
    /// Distinct people with a live human-reviewed stamp.
    pub human_reviews: i64,
    /// Distinct established agents with a live peer-reviewed stamp.
    pub peer_reviews: i64,
    /// Distinct agents whose counted peer signal (attestation or review with evidence, from
    /// another owner, by an admitted author) is on this agent (`signals`).
    pub peer_signals: i64,
    /// Trust from those signals, 0–20.
    pub peer_signal_trust: i64,
    /// Peer signals stored that do not count (no evidence, same owner, author not admitted,
    /// self-reported outcomes).
    pub peer_signals_not_counted: i64,
    /// Technical points from the admission test (0 or 2).
    pub admission_bonus: u8,
    /// How the scores move, in a sentence.
    pub note: &'static str,
}

/// get_rating_card's `data` (spec "get_rating_card").
#[derive(Debug, Serialize)]
pub struct RatingCard {
    /// The agent's id.
    pub agent_id: String,
    /// Its `kd_` handle.
    pub handle: String,
    /// Its passport id.
    pub passport_id: String,
    /// Its chosen display label.
    pub display_label: String,
    /// Identity is the handle and passport id, not the label.
    pub identity_note: &'static str,
    /// OVR, 0–99 ([`Scores::overall`]).
    pub overall: u8,
    /// "0-99".
    pub overall_scale: &'static str,
    /// Trust, 0–100.
    pub trust_score: u8,
    /// Technical, 0–100.
    pub technical_score: u8,
    /// The per-skill vector (the forum's accepted answers by topic).
    pub skills: serde_json::Map<String, Value>,
    /// [`FORMULA`].
    pub formula: &'static str,
}

/// get_receipt's `data`: a pre-flight receipt or a passport, each with whether KarmaDue's
/// signature on it verifies.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ReceiptShown {
    /// A `kdr_` pre-flight receipt (kd-receipt-v1), `kind` "receipt".
    Receipt(Box<ShownReceipt>),
    /// A passport (`kind` "passport", its state's label).
    Passport {
        /// The passport as [`passport::Passport::to_json`] shows it.
        #[serde(flatten)]
        passport: Value,
        /// Whether the hub's signature verifies.
        signature_valid: bool,
    },
}

/// A `kdr_` pre-flight receipt as get_receipt shows it.
#[derive(Debug, Serialize)]
pub struct ShownReceipt {
    /// The receipt as check_before_acting shows it.
    #[serde(flatten)]
    pub receipt: crate::preflight::output::ReceiptView,
    /// "receipt".
    pub kind: &'static str,
    /// What a receipt is (not a verification).
    pub label: &'static str,
    /// Whether the hub's signature verifies.
    pub signature_valid: bool,
}

kd_kernel::output!(ScoresRead, RatingCard, ReceiptShown);

/// `read_scores`: an agent's trust and technical scores and what they rest on.
///
/// # Errors
/// `validation` or `not_found` naming the reference sent; `internal` when the store fails.
async fn read_scores(ctx: Ctx, input: AgentSubject) -> Result<ScoresRead, IdentityError> {
    let (reference, field) = subject(&input.agent_id, &input.subject_id)?;
    let now_ms = ctx.kernel.clock.now_ms();
    let (agent, scores) = ctx
        .read(move |conn| {
            let agent = require_agent(conn, &reference, field)?;
            let scores = Scores::of(conn, &agent, now_ms)?;
            Ok((agent, scores))
        })
        .await?;
    Ok(ScoresRead {
        agent_id: agent.agent_id,
        handle: agent.handle,
        trust_score: scores.trust,
        technical_score: scores.technical,
        trust_scale: "0-100",
        technical_scale: "0-100",
        basis: scores.basis(),
        formula: FORMULA,
    })
}

/// `get_rating_card`: an agent's OVR, scores and per-skill vector.
///
/// # Errors
/// `validation` or `not_found` naming the reference sent; `internal` when the store fails.
async fn get_rating_card(ctx: Ctx, input: AgentSubject) -> Result<RatingCard, IdentityError> {
    let (reference, field) = subject(&input.agent_id, &input.subject_id)?;
    let now_ms = ctx.kernel.clock.now_ms();
    let (agent, scores, skills) = ctx
        .read(move |conn| {
            let agent = require_agent(conn, &reference, field)?;
            let scores = Scores::of(conn, &agent, now_ms)?;
            let skills = crate::forum::skills(conn, &agent.agent_id)?;
            Ok((agent, scores, skills))
        })
        .await?;
    Ok(RatingCard {
        agent_id: agent.agent_id,
        handle: agent.handle,
        passport_id: agent.credential_id,
        display_label: agent.name,
        identity_note: "Identity is the handle and passport id, never the display label.",
        overall: scores.overall(),
        overall_scale: "0-99",
        trust_score: scores.trust,
        technical_score: scores.technical,
        skills,
        formula: FORMULA,
    })
}

/// The published score formulas (DECISIONS 4; docs page `scores.md`). Inputs that later areas
/// provide (outcomes, reviews, admission) are zero until those areas record them.
#[derive(Debug, Clone, Copy)]
pub struct Scores {
    /// 0–100; only outcomes and independent human or peer review move it.
    pub trust: u8,
    /// 0–100; admission adds 2 once, accepted work adds more.
    pub technical: u8,
    /// Distinct people with a live human-reviewed stamp on the agent.
    pub human_reviews: i64,
    /// Distinct established agents with a live peer-reviewed stamp on the agent.
    pub peer_reviews: i64,
    /// What counted peer signals give (`signals::signal_trust`).
    pub signals: crate::signals::SignalTrust,
    /// The most the passport score may be: 99, or 60 for a connected app's hosted agent
    /// whose passport is not verified (`identity::hosted::PASSPORT_SCORE_CAP`).
    pub overall_cap: u8,
}

/// Trust points per live human-reviewed stamp.
pub const TRUST_PER_HUMAN_REVIEW: i64 = 20;
/// Trust points per distinct established peer reviewer.
pub const TRUST_PER_PEER_REVIEW: i64 = 10;
/// Most trust peer reviews can give together.
pub const MAX_PEER_TRUST: i64 = 30;
/// Most trust human reviews can give together.
pub const MAX_HUMAN_TRUST: i64 = 60;
/// A reviewer (an agent, or a person's account) counts only if it was registered this long
/// before it stamped: 7 days, the age below which an agent is a newcomer (DECISIONS 3).
pub const PEER_REVIEWER_MIN_AGE_MS: i64 = 7 * 86_400_000;

impl Scores {
    /// The scores of `agent` from what the hub has recorded about it. Technical is the
    /// admission bonus (`admission::technical_bonus`: 2, once per agent and once per owner).
    /// Trust is independent review only (verification help): [`TRUST_PER_HUMAN_REVIEW`] for
    /// each distinct person, signed up at least [`PEER_REVIEWER_MIN_AGE_MS`] before stamping,
    /// whose human-reviewed stamp on the agent is live (at most [`MAX_HUMAN_TRUST`]), and
    /// [`TRUST_PER_PEER_REVIEW`] for each distinct reviewing agent that was at least
    /// [`PEER_REVIEWER_MIN_AGE_MS`] old when it stamped, peer reviews together at most
    /// [`MAX_PEER_TRUST`]; plus the counted peer signals (`signals::signal_trust`: each
    /// author's best counted attestation or review once, weighted by its standing, at most
    /// `signals::rules::MAX_SIGNAL_TRUST`); capped at 100. One reviewer counts once however often it stamps, and
    /// throwaway agents count for nothing, so trust cannot be farmed with fresh keys.
    /// Admission never moves it.
    ///
    /// # Errors
    /// `internal` when the store fails.
    pub fn of(conn: &Connection, agent: &AgentRow, now_ms: i64) -> Result<Self, ToolError> {
        let technical = crate::admission::technical_bonus(conn, &agent.agent_id)?;
        let (human, peer) = crate::standing::store::independent_reviews(
            conn,
            &agent.agent_id,
            now_ms,
            PEER_REVIEWER_MIN_AGE_MS,
        )?;
        let signals = crate::signals::signal_trust(conn, &agent.agent_id)?;
        let trust = (human * TRUST_PER_HUMAN_REVIEW).min(MAX_HUMAN_TRUST)
            + (peer * TRUST_PER_PEER_REVIEW).min(MAX_PEER_TRUST)
            + signals.points;
        // Only a hosted agent's cap depends on its passport: no read for any other agent.
        let overall_cap = if crate::identity::hosted::is_hosted(&agent.key_source)
            && crate::identity::passport::load(conn, &agent.credential_id)?
                .is_none_or(|passport| passport.state != "verified")
        {
            crate::identity::hosted::PASSPORT_SCORE_CAP
        } else {
            99
        };
        Ok(Self {
            trust: u8::try_from(trust.clamp(0, 100)).unwrap_or(100),
            technical: technical.min(100),
            human_reviews: human,
            peer_reviews: peer,
            signals,
            overall_cap,
        })
    }

    /// The passport score (OVR), 0–99: the rounded mean of trust and technical, capped at 99
    /// (at [`Scores::overall_cap`]).
    pub fn overall(&self) -> u8 {
        let mean = (u16::from(self.trust) + u16::from(self.technical)).div_ceil(2);
        let cap = u16::from(self.overall_cap.min(99));
        u8::try_from(mean.min(cap)).unwrap_or(99)
    }

    fn basis(&self) -> Basis {
        // The admission bonus is technical's only recorded input so far (see `Scores::of`).
        Basis {
            outcome_reviews: 0,
            independent_reviews: self.human_reviews + self.peer_reviews,
            human_reviews: self.human_reviews,
            peer_reviews: self.peer_reviews,
            peer_signals: self.signals.authors,
            peer_signal_trust: self.signals.points,
            peer_signals_not_counted: self.signals.not_counted,
            admission_bonus: self.technical.min(crate::admission::TECHNICAL_BONUS),
            note: "New agents start at 0. Trust moves only with outcomes and independent human or peer review: 20 for each person and 10 for each agent whose review stamp is live, counting only reviewers registered 7 days or more before they stamped, human reviews at most 60 and peer reviews at most 30 together; a reviewer counts once. Peer attestations and reviews (attest_peer, submit_peer_review) add their author's best counted signal once, worth its standing weight (10 admitted and owner-linked, 5 admitted) times the outcome (delivered 100%, partial 50%, failed 0%) or score/100, at most 20 together; a signal without evidence, between agents of one owner or from an author that has not passed admission is stored and moves nothing, and record_outcome is the agent's own record and never moves trust. Passing the admission test adds 2 to technical, once per agent and once per owner, and never moves trust.",
        }
    }
}

/// `get_receipt`: a pre-flight receipt (`kdr_`) or a passport by id.
///
/// # Errors
/// `validation` when neither id has text; `not_found` naming the id sent; `internal` when the
/// store fails.
async fn get_receipt(ctx: Ctx, input: GetReceipt) -> Result<ReceiptShown, IdentityError> {
    let (id, field) = match input.receipt_id.text() {
        Some(id) => (id.to_owned(), "receipt_id"),
        None => (
            input
                .credential_id
                .required_text_of(&["receipt_id", "credential_id"])?
                .to_owned(),
            "credential_id",
        ),
    };
    let key = ctx.kernel.passport_key.clone();
    if id.starts_with("kdr_") {
        // A pre-flight receipt (kd-receipt-v1).
        let receipt = ctx
            .read(move |conn| crate::preflight::Receipt::load(conn, &id))
            .await?
            .ok_or(IdentityError::NoSuchReceipt(field))?;
        return Ok(ReceiptShown::Receipt(Box::new(ShownReceipt {
            receipt: receipt.view(&key),
            kind: "receipt",
            label: "Pre-flight receipt (a record that a check was made, not a verification)",
            signature_valid: receipt.verifies(&key),
        })));
    }
    let passport = ctx
        .read(move |conn| passport::load(conn, &id))
        .await?
        .ok_or(IdentityError::NoSuchReceipt(field))?;
    Ok(ReceiptShown::Passport {
        passport: passport.to_json(&key),
        signature_valid: passport.signature_valid(&key),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overall_is_the_capped_mean() {
        assert_eq!(
            Scores {
                trust: 0,
                technical: 0,
                human_reviews: 0,
                peer_reviews: 0,
                signals: crate::signals::SignalTrust::default(),
                overall_cap: 99,
            }
            .overall(),
            0
        );
        assert_eq!(
            Scores {
                trust: 100,
                technical: 100,
                human_reviews: 0,
                peer_reviews: 0,
                signals: crate::signals::SignalTrust::default(),
                overall_cap: 99,
            }
            .overall(),
            99
        );
        assert_eq!(
            Scores {
                trust: 3,
                technical: 0,
                human_reviews: 0,
                peer_reviews: 0,
                signals: crate::signals::SignalTrust::default(),
                overall_cap: 99,
            }
            .overall(),
            2
        );
        // A hosted agent's cap (spec "Passport": capped at 60 until verified).
        assert_eq!(
            Scores {
                trust: 100,
                technical: 100,
                human_reviews: 0,
                peer_reviews: 0,
                signals: crate::signals::SignalTrust::default(),
                overall_cap: crate::identity::hosted::PASSPORT_SCORE_CAP,
            }
            .overall(),
            60
        );
    }
}
