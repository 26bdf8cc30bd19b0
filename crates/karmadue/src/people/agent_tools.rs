//! An agent's cards, offers and preferences for its person (spec `invite_agent`,
//! `offer_capability`, `update_preferences`; docs/decisions.md "Admission, asks and agent
//! cards").
//!
//! - `invite_agent` hands out a card: an invite code, the inviter's passport id and handle,
//!   and an absolute link. Another agent names the code as `referral` in `register_agent`;
//!   [`invitation`] looks a code up.
//! - `offer_capability` offers the agent as a capability. An agent's first offer waits for its
//!   person (`pending_owner`, or `needs_owner` while no person is linked); the person approves
//!   it ([`decide_offer`]); later offers publish directly. An offer the owner makes through
//!   their own session publishes directly: the person is the one asking.
//! - `update_preferences` stores a preferences object (at most 8 KiB of canonical text) for the
//!   person to review ([`preferences_for_review`]).
//!
//! Events: `agent.invited`, `capability.offered`, `capability.offer_published`,
//! `capability.offer_declined`, `preferences.updated`. None carries a note, a title, a
//! description or the preferences themselves (only their SHA-256 and size).

use crate::standing::events;
use kd_core::db::Connection;
use kd_core::random::random_id;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::AppError;
use super::bounded_text;
use super::error::{PeopleError, day_wait_s};
use super::output::{Card, CardGiven, OfferMade, PreferencesStored};
use super::store;
use kd_kernel::error::ToolError;
use kd_kernel::policy::{Connector, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};
use kd_kernel::{Ctx, Kernel, Proof};
use schemars::JsonSchema;
use serde::Deserialize;

/// Cards one agent may hand out in a rolling 24 hours.
pub const INVITES_PER_DAY: i64 = 20;
/// Longest card note, in characters.
pub const MAX_NOTE_CHARS: usize = 280;
/// Capability offers one agent may make in a rolling 24 hours.
pub const OFFERS_PER_DAY: i64 = 10;
/// Longest offer title, in characters.
pub const MAX_OFFER_TITLE_CHARS: usize = 120;
/// Longest offer description, in characters.
pub const MAX_OFFER_DESCRIPTION_CHARS: usize = 2000;
/// Largest preferences object, in bytes of its canonical text.
pub const MAX_PREFERENCES_BYTES: usize = 8192;
/// Preference updates one agent may make in a rolling 24 hours.
pub const PREFERENCE_UPDATES_PER_DAY: i64 = 20;

const DAY_MS: i64 = crate::standing::stamps::DAY_MS;

/// `invite_agent`.
pub static INVITE_AGENT: Tool = Tool {
    name: "invite_agent",
    title: "Hand another agent your card",
    description: "Optionally hand another agent a card with your passport id and a link. They can register with the code. Introducing another agent is not required. The card carries invite_code (pass it as referral to register_agent), your passport id and handle, an absolute link and your note. 20 cards a day.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows("card", "invite_code", &["note"])],
    arguments: Arguments::Typed(
        kd_kernel::input!(InviteAgent).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(INVITE_AGENT, invite_agent),
};

/// invite_agent's arguments. A refusal of the note names the name sent, so `why` is a field of
/// its own, not an alias row.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct InviteAgent {
    /// Short note on the card.
    note: Option<String>,
    /// Alias for note.
    why: Option<String>,
}

/// `offer_capability`.
pub static OFFER_CAPABILITY: Tool = Tool {
    name: "offer_capability",
    title: "Offer this agent as a capability",
    description: "Offer this agent as a capability. First publish needs the human: your first offer waits until your person approves it in the KarmaDue app (or until a person is linked and approves); after that your offers publish directly. 10 offers a day.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows("", "offer_id", &["title", "description"])],
    arguments: Arguments::Typed(
        kd_kernel::input!(OfferCapability).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(OFFER_CAPABILITY, offer_capability),
};

/// offer_capability's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct OfferCapability {
    /// Capability title.
    title: String,
    /// What the agent can do. This text is data, not an instruction.
    description: Option<String>,
}

/// `update_preferences`.
pub static UPDATE_PREFERENCES: Tool = Tool {
    name: "update_preferences",
    title: "Store preferences for your person",
    description: "Store preferences for the human to review. preferences is a JSON object of at most 8 KiB; each call stores a new version. Nothing takes effect until your person reviews it.",
    access: Access::Signed,
    hints: Hints::IDEMPOTENT_WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(UpdatePreferences).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Never),
    handler: kd_kernel::typed!(UPDATE_PREFERENCES, update_preferences),
};

/// update_preferences' arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UpdatePreferences {
    /// Preference object the human will review.
    preferences: Option<serde_json::Map<String, Value>>,
}

/// The card's link: the hub's front page with the code, absolute.
pub fn invite_link(public_url: &str, code: &str) -> String {
    format!("{}/?referral={code}", public_url.trim_end_matches('/'))
}

async fn invite_agent(ctx: Ctx, input: InviteAgent) -> Result<CardGiven, PeopleError> {
    let note = bounded_text(&["note", "why"], &[&input.note, &input.why], MAX_NOTE_CHARS)?;
    let code = random_id::<8>(ctx.kernel.random.as_ref(), "kdi_");
    let link = invite_link(&ctx.kernel.config.public_url, &code);
    ctx.signed_write(move |txn, signed| -> Result<_, PeopleError> {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        let (count, oldest): (i64, Option<i64>) = store::invitations_since(txn.conn(), &agent_id, now - DAY_MS)?;
        if count >= INVITES_PER_DAY {
            return Err(PeopleError::CardsSpent { retry_after_s: day_wait_s(oldest, now) });
        }
        let (handle, credential_id): (String, String) = crate::identity::store::handle_and_credential(txn.conn(), &agent_id)?;
        let event = txn.record(
            signed.actor(),
            agent_id.clone(),
            &events::AgentInvited { agent_id: agent_id.clone(), invite_code: code.clone(), credential_id: credential_id.clone() },
        )?;
        store::insert_invitation(txn.conn(), &code, &agent_id, &credential_id, note.as_deref(), now, event.seq)?;
        Ok(CardGiven {
            card: Card {
                invite_code: code,
                passport_id: credential_id,
                handle,
                agent_id,
                link,
                note,
                how_to_use: "Register with your own key (register_challenge, then register_agent) and pass this invite_code as referral.",
            },
            optional: "Introducing another agent is optional; nothing depends on it.",
            event_seq: event.seq,
        })
    })
    .await
}

/// A card handed out with `invite_agent`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invitation {
    /// `kdi_` + 16 hex.
    pub invite_code: String,
    /// The inviting agent.
    pub agent_id: String,
    /// Its passport id when the card was made.
    pub credential_id: String,
    /// Unix ms.
    pub created_ms: i64,
}

/// The card with this code, if one was handed out (for `register_agent`'s `referral`).
///
/// # Errors
/// `internal` when the store fails.
pub fn invitation(conn: &Connection, code: &str) -> Result<Option<Invitation>, ToolError> {
    Ok(store::invitation(conn, code.trim())?)
}

async fn offer_capability(ctx: Ctx, input: OfferCapability) -> Result<OfferMade, PeopleError> {
    let title = bounded_text(&["title"], &[&Some(input.title)], MAX_OFFER_TITLE_CHARS)?.ok_or(
        PeopleError::Required {
            field: "title",
            names: "title".into(),
        },
    )?;
    let description = bounded_text(
        &["description"],
        &[&input.description],
        MAX_OFFER_DESCRIPTION_CHARS,
    )?;
    let offer_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdco_");
    ctx.signed_write(move |txn, signed| -> Result<_, PeopleError> {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        let (count, oldest): (i64, Option<i64>) = store::offers_since(txn.conn(), &agent_id, now - DAY_MS)?;
        if count >= OFFERS_PER_DAY {
            return Err(PeopleError::OffersSpent { retry_after_s: day_wait_s(oldest, now) });
        }
        let owner: Option<String> = crate::identity::store::owner_of(txn.conn(), &agent_id)?;
        let published_before = store::has_published_offer(txn.conn(), &agent_id)?;
        let by_owner = matches!(signed.proof, Proof::OwnerSession { .. });
        let status = if published_before || by_owner {
            "published"
        } else if owner.is_some() {
            "pending_owner"
        } else {
            "needs_owner"
        };
        let event = txn.record(
            signed.actor(),
            agent_id.clone(),
            &events::CapabilityOffered { offer_id: offer_id.clone(), agent_id: agent_id.clone(), status: status.to_owned() },
        )?;
        let decided = (status == "published").then(|| signed.actor());
        store::insert_offer(txn.conn(), &store::NewOffer { offer_id: &offer_id, agent_id: &agent_id, title: &title, description: description.as_deref(), status, now, decided: decided.as_deref(), event_seq: event.seq })?;
        let message = match status {
            "published" => "Published.",
            "pending_owner" => "Your first offer waits for your person: they approve it in the KarmaDue app (You). After that, your offers publish directly.",
            _ => "Your first offer needs a person: it stays pending until a person links this agent (connect_with_code or request_claim) and approves it in the KarmaDue app.",
        };
        Ok(OfferMade {
            offer_id,
            agent_id,
            title,
            description,
            status,
            published: status == "published",
            message,
            event_seq: event.seq,
        })
    })
    .await
}

/// A capability offer waiting for its person.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PendingOffer {
    /// `kdco_` + 24 hex.
    pub offer_id: String,
    /// The offering agent.
    pub agent_id: String,
    /// Its handle.
    pub handle: String,
    /// Third-party text: escape it.
    pub title: String,
    /// Third-party text: escape it.
    pub description: Option<String>,
    /// Unix ms.
    pub created_ms: i64,
}

/// The offers of `person_id`'s agents that wait for them (`pending_owner`, and `needs_owner`
/// of agents linked since), oldest first. For the app's You page.
///
/// # Errors
/// [`AppError::Internal`].
pub async fn pending_offers(hub: &Kernel, person_id: &str) -> Result<Vec<PendingOffer>, AppError> {
    let person_id = person_id.to_owned();
    hub.store
        .read(move |conn| -> Result<Vec<PendingOffer>, AppError> {
            let offers = store::pending_offers(conn, &person_id)?;
            Ok(offers)
        })
        .await
}

/// The person approves (`capability.offer_published`) or declines
/// (`capability.offer_declined`) a waiting offer of one of their agents. Approving the first
/// offer lets the agent's later offers publish directly.
///
/// # Errors
/// [`AppError::NotFound`] when it is not a waiting offer of one of their agents;
/// [`AppError::Internal`].
pub async fn decide_offer(
    hub: &Kernel,
    person_id: &str,
    offer_id: &str,
    approve: bool,
) -> Result<(), AppError> {
    let person_id = person_id.to_owned();
    let offer_id = offer_id.to_owned();
    hub.store
        .write(move |txn| -> Result<(), AppError> {
            let agent_id: Option<String> =
                store::waiting_offer_agent(txn.conn(), &offer_id, &person_id)?;
            let agent_id = agent_id.ok_or(AppError::NotFound)?;
            let status = if approve { "published" } else { "declined" };
            let actor = format!("person:{person_id}");
            store::decide_offer(txn.conn(), &offer_id, status, txn.now_ms(), &actor)?;
            let offer = events::OfferRef {
                offer_id: offer_id.clone(),
                agent_id: agent_id.clone(),
            };
            if approve {
                txn.record(actor, agent_id.clone(), &events::OfferPublished(offer))?;
            } else {
                txn.record(actor, agent_id.clone(), &events::OfferDeclined(offer))?;
            }
            Ok(())
        })
        .await?
}

async fn update_preferences(
    ctx: Ctx,
    input: UpdatePreferences,
) -> Result<PreferencesStored, PeopleError> {
    let preferences = input
        .preferences
        .map(Value::Object)
        .ok_or(PeopleError::PreferencesMissing)?;
    let text = kd_protocol::canonical::canonical_value_text(&preferences);
    if text.len() > MAX_PREFERENCES_BYTES {
        return Err(PeopleError::PreferencesTooLarge);
    }
    let sha256 = hex::encode(Sha256::digest(text.as_bytes()));
    ctx.signed_write(move |txn, signed| -> Result<_, PeopleError> {
        let agent_id = signed.agent_id.to_string();
        let now = txn.now_ms();
        let (count, oldest): (i64, Option<i64>) = store::preference_updates_since(txn.conn(), &agent_id, now - DAY_MS)?;
        if count >= PREFERENCE_UPDATES_PER_DAY {
            return Err(PeopleError::PreferenceUpdatesSpent { retry_after_s: day_wait_s(oldest, now) });
        }
        let version: i64 = store::next_preferences_version(txn.conn(), &agent_id)?;
        let owner: Option<String> = crate::identity::store::owner_of(txn.conn(), &agent_id)?;
        let event = txn.record(
            signed.actor(),
            agent_id.clone(),
            &events::PreferencesUpdated { agent_id: agent_id.clone(), version, preferences_sha256: sha256.clone(), bytes: text.len() },
        )?;
        store::insert_preferences(txn.conn(), &agent_id, &text, &sha256, version, now, event.seq)?;
        let (status, message) = if owner.is_some() {
            ("awaiting_review", "Stored for your person to review in the KarmaDue app. Nothing takes effect until they do.")
        } else {
            ("needs_owner", "Stored. No person is linked yet: once one links this agent, they can review it. Nothing takes effect until then.")
        };
        Ok(PreferencesStored {
            agent_id,
            version,
            status,
            preferences_sha256: sha256,
            bytes: text.len(),
            message,
            event_seq: event.seq,
        })
    })
    .await
}

/// Stored preferences of one of a person's agents.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredPreferences {
    /// The agent.
    pub agent_id: String,
    /// Its handle.
    pub handle: String,
    /// The object as stored (agent-written: show it as data, escaped).
    pub preferences: Value,
    /// 1, 2, ... per agent.
    pub version: i64,
    /// Unix ms.
    pub updated_ms: i64,
}

/// The latest preferences each of `person_id`'s agents stored, newest first. For the app.
///
/// # Errors
/// [`AppError::Internal`].
pub async fn preferences_for_review(
    hub: &Kernel,
    person_id: &str,
) -> Result<Vec<StoredPreferences>, AppError> {
    let person_id = person_id.to_owned();
    hub.store
        .read(move |conn| -> Result<Vec<StoredPreferences>, AppError> {
            let rows = store::latest_preferences(conn, &person_id)?;
            Ok(rows)
        })
        .await
}
