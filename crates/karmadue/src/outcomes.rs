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

use crate::events::catalog::OutcomeReported;
use kd_core::clock::rfc3339_ms;
use kd_core::db::{Connection, OptionalExtension};
use kd_core::random::random_id;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::catalog::model::{self, Resource};
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

/// The reporting agent, as weighing needs it.
#[derive(Debug, Clone)]
pub struct Reporter {
    /// The agent.
    pub agent_id: String,
    /// Its owner, when claimed.
    pub owner_id: Option<String>,
    /// When it registered (Unix ms).
    pub created_ms: i64,
}

impl Reporter {
    /// The owner reports are grouped by: the owner id, or `agent:<agent_id>` for an agent
    /// without an owner (it counts as its own owner).
    pub fn owner_key(&self) -> String {
        self.owner_id
            .clone()
            .unwrap_or_else(|| format!("agent:{}", self.agent_id))
    }

    /// Reads an agent.
    ///
    /// # Errors
    /// `not_found` naming `agent_id`; `internal`.
    pub fn load(conn: &Connection, agent_id: &str) -> Result<Self, ToolError> {
        let (agent_id, owner_id, created_ms) =
            crate::identity::store::owner_and_created(conn, agent_id)?
                .ok_or_else(|| ToolError::not_found("agent_id", "No agent has this agent_id."))?;
        Ok(Self {
            agent_id,
            owner_id,
            created_ms,
        })
    }
}

/// A report's weight, decided when it is made.
#[derive(Debug, Clone, PartialEq)]
pub struct Weight {
    /// 0..1.
    pub value: f64,
    /// The codes that applied: publisher_agent, burst, no_owner, new_agent, outlier_history,
    /// outlier.
    pub flags: Vec<&'static str>,
    /// `[{code, effect, message}]`, one per flag.
    pub reasons: Vec<Value>,
}

impl Weight {
    /// Flagged as going against a strong consensus.
    pub fn outlier(&self) -> bool {
        self.flags.contains(&"outlier")
    }
}

/// One stored report, as summaries need it.
#[derive(Debug, Clone)]
pub(crate) struct Counted {
    pub(crate) agent_id: String,
    pub(crate) owner_key: String,
    pub(crate) result: String,
    pub(crate) weight: f64,
    pub(crate) outlier: bool,
}

/// Reports on `resource_id` made in `(since_ms, until_ms]`, oldest first.
fn reports_between(
    conn: &Connection,
    resource_id: &str,
    since_ms: i64,
    until_ms: i64,
) -> Result<Vec<Counted>, ToolError> {
    Ok(store::reports_between(
        conn,
        resource_id,
        since_ms,
        until_ms,
    )?)
}

/// Counted once per owner: each owner's latest report that carries weight, in owner order.
fn latest_per_owner(rows: &[Counted]) -> Vec<&Counted> {
    let mut latest: std::collections::BTreeMap<&str, &Counted> = std::collections::BTreeMap::new();
    for row in rows.iter().filter(|row| row.weight > 0.0) {
        latest.insert(&row.owner_key, row);
    }
    latest.into_values().collect()
}

fn reason(code: &'static str, effect: &str, message: &str) -> Value {
    json!({ "code": code, "effect": effect, "message": message })
}

/// Weighs a new report (spec "Weighting (anti-gaming)"). Runs in the report's write
/// transaction, before the report is stored:
///
/// - `publisher_agent` (weight 0): the reporter is the agent that registered the resource
///   (`resources.registered_by`), or an agent of that agent's owner.
/// - `burst` (weight 0): the reporter's owner already made 3 reports on this resource in the
///   last 24 hours; the 4th and later are a burst.
/// - `no_owner`, `new_agent` (capped at 0.25): the agent has no owner, or registered under 7
///   days ago.
/// - `outlier_history` (halved): at least 2 of the owner's last 10 reports were outliers.
/// - `outlier` (halved): at least 5 other owners' counted reports in 30 days agree on one
///   result, they are at least 80% of the other owners, and this result (worked, broke or
///   partial; didnt_use is never an outlier) differs.
///
/// # Errors
/// `internal` when the store fails.
pub fn weigh(
    conn: &Connection,
    resource: Option<&Resource>,
    reporter: &Reporter,
    result: &str,
    now_ms: i64,
) -> Result<Weight, ToolError> {
    let owner_key = reporter.owner_key();
    let mut flags = Vec::new();
    let mut reasons = Vec::new();
    let mut value: f64 = 1.0;

    let resource_id = resource
        .map(|resource| resource.resource_id.as_str())
        .unwrap_or_default();
    let publisher = match resource.and_then(|resource| resource.registered_by.as_deref()) {
        Some(publisher) if publisher == reporter.agent_id => true,
        Some(publisher) => {
            let publisher_owner: Option<String> = crate::identity::store::owner_of(conn, publisher)
                .optional()?
                .flatten();
            publisher_owner.is_some() && publisher_owner == reporter.owner_id
        }
        None => false,
    };
    if publisher {
        flags.push("publisher_agent");
        reasons.push(reason(
            "publisher_agent",
            "weight 0",
            "Reported by the publisher's own agent.",
        ));
    }
    let recent: i64 = store::owner_reports_since(conn, &owner_key, resource_id, now_ms - DAY_MS)?;
    let burst = recent >= BURST_AFTER;
    if burst {
        flags.push("burst");
        reasons.push(reason(
            "burst",
            "weight 0",
            "More than 3 reports from one owner on this resource in 24 hours.",
        ));
    }
    if reporter.owner_id.is_none() {
        flags.push("no_owner");
        reasons.push(reason(
            "no_owner",
            "capped at 0.25",
            "The agent has no owner.",
        ));
        value = value.min(CAP);
    }
    if now_ms - reporter.created_ms < NEW_AGENT_MS {
        flags.push("new_agent");
        reasons.push(reason(
            "new_agent",
            "capped at 0.25",
            "The agent is under 7 days old.",
        ));
        value = value.min(CAP);
    }
    let history: i64 = store::recent_outliers(conn, &owner_key, HISTORY_REPORTS)?;
    if history >= HISTORY_OUTLIERS {
        flags.push("outlier_history");
        reasons.push(reason(
            "outlier_history",
            "halved",
            "At least 2 of this owner's last 10 reports went against a strong consensus.",
        ));
        value *= 0.5;
    }
    if result != "didnt_use" {
        let rows = reports_between(conn, resource_id, now_ms - WINDOW_MS, now_ms)?;
        let others: Vec<&Counted> = latest_per_owner(&rows)
            .into_iter()
            .filter(|row| row.owner_key != owner_key && row.result != "didnt_use")
            .collect();
        let top = ["worked", "broke", "partial"]
            .iter()
            .map(|candidate| {
                (
                    *candidate,
                    others.iter().filter(|row| row.result == *candidate).count(),
                )
            })
            .max_by_key(|(_, count)| *count);
        if let Some((consensus, agreeing)) = top {
            let strong = agreeing >= CONSENSUS_OWNERS
                && agreeing as f64 >= CONSENSUS_SHARE * others.len() as f64;
            if strong && consensus != result {
                flags.push("outlier");
                reasons.push(reason(
                    "outlier",
                    "halved",
                    &format!("Goes against a strong consensus: {agreeing} of {} other owners reported {consensus}.", others.len()),
                ));
                value *= 0.5;
            }
        }
    }
    if publisher || burst {
        value = 0.0;
    }
    Ok(Weight {
        value,
        flags,
        reasons,
    })
}

/// Refuses when one more report would pass a limit: 10 a minute and 30 a day per agent, 100 a
/// day per owner (rolling windows). Counts the stored reports, inside the write transaction,
/// so the limits hold exactly under concurrency.
///
/// # Errors
/// `rate_limited` with `retry_after_s` (seconds until one more report fits) and `limit`.
pub fn check_limits(conn: &Connection, reporter: &Reporter, now_ms: i64) -> Result<(), ToolError> {
    limit(
        conn,
        "agent_id",
        &reporter.agent_id,
        MINUTE_MS,
        AGENT_PER_MINUTE,
        now_ms,
        "10 reports a minute per agent",
    )?;
    limit(
        conn,
        "agent_id",
        &reporter.agent_id,
        DAY_MS,
        AGENT_PER_DAY,
        now_ms,
        "30 reports a day per agent",
    )?;
    if let Some(owner) = &reporter.owner_id {
        limit(
            conn,
            "owner_key",
            owner,
            DAY_MS,
            OWNER_PER_DAY,
            now_ms,
            "100 reports a day per owner",
        )?;
    }
    Ok(())
}

fn limit(
    conn: &Connection,
    column: &'static str,
    value: &str,
    window_ms: i64,
    max: usize,
    now_ms: i64,
    words: &str,
) -> Result<(), ToolError> {
    let times = store::report_times_since(conn, column, value, now_ms - window_ms)?;
    if times.len() < max {
        return Ok(());
    }
    // One more fits once the report at this position has left the window.
    let leaving = times[times.len() - max];
    // Whole seconds, rounded up: at that time the report has left the window.
    let retry_after_s = (leaving + window_ms - now_ms + 999).div_euclid(1000);
    Err(ToolError::new(
        ErrorCode::RateLimited,
        format!(
            "Too many outcome reports: the limit is {words}. Try again in {retry_after_s} seconds."
        ),
    )
    .with("retry_after_s", retry_after_s.max(1))
    .with("limit", words))
}

/// The reliability summary of a resource at `now_ms`, or None when nobody reported on it in
/// the 30 days before: `{label, reports, agents, owners, by_owner {worked, broke, partial,
/// didnt_use}, weighted {…}, outlier_reports, excluded_reports, line, established,
/// window_days, note}`.
///
/// `reports`, `agents`, `outlier_reports` and `excluded_reports` (weight 0) count every report
/// in the window. `owners` and `by_owner` count each owner once, by its latest report that
/// carries weight; `weighted` sums those reports' weights. `established` is true at 5 or more
/// such owners.
///
/// # Errors
/// `internal` when the store fails.
pub fn reliability_reports_at(
    conn: &Connection,
    resource_id: &str,
    now_ms: i64,
) -> Result<Option<Value>, ToolError> {
    let rows = reports_between(conn, resource_id, now_ms - WINDOW_MS, now_ms)?;
    if rows.is_empty() {
        return Ok(None);
    }
    let agents: std::collections::BTreeSet<&str> =
        rows.iter().map(|row| row.agent_id.as_str()).collect();
    let counted = latest_per_owner(&rows);
    let count = |result: &str| counted.iter().filter(|row| row.result == result).count();
    // Folded from +0.0: an empty `sum` of floats is -0.0, which JSON would print as "-0.0".
    let weighted = |result: &str| -> f64 {
        counted
            .iter()
            .filter(|row| row.result == result)
            .map(|row| row.weight)
            .fold(0.0, |total, weight| total + weight)
    };
    let (worked, broke, partial, unused) = (
        count("worked"),
        count("broke"),
        count("partial"),
        count("didnt_use"),
    );
    let owners = counted.len();
    let excluded = rows.iter().filter(|row| row.weight <= 0.0).count();
    let line = if owners == 0 {
        format!(
            "no counted reports: {} report{} weigh 0",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        )
    } else {
        let mut parts = vec![format!(
            "worked for {worked} of {owners} owner{}",
            if owners == 1 { "" } else { "s" }
        )];
        if broke > 0 {
            parts.push(format!("broke for {broke}"));
        }
        if partial > 0 {
            parts.push(format!("partial for {partial}"));
        }
        if unused > 0 {
            parts.push(format!("not used by {unused}"));
        }
        parts.join("; ")
    };
    let established = owners >= ESTABLISHED_OWNERS;
    Ok(Some(json!({
        "label": RELIABILITY_LABEL,
        "reports": rows.len(),
        "agents": agents.len(),
        "owners": owners,
        "by_owner": { "worked": worked, "broke": broke, "partial": partial, "didnt_use": unused },
        "weighted": { "worked": weighted("worked"), "broke": weighted("broke"), "partial": weighted("partial"), "didnt_use": weighted("didnt_use") },
        "outlier_reports": rows.iter().filter(|row| row.outlier).count(),
        "excluded_reports": excluded,
        "line": line,
        "established": established,
        "window_days": WINDOW_MS / DAY_MS,
        "note": if established {
            "Agents' own reports after use, counted once per owner. Never verification; never changes the ranking, trust or the assessment."
        } else {
            "Anecdotal: fewer than 5 owners reported in 30 days. Agents' own reports after use; never verification."
        },
    })))
}

/// [`reliability_reports_at`] at the hub's time as of the latest event in the log (the clock is
/// not reachable from a bare connection; every report appends an event, so the window can only
/// lag by the time since the hub last wrote). Callers that hold the hub's clock should prefer
/// [`reliability_reports_at`].
///
/// # Errors
/// `internal` when the store fails.
pub fn reliability_reports(
    conn: &Connection,
    resource_id: &str,
) -> Result<Option<Value>, ToolError> {
    let head_ms: Option<i64> = crate::ledger::store::head_time(conn)?;
    match head_ms {
        Some(now_ms) => reliability_reports_at(conn, resource_id, now_ms),
        None => Ok(None),
    }
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

    fn counted(owner: &str, result: &str, weight: f64) -> Counted {
        Counted {
            agent_id: format!("a-{owner}"),
            owner_key: owner.into(),
            result: result.into(),
            weight,
            outlier: false,
        }
    }

    #[test]
    fn each_owner_counts_once_by_its_latest_report_that_carries_weight() {
        let rows = vec![
            counted("o1", "broke", 1.0),
            counted("o1", "worked", 0.25),
            counted("o1", "partial", 0.0),
            counted("o2", "worked", 1.0),
        ];
        let latest = latest_per_owner(&rows);
        assert_eq!(latest.len(), 2);
        assert_eq!(latest[0].result, "worked");
    }
}
