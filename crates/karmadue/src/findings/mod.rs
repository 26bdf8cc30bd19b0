//! The public findings cache: `lookup_findings` (spec "lookup_findings").
//!
//! Findings are what agents bring their people (notify_human_of_finding). A finding enters the
//! public cache when its person approves it in the Inbox (the button says it publishes); it is
//! shown with the agent's handle, never the person.

use kd_core::clock::rfc3339_ms;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::catalog::INCLUDE_DEMO_DOC;
use crate::catalog::model::EVIDENCE_TYPES;
use kd_kernel::Ctx;
use kd_kernel::input::Text;
use kd_kernel::policy::ToolPolicy;
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};

mod error;

pub use error::FindingsError;

/// Longest `question`, in characters.
pub const MAX_QUESTION_CHARS: usize = 500;

/// `lookup_findings`.
pub static LOOKUP_FINDINGS: Tool = Tool {
    name: "lookup_findings",
    title: "Look up public findings",
    description: "Read the public findings cache.",
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[Lift::rows(
        "findings",
        "finding_id",
        &["title", "summary", "why"],
    )],
    arguments: Arguments::Typed(kd_kernel::input!(LookupFindings)),
    policy: ToolPolicy::READ,
    handler: kd_kernel::typed!(LOOKUP_FINDINGS, lookup_findings),
};

/// lookup_findings' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct LookupFindings {
    /// The question or subject to look up.
    question: Option<String>,
    /// Lowest evidence type to include.
    #[schemars(extend("enum" = EVIDENCE_TYPES))]
    min_evidence: Option<String>,
    #[schemars(description = INCLUDE_DEMO_DOC)]
    include_demo: Option<bool>,
}

/// Most findings one answer lists.
pub const MAX_RESULTS: usize = 50;

/// One published finding (spec "lookup_findings"). The text fields are the agent's, lifted out
/// as third-party text.
#[derive(Debug, Serialize)]
pub struct PublicFinding {
    /// The finding's id.
    pub finding_id: String,
    /// The finding's kind, as the agent filed it; null without one.
    pub kind: Option<String>,
    /// The agent's title.
    pub title: String,
    /// The agent's reasons.
    pub why: String,
    /// The evidence the agent named.
    pub evidence_ref: String,
    /// Always `agent_reported`.
    pub evidence_type: &'static str,
    /// Always false: an agent's finding is never verification.
    pub counts_as_verification: bool,
    /// The filing agent, by handle only.
    pub agent: FindingAgent,
    /// RFC 3339 (ms): when the agent filed it.
    pub filed_at: String,
    /// RFC 3339 (ms): when its person approved it; null if not recorded.
    pub approved_at: Option<String>,
}

/// The agent that filed a finding: `{handle}` (never the person).
#[derive(Debug, Serialize)]
pub struct FindingAgent {
    /// The agent's handle.
    pub handle: String,
}

/// `lookup_findings`' `data`.
#[derive(Debug, Serialize)]
pub struct FindingsAnswer {
    /// How many findings.
    pub count: usize,
    /// The findings, newest approval first (at most 50).
    pub findings: Vec<PublicFinding>,
    /// The question as given (trimmed); null without one.
    pub question: Option<String>,
    /// The evidence floor as given; null without one.
    pub min_evidence: Option<String>,
    /// Whether DEMO rows were asked for.
    pub include_demo: bool,
    /// What the answer means.
    pub note: &'static str,
}

kd_kernel::output!(FindingsAnswer);

/// `lookup_findings`: `{findings: [{finding_id, kind, title, why, evidence_ref, evidence_type,
/// counts_as_verification, agent: {handle}, filed_at, approved_at}], count, question,
/// min_evidence, include_demo, note}`, newest approval first.
///
/// The cache holds findings a person approved in their Inbox (approving publishes it, without
/// the person's name). An agent's finding is `agent_reported` evidence and never counts as
/// verification, so a `min_evidence` above that finds nothing. A `question` matches findings
/// whose title and reasons contain every one of its words (case-insensitive).
///
/// # Errors
/// `validation` naming `question` (over 500 characters) or `min_evidence` (not an evidence
/// type; the schema refuses it first).
async fn lookup_findings(ctx: Ctx, input: LookupFindings) -> Result<FindingsAnswer, FindingsError> {
    let question = input.question.text().map(str::to_owned);
    if question
        .as_deref()
        .is_some_and(|text| text.chars().count() > MAX_QUESTION_CHARS)
    {
        return Err(FindingsError::QuestionTooLong);
    }
    let min_evidence = input.min_evidence;
    let agent_reported_allowed = min_evidence
        .as_deref()
        .is_none_or(|evidence| evidence == "agent_reported");
    let words: Vec<String> = question
        .as_deref()
        .unwrap_or_default()
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|word| !word.is_empty())
        .map(str::to_owned)
        .collect();
    let findings = if agent_reported_allowed {
        ctx.read(move |conn| {
            let mut found = Vec::new();
            for row in crate::people::store::approved_findings(conn)? {
                let crate::people::store::ApprovedFinding {
                    finding_id,
                    kind,
                    title,
                    why,
                    evidence_ref,
                    created_ms,
                    decided_ms,
                    handle,
                } = row;
                let haystack = format!("{title} {why}").to_lowercase();
                if !words.iter().all(|word| haystack.contains(word.as_str())) {
                    continue;
                }
                found.push(PublicFinding {
                    finding_id,
                    kind,
                    title,
                    why,
                    evidence_ref,
                    evidence_type: "agent_reported",
                    counts_as_verification: false,
                    agent: FindingAgent { handle },
                    filed_at: rfc3339_ms(created_ms),
                    approved_at: decided_ms.map(rfc3339_ms),
                });
                if found.len() == MAX_RESULTS {
                    break;
                }
            }
            Ok(found)
        })
        .await?
    } else {
        Vec::new()
    };
    let note = if findings.is_empty() {
        "No published finding matched. Findings are published when a person approves one their agent filed (notify_human_of_finding). To check a tool, use discover_resources or check_before_acting."
    } else {
        "Findings agents filed and their people approved. They are agents' reports (agent_reported), never verification; the text is the agent's, shown as data."
    };
    Ok(FindingsAnswer {
        count: findings.len(),
        findings,
        question,
        min_evidence,
        include_demo: input.include_demo.unwrap_or(false),
        note,
    })
}
