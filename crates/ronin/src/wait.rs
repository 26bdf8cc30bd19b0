//! The waiters of `GET /api/v1/me/wait` (Ronin "Waiting costs nothing"): an in-memory index
//! from a public key to the requests waiting on it.
//!
//! A waiter registers under every key of its lineage ([`Waiters::register`]) *before* it
//! reads what is new; the writer's door calls [`Waiters::wake`] with the agent and buyer keys
//! of each task a batch touched, after the batch is committed. A wake leaves a permit on the
//! waiter's own signal (`Notify::notify_one`), so a task event committed between the
//! waiter's read and its sleep is not lost; a woken waiter reads the store again by its
//! cursor. Nothing polls the database. A key's entry lives while a waiter holds it: dropping
//! a [`Registration`] (answered, timed out, or the client went away) removes it.
//!
//! The index is the process's own: on a hub whose database several processes share, a task
//! written by another process is seen at the waiter's timeout, not at once.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use tokio::sync::Notify;
use tokio::time::Duration;

use crate::me::{read_news, take_auth};
use crate::nip98::Nip98Get;
use crate::{Refusal, Ronin, answer, store};

/// The most `me/wait` requests one key may hold open at once (a waiter past it is refused
/// with `rate-limited:`).
pub const PER_KEY_MAX: usize = 8;

type Index = HashMap<String, HashMap<u64, Arc<Notify>>>;

/// The index of waiters by key (shared by every clone of [`crate::Ronin`]).
#[derive(Debug, Default, Clone)]
pub struct Waiters {
    index: Arc<Mutex<Index>>,
    next_id: Arc<AtomicU64>,
}

/// A waiter's hold on the keys it registered under, and its signal.
#[derive(Debug)]
pub struct Registration {
    waiters: Waiters,
    id: u64,
    keys: Vec<String>,
    signal: Arc<Notify>,
}

impl Waiters {
    fn lock(&self) -> MutexGuard<'_, Index> {
        self.index.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Registers a waiter under `keys` (its lineage; the first is the calling key, whose cap
    /// counts). `None` when that key already holds [`PER_KEY_MAX`] waiters.
    pub fn register(&self, keys: &[String]) -> Option<Registration> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let signal = Arc::new(Notify::new());
        let mut index = self.lock();
        if keys
            .first()
            .and_then(|key| index.get(key))
            .is_some_and(|waiting| waiting.len() >= PER_KEY_MAX)
        {
            return None;
        }
        for key in keys {
            index
                .entry(key.clone())
                .or_default()
                .insert(id, Arc::clone(&signal));
        }
        drop(index);
        Some(Registration {
            waiters: self.clone(),
            id,
            keys: keys.to_vec(),
            signal,
        })
    }

    /// Wakes every waiter registered under any of `keys` (call after the commit).
    pub fn wake<'a>(&self, keys: impl IntoIterator<Item = &'a str>) {
        let index = self.lock();
        for key in keys {
            for signal in index.get(key).into_iter().flat_map(HashMap::values) {
                signal.notify_one();
            }
        }
    }

    /// How many keys have a waiter (tests: the index empties when the waiters leave).
    pub fn keys_waited_on(&self) -> usize {
        self.lock().len()
    }
}

impl Registration {
    /// Completes at the first wake of any of the waiter's keys since it registered (or since
    /// the last time this completed).
    pub async fn woken(&self) {
        self.signal.notified().await;
    }
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut index = self.waiters.lock();
        for key in &self.keys {
            if let Some(waiting) = index.get_mut(key) {
                waiting.remove(&self.id);
                if waiting.is_empty() {
                    index.remove(key);
                }
            }
        }
    }
}

/// The longest `timeout` of `me/wait`, in seconds.
pub const TIMEOUT_MAX_S: u64 = 55;
/// `timeout` when the query names none, in seconds (the spec's example).
pub const TIMEOUT_DEFAULT_S: u64 = 30;

/// Reads `timeout`: absent is [`TIMEOUT_DEFAULT_S`], else a whole number of seconds from 1 to
/// [`TIMEOUT_MAX_S`].
fn timeout(query: &HashMap<String, String>) -> Result<u64, Refusal> {
    match query.get("timeout") {
        None => Ok(TIMEOUT_DEFAULT_S),
        Some(text) => text
            .parse::<u64>()
            .ok()
            .filter(|seconds| (1..=TIMEOUT_MAX_S).contains(seconds))
            .ok_or_else(|| {
                Refusal::invalid("timeout must be a whole number of seconds from 1 to 55")
            }),
    }
}

/// Whether a `me` answer is the cursor alone (nothing new).
pub(crate) fn nothing_new(body: &Value) -> bool {
    body.as_object().is_some_and(|fields| fields.len() == 1)
}

/// `GET /api/v1/me/wait?since=<cursor>&timeout=1..55`: `me` that holds the connection.
/// Authenticated exactly as `me` (the auth event's `u` is this URL). Answers at once when `me`
/// has something after `since`; else sleeps until a task event names one of the caller's
/// lineage keys (then answers like `me`) or `timeout` seconds pass (then answers `me` as it
/// stands, `{"cursor": ...}` when still nothing). Refusals: `unauthorized:` 401 (as `me`),
/// `invalid:` 400 for a bad `since` or `timeout`, `rate-limited:` 429 past [`PER_KEY_MAX`]
/// open waits of one key.
///
/// The held wait keeps nothing of the request but the caller's key, cursor and timeout: the
/// extractor ([`Nip98Get`]) keeps only the verified event, whose strings are its own, and the
/// query is dropped once the request is admitted ([`admit`]). Header values share the
/// connection's first read buffer (8 KiB), which a held wait would otherwise keep alive
/// (docs/decisions.md 393).
pub async fn me_wait(
    State(ronin): State<Ronin>,
    Nip98Get(auth): Nip98Get,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let answered = async {
        // Boxed: the admission's futures (the auth id's write) take no room in the held one.
        let admitted = Box::pin(admit(&ronin, auth, query)).await?;
        wait(&ronin, admitted).await
    };
    match answered.await {
        Ok(body) => answer(StatusCode::OK, &body),
        Err(refusal) => refusal.into_response(),
    }
}

/// What a held wait keeps of its request: the caller's key, its cursor and its timeout.
#[derive(Debug)]
struct Admitted {
    pubkey: String,
    since: i64,
    timeout: Duration,
}

/// Checks `since` and `timeout`, takes the auth id, and drops the query and the rest of the
/// auth event (they are moved in and go out of scope here, before any sleep).
async fn admit(
    ronin: &Ronin,
    auth: kd_protocol::nostr::Event,
    query: HashMap<String, String>,
) -> Result<Admitted, Refusal> {
    let since = crate::me::since(&query)?;
    let timeout = Duration::from_secs(timeout(&query)?);
    drop(query);
    let kd_protocol::nostr::Event { id, pubkey, .. } = auth;
    take_auth(ronin, id).await?;
    Ok(Admitted {
        pubkey,
        since,
        timeout,
    })
}

/// Registers, reads, and sleeps until a wake or the deadline (see [`me_wait`]).
async fn wait(ronin: &Ronin, admitted: Admitted) -> Result<Value, Refusal> {
    let Admitted {
        pubkey,
        since,
        timeout,
    } = admitted;
    let deadline = tokio::time::Instant::now() + timeout;
    let caller = pubkey.clone();
    let lineage = ronin
        .store
        .read(move |conn| store::lineage(conn, &caller).map_err(kd_core::store::StoreError::from))
        .await
        .map_err(Refusal::server)?;
    let mut keys = vec![pubkey.clone()];
    keys.extend(lineage.into_iter().filter(|key| *key != pubkey));
    let registration = ronin.waiters.register(&keys).ok_or_else(|| {
        Refusal::rate_limited(format!(
            "at most {PER_KEY_MAX} open waits per key; close one first"
        ))
    })?;
    loop {
        let body = read_news(ronin, pubkey.clone(), since).await?;
        if !nothing_new(&body) {
            return Ok(body);
        }
        // Nothing new: the empty answer is not kept across the sleep.
        drop(body);
        if tokio::time::timeout_at(deadline, registration.woken())
            .await
            .is_err()
        {
            // The timeout: `me` as it stands (a task another process wrote shows here).
            return read_news(ronin, pubkey, since).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_wake_before_the_sleep_is_kept_and_a_left_key_is_removed() {
        let waiters = Waiters::default();
        let alice = waiters
            .register(&["a".to_owned(), "a0".to_owned()])
            .unwrap();
        let bob = waiters.register(&["b".to_owned()]).unwrap();
        assert_eq!(waiters.keys_waited_on(), 3);
        waiters.wake(["a0"]);
        // Alice's wake came before she slept: it is kept. Bob's never came.
        tokio::time::timeout(std::time::Duration::from_secs(1), alice.woken())
            .await
            .unwrap();
        let bob_woken =
            tokio::time::timeout(std::time::Duration::from_millis(50), bob.woken()).await;
        assert!(bob_woken.is_err());
        drop(alice);
        assert_eq!(waiters.keys_waited_on(), 1);
        drop(bob);
        assert_eq!(waiters.keys_waited_on(), 0);
    }

    #[test]
    fn a_key_holds_at_most_its_cap_of_waiters() {
        let waiters = Waiters::default();
        let held: Vec<_> = (0..PER_KEY_MAX)
            .map(|_| waiters.register(&["k".to_owned()]).unwrap())
            .collect();
        assert!(waiters.register(&["k".to_owned()]).is_none());
        drop(held);
        assert!(waiters.register(&["k".to_owned()]).is_some());
    }
}
