//! A verification ask as stored ([`Ask`]), who reviews it ([`Reviewer`]), the independence
//! rule ([`check_independent`]) and the records read from resolved asks.

use kd_core::clock::rfc3339_ms;
use kd_core::db::{Connection, OptionalExtension};
use serde_json::{Value, json};

use super::MAX_SUBJECT_RECORDS;
use crate::help::HelpError;
use crate::standing::stamps::{HUMAN_REVIEWED, PEER_REVIEWED};
use kd_kernel::error::ToolError;

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
    Ok(crate::help::store::ask(conn, ask_id).map_err(HelpError::Store)?)
}

/// Reads one ask that must exist.
///
/// # Errors
/// `not_found` naming `ask_id`; `internal` when the store fails.
pub(super) fn require_ask(conn: &Connection, ask_id: &str) -> Result<Ask, ToolError> {
    load_ask(conn, ask_id)?.ok_or_else(|| HelpError::NoSuchAsk.into())
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
    Ok(crate::help::store::open_asks_for_stamp(
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
    Ok(crate::help::store::asks_held_by(
        conn,
        &reviewer.key(),
        now_ms,
    )?)
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
            return Err(HelpError::OwnAsk.into());
        }
        Reviewer::Agent(id) if *id == ask.subject_id => {
            return Err(HelpError::OwnPassport.into());
        }
        Reviewer::Agent(id) => owner_of(conn, id)?,
        Reviewer::Person(person) => Some(person.clone()),
    };
    if let Some(owner) = reviewer_owner
        && (requester_owner.as_ref() == Some(&owner) || subject_owner.as_ref() == Some(&owner))
    {
        return Err(HelpError::SharesOwner.into());
    }
    Ok(())
}

pub(super) fn check_fit(reviewer: &Reviewer, stamp: &str) -> Result<(), ToolError> {
    match (reviewer, stamp) {
        (Reviewer::Agent(_), HUMAN_REVIEWED) => Err(HelpError::NeedsPerson.into()),
        (Reviewer::Person(_), PEER_REVIEWED) => Err(HelpError::NeedsAgent.into()),
        _ => Ok(()),
    }
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
    let rows = crate::help::store::resolved_by(conn, reviewer)?;
    let disputed: i64 = crate::help::store::disputes_of(conn, reviewer)?;
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
    let rows = crate::help::store::resolved_about(conn, agent_id, MAX_SUBJECT_RECORDS)?;
    Ok(rows)
}
