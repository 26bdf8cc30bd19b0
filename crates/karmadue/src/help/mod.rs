//! Watchlists and verification help (permissions document "What your passport unlocks",
//! "Verification help"; docs/decisions.md "Watchlists and verification help").
//!
//! - [`watch`]: `quick_watch` (up to 10 tools, nothing stored), `set_watchlist` (a saved list
//!   of up to 200 tools) and the daily job that checks saved lists against the hub's own
//!   catalog and outcome records, alerting the owner of an owner-linked agent by mail.
//! - [`verification`]: `post_verification_ask`, `list_verification_asks` (also
//!   `GET /functions/v1/public-api/v1/verification-asks`), `accept_verification_ask`,
//!   `submit_verification` and `resolve_verification`: one check of one passport version by
//!   an independent reviewer, ending in a signed stamp naming the reviewer or a public refusal.

pub mod error;
pub mod events;
pub mod output;
pub mod replay;
pub mod store;
pub mod verification;
pub mod watch;

pub use error::HelpError;

/// One UTC day, in milliseconds.
pub const DAY_MS: i64 = crate::standing::stamps::DAY_MS;
