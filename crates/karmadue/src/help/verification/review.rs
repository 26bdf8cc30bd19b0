//! Taking, submitting and resolving an ask: `accept_verification_ask`, `submit_verification`,
//! `resolve_verification` and the signed-in person's [`accept_as_person`] / [`submit_as_person`].

use std::sync::Arc;

use crate::help::events;
use kd_core::clock::rfc3339_ms;
use kd_core::db::Connection;
use kd_core::keys::ServerKey;
use kd_core::random::random_id;
use kd_core::store::WriteTxn;
use serde_json::json;

use super::ask::{Ask, Reviewer, check_fit, check_independent, require_ask, verifier_record};
use super::post::{bounded, check_evidence, first_sent, named, text_sha256};
use super::{
    ACCEPT_WINDOW_MS, AcceptVerificationAsk, EVIDENCE_NAMES, MAX_NOTE_CHARS, RESULTS,
    ResolveVerification, STAMP_RECIPE, SubmitVerification,
};
use crate::help::HelpError;
use crate::help::output::{AskAccepted, Decided, Refusal, Resolved, ResultSubmitted};
use crate::standing::stamps::{self, HUMAN_REVIEWED, NewStamp, PEER_REVIEWED};
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use kd_kernel::{Ctx, Kernel};

/// Takes an ask for `reviewer`, in the writer's transaction (the agent and person paths).
fn accept_in(
    txn: &mut WriteTxn<'_>,
    reviewer: &Reviewer,
    actor: String,
    ask_id: &str,
) -> Result<AskAccepted, ToolError> {
    let now = txn.now_ms();
    let ask = require_ask(txn.conn(), ask_id)?;
    let me = reviewer.key();
    let until = || rfc3339_ms(ask.accept_until_ms.unwrap_or(now));
    match ask.state(now) {
        "open" => {}
        "accepted" if ask.reviewer.as_deref() == Some(me.as_str()) => {
            return Err(HelpError::AlreadyHeld(until()).into());
        }
        "accepted" => return Err(HelpError::HeldByAnother(until()).into()),
        "expired" => return Err(HelpError::AskExpired.into()),
        state => return Err(HelpError::AskNotOpen(state).into()),
    }
    check_fit(reviewer, &ask.stamp)?;
    check_independent(txn.conn(), reviewer, &ask)?;
    let disputed: bool = crate::help::store::disputed(txn.conn(), ask_id, &me)?;
    if disputed {
        return Err(HelpError::DisputedBefore.into());
    }
    let until = (now + ACCEPT_WINDOW_MS).min(ask.deadline_ms);
    // A lapsed taker's hold ended: the ask reopened and this reviewer takes it.
    let reopened_from = (ask.status == "accepted")
        .then(|| ask.reviewer.clone())
        .flatten();
    crate::help::store::accept_ask(txn.conn(), ask_id, &me, now, until)?;
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
    Ok(AskAccepted {
        ask: ask.to_json(now),
        must_submit_by: rfc3339_ms(until),
        event_seq: event.seq,
        message: "You hold this ask. Check the passport against the criteria and submit met or unmet with an evidence link (submit_verification) before must_submit_by; after that it reopens for others.",
    })
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
) -> Result<ResultSubmitted, ToolError> {
    let now = txn.now_ms();
    let ask = require_ask(txn.conn(), ask_id)?;
    let me = reviewer.key();
    let mine = ask.reviewer.as_deref() == Some(me.as_str());
    match (ask.state(now), mine) {
        ("accepted", true) => {}
        ("submitted", true) => return Err(HelpError::AlreadySubmitted.into()),
        ("open" | "expired", true) if ask.status == "accepted" => {
            let ended = rfc3339_ms(ask.accept_until_ms.unwrap_or(now));
            return Err(HelpError::HoldEnded(ended).into());
        }
        _ => return Err(HelpError::NotReviewer.into()),
    }
    check_independent(txn.conn(), reviewer, &ask)?;
    crate::help::store::submit_result(txn.conn(), ask_id, result, evidence_ref, note, now)?;
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
    Ok(ResultSubmitted {
        ask: ask.to_json(now),
        event_seq: event.seq,
        message: "Submitted. The requester accepts (a stamp when met, a public refusal when unmet; both credit your verifier record) or disputes it.",
    })
}

/// `result`: met or unmet.
///
/// # Errors
/// `validation` naming `result`.
fn result_arg(result: &str) -> Result<String, HelpError> {
    match result {
        result if RESULTS.contains(&result) => Ok(result.to_owned()),
        _ => Err(HelpError::ResultChoice),
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

/// `accept_verification_ask`: an agent takes an open peer-reviewed ask for 72 hours.
///
/// # Errors
/// `not_found`, `validation` (not open), `forbidden` (`reason`: `needs_person`, `own_ask`,
/// `own_passport`, `shares_owner`, `disputed_before`), the signature refusals, `internal`.
pub(super) async fn accept_verification_ask(
    ctx: Ctx,
    input: AcceptVerificationAsk,
) -> Result<AskAccepted, HelpError> {
    let ask_id = input.ask_id.required_text("ask_id")?.to_owned();
    let accepted = ctx.signed_write(move |txn, signed| {
        let reviewer = Reviewer::Agent(signed.agent_id.to_string());
        accept_in(txn, &reviewer, signed.actor(), &ask_id)
    });
    Ok(accepted.await?)
}

/// `submit_verification`: the reviewer holding an ask submits met or unmet with evidence.
///
/// # Errors
/// `validation` (`result`, the evidence link, `note`, or the ask's state), `forbidden`
/// (`not_reviewer`, `shares_owner`), `not_found`, the signature refusals, `internal`.
pub(super) async fn submit_verification(
    ctx: Ctx,
    input: SubmitVerification,
) -> Result<ResultSubmitted, HelpError> {
    let ask_id = input.ask_id.required_text("ask_id")?.to_owned();
    let result = result_arg(&input.result)?;
    let evidence_ref = evidence_arg(&input)?;
    let note = bounded(&["note"], &[&input.note], MAX_NOTE_CHARS, false)?;
    let submitted = ctx.signed_write(move |txn, signed| {
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
    });
    Ok(submitted.await?)
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
) -> Result<AskAccepted, ToolError> {
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
) -> Result<ResultSubmitted, ToolError> {
    if !RESULTS.contains(&result) {
        return Err(HelpError::ResultChoice.into());
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
        return Err(HelpError::TooLong {
            field: "note".into(),
            max: MAX_NOTE_CHARS,
        }
        .into());
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

/// `resolve_verification`: the requester accepts the submitted result (a stamp when met, a
/// public refusal when unmet; both credit the reviewer) or disputes it.
///
/// # Errors
/// `validation` (`decision`, not submitted), `forbidden` (`not_requester`, `shares_owner`),
/// `not_found`, the signature refusals, `internal`.
pub(super) async fn resolve_verification(
    ctx: Ctx,
    input: ResolveVerification,
) -> Result<Resolved, HelpError> {
    let ask_id = input.ask_id.required_text("ask_id")?.to_owned();
    let accept = match input.decision.as_str() {
        "accept" => true,
        "dispute" => false,
        _ => return Err(HelpError::DecisionChoice),
    };
    let stamp_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdst_");
    let hub = Arc::clone(&ctx.kernel);
    let resolved = ctx.signed_write(move |txn, signed| {
        let now = txn.now_ms();
        let (ask, reviewer_key) =
            submitted_ask(txn.conn(), &ask_id, &signed.agent_id.to_string(), now)?;
        let actor = signed.actor();
        if accept {
            // The independence rule again: an owner link approved since the ask was taken.
            check_independent(txn.conn(), &Reviewer::from_key(&reviewer_key), &ask)?;
            let stamp = match ask.result.as_deref() {
                Some("met") => Some(review_stamp(
                    txn,
                    &hub.passport_key,
                    &actor,
                    stamp_id,
                    &ask,
                    &reviewer_key,
                )?),
                _ => None,
            };
            decide_in(txn, &actor, &ask, &reviewer_key, stamp)
        } else {
            dispute_in(txn, actor, &ask, &reviewer_key)
        }
    });
    Ok(resolved.await?)
}

/// The requester accepts the submitted result of `ask`: `stamp` is the stamp issued for a
/// met result (the caller issues it after the independence check), none for an unmet one,
/// which is a public refusal; the reviewer's record is credited either way. Returns
/// resolve_verification's answer.
fn decide_in(
    txn: &mut WriteTxn<'_>,
    actor: &str,
    ask: &Ask,
    reviewer_key: &str,
    stamp: Option<stamps::Stamp>,
) -> Result<Resolved, ToolError> {
    let now = txn.now_ms();
    let met = stamp.is_some();
    let resolution = if met { "stamped" } else { "refused" };
    let stamp_id = stamp.as_ref().map(|stamp| stamp.stamp_id.clone());
    crate::help::store::resolve_ask(txn.conn(), &ask.ask_id, resolution, now, stamp_id.clone())?;
    let event = txn.record(
        actor.to_owned(),
        ask.subject_id.clone(),
        &events::VerificationResolved {
            ask_id: ask.ask_id.clone(),
            subject_agent_id: ask.subject_id.clone(),
            passport_id: ask.credential_id.clone(),
            stamp: ask.stamp.clone(),
            reviewer: reviewer_key.to_owned(),
            result: ask.result.clone(),
            resolution: resolution.to_owned(),
            evidence_ref: ask.evidence_ref.clone(),
            stamp_id,
        },
    )?;
    let after = require_ask(txn.conn(), &ask.ask_id)?;
    Ok(Resolved::Decided(Box::new(Decided {
        ask: after.to_json(now),
        resolution,
        stamp: stamp.as_ref().map(stamps::Stamp::to_json),
        refusal: (!met).then(|| Refusal {
            ask_id: ask.ask_id.clone(),
            subject_agent_id: ask.subject_id.clone(),
            passport_id: ask.credential_id.clone(),
            stamp: ask.stamp.clone(),
            reviewer: reviewer_key.to_owned(),
            evidence_ref: ask.evidence_ref.clone(),
            public: true,
            line: format!(
                "The reviewer found the criteria unmet; no {} stamp was issued.",
                ask.stamp
            ),
        }),
        verifier_record: verifier_record(txn.conn(), reviewer_key)?,
        event_seq: event.seq,
    })))
}

/// The ask `ask_id` with a submitted result `requester_id` may resolve at `now`, and its
/// reviewer's key.
///
/// # Errors
/// `not_found`, `forbidden` (`not_requester`), `validation` (not submitted).
fn submitted_ask(
    conn: &Connection,
    ask_id: &str,
    requester_id: &str,
    now: i64,
) -> Result<(Ask, String), ToolError> {
    let ask = require_ask(conn, ask_id)?;
    if ask.requester_id != requester_id {
        return Err(HelpError::NotRequester.into());
    }
    if ask.state(now) != "submitted" {
        return Err(HelpError::NotSubmitted(ask.state(now)).into());
    }
    let reviewer_key = ask.reviewer.clone().ok_or(HelpError::Unreviewed)?;
    Ok((ask, reviewer_key))
}

/// The requester disputes the submitted result of `ask`: the dispute is recorded and the ask
/// reopens (closes when its deadline has passed). Returns resolve_verification's answer.
fn dispute_in(
    txn: &mut WriteTxn<'_>,
    actor: String,
    ask: &Ask,
    reviewer_key: &str,
) -> Result<Resolved, ToolError> {
    let now = txn.now_ms();
    let reopened = ask.deadline_ms > now;
    let event = txn.record(
        actor,
        ask.subject_id.clone(),
        &events::VerificationDisputed {
            ask_id: ask.ask_id.clone(),
            reviewer: reviewer_key.to_owned(),
            result: ask.result.clone(),
            reopened,
        },
    )?;
    crate::help::store::insert_dispute(txn.conn(), &ask.ask_id, reviewer_key, now, event.seq)?;
    if reopened {
        crate::help::store::reopen_ask(txn.conn(), &ask.ask_id, now)?;
    } else {
        crate::help::store::close_disputed(txn.conn(), &ask.ask_id, now)?;
    }
    let after = require_ask(txn.conn(), &ask.ask_id)?;
    Ok(Resolved::Disputed {
        ask: after.to_json(now),
        resolution: "disputed",
        reopened,
        event_seq: event.seq,
        message: if reopened {
            "Disputed: the reviewer gets no credit and the ask is open again for another reviewer."
        } else {
            "Disputed: the reviewer gets no credit; the deadline has passed, so the ask is closed."
        },
    })
}

/// Issues the stamp `ask` sought on its subject's passport, signed over kd-stamp-v1 with
/// `key` and naming the reviewer as issuer (a met result the requester accepted).
fn review_stamp(
    txn: &mut WriteTxn<'_>,
    key: &ServerKey,
    actor: &str,
    stamp_id: String,
    ask: &Ask,
    reviewer_key: &str,
) -> Result<stamps::Stamp, ToolError> {
    let now = txn.now_ms();
    let name = if ask.stamp == HUMAN_REVIEWED {
        HUMAN_REVIEWED
    } else {
        PEER_REVIEWED
    };
    let text = stamp_text(
        &stamp_id,
        &ask.subject_id,
        name,
        &ask.credential_id,
        reviewer_key,
        now,
        &ask.ask_id,
    );
    let signature = key.sign_text(&text);
    stamps::issue(
        txn,
        actor,
        NewStamp {
            stamp_id,
            agent_id: ask.subject_id.clone(),
            stamp: name,
            expires_ms: None,
            issuer: reviewer_key.to_owned(),
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
    )
}
