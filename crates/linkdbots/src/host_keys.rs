//! A person's host signing keys (spec "The card schema": `signature` — "A host holding a
//! registered signing key can sign the card, and it lands as host-signed"), decisions 202 and
//! 333. A signed-in person registers a key ([`crate::pairing::register_host_key`]: an id of
//! their choosing and a 32-byte Ed25519 public key, base64url), lists theirs ([`mine`]) and
//! revokes one ([`revoke`]). A revoked key signs nothing from then on: a card signed with it
//! lands `self-reported` (what [`crate::store::host_key`] reads); cards it signed before stay
//! as they landed. Its id stays taken, so a later key cannot inherit its name.
//!
//! The hub serves these behind its session at `/linkdbots/dashboard/host-keys`.

use kd_core::store::Store;
use serde_json::{Value, json};

use crate::{ApiError, owner_store};

/// The host keys `person_id` registered, oldest first: `[{keyId, publicKey, registeredAt,
/// revokedAt | null}]` (times RFC 3339).
///
/// # Errors
/// The store's error.
pub async fn mine(store: &Store, person_id: &str) -> Result<Value, ApiError> {
    let person_id = person_id.to_owned();
    let keys = store
        .read(move |conn| owner_store::host_keys_of(conn, &person_id).map_err(ApiError::from))
        .await?;
    Ok(Value::Array(
        keys.iter()
            .map(|key| {
                json!({
                    "keyId": key.key_id,
                    "publicKey": key.public_key,
                    "registeredAt": kd_core::clock::rfc3339_ms(key.created_ms),
                    "revokedAt": key.revoked_ms.map(kd_core::clock::rfc3339_ms),
                })
            })
            .collect(),
    ))
}

/// `person_id` revokes their host key `key_id`, for good: `{keyId, revokedAt}`.
///
/// # Errors
/// [`ApiError::not_found`] (404) when `key_id` is not a key of theirs that is still in force
/// (unknown, someone else's, or revoked already: one answer).
pub async fn revoke(store: &Store, person_id: &str, key_id: &str) -> Result<Value, ApiError> {
    let now_ms = store.clock().now_ms();
    let (person_id, key_id) = (person_id.to_owned(), key_id.trim().to_owned());
    store
        .write(move |txn| {
            if owner_store::revoke_host_key(txn.conn(), &person_id, &key_id, now_ms)? != 1 {
                return Err(ApiError::not_found(format!(
                    "no host key of yours `{key_id}` in force"
                )));
            }
            Ok(json!({ "keyId": key_id, "revokedAt": kd_core::clock::rfc3339_ms(now_ms) }))
        })
        .await?
}
