//! Accounts and sessions: sign up, sign in, sign out and the session a token names (spec
//! "Connecting to your person"). Stored by [`kd_core::people`]; the attempt limits and the
//! argon2id bound ([`super::password_gate`]) are here.
//!
//! Sign-up is confirmed by a mailed link (DECISIONS 260). Events: `person.signed_up` (when
//! the link is followed).

use std::net::IpAddr;

use kd_core::limits::Charge;
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

/// The path of the link a sign-up mail carries (`?token=kdsu_…`).
pub const CONFIRM_PATH: &str = "/signup/confirm";
/// The subject of the mail that carries a sign-up link.
pub const CONFIRM_SUBJECT: &str = "Confirm your KarmaDue account";
/// The subject of the mail sent when someone signs up with an address that has an account.
pub const ALREADY_SUBJECT: &str = "Someone tried to sign up to KarmaDue with your address";

/// Starts a sign-up (DECISIONS 260). The cheap checks come first: the form, then the attempt
/// limit (5 a minute per email and per address, like sign-in); then the password is hashed,
/// behind the [`password_gate`], whether or not the address has an account, so the answer
/// takes as long and reads the same either way. A new address gets a mail with a single-use
/// link (a `kdsu_` token, lasting [`accounts::SIGNUP_LINK_TTL_MS`]) and the sign-up waits in
/// `signup_links`; an address with an account gets a mail saying so instead. Nothing is
/// logged: the account (and `person.signed_up`) comes with [`confirm_sign_up`].
///
/// # Errors
/// [`AppError::Invalid`] for a bad email, name or password; [`AppError::RateLimited`],
/// [`AppError::Busy`], [`AppError::Internal`]. A refusal stores nothing but the counted
/// attempt.
pub async fn sign_up(
    hub: &Kernel,
    email: &str,
    display_name: &str,
    password: &str,
    ip: Option<IpAddr>,
) -> Result<(), AppError> {
    let (email, display_name) = check_sign_up(email, display_name, password)?;
    admit_attempt(hub, "signup", &email, ip).await?;
    let salt = random_bytes::<16>(hub.random.as_ref());
    let password = password.to_owned();
    // argon2 is deliberately slow: hash off the async threads, outside the writer, a few at
    // a time.
    let password_hash = password_gate(hub)?
        .run(move || accounts::hash_password(&password, salt))
        .await??;
    let token = random_id::<32>(hub.random.as_ref(), "kdsu_");
    let mail_id = random_id::<12>(hub.random.as_ref(), "kdm_");
    let public_url = hub.config.public_url.clone();
    let pending = accounts::PendingSignUp {
        email,
        display_name,
        password_hash,
    };
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let now = txn.now_ms();
            let taken = accounts::find_by_email(txn.conn(), &pending.email)?.is_some();
            let (subject, body) = if taken {
                (ALREADY_SUBJECT, already_mail(&public_url))
            } else {
                accounts::hold_sign_up(txn.conn(), &token, &pending, now)?;
                (CONFIRM_SUBJECT, confirm_mail(&public_url, &token))
            };
            kd_core::outbox::queue(
                txn.conn(),
                &kd_core::outbox::Mail {
                    mail_id,
                    to_email: pending.email.clone(),
                    subject: subject.into(),
                    body,
                    created_ms: now,
                    sent_ms: None,
                },
            )?;
            Ok(())
        })
        .await??;
    super::mail::MailWakeup::notify(hub);
    Ok(())
}

/// The mail with the sign-up link (the hub keeps only the token's SHA-256; the outbox drops
/// the body once the relay has it).
fn confirm_mail(public_url: &str, token: &str) -> String {
    format!(
        "Hello,\n\nSomeone (we hope you) asked to create a KarmaDue account with this email address.\n\n\
         To finish, open this link within 24 hours. It works once:\n\
         {public_url}{CONFIRM_PATH}?token={token}\n\n\
         If this was not you, ignore this message: no account is made unless the link is opened.\n"
    )
}

/// The mail to an address that already has an account: the same page answered the sign-up.
fn already_mail(public_url: &str) -> String {
    format!(
        "Hello,\n\nSomeone (perhaps you) tried to create a KarmaDue account with this email address, \
         which already has one. Nothing was changed.\n\n\
         If it was you, sign in instead:\n{public_url}/signin\n\n\
         If it was not you, ignore this message.\n"
    )
}

/// Whether `token` names a sign-up link that still works (a read; nothing is changed).
///
/// # Errors
/// [`AppError::Internal`].
pub async fn sign_up_link_works(hub: &Kernel, token: &str) -> Result<bool, AppError> {
    let token = token.to_owned();
    let now_ms = hub.clock.now_ms();
    Ok(hub
        .store
        .read(move |conn| accounts::held_sign_up(conn, &token, now_ms))
        .await?
        .is_some())
}

/// Follows a sign-up link: makes the account (`person.signed_up`), forgets every sign-up
/// waiting for that address, and signs the person in, in one write.
///
/// # Errors
/// [`AppError::Invalid`] "This link does not work…" for an unknown, used or expired token or
/// an address that got an account meanwhile (nothing written); [`AppError::Internal`].
pub async fn confirm_sign_up(hub: &Kernel, token: &str) -> Result<NewSession, AppError> {
    let token = token.to_owned();
    let person_id = random_id::<12>(hub.random.as_ref(), "kdh_");
    let (session_token, csrf) = new_session(hub);
    let stored_token = session_token.clone();
    let session = hub
        .store
        .write(move |txn| -> Result<Session, AppError> {
            let pending =
                accounts::held_sign_up(txn.conn(), &token, txn.now_ms())?.ok_or_else(dead_link)?;
            match accounts::sign_up(
                txn,
                &person_id,
                &pending.email,
                &pending.display_name,
                &pending.password_hash,
            ) {
                Ok(_) => {}
                Err(accounts::SignUpError::EmailTaken) => return Err(dead_link()),
                Err(accounts::SignUpError::Store(error)) => return Err(error.into()),
            }
            accounts::drop_sign_ups(txn.conn(), &pending.email)?;
            Ok(accounts::start_session(
                txn.conn(),
                &stored_token,
                &csrf,
                &person_id,
                txn.now_ms(),
            )?)
        })
        .await??;
    Ok(NewSession {
        token: session_token,
        session,
    })
}

/// The refusal of a sign-up link that does not work.
fn dead_link() -> AppError {
    AppError::Invalid(
        "This link does not work: it was already used, it expired (links last 24 hours), or it was mistyped. Sign up again, or sign in if you already have an account.".into(),
    )
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

/// Sign-in (and sign-up) attempts allowed per email and per address in a rolling minute.
pub const ATTEMPTS_PER_MINUTE: u32 = 5;

/// The limiter buckets one `flow` attempt (`signin`, `signup`) is charged to: the email and
/// the address, each flow with its own keys. Sign-in keeps the keys it always had (`email:`,
/// `ip:`), sign-up has `signup-email:` and `signup-ip:`; all under `people:` in the hub's one
/// limiter, so they never share a bucket with the pipeline's or Ronin's (`ip:<addr>`).
fn attempt_keys(flow: &str, email: &str, ip: Option<IpAddr>) -> Vec<String> {
    let prefix = if flow == "signin" {
        String::new()
    } else {
        format!("{flow}-")
    };
    let mut keys = vec![format!("people:{prefix}email:{email}")];
    if let Some(ip) = ip {
        keys.push(format!("people:{prefix}ip:{}", ip.to_canonical()));
    }
    keys
}

/// Counts one `flow` attempt against the email and the address in the hub's limiter
/// ([`kd_core::limits::Limiter`], [`ATTEMPTS_PER_MINUTE`] a minute per key; decision 286: in
/// memory on a SQLite hub, shared in the database on PostgreSQL). A refused attempt takes no
/// slot in any bucket.
///
/// # Errors
/// [`AppError::RateLimited`] with the whole seconds until the full bucket has room (nothing
/// counted), [`AppError::Internal`] when the shared counts cannot be read.
async fn admit_attempt(
    hub: &Kernel,
    flow: &str,
    email: &str,
    ip: Option<IpAddr>,
) -> Result<(), AppError> {
    let charges: Vec<Charge> = attempt_keys(flow, email, ip)
        .into_iter()
        .map(|key| Charge::one(key, ATTEMPTS_PER_MINUTE))
        .collect();
    match hub.limiter.take(&charges, hub.clock.now_ms()).await? {
        Ok(()) => Ok(()),
        Err(limited) => Err(AppError::RateLimited {
            retry_after_s: i64::try_from(limited.retry_after_s()).unwrap_or(i64::MAX),
        }),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_flow_charges_its_own_keys_under_people_in_the_one_limiter() {
        let ip: IpAddr = "::ffff:203.0.113.9".parse().unwrap();
        assert_eq!(
            attempt_keys("signin", "a@example.org", Some(ip)),
            ["people:email:a@example.org", "people:ip:203.0.113.9"]
        );
        assert_eq!(
            attempt_keys("signup", "a@example.org", Some(ip)),
            [
                "people:signup-email:a@example.org",
                "people:signup-ip:203.0.113.9"
            ]
        );
        assert_eq!(
            attempt_keys("signin", "a@example.org", None),
            ["people:email:a@example.org"]
        );
    }
}
