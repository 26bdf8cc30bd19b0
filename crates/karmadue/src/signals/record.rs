//! The handlers of attest_peer, submit_peer_review and record_outcome, and the argument checks
//! they share. Every check runs before the one append.

use kd_core::random::random_id;
use kd_core::store::WriteTxn;
use kd_kernel::Ctx;
use kd_kernel::input::Text;

use super::events::SignalRecorded;
use super::rules::{self, OUTCOMES, reason};
use super::store::{self, StoredSignal};
use super::{
    AttestPeer, MAX_SKILL_CHARS, MAX_TASK_REF_CHARS, MAX_TEXT_CHARS, RecordOutcome, SignalAnswer,
    SignalsError, SubmitPeerReview,
};
use crate::identity::{AgentRow, find_agent};

/// The evidence kind record_outcome states when none is sent.
pub const DEFAULT_OUTCOME_EVIDENCE: &str = "link";

/// Optional text of at most `max` characters; `one_line` refuses line breaks and control
/// characters (text that goes into a signed line).
fn checked(
    field: &'static str,
    sent: &Option<String>,
    max: usize,
    one_line: bool,
) -> Result<Option<String>, SignalsError> {
    let Some(text) = sent.text() else {
        return Ok(None);
    };
    if text.chars().count() > max {
        return Err(SignalsError::TooLong { field, max });
    }
    if one_line && text.chars().any(char::is_control) {
        return Err(SignalsError::NotOneLine(field));
    }
    Ok(Some(text.to_owned()))
}

/// The evidence link, when sent: an https URL ([`crate::help::verification::check_evidence`]).
fn evidence_ref(sent: &Option<String>) -> Result<Option<String>, SignalsError> {
    match sent.text() {
        None => Ok(None),
        Some(text) => Ok(Some(crate::help::verification::check_evidence(
            text,
            "evidence_ref",
        )?)),
    }
}

/// The agent `reference` names, active, under `field`.
fn active_agent(
    txn: &WriteTxn<'_>,
    reference: &str,
    field: &'static str,
    missing: SignalsError,
) -> Result<AgentRow, SignalsError> {
    let agent = find_agent(txn.conn(), reference, field)?.ok_or(missing)?;
    if agent.status != "active" {
        return Err(SignalsError::Revoked(field));
    }
    Ok(agent)
}

/// Appends `record` and stores its row; the answer with the subject's signal trust after it.
fn store_signal(
    txn: &mut WriteTxn<'_>,
    actor: String,
    record: &SignalRecorded,
) -> Result<SignalAnswer, SignalsError> {
    let event = txn.record(actor, record.subject_agent_id.clone(), record)?;
    let row = StoredSignal::of(record, event.seq, event.created_ms);
    store::insert_signal(txn.conn(), &row)?;
    let trust = rules::signal_trust(txn.conn(), &record.subject_agent_id)?;
    Ok(SignalAnswer::new(row, trust))
}

/// attest_peer's arguments, checked before the writer is asked.
struct Attestation {
    attester_ref: String,
    subject_ref: String,
    task_ref: String,
    outcome: &'static str,
    worth: i64,
    note: Option<String>,
    evidence_kind: String,
    evidence_ref: Option<String>,
    signature: Vec<u8>,
    signature_text: String,
}

fn attestation(input: &AttestPeer) -> Result<Attestation, SignalsError> {
    let attester_ref = input.attester_agent_id.required_text("attester_agent_id")?;
    let subject_ref = input.subject_agent_id.required_text("subject_agent_id")?;
    let task_ref = checked("task_ref", &input.task_ref, MAX_TASK_REF_CHARS, true)?;
    let (outcome, worth) = match input.outcome.text() {
        None => (rules::DEFAULT_OUTCOME, 100),
        Some(sent) => *OUTCOMES
            .iter()
            .find(|(name, _)| *name == sent)
            .ok_or(SignalsError::OutcomeChoice)?,
    };
    let note = checked("note", &input.note, MAX_TEXT_CHARS, false)?;
    let evidence_kind = rules::evidence_kind(input.evidence_kind.text())?;
    let evidence_ref = evidence_ref(&input.evidence_ref)?;
    let (field, sent) = match (input.signature.text(), input.signature_b64.text()) {
        (Some(text), _) => ("signature", text),
        (None, Some(text)) => ("signature_b64", text),
        (None, None) => return Err(SignalsError::SignatureMissing),
    };
    let signature = kd_protocol::b64::decode_signature(sent)
        .ok()
        .filter(|bytes| bytes.len() == 64)
        .ok_or(SignalsError::SignatureShape(field))?;
    Ok(Attestation {
        attester_ref: attester_ref.to_owned(),
        subject_ref: subject_ref.to_owned(),
        task_ref: task_ref.unwrap_or_default(),
        outcome,
        worth,
        note,
        evidence_kind,
        evidence_ref,
        signature,
        signature_text: sent.to_owned(),
    })
}

/// `attest_peer`: stores an attestation whose detached signature verifies with the attester's
/// key over the kd-attest-v1 text; whether it counts per [`rules::judge`].
///
/// # Errors
/// `validation` naming the argument; `signature_required` without a signature; `not_found`
/// naming the attester or subject; `forbidden` (`self_signal`); `bad_signature` with the
/// text verified against; `internal`.
pub(super) async fn attest_peer(ctx: Ctx, input: AttestPeer) -> Result<SignalAnswer, SignalsError> {
    let sent = attestation(&input)?;
    let signal_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdsg_");
    ctx.write(move |txn| -> Result<_, SignalsError> {
        let attester = active_agent(
            txn,
            &sent.attester_ref,
            "attester_agent_id",
            SignalsError::NoSuchAttester,
        )?;
        let subject = active_agent(
            txn,
            &sent.subject_ref,
            "subject_agent_id",
            SignalsError::NoSuchSubject,
        )?;
        if attester.agent_id == subject.agent_id {
            return Err(SignalsError::SelfSignal("subject_agent_id"));
        }
        if attester.public_key.is_empty() {
            return Err(SignalsError::AttesterKeyless);
        }
        let text = rules::attestation_text(
            &attester.agent_id,
            &subject.agent_id,
            &sent.task_ref,
            sent.outcome,
            &sent.evidence_kind,
            sent.evidence_ref.as_deref().unwrap_or_default(),
        );
        let key = kd_kernel::caller::stored_key(&attester.public_key)?;
        if key.verify_strict(text.as_bytes(), &sent.signature).is_err() {
            return Err(SignalsError::SignatureInvalid { text });
        }
        if let Some(earlier) = store::earlier(
            txn.conn(),
            "attestation",
            &attester.agent_id,
            &subject.agent_id,
            &sent.task_ref,
        )? {
            return Err(SignalsError::Already(earlier));
        }
        let facts = crate::standing::agent_facts(txn.conn(), &attester.agent_id, txn.now_ms())?;
        let verdict = rules::judge(
            sent.evidence_kind != rules::NO_EVIDENCE && sent.evidence_ref.is_some(),
            rules::same_owner(attester.owner_id.as_deref(), subject.owner_id.as_deref()),
            rules::weight(&facts),
            sent.worth,
        );
        let record = SignalRecorded {
            signal_id,
            signal_kind: "attestation".into(),
            author_agent_id: attester.agent_id.clone(),
            subject_agent_id: subject.agent_id,
            counterparty_agent_id: None,
            task_ref: sent.task_ref,
            outcome: Some(sent.outcome.to_owned()),
            score: None,
            work_claim: None,
            skill: None,
            promised: None,
            accepted: None,
            evidence_kind: sent.evidence_kind,
            evidence_ref: sent.evidence_ref,
            note: sent.note,
            attestation_text: Some(text),
            signature: Some(sent.signature_text),
            counted: verdict.counted,
            not_counted_reason: verdict.reason.map(str::to_owned),
            weight: verdict.weight,
            points: verdict.points,
        };
        store_signal(txn, attester.agent_id, &record)
    })
    .await
}

/// `submit_peer_review`: stores the signer's review of another agent's work; whether it
/// counts per [`rules::judge`] (the score, 0–100, is the share of the reviewer's weight).
///
/// # Errors
/// `validation` naming the argument; `not_found` naming `subject_agent_id`; `forbidden`
/// (`self_signal`); the signature refusals; `internal`.
pub(super) async fn submit_peer_review(
    ctx: Ctx,
    input: SubmitPeerReview,
) -> Result<SignalAnswer, SignalsError> {
    let subject_ref = input
        .subject_agent_id
        .required_text("subject_agent_id")?
        .to_owned();
    if !input.score.is_finite() || !(0.0..=100.0).contains(&input.score) {
        return Err(SignalsError::ScoreRange);
    }
    let score = input.score;
    let task_ref =
        checked("task_ref", &input.task_ref, MAX_TASK_REF_CHARS, true)?.unwrap_or_default();
    let work_claim = checked("work_claim", &input.work_claim, MAX_TEXT_CHARS, false)?;
    let evidence_kind = rules::evidence_kind(input.evidence_kind.text())?;
    let evidence_ref = evidence_ref(&input.evidence_ref)?;
    let signal_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdsg_");
    ctx.signed_write(move |txn, signed| -> Result<_, SignalsError> {
        let reviewer = active_agent(
            txn,
            &signed.agent_id.to_string(),
            "agent_id",
            SignalsError::NoSuchAttester,
        )?;
        let subject = active_agent(
            txn,
            &subject_ref,
            "subject_agent_id",
            SignalsError::NoSuchSubject,
        )?;
        if reviewer.agent_id == subject.agent_id {
            return Err(SignalsError::SelfSignal("subject_agent_id"));
        }
        if let Some(earlier) = store::earlier(
            txn.conn(),
            "review",
            &reviewer.agent_id,
            &subject.agent_id,
            &task_ref,
        )? {
            return Err(SignalsError::Already(earlier));
        }
        #[expect(clippy::cast_possible_truncation, reason = "score is 0..=100")]
        let worth = score.floor() as i64;
        let verdict = rules::judge(
            evidence_kind != rules::NO_EVIDENCE && evidence_ref.is_some(),
            rules::same_owner(reviewer.owner_id.as_deref(), subject.owner_id.as_deref()),
            rules::weight(&signed.facts),
            worth,
        );
        let record = SignalRecorded {
            signal_id,
            signal_kind: "review".into(),
            author_agent_id: reviewer.agent_id,
            subject_agent_id: subject.agent_id,
            counterparty_agent_id: None,
            task_ref,
            outcome: None,
            score: Some(score),
            work_claim,
            skill: None,
            promised: None,
            accepted: None,
            evidence_kind,
            evidence_ref,
            note: None,
            attestation_text: None,
            signature: None,
            counted: verdict.counted,
            not_counted_reason: verdict.reason.map(str::to_owned),
            weight: verdict.weight,
            points: verdict.points,
        };
        store_signal(txn, signed.actor(), &record)
    })
    .await
}

/// `record_outcome`: stores the signer's own record of an outcome of its work. It never
/// counts (`self_reported`): the recipient's attestation is what moves trust.
///
/// # Errors
/// `validation` naming the argument; `not_found` naming `counterparty_agent_id`; `forbidden`
/// (`self_signal`); the signature refusals; `internal`.
pub(super) async fn record_outcome(
    ctx: Ctx,
    input: RecordOutcome,
) -> Result<SignalAnswer, SignalsError> {
    let promised = input.promised.required_text("promised")?;
    let promised = checked(
        "promised",
        &Some(promised.to_owned()),
        MAX_TEXT_CHARS,
        false,
    )?;
    let evidence_ref = evidence_ref(&Some(
        input.evidence_ref.required_text("evidence_ref")?.to_owned(),
    ))?;
    let evidence_kind = rules::evidence_kind(
        input
            .evidence_kind
            .text()
            .or(Some(DEFAULT_OUTCOME_EVIDENCE)),
    )?;
    let skill = checked("skill", &input.skill, MAX_SKILL_CHARS, true)?;
    let counterparty_ref = input.counterparty_agent_id.text().map(str::to_owned);
    let accepted = input.accepted;
    let signal_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdsg_");
    ctx.signed_write(move |txn, signed| -> Result<_, SignalsError> {
        let agent_id = signed.agent_id.to_string();
        let counterparty = match &counterparty_ref {
            None => None,
            Some(reference) => {
                let other = active_agent(
                    txn,
                    reference,
                    "counterparty_agent_id",
                    SignalsError::NoSuchCounterparty,
                )?;
                if other.agent_id == agent_id {
                    return Err(SignalsError::SelfSignal("counterparty_agent_id"));
                }
                Some(other.agent_id)
            }
        };
        let record = SignalRecorded {
            signal_id,
            signal_kind: "outcome".into(),
            author_agent_id: agent_id.clone(),
            subject_agent_id: agent_id,
            counterparty_agent_id: counterparty,
            task_ref: String::new(),
            outcome: None,
            score: None,
            work_claim: None,
            skill,
            promised,
            accepted,
            evidence_kind,
            evidence_ref,
            note: None,
            attestation_text: None,
            signature: None,
            counted: false,
            not_counted_reason: Some(reason::SELF_REPORTED.to_owned()),
            weight: rules::weight(&signed.facts),
            points: 0,
        };
        store_signal(txn, signed.actor(), &record)
    })
    .await
}
