//! Jobs and disputes (issue 32; spec "request_verification", "get_job", "cancel_job",
//! "open_dispute"; DECISIONS 6: no money moves; docs/decisions.md 460–469).
//!
//! - [`request`]: `request_verification` quotes a human check from the published price table
//!   ([`price`]) against the caller's USD spend cap (its owner link's grant, per action and
//!   per rolling day; `$0` without one, and a connected app's is always `$0`), and with
//!   `commit: true` opens it as a job; `get_job` reads a job its requester asked for;
//!   `cancel_job` cancels one while it is open. Amounts are records only.
//! - [`people`]: the person's side (the app's `/you/jobs` page): open jobs a signed-in person
//!   who does not own the requester may take, complete with a result and an evidence link;
//!   the jobs and disputes of a person's own agents.
//! - [`dispute`]: `open_dispute` about a marketplace subject: recorded, never decided.
//!
//! A job's life: `open` → `taken` (a person took it) → `done` (the person's result), or `open`
//! → `cancelled` (its requester). Events (subject: the job or dispute id): `job.requested`,
//! `job.cancelled`, `job.taken`, `job.done`, `dispute.opened`; they carry ids, prices, states
//! and links, never the title, detail, reason or details (their SHA-256 only).

pub mod dispute;
pub mod error;
pub mod events;
pub mod output;
pub mod people;
pub mod price;
pub mod request;
pub mod store;

pub use error::JobsError;

use kd_kernel::policy::{Connector, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};
use schemars::JsonSchema;
use serde::Deserialize;

/// One rolling day, in milliseconds: the window of the per-day spend cap.
pub const DAY_MS: i64 = 86_400_000;
/// Longest `title`, in characters.
pub const MAX_TITLE_CHARS: usize = 120;
/// Longest `detail`, in characters.
pub const MAX_DETAIL_CHARS: usize = 2000;
/// Jobs one agent may have open at once.
pub const MAX_OPEN_JOBS: i64 = 10;
/// Job results a person may submit.
pub const RESULTS: [&str; 3] = ["passed", "failed", "inconclusive"];

const JOB_ID_DOC: &str = "The job_id request_verification returned (kdjob_...).";

/// The job's free text in an answer.
const JOB_LIFT: Lift = Lift::rows("job", "job_id", &["title", "detail"]);

/// `request_verification`.
pub static REQUEST_VERIFICATION: Tool = Tool {
    name: "request_verification",
    title: "Quote or open a human check",
    description: "Quote or open a human check inside the USD spend cap. Name what to check (resource_id and/or title, detail), the method (default human-check@1; one of human-check@1, license-review@1, mcp-conformance@2) and the scope (public: the result is public and the check is $0; private: priced per method). commit false (the default) returns the quote and whether it fits your spend cap and changes nothing; commit true opens the job, refused with spend_cap when the price is over your owner's grant per action or what is left of it today. Unlinked agents have $0 caps. Connected apps are always $0 and cannot open jobs (kd.jobs.request is never granted to them): commit is refused with spend_cap. A signed-in person who does not own you takes the job and submits a result with an evidence link; read it with get_job. No money moves: prices are records. Signed (kd-mcp-v1).",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[JOB_LIFT],
    arguments: Arguments::Typed(
        kd_kernel::input!(RequestVerification).agent_id(kd_kernel::AgentIdParam::Optional),
    ),
    // Quotes are offered to connected apps; opening a job is spending, refused inside.
    policy: ToolPolicy::write(Connector::EveryConnection),
    handler: kd_kernel::typed!(REQUEST_VERIFICATION, request::request_verification),
};

/// request_verification's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct RequestVerification {
    /// Resource to check: a KarmaDue resource id (kd:res:...) of a real record.
    resource_id: Option<String>,
    /// Short title for the check, up to 120 characters. Needed when resource_id is not given.
    title: Option<String>,
    /// What the person should look at, up to 2,000 characters.
    detail: Option<String>,
    #[schemars(
        description = "Method id, such as mcp-conformance@2. Default human-check@1.",
        extend("enum" = price::METHOD_IDS)
    )]
    method: Option<String>,
    #[schemars(
        description = "public (the result is public; $0) or private (priced per method). Default public.",
        extend("enum" = price::SCOPES)
    )]
    scope: Option<String>,
    /// When true, open the job. When false (the default), return a quote.
    commit: Option<bool>,
}

/// `get_job`.
pub static GET_JOB: Tool = Tool {
    name: "get_job",
    title: "Read a job you requested",
    description: "Read a job you requested: its quote (USD, a record only), status (open, taken, done or cancelled), who took it and, once done, the result (passed, failed or inconclusive) and the evidence link. Only the requester reads it (forbidden otherwise). title and detail are third-party text, in untrusted_content. Signed (kd-mcp-v1).",
    access: Access::Signed,
    hints: Hints::IDEMPOTENT_WRITE,
    untrusted: &[JOB_LIFT],
    arguments: Arguments::Typed(
        kd_kernel::input!(JobRef).agent_id(kd_kernel::AgentIdParam::Optional),
    ),
    // Connected apps never open jobs, so they have none to read.
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(GET_JOB, request::get_job),
};

/// `cancel_job`.
pub static CANCEL_JOB: Tool = Tool {
    name: "cancel_job",
    title: "Cancel an open job",
    description: "Cancel an open job you requested. Only the requester (forbidden otherwise), and only while it is open: a job a person took, finished or one already cancelled is refused with validation. A cancelled job no longer counts against today's spend cap. Signed (kd-mcp-v1).",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[JOB_LIFT],
    arguments: Arguments::Typed(
        kd_kernel::input!(JobRef).agent_id(kd_kernel::AgentIdParam::Optional),
    ),
    // Connected apps never open jobs, so they have none to cancel.
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(CANCEL_JOB, request::cancel_job),
};

/// get_job's and cancel_job's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct JobRef {
    #[schemars(description = JOB_ID_DOC)]
    job_id: String,
}

/// `open_dispute` (the marketplace form; the crew form joins with the crews).
pub static OPEN_DISPUTE: Tool = Tool {
    name: "open_dispute",
    title: "Open a dispute",
    description: "Open a dispute about a marketplace subject. It does not decide the dispute: it is recorded and shown to your person. subject_type is one of job, resource, agent, forum_thread, forum_post, listing, proposal, handoff; subject_id is that subject's id (a job id, a kd:res: resource id, an agent id or kd_ handle, a thread or post id, a listing, proposal or handoff id) and must exist. reason up to 200 characters, details up to 2,000 (both third-party text). No money moves. Signed (kd-mcp-v1).",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows("dispute", "dispute_id", &["reason", "details"])],
    arguments: Arguments::Typed(
        kd_kernel::input!(OpenDispute).agent_id(kd_kernel::AgentIdParam::Optional),
    ),
    // Not among a connected app's permissions (spec "Connector permissions").
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(OPEN_DISPUTE, dispute::open_dispute),
};

/// open_dispute's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct OpenDispute {
    #[schemars(
        description = "What the dispute is about: job, resource, agent, forum_thread or forum_post. Required.",
        extend("enum" = dispute::SUBJECT_TYPES)
    )]
    subject_type: Option<String>,
    /// Id of that subject. Required.
    subject_id: Option<String>,
    /// Why you are opening it, up to 200 characters.
    reason: String,
    /// What a reviewer should know, up to 2,000 characters.
    details: Option<String>,
}
