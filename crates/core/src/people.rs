//! People's accounts and sessions (DESIGN: "people's accounts and sessions" live in core).
//!
//! A person signs up with an email, a display name and a password. The password is hashed with
//! argon2id (default parameters) and the hash lives only in the `people` projection table; the
//! `person.signed_up` event carries the person id and display name, never the email, the
//! password or its hash. Sessions and their form (CSRF) tokens are working state; the store
//! keeps only the SHA-256 of a session token, so a copy of the database cannot sign anyone in.

use crate::db::{Connection, OptionalExtension, params};
use argon2::Argon2;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use sha2::{Digest, Sha256};

use crate::eventlog::{EventPayload, EventRow};
use crate::store::{StoreError, WriteTxn};

/// How long a session lasts after sign-in, in milliseconds (30 days).
pub const SESSION_TTL_MS: i64 = 30 * 24 * 3600 * 1000;
/// Shortest accepted password, in characters.
pub const MIN_PASSWORD_CHARS: usize = 10;
/// Longest accepted password, in characters (argon2 takes any length; this bounds the work).
pub const MAX_PASSWORD_CHARS: usize = 200;

/// A person as the projection holds it (no password hash).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    /// `kdh_` and 24 hex characters.
    pub person_id: String,
    /// Trimmed, lowercased email.
    pub email: String,
    /// The name shown in the app.
    pub display_name: String,
    /// Unix milliseconds.
    pub created_ms: i64,
}

/// A live session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The signed-in person.
    pub person_id: String,
    /// The per-session form token every POST of the app must carry.
    pub csrf: String,
    /// Unix milliseconds after which the session no longer works.
    pub expires_ms: i64,
}

/// Why an account could not be created.
#[derive(Debug, thiserror::Error)]
pub enum SignUpError {
    /// An account already uses this email.
    #[error("an account already uses this email")]
    EmailTaken,
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl From<crate::db::DbError> for SignUpError {
    fn from(error: crate::db::DbError) -> Self {
        Self::Store(StoreError::Db(error))
    }
}

/// Trims and lowercases an email; `None` when it is not `local@domain` (at most 254
/// characters, no spaces or control characters).
pub fn normalize_email(text: &str) -> Option<String> {
    let email = text.trim().to_lowercase();
    let (local, domain) = email.split_once('@')?;
    let plausible = !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains('@')
        && email.chars().count() <= 254
        && !email
            .chars()
            .any(|c| c.is_whitespace() || c.is_control() || crate::scanner::is_format(c));
    plausible.then_some(email)
}

/// Hashes `password` with argon2id (default parameters) and a 16-byte `salt`; returns the PHC
/// string (`$argon2id$v=19$...`).
///
/// # Errors
/// [`StoreError::Invalid`] when argon2 refuses the input (it does not for passwords within
/// [`MAX_PASSWORD_CHARS`]).
pub fn hash_password(password: &str, salt: [u8; 16]) -> Result<String, StoreError> {
    let salt =
        SaltString::encode_b64(&salt).map_err(|error| StoreError::Invalid(error.to_string()))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|hash| hash.to_string())
        .map_err(|error| StoreError::Invalid(error.to_string()))
}

/// Whether `password` matches the PHC string `hash`. A malformed hash never matches.
pub fn verify_password(hash: &str, password: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|parsed| {
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

/// The lowercase hex SHA-256 of a secret (session token, connect code): what the store keeps.
pub fn secret_sha256(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Creates an account and appends `person.signed_up` (actor `person:<id>`, payload
/// `{person_id, display_name}`), in the caller's transaction.
///
/// # Errors
/// [`SignUpError::EmailTaken`] (nothing written); [`SignUpError::Store`].
pub fn sign_up(
    txn: &mut WriteTxn<'_>,
    person_id: &str,
    email: &str,
    display_name: &str,
    password_hash: &str,
) -> Result<EventRow, SignUpError> {
    let taken: Option<String> = txn
        .conn()
        .prepare_cached("SELECT person_id FROM people WHERE email = ?1")?
        .query_row([email], |row| row.get(0))
        .optional()?;
    if taken.is_some() {
        return Err(SignUpError::EmailTaken);
    }
    txn.conn()
        .prepare_cached(
            "INSERT INTO people (person_id, email, display_name, password_hash, created_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![person_id, email, display_name, password_hash, txn.now_ms()])?;
    Ok(txn.record(
        format!("person:{person_id}"),
        person_id,
        &PersonSignedUp {
            person_id: person_id.to_owned(),
            display_name: display_name.to_owned(),
        },
    )?)
}

/// `person.signed_up`: a person made an account (the email, the password and its hash are
/// never logged; they live only in the `people` table).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PersonSignedUp {
    /// The new `kdh_` person id.
    pub person_id: String,
    /// The name they chose to show.
    pub display_name: String,
}

impl EventPayload for PersonSignedUp {
    const KIND: &'static str = "person.signed_up";
}

fn person_from_row(row: &crate::db::Row<'_>) -> crate::db::Result<Person> {
    Ok(Person {
        person_id: row.get(0)?,
        email: row.get(1)?,
        display_name: row.get(2)?,
        created_ms: row.get(3)?,
    })
}

/// A person and their password hash, by normalized email.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn find_by_email(
    conn: &Connection,
    email: &str,
) -> Result<Option<(Person, String)>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT person_id, email, display_name, created_ms, password_hash FROM people WHERE email = ?1")?
        .query_row([email], |row| Ok((person_from_row(row)?, row.get(4)?)))
        .optional()?)
}

/// A person by id.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn find_person(conn: &Connection, person_id: &str) -> Result<Option<Person>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT person_id, email, display_name, created_ms FROM people WHERE person_id = ?1",
        )?
        .query_row([person_id], person_from_row)
        .optional()?)
}

/// Stores a new session for `person_id` (only the token's SHA-256), lasting [`SESSION_TTL_MS`],
/// and forgets sessions that have expired.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn start_session(
    conn: &Connection,
    token: &str,
    csrf: &str,
    person_id: &str,
    now_ms: i64,
) -> Result<Session, StoreError> {
    let expires_ms = now_ms + SESSION_TTL_MS;
    conn.prepare_cached("DELETE FROM sessions WHERE expires_ms <= ?1")?
        .execute([now_ms])?;
    conn.prepare_cached(
        "INSERT INTO sessions (token_sha256, person_id, csrf, created_ms, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![secret_sha256(token), person_id, csrf, now_ms, expires_ms])?;
    Ok(Session {
        person_id: person_id.to_owned(),
        csrf: csrf.to_owned(),
        expires_ms,
    })
}

/// The live session of `token` at `now_ms` (`None`: unknown, signed out or expired).
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn session(conn: &Connection, token: &str, now_ms: i64) -> Result<Option<Session>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT person_id, csrf, expires_ms FROM sessions WHERE token_sha256 = ?1 AND expires_ms > ?2")?
        .query_row(params![secret_sha256(token), now_ms], |row| {
            Ok(Session { person_id: row.get(0)?, csrf: row.get(1)?, expires_ms: row.get(2)? })
        })
        .optional()?)
}

/// Ends the session of `token` (sign out). Ending an unknown session does nothing.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn end_session(conn: &Connection, token: &str) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM sessions WHERE token_sha256 = ?1")?
        .execute([secret_sha256(token)])?;
    Ok(())
}

/// How long a sign-up confirmation link works, in milliseconds (24 hours; DECISIONS 260).
pub const SIGNUP_LINK_TTL_MS: i64 = 24 * 3600 * 1000;

/// A sign-up waiting for its mailed link (`signup_links`; the token is kept as its SHA-256).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingSignUp {
    /// Trimmed, lowercased email the link was mailed to.
    pub email: String,
    /// The name the person chose.
    pub display_name: String,
    /// The argon2id hash of the chosen password.
    pub password_hash: String,
}

/// Stores a sign-up waiting for the link of `token` (only its SHA-256), working for
/// [`SIGNUP_LINK_TTL_MS`], and forgets links that have expired. Nothing is logged.
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn hold_sign_up(
    conn: &Connection,
    token: &str,
    pending: &PendingSignUp,
    now_ms: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM signup_links WHERE expires_ms <= ?1")?
        .execute([now_ms])?;
    conn.prepare_cached(
        "INSERT INTO signup_links (token_sha256, email, display_name, password_hash, created_ms, expires_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        secret_sha256(token),
        pending.email,
        pending.display_name,
        pending.password_hash,
        now_ms,
        now_ms + SIGNUP_LINK_TTL_MS
    ])?;
    Ok(())
}

/// The sign-up waiting for `token` at `now_ms` (`None`: unknown, used or expired).
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn held_sign_up(
    conn: &Connection,
    token: &str,
    now_ms: i64,
) -> Result<Option<PendingSignUp>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT email, display_name, password_hash FROM signup_links WHERE token_sha256 = ?1 AND expires_ms > ?2")?
        .query_row(params![secret_sha256(token), now_ms], |row| {
            Ok(PendingSignUp { email: row.get(0)?, display_name: row.get(1)?, password_hash: row.get(2)? })
        })
        .optional()?)
}

/// Forgets every sign-up waiting for `email` (its link was used: the others must not make a
/// second account).
///
/// # Errors
/// [`StoreError`] when the store fails.
pub fn drop_sign_ups(conn: &Connection, email: &str) -> Result<(), StoreError> {
    conn.prepare_cached("DELETE FROM signup_links WHERE email = ?1")?
        .execute([email])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_hash_with_argon2id_and_verify() {
        let hash = hash_password("correct horse battery", [7; 16]).unwrap();
        assert!(hash.starts_with("$argon2id$"), "{hash}");
        assert!(verify_password(&hash, "correct horse battery"));
        assert!(!verify_password(&hash, "correct horse battery!"));
        assert!(!verify_password("not a hash", "x"));
    }

    #[test]
    fn emails_are_trimmed_and_lowercased() {
        assert_eq!(
            normalize_email("  Ada@Example.ORG "),
            Some("ada@example.org".into())
        );
        assert_eq!(normalize_email("no-at-sign"), None);
        assert_eq!(normalize_email("a@b"), None);
        assert_eq!(normalize_email("a b@c.d"), None);
    }
}
