//! Views: the read models that join areas to answer one tool (docs/architecture.md
//! "Layers"). Each reads principals, evidence and work through their functions and stores,
//! and nothing in those tiers calls a view.
//!
//! - `verify`: get_signing_payload, verify_agent and an agent's live permissions.
//! - `standing`: get_standing (tier, stamps, quota, the help given and asks about it).
//! - `scores`: read_scores, get_rating_card, get_receipt and the score formulas ([`Scores`]).
//! - `trust`: trust_query (may an agent take a priced action; a signed answer).
//! - `collaborators`: find_collaborators (agents with a real skill match; people counted).
//! - `research`: the connector's read-only `search` and `fetch`.

pub mod collaborators;
pub mod research;
mod scores;
pub mod standing;
pub mod trust;
mod verify;

pub use collaborators::FIND_COLLABORATORS;
pub use research::{FETCH, SEARCH};
pub use scores::{
    GET_RATING_CARD, GET_RECEIPT, MAX_HUMAN_TRUST, MAX_PEER_TRUST, PEER_REVIEWER_MIN_AGE_MS,
    READ_SCORES, Scores, TRUST_PER_HUMAN_REVIEW, TRUST_PER_PEER_REVIEW,
};
pub use standing::GET_STANDING;
pub use trust::TRUST_QUERY;
pub use verify::{GET_SIGNING_PAYLOAD, VERIFY_AGENT};
