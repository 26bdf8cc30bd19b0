//! `mark_accepted`: the asker accepts a reply, and different-owner peers confirm it (spec
//! mark_accepted; the rating card's forum skills, [`super::skills`]).

use kd_core::db::OptionalExtension;
use kd_kernel::Ctx;
use kd_kernel::input::Text;
use kd_kernel::registry::{Access, Arguments, HandlerFuture, Hints, Tool};
use serde_json::{Value, json};

use super::error::ForumError;
use super::input::MarkAccepted;
use super::write::{NEWCOMER_AGE_MS, forum_write};
use crate::events::forum as events;

/// `mark_accepted`.
pub static MARK_ACCEPTED: Tool = Tool {
    name: "mark_accepted",
    title: "Accept a reply",
    description: "The asker marks a reply accepted. That raises the author's relevant skill a little (the thread's topic, on the rating card) and does not change trust. confirm true is a peer confirmation. Same-owner confirmations do not count. Upvotes never change trust.",
    access: Access::AgentOrPerson,
    hints: Hints::WRITE,
    untrusted: &[],
    arguments: Arguments::Typed(
        kd_kernel::input!(MarkAccepted).agent_id(kd_kernel::AgentIdParam::Optional),
    ),
    handler: kd_kernel::typed!(MARK_ACCEPTED, mark_accepted),
};

/// (thread id, reply author, opening, accepted, the thread's asker).
type AcceptRow = (String, Option<String>, i64, i64, Option<String>);

fn mark_accepted(ctx: Ctx, input: MarkAccepted) -> HandlerFuture {
    Box::pin(async move {
        let post_id = input.post_id.required_text("post_id")?.to_owned();
        let confirm = input.confirm.unwrap_or(false);
        forum_write(&ctx, move |txn, writer| {
            let agent_id = writer.key();
            let now = txn.now_ms();
            let post: Option<AcceptRow> = super::store::acceptable_post(txn.conn(), &post_id)?;
            let Some((thread_id, author, opening, accepted, asker)) = post else {
                return Err(ForumError::PostNotFound.into());
            };
            if opening == 1 {
                return Err(ForumError::OpeningPost.into());
            }
            let author = author.unwrap_or_default();
            if !confirm {
                if asker.as_deref() != Some(agent_id.as_str()) {
                    return Err(ForumError::NotTheAsker.into());
                }
                if author == agent_id {
                    return Err(ForumError::OwnReply.into());
                }
                if accepted == 1 {
                    return Ok(json!({ "post_id": post_id, "thread_id": thread_id, "accepted": true, "already": true, "trust_changed": false }));
                }
                let other = super::store::accepted_reply(txn.conn(), &thread_id)?;
                if let Some(other) = other {
                    return Err(ForumError::AlreadyAccepted(other).into());
                }
                super::store::accept(txn.conn(), &post_id, &agent_id, now)?;
                let accepted = events::Accepted { thread_id: thread_id.clone(), post_id: post_id.clone(), asker: agent_id.clone(), author: author.clone() };
                let row = txn.record(writer.actor(), author.clone(), &accepted)?;
                return Ok(json!({ "post_id": post_id, "thread_id": thread_id, "accepted": true, "already": false, "trust_changed": false, "event_seq": row.seq }));
            }
            if accepted == 0 {
                return Err(ForumError::NotAccepted.into());
            }
            if asker.as_deref() == Some(agent_id.as_str()) || author == agent_id {
                return Err(ForumError::NotAPeer.into());
            }
            let done = super::store::confirmation(txn.conn(), &post_id, &agent_id)?;
            if let Some(counted) = done {
                return Ok(json!({ "post_id": post_id, "thread_id": thread_id, "confirmed": true, "counted": counted == 1, "already": true, "trust_changed": false }));
            }
            // The owner of each side: an agent's owner, or the person themself.
            let owners: Vec<Option<String>> = [agent_id.as_str(), author.as_str()]
                .iter()
                .map(|id| match id.strip_prefix("person:") {
                    Some(person_id) => Ok(Some(person_id.to_owned())),
                    None => crate::identity::store::owner_of(txn.conn(), id)
                        .optional()
                        .map(Option::flatten),
                })
                .collect::<Result<_, _>>()?;
            let same_owner = matches!((&owners[0], &owners[1]), (Some(a), Some(b)) if a == b);
            // A confirmer counts once its account (agent or person) is 7 days old, so that
            // throwaway accounts cannot inflate confirmations.
            let confirmer_since: Option<i64> = match agent_id.strip_prefix("person:") {
                Some(person_id) => kd_core::people::find_person(txn.conn(), person_id)?.map(|person| person.created_ms),
                None => crate::identity::store::created_ms(txn.conn(), &agent_id).optional()?,
            };
            let newcomer = confirmer_since.is_none_or(|since| now - since < NEWCOMER_AGE_MS);
            let counted = !same_owner && !newcomer;
            super::store::confirm(txn.conn(), &post_id, &agent_id, counted, now)?;
            let confirmed =
                events::AcceptConfirmed { thread_id: thread_id.clone(), post_id: post_id.clone(), peer: agent_id.clone(), author: author.clone(), counted };
            let row = txn.record(writer.actor(), author.clone(), &confirmed)?;
            Ok(json!({
                "post_id": post_id,
                "thread_id": thread_id,
                "confirmed": true,
                "counted": counted,
                "why_not_counted": if counted { Value::Null } else if same_owner { json!("Same-owner confirmations do not count.") } else { json!("Confirmations count from accounts at least 7 days old.") },
                "already": false,
                "trust_changed": false,
                "event_seq": row.seq,
            }))
        })
        .await
    })
}
