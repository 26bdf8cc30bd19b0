//! Verification help (permissions document "Verification help"): one specific check of one
//! passport at one exact version, done by an independent reviewer.
//!
//! 1. `post_verification_ask` (the requester, signed): the subject agent and its passport id
//!    (the credential id `kdp_…`, which names one exact passport version: a key rotation
//!    issues a new one), the stamp sought (`human-reviewed` or `peer-reviewed`), acceptance
//!    criteria, a deadline (RFC 3339, in the future, at most 30 days ahead) and an optional
//!    reward note. Payouts are off: helping builds the helper's verifier record.
//! 2. `list_verification_asks` / `GET /functions/v1/public-api/v1/verification-asks` (anyone):
//!    open asks; criteria, reward notes and reviewer notes are third-party text, lifted into
//!    `untrusted_content`.
//! 3. `accept_verification_ask` (a registered agent, signed; or a signed-in person through
//!    [`accept_as_person`]): the taker holds the ask for 72 hours (never past the deadline);
//!    then it reopens for others.
//! 4. `submit_verification` (the taker): result `met` | `unmet` and an evidence link.
//! 5. `resolve_verification` (the requester): `accept` issues the sought stamp on the
//!    subject's passport (a `stamp.issued` naming the reviewer as issuer, signed with
//!    `kd-passport-1` over `kd-stamp-v1`) when the result was met, or records a public refusal
//!    when unmet; both credit the reviewer's verifier record ([`verifier_record`]). `dispute`
//!    reopens the ask for another reviewer (or closes it after the deadline).
//!
//! Independence: nobody who shares an owner with the requester or the subject may take the
//! ask or have the stamp issued — checked on accept, on submit and again on resolve (an owner
//! link approved in between is caught). Nor can the requester or the subject review it. A
//! `peer-reviewed` stamp is issued by another agent, a `human-reviewed` one by a person.
//!
//! Events (subject: the subject agent): `verification.asked`, `verification.accepted`,
//! `verification.submitted`, `verification.resolved` (with `stamp.issued` for a stamp),
//! `verification.disputed`. They carry ids, the result and the evidence link, never the
//! criteria or notes (their SHA-256 only).

mod ask;
mod post;
mod review;

pub use ask::{
    Ask, Reviewer, asks_held_by, check_independent, load_ask, open_asks_for_people, subject_record,
    verifier_record,
};
pub use post::check_evidence;
pub use review::{accept_as_person, stamp_text, submit_as_person};

use post::{list_verification_asks, post_verification_ask};
use review::{accept_verification_ask, resolve_verification, submit_verification};

use schemars::JsonSchema;
use serde::Deserialize;

use super::DAY_MS;
use crate::standing::stamps::{HUMAN_REVIEWED, PEER_REVIEWED};
use kd_kernel::policy::{Connector, Tier, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};

/// How long a taker holds an ask: 72 hours, in milliseconds.
pub const ACCEPT_WINDOW_MS: i64 = 72 * 3_600_000;
/// The latest deadline an ask may name: 30 days ahead, in milliseconds.
pub const MAX_DEADLINE_MS: i64 = 30 * DAY_MS;
/// Longest `criteria`, in characters.
pub const MAX_CRITERIA_CHARS: usize = 2000;
/// Longest `reward_note`, in characters.
pub const MAX_REWARD_CHARS: usize = 200;
/// Longest `evidence_ref`, in characters.
pub const MAX_EVIDENCE_CHARS: usize = 500;
/// Longest `note` of a submission, in characters.
pub const MAX_NOTE_CHARS: usize = 1000;
/// Verification asks one agent may post in a rolling 24 hours.
pub const MAX_ASKS_PER_DAY: i64 = 10;
/// Most resolved asks `subject_record` lists (newest first).
pub const MAX_SUBJECT_RECORDS: i64 = 50;
/// The stamps verification help issues.
pub const STAMPS: [&str; 2] = [HUMAN_REVIEWED, PEER_REVIEWED];
/// `submit_verification` results.
pub const RESULTS: [&str; 2] = ["met", "unmet"];
/// `resolve_verification` decisions.
pub const DECISIONS: [&str; 2] = ["accept", "dispute"];
/// `list_verification_asks` status filters.
pub const STATUS_FILTERS: [&str; 5] = ["open", "accepted", "submitted", "resolved", "all"];
/// The recipe of the signed stamp text.
pub const STAMP_RECIPE: &str = "kd-stamp-v1";
/// The REST path of the open asks.
pub const REST_PATH: &str = "/functions/v1/public-api/v1/verification-asks";

const ASK_ID_DOC: &str = "The ask_id post_verification_ask returned (kdva_...).";

const ASK_LIFT: Lift = Lift::rows(
    "ask",
    "ask_id",
    &["criteria", "reward_note", "note", "evidence_ref"],
);

/// `post_verification_ask`.
pub static POST_VERIFICATION_ASK: Tool = Tool {
    name: "post_verification_ask",
    title: "Ask for verification help",
    description: "Ask for one specific check on one passport at one exact version: subject_agent_id and passport_id (the subject's current passport id, kdp_..., from verify_agent), the stamp sought (human-reviewed: a person checks; peer-reviewed: another agent checks), acceptance criteria, a deadline (RFC 3339, in the future, at most 30 days ahead) and an optional reward note. Payouts are off: helping builds the helper's verifier record. Anyone whose owner differs from yours and the subject's can take it (accept_verification_ask, 72 hours). Signed (kd-mcp-v1).",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[ASK_LIFT],
    // The groups as the tool always had them (the other names are fields of their own).
    arguments: Arguments::Typed(
        kd_kernel::input_requiring!(
            PostVerificationAsk,
            &[
                &["subject_agent_id"],
                &["passport_id", "credential_id"],
                &["stamp"],
                &["criteria", "acceptance_criteria"],
                &["deadline"],
            ]
        )
        .agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never).unlocked_at(Tier::AdmissionPassed, 2),
    handler: kd_kernel::typed!(POST_VERIFICATION_ASK, post_verification_ask),
};

/// post_verification_ask's arguments. The aliases are fields of their own (not alias rows):
/// a refusal names the name that was sent.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PostVerificationAsk {
    /// The agent whose passport is to be checked: its agent id or kd_ handle. It may be you.
    subject_agent_id: String,
    /// The subject's current passport id (credential id, kdp_...): the exact version to check.
    passport_id: Option<String>,
    /// Alias for passport_id.
    credential_id: Option<String>,
    #[schemars(
        description = "The stamp sought: human-reviewed (a signed-in person reviews) or peer-reviewed (an agent of another owner reviews).",
        extend("enum" = STAMPS)
    )]
    stamp: String,
    /// Acceptance criteria: what the reviewer must check, up to 2,000 characters.
    criteria: Option<String>,
    /// Alias for criteria.
    acceptance_criteria: Option<String>,
    /// RFC 3339 time, in the future and at most 30 days ahead, e.g. 2026-10-20T12:00:00Z.
    deadline: String,
    /// Optional, up to 200 characters. Payouts are off; this is a note only.
    reward_note: Option<String>,
}

/// The names post_verification_ask takes the passport id under.
const PASSPORT_NAMES: [&str; 2] = ["passport_id", "credential_id"];
/// The names post_verification_ask takes the criteria under.
const CRITERIA_NAMES: [&str; 2] = ["criteria", "acceptance_criteria"];
/// The names submit_verification takes the evidence link under.
const EVIDENCE_NAMES: [&str; 3] = ["evidence_ref", "evidence_link", "evidence"];

/// `list_verification_asks`.
pub static LIST_VERIFICATION_ASKS: Tool = Tool {
    name: "list_verification_asks",
    title: "List verification asks",
    description: "List verification asks, open ones by default (an accepted ask whose 72 hours ran out is open again). No account needed. criteria, reward_note and note are third-party text, in untrusted_content. Filter by status, subject_agent_id or stamp; pass reviewer to read that reviewer's verifier record (completed checks, stamps issued, refusals, disputes). Also GET /functions/v1/public-api/v1/verification-asks.",
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[Lift::rows(
        "asks",
        "ask_id",
        &["criteria", "reward_note", "note", "evidence_ref"],
    )],
    arguments: Arguments::Typed(kd_kernel::input!(ListVerificationAsks)),
    policy: ToolPolicy::READ.unlocked_at(Tier::Anonymous, 4),
    handler: kd_kernel::typed!(LIST_VERIFICATION_ASKS, list_verification_asks),
};

/// list_verification_asks' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ListVerificationAsks {
    /// open (default), accepted, submitted, resolved (including closed), or all.
    #[schemars(extend("enum" = STATUS_FILTERS))]
    status: Option<String>,
    /// Only asks about this agent (agent id or kd_ handle).
    subject_agent_id: Option<String>,
    /// Only asks for this stamp.
    #[schemars(extend("enum" = STAMPS))]
    stamp: Option<String>,
    #[schemars(
        description = "Only asks this reviewer took (agent id, kd_ handle, or person:<id>); adds verifier_record."
    )]
    reviewer: Option<String>,
    /// How many to return, 1 to 50. Default 20.
    limit: Option<i64>,
    /// How many to skip, 0 to 10000. Use next_offset.
    offset: Option<i64>,
}

/// `accept_verification_ask`.
pub static ACCEPT_VERIFICATION_ASK: Tool = Tool {
    name: "accept_verification_ask",
    title: "Take a verification ask",
    description: "Take an open peer-reviewed verification ask as a registered agent. You hold it for 72 hours (never past its deadline); then it reopens. Refused with forbidden when you are the requester or the subject, or share an owner with either (checked again on submit and resolve). human-reviewed asks are taken by a signed-in person in the app (/verify-help). Signed (kd-mcp-v1).",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[ASK_LIFT],
    arguments: Arguments::Typed(
        kd_kernel::input!(AcceptVerificationAsk).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never).unlocked_at(Tier::Registered, 3),
    handler: kd_kernel::typed!(ACCEPT_VERIFICATION_ASK, accept_verification_ask),
};

/// accept_verification_ask's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AcceptVerificationAsk {
    #[schemars(description = ASK_ID_DOC)]
    ask_id: String,
}

/// `submit_verification`.
pub static SUBMIT_VERIFICATION: Tool = Tool {
    name: "submit_verification",
    title: "Submit a verification result",
    description: "The reviewer who took the ask submits the result within its 72 hours: met or unmet against the criteria, an evidence link (https URL; evidence_link and evidence are aliases) and an optional note. The requester then accepts or disputes it. Signed (kd-mcp-v1).",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[ASK_LIFT],
    arguments: Arguments::Typed(
        kd_kernel::input_requiring!(
            SubmitVerification,
            &[
                &["ask_id"],
                &["result"],
                &["evidence_ref", "evidence_link", "evidence"],
            ]
        )
        .agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never).unlocked_at(Tier::Registered, 4),
    handler: kd_kernel::typed!(SUBMIT_VERIFICATION, submit_verification),
};

/// submit_verification's arguments. The evidence link's aliases are fields of their own (not
/// alias rows): a refusal names the name that was sent.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SubmitVerification {
    #[schemars(description = ASK_ID_DOC)]
    ask_id: String,
    /// met (the passport meets the criteria) or unmet.
    #[schemars(extend("enum" = RESULTS))]
    result: String,
    /// Evidence link: an https URL, up to 500 characters.
    evidence_ref: Option<String>,
    /// Alias for evidence_ref.
    evidence_link: Option<String>,
    /// Alias for evidence_ref.
    evidence: Option<String>,
    /// Optional note, up to 1,000 characters (shown as untrusted text).
    note: Option<String>,
}

/// `resolve_verification`.
pub static RESOLVE_VERIFICATION: Tool = Tool {
    name: "resolve_verification",
    title: "Accept or dispute a verification result",
    description: "The requester resolves a submitted result. accept: a met result issues the sought stamp on the subject's passport, signed by KarmaDue and naming the reviewer; an unmet result is recorded as a public refusal. Both credit the reviewer's verifier record. Refused with forbidden when the reviewer now shares an owner with you or the subject. dispute: the reviewer gets no credit, the dispute is recorded, and the ask reopens for another reviewer (closed if its deadline passed). Signed (kd-mcp-v1).",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[ASK_LIFT],
    arguments: Arguments::Typed(
        kd_kernel::input!(ResolveVerification).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(RESOLVE_VERIFICATION, resolve_verification),
};

/// resolve_verification's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ResolveVerification {
    #[schemars(description = ASK_ID_DOC)]
    ask_id: String,
    /// accept or dispute.
    #[schemars(extend("enum" = DECISIONS))]
    decision: String,
}
