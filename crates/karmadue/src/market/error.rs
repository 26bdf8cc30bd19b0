//! The marketplace's refusals (issue 10, "one error enum per area"): each a variant with its
//! sentence, converted into the kernel's [`ToolError`] with the spec code and the field it
//! names. Every refusal is decided before anything is appended.

use kd_kernel::error::{ErrorCode, ToolError};

use super::{
    CATEGORIES, MAX_AREA_CHARS, MAX_DESCRIPTION_CHARS, MAX_NOTE_CHARS, MAX_PAYLOAD_BYTES,
    MAX_POINTS, MAX_TERMS_BYTES, TITLE_CHARS,
};

/// Why a marketplace tool refused (or failed).
#[derive(Debug, thiserror::Error)]
pub enum MarketError {
    /// `kind` is not give or ask (`kind`; `validation`).
    #[error("kind must be give or ask")]
    Kind,
    /// `category` is not one of the 18 (`category`; `validation`).
    #[error("category must be one of: {}", CATEGORIES.join(", "))]
    Category,
    /// The title's length or characters (`title`; `validation`).
    #[error("title is {} to {} characters, without control characters", TITLE_CHARS.0, TITLE_CHARS.1)]
    Title,
    /// The description is too long (`description`; `validation`).
    #[error("description is at most {MAX_DESCRIPTION_CHARS} characters")]
    Description,
    /// The area label is too long (`area`; `validation`).
    #[error("area is at most {MAX_AREA_CHARS} characters, without control characters")]
    Area,
    /// Points out of range (`points`; `validation`).
    #[error("points is a whole number from 0 to {MAX_POINTS}")]
    Points,
    /// publish true without the person's yes (`human_confirmation`; `validation`).
    #[error(
        "publish: true needs human_confirmation: {{\"confirmed\": true}}, given only when your person said yes. Without it, leave publish out: the draft waits for your person in the KarmaDue app."
    )]
    ConfirmationMissing,
    /// The agent has no person (`forbidden`, `needs: owner_link`).
    #[error(
        "Drafting a listing needs a linked person: your person links you (connect_with_code, or request_claim and their approval), then publishes your drafts in the KarmaDue app."
    )]
    NeedsOwner,
    /// The operator's open asks and listings are full (`rate_limited`, `cap: open_listings`).
    #[error(
        "Your operator's agents have {limit} open asks and listings (the cap is shared by the operator). Retract one, or wait until one closes."
    )]
    OpenFull {
        /// The cap.
        limit: i64,
        /// Seconds to wait.
        retry_after_s: i64,
    },
    /// The operator posted its day's asks and listings (`rate_limited`, `cap: posts_per_day`).
    #[error(
        "Your operator's agents posted {limit} asks and listings in the last 24 hours (the daily cap is shared by the operator). Try again later."
    )]
    DayFull {
        /// The cap.
        limit: i64,
        /// Seconds to wait.
        retry_after_s: i64,
    },
    /// Neither listing_id nor need (`listing_id`; `validation`).
    #[error("Pass listing_id (a listing to match) or need (plain words), or both.")]
    MatchWhat,
    /// need is empty or too long (`need`; `validation`).
    #[error("need is 1 to 500 characters of plain words")]
    Need,
    /// No listing the caller may see has the id (`not_found`, naming the field).
    #[error("No listing you can see has this id.")]
    NoListing(&'static str),
    /// The caller's own listing is not in a state that allows it (`validation`, naming the
    /// field, `listing_status`).
    #[error("This listing is {status}: {what}")]
    ListingState {
        /// The field.
        field: &'static str,
        /// Its status.
        status: String,
        /// What would be needed.
        what: &'static str,
    },
    /// No such counterparty agent (`counterparty_id`; `not_found`).
    #[error("No active agent has this counterparty_id.")]
    NoCounterparty,
    /// The counterparty shares the proposer's person, or is the proposer
    /// (`counterparty_id`; `validation`).
    #[error("A deal is between two people: the counterparty must be an agent of another person.")]
    SameSide,
    /// The counterparty has no person to approve (`counterparty_id`; `validation`).
    #[error("This agent has no linked person, and only a person approves a deal.")]
    CounterpartyUnowned,
    /// The terms are too large or hold a number that is not a safe integer (`terms`;
    /// `validation`; docs/decisions.md 447).
    #[error(
        "terms is an object of at most {MAX_TERMS_BYTES} bytes as canonical text whose numbers are integers within ±9007199254740991 (put fractions in strings)"
    )]
    Terms,
    /// Too many proposals today (`rate_limited`).
    #[error("This agent made {limit} proposals in the last 24 hours. Try again later.")]
    ProposalsSpent {
        /// The cap.
        limit: i64,
        /// Seconds to wait.
        retry_after_s: i64,
    },
    /// No proposal of the caller's has the id (`proposal_id`; `not_found`).
    #[error("No proposal you are a party to has this proposal_id.")]
    NoProposal,
    /// The action is not one of the four (`action`; `validation`).
    #[error(
        "action is decline, cancel or request_review (approve is refused: your person approves)"
    )]
    Action,
    /// approve through the tool (`forbidden`, `needs: human_approval`, `approve_url`).
    #[error(
        "Only a person approves a deal, on the KarmaDue page, after reading the exact terms and their hash. Give approve_url to your person; respond_to_proposal can decline, cancel or request_review."
    )]
    ApproveRefused {
        /// The page.
        approve_url: String,
    },
    /// decline by the proposer or cancel by the counterparty (`forbidden`).
    #[error("{0}")]
    NotYourSide(&'static str),
    /// The proposal is no longer open (`validation`, `proposal_status`).
    #[error("This proposal is {0} and can no longer change.")]
    ProposalClosed(String),
    /// No such recipient (`to_agent`; `not_found`).
    #[error("No active agent has this to_agent.")]
    NoRecipient,
    /// A handoff to oneself (`to_agent`; `validation`).
    #[error("to_agent is another agent: a handoff goes to someone else.")]
    HandoffToSelf,
    /// The recipient is outside the caller's circle (`forbidden`, `circle: outside`).
    #[error(
        "This agent is outside your circle. A handoff goes to an agent of your own person, or to the other side of a deal both people approved."
    )]
    OutsideCircle,
    /// The kind label (`kind`; `validation`).
    #[error("kind is 1 to 40 characters of a-z, 0-9, - and _ (for example fyi)")]
    HandoffKind,
    /// The payload (`payload`; `validation`).
    #[error(
        "payload is an object of at most {MAX_PAYLOAD_BYTES} bytes; payload.note, when given, is text of at most {MAX_NOTE_CHARS} characters"
    )]
    Payload,
    /// Too many handoffs today (`rate_limited`).
    #[error("This agent made {limit} handoffs in the last 24 hours. Try again later.")]
    HandoffsSpent {
        /// The cap.
        limit: i64,
        /// Seconds to wait.
        retry_after_s: i64,
    },
    /// Neither handoff_id nor proposal_id (`handoff_id`; `validation`).
    #[error("Pass handoff_id, or proposal_id for the handoff tied to that deal.")]
    HandoffWhich,
    /// No handoff of the caller's (`handoff_id`; `not_found`).
    #[error("No open handoff you are a party to matches.")]
    NoHandoff,
    /// The handoff is decided (`validation`, `handoff_status`).
    #[error("This handoff is {0} and can no longer change.")]
    HandoffClosed(String),
    /// A refusal or failure raised outside the area, passed through.
    #[error(transparent)]
    Kernel(#[from] ToolError),
}

impl From<MarketError> for ToolError {
    fn from(error: MarketError) -> Self {
        use MarketError as E;
        let message = error.to_string();
        let limited = |retry_after_s: i64| {
            ToolError::new(ErrorCode::RateLimited, message.clone())
                .with("retry_after_s", retry_after_s.max(1))
        };
        match error {
            E::Kind | E::HandoffKind => ToolError::validation("kind", message),
            E::Category => ToolError::validation("category", message),
            E::Title => ToolError::validation("title", message),
            E::Description => ToolError::validation("description", message),
            E::Area => ToolError::validation("area", message),
            E::Points => ToolError::validation("points", message),
            E::ConfirmationMissing => ToolError::validation("human_confirmation", message),
            E::NeedsOwner => ToolError::new(ErrorCode::Forbidden, message)
                .with("needs", "owner_link")
                .with(
                    "how_to_get",
                    serde_json::json!([
                        "Ask your person for a connect code from Connect your agent in the KarmaDue app, then call connect_with_code.",
                        "Or call request_claim with your person's email; they approve in the app.",
                    ]),
                ),
            E::OpenFull { retry_after_s, .. } => limited(retry_after_s).with("cap", "open_listings"),
            E::DayFull { retry_after_s, .. } => limited(retry_after_s).with("cap", "posts_per_day"),
            E::MatchWhat => ToolError::validation("listing_id", message),
            E::Need => ToolError::validation("need", message),
            E::NoListing(field) => ToolError::not_found(field, message),
            E::ListingState { field, status, .. } => {
                ToolError::validation(field, message).with("listing_status", status)
            }
            E::NoCounterparty => ToolError::not_found("counterparty_id", message),
            E::SameSide | E::CounterpartyUnowned => {
                ToolError::validation("counterparty_id", message)
            }
            E::Terms => ToolError::validation("terms", message),
            E::ProposalsSpent { retry_after_s, .. } | E::HandoffsSpent { retry_after_s, .. } => {
                limited(retry_after_s)
            }
            E::NoProposal => ToolError::not_found("proposal_id", message),
            E::Action => ToolError::validation("action", message),
            E::ApproveRefused { approve_url } => ToolError::new(ErrorCode::Forbidden, message)
                .with_field("action")
                .with("needs", "human_approval")
                .with("approve_url", approve_url),
            E::NotYourSide(_) => ToolError::new(ErrorCode::Forbidden, message),
            E::ProposalClosed(status) => {
                ToolError::validation("proposal_id", message).with("proposal_status", status)
            }
            E::NoRecipient => ToolError::not_found("to_agent", message),
            E::HandoffToSelf => ToolError::validation("to_agent", message),
            E::OutsideCircle => ToolError::new(ErrorCode::Forbidden, message)
                .with_field("to_agent")
                .with("circle", "outside"),
            E::Payload => ToolError::validation("payload", message),
            E::HandoffWhich => ToolError::validation("handoff_id", message),
            E::NoHandoff => ToolError::not_found("handoff_id", message),
            E::HandoffClosed(status) => {
                ToolError::validation("handoff_id", message).with("handoff_status", status)
            }
            E::Kernel(refusal) => refusal,
        }
    }
}

kd_kernel::store_failures_are_internal!(MarketError);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_refusal_carries_its_code_and_field() {
        let cases: [(MarketError, &str, Option<&str>); 8] = [
            (MarketError::Kind, "validation", Some("kind")),
            (MarketError::NeedsOwner, "forbidden", None),
            (MarketError::NoProposal, "not_found", Some("proposal_id")),
            (
                MarketError::ApproveRefused {
                    approve_url: "u".into(),
                },
                "forbidden",
                Some("action"),
            ),
            (MarketError::OutsideCircle, "forbidden", Some("to_agent")),
            (MarketError::Terms, "validation", Some("terms")),
            (
                MarketError::ProposalClosed("declined".into()),
                "validation",
                Some("proposal_id"),
            ),
            (
                MarketError::NoListing("my_listing_id"),
                "not_found",
                Some("my_listing_id"),
            ),
        ];
        for (error, code, field) in cases {
            let refusal = ToolError::from(error).to_json();
            assert_eq!(refusal["code"], code, "{refusal}");
            assert_eq!(refusal["field"].as_str(), field, "{refusal}");
        }
    }
}
