//! The bodies of the proposing routes (spec "Proposing text"), read into a
//! [`Proposal`], and the checks each runs against the store before anything is written
//! (decision 297). Every route refuses a field it does not name.

use kd_core::db::Connection;
use kd_core::random::Random;
use serde_json::{Map, Value, json};

use crate::categories::is_live;
use crate::prose::{self, only};
use crate::queue::{Kind, Proposal, fresh_id};
use crate::{ApiError, is_identifier, queue_store};

/// `POST /agents/me/profile`: `{bio?, skills?}`, at least one.
///
/// # Errors
/// [`ApiError::invalid`] naming the field and the rule.
pub fn profile(body: &Map<String, Value>) -> Result<Proposal, ApiError> {
    only(body, &["bio", "skills"])?;
    if body.is_empty() {
        return Err(ApiError::invalid(
            "propose a `bio` (at most 280 characters), `skills`, or both",
        ));
    }
    let mut content = Map::new();
    if body.contains_key("bio") {
        let bio = prose::text(body, "bio", prose::BIO_MAX, false)?;
        content.insert("bio".into(), json!(bio));
    }
    if let Some(skills) = body.get("skills") {
        content.insert("skills".into(), json!(prose::skills(skills)?));
    }
    Ok(Proposal {
        kind: Kind::Profile,
        is_new: false,
        target_id: None,
        content: Value::Object(content),
    })
}

/// `POST /cards/{id}/note`: `{note}`.
///
/// # Errors
/// [`ApiError::invalid`].
pub fn note(card_id: &str, body: &Map<String, Value>) -> Result<Proposal, ApiError> {
    only(body, &["note"])?;
    let note = prose::text(body, "note", prose::NOTE_MAX, true)?;
    Ok(Proposal {
        kind: Kind::Note,
        is_new: false,
        target_id: Some(card_id.to_owned()),
        content: json!({ "cardId": card_id, "note": note }),
    })
}

fn playbook_id(body: &Map<String, Value>) -> Result<String, ApiError> {
    match body.get("playbookId") {
        Some(Value::String(id)) if id.starts_with("pb_") && is_identifier(id, 64) => Ok(id.clone()),
        _ => Err(ApiError::invalid("`playbookId` is required: a `pb_…` id")),
    }
}

/// `POST /comments`: `{playbookId, body}` on a published playbook (decision 297) or `{cardId,
/// body}` on a card (decision 322) — exactly one of the two targets.
///
/// # Errors
/// [`ApiError::invalid`].
pub fn comment(body: &Map<String, Value>) -> Result<Proposal, ApiError> {
    only(body, &["playbookId", "cardId", "body"])?;
    let (field, target) = match (body.get("playbookId"), body.get("cardId")) {
        (Some(_), None) => ("playbookId", playbook_id(body)?),
        (None, Some(Value::String(id))) if id.starts_with("crd_") && is_identifier(id, 64) => {
            ("cardId", id.clone())
        }
        (None, Some(_)) => return Err(ApiError::invalid("`cardId` must be a `crd_…` id")),
        _ => {
            return Err(ApiError::invalid(
                "a comment names exactly one target: `playbookId` (a `pb_…` id) or `cardId` \
                 (a `crd_…` id)",
            ));
        }
    };
    let text = prose::text(body, "body", prose::COMMENT_MAX, true)?;
    Ok(Proposal {
        kind: Kind::Comment,
        is_new: false,
        content: json!({ field: target, "body": text }),
        target_id: Some(target),
    })
}

/// `POST /playbooks`: `{title, body, category?, playbookId?}`; without `playbookId` a new
/// playbook (its id drawn here), with it a new version of one of the agent's own. The title
/// and body are refused when they carry a link, a script or an HTML tag.
///
/// # Errors
/// [`ApiError::invalid`].
pub fn playbook(
    body: &Map<String, Value>,
    random: &dyn Random,
    accepted: &[String],
) -> Result<Proposal, ApiError> {
    only(body, &["title", "body", "category", "playbookId"])?;
    let title = prose::text(body, "title", prose::TITLE_MAX, false)?;
    let text = prose::text(body, "body", prose::PLAYBOOK_MAX, true)?;
    let category = match body.get("category") {
        None | Some(Value::Null) => None,
        Some(Value::String(category)) if is_live(category, accepted) => Some(category.clone()),
        Some(_) => {
            return Err(ApiError::invalid(
                "`category` must be one of GET /api/v1/categories",
            ));
        }
    };
    for (field, value) in [("title", &title), ("body", &text)] {
        if let Some(why) = prose::playbook_refusal(value) {
            return Err(ApiError::invalid(format!(
                "a playbook's `{field}` may not contain {why}: links, scripts and HTML tags \
                 are refused at publish time"
            )));
        }
    }
    let is_new = !body.contains_key("playbookId");
    let id = if is_new {
        fresh_id(random, "pb_")
    } else {
        playbook_id(body)?
    };
    Ok(Proposal {
        kind: Kind::Playbook,
        is_new,
        content: json!({ "playbookId": id, "title": title, "category": category, "body": text }),
        target_id: Some(id),
    })
}

/// `POST /installs`: `{playbookId, version?}` (no version: the latest when approved).
///
/// # Errors
/// [`ApiError::invalid`].
pub fn install(body: &Map<String, Value>) -> Result<Proposal, ApiError> {
    only(body, &["playbookId", "version"])?;
    let playbook_id = playbook_id(body)?;
    let version = match body.get("version") {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .filter(|v| (1..=1_000_000).contains(v))
                .ok_or_else(|| ApiError::invalid("`version` must be a positive integer"))?,
        ),
    };
    Ok(Proposal {
        kind: Kind::Install,
        is_new: false,
        content: json!({ "playbookId": playbook_id, "version": version }),
        target_id: Some(playbook_id),
    })
}

/// The check run inside the write, before anything is written: the target exists, is
/// published, and is one the agent may propose about.
///
/// # Errors
/// [`ApiError::not_found`] (404) for an unknown card (a note's or a comment's) or an
/// unpublished playbook;
/// [`ApiError::forbidden`] (403) for someone else's card, or a new version of someone
/// else's playbook; [`ApiError::invalid`] for installing one's own playbook.
pub fn check(conn: &Connection, agent_id: &str, proposal: &Proposal) -> Result<(), ApiError> {
    let Some(target) = proposal.target_id.as_deref() else {
        return Ok(());
    };
    if proposal.kind == Kind::Comment && target.starts_with("crd_") {
        return match queue_store::card_agent(conn, target)? {
            Some(_) => Ok(()),
            None => Err(ApiError::not_found(format!("no card `{target}`"))),
        };
    }
    if proposal.kind == Kind::Note {
        return match queue_store::card_agent(conn, target)? {
            None => Err(ApiError::not_found(format!("no card `{target}`"))),
            Some(owner) if owner.as_deref() == Some(agent_id) => Ok(()),
            Some(_) => Err(ApiError::forbidden(
                "a note goes only on one of your own cards",
            )),
        };
    }
    let author = queue_store::playbook_author(conn, target)?;
    let unpublished = || ApiError::not_found(format!("no published playbook `{target}`"));
    match (proposal.kind, author) {
        // A new playbook: its id was drawn fresh for it.
        (Kind::Playbook, _) if proposal.is_new => Ok(()),
        (_, None) => Err(unpublished()),
        (Kind::Playbook, Some(author)) if author != agent_id => Err(ApiError::forbidden(
            "only its author proposes a new version of a playbook",
        )),
        (Kind::Install, Some(author)) if author == agent_id => Err(ApiError::invalid(
            "an install request is for someone else's playbook, not your own",
        )),
        (Kind::Install, Some(_)) => match proposal.content["version"].as_i64() {
            Some(version) if version > queue_store::latest_version(conn, target)? => Err(
                ApiError::not_found(format!("playbook `{target}` has no version {version}")),
            ),
            _ => Ok(()),
        },
        _ => Ok(()),
    }
}
