//! Outcome reports: `report_outcome` and the `reliability_reports` summary (spec "Outcome
//! reports (reliability reports from agents, not a safety or trust check)", "report_outcome").
//!
//! After a signed `check_before_acting`, the agent its receipt names may report once, within
//! 14 days, whether the resource worked. Each report is an `outcome-report@1` record: the
//! `kd-outcome-v1` canonical text (ten lines joined by LF, no trailing LF, UTF-8):
//!
//! ```text
//! kd-outcome-v1
//! <report_id>        kdo_ and 24 hex characters
//! <receipt_id>
//! <resource_id>
//! <version_used>     "" when unknown
//! <result>           worked | broke | partial | didnt_use
//! <reason_code>      "" when none
//! <note_sha256>      lowercase hex SHA-256 of the note's UTF-8 bytes (of "" when none)
//! <agent_id>         the reporter
//! <reported_at>      Unix seconds
//! ```
//!
//! its SHA-256 `record_hash` (lowercase hex), KarmaDue's Ed25519 signature over the text
//! (`kd-passport-1`, base64url), and an `outcome.reported` event in the log.
//!
//! Reports are weighed when they are made (the weight and its reasons come back with the
//! report), and summarised per resource as `reliability_reports`. They never count as
//! verification and never change an assessment, a trust score, a passport or the ranking.

pub mod replay;
pub mod store;
mod summary;
mod weight;

pub use summary::{reliability_reports, reliability_reports_at};
pub(crate) use weight::Counted;
pub use weight::{Reporter, Weight, check_limits, weigh};

use crate::events::catalog::OutcomeReported;
use kd_core::clock::rfc3339_ms;
use kd_core::random::random_id;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::catalog::model::{self};
use crate::preflight::{self, Receipt};
use kd_kernel::Ctx;
use kd_kernel::error::{ErrorCode, ToolError};
use kd_kernel::input::{AGENT_ID_DOC, Text};
use kd_kernel::registry::{Access, Hints, Lift, Tool};

/// The record kind.
pub const RECORD_KIND: &str = "outcome-report@1";
/// The canonical text recipe.
pub const RECIPE: &str = "kd-outcome-v1";
/// The label every report carries.
pub const REPORT_LABEL: &str = "Reported by an agent after use. Not a KarmaDue check.";
/// The label of the summary.
pub const RELIABILITY_LABEL: &str = "Reliability reports from agents, not a safety or trust check";
/// `result` values.
pub const RESULTS: [&str; 4] = ["worked", "broke", "partial", "didnt_use"];

/// Longest note, in characters.
pub const MAX_NOTE_CHARS: usize = 500;
/// Longest reason code, in characters (`[a-z0-9_]`).
pub const MAX_REASON_CODE_CHARS: usize = 40;
/// Longest version_used, in characters.
pub const MAX_VERSION_CHARS: usize = 100;

/// Reports an agent may make in a rolling minute.
pub const AGENT_PER_MINUTE: usize = 10;
/// Reports an agent may make in a rolling 24 hours.
pub const AGENT_PER_DAY: usize = 30;
/// Reports all agents of one owner may make in a rolling 24 hours.
pub const OWNER_PER_DAY: usize = 100;

const MINUTE_MS: i64 = 60_000;
const DAY_MS: i64 = 24 * 3600 * 1000;
/// The window reports are summarised and counted over: 30 days.
pub const WINDOW_MS: i64 = 30 * DAY_MS;
/// Agents younger than this are capped: 7 days.
pub const NEW_AGENT_MS: i64 = 7 * DAY_MS;
/// The cap for agents without an owner or under 7 days old.
pub const CAP: f64 = 0.25;
/// More than this many reports from one owner on one resource in 24 hours are a burst.
pub const BURST_AFTER: i64 = 3;
/// A strong consensus: at least this many other owners agree...
pub const CONSENSUS_OWNERS: usize = 5;
/// ...and they are at least this share of the other owners' counted reports.
pub const CONSENSUS_SHARE: f64 = 0.8;
/// An owner's outlier history: at least this many outliers...
pub const HISTORY_OUTLIERS: i64 = 2;
/// ...among its last this many reports.
pub const HISTORY_REPORTS: i64 = 10;
/// `established` from this many distinct counted owners in 30 days.
pub const ESTABLISHED_OWNERS: usize = 5;

/// `report_outcome`.
pub static REPORT_OUTCOME: Tool = Tool {
    name: "report_outcome",
    title: "Report how a checked resource worked",
    description: "After you use (or decide not to use) something you checked with check_before_acting, report what happened. Pass the receipt_id from that check's data.receipt and a result: worked, broke, partial or didnt_use. One report per receipt, within 14 days, from the agent the receipt was issued to. Reports help other agents pick tools that work: they are shown, counted once per owner, as \"Reliability reports from agents, not a safety or trust check\". They never count as verification and never change a trust score. note is free text, stored as untrusted. Self-keyed agents sign this call (kd-mcp-v1); connected apps need the kd.outcomes.write permission (on by default).",
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[Lift {
        at: "",
        id: "report_id",
        fields: &["note"],
    }],
    input: Some(kd_kernel::input!(ReportOutcome)),
    handler: kd_kernel::typed!(REPORT_OUTCOME, report_outcome),
};

/// report_outcome's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReportOutcome {
    #[schemars(description = AGENT_ID_DOC)]
    #[expect(
        dead_code,
        reason = "the reporter is the signed caller; declared for the schema"
    )]
    agent_id: Option<String>,
    /// The receipt_id from check_before_acting's data.receipt (kdr_...).
    receipt_id: String,
    /// What happened when you used it.
    #[schemars(extend("enum" = RESULTS))]
    result: String,
    #[schemars(
        description = "Optional short code, e.g. auth_failed, crashed, wrong_output, slow, license_issue, not_needed (lowercase, digits, _; up to 40)."
    )]
    reason_code: Option<String>,
    #[schemars(
        description = "Optional free text, up to 500 characters. Stored as untrusted text and never shown as a check."
    )]
    note: Option<String>,
    #[schemars(
        description = "Optional version or commit you actually used, if different from the one checked."
    )]
    version_used: Option<String>,
}

/// The kd-outcome-v1 text. Null fields print as empty lines.
#[expect(
    clippy::too_many_arguments,
    reason = "one argument per line of the recipe"
)]
pub fn outcome_text(
    report_id: &str,
    receipt_id: &str,
    resource_id: &str,
    version_used: Option<&str>,
    result: &str,
    reason_code: Option<&str>,
    note_sha256: &str,
    agent_id: &str,
    reported_unix: i64,
) -> String {
    [
        RECIPE,
        report_id,
        receipt_id,
        resource_id,
        version_used.unwrap_or(""),
        result,
        reason_code.unwrap_or(""),
        note_sha256,
        agent_id,
        &reported_unix.to_string(),
    ]
    .join("\n")
}

/// Lowercase hex SHA-256 of the note's UTF-8 bytes; of the empty string when there is none.
pub fn note_sha256(note: Option<&str>) -> String {
    hex::encode(Sha256::digest(note.unwrap_or("").as_bytes()))
}

fn reason_code(code: Option<&str>) -> Result<Option<String>, ToolError> {
    let Some(code) = code else {
        return Ok(None);
    };
    let shaped = code.len() <= MAX_REASON_CODE_CHARS
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !shaped {
        return Err(ToolError::validation(
            "reason_code",
            "reason_code is up to 40 characters of lowercase letters, digits and _",
        ));
    }
    Ok(Some(code.to_owned()))
}

fn note(note: Option<&str>) -> Result<Option<String>, ToolError> {
    let Some(note) = note.filter(|note| !note.is_empty()) else {
        return Ok(None);
    };
    if note.chars().count() > MAX_NOTE_CHARS {
        return Err(ToolError::validation(
            "note",
            "note is at most 500 characters",
        ));
    }
    Ok(Some(note.to_owned()))
}

fn version_used(version: Option<&str>) -> Result<Option<String>, ToolError> {
    let Some(version) = version else {
        return Ok(None);
    };
    if version.chars().count() > MAX_VERSION_CHARS || version.chars().any(char::is_control) {
        return Err(ToolError::validation(
            "version_used",
            "version_used is at most 100 characters on one line",
        ));
    }
    Ok(Some(version.to_owned()))
}

async fn report_outcome(ctx: Ctx, input: ReportOutcome) -> Result<Value, ToolError> {
    let receipt_id = input.receipt_id.required_text("receipt_id")?.to_owned();
    if !preflight::receipt_id_well_formed(&receipt_id) {
        return Err(ToolError::new(
            ErrorCode::ReceiptInvalid,
            "receipt_id is not a receipt id: it looks like kdr_ and 24 hex characters.",
        )
        .with_field("receipt_id"));
    }
    let result = input.result.required_text("result")?.to_owned();
    let reason_code = reason_code(input.reason_code.text())?;
    let note = note(input.note.as_deref())?;
    let version_used = version_used(input.version_used.text())?;
    let hub = ctx.kernel.clone();
    let report_id = random_id::<12>(hub.random.as_ref(), "kdo_");
    ctx.signed_write(move |txn, signed| {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        let receipt = Receipt::load(txn.conn(), &receipt_id)?.ok_or_else(|| {
            ToolError::new(ErrorCode::ReceiptNotFound, "No receipt has this receipt_id. Use the receipt_id from check_before_acting's data.receipt.")
                .with_field("receipt_id")
        })?;
        if !receipt.verifies(&hub.passport_key) {
            return Err(ToolError::new(ErrorCode::ReceiptInvalid, "This receipt's signature no longer verifies; it cannot be reported on.")
                .with_field("receipt_id"));
        }
        match receipt.agent_id.as_deref() {
            Some(named) if named == agent_id => {}
            Some(_) => {
                return Err(ToolError::new(ErrorCode::ReceiptMismatch, "This receipt was issued to another agent. Only the agent it names may report on it.")
                    .with_field("receipt_id"));
            }
            None => {
                return Err(ToolError::new(
                    ErrorCode::ReceiptMismatch,
                    "This receipt names no agent (the check was anonymous). Sign check_before_acting with x-karmadue-agent to get a receipt you can report on.",
                )
                .with_field("receipt_id"));
            }
        }
        let existing: Option<String> = store::report_for_receipt(txn.conn(), &receipt_id)?;
        if let Some(existing) = existing {
            return Err(ToolError::new(ErrorCode::AlreadyReported, "This receipt already has its one report.")
                .with_field("receipt_id")
                .with("report_id", existing));
        }
        if now > receipt.expires_ms {
            return Err(ToolError::new(ErrorCode::ReceiptExpired, "This receipt is more than 14 days old. Check again with check_before_acting for a new one.")
                .with_field("receipt_id")
                .with("expired_at", rfc3339_ms(receipt.expires_ms)));
        }
        let reporter = Reporter::load(txn.conn(), &agent_id)?;
        check_limits(txn.conn(), &reporter, now)?;
        let resource = model::load_resource(txn.conn(), &receipt.resource_id)?;
        let weight = weigh(txn.conn(), resource.as_ref(), &reporter, &result, now)?;
        // version_used defaults to the version the receipt names (the one checked).
        let version_used = version_used.or_else(|| receipt.version.clone());
        let note_hash = note_sha256(note.as_deref());
        let reported_unix = now.div_euclid(1000);
        let canonical = outcome_text(
            &report_id,
            &receipt_id,
            &receipt.resource_id,
            version_used.as_deref(),
            &result,
            reason_code.as_deref(),
            &note_hash,
            &agent_id,
            reported_unix,
        );
        let record_hash = hex::encode(Sha256::digest(canonical.as_bytes()));
        let signature = hub.passport_key.sign_text(&canonical);
        let owner_key = reporter.owner_key();
        let event = txn.record(
            agent_id.clone(),
            receipt.resource_id.clone(),
            &OutcomeReported {
                kind: RECORD_KIND.into(),
                report_id: report_id.clone(),
                receipt_id: receipt_id.clone(),
                resource_id: receipt.resource_id.clone(),
                version_used: version_used.clone(),
                result: result.clone(),
                reason_code: reason_code.clone(),
                note: note.clone(),
                note_sha256: note_hash.clone(),
                agent_id: agent_id.clone(),
                owner_key: owner_key.clone(),
                canonical_text: canonical.clone(),
                record_hash: record_hash.clone(),
                signature: signature.clone(),
                key_id: hub.passport_key.key_id().to_owned(),
                weight: weight.value,
                flags: weight.flags.iter().map(|flag| (*flag).to_owned()).collect(),
                reasons: weight.reasons.clone(),
            },
        )?;
        store::insert_report(
            txn.conn(),
            &store::NewReport {
                report_id: &report_id,
                receipt_id: &receipt_id,
                resource_id: &receipt.resource_id,
                version_used: version_used.as_deref(),
                result: &result,
                reason_code: reason_code.as_deref(),
                note: note.as_deref(),
                note_sha256: &note_hash,
                agent_id: &agent_id,
                owner_key: &owner_key,
                canonical_text: &canonical,
                record_hash: &record_hash,
                signature: &signature,
                weight: weight.value,
                flags: &json!(weight.flags).to_string(),
                reasons: &json!(weight.reasons).to_string(),
                outlier: weight.outlier(),
                event_seq: event.seq,
                now,
            },
        )?;
        Ok(json!({
            "report_id": report_id,
            "kind": RECORD_KIND,
            "label": REPORT_LABEL,
            "receipt_id": receipt_id,
            "resource_id": receipt.resource_id,
            "agent_id": agent_id,
            "result": result,
            "reason_code": reason_code,
            "version_used": version_used,
            "note": note,
            "note_sha256": note_hash,
            "reported_at": rfc3339_ms(now),
            "reported_at_unix": reported_unix,
            "record": {
                "recipe": RECIPE,
                "canonical_text": canonical,
                "record_hash": record_hash,
                "signature": signature,
                "key_id": hub.passport_key.key_id(),
                "alg": "EdDSA",
            },
            "weight": weight.value,
            "weight_reasons": weight.reasons,
            "flags": weight.flags,
            "shown_as": RELIABILITY_LABEL,
            "counts_as_verification": false,
            "event_seq": event.seq,
        }))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outcome_text_is_ten_lines_with_empty_nulls() {
        let text = outcome_text(
            "kdo_1",
            "kdr_2",
            "kd:res:npm:x",
            None,
            "worked",
            None,
            &note_sha256(None),
            "agent",
            1_791_700_000,
        );
        assert_eq!(
            text,
            "kd-outcome-v1\nkdo_1\nkdr_2\nkd:res:npm:x\n\nworked\n\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\nagent\n1791700000"
        );
    }
}
