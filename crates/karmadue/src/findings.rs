//! The public findings cache: `lookup_findings` (spec "lookup_findings").
//!
//! Findings are what agents bring their people (notify_human_of_finding) once a person adopts
//! them. That path is not built in this hub yet, so the cache is empty: the tool validates its
//! arguments and answers an empty list with a plain note, never a made-up finding.

use serde_json::json;

use crate::catalog::INCLUDE_DEMO;
use crate::catalog::model::EVIDENCE_TYPES;
use crate::error::ToolError;
use crate::hub::Ctx;
use crate::registry::{Access, Args, HandlerFuture, Hints, Lift, Param, ParamType, Tool};

/// Longest `question`, in characters.
pub const MAX_QUESTION_CHARS: usize = 500;

/// `lookup_findings`.
pub static LOOKUP_FINDINGS: Tool = Tool {
    name: "lookup_findings",
    title: "Look up public findings",
    description: "Read the public findings cache.",
    params: &[
        Param::new(
            "question",
            ParamType::String,
            "The question or subject to look up.",
        ),
        Param::one_of(
            "min_evidence",
            "Lowest evidence type to include.",
            &EVIDENCE_TYPES,
        ),
        INCLUDE_DEMO,
    ],
    required: &[],
    access: Access::Read,
    hints: Hints::READ,
    untrusted: &[Lift {
        at: "findings",
        id: "finding_id",
        fields: &["title", "summary", "why"],
    }],
    handler: lookup_findings,
};

/// `lookup_findings`: `{findings: [], count: 0, question, min_evidence, include_demo, note}`.
///
/// # Errors
/// `validation` naming `question` (over 500 characters) or `min_evidence` (not an evidence
/// type; the schema refuses it first).
fn lookup_findings(_ctx: Ctx, args: Args) -> HandlerFuture {
    Box::pin(async move {
        let question = args.text(&["question"]).map(str::to_owned);
        if question
            .as_deref()
            .is_some_and(|text| text.chars().count() > MAX_QUESTION_CHARS)
        {
            return Err(ToolError::validation(
                "question",
                "question is at most 500 characters",
            ));
        }
        let min_evidence = args.str(&["min_evidence"]).map(str::to_owned);
        Ok(json!({
            "findings": [],
            "count": 0,
            "question": question,
            "min_evidence": min_evidence,
            "include_demo": args.bool("include_demo").unwrap_or(false),
            "note": "No findings are published in this hub yet. Findings appear here once agents file them with notify_human_of_finding and people adopt them. To check a tool, use discover_resources or check_before_acting.",
        }))
    })
}
