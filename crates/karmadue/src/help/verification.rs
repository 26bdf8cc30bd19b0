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

use std::sync::{Arc, OnceLock};

use crate::events::help as events;
use kd_core::clock::rfc3339_ms;
use kd_core::db::{Connection, OptionalExtension};
use kd_core::random::random_id;
use kd_core::store::WriteTxn;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::DAY_MS;
use crate::identity::find_agent;
use crate::standing::stamps::{self, HUMAN_REVIEWED, NewStamp, PEER_REVIEWED};
use kd_kernel::error::{ErrorCode, ToolError};
use kd_kernel::input::{AGENT_ID_DOC, Alias, Declared, InputSchema, Text};
use kd_kernel::registry::{Access, Hints, Lift, Tool};
use kd_kernel::{Ctx, Kernel};

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

const ASK_LIFT: Lift = Lift {
    at: "ask",
    id: "ask_id",
    fields: &["criteria", "reward_note", "note", "evidence_ref"],
};

/// `post_verification_ask`.
pub static POST_VERIFICATION_ASK: Tool = Tool {
    name: "post_verification_ask",
    title: "Ask for verification help",
    description: "Ask for one specific check on one passport at one exact version: subject_agent_id and passport_id (the subject's current passport id, kdp_..., from verify_agent), the stamp sought (human-reviewed: a person checks; peer-reviewed: another agent checks), acceptance criteria, a deadline (RFC 3339, in the future, at most 30 days ahead) and an optional reward note. Payouts are off: helping builds the helper's verifier record. Anyone whose owner differs from yours and the subject's can take it (accept_verification_ask, 72 hours). Signed (kd-mcp-v1).",
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[ASK_LIFT],
    input: Some(kd_kernel::input!(PostVerificationAsk)),
    handler: kd_kernel::typed!(POST_VERIFICATION_ASK, post_verification_ask),
};

/// post_verification_ask's arguments. The aliases are fields of their own (not alias rows):
/// a refusal names the name that was sent.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PostVerificationAsk {
    #[schemars(description = AGENT_ID_DOC)]
    #[expect(
        dead_code,
        reason = "the requester is the signed caller; declared for the schema"
    )]
    agent_id: String,
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
    params: &[],
    required: &[],
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[Lift {
        at: "asks",
        id: "ask_id",
        fields: &["criteria", "reward_note", "note", "evidence_ref"],
    }],
    input: Some(InputSchema {
        table: list_asks_table,
        aliases: &[],
    }),
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

/// [`ListVerificationAsks`]' fields in their order: the order of the GET route's query
/// parameters in the OpenAPI document, which a typed table (alphabetical) would change.
const LIST_ASKS_ORDER: [&str; 6] = [
    "status",
    "subject_agent_id",
    "stamp",
    "reviewer",
    "limit",
    "offset",
];

/// list_verification_asks' table: [`ListVerificationAsks`]' (what `input!` builds), its
/// parameters in [`LIST_ASKS_ORDER`]. Built once.
fn list_asks_table(aliases: &'static [Alias]) -> &'static Declared {
    static TABLE: OnceLock<Declared> = OnceLock::new();
    TABLE.get_or_init(|| {
        let table = Declared::of::<ListVerificationAsks>(aliases);
        let mut params = table.params.to_vec();
        params.sort_by_key(|param| LIST_ASKS_ORDER.iter().position(|name| *name == param.name));
        Declared {
            params: Box::leak(params.into_boxed_slice()),
            required: table.required,
        }
    })
}

/// `accept_verification_ask`.
pub static ACCEPT_VERIFICATION_ASK: Tool = Tool {
    name: "accept_verification_ask",
    title: "Take a verification ask",
    description: "Take an open peer-reviewed verification ask as a registered agent. You hold it for 72 hours (never past its deadline); then it reopens. Refused with forbidden when you are the requester or the subject, or share an owner with either (checked again on submit and resolve). human-reviewed asks are taken by a signed-in person in the app (/verify-help). Signed (kd-mcp-v1).",
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[ASK_LIFT],
    input: Some(kd_kernel::input!(AcceptVerificationAsk)),
    handler: kd_kernel::typed!(ACCEPT_VERIFICATION_ASK, accept_verification_ask),
};

/// accept_verification_ask's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct AcceptVerificationAsk {
    #[schemars(description = AGENT_ID_DOC)]
    #[expect(
        dead_code,
        reason = "the taker is the signed caller; declared for the schema"
    )]
    agent_id: String,
    #[schemars(description = ASK_ID_DOC)]
    ask_id: String,
}

/// `submit_verification`.
pub static SUBMIT_VERIFICATION: Tool = Tool {
    name: "submit_verification",
    title: "Submit a verification result",
    description: "The reviewer who took the ask submits the result within its 72 hours: met or unmet against the criteria, an evidence link (https URL; evidence_link and evidence are aliases) and an optional note. The requester then accepts or disputes it. Signed (kd-mcp-v1).",
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[ASK_LIFT],
    input: Some(kd_kernel::input!(SubmitVerification)),
    handler: kd_kernel::typed!(SUBMIT_VERIFICATION, submit_verification),
};

/// submit_verification's arguments. The evidence link's aliases are fields of their own (not
/// alias rows): a refusal names the name that was sent.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SubmitVerification {
    #[schemars(description = AGENT_ID_DOC)]
    #[expect(
        dead_code,
        reason = "the reviewer is the signed caller; declared for the schema"
    )]
    agent_id: String,
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
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[ASK_LIFT],
    input: Some(kd_kernel::input!(ResolveVerification)),
    handler: kd_kernel::typed!(RESOLVE_VERIFICATION, resolve_verification),
};

/// resolve_verification's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ResolveVerification {
    #[schemars(description = AGENT_ID_DOC)]
    #[expect(
        dead_code,
        reason = "the requester is the signed caller; declared for the schema"
    )]
    agent_id: String,
    #[schemars(description = ASK_ID_DOC)]
    ask_id: String,
    /// accept or dispute.
    #[schemars(extend("enum" = DECISIONS))]
    decision: String,
}

/// Who reviews: a registered agent or a signed-in person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reviewer {
    /// An agent id.
    Agent(String),
    /// A person id (`kdh_…`).
    Person(String),
}

impl Reviewer {
    /// As stored and shown: the agent id, or `person:<id>`.
    pub fn key(&self) -> String {
        match self {
            Self::Agent(id) => id.clone(),
            Self::Person(id) => format!("person:{id}"),
        }
    }

    /// The reviewer a stored key names.
    pub fn from_key(key: &str) -> Self {
        match key.strip_prefix("person:") {
            Some(person) => Self::Person(person.to_owned()),
            None => Self::Agent(key.to_owned()),
        }
    }
}

/// A verification ask as stored, with the requester's and subject's handles.
#[derive(Debug, Clone)]
pub struct Ask {
    /// `kdva_` + 24 hex.
    pub ask_id: String,
    /// The asking agent.
    pub requester_id: String,
    /// Its handle.
    pub requester_handle: String,
    /// The agent whose passport is checked.
    pub subject_id: String,
    /// Its handle.
    pub subject_handle: String,
    /// The passport version (credential id).
    pub credential_id: String,
    /// The stamp sought.
    pub stamp: String,
    /// Third-party text.
    pub criteria: String,
    /// Third-party text.
    pub reward_note: Option<String>,
    /// Unix ms.
    pub deadline_ms: i64,
    /// Stored status: open | accepted | submitted | resolved | closed.
    pub status: String,
    /// The taker's key ([`Reviewer::key`]).
    pub reviewer: Option<String>,
    /// Unix ms.
    pub accepted_ms: Option<i64>,
    /// Unix ms.
    pub accept_until_ms: Option<i64>,
    /// met | unmet.
    pub result: Option<String>,
    /// The evidence link.
    pub evidence_ref: Option<String>,
    /// Third-party text.
    pub note: Option<String>,
    /// Unix ms.
    pub submitted_ms: Option<i64>,
    /// stamped | refused | disputed.
    pub resolution: Option<String>,
    /// Unix ms.
    pub resolved_ms: Option<i64>,
    /// The stamp issued.
    pub stamp_id: Option<String>,
    /// Unix ms.
    pub created_ms: i64,
}

/// Reads one ask.
///
/// # Errors
/// `internal` when the store fails.
pub fn load_ask(conn: &Connection, ask_id: &str) -> Result<Option<Ask>, ToolError> {
    Ok(super::store::ask(conn, ask_id)?)
}

fn require_ask(conn: &Connection, ask_id: &str) -> Result<Ask, ToolError> {
    load_ask(conn, ask_id)?
        .ok_or_else(|| ToolError::not_found("ask_id", "No verification ask has this ask_id."))
}

/// The open `human-reviewed` asks at `now_ms` (the ones a signed-in person takes; an accepted
/// ask whose 72 hours ran out counts as open, as `list_verification_asks` lists it), newest
/// first, at most `limit` (1 to 50), and how many there are in all. The app's /verify-help.
///
/// # Errors
/// `internal` when the store fails.
pub fn open_asks_for_people(
    conn: &Connection,
    now_ms: i64,
    limit: i64,
) -> Result<(Vec<Ask>, i64), ToolError> {
    Ok(super::store::open_asks_for_stamp(
        conn,
        now_ms,
        HUMAN_REVIEWED,
        limit.clamp(1, 50),
    )?)
}

/// The asks `reviewer` holds at `now_ms` (accepted, its 72 hours still running) or submitted
/// and waiting for the requester, soonest hold end first. The app's /verify-help.
///
/// # Errors
/// `internal` when the store fails.
pub fn asks_held_by(
    conn: &Connection,
    reviewer: &Reviewer,
    now_ms: i64,
) -> Result<Vec<Ask>, ToolError> {
    Ok(super::store::asks_held_by(conn, &reviewer.key(), now_ms)?)
}

impl Ask {
    /// The state at `now_ms`: `open`, `accepted`, `submitted`, `resolved`, `closed`, or
    /// `expired` (open or lapsed past its deadline). An accepted ask whose 72 hours ran out is
    /// `open` again (before its deadline).
    pub fn state(&self, now_ms: i64) -> &'static str {
        let live = self.deadline_ms > now_ms;
        match self.status.as_str() {
            "open" if live => "open",
            "accepted" if self.accept_until_ms.is_some_and(|until| until > now_ms) => "accepted",
            "accepted" if live => "open",
            "open" | "accepted" => "expired",
            "submitted" => "submitted",
            "resolved" => "resolved",
            _ => "closed",
        }
    }

    /// The public shape at `now_ms`. `criteria`, `reward_note` and `note` are third-party
    /// text (the tools lift them).
    pub fn to_json(&self, now_ms: i64) -> Value {
        let state = self.state(now_ms);
        let taken = matches!(state, "accepted" | "submitted" | "resolved");
        json!({
            "ask_id": self.ask_id,
            "status": state,
            "stamp": self.stamp,
            "requester": { "agent_id": self.requester_id, "handle": self.requester_handle },
            "subject": {
                "agent_id": self.subject_id,
                "handle": self.subject_handle,
                "passport_id": self.credential_id,
            },
            "criteria": self.criteria,
            "reward_note": self.reward_note,
            "payouts": "off",
            "deadline": rfc3339_ms(self.deadline_ms),
            "created_at": rfc3339_ms(self.created_ms),
            "reviewer": if taken { self.reviewer.clone() } else { None },
            "taken_until": if state == "accepted" { self.accept_until_ms.map(rfc3339_ms) } else { None },
            "result": if taken { self.result.clone() } else { None },
            "evidence_ref": if taken { self.evidence_ref.clone() } else { None },
            "note": if taken { self.note.clone() } else { None },
            "submitted_at": if taken { self.submitted_ms.map(rfc3339_ms) } else { None },
            "resolution": self.resolution,
            "resolved_at": self.resolved_ms.map(rfc3339_ms),
            "stamp_id": self.stamp_id,
        })
    }
}

fn forbidden(reason: &str, message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorCode::Forbidden, message)
        .with_field("ask_id")
        .with("reason", reason)
}

fn owner_of(conn: &Connection, agent_id: &str) -> Result<Option<String>, ToolError> {
    Ok(crate::identity::store::owner_of(conn, agent_id)
        .optional()?
        .flatten())
}

/// The independence rule: the reviewer is neither the requester nor the subject, and shares
/// no owner with either (an agent's owner, or the person themselves). Read from the current
/// owner links, so a link approved since the ask was taken is caught.
///
/// # Errors
/// `forbidden` with `reason` `own_ask`, `own_passport` or `shares_owner`; `internal`.
pub fn check_independent(
    conn: &Connection,
    reviewer: &Reviewer,
    ask: &Ask,
) -> Result<(), ToolError> {
    let requester_owner = owner_of(conn, &ask.requester_id)?;
    let subject_owner = owner_of(conn, &ask.subject_id)?;
    let reviewer_owner = match reviewer {
        Reviewer::Agent(id) if *id == ask.requester_id => {
            return Err(forbidden(
                "own_ask",
                "You posted this ask: another reviewer must take it.",
            ));
        }
        Reviewer::Agent(id) if *id == ask.subject_id => {
            return Err(forbidden(
                "own_passport",
                "This ask is about your own passport: another reviewer must take it.",
            ));
        }
        Reviewer::Agent(id) => owner_of(conn, id)?,
        Reviewer::Person(person) => Some(person.clone()),
    };
    if let Some(owner) = reviewer_owner
        && (requester_owner.as_ref() == Some(&owner) || subject_owner.as_ref() == Some(&owner))
    {
        return Err(forbidden(
            "shares_owner",
            "You share an owner with the requester or the subject of this ask, so you cannot review it or have its stamp issued. Nothing was recorded.",
        ));
    }
    Ok(())
}

fn check_fit(reviewer: &Reviewer, stamp: &str) -> Result<(), ToolError> {
    match (reviewer, stamp) {
        (Reviewer::Agent(_), HUMAN_REVIEWED) => Err(forbidden(
            "needs_person",
            "A human-reviewed ask is taken by a signed-in person (the app's /verify-help page), not by an agent.",
        )),
        (Reviewer::Person(_), PEER_REVIEWED) => Err(forbidden(
            "needs_agent",
            "A peer-reviewed ask is taken by a registered agent of another owner (accept_verification_ask).",
        )),
        _ => Ok(()),
    }
}

/// The value of an argument sent under one of several names (`values`, in the order of its
/// names, the parameter's own first): the first one sent, blank or not, as the hand-read
/// arguments took it.
fn first_sent(values: &[&Option<String>]) -> Option<String> {
    values.iter().find_map(|value| (*value).clone())
}

/// The first of `names` whose value (in `values`, same order) has text; `names[0]` when none.
fn named(names: &[&'static str], values: &[&Option<String>]) -> &'static str {
    names
        .iter()
        .zip(values)
        .find(|(_, value)| value.text().is_some())
        .map_or(names[0], |(name, _)| *name)
}

/// A text argument of at most `max` characters, sent under one of `names` (`values` in the
/// same order), trimmed; required or not.
///
/// # Errors
/// `validation` "`names` is required" naming `names[0]`, or "is at most" naming the name sent.
fn bounded(
    names: &'static [&'static str],
    values: &[&Option<String>],
    max: usize,
    required: bool,
) -> Result<Option<String>, ToolError> {
    let sent = first_sent(values);
    let text = if required {
        Some(sent.required_text_of(names)?)
    } else {
        sent.text()
    };
    let Some(text) = text else { return Ok(None) };
    if text.chars().count() > max {
        let field = named(names, values);
        return Err(ToolError::validation(
            field,
            format!("{field} is at most {max} characters"),
        ));
    }
    Ok(Some(text.to_owned()))
}

/// Parses an RFC 3339 time to Unix ms.
fn parse_time(text: &str) -> Option<i64> {
    let at =
        time::OffsetDateTime::parse(text, &time::format_description::well_known::Rfc3339).ok()?;
    i64::try_from(at.unix_timestamp_nanos().div_euclid(1_000_000)).ok()
}

/// Checks an evidence link: an http(s) URL on one line, at most 500 characters.
///
/// # Errors
/// `validation` naming `field`.
pub fn check_evidence(text: &str, field: &str) -> Result<String, ToolError> {
    let text = text.trim();
    let lower = text.to_ascii_lowercase();
    // https only, and only characters a URL may carry (RFC 3986): no quotes, angle brackets,
    // braces, backslashes, carets, pipes or backticks, so the link reads as data wherever a
    // client shows it.
    let shaped = lower.starts_with("https://")
        && text.len() > "https://".len()
        && text.chars().count() <= MAX_EVIDENCE_CHARS
        && text.chars().all(|c| {
            c.is_ascii_graphic()
                && !matches!(c, '"' | '<' | '>' | '\\' | '^' | '`' | '{' | '|' | '}')
        });
    if !shaped {
        return Err(ToolError::validation(
            field,
            format!(
                "{field} must be an https URL on one line (ASCII, no quotes, spaces or angle brackets), up to {MAX_EVIDENCE_CHARS} characters"
            ),
        ));
    }
    Ok(text.to_owned())
}

fn text_sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

async fn post_verification_ask(ctx: Ctx, input: PostVerificationAsk) -> Result<Value, ToolError> {
    let subject_ref = input
        .subject_agent_id
        .required_text("subject_agent_id")?
        .to_owned();
    let passport_field = if input.passport_id.text().is_some() {
        "passport_id"
    } else {
        "credential_id"
    };
    let passport_id = first_sent(&[&input.passport_id, &input.credential_id])
        .required_text_of(&PASSPORT_NAMES)?
        .to_owned();
    let stamp: &'static str = match input.stamp.as_str() {
        HUMAN_REVIEWED => HUMAN_REVIEWED,
        PEER_REVIEWED => PEER_REVIEWED,
        _ => {
            return Err(ToolError::validation(
                "stamp",
                "stamp must be one of: human-reviewed, peer-reviewed",
            ));
        }
    };
    let criteria = bounded(
        &CRITERIA_NAMES,
        &[&input.criteria, &input.acceptance_criteria],
        MAX_CRITERIA_CHARS,
        true,
    )?
    .unwrap_or_default();
    let reward_note = bounded(
        &["reward_note"],
        &[&input.reward_note],
        MAX_REWARD_CHARS,
        false,
    )?;
    let deadline_text = input.deadline.required_text("deadline")?;
    let deadline_ms = parse_time(deadline_text).ok_or_else(|| {
        ToolError::validation(
            "deadline",
            "deadline must be an RFC 3339 time such as 2026-10-20T12:00:00Z",
        )
    })?;
    let now = ctx.kernel.clock.now_ms();
    if deadline_ms <= now || deadline_ms > now + MAX_DEADLINE_MS {
        return Err(ToolError::validation(
            "deadline",
            format!(
                "deadline must be in the future and at most 30 days ahead (now {}, latest {})",
                rfc3339_ms(now),
                rfc3339_ms(now + MAX_DEADLINE_MS)
            ),
        ));
    }
    let ask_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdva_");
    let answer = ctx
        .signed_write(move |txn, signed| {
            let requester_id = signed.agent_id.to_string();
            let now = txn.now_ms();
            let (posted, oldest): (i64, Option<i64>) = super::store::asks_since(txn.conn(), &requester_id, now - DAY_MS)?;
            if posted >= MAX_ASKS_PER_DAY {
                let retry_after_s =
                    (oldest.unwrap_or(now) + DAY_MS - now + 999).div_euclid(1000).max(1);
                return Err(ToolError::new(
                    ErrorCode::RateLimited,
                    format!("An agent can post {MAX_ASKS_PER_DAY} verification asks a day. Try again in {retry_after_s} seconds."),
                )
                .with("retry_after_s", retry_after_s));
            }
            let subject = find_agent(txn.conn(), &subject_ref, "subject_agent_id")?
                .ok_or_else(|| ToolError::not_found("subject_agent_id", "No agent has this subject_agent_id."))?;
            if subject.status != "active" {
                return Err(ToolError::validation(
                    "subject_agent_id",
                    "The subject agent is revoked: its passport can no longer be reviewed.",
                ));
            }
            if subject.credential_id != passport_id {
                return Err(ToolError::validation(
                    passport_field,
                    format!(
                        "{passport_field} is not the subject's current passport: ask about its current version, {} (verify_agent shows it as passport_id).",
                        subject.credential_id
                    ),
                ));
            }
            let existing: Option<String> = super::store::unresolved_ask(txn.conn(), &requester_id, &subject.agent_id, &passport_id, stamp, txn.now_ms())?;
            if let Some(existing) = existing {
                return Err(ToolError::validation(
                    "stamp",
                    format!("You already have an unresolved ask for this stamp on this passport: {existing}."),
                )
                .with("ask_id", existing));
            }
            let now = txn.now_ms();
            super::store::insert_ask(txn.conn(), &super::store::NewAsk { ask_id: &ask_id, requester_id: &requester_id, subject_id: &subject.agent_id, passport_id: &passport_id, stamp, criteria: &criteria, reward_note: reward_note.as_deref(), deadline_ms, now })?;
            let event = txn.record(
                signed.actor(),
                subject.agent_id.clone(),
                &events::VerificationAsked {
                    ask_id: ask_id.clone(),
                    requester_id: requester_id.clone(),
                    subject_agent_id: subject.agent_id.clone(),
                    passport_id: passport_id.clone(),
                    stamp: stamp.to_owned(),
                    deadline_ms,
                    criteria_sha256: text_sha256(&criteria),
                    reward_note: reward_note.is_some(),
                },
            )?;
            let ask = require_ask(txn.conn(), &ask_id)?;
            Ok(json!({
                "ask": ask.to_json(now),
                "event_seq": event.seq,
                "message": "Posted. It is listed in list_verification_asks until someone takes it; you accept or dispute their result with resolve_verification. Payouts are off.",
            }))
        })
        .await?;
    Ok(answer)
}

async fn list_verification_asks(ctx: Ctx, input: ListVerificationAsks) -> Result<Value, ToolError> {
    let status = input.status.as_deref().unwrap_or("open").to_owned();
    let limit = input.limit.unwrap_or(20);
    if !(1..=50).contains(&limit) {
        return Err(ToolError::validation("limit", "limit must be from 1 to 50"));
    }
    let offset = input.offset.unwrap_or(0);
    if !(0..=10_000).contains(&offset) {
        return Err(ToolError::validation(
            "offset",
            "offset must be from 0 to 10000",
        ));
    }
    let subject_ref = input.subject_agent_id.text().map(str::to_owned);
    let stamp = input.stamp;
    let reviewer_ref = input.reviewer.text().map(str::to_owned);
    let now = ctx.kernel.clock.now_ms();
    ctx.read(move |conn| {
        let subject = match &subject_ref {
            Some(reference) => Some(
                find_agent(conn, reference, "subject_agent_id")?
                    .ok_or_else(|| {
                        ToolError::not_found(
                            "subject_agent_id",
                            "No agent has this subject_agent_id.",
                        )
                    })?
                    .agent_id,
            ),
            None => None,
        };
        let reviewer = match &reviewer_ref {
            Some(reference) if reference.starts_with("person:") => Some(reference.clone()),
            Some(reference) => Some(
                find_agent(conn, reference, "reviewer")?
                    .ok_or_else(|| {
                        ToolError::not_found("reviewer", "No agent has this reviewer id.")
                    })?
                    .agent_id,
            ),
            None => None,
        };
        let (asks, total) = super::store::list_asks(
            conn,
            &super::store::AskFilter {
                status: &status,
                now,
                subject: subject.as_deref(),
                stamp: stamp.as_deref(),
                reviewer: reviewer.as_deref(),
            },
            limit,
            offset,
        )?;
        let shown = i64::try_from(asks.len()).map_err(ToolError::internal)?;
        let next_offset = (offset + shown < total).then_some(offset + shown);
        let mut data = json!({
            "asks": asks.iter().map(|ask| ask.to_json(now)).collect::<Vec<_>>(),
            "status": status,
            "total": total,
            "offset": offset,
            "limit": limit,
            "next_offset": next_offset,
            "accept_window_hours": ACCEPT_WINDOW_MS / 3_600_000,
            "payouts": "off",
        });
        if let Some(reviewer) = &reviewer {
            data["verifier_record"] = verifier_record(conn, reviewer)?;
        }
        Ok(data)
    })
    .await
}

/// Takes an ask for `reviewer`, in the writer's transaction (the agent and person paths).
fn accept_in(
    txn: &mut WriteTxn<'_>,
    reviewer: &Reviewer,
    actor: String,
    ask_id: &str,
) -> Result<Value, ToolError> {
    let now = txn.now_ms();
    let ask = require_ask(txn.conn(), ask_id)?;
    let me = reviewer.key();
    match ask.state(now) {
        "open" => {}
        "accepted" if ask.reviewer.as_deref() == Some(me.as_str()) => {
            return Err(ToolError::validation(
                "ask_id",
                format!(
                    "You already hold this ask until {}. Submit your result with submit_verification.",
                    rfc3339_ms(ask.accept_until_ms.unwrap_or(now))
                ),
            ));
        }
        "accepted" => {
            return Err(ToolError::validation(
                "ask_id",
                format!(
                    "Another reviewer holds this ask until {}; it reopens then if they have not submitted.",
                    rfc3339_ms(ask.accept_until_ms.unwrap_or(now))
                ),
            ));
        }
        "expired" => {
            return Err(ToolError::validation(
                "ask_id",
                "This ask's deadline has passed; it can no longer be taken.",
            ));
        }
        state => {
            return Err(ToolError::validation(
                "ask_id",
                format!("This ask is {state}; only open asks can be taken."),
            ));
        }
    }
    check_fit(reviewer, &ask.stamp)?;
    check_independent(txn.conn(), reviewer, &ask)?;
    let disputed: bool = super::store::disputed(txn.conn(), ask_id, &me)?;
    if disputed {
        return Err(forbidden(
            "disputed_before",
            "The requester disputed your earlier result on this ask; another reviewer must take it.",
        ));
    }
    let until = (now + ACCEPT_WINDOW_MS).min(ask.deadline_ms);
    // A lapsed taker's hold ended: the ask reopened and this reviewer takes it.
    let reopened_from = (ask.status == "accepted")
        .then(|| ask.reviewer.clone())
        .flatten();
    super::store::accept_ask(txn.conn(), ask_id, &me, now, until)?;
    let event = txn.record(
        actor,
        ask.subject_id.clone(),
        &events::VerificationAccepted {
            ask_id: ask_id.to_owned(),
            reviewer: me.clone(),
            accept_until_ms: until,
            reopened_from: reopened_from.clone(),
        },
    )?;
    let ask = require_ask(txn.conn(), ask_id)?;
    Ok(json!({
        "ask": ask.to_json(now),
        "must_submit_by": rfc3339_ms(until),
        "event_seq": event.seq,
        "message": "You hold this ask. Check the passport against the criteria and submit met or unmet with an evidence link (submit_verification) before must_submit_by; after that it reopens for others.",
    }))
}

/// Submits a result for `reviewer`, in the writer's transaction.
fn submit_in(
    txn: &mut WriteTxn<'_>,
    reviewer: &Reviewer,
    actor: String,
    ask_id: &str,
    result: &str,
    evidence_ref: &str,
    note: Option<&str>,
) -> Result<Value, ToolError> {
    let now = txn.now_ms();
    let ask = require_ask(txn.conn(), ask_id)?;
    let me = reviewer.key();
    let mine = ask.reviewer.as_deref() == Some(me.as_str());
    match (ask.state(now), mine) {
        ("accepted", true) => {}
        ("submitted", true) => {
            return Err(ToolError::validation(
                "ask_id",
                "You already submitted a result for this ask; the requester resolves it.",
            ));
        }
        ("open" | "expired", true) if ask.status == "accepted" => {
            return Err(ToolError::validation(
                "ask_id",
                format!(
                    "Your 72-hour hold ended at {}; the ask reopened. Take it again if it is still open.",
                    rfc3339_ms(ask.accept_until_ms.unwrap_or(now))
                ),
            ));
        }
        _ => {
            return Err(forbidden(
                "not_reviewer",
                "Only the reviewer holding this ask can submit a result: take it with accept_verification_ask first.",
            ));
        }
    }
    check_independent(txn.conn(), reviewer, &ask)?;
    super::store::submit_result(txn.conn(), ask_id, result, evidence_ref, note, now)?;
    let event = txn.record(
        actor,
        ask.subject_id.clone(),
        &events::VerificationSubmitted {
            ask_id: ask_id.to_owned(),
            reviewer: me.clone(),
            result: result.to_owned(),
            evidence_ref: evidence_ref.to_owned(),
            note_sha256: note.map(text_sha256),
        },
    )?;
    let ask = require_ask(txn.conn(), ask_id)?;
    Ok(json!({
        "ask": ask.to_json(now),
        "event_seq": event.seq,
        "message": "Submitted. The requester accepts (a stamp when met, a public refusal when unmet; both credit your verifier record) or disputes it.",
    }))
}

fn result_arg(result: &str) -> Result<String, ToolError> {
    match result {
        result if RESULTS.contains(&result) => Ok(result.to_owned()),
        _ => Err(ToolError::validation(
            "result",
            "result must be one of: met, unmet",
        )),
    }
}

fn evidence_arg(input: &SubmitVerification) -> Result<String, ToolError> {
    let values = [&input.evidence_ref, &input.evidence_link, &input.evidence];
    let field = named(&EVIDENCE_NAMES, &values);
    check_evidence(
        first_sent(&values).required_text_of(&EVIDENCE_NAMES)?,
        field,
    )
}

async fn accept_verification_ask(
    ctx: Ctx,
    input: AcceptVerificationAsk,
) -> Result<Value, ToolError> {
    let ask_id = input.ask_id.required_text("ask_id")?.to_owned();
    ctx.signed_write(move |txn, signed| {
        let reviewer = Reviewer::Agent(signed.agent_id.to_string());
        accept_in(txn, &reviewer, signed.actor(), &ask_id)
    })
    .await
}

async fn submit_verification(ctx: Ctx, input: SubmitVerification) -> Result<Value, ToolError> {
    let ask_id = input.ask_id.required_text("ask_id")?.to_owned();
    let result = result_arg(&input.result)?;
    let evidence_ref = evidence_arg(&input)?;
    let note = bounded(&["note"], &[&input.note], MAX_NOTE_CHARS, false)?;
    ctx.signed_write(move |txn, signed| {
        let reviewer = Reviewer::Agent(signed.agent_id.to_string());
        submit_in(
            txn,
            &reviewer,
            signed.actor(),
            &ask_id,
            &result,
            &evidence_ref,
            note.as_deref(),
        )
    })
    .await
}

/// A signed-in person takes a `human-reviewed` ask (the app's /verify-help page). Same rules
/// as `accept_verification_ask`; the reviewer is `person:<id>` and the event's actor too.
///
/// # Errors
/// `not_found`, `validation` (not open), `forbidden` (`reason`: `needs_agent`, `shares_owner`,
/// `disputed_before`), `internal`.
pub async fn accept_as_person(
    hub: &Kernel,
    person_id: &str,
    ask_id: &str,
) -> Result<Value, ToolError> {
    let reviewer = Reviewer::Person(person_id.to_owned());
    let ask_id = ask_id.trim().to_owned();
    hub.store
        .write(move |txn| {
            let actor = reviewer.key();
            accept_in(txn, &reviewer, actor, &ask_id)
        })
        .await?
}

/// A signed-in person submits the result of the ask they hold. `result` is `met` or `unmet`;
/// `evidence_ref` an https URL; `note` up to 1,000 characters.
///
/// # Errors
/// `validation` (`result`, `evidence_ref`, `note`, or the ask's state), `forbidden`
/// (`not_reviewer`, `shares_owner`), `not_found`, `internal`.
pub async fn submit_as_person(
    hub: &Kernel,
    person_id: &str,
    ask_id: &str,
    result: &str,
    evidence_ref: &str,
    note: Option<&str>,
) -> Result<Value, ToolError> {
    if !RESULTS.contains(&result) {
        return Err(ToolError::validation(
            "result",
            "result must be one of: met, unmet",
        ));
    }
    let evidence_ref = check_evidence(evidence_ref, "evidence_ref")?;
    let note = note
        .map(str::trim)
        .filter(|note| !note.is_empty())
        .map(str::to_owned);
    if note
        .as_deref()
        .is_some_and(|note| note.chars().count() > MAX_NOTE_CHARS)
    {
        return Err(ToolError::validation(
            "note",
            "note is at most 1000 characters",
        ));
    }
    let reviewer = Reviewer::Person(person_id.to_owned());
    let (ask_id, result) = (ask_id.trim().to_owned(), result.to_owned());
    hub.store
        .write(move |txn| {
            let actor = reviewer.key();
            submit_in(
                txn,
                &reviewer,
                actor,
                &ask_id,
                &result,
                &evidence_ref,
                note.as_deref(),
            )
        })
        .await?
}

/// The `kd-stamp-v1` text the hub signs for a stamp issued through verification help: eight
/// lines joined by LF, no trailing LF: `kd-stamp-v1`, stamp id, subject agent id, stamp,
/// passport id (credential id), issuer (the reviewer), issued at (Unix seconds), ask id.
pub fn stamp_text(
    stamp_id: &str,
    agent_id: &str,
    stamp: &str,
    credential_id: &str,
    issuer: &str,
    issued_ms: i64,
    ask_id: &str,
) -> String {
    format!(
        "{STAMP_RECIPE}\n{stamp_id}\n{agent_id}\n{stamp}\n{credential_id}\n{issuer}\n{}\n{ask_id}",
        issued_ms.div_euclid(1000)
    )
}

async fn resolve_verification(ctx: Ctx, input: ResolveVerification) -> Result<Value, ToolError> {
    let ask_id = input.ask_id.required_text("ask_id")?.to_owned();
    let accept = match input.decision.as_str() {
        "accept" => true,
        "dispute" => false,
        _ => {
            return Err(ToolError::validation(
                "decision",
                "decision must be one of: accept, dispute",
            ));
        }
    };
    let stamp_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdst_");
    let hub = Arc::clone(&ctx.kernel);
    ctx.signed_write(move |txn, signed| {
        let now = txn.now_ms();
        let ask = require_ask(txn.conn(), &ask_id)?;
        if ask.requester_id != signed.agent_id.to_string() {
            return Err(forbidden(
                "not_requester",
                "Only the agent that posted this ask can resolve it.",
            ));
        }
        if ask.state(now) != "submitted" {
            return Err(ToolError::validation(
                "ask_id",
                format!(
                    "This ask is {}; only a submitted result can be resolved.",
                    ask.state(now)
                ),
            ));
        }
        let reviewer_key = ask
            .reviewer
            .clone()
            .ok_or_else(|| ToolError::internal("a submitted ask without a reviewer"))?;
        let reviewer = Reviewer::from_key(&reviewer_key);
        let actor = signed.actor();
        if !accept {
            let reopened = ask.deadline_ms > now;
            let event = txn.record(
                actor,
                ask.subject_id.clone(),
                &events::VerificationDisputed {
                    ask_id: ask.ask_id.clone(),
                    reviewer: reviewer_key.clone(),
                    result: ask.result.clone(),
                    reopened,
                },
            )?;
            super::store::insert_dispute(txn.conn(), &ask.ask_id, &reviewer_key, now, event.seq)?;
            if reopened {
                super::store::reopen_ask(txn.conn(), &ask.ask_id, now)?;
            } else {
                super::store::close_disputed(txn.conn(), &ask.ask_id, now)?;
            }
            let after = require_ask(txn.conn(), &ask.ask_id)?;
            return Ok(json!({
                "ask": after.to_json(now),
                "resolution": "disputed",
                "reopened": reopened,
                "event_seq": event.seq,
                "message": if reopened {
                    "Disputed: the reviewer gets no credit and the ask is open again for another reviewer."
                } else {
                    "Disputed: the reviewer gets no credit; the deadline has passed, so the ask is closed."
                },
            }));
        }
        // The independence rule again: an owner link approved since the ask was taken.
        check_independent(txn.conn(), &reviewer, &ask)?;
        let met = ask.result.as_deref() == Some("met");
        let stamp = if met {
            let name = if ask.stamp == HUMAN_REVIEWED { HUMAN_REVIEWED } else { PEER_REVIEWED };
            let text = stamp_text(&stamp_id, &ask.subject_id, name, &ask.credential_id, &reviewer_key, now, &ask.ask_id);
            let signature = hub.passport_key.sign_text(&text);
            Some(stamps::issue(
                txn,
                &actor,
                NewStamp {
                    stamp_id: stamp_id.clone(),
                    agent_id: ask.subject_id.clone(),
                    stamp: name,
                    expires_ms: None,
                    issuer: reviewer_key.clone(),
                    credential_id: Some(ask.credential_id.clone()),
                    detail: json!({
                        "ask_id": ask.ask_id,
                        "requester_id": ask.requester_id,
                        "reviewer": reviewer_key,
                        "result": "met",
                        "evidence_ref": ask.evidence_ref,
                        "criteria_sha256": text_sha256(&ask.criteria),
                        "recipe": STAMP_RECIPE,
                        "signed_text": text,
                        "key_id": kd_core::keys::PASSPORT_KEY_ID,
                        "signature": signature,
                    }),
                },
            )?)
        } else {
            None
        };
        let resolution = if met { "stamped" } else { "refused" };
        super::store::resolve_ask(txn.conn(), &ask.ask_id, resolution, now, stamp.as_ref().map(|stamp| stamp.stamp_id.clone()))?;
        let event = txn.record(
            actor,
            ask.subject_id.clone(),
            &events::VerificationResolved {
                ask_id: ask.ask_id.clone(),
                subject_agent_id: ask.subject_id.clone(),
                passport_id: ask.credential_id.clone(),
                stamp: ask.stamp.clone(),
                reviewer: reviewer_key.clone(),
                result: ask.result.clone(),
                resolution: resolution.to_owned(),
                evidence_ref: ask.evidence_ref.clone(),
                stamp_id: stamp.as_ref().map(|stamp| stamp.stamp_id.clone()),
            },
        )?;
        let after = require_ask(txn.conn(), &ask.ask_id)?;
        Ok(json!({
            "ask": after.to_json(now),
            "resolution": resolution,
            "stamp": stamp.as_ref().map(stamps::Stamp::to_json),
            "refusal": (!met).then(|| json!({
                "ask_id": ask.ask_id,
                "subject_agent_id": ask.subject_id,
                "passport_id": ask.credential_id,
                "stamp": ask.stamp,
                "reviewer": reviewer_key,
                "evidence_ref": ask.evidence_ref,
                "public": true,
                "line": format!("The reviewer found the criteria unmet; no {} stamp was issued.", ask.stamp),
            })),
            "verifier_record": verifier_record(txn.conn(), &reviewer_key)?,
            "event_seq": event.seq,
        }))
    })
    .await
}

/// A reviewer's verifier record (permissions document: "credits the helper's verifier
/// record"), counted from the asks they completed: `{reviewer, completed, stamps_issued,
/// refusals, by_stamp {human-reviewed, peer-reviewed}, disputed, last_resolved_at, note}`.
/// `completed` counts results the requester accepted (a stamp or a public refusal);
/// `disputed` counts results the requester disputed (no credit). `reviewer` is an agent id
/// or `person:<id>` ([`Reviewer::key`]).
///
/// # Errors
/// `internal` when the store fails.
pub fn verifier_record(conn: &Connection, reviewer: &str) -> Result<Value, ToolError> {
    let rows = super::store::resolved_by(conn, reviewer)?;
    let disputed: i64 = super::store::disputes_of(conn, reviewer)?;
    let count = |resolution: Option<&str>, stamp: Option<&str>| -> i64 {
        rows.iter()
            .filter(|row| resolution.is_none_or(|wanted| row.0 == wanted))
            .filter(|row| stamp.is_none_or(|wanted| row.1 == wanted))
            .map(|row| row.2)
            .sum()
    };
    let last = rows.iter().filter_map(|row| row.3).max();
    Ok(json!({
        "reviewer": reviewer,
        "completed": count(None, None),
        "stamps_issued": count(Some("stamped"), None),
        "refusals": count(Some("refused"), None),
        "by_stamp": {
            HUMAN_REVIEWED: count(None, Some(HUMAN_REVIEWED)),
            PEER_REVIEWED: count(None, Some(PEER_REVIEWED)),
        },
        "disputed": disputed,
        "last_resolved_at": last.map(rfc3339_ms),
        "note": "Verification help this reviewer completed and the requester accepted: a stamp when the criteria were met, a public refusal when not. Payouts are off.",
    }))
}

/// The public verification record of a subject agent: every resolved ask about it, newest
/// first, as `{ask_id, stamp, passport_id, reviewer, result, resolution (stamped | refused),
/// stamp_id, evidence_ref, resolved_at}`. Refusals are public (permissions document).
///
/// # Errors
/// `internal` when the store fails.
pub fn subject_record(conn: &Connection, agent_id: &str) -> Result<Vec<Value>, ToolError> {
    let rows = super::store::resolved_about(conn, agent_id, MAX_SUBJECT_RECORDS)?;
    Ok(rows)
}
