//! Signed callbacks (Ronin section 6 "Push instead"): a PROFILE's `callback` URL receives
//! every change that includes a task for its lineage, as the same payload `me` would answer.
//!
//! **Queued with the change.** In the writer transaction of an accepted batch, for each
//! lineage of a key the batch woke (a task's agent or buyer: the same keys whose `me/wait`
//! wakes), whose newest PROFILE carries a `callback`, [`queue`] stores one row in
//! `ronin_callbacks`: the body is `me`'s answer for that lineage's head key since the cursor
//! just before the batch (`{cursor, new: {tasks, other_events}, next}`: just that change). A
//! refused batch rolls back and queues nothing.
//!
//! **Delivered in the background.** [`run_deliverer`] (started by the hub beside its other
//! workers) runs [`deliver_due`] when a batch queued something and every [`ROUND_EVERY`]:
//! each due row is claimed (its try counted before it is made, so several hub processes on
//! one database never try one row twice at once), then POSTed through the hub's outbound
//! client ([`kd_core::outbound`], with the operator's policy: private addresses refused unless
//! allowed) with `Content-Type: application/json`, `Ronin-Pubkey` (the operator key,
//! `GET /api/v1/server`) and `Ronin-Signature` (BIP-340 by the operator key over the 32
//! bytes of sha256 of the exact body, 128 hex). A 2xx is delivered; anything else (another
//! status, a refused address, a timeout) is a failed try. [`TRIES`] tries, the second
//! [`RETRY_AFTER_MS`]`[0]` after the first, the third [`RETRY_AFTER_MS`]`[1]` after the
//! second; then the row is `given_up` and nothing more is sent. `me` always has everything.

use std::time::Duration;

use kd_core::db::Connection;
use kd_core::outbound::{self, Policy};
use kd_core::store::StoreError;
use sha2::{Digest, Sha256};

use crate::Ronin;
use crate::store;

/// How many tries a callback gets.
pub const TRIES: i64 = 3;
/// The waits before the second and the third try, in milliseconds (hub clock).
pub const RETRY_AFTER_MS: [i64; 2] = [10_000, 60_000];
/// How often the deliverer looks for due tries when nothing wakes it.
pub const ROUND_EVERY: Duration = Duration::from_secs(5);
/// The most tries one round makes.
pub const ROUND_MAX: i64 = 32;

/// Queues the callbacks of a batch (in its writer transaction, after its events): one per
/// lineage of `touched` with a callback URL, its body `me`'s answer since `since`. Returns
/// how many were queued.
///
/// # Errors
/// The store's error (the batch is then refused whole).
pub(crate) fn queue(
    conn: &Connection,
    since: i64,
    touched: &[String],
    now_ms: i64,
) -> kd_core::db::Result<usize> {
    let mut heads: Vec<String> = Vec::new();
    for key in touched {
        let head = store::head(conn, key)?;
        if !heads.contains(&head) {
            heads.push(head);
        }
    }
    let seq = store::latest_seq(conn)?;
    let mut queued = 0;
    for head in heads {
        let keys = store::lineage(conn, &head)?;
        let Some(url) = store::lineage_callback(conn, &keys)? else {
            continue;
        };
        let body = crate::me::news(conn, &head, since)?;
        if crate::wait::nothing_new(&body) {
            continue;
        }
        store::queue_callback(conn, seq, &head, &url, &body.to_string(), now_ms)?;
        queued += 1;
    }
    Ok(queued)
}

/// `Ronin-Signature`: BIP-340 by `secret` over sha256 of `body`, lowercase hex (128
/// characters). The auxiliary randomness is derived from the digest and `now_ms` (BIP-340
/// allows any 32 bytes there; the signature stays unforgeable without the secret).
pub fn signature(secret: &[u8; 32], body: &[u8], now_ms: i64) -> Option<String> {
    let digest: [u8; 32] = Sha256::digest(body).into();
    let aux: [u8; 32] = Sha256::new()
        .chain_update(b"ronin-callback-aux")
        .chain_update(digest)
        .chain_update(now_ms.to_be_bytes())
        .finalize()
        .into();
    kd_protocol::nostr::sign_schnorr(secret, &digest, &aux).map(hex::encode)
}

/// The next try's due time after a try at `now_ms` that was try number `tries` (1-based),
/// or `None` after the last.
fn next_due(tries: i64, now_ms: i64) -> Option<i64> {
    usize::try_from(tries - 1)
        .ok()
        .and_then(|index| RETRY_AFTER_MS.get(index))
        .filter(|_| tries < TRIES)
        .map(|wait| now_ms + wait)
}

/// Claims the due callbacks: each one's try is counted (and its next one scheduled) before it
/// is made.
async fn claim_due(ronin: &Ronin) -> Result<Vec<store::CallbackRow>, StoreError> {
    let now_ms = ronin.clock.now_ms();
    ronin
        .store
        .write(move |txn| -> Result<_, StoreError> {
            let conn = txn.conn();
            let mut claimed = Vec::new();
            for row in store::due_callbacks(conn, now_ms, ROUND_MAX)? {
                let next = next_due(row.tries + 1, now_ms);
                if store::claim_try(conn, row.seq, &row.pubkey, row.tries, next)? {
                    claimed.push(row);
                }
            }
            Ok(claimed)
        })
        .await?
}

/// One try of one callback: `None` when delivered, else why not.
async fn try_once(ronin: &Ronin, row: &store::CallbackRow, policy: &Policy) -> Option<String> {
    let Some(signature) = signature(
        &ronin.operator_secret,
        row.body.as_bytes(),
        ronin.clock.now_ms(),
    ) else {
        return Some("the operator key cannot sign".to_owned());
    };
    let request = outbound::Request::post(row.url.clone(), row.body.clone().into_bytes())
        .header("Content-Type", "application/json")
        .header("Ronin-Pubkey", ronin.operator_pubkey.clone())
        .header("Ronin-Signature", signature);
    match outbound::send(request, policy.clone()).await {
        Ok(response) if response.is_success() => None,
        Ok(response) => Some(format!("status {}", response.status)),
        Err(error) => Some(error.to_string()),
    }
}

/// Makes every due try once (see the module doc); returns how many tries were made.
///
/// # Errors
/// The store's error when the queue cannot be read or updated.
pub async fn deliver_due(ronin: &Ronin, policy: &Policy) -> Result<usize, StoreError> {
    let claimed = claim_due(ronin).await?;
    for row in &claimed {
        let failure = try_once(ronin, row, policy).await;
        if let Some(reason) = &failure {
            tracing::info!(seq = row.seq, tries = row.tries + 1, %reason, "ronin callback not delivered");
        }
        let (seq, pubkey) = (row.seq, row.pubkey.clone());
        ronin
            .store
            .write(move |txn| {
                store::record_try(txn.conn(), seq, &pubkey, failure.as_deref())
                    .map_err(StoreError::from)
            })
            .await??;
    }
    Ok(claimed.len())
}

/// The deliverer: a round when a batch queued callbacks, and every [`ROUND_EVERY`].
pub async fn run_deliverer(ronin: Ronin, policy: Policy) {
    loop {
        if let Err(error) = deliver_due(&ronin, &policy).await {
            tracing::error!(%error, "ronin callback round failed");
        }
        tokio::select! {
            () = ronin.callback_wakeup.notified() => {}
            () = tokio::time::sleep(ROUND_EVERY) => {}
        }
    }
}

/// One queued callback as [`deliveries`] lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// The cursor of the change (`c<seq>`).
    pub cursor: String,
    /// The callback URL.
    pub url: String,
    /// The exact body POSTed.
    pub body: String,
    /// Tries made (0 to [`TRIES`]).
    pub tries: i64,
    /// `pending`, `delivered` or `given_up`.
    pub state: String,
    /// Why the last try failed.
    pub last_error: Option<String>,
}

/// The callbacks queued for the lineage head `pubkey`, oldest first (operators and tests).
///
/// # Errors
/// The store's error.
pub async fn deliveries(ronin: &Ronin, pubkey: &str) -> Result<Vec<Delivery>, StoreError> {
    let pubkey = pubkey.to_owned();
    let rows = ronin
        .store
        .read(move |conn| store::callbacks_of(conn, &pubkey).map_err(StoreError::from))
        .await?;
    Ok(rows
        .into_iter()
        .map(|row| Delivery {
            cursor: format!("c{}", row.seq),
            url: row.url,
            body: row.body,
            tries: row.tries,
            state: row.state,
            last_error: row.last_error,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_tries_then_none() {
        assert_eq!(next_due(1, 1_000), Some(11_000));
        assert_eq!(next_due(2, 1_000), Some(61_000));
        assert_eq!(next_due(3, 1_000), None);
    }

    #[test]
    fn the_signature_verifies_over_the_body_digest() {
        let secret = [7u8; 32];
        let body = br#"{"cursor":"c3"}"#;
        let signature = hex::decode(signature(&secret, body, 5).unwrap()).unwrap();
        let pubkey = hex::decode(kd_protocol::nostr::public_key_hex(&secret).unwrap()).unwrap();
        let digest: [u8; 32] = Sha256::digest(body).into();
        let verify = |message: &[u8]| {
            kd_protocol::nostr::verify_schnorr(
                &pubkey.clone().try_into().unwrap(),
                message,
                &signature.clone().try_into().unwrap(),
            )
        };
        assert!(verify(&digest).is_ok());
        assert!(verify(&Sha256::digest(b"{}")).is_err());
    }
}
