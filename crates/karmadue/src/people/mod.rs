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

pub mod agent_tools;
pub mod findings;
pub mod mail;
pub mod password_gate;
pub mod replay;
pub mod store;

use std::net::IpAddr;

use crate::events::{EventPayload as _, identity as agent_events, people as events};
use kd_core::db::Connection;
use kd_core::people::{self as accounts, Person, Session};
use kd_core::random::{random_bytes, random_id};
use kd_core::store::WriteTxn;
use serde_json::{Value, json};

use crate::identity::inputs::{first_sent, input_requiring};
use crate::identity::{READ_ONLY_SCOPES, require_agent, store as identity_store};
use kd_kernel::error::{ErrorCode, ToolError};
use kd_kernel::input::{AGENT_ID_DOC, Text};
use kd_kernel::registry::{Access, Hints, Tool};
use kd_kernel::{Ctx, Kernel};
use schemars::JsonSchema;
use serde::Deserialize;

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

/// `connect_with_code`.
pub static CONNECT_WITH_CODE: Tool = Tool {
    name: "connect_with_code",
    title: "Connect to your person with a code",
    description: "Connect to the person who gave you a connect code. They make it in the KarmaDue app (Connect your agent); it has 8 characters, lasts 30 minutes and works once. The call is signed. It files a pending request; nothing changes until they approve. Wrong, expired and used codes get the same invalid_code answer. 10 attempts per agent per clock hour.",
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[],
    input: Some(kd_kernel::input!(ConnectWithCode)),
    handler: kd_kernel::typed!(CONNECT_WITH_CODE, connect_with_code),
};

/// connect_with_code's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ConnectWithCode {
    #[schemars(description = AGENT_ID_DOC)]
    #[allow(dead_code)]
    agent_id: String,
    /// The connect code your person gave you, like ABCD-EF23. Dashes and case are ignored.
    code: String,
}

/// request_claim calls an agent may make in a rolling day.
pub const CLAIMS_PER_AGENT_PER_DAY: i64 = 5;
/// request_claim mails one address may receive in a rolling day (from all agents).
pub const CLAIMS_PER_EMAIL_PER_DAY: i64 = 3;
/// Longest `pitch`, in characters.
pub const MAX_PITCH_CHARS: usize = 500;
/// The pitch used when the agent sends none.
pub const DEFAULT_PITCH: &str = "This agent asks you to claim it.";

const DAY_MS: i64 = 24 * HOUR_MS;

/// `request_claim`.
pub static REQUEST_CLAIM: Tool = Tool {
    name: "request_claim",
    title: "Ask a person to claim this agent",
    description: "Ask a human to claim you. They approve scopes and USD caps in the KarmaDue app. You cannot approve yourself. The call is signed. The reply is the same whether or not the email has an account, and so is the mail the person gets. At most 5 requests a day per agent and 3 a day per address.",
    params: &[],
    required: &[],
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[kd_kernel::registry::Lift {
        at: "",
        id: "claim_id",
        fields: &["pitch"],
    }],
    input: Some(input_requiring!(
        RequestClaim,
        &[&["agent_id"], &["email", "human_email"]]
    )),
    handler: kd_kernel::typed!(REQUEST_CLAIM, request_claim),
};

/// request_claim's arguments. The refusal of a bad address names the name sent, so
/// `human_email` is a field of its own, not an alias row.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct RequestClaim {
    #[schemars(description = AGENT_ID_DOC)]
    #[allow(dead_code)]
    agent_id: String,
    /// Email of a person who already has a KarmaDue account.
    email: Option<String>,
    /// Alias for email.
    human_email: Option<String>,
    /// Short note, up to 500 characters. A default is used when this is empty.
    pitch: Option<String>,
}

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
/// account exists, except at sign-up where the address is the person's own).
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

/// A new session: the token goes into the cookie (and works as `Authorization: Bearer`), the
/// session's CSRF token into every form.
#[derive(Debug, Clone)]
pub struct NewSession {
    /// The session token, `kds_` and 64 hex characters. Never stored or logged as is.
    pub token: String,
    /// The stored session.
    pub session: Session,
}

fn new_session(hub: &Kernel) -> (String, String) {
    (
        random_id::<32>(hub.random.as_ref(), "kds_"),
        random_id::<16>(hub.random.as_ref(), ""),
    )
}

/// Creates an account and signs the person in. The cheap checks come first: the form, then
/// the attempt limit (5 a minute per email and per address, like sign-in), then whether the
/// email is taken; only then is the password hashed, behind the [`password_gate`].
///
/// # Errors
/// [`AppError::Invalid`] for a bad email, name or password, or an email already in use;
/// [`AppError::RateLimited`], [`AppError::Busy`], [`AppError::Internal`]. A refusal stores
/// nothing but the counted attempt.
pub async fn sign_up(
    hub: &Kernel,
    email: &str,
    display_name: &str,
    password: &str,
    ip: Option<IpAddr>,
) -> Result<NewSession, AppError> {
    let (email, display_name) = check_sign_up(email, display_name, password)?;
    admit_attempt(hub, "signup", &email, ip).await?;
    let lookup = email.clone();
    let taken = hub
        .store
        .read(move |conn| accounts::find_by_email(conn, &lookup))
        .await
        .map_err(AppError::from)?
        .is_some();
    if taken {
        return Err(email_taken());
    }
    let salt = random_bytes::<16>(hub.random.as_ref());
    let password = password.to_owned();
    // argon2 is deliberately slow: hash off the async threads, outside the writer, a few at
    // a time.
    let hash = password_gate(hub)?
        .run(move || accounts::hash_password(&password, salt))
        .await??;
    let person_id = random_id::<12>(hub.random.as_ref(), "kdh_");
    let (token, csrf) = new_session(hub);
    let stored_token = token.clone();
    let session = hub
        .store
        .write(move |txn| -> Result<Session, AppError> {
            match accounts::sign_up(txn, &person_id, &email, &display_name, &hash) {
                Ok(_) => {}
                // Taken between the check above and this write.
                Err(accounts::SignUpError::EmailTaken) => return Err(email_taken()),
                Err(accounts::SignUpError::Store(error)) => return Err(error.into()),
            }
            Ok(accounts::start_session(
                txn.conn(),
                &stored_token,
                &csrf,
                &person_id,
                txn.now_ms(),
            )?)
        })
        .await??;
    Ok(NewSession { token, session })
}

fn email_taken() -> AppError {
    AppError::Invalid("An account already uses this email. Sign in instead.".into())
}

/// The sign-up form's checks, nothing stored: the normalized email and the trimmed name.
fn check_sign_up(
    email: &str,
    display_name: &str,
    password: &str,
) -> Result<(String, String), AppError> {
    let email = accounts::normalize_email(email)
        .ok_or_else(|| AppError::Invalid("Enter an email address like you@example.org.".into()))?;
    let display_name = display_name.trim().to_owned();
    if display_name.is_empty()
        || display_name.chars().count() > MAX_DISPLAY_NAME_CHARS
        || display_name.chars().any(char::is_control)
    {
        return Err(AppError::Invalid(format!(
            "Your name must be 1 to {MAX_DISPLAY_NAME_CHARS} characters."
        )));
    }
    // A person's name is their handle on the forum (spec "Forum authors"): it may not pose as
    // an agent's kd_ handle, hide characters, or carry text the scanner flags.
    if display_name
        .get(..3)
        .is_some_and(|prefix| prefix.eq_ignore_ascii_case("kd_"))
        || display_name.chars().any(kd_core::scanner::is_format)
        || kd_core::scanner::scan(&display_name).level != kd_core::scanner::Level::Clean
    {
        return Err(AppError::Invalid(
            "Choose another name: it may not start with kd_ (agents' handles do), hold invisible characters, or read like an instruction.".into(),
        ));
    }
    let length = password.chars().count();
    if !(accounts::MIN_PASSWORD_CHARS..=accounts::MAX_PASSWORD_CHARS).contains(&length) {
        return Err(AppError::Invalid(format!(
            "Your password must be {} to {} characters.",
            accounts::MIN_PASSWORD_CHARS,
            accounts::MAX_PASSWORD_CHARS
        )));
    }
    Ok((email, display_name))
}

/// Counts one `flow` attempt (`signin`, `signup`) against the email and the address: the
/// sign-in limiter of [`accounts::admit_signin`] (5 a minute per key), each flow with its own
/// keys. Sign-in keeps the keys it always had (`email:`, `ip:`).
///
/// # Errors
/// [`AppError::RateLimited`] (nothing counted), [`AppError::Internal`].
async fn admit_attempt(
    hub: &Kernel,
    flow: &str,
    email: &str,
    ip: Option<IpAddr>,
) -> Result<(), AppError> {
    let prefix = if flow == "signin" {
        String::new()
    } else {
        format!("{flow}-")
    };
    let mut keys = vec![format!("{prefix}email:{email}")];
    if let Some(ip) = ip {
        keys.push(format!("{prefix}ip:{}", ip.to_canonical()));
    }
    let refused = hub
        .store
        .write(move |txn| -> Result<Option<i64>, AppError> {
            Ok(accounts::admit_signin(txn.conn(), &keys, txn.now_ms())?)
        })
        .await??;
    match refused {
        Some(retry_after_s) => Err(AppError::RateLimited { retry_after_s }),
        None => Ok(()),
    }
}

/// Signs a person in. Each attempt counts against the email and the address (5 a minute
/// each); a refused attempt records nothing.
///
/// # Errors
/// [`AppError::RateLimited`], [`AppError::WrongCredentials`] (unknown email and wrong password
/// alike), [`AppError::Internal`].
pub async fn sign_in(
    hub: &Kernel,
    email: &str,
    password: &str,
    ip: Option<IpAddr>,
) -> Result<NewSession, AppError> {
    let email = accounts::normalize_email(email).unwrap_or_else(|| email.trim().to_lowercase());
    admit_attempt(hub, "signin", &email, ip).await?;
    let lookup = email.clone();
    let found = hub
        .store
        .read(move |conn| accounts::find_by_email(conn, &lookup))
        .await
        .map_err(AppError::from)?;
    let password = password.to_owned();
    let matches = password_gate(hub)?
        .run(move || match found {
            Some((person, hash)) => accounts::verify_password(&hash, &password).then_some(person),
            None => {
                // Spend about the same time for an unknown email as for a wrong password.
                let _ = accounts::verify_password(dummy_hash(), &password);
                None
            }
        })
        .await?;
    let person = matches.ok_or(AppError::WrongCredentials)?;
    let (token, csrf) = new_session(hub);
    let stored_token = token.clone();
    let session = hub
        .store
        .write(move |txn| -> Result<Session, AppError> {
            Ok(accounts::start_session(
                txn.conn(),
                &stored_token,
                &csrf,
                &person.person_id,
                txn.now_ms(),
            )?)
        })
        .await??;
    Ok(NewSession { token, session })
}

/// An argon2id hash of a password nobody uses, verified for unknown emails.
fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| {
        accounts::hash_password("no account has this password", [0; 16]).unwrap_or_default()
    })
}

/// Ends a session (sign out). Unknown tokens are ignored.
///
/// # Errors
/// [`AppError::Internal`].
pub async fn sign_out(hub: &Kernel, token: &str) -> Result<(), AppError> {
    let token = token.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            Ok(accounts::end_session(txn.conn(), &token)?)
        })
        .await?
}

/// The signed-in person of a session token, if the session is live.
///
/// # Errors
/// [`AppError::Internal`].
pub async fn signed_in(hub: &Kernel, token: &str) -> Result<Option<(Person, Session)>, AppError> {
    let token = token.to_owned();
    let now_ms = hub.clock.now_ms();
    hub.store
        .read(move |conn| -> Result<_, AppError> {
            let Some(session) = accounts::session(conn, &token, now_ms)? else {
                return Ok(None);
            };
            Ok(accounts::find_person(conn, &session.person_id)?.map(|person| (person, session)))
        })
        .await
}

/// `ABCDEFGH` shown as `ABCD-EFGH`.
pub fn display_code(code: &str) -> String {
    let split = code.len().min(4);
    format!("{}-{}", &code[..split], &code[split..])
}

/// A typed code with dashes, spaces and case ignored.
pub fn normalize_code(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '-' | ' ' | '\t'))
        .flat_map(char::to_uppercase)
        .collect()
}

/// A freshly minted connect code.
#[derive(Debug, Clone)]
pub struct MintedCode {
    /// `ABCD-EF23`.
    pub display: String,
    /// When it stops working, Unix milliseconds.
    pub expires_ms: i64,
}

/// Mints a connect code for `person_id` (Connect your agent): 8 characters of
/// [`CODE_ALPHABET`], working once for 30 minutes; at most 6 in a rolling hour per person.
/// Only the code's SHA-256 is stored; no event is appended (a code is working state).
///
/// # Errors
/// [`AppError::RateLimited`] after 6 codes in an hour (nothing stored); [`AppError::Internal`].
pub async fn mint_connect_code(hub: &Kernel, person_id: &str) -> Result<MintedCode, AppError> {
    let bytes = random_bytes::<CODE_LEN>(hub.random.as_ref());
    let code: String = bytes
        .iter()
        .map(|byte| char::from(CODE_ALPHABET[usize::from(*byte) % CODE_ALPHABET.len()]))
        .collect();
    let person_id = person_id.to_owned();
    let hashed = accounts::secret_sha256(&code);
    let expires_ms = hub
        .store
        .write(move |txn| -> Result<i64, AppError> {
            let now = txn.now_ms();
            let (made, oldest): (i64, Option<i64>) =
                store::codes_since(txn.conn(), &person_id, now - HOUR_MS)?;
            if made >= CODES_PER_HOUR {
                let wait_ms = oldest.unwrap_or(now) + HOUR_MS - now;
                return Err(AppError::RateLimited {
                    retry_after_s: (wait_ms + 999).div_euclid(1000).max(1),
                });
            }
            let expires_ms = now + CODE_TTL_MS;
            store::insert_connect_code(txn.conn(), &hashed, &person_id, now, expires_ms)?;
            Ok(expires_ms)
        })
        .await??;
    Ok(MintedCode {
        display: display_code(&code),
        expires_ms,
    })
}

/// The text of the first of `names` that was sent (`values`, in the same order), at most `max`
/// characters; `None` when it is absent or empty.
///
/// # Errors
/// `validation` "`x` is at most `max` characters", naming the name that carried the text.
fn bounded_text(
    names: &[&'static str],
    values: &[&Option<String>],
    max: usize,
) -> Result<Option<String>, ToolError> {
    let Some(text) = first_sent(values).text() else {
        return Ok(None);
    };
    if text.chars().count() > max {
        let field = crate::identity::inputs::sent_name(names, values);
        return Err(ToolError::validation(
            field,
            format!("{field} is at most {max} characters"),
        ));
    }
    Ok(Some(text.to_owned()))
}

fn invalid_code() -> ToolError {
    ToolError::new(
        ErrorCode::InvalidCode,
        "This code is wrong, expired or already used. Ask your person for a fresh code from Connect your agent.",
    )
    .with_field("code")
}

async fn connect_with_code(ctx: Ctx, input: ConnectWithCode) -> Result<Value, ToolError> {
    let code = normalize_code(input.code.required_text("code")?);
    let request_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdl_");
    // The outer result rolls back (nothing written); the inner refusal is committed with
    // its connect.refused event and the counted attempt (docs/decisions.md 55).
    let answer = ctx
        .signed_write(
            move |txn, signed| -> Result<Result<Value, ToolError>, ToolError> {
                let agent_id = signed.agent_id.to_string();
                let actor = signed.actor();
                let now = txn.now_ms();
                let hour = now.div_euclid(HOUR_MS);
                let (attempts, refusal_logged): (i64, i64) =
                    store::code_attempts(txn.conn(), &agent_id, hour)?.unwrap_or((0, 0));
                if attempts >= CODE_ATTEMPTS_PER_HOUR {
                    let retry_after_s = ((hour + 1) * HOUR_MS - now + 999).div_euclid(1000).max(1);
                    let refusal = ToolError::new(
                        ErrorCode::RateLimited,
                        "Too many code attempts. Try again later.",
                    )
                    .with("retry_after_s", retry_after_s);
                    if refusal_logged != 0 {
                        return Err(refusal);
                    }
                    store::mark_refusal_logged(txn.conn(), &agent_id, hour)?;
                    txn.record(
                        actor,
                        agent_id.clone(),
                        &events::ConnectRefused {
                            agent_id: agent_id.clone(),
                            reason: "rate_limited".into(),
                        },
                    )?;
                    return Ok(Err(refusal));
                }
                store::count_code_attempt(txn.conn(), &agent_id, hour)?;
                store::forget_code_attempts_before(txn.conn(), hour - 1)?;
                let hashed = accounts::secret_sha256(&code);
                let person: Option<String> = store::connect_code_person(txn.conn(), &hashed, now)?;
                let Some(person_id) = person else {
                    txn.record(
                        actor,
                        agent_id.clone(),
                        &events::ConnectRefused {
                            agent_id: agent_id.clone(),
                            reason: "invalid_code".into(),
                        },
                    )?;
                    return Ok(Err(invalid_code()));
                };
                store::use_connect_code(txn.conn(), &hashed, now)?;
                file_request(txn, &request_id, &agent_id, &person_id, "code", &actor).map(Ok)
            },
        )
        .await??;
    Ok(answer)
}

async fn request_claim(ctx: Ctx, input: RequestClaim) -> Result<Value, ToolError> {
    let email = accounts::normalize_email(
        first_sent(&[&input.email, &input.human_email])
            .required_text_of(&["email", "human_email"])?,
    )
    .ok_or_else(|| {
        ToolError::validation(
            if input.email.text().is_some() {
                "email"
            } else {
                "human_email"
            },
            "email must be an address like person@example.org",
        )
    })?;
    let pitch = input.pitch.text().unwrap_or(DEFAULT_PITCH).to_owned();
    if pitch.chars().count() > MAX_PITCH_CHARS || pitch.chars().any(|c| c.is_control() && c != '\n')
    {
        return Err(ToolError::validation(
            "pitch",
            "pitch must be at most 500 characters, no control characters",
        ));
    }
    let claim_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdl_");
    let mail_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdm_");
    let public_url = ctx.kernel.config.public_url.clone();
    let answer = ctx.signed_write(move |txn, signed| {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        for (column, key, limit, what) in [
            ("agent_id", agent_id.as_str(), CLAIMS_PER_AGENT_PER_DAY, "This agent has made 5 claim requests today."),
            ("email", email.as_str(), CLAIMS_PER_EMAIL_PER_DAY, "This address has had 3 claim requests today."),
        ] {
            let (count, oldest) = store::claims_since(txn.conn(), column, key, now - DAY_MS)?;
            if count >= limit {
                let retry_after_s = (oldest.unwrap_or(now) + DAY_MS - now + 999).div_euclid(1000).max(1);
                return Err(ToolError::new(ErrorCode::RateLimited, format!("{what} Try again later."))
                    .with("retry_after_s", retry_after_s));
            }
        }
        let agent = require_agent(txn.conn(), &agent_id, "agent_id")?;
        store::insert_claim_request(txn.conn(), &claim_id, &agent_id, &email, now)?;
        // A request is filed only for an existing account; the reply, the event and the
        // mail are the same either way (DECISIONS 7).
        if let Some((person, _)) = accounts::find_by_email(txn.conn(), &email)?
            && agent.owner_id.as_deref() != Some(person.person_id.as_str())
        {
            store::insert_claim_owner_request(txn.conn(), &claim_id, &agent_id, &person.person_id, &pitch, now)?;
        }
        kd_core::outbox::queue(
            txn.conn(),
            &kd_core::outbox::Mail {
                mail_id,
                to_email: email,
                subject: "An agent asks you to claim it on KarmaDue".into(),
                body: claim_mail(&agent.handle, &public_url),
                created_ms: now,
                sent_ms: None,
            },
        )?;
        let event = txn.record(signed.actor(), agent_id.clone(), &events::ClaimRequested { agent_id: agent_id.clone(), claim_id: claim_id.clone() })?;
        Ok(json!({
            "agent_id": agent_id,
            "claim_id": claim_id,
            "status": "sent",
            "owner_linked": agent.owner_id.is_some(),
            "pitch": pitch,
            "event_seq": event.seq,
            "message": "Sent. If this address has a KarmaDue account, its owner can approve or decline you in the app; nothing changes until they approve. Call verify_agent: owner_linked turns true once they do.",
        }))
    })
    .await?;
    // Mail may have been queued: let the sender (when a relay is configured) send it now.
    mail::MailWakeup::notify(&ctx.kernel);
    Ok(answer)
}

/// The claim mail: the same words whether or not the address has an account. It names the
/// agent by its handle only; the agent's own label and pitch stay in the app, shown as data.
fn claim_mail(handle: &str, public_url: &str) -> String {
    format!(
        "Hello,\n\nThe agent {handle} asked to be claimed by the person with this email address on KarmaDue.\n\n\
         If you have a KarmaDue account with this address, sign in and approve or decline the request on the You page:\n\
         {public_url}/you\n\n\
         If you do not, or you do not know this agent, ignore this message: nothing happens unless you approve.\n"
    )
}

/// Files a pending owner link request and appends `owner.link_requested`.
fn file_request(
    txn: &mut WriteTxn<'_>,
    request_id: &str,
    agent_id: &str,
    person_id: &str,
    via: &str,
    actor: &str,
) -> Result<Value, ToolError> {
    let agent = require_agent(txn.conn(), agent_id, "agent_id")?;
    if agent.owner_id.as_deref() == Some(person_id) {
        return Ok(json!({
            "agent_id": agent_id,
            "status": "approved",
            "owner_linked": true,
            "message": "This person already owns this agent; nothing to approve.",
        }));
    }
    store::insert_owner_request(
        txn.conn(),
        request_id,
        agent_id,
        person_id,
        via,
        txn.now_ms(),
    )?;
    let event = txn.record(
        actor,
        agent_id,
        &events::OwnerLinkRequested {
            request_id: request_id.to_owned(),
            agent_id: agent_id.to_owned(),
            person_id: person_id.to_owned(),
            via: via.to_owned(),
        },
    )?;
    Ok(json!({
        "agent_id": agent_id,
        "request_id": request_id,
        "status": "pending",
        "owner_linked": false,
        "event_seq": event.seq,
        "message": "Request filed. Nothing changes until your person approves it on the You page of the KarmaDue app. Call verify_agent: owner_linked turns true once they approve.",
    }))
}

/// One of a person's agents, as the You page lists it.
#[derive(Debug, Clone)]
pub struct OwnedAgent {
    /// Agent id.
    pub agent_id: String,
    /// `kd_` handle.
    pub handle: String,
    /// The agent's own label (third-party text: escape it).
    pub name: String,
    /// active | revoked.
    pub status: String,
    /// Paused by the owner.
    pub paused: bool,
    /// The actions a day the person granted (None: no grant, e.g. revoked).
    pub actions_per_day: Option<i64>,
}

/// Changes the actions a day `person_id` grants their agent `agent_id` (1 to
/// [`MAX_ACTIONS_PER_DAY`]; "the person can raise limits later in the app"):
/// `owner.grant_changed`. The 24-hour count keeps running: only the limit changes.
///
/// # Errors
/// [`AppError::Invalid`] for a number out of range; [`AppError::NotFound`] when the person does
/// not own the agent; [`AppError::Internal`].
pub async fn set_actions_per_day(
    hub: &Kernel,
    person_id: &str,
    agent_id: &str,
    actions_per_day: i64,
) -> Result<(), AppError> {
    if !(1..=MAX_ACTIONS_PER_DAY).contains(&actions_per_day) {
        return Err(AppError::Invalid(format!(
            "Actions a day must be a whole number from 1 to {MAX_ACTIONS_PER_DAY}."
        )));
    }
    let person_id = person_id.to_owned();
    let agent_id = agent_id.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let before: Option<i64> =
                store::owned_grant_actions(txn.conn(), &agent_id, &person_id)?;
            let before = before.ok_or(AppError::NotFound)?;
            if before == actions_per_day {
                return Ok(());
            }
            store::set_grant_actions(txn.conn(), &agent_id, actions_per_day)?;
            txn.record(
                format!("person:{person_id}"),
                agent_id.clone(),
                &events::OwnerGrantChanged {
                    agent_id: agent_id.clone(),
                    actions_per_day,
                    previous_actions_per_day: before,
                },
            )?;
            Ok(())
        })
        .await?
}

/// A pending link request addressed to a person.
#[derive(Debug, Clone)]
pub struct PendingRequest {
    /// `kdl_` id.
    pub request_id: String,
    /// The agent asking.
    pub agent_id: String,
    /// Its handle.
    pub handle: String,
    /// Its label (third-party text: escape it).
    pub name: String,
    /// code | claim.
    pub via: String,
    /// request_claim's note (third-party text: escape it).
    pub pitch: Option<String>,
    /// Unix milliseconds.
    pub created_ms: i64,
}

/// What the You page shows: the person's agents and the requests waiting for them.
#[derive(Debug, Clone, Default)]
pub struct Overview {
    /// Agents this person owns, newest link first.
    pub agents: Vec<OwnedAgent>,
    /// Pending requests, oldest first.
    pub pending: Vec<PendingRequest>,
}

/// The You page's data for `person_id`.
///
/// # Errors
/// [`AppError::Internal`].
pub async fn overview(hub: &Kernel, person_id: &str) -> Result<Overview, AppError> {
    let person_id = person_id.to_owned();
    hub.store
        .read(move |conn| -> Result<Overview, AppError> {
            let agents = store::owned_agents(conn, &person_id)?;
            let pending = store::pending_requests(conn, &person_id)?;
            Ok(Overview { agents, pending })
        })
        .await
}

/// Most actions a day a person may grant on the consent screen.
pub const MAX_ACTIONS_PER_DAY: i64 = 200;

/// Approves (`approve`) or declines a pending request addressed to `person_id`. Approval sets
/// the agent's owner and grants [`READ_ONLY_SCOPES`], $0 a day, $0 per action and
/// `actions_per_day` actions ([`GRANT_ACTIONS_PER_DAY`] from the You page; 1 to
/// [`MAX_ACTIONS_PER_DAY`] from the consent screen) (`owner.linked`); declining changes nothing
/// else (`owner.link_declined`).
///
/// # Errors
/// [`AppError::NotFound`] (not theirs, or not pending); [`AppError::Invalid`] when the agent is
/// revoked or has another owner, or `actions_per_day` is out of range; [`AppError::Internal`].
pub async fn decide_request(
    hub: &Kernel,
    person_id: &str,
    request_id: &str,
    approve: bool,
    actions_per_day: i64,
) -> Result<(), AppError> {
    if !(1..=MAX_ACTIONS_PER_DAY).contains(&actions_per_day) {
        return Err(AppError::Invalid(format!(
            "Actions a day must be a whole number from 1 to {MAX_ACTIONS_PER_DAY}."
        )));
    }
    let person_id = person_id.to_owned();
    let request_id = request_id.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let agent_id: Option<String> = store::pending_request_agent(txn.conn(), &request_id, &person_id)?;
            let agent_id = agent_id.ok_or(AppError::NotFound)?;
            let now = txn.now_ms();
            let actor = format!("person:{person_id}");
            if !approve {
                store::decline_request(txn.conn(), &request_id, now)?;
                txn.record(actor, agent_id.clone(), &events::OwnerLinkDeclined { request_id: request_id.clone(), agent_id: agent_id.clone(), person_id: person_id.clone() })?;
                return Ok(());
            }
            let agent = require_agent(txn.conn(), &agent_id, "agent_id")?;
            if agent.status != "active" {
                return Err(AppError::Invalid("This agent was revoked; it can no longer be linked.".into()));
            }
            if agent.owner_id.as_ref().is_some_and(|owner| *owner != person_id) {
                return Err(AppError::Invalid(
                    "This agent already has another owner. It must be released before you can link it.".into(),
                ));
            }
            if agent.owner_id.as_deref() == Some(person_id.as_str()) {
                // Already theirs (a second request, approved late): the link and its grant,
                // pause and 24-hour count stay as they are.
                store::approve_request(txn.conn(), &request_id, now)?;
                txn.record(actor, agent_id.clone(), &events::OwnerLinkConfirmed { request_id: request_id.clone(), agent_id: agent_id.clone(), person_id: person_id.clone() })?;
                return Ok(());
            }
            let scopes = json!(READ_ONLY_SCOPES);
            store::approve_request(txn.conn(), &request_id, now)?;
            crate::identity::store::set_owner(txn.conn(), &agent_id, &person_id, now)?;
            store::upsert_grant(txn.conn(), &agent_id, &person_id, &scopes.to_string(), actions_per_day, now)?;
            txn.record(
                actor,
                agent_id.clone(),
                &events::OwnerLinked {
                    request_id: request_id.clone(),
                    agent_id: agent_id.clone(),
                    person_id: person_id.clone(),
                    scopes,
                    spend_usd_per_day: 0,
                    spend_usd_per_action: 0,
                    actions_per_day,
                },
            )?;
            Ok(())
        })
        .await?
}

/// The pending request `request_id` addressed to `person_id`.
///
/// # Errors
/// [`AppError::NotFound`] when it is not theirs or not pending; [`AppError::Internal`].
pub async fn pending_request(
    hub: &Kernel,
    person_id: &str,
    request_id: &str,
) -> Result<PendingRequest, AppError> {
    let person_id = person_id.to_owned();
    let request_id = request_id.to_owned();
    hub.store
        .read(move |conn| -> Result<PendingRequest, AppError> {
            store::pending_request(conn, &request_id, &person_id)?.ok_or(AppError::NotFound)
        })
        .await
}

/// What an owner does to one of their agents on the You page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OwnerAction {
    /// Refuse the agent's signed writes (`forbidden`) until resumed (`agent.paused`).
    Pause,
    /// Lift a pause (`agent.resumed`).
    Resume,
    /// Release the agent: it becomes independent (`agent.released`, by the owner).
    Remove,
}

/// Applies `action` to an agent `person_id` owns. Pausing a paused agent or resuming a running
/// one changes nothing and appends nothing.
///
/// # Errors
/// [`AppError::NotFound`] when the person does not own the agent; [`AppError::Internal`].
pub async fn act_on_agent(
    hub: &Kernel,
    person_id: &str,
    agent_id: &str,
    action: OwnerAction,
) -> Result<(), AppError> {
    let person_id = person_id.to_owned();
    let agent_id = agent_id.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let row: Option<Option<i64>> =
                crate::identity::store::paused_if_owned(txn.conn(), &agent_id, &person_id)?;
            let paused_ms = row.ok_or(AppError::NotFound)?;
            let now = txn.now_ms();
            let actor = format!("person:{person_id}");
            let by = || "owner".to_owned();
            let (change, event) = match action {
                OwnerAction::Pause if paused_ms.is_none() => (
                    identity_store::Ownership::Pause,
                    agent_events::AgentPaused {
                        agent_id: agent_id.clone(),
                        by: by(),
                    }
                    .event(actor, agent_id.clone()),
                ),
                OwnerAction::Resume if paused_ms.is_some() => (
                    identity_store::Ownership::Resume,
                    agent_events::AgentResumed {
                        agent_id: agent_id.clone(),
                        by: by(),
                    }
                    .event(actor, agent_id.clone()),
                ),
                OwnerAction::Remove => (
                    identity_store::Ownership::Release,
                    agent_events::AgentReleased {
                        previous_owner: person_id.clone(),
                        by: by(),
                    }
                    .event(actor, agent_id.clone()),
                ),
                OwnerAction::Pause | OwnerAction::Resume => return Ok(()),
            };
            identity_store::change_ownership(txn.conn(), &agent_id, change, now)?;
            if action == OwnerAction::Remove {
                store::delete_owner_grants(txn.conn(), &agent_id)?;
            }
            txn.append(event?)?;
            Ok(())
        })
        .await?
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_ignore_dashes_spaces_and_case_and_show_with_a_dash() {
        assert_eq!(normalize_code("abcd-ef23"), "ABCDEF23");
        assert_eq!(normalize_code(" ab cd-EF 23 "), "ABCDEF23");
        assert_eq!(display_code("ABCDEF23"), "ABCD-EF23");
        assert!(!CODE_ALPHABET.iter().any(|c| b"IO01".contains(c)));
    }
}
