//! People and their agents: the app's flows (sign up, sign in, connect codes, approving owner
//! links, pause and remove) and the agent's side of the link (`connect_with_code`). Spec:
//! "Connecting to your person", "Connect with a code, in detail", "Signing a write" (owner
//! sessions), "History" (`connect.refused`).
//!
//! Accounts and sessions are stored by [`kd_core::people`]; this module holds the rules. The
//! HTML pages (`http::pages`) only call these functions and present the result.
//!
//! Events: `person.signed_up`, `owner.link_requested`, `owner.linked`, `owner.link_declined`,
//! `connect.refused`, `agent.paused`, `agent.resumed`, `agent.released` (by the owner). No code,
//! password, hash or session token is ever part of an event.
//!
//! - `sessions`: sign up, sign in, sign out, the session a token names.
//! - `connect`: connect codes, connect_with_code, request_claim (the agent asks).
//! - `owners`: the You page, approving requests, grants, pause, resume, release (the person
//!   decides).
//! - [`findings`], [`agent_tools`]: findings for people (`inbox`: a person's Inbox of them);
//!   cards, offers and preferences.
//! - [`error`], [`output`]: the tools' refusals ([`PeopleError`]) and answers.

pub mod agent_tools;
mod connect;
pub mod error;
pub mod events;
pub mod findings;
mod inbox;
pub mod mail;
pub mod output;
mod owners;
pub mod password_gate;
pub mod replay;
mod sessions;
pub mod store;

pub use connect::{
    CLAIMS_PER_AGENT_PER_DAY, CLAIMS_PER_EMAIL_PER_DAY, CONNECT_WITH_CODE, DEFAULT_PITCH,
    MAX_PITCH_CHARS, MintedCode, REQUEST_CLAIM, display_code, mint_connect_code, normalize_code,
};
pub use error::PeopleError;
pub use owners::{
    MAX_ACTIONS_PER_DAY, Overview, OwnedAgent, OwnerAction, PendingRequest, act_on_agent,
    decide_request, link, overview, pending_request, set_actions_per_day,
};
pub use sessions::{
    ALREADY_SUBJECT, CONFIRM_PATH, CONFIRM_SUBJECT, NewSession, confirm_sign_up, sign_in, sign_out,
    sign_up, sign_up_link_works, signed_in,
};

use kd_core::db::Connection;

use kd_kernel::Kernel;
use kd_kernel::error::{ErrorCode, ToolError};
use kd_kernel::input::Text;
use kd_kernel::input::first_sent;

/// The connect code alphabet: A–Z and 2–9 without the look-alikes I, O, 0 and 1 (32 symbols,
/// so a random byte maps onto it without bias).
pub const CODE_ALPHABET: &[u8; 32] = b"ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
/// Characters in a connect code.
pub const CODE_LEN: usize = 8;
/// How long a connect code works, in milliseconds (30 minutes).
pub const CODE_TTL_MS: i64 = 30 * 60 * 1000;
/// Connect codes a person may make in a rolling hour.
pub const CODES_PER_HOUR: i64 = 6;
/// `connect_with_code` attempts per agent per clock hour.
pub const CODE_ATTEMPTS_PER_HOUR: i64 = 10;
/// What approving a link grants: actions in a rolling day (spec "Connect with a code").
pub const GRANT_ACTIONS_PER_DAY: i64 = 40;
/// Characters allowed in a display name.
pub const MAX_DISPLAY_NAME_CHARS: usize = 60;

const HOUR_MS: i64 = 3_600_000;

/// What an owner granted a linked agent (spec "Connect with a code": read-only scopes, $0 a
/// day, $0 per action, 40 actions a day).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The owner.
    pub person_id: String,
    /// Granted scopes.
    pub scopes: Vec<String>,
    /// USD a day (always 0 here).
    pub spend_usd_per_day: i64,
    /// USD per action (always 0 here).
    pub spend_usd_per_action: i64,
    /// Recorded writes in a rolling 24 hours.
    pub actions_per_day: i64,
}

/// The grant of a linked agent, if it has one.
///
/// # Errors
/// `internal` when the store fails.
pub fn grant(conn: &Connection, agent_id: &str) -> Result<Option<Grant>, ToolError> {
    let row: Option<(String, String, i64, i64, i64)> = store::grant_row(conn, agent_id)?;
    row.map(
        |(person_id, scopes, spend_usd_per_day, spend_usd_per_action, actions_per_day)| {
            let scopes: Vec<String> = serde_json::from_str(&scopes).map_err(ToolError::internal)?;
            Ok(Grant {
                person_id,
                scopes,
                spend_usd_per_day,
                spend_usd_per_action,
                actions_per_day,
            })
        },
    )
    .transpose()
}

/// A refusal of an app flow, shown on the page (plain words; never names whether another
/// account exists: sign-up answers the same either way and says more only by mail, DECISIONS 260).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    /// Bad form input; the message says what to fix.
    #[error("{0}")]
    Invalid(String),
    /// Wrong email or password (one message for both).
    #[error("That email and password do not match an account.")]
    WrongCredentials,
    /// Too many tries; come back after `retry_after_s` seconds.
    #[error("Too many attempts. Try again in {retry_after_s} seconds.")]
    RateLimited {
        /// Seconds until a try can succeed.
        retry_after_s: i64,
    },
    /// The hub is busy hashing passwords; come back after `retry_after_s` seconds (nothing was
    /// done; `password_gate`).
    #[error("The hub is busy. Try again in {retry_after_s} seconds.")]
    Busy {
        /// Seconds to wait before trying again.
        retry_after_s: i64,
    },
    /// No such request or agent among the person's own.
    #[error("Nothing of yours matches that. Reload the page.")]
    NotFound,
    /// The hub failed; the cause was logged.
    #[error("Something went wrong on our side. Try again.")]
    Internal,
}

/// The hub's bound on argon2id work ([`password_gate::PasswordGate`], in the kernel's area
/// state).
fn password_gate(hub: &Kernel) -> Result<&password_gate::PasswordGate, AppError> {
    Ok(hub.areas.require::<password_gate::PasswordGate>()?)
}

impl From<ToolError> for AppError {
    fn from(error: ToolError) -> Self {
        if let Some(cause) = &error.cause {
            tracing::error!(cause = %cause, "app flow failed");
        }
        match error.code {
            ErrorCode::NotFound => Self::NotFound,
            ErrorCode::Internal => Self::Internal,
            _ => Self::Invalid(error.message),
        }
    }
}

impl From<kd_core::store::StoreError> for AppError {
    fn from(error: kd_core::store::StoreError) -> Self {
        tracing::error!(cause = %error, "app store failed");
        Self::Internal
    }
}

impl From<kd_core::db::DbError> for AppError {
    fn from(error: kd_core::db::DbError) -> Self {
        tracing::error!(cause = %error, "app store failed");
        Self::Internal
    }
}

/// The text of the first of `names` that was sent (`values`, in the same order), at most `max`
/// characters; `None` when it is absent or empty.
///
/// # Errors
/// [`PeopleError::TooLong`] ("`x` is at most `max` characters"), naming the name that carried
/// the text.
fn bounded_text(
    names: &[&'static str],
    values: &[&Option<String>],
    max: usize,
) -> Result<Option<String>, PeopleError> {
    let Some(text) = first_sent(values).text() else {
        return Ok(None);
    };
    if text.chars().count() > max {
        let field = kd_kernel::input::sent_name(names, values);
        return Err(PeopleError::TooLong { field, max });
    }
    Ok(Some(text.to_owned()))
}
