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

mod error;
pub mod replay;
pub mod store;
mod summary;
mod weight;

pub use error::OutcomeError;
pub use summary::{reliability_reports, reliability_reports_at};
pub(crate) use weight::Counted;
pub use weight::{Reporter, Weight, check_limits, weigh};

use crate::catalog::events::OutcomeReported;
use kd_core::clock::rfc3339_ms;
use kd_core::random::random_id;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::catalog::model;
use crate::preflight::{self, Receipt};
use kd_core::db::Connection;
use kd_core::keys::ServerKey;
use kd_core::store::WriteTxn;
use kd_kernel::Ctx;
use kd_kernel::Kernel;
use kd_kernel::error::ToolError;
use kd_kernel::input::Text;
use kd_kernel::policy::{Connector, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};

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
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows("", "report_id", &["note"])],
    arguments: Arguments::Typed(
        kd_kernel::input!(ReportOutcome).agent_id(kd_kernel::AgentIdParam::Optional),
    ),
    policy: ToolPolicy::write(Connector::Scope(crate::connector::SCOPE_OUTCOMES)),
    handler: kd_kernel::typed!(REPORT_OUTCOME, report_outcome),
};

/// report_outcome's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReportOutcome {
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

fn reason_code(code: Option<&str>) -> Result<Option<String>, OutcomeError> {
    let Some(code) = code else {
        return Ok(None);
    };
    let shaped = code.len() <= MAX_REASON_CODE_CHARS
        && code
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !shaped {
        return Err(OutcomeError::ReasonCode);
    }
    Ok(Some(code.to_owned()))
}

fn note(note: Option<&str>) -> Result<Option<String>, OutcomeError> {
    let Some(note) = note.filter(|note| !note.is_empty()) else {
        return Ok(None);
    };
    if note.chars().count() > MAX_NOTE_CHARS {
        return Err(OutcomeError::NoteTooLong);
    }
    Ok(Some(note.to_owned()))
}

fn version_used(version: Option<&str>) -> Result<Option<String>, OutcomeError> {
    let Some(version) = version else {
        return Ok(None);
    };
    if version.chars().count() > MAX_VERSION_CHARS || version.chars().any(char::is_control) {
        return Err(OutcomeError::VersionUsed);
    }
    Ok(Some(version.to_owned()))
}

/// A report's checked arguments, before the receipt is read.
struct Draft {
    report_id: String,
    receipt_id: String,
    result: String,
    reason_code: Option<String>,
    note: Option<String>,
    version_used: Option<String>,
}

/// `report_outcome`: files the signed report of how the resource a receipt names worked.
///
/// # Errors
/// The [`OutcomeError`] refusals (argument shapes, the receipt, the reporter, the rate
/// limits), all before anything is written; `internal` when the store fails.
async fn report_outcome(ctx: Ctx, input: ReportOutcome) -> Result<ReportFiled, OutcomeError> {
    let receipt_id = input.receipt_id.required_text("receipt_id")?.to_owned();
    if !preflight::receipt_id_well_formed(&receipt_id) {
        return Err(OutcomeError::NotAReceiptId);
    }
    let result = input.result.required_text("result")?.to_owned();
    let reason_code = reason_code(input.reason_code.text())?;
    let note = note(input.note.as_deref())?;
    let version_used = version_used(input.version_used.text())?;
    let hub = ctx.kernel.clone();
    let report_id = random_id::<12>(hub.random.as_ref(), "kdo_");
    let draft = Draft {
        report_id,
        receipt_id,
        result,
        reason_code,
        note,
        version_used,
    };
    ctx.signed_write(move |txn, signed| {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        let receipt = reportable_receipt(txn.conn(), &draft.receipt_id, &agent_id, now, &hub)?;
        let reporter = Reporter::load(txn.conn(), &agent_id)?;
        check_limits(txn.conn(), &reporter, now)?;
        let resource = model::load_resource(txn.conn(), &receipt.resource_id)?;
        let weight = weigh(txn.conn(), resource.as_ref(), &reporter, &draft.result, now)?;
        file_report(
            txn,
            &hub.passport_key,
            draft,
            &receipt,
            &agent_id,
            &reporter,
            &weight,
        )
    })
    .await
    .map_err(OutcomeError::from)
}

/// The receipt `receipt_id` names, if `agent_id` may report on it at `now_ms`.
///
/// # Errors
/// `receipt_not_found`, `receipt_invalid` (the signature no longer verifies),
/// `receipt_mismatch` (another agent's, or an anonymous check's), `already_reported`,
/// `receipt_expired`; all naming `receipt_id`.
fn reportable_receipt(
    conn: &Connection,
    receipt_id: &str,
    agent_id: &str,
    now_ms: i64,
    hub: &Kernel,
) -> Result<Receipt, ToolError> {
    let receipt = Receipt::load(conn, receipt_id)?.ok_or(OutcomeError::ReceiptNotFound)?;
    if !receipt.verifies(&hub.passport_key) {
        return Err(OutcomeError::ReceiptUnverified.into());
    }
    match receipt.agent_id.as_deref() {
        Some(named) if named == agent_id => {}
        Some(_) => {
            return Err(OutcomeError::AnotherAgentsReceipt.into());
        }
        None => {
            return Err(OutcomeError::AnonymousReceipt.into());
        }
    }
    let existing: Option<String> = store::report_for_receipt(conn, receipt_id)?;
    if let Some(report_id) = existing {
        return Err(OutcomeError::AlreadyReported { report_id }.into());
    }
    if now_ms > receipt.expires_ms {
        return Err(OutcomeError::ReceiptExpired {
            expired_at: rfc3339_ms(receipt.expires_ms),
        }
        .into());
    }
    Ok(receipt)
}

/// An outcome report as signed, recorded and answered.
struct Report {
    report_id: String,
    receipt_id: String,
    resource_id: String,
    version_used: Option<String>,
    result: String,
    reason_code: Option<String>,
    note: Option<String>,
    note_sha256: String,
    agent_id: String,
    owner_key: String,
    canonical: String,
    record_hash: String,
    signature: String,
    now: i64,
}

/// Signs the report (kd-outcome-v1), appends its `outcome.reported` event and stores its row.
/// Returns report_outcome's answer.
///
/// # Errors
/// `internal` when the store fails.
fn file_report(
    txn: &mut WriteTxn<'_>,
    key: &ServerKey,
    draft: Draft,
    receipt: &Receipt,
    agent_id: &str,
    reporter: &Reporter,
    weight: &Weight,
) -> Result<ReportFiled, ToolError> {
    let now = txn.now_ms();
    // version_used defaults to the version the receipt names (the one checked).
    let version_used = draft.version_used.or_else(|| receipt.version.clone());
    let note_sha256 = note_sha256(draft.note.as_deref());
    let canonical = outcome_text(
        &draft.report_id,
        &draft.receipt_id,
        &receipt.resource_id,
        version_used.as_deref(),
        &draft.result,
        draft.reason_code.as_deref(),
        &note_sha256,
        agent_id,
        now.div_euclid(1000),
    );
    let report = Report {
        report_id: draft.report_id,
        receipt_id: draft.receipt_id,
        resource_id: receipt.resource_id.clone(),
        version_used,
        result: draft.result,
        reason_code: draft.reason_code,
        note: draft.note,
        note_sha256,
        agent_id: agent_id.to_owned(),
        owner_key: reporter.owner_key(),
        record_hash: hex::encode(Sha256::digest(canonical.as_bytes())),
        signature: key.sign_text(&canonical),
        canonical,
        now,
    };
    let event_seq = record_report(txn, key, &report, weight)?;
    Ok(ReportFiled::new(report, key, weight, event_seq))
}

/// Appends the `outcome.reported` event of `report` and stores its row. Returns the event's
/// sequence number.
fn record_report(
    txn: &mut WriteTxn<'_>,
    key: &ServerKey,
    report: &Report,
    weight: &Weight,
) -> Result<i64, ToolError> {
    let reported = OutcomeReported {
        kind: RECORD_KIND.into(),
        report_id: report.report_id.clone(),
        receipt_id: report.receipt_id.clone(),
        resource_id: report.resource_id.clone(),
        version_used: report.version_used.clone(),
        result: report.result.clone(),
        reason_code: report.reason_code.clone(),
        note: report.note.clone(),
        note_sha256: report.note_sha256.clone(),
        agent_id: report.agent_id.clone(),
        owner_key: report.owner_key.clone(),
        canonical_text: report.canonical.clone(),
        record_hash: report.record_hash.clone(),
        signature: report.signature.clone(),
        key_id: key.key_id().to_owned(),
        weight: weight.value,
        flags: weight.flags.iter().map(|flag| (*flag).to_owned()).collect(),
        reasons: weight.reasons.clone(),
    };
    let event = txn.record(
        report.agent_id.clone(),
        report.resource_id.clone(),
        &reported,
    )?;
    replay::insert_reported(txn.conn(), &reported, event.seq, report.now)?;
    Ok(event.seq)
}

/// `report_outcome`'s `data`: the filed report, its signed record and its weight (spec
/// "report_outcome").
#[derive(Debug, Serialize)]
pub struct ReportFiled {
    /// `kdo_` and 24 hex characters.
    pub report_id: String,
    /// Always `outcome-report@1`.
    pub kind: &'static str,
    /// [`REPORT_LABEL`].
    pub label: &'static str,
    /// The receipt reported on.
    pub receipt_id: String,
    /// The resource the receipt names.
    pub resource_id: String,
    /// The reporter.
    pub agent_id: String,
    /// `worked`, `broke`, `partial` or `didnt_use`.
    pub result: String,
    /// The short reason code; null without one.
    pub reason_code: Option<String>,
    /// The version used (the receipt's when not given); null when unknown.
    pub version_used: Option<String>,
    /// The note (third-party text, lifted out); null without one.
    pub note: Option<String>,
    /// Lowercase hex SHA-256 of the note's UTF-8 bytes (of "" without one).
    pub note_sha256: String,
    /// RFC 3339 (ms).
    pub reported_at: String,
    /// Unix seconds (the canonical text's last line).
    pub reported_at_unix: i64,
    /// The signed `kd-outcome-v1` record.
    pub record: OutcomeRecord,
    /// The weight, 0..1 (a float).
    pub weight: f64,
    /// `[{code, effect, message}]`, one per flag.
    pub weight_reasons: Vec<Value>,
    /// The flags that applied: publisher_agent, burst, no_owner, new_agent, outlier_history,
    /// outlier.
    pub flags: Vec<&'static str>,
    /// [`RELIABILITY_LABEL`].
    pub shown_as: &'static str,
    /// Always false: a report is never verification.
    pub counts_as_verification: bool,
    /// The `outcome.reported` event's sequence number.
    pub event_seq: i64,
}

/// A report's signed record: `{recipe, canonical_text, record_hash, signature, key_id, alg}`.
#[derive(Debug, Serialize)]
pub struct OutcomeRecord {
    /// Always `kd-outcome-v1`.
    pub recipe: &'static str,
    /// The ten-line canonical text.
    pub canonical_text: String,
    /// Lowercase hex SHA-256 of the canonical text.
    pub record_hash: String,
    /// Ed25519 over the canonical text, base64url.
    pub signature: String,
    /// The signing key (`kd-passport-1`).
    pub key_id: String,
    /// Always `EdDSA`.
    pub alg: &'static str,
}

kd_kernel::output!(ReportFiled);

impl ReportFiled {
    /// The answer for a filed `report`.
    fn new(report: Report, key: &ServerKey, weight: &Weight, event_seq: i64) -> Self {
        Self {
            reported_at: rfc3339_ms(report.now),
            reported_at_unix: report.now.div_euclid(1000),
            record: OutcomeRecord {
                recipe: RECIPE,
                canonical_text: report.canonical,
                record_hash: report.record_hash,
                signature: report.signature,
                key_id: key.key_id().to_owned(),
                alg: "EdDSA",
            },
            report_id: report.report_id,
            kind: RECORD_KIND,
            label: REPORT_LABEL,
            receipt_id: report.receipt_id,
            resource_id: report.resource_id,
            agent_id: report.agent_id,
            result: report.result,
            reason_code: report.reason_code,
            version_used: report.version_used,
            note: report.note,
            note_sha256: report.note_sha256,
            weight: weight.value,
            weight_reasons: weight.reasons.clone(),
            flags: weight.flags.clone(),
            shown_as: RELIABILITY_LABEL,
            counts_as_verification: false,
            event_seq,
        }
    }
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
