//! `POST /api/v1/events` (Ronin "Events", "Kinds"): one signed event, or an ordered array of
//! up to 25 taken all or nothing.
//!
//! Each event is read strictly and verified ([`kd_protocol::nostr`]: the id recomputed, the
//! BIP-340 signature checked), its `created_at` must be at most 600 s ahead of the server clock
//! and at most 24 h behind, and its content and tags must have its kind's shape
//! ([`content`], [`task`]), all before the store is touched. Then, in one writer transaction,
//! each event in order: a known id is `duplicate:`, a revoked or retired key is
//! `restricted:`, the rules that need the store run ([`rules`]: a listing needs its owner's
//! profile, each task event its reference, signer and counterparty; an earlier event of the
//! same batch counts), and only then is the event stored ([`crate::store`]), applied to the
//! projections and recorded in the global log as `ronin.event`. A refusal anywhere rolls the
//! whole batch back and names the failing `index`.
//!
//! Kinds taken: 0 PROFILE, 31100 LISTING, 1100-1106 (the task chain, [`task`], [`rules`]),
//! 1107 SUCCESSOR, 1108 REVOKE, 1109 CLAIM and 1110 CERTIFY ([`keys`]).

mod content;
pub mod keys;
mod rules;
pub mod task;

use kd_core::eventlog::EventPayload;
use kd_core::store::WriteTxn;
use kd_protocol::nostr::Event;

use crate::store::{self, Listing, Profile, Task};
use crate::{Refusal, Ronin};

/// The most events one POST may carry.
pub const BATCH_MAX: usize = 25;
/// How far ahead of the server clock `created_at` may be, in seconds.
pub const AHEAD_MAX_S: i64 = 600;
/// How far behind the server clock `created_at` may be, in seconds.
pub const BEHIND_MAX_S: i64 = 86_400;

/// PROFILE.
pub const PROFILE: u16 = 0;
/// LISTING (addressable, `d` tag).
pub const LISTING: u16 = 31100;
/// REVOKE.
pub const REVOKE: u16 = 1108;

/// The LISTING content fields the listing view shows (section 4).
pub const LISTING_FIELDS: [&str; 12] = [
    "title",
    "description",
    "type",
    "price_hint",
    "currency",
    "available",
    "capabilities",
    "format",
    "license",
    "terms",
    "skill",
    "inputs",
];

/// The most tags an event may carry.
pub const TAGS_MAX: usize = 100;

/// The doors a PROFILE's `source` tag may name.
pub const SOURCES: [&str; 6] = ["web", "curl", "client", "worker", "mcp", "plugin"];

fn invalid(message: impl Into<String>) -> Refusal {
    Refusal::invalid(message)
}

/// Reads the body: one event object, or an array of 1 to [`BATCH_MAX`] of them. Each event
/// comes back as its own JSON text, so that [`Event::parse`] sees it as sent (a repeated field
/// is refused there, never read as its last value). The flag says whether it was one object.
///
/// # Errors
/// `invalid:` for anything else (index 0).
pub(crate) fn read_body(body: &[u8]) -> Result<(Vec<String>, bool), Refusal> {
    let text = std::str::from_utf8(body).map_err(|_| invalid("the body is not UTF-8"))?;
    match text.trim_start().chars().next() {
        Some('{') => Ok((vec![text.to_owned()], true)),
        Some('[') => {
            let items: Vec<Box<serde_json::value::RawValue>> = serde_json::from_str(text)
                .map_err(|error| invalid(format!("the body is not a JSON array ({error})")))?;
            if items.is_empty() {
                return Err(invalid("an empty array holds no event"));
            }
            if items.len() > BATCH_MAX {
                return Err(invalid(format!(
                    "at most {BATCH_MAX} events per request, got {}",
                    items.len()
                )));
            }
            Ok((
                items.iter().map(|item| item.get().to_owned()).collect(),
                false,
            ))
        }
        _ => Err(invalid(
            "the body must be an event object or an array of them",
        )),
    }
}

/// An event that passed every check that needs no store, with what its kind will write.
#[derive(Debug)]
pub(crate) struct Checked {
    event: Event,
    effect: Effect,
}

#[derive(Debug)]
enum Effect {
    Profile(Profile),
    Listing(Listing),
    Revoke,
    Offer(task::Offer),
    Step(task::Step),
    Successor(keys::KeyEvent),
    Claim(keys::KeyEvent),
    Certify(keys::KeyEvent),
}

/// Every check of one event that needs no store: shape, id, signature, time window, content.
///
/// # Errors
/// `invalid:` naming what is wrong.
pub(crate) fn check(text: &str, now_s: i64) -> Result<Checked, Refusal> {
    let event = Event::parse(text).map_err(|error| invalid(error.to_string()))?;
    event.verify().map_err(|error| invalid(error.to_string()))?;
    if event.tags.len() > TAGS_MAX {
        return Err(invalid(format!("an event carries at most {TAGS_MAX} tags")));
    }
    let created_at = i64::try_from(event.created_at).unwrap_or(i64::MAX);
    if created_at > now_s.saturating_add(AHEAD_MAX_S) {
        return Err(invalid(
            "created_at is more than 600 s ahead of server time",
        ));
    }
    if created_at < now_s.saturating_sub(BEHIND_MAX_S) {
        return Err(invalid("created_at is more than 24 h behind server time"));
    }
    let effect = match event.kind {
        PROFILE => content::profile(&event)?,
        LISTING => content::listing(&event)?,
        REVOKE => {
            if event.content.chars().count() > 500 {
                return Err(invalid("a REVOKE reason is at most 500 characters"));
            }
            Effect::Revoke
        }
        task::OFFER => Effect::Offer(task::offer(&event)?),
        task::ACCEPT..=task::RECEIVED => Effect::Step(task::step(&event)?),
        keys::SUCCESSOR => Effect::Successor(keys::successor(&event)?),
        keys::CLAIM => Effect::Claim(keys::claim(&event)?),
        keys::CERTIFY => Effect::Certify(keys::certify(&event)?),
        other => return Err(invalid(format!("kind {other} is not a Ronin kind"))),
    };
    Ok(Checked { event, effect })
}

impl Checked {
    /// The signer's public key.
    pub(crate) fn pubkey(&self) -> &str {
        &self.event.pubkey
    }
}

/// What an accepted batch answers.
#[derive(Debug)]
pub(crate) struct Accepted {
    pub ids: Vec<String>,
    pub kinds: Vec<u16>,
    /// The task the batch's last task event touched, and the view of it its signer gets.
    pub task: Option<serde_json::Value>,
    /// The templates for that signer on that task.
    pub next: Vec<serde_json::Value>,
    /// The agent and buyer keys of every task the batch touched (whose `me/wait` to wake).
    pub touched: Vec<String>,
    /// How many callbacks the batch queued ([`crate::callbacks`]).
    pub callbacks: usize,
}

/// Stores a checked batch in one writer transaction (see the module doc); the answer's task
/// view (compact, or `full`) is read in the same transaction.
///
/// # Errors
/// The first event's refusal (with its index), or `error:` when the store fails.
pub(crate) async fn store(
    ronin: &Ronin,
    batch: Vec<Checked>,
    full: bool,
) -> Result<Accepted, Refusal> {
    let now_ms = ronin.clock.now_ms();
    let operator = ronin.operator_pubkey.clone();
    // The mails name Ronin's base URL; the views its files under its mount.
    let base_url = ronin.base_url();
    let mount = ronin.mount.clone();
    let outcome = ronin
        .store
        .write(move |txn| {
            let mut accepted = Accepted {
                ids: Vec::new(),
                kinds: Vec::new(),
                task: None,
                next: Vec::new(),
                touched: Vec::new(),
                callbacks: 0,
            };
            // The cursor just before this batch: the callbacks carry what `me` would answer
            // for it.
            let since = store::latest_seq(txn.conn()).map_err(Refusal::server)?;
            let mut last_task = None;
            for (index, checked) in batch.into_iter().enumerate() {
                if let Some(task) =
                    apply(txn, &checked, &operator, now_ms).map_err(|refusal| refusal.at(index))?
                {
                    crate::notify::queue_mail(txn.conn(), &checked.event, &task, &base_url, now_ms)
                        .map_err(Refusal::server)?;
                    accepted.touched.extend([task.agent, task.buyer]);
                    last_task = Some((task.id, checked.event.pubkey.clone()));
                }
                accepted.ids.push(checked.event.id.clone());
                accepted.kinds.push(checked.event.kind);
            }
            accepted.callbacks =
                crate::callbacks::queue(txn.conn(), since, &accepted.touched, now_ms)
                    .map_err(Refusal::server)?;
            if let Some((task_id, signer)) = last_task {
                let (view, next) =
                    crate::tasks::view(txn.conn(), &task_id, Some(&signer), full, &mount)
                        .map_err(Refusal::server)?
                        .ok_or_else(|| Refusal::server("a task just written is missing"))?;
                accepted.task = Some(view);
                accepted.next = next;
            }
            Ok::<_, Refusal>(accepted)
        })
        .await;
    match outcome {
        Ok(result) => result,
        Err(error) => Err(Refusal::server(error)),
    }
}

/// `ronin.event`: Ronin accepted a signed Nostr event. The log row names it; the event itself
/// (its content and signature) is kept in `ronin_events`, not in the log.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoninEventAccepted {
    /// The Nostr event id (NIP-01, lowercase hex).
    pub id: String,
    /// The Nostr event kind.
    pub kind: u16,
    /// The author's x-only public key (hex).
    pub pubkey: String,
}

impl EventPayload for RoninEventAccepted {
    const KIND: &'static str = "ronin.event";
}

/// A retired or revoked key cannot write (section 3): events, uploads.
///
/// # Errors
/// `restricted:` naming the key's state, or `error:` when the store fails.
pub(crate) fn may_write(conn: &kd_core::db::Connection, pubkey: &str) -> Result<(), Refusal> {
    match store::key_status(conn, pubkey)
        .map_err(Refusal::server)?
        .as_deref()
    {
        Some("revoked") => Err(Refusal::restricted("this key is revoked")),
        Some("retired") => Err(Refusal::restricted(
            "this key is retired: its successor writes now",
        )),
        _ => Ok(()),
    }
}

/// What an event will write to the task tables, decided before anything is written.
enum TaskWrite {
    New(Task),
    Update(Task),
}

/// The checks that need the store; nothing is written yet.
fn admit(
    conn: &kd_core::db::Connection,
    checked: &Checked,
    operator: &str,
    now_ms: i64,
) -> Result<Option<TaskWrite>, Refusal> {
    let event = &checked.event;
    if store::event_known(conn, &event.id).map_err(Refusal::server)? {
        return Err(Refusal::duplicate("already have this event"));
    }
    may_write(conn, &event.pubkey)?;
    match &checked.effect {
        Effect::Listing(listing) => {
            if !store::lineage_has_profile(conn, &event.pubkey).map_err(Refusal::server)? {
                return Err(invalid("publish a PROFILE (kind 0) before a LISTING"));
            }
            crate::attachments::admit(conn, &crate::attachments::from_content(&listing.content))?;
            Ok(None)
        }
        Effect::Offer(offer) => Ok(Some(TaskWrite::New(rules::offer(
            conn, event, offer, now_ms,
        )?))),
        Effect::Step(step) => Ok(Some(TaskWrite::Update(rules::step(
            conn, event, step, now_ms,
        )?))),
        Effect::Successor(successor) => {
            keys::admit_successor(conn, event, successor)?;
            Ok(None)
        }
        Effect::Claim(claim) => {
            keys::admit_claim(conn, event, claim)?;
            Ok(None)
        }
        Effect::Certify(_) => {
            keys::admit_certify(operator, event)?;
            Ok(None)
        }
        Effect::Profile(_) | Effect::Revoke => Ok(None),
    }
}

/// Admits one event, then writes it: the log row, the stored event, the signer's key and the
/// projection of its kind. Returns the task it touched, as written.
fn apply(
    txn: &mut WriteTxn<'_>,
    checked: &Checked,
    operator: &str,
    now_ms: i64,
) -> Result<Option<Task>, Refusal> {
    let event = &checked.event;
    let task = admit(txn.conn(), checked, operator, now_ms)?;
    let row = txn
        .record(
            format!("ronin:{}", event.pubkey),
            event.id.clone(),
            &RoninEventAccepted {
                id: event.id.clone(),
                kind: event.kind,
                pubkey: event.pubkey.clone(),
            },
        )
        .map_err(Refusal::server)?;
    let conn = txn.conn();
    let written = (|| {
        store::insert_event(conn, event, now_ms, row.seq)?;
        store::ensure_key(conn, &event.pubkey, now_ms)?;
        match &checked.effect {
            Effect::Profile(profile) => store::upsert_profile(conn, event, profile)?,
            Effect::Listing(listing) => store::upsert_listing(conn, event, listing)?,
            Effect::Revoke => store::set_key_status(conn, &event.pubkey, "revoked", &event.id)?,
            Effect::Successor(successor) => {
                store::insert_successor(conn, &event.pubkey, &successor.key, &event.id)?;
                store::retire_key(conn, &event.pubkey)?;
                store::ensure_key(conn, &successor.key, now_ms)?;
            }
            Effect::Claim(claim) => store::insert_claim(conn, event, &claim.key)?,
            Effect::Certify(certify) => {
                store::upsert_certification(conn, event, &certify.key, certify.human)?;
            }
            Effect::Offer(_) | Effect::Step(_) => {}
        }
        match &task {
            Some(TaskWrite::New(task)) => store::insert_task(conn, task)?,
            Some(TaskWrite::Update(task)) => store::update_task(conn, task)?,
            None => return Ok(None),
        }
        let Some(TaskWrite::New(task) | TaskWrite::Update(task)) = task else {
            return Ok(None);
        };
        store::link_event(conn, &event.id, &task.id, event.kind)?;
        Ok::<_, kd_core::db::DbError>(Some(task))
    })();
    written.map_err(Refusal::server)
}
