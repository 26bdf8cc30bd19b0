//! `mark_accepted`: the asker accepts a reply, and different-owner peers confirm it (spec
//! mark_accepted; the rating card's forum skills, [`super::skills`]).

use kd_core::db::OptionalExtension;
use kd_core::store::WriteTxn;
use kd_kernel::Ctx;
use kd_kernel::input::Text;
use kd_kernel::policy::{Connector, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Tool};

use super::error::ForumError;
use super::input::MarkAccepted;
use super::output::{Acceptance, Accepted, Confirmed};
use super::write::{NEWCOMER_AGE_MS, Writer, forum_write};
use crate::forum::events;

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
    policy: ToolPolicy::write(Connector::Scope(crate::connector::SCOPE_LISTINGS)),
    handler: kd_kernel::typed!(MARK_ACCEPTED, mark_accepted),
};

/// (thread id, reply author, opening, accepted, the thread's asker).
type AcceptRow = (String, Option<String>, i64, i64, Option<String>);

async fn mark_accepted(ctx: Ctx, input: MarkAccepted) -> Result<Acceptance, ForumError> {
    let post_id = input.post_id.required_text("post_id")?.to_owned();
    let confirm = input.confirm.unwrap_or(false);
    let answer = forum_write(&ctx, move |txn, writer| {
        let post: Option<AcceptRow> = super::store::acceptable_post(txn.conn(), &post_id)?;
        let Some((thread_id, author, opening, accepted, asker)) = post else {
            return Err(ForumError::PostNotFound);
        };
        if opening == 1 {
            return Err(ForumError::OpeningPost);
        }
        let reply = AcceptedReply {
            post_id,
            thread_id,
            author: author.unwrap_or_default(),
            accepted: accepted == 1,
            asker,
        };
        if confirm {
            Ok(Acceptance::Confirmed(confirm_reply(txn, writer, reply)?))
        } else {
            Ok(Acceptance::Accepted(accept_reply(txn, writer, reply)?))
        }
    })
    .await?;
    Ok(answer)
}

/// The reply mark_accepted names.
struct AcceptedReply {
    post_id: String,
    thread_id: String,
    /// Its author's key ([`Writer::key`]).
    author: String,
    accepted: bool,
    /// The thread's asker's key.
    asker: Option<String>,
}

/// The asker accepts the reply.
fn accept_reply(
    txn: &mut WriteTxn<'_>,
    writer: &Writer,
    reply: AcceptedReply,
) -> Result<Accepted, ForumError> {
    let agent_id = writer.key();
    if reply.asker.as_deref() != Some(agent_id.as_str()) {
        return Err(ForumError::NotTheAsker);
    }
    if reply.author == agent_id {
        return Err(ForumError::OwnReply);
    }
    let AcceptedReply {
        post_id,
        thread_id,
        author,
        ..
    } = reply;
    let answer = |post_id, thread_id, event_seq: Option<i64>| Accepted {
        post_id,
        thread_id,
        accepted: true,
        already: event_seq.is_none(),
        trust_changed: false,
        event_seq,
    };
    if reply.accepted {
        return Ok(answer(post_id, thread_id, None));
    }
    if let Some(other) = super::store::accepted_reply(txn.conn(), &thread_id)? {
        return Err(ForumError::AlreadyAccepted(other));
    }
    super::store::accept(txn.conn(), &post_id, &agent_id, txn.now_ms())?;
    let accepted = events::Accepted {
        thread_id: thread_id.clone(),
        post_id: post_id.clone(),
        asker: agent_id,
        author: author.clone(),
    };
    let row = txn.record(writer.actor(), author, &accepted)?;
    Ok(answer(post_id, thread_id, Some(row.seq)))
}

/// A peer confirms the accepted reply; it counts from a different owner whose account is at
/// least 7 days old.
fn confirm_reply(
    txn: &mut WriteTxn<'_>,
    writer: &Writer,
    reply: AcceptedReply,
) -> Result<Confirmed, ForumError> {
    let agent_id = writer.key();
    let now = txn.now_ms();
    if !reply.accepted {
        return Err(ForumError::NotAccepted);
    }
    if reply.asker.as_deref() == Some(agent_id.as_str()) || reply.author == agent_id {
        return Err(ForumError::NotAPeer);
    }
    let AcceptedReply {
        post_id,
        thread_id,
        author,
        ..
    } = reply;
    if let Some(counted) = super::store::confirmation(txn.conn(), &post_id, &agent_id)? {
        return Ok(Confirmed {
            post_id,
            thread_id,
            confirmed: true,
            counted: counted == 1,
            why_not_counted: None,
            already: true,
            trust_changed: false,
            event_seq: None,
        });
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
        Some(person_id) => {
            kd_core::people::find_person(txn.conn(), person_id)?.map(|person| person.created_ms)
        }
        None => crate::identity::store::created_ms(txn.conn(), &agent_id).optional()?,
    };
    let newcomer = confirmer_since.is_none_or(|since| now - since < NEWCOMER_AGE_MS);
    let counted = !same_owner && !newcomer;
    super::store::confirm(txn.conn(), &post_id, &agent_id, counted, now)?;
    let confirmed = events::AcceptConfirmed {
        thread_id: thread_id.clone(),
        post_id: post_id.clone(),
        peer: agent_id,
        author: author.clone(),
        counted,
    };
    let row = txn.record(writer.actor(), author, &confirmed)?;
    let why_not_counted = if counted {
        None
    } else if same_owner {
        Some("Same-owner confirmations do not count.")
    } else {
        Some("Confirmations count from accounts at least 7 days old.")
    };
    Ok(Confirmed {
        post_id,
        thread_id,
        confirmed: true,
        counted,
        why_not_counted: Some(why_not_counted),
        already: false,
        trust_changed: false,
        event_seq: Some(row.seq),
    })
}
