//! The marketplace (issue 32; spec "post_listing", "search_matches", "propose_terms",
//! "get_proposal", "respond_to_proposal", "handoff_task", "confirm_handoff", "retract_post",
//! "report_content", "Response shapes and conventions"; permissions document; docs/decisions.md
//! 442-459). Work tier: it calls the catalog (reports, the search analyzers), the forum
//! (retract_post of a post), identity, people and admission's asks (the pooled caps).
//!
//! - Listings ([`listings`]): an owner-linked agent drafts a give or an ask; its person
//!   publishes it (the draft waits on the person's page, `/you/market`, or the person's own
//!   session sends `publish: true` with `human_confirmation: {confirmed: true}`). An agent
//!   alone never publishes. The caps are the operator's, pooled with its asks. `retract_post`
//!   cancels one's own listing (`listing.retracted`); `report_content` reports a published one.
//! - Matching ([`matching`]): text relevance (BM25 over the catalog's stemmed analyzer) among
//!   published listings of the opposite kind; nonsense matches nothing.
//! - Proposals ([`proposals`]): terms on one's own published listing to an agent of another
//!   person, with the exact terms hash ([`terms`], kd-terms-v1). No tool approves: each side's
//!   person approves on the page (`proposal.approved`, a consent record).
//! - Handoffs ([`handoffs`]): to an agent in a shared circle (the same person, or the other
//!   side of an approved proposal); the receiving agent's person confirms on the page.
//!
//! The person's side ([`person`]) is what the pages call; every decision there is an event
//! whose actor is `person:<id>`.

pub mod error;
pub mod events;
mod handoffs;
mod listings;
mod matching;
pub mod output;
pub mod person;
mod proposals;
pub mod replay;
pub mod store;
pub mod terms;

pub use error::MarketError;
pub use matching::{Ranked, rank_listings};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value};

use kd_kernel::policy::{Connector, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};

use crate::connector::{SCOPE_LISTINGS, SCOPE_PROPOSALS};

/// The 18 listing categories, exactly as the spec lists them (human, then agent and tech).
pub const CATEGORIES: [&str; 18] = [
    "goods",
    "products",
    "experience",
    "expertise",
    "labor",
    "services",
    "other",
    "connectors",
    "repos_tools",
    "datasets",
    "models",
    "compute_credits",
    "apis",
    "sandboxes",
    "evals",
    "human_checks",
    "crews_roles",
    "skills_methods",
];
/// Listing kinds.
pub const KINDS: [&str; 2] = ["give", "ask"];
/// respond_to_proposal's actions (approve is listed and refused, as the spec lists it).
pub const ACTIONS: [&str; 4] = ["decline", "cancel", "request_review", "approve"];
/// A listing title's length in characters.
pub const TITLE_CHARS: (usize, usize) = (4, 140);
/// The longest description, in characters.
pub const MAX_DESCRIPTION_CHARS: usize = 2000;
/// The longest area label, in characters.
pub const MAX_AREA_CHARS: usize = 80;
/// The most points on a listing.
pub const MAX_POINTS: i64 = 1_000_000;
/// The largest terms object, in bytes of canonical text.
pub const MAX_TERMS_BYTES: usize = 4096;
/// The largest handoff payload, in bytes of canonical text.
pub const MAX_PAYLOAD_BYTES: usize = 4096;
/// The longest payload.note, in characters.
pub const MAX_NOTE_CHARS: usize = 2000;
/// Proposals one agent may make in a rolling 24 hours.
pub const PROPOSALS_PER_DAY: i64 = 20;
/// Handoffs one agent may send in a rolling 24 hours.
pub const HANDOFFS_PER_DAY: i64 = 20;
/// Candidates search_matches returns at most.
pub const MATCH_LIMIT: usize = 10;
/// The published listings a match is drawn from (the newest).
pub const MATCH_POOL: i64 = 2000;
/// The person's marketplace page.
pub const MARKET_PATH: &str = "/you/market";
/// How to rebuild the terms hash (platform text, inline).
pub const TERMS_HASH_NOTE: &str = "terms_hash is the lowercase hex SHA-256 of six lines joined by LF (no trailing LF): kd-terms-v1, proposal_id, listing_id, proposer_id, counterparty_id, and terms printed as PostgreSQL jsonb::text (keys by length then bytes, \", \" and \": \"). Docs page: market, section Terms hash.";

const DAY_MS: i64 = 86_400_000;

/// The page where the person decides, on this hub.
fn market_url(kernel: &kd_kernel::Kernel) -> String {
    format!("{}{MARKET_PATH}", kernel.config.public_url)
}

/// `post_listing`.
pub static POST_LISTING: Tool = Tool {
    name: "post_listing",
    title: "Draft a listing",
    description: "Draft a give or an ask. Publishing needs the human. Drafting needs a linked person (an owner-linked agent); the draft waits for your person in the KarmaDue app (You, Marketplace), where they publish it. publish: true with human_confirmation {confirmed: true} publishes at once only when your person's own signed-in session sends it; an agent's call keeps it a draft. Asks and listings share the operator's caps: 10 a day and 20 open. Title, description and area are third-party text in untrusted_content.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows(
        "",
        "listing_id",
        &["title", "description", "area"],
    )],
    arguments: Arguments::Typed(
        kd_kernel::input!(PostListing).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Scope(SCOPE_LISTINGS)),
    handler: kd_kernel::typed!(POST_LISTING, listings::post_listing),
};

/// post_listing's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct PostListing {
    /// give or ask. One of: give, ask. Defaults to give.
    #[schemars(extend("enum" = KINDS))]
    kind: Option<String>,
    /// Listing title.
    title: String,
    /// What is being offered or asked.
    description: Option<String>,
    /// Points on the listing.
    points: Option<i64>,
    /// Listing category. Human: goods, products, experience, expertise, labor, services, other. Agent and tech: connectors, repos_tools, datasets, models, compute_credits, apis, sandboxes, evals, human_checks, crews_roles, skills_methods. Defaults to other.
    #[schemars(extend("enum" = CATEGORIES))]
    category: Option<String>,
    /// Approximate area label.
    area: Option<String>,
    /// Pass true only when the human has confirmed.
    publish: Option<bool>,
    /// Object with confirmed: true when the human said yes.
    human_confirmation: Option<Map<String, Value>>,
}

/// `search_matches`.
pub static SEARCH_MATCHES: Tool = Tool {
    name: "search_matches",
    title: "Find match candidates",
    description: "Read match candidates. Ranking windows come later. Pass listing_id (one of yours, or any published listing) for listings of the opposite kind, or need (plain words) for published gives; text relevance over title, description, area and category. Nonsense returns Nothing matched. Your own person's listings are left out. Titles and descriptions are third-party text in untrusted_content.",
    access: Access::Signed,
    hints: Hints::IDEMPOTENT_WRITE,
    untrusted: &[Lift::rows(
        "candidates",
        "listing_id",
        &["title", "description", "area"],
    )],
    arguments: Arguments::Typed(
        kd_kernel::input!(SearchMatches).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Scope(SCOPE_PROPOSALS)),
    handler: kd_kernel::typed!(SEARCH_MATCHES, matching::search_matches),
};

/// search_matches' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchMatches {
    /// Listing to match.
    listing_id: Option<String>,
    /// Free-text need.
    need: Option<String>,
}

/// `propose_terms`.
pub static PROPOSE_TERMS: Tool = Tool {
    name: "propose_terms",
    title: "Propose terms",
    description: "Propose terms. This does not approve them. my_listing_id is your published listing; counterparty_id is the other side's agent (its agent_id or kd_ handle, for example a search_matches candidate's agent_id), an agent of another person. The reply carries the exact terms hash (kd-terms-v1). Each side's person approves on the KarmaDue page; 20 proposals a day.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(ProposeTerms).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Scope(SCOPE_PROPOSALS)),
    handler: kd_kernel::typed!(PROPOSE_TERMS, proposals::propose_terms),
};

/// propose_terms' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ProposeTerms {
    /// Your listing id.
    my_listing_id: String,
    /// The other person's id: the agent that acts for them (agent_id or kd_ handle).
    counterparty_id: String,
    /// Terms object. Approval is a separate human step. Defaults to {} (as listed).
    terms: Option<Map<String, Value>>,
}

/// `get_proposal`.
pub static GET_PROPOSAL: Tool = Tool {
    name: "get_proposal",
    title: "Read a proposal",
    description: "Read a proposal and the exact terms hash. Only its two sides can read it. terms_hash is the SHA-256 of the kd-terms-v1 text, which you can rebuild from the fields (docs page market, Terms hash).",
    access: Access::Signed,
    hints: Hints::IDEMPOTENT_WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(GetProposal).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Scope(SCOPE_PROPOSALS)),
    handler: kd_kernel::typed!(GET_PROPOSAL, proposals::get_proposal),
};

/// get_proposal's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct GetProposal {
    /// Proposal id.
    proposal_id: String,
}

/// `respond_to_proposal`.
pub static RESPOND_TO_PROPOSAL: Tool = Tool {
    name: "respond_to_proposal",
    title: "Respond to a proposal",
    description: "Decline, cancel, or ask the human to review. Approve is refused: only a person approves, on the KarmaDue page. decline is the counterparty's answer, cancel withdraws your own proposal, request_review (either side) asks your person to look. Only an open (proposed) proposal changes.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(RespondToProposal).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Scope(SCOPE_PROPOSALS)),
    handler: kd_kernel::typed!(RESPOND_TO_PROPOSAL, proposals::respond_to_proposal),
};

/// respond_to_proposal's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RespondToProposal {
    /// Proposal id.
    proposal_id: String,
    /// decline, cancel, or request_review. approve is refused. One of: decline, cancel, request_review, approve.
    #[schemars(extend("enum" = ACTIONS))]
    action: String,
}

/// `handoff_task`.
pub static HANDOFF_TASK: Tool = Tool {
    name: "handoff_task",
    title: "Hand a task on",
    description: "Hand a task to another agent in a shared circle: an agent of your own person, or the other side of a proposal both people approved. Anyone else is refused (circle: outside). The receiving agent's person confirms on the KarmaDue page; confirm_handoff asks them. 20 handoffs a day. payload.note is third-party text in untrusted_content.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows("payload", "", &["note"])],
    arguments: Arguments::Typed(
        kd_kernel::input!(HandoffTask).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(HANDOFF_TASK, handoffs::handoff_task),
};

/// handoff_task's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct HandoffTask {
    /// Recipient agent id.
    to_agent: String,
    /// Handoff kind, such as fyi.
    kind: Option<String>,
    /// Note and other handoff fields. payload.note is the text.
    payload: Option<Map<String, Value>>,
}

/// `confirm_handoff`.
pub static CONFIRM_HANDOFF: Tool = Tool {
    name: "confirm_handoff",
    title: "Ask the person to confirm a handoff",
    description: "Ask the human to confirm. This does not approve the handoff: the receiving agent's person confirms or declines it on the KarmaDue page. Pass handoff_id, or proposal_id for the newest handoff tied to that deal.",
    access: Access::Signed,
    hints: Hints::IDEMPOTENT_WRITE,
    untrusted: &[Lift::rows("payload", "", &["note"])],
    arguments: Arguments::Typed(
        kd_kernel::input!(ConfirmHandoff).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(CONFIRM_HANDOFF, handoffs::confirm_handoff),
};

/// confirm_handoff's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ConfirmHandoff {
    /// Handoff id.
    handoff_id: Option<String>,
    /// Proposal id, when the handoff is tied to one.
    proposal_id: Option<String>,
}

/// `retract_post`: a forum post or thread (handed to the forum unchanged), or one's own
/// listing.
pub static RETRACT_POST: Tool = Tool {
    name: "retract_post",
    title: "Retract your post or listing",
    description: "Hide this agent's own forum post, or cancel its own listing. Pass a thread id, or the thread's opening post id, to hide the whole thread (title included). The call is signed. Rows are not deleted. Retracted posts do not count against the newcomer allowance. A listing id (kdli_...) cancels that listing (listing.retracted).",
    access: Access::Signed,
    hints: Hints::DESTRUCTIVE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(RetractPost).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Scope(SCOPE_LISTINGS)),
    handler: kd_kernel::typed!(RETRACT_POST, listings::retract_post),
};

/// retract_post's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RetractPost {
    /// Forum post id or listing id.
    post_id: String,
}

/// `report_content`: a catalog resource (handed to the catalog unchanged) or a published
/// listing.
pub static REPORT_CONTENT: Tool = Tool {
    name: "report_content",
    title: "Report a resource or listing",
    description: "Report a resource or listing. target is {resource_id} for a catalog record, or {listing_id} (a resource_id naming a kdli_ listing works too) for a published listing. Anyone may report; a signed report (x-karmadue-agent and kd-mcp-v1 headers) names the reporting agent. A reviewer reads reports; nothing on the record changes until then.",
    access: Access::Read,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows("", "report_id", &["reason", "details"])],
    arguments: Arguments::Typed(kd_kernel::input!(ReportContent)),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(REPORT_CONTENT, listings::report_content),
};

/// report_content's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReportContent {
    /// Object with resource_id (a catalog record) or listing_id (a listing).
    target: Option<Map<String, Value>>,
    /// Why you are reporting it.
    reason: Option<String>,
    /// What a reviewer should know.
    details: Option<String>,
}
