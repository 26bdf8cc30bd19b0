//! Accounts and sessions: sign up, sign in, sign out and the session a token names (spec
//! "Connecting to your person"). Stored by [`kd_core::people`]; the attempt limits and the
//! argon2id bound ([`super::password_gate`]) are here.
//!
//! Events: `person.signed_up`.

use std::net::IpAddr;

use kd_core::people::{self as accounts, Person, Session};
use kd_core::random::{random_bytes, random_id};

use super::{AppError, MAX_DISPLAY_NAME_CHARS, password_gate};
use kd_kernel::Kernel;

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
