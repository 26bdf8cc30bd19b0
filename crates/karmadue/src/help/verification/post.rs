//! `post_verification_ask` and `list_verification_asks`, with the argument checks they share.

use crate::help::events;
use kd_core::clock::rfc3339_ms;
use kd_core::random::random_id;
use sha2::{Digest, Sha256};

use super::ask::{require_ask, verifier_record};
use super::{
    ACCEPT_WINDOW_MS, CRITERIA_NAMES, ListVerificationAsks, MAX_ASKS_PER_DAY, MAX_CRITERIA_CHARS,
    MAX_DEADLINE_MS, MAX_EVIDENCE_CHARS, MAX_REWARD_CHARS, PASSPORT_NAMES, PostVerificationAsk,
};
use crate::help::output::{AskList, AskPosted};
use crate::help::{DAY_MS, HelpError};
use crate::identity::find_agent;
use crate::standing::stamps::{HUMAN_REVIEWED, PEER_REVIEWED};
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use kd_kernel::{Ctx, Kernel};

pub(super) use kd_kernel::input::{first_sent, sent_name as named};

/// A text argument of at most `max` characters, sent under one of `names` (`values` in the
/// same order), trimmed; required or not.
///
/// # Errors
/// `validation` "`names` is required" naming `names[0]`, or "is at most" naming the name sent.
pub(super) fn bounded(
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
        return Err(HelpError::TooLong {
            field: named(names, values).to_owned(),
            max,
        }
        .into());
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
        return Err(HelpError::EvidenceShape(field.to_owned()).into());
    }
    Ok(text.to_owned())
}

pub(super) fn text_sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

/// post_verification_ask's arguments, checked (before the writer is asked).
struct AskRequest {
    subject_ref: String,
    passport_field: &'static str,
    passport_id: String,
    stamp: &'static str,
    criteria: String,
    reward_note: Option<String>,
    deadline_ms: i64,
}

/// Checks post_verification_ask's arguments; the deadline against `kernel`'s clock.
///
/// # Errors
/// `validation` naming the argument.
fn ask_request(input: &PostVerificationAsk, kernel: &Kernel) -> Result<AskRequest, HelpError> {
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
        _ => return Err(HelpError::StampChoice),
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
    let deadline_ms = parse_time(deadline_text).ok_or(HelpError::DeadlineShape)?;
    let now = kernel.clock.now_ms();
    if deadline_ms <= now || deadline_ms > now + MAX_DEADLINE_MS {
        return Err(HelpError::DeadlineRange {
            now: rfc3339_ms(now),
            latest: rfc3339_ms(now + MAX_DEADLINE_MS),
        });
    }
    Ok(AskRequest {
        subject_ref,
        passport_field,
        passport_id,
        stamp,
        criteria,
        reward_note,
        deadline_ms,
    })
}

/// `post_verification_ask`: asks for one check of one passport version.
///
/// # Errors
/// `validation` naming the argument, the subject's state or an unresolved ask of the
/// requester's; `not_found` naming `subject_agent_id`; `rate_limited` past
/// [`MAX_ASKS_PER_DAY`]; the signature refusals; `internal` when the store fails.
pub(super) async fn post_verification_ask(
    ctx: Ctx,
    input: PostVerificationAsk,
) -> Result<AskPosted, HelpError> {
    let AskRequest {
        subject_ref,
        passport_field,
        passport_id,
        stamp,
        criteria,
        reward_note,
        deadline_ms,
    } = ask_request(&input, &ctx.kernel)?;
    let ask_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdva_");
    let answer = ctx
        .signed_write(move |txn, signed| -> Result<_, HelpError> {
            let requester_id = signed.agent_id.to_string();
            let now = txn.now_ms();
            let (posted, oldest): (i64, Option<i64>) = crate::help::store::asks_since(txn.conn(), &requester_id, now - DAY_MS)?;
            if posted >= MAX_ASKS_PER_DAY {
                let retry_after_s =
                    (oldest.unwrap_or(now) + DAY_MS - now + 999).div_euclid(1000).max(1);
                return Err(HelpError::AsksSpent { max: MAX_ASKS_PER_DAY, retry_after_s });
            }
            let subject = find_agent(txn.conn(), &subject_ref, "subject_agent_id")?
                .ok_or(HelpError::NoSuchSubject)?;
            if subject.status != "active" {
                return Err(HelpError::SubjectRevoked);
            }
            if subject.credential_id != passport_id {
                return Err(HelpError::NotCurrentPassport { field: passport_field, current: subject.credential_id });
            }
            let existing: Option<String> = crate::help::store::unresolved_ask(txn.conn(), &requester_id, &subject.agent_id, &passport_id, stamp, txn.now_ms())?;
            if let Some(existing) = existing {
                return Err(HelpError::AlreadyAsked(existing));
            }
            let now = txn.now_ms();
            crate::help::store::insert_ask(txn.conn(), &crate::help::store::NewAsk { ask_id: &ask_id, requester_id: &requester_id, subject_id: &subject.agent_id, passport_id: &passport_id, stamp, criteria: &criteria, reward_note: reward_note.as_deref(), deadline_ms, now })?;
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
            Ok(AskPosted {
                ask: ask.to_json(now),
                event_seq: event.seq,
                message: "Posted. It is listed in list_verification_asks until someone takes it; you accept or dispute their result with resolve_verification. Payouts are off.",
            })
        })
        .await?;
    Ok(answer)
}

/// `list_verification_asks`: asks by status, subject, stamp or reviewer, newest first, with
/// the reviewer's record when one is named.
///
/// # Errors
/// `validation` naming `limit` or `offset`; `not_found` naming `subject_agent_id` or
/// `reviewer`; `internal` when the store fails.
pub(super) async fn list_verification_asks(
    ctx: Ctx,
    input: ListVerificationAsks,
) -> Result<AskList, HelpError> {
    let status = input.status.as_deref().unwrap_or("open").to_owned();
    let limit = input.limit.unwrap_or(20);
    if !(1..=50).contains(&limit) {
        return Err(HelpError::LimitRange);
    }
    let offset = input.offset.unwrap_or(0);
    if !(0..=10_000).contains(&offset) {
        return Err(HelpError::OffsetRange);
    }
    let subject_ref = input.subject_agent_id.text().map(str::to_owned);
    let stamp = input.stamp;
    let reviewer_ref = input.reviewer.text().map(str::to_owned);
    let now = ctx.kernel.clock.now_ms();
    let listed = ctx.read(move |conn| {
        let subject = match &subject_ref {
            Some(reference) => Some(
                find_agent(conn, reference, "subject_agent_id")?
                    .ok_or(HelpError::NoSuchSubject)?
                    .agent_id,
            ),
            None => None,
        };
        let reviewer = match &reviewer_ref {
            Some(reference) if reference.starts_with("person:") => Some(reference.clone()),
            Some(reference) => Some(
                find_agent(conn, reference, "reviewer")?
                    .ok_or(HelpError::NoSuchReviewer)?
                    .agent_id,
            ),
            None => None,
        };
        let (asks, total) = crate::help::store::list_asks(
            conn,
            &crate::help::store::AskFilter {
                status: &status,
                now,
                subject: subject.as_deref(),
                stamp: stamp.as_deref(),
                reviewer: reviewer.as_deref(),
            },
            limit,
            offset,
        )?;
        let shown = i64::try_from(asks.len()).map_err(ToolError::internal_from)?;
        let next_offset = (offset + shown < total).then_some(offset + shown);
        Ok(AskList {
            asks: asks.iter().map(|ask| ask.to_json(now)).collect(),
            status,
            total,
            offset,
            limit,
            next_offset,
            accept_window_hours: ACCEPT_WINDOW_MS / 3_600_000,
            payouts: "off",
            verifier_record: match &reviewer {
                Some(reviewer) => Some(verifier_record(conn, reviewer)?),
                None => None,
            },
        })
    });
    Ok(listed.await?)
}
