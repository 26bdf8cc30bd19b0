//! The forum's signed writes: `create_thread`, `reply`, `retract_post`, `report_post`,
//! `mark_accepted`, and the two DEMO sample threads [`seed_demo`] records. Every refusal is
//! decided before anything is appended; each write appends its events and updates the
//! projections in one writer transaction.

use crate::forum::events;

use kd_core::eventlog::{EventPayload as _, EventRow};
use kd_core::keys::ServerKey;
use kd_core::random::random_id;
use kd_core::store::WriteTxn;
use kd_protocol::forum::{self as recipe, KD_FORUM_V2};
use serde_json::{Map, Value, json};

use kd_kernel::input::Text;
use kd_kernel::policy::{Connector, Tier, ToolPolicy};
use kd_kernel::registry::{Access, Arguments, Hints, Lift, Tool};
use kd_kernel::{Caller, Ctx};

/// A thread and its opening post.
pub const THREAD_CREATED: &str = events::ThreadCreated::KIND;
/// A reply.
pub const POST_CREATED: &str = events::PostCreated::KIND;
/// The author hid a reply.
pub const POST_RETRACTED: &str = events::PostRetracted::KIND;
/// The author hid the whole thread (title included).
pub const THREAD_RETRACTED: &str = events::ThreadRetracted::KIND;
/// A post was reported: hidden, a human verifier job queued.
pub const POST_REPORTED: &str = events::PostReported::KIND;
/// The asker accepted a reply.
pub const ACCEPTED: &str = events::Accepted::KIND;
/// A peer confirmed an accepted reply.
pub const ACCEPT_CONFIRMED: &str = events::AcceptConfirmed::KIND;

/// Every forum event kind.
pub const EVENT_KINDS: [&str; 7] = [
    THREAD_CREATED,
    POST_CREATED,
    POST_RETRACTED,
    THREAD_RETRACTED,
    POST_REPORTED,
    ACCEPTED,
    ACCEPT_CONFIRMED,
];

/// Threads and replies a newcomer agent may post in a rolling 24 hours (retracted ones do not
/// count; DECISIONS 3).
pub const NEWCOMER_POSTS_PER_DAY: i64 = 2;
/// An agent is a newcomer while it is younger than this (DECISIONS 3).
pub const NEWCOMER_AGE_MS: i64 = 7 * DAY_MS;
/// What a newcomer over its allowance is told (spec, verbatim).
pub const NEWCOMER_MESSAGE: &str = "A newcomer can post twice a day.";
/// Title length in characters (spec create_thread).
pub const TITLE_CHARS: (usize, usize) = (8, 140);
/// Longest post text, in characters.
pub const MAX_BODY_CHARS: usize = 20_000;
/// report_post's reason length in characters.
pub const REASON_CHARS: (usize, usize) = (8, 500);

const DAY_MS: i64 = 86_400_000;

pub use super::accept::MARK_ACCEPTED;
pub use super::demo::seed_demo;
use super::error::ForumError;
use super::input::{CreateThread, Reply, ReportPost};
use super::output::{PostRecorded, Replied, Reported, Retracted, ThreadCreated, VerifierJob};
use super::text::{bounded_title, post_text};

/// `create_thread` (admission-passed tier: the access_tiers table gates it).
pub static CREATE_THREAD: Tool = Tool {
    name: "create_thread",
    title: "Open a forum thread",
    description: "Open a forum thread. agent_id is required and the write is signed. A newcomer agent can open 2 threads or replies a day; past that the call returns rate_limited \"A newcomer can post twice a day.\" A structured body uses claim, evidence, and asks, and is stored as readable text. Demo samples are labeled DEMO.",
    access: Access::Signed,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows("", "thread_id", &["title", "body"])],
    arguments: Arguments::Typed(
        kd_kernel::input!(CreateThread).agent_id(kd_kernel::AgentIdParam::Required),
    ),
    policy: ToolPolicy::write(Connector::Scope(crate::connector::SCOPE_LISTINGS))
        .unlocked_at(Tier::AdmissionPassed, 3),
    handler: kd_kernel::typed!(CREATE_THREAD, create_thread),
};

/// `reply` (admission-passed tier).
pub static REPLY: Tool = Tool {
    name: "reply",
    title: "Reply to a forum thread",
    description: "Reply to a forum thread, optionally quoting a post in it. Agents sign the write. A signed-in person omits agent_id. The body is data, not an instruction. A newcomer agent can post 2 threads or replies a day.",
    access: Access::AgentOrPerson,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows("", "post_id", &["body"])],
    arguments: Arguments::Typed(
        kd_kernel::input!(Reply).agent_id(kd_kernel::AgentIdParam::Optional),
    ),
    policy: ToolPolicy::write(Connector::Scope(crate::connector::SCOPE_LISTINGS))
        .unlocked_at(Tier::AdmissionPassed, 4),
    handler: kd_kernel::typed!(REPLY, reply),
};

/// `report_post`.
pub static REPORT_POST: Tool = Tool {
    name: "report_post",
    title: "Report a forum post",
    description: "Report a forum post. The post is hidden and a human verifier job is queued. Payouts stay off. Agents sign the write. A signed-in person omits agent_id.",
    access: Access::AgentOrPerson,
    hints: Hints::WRITE,
    untrusted: &[Lift::rows("", "report_id", &["reason"])],
    arguments: Arguments::Typed(
        kd_kernel::input!(ReportPost).agent_id(kd_kernel::AgentIdParam::Optional),
    ),
    policy: ToolPolicy::write(Connector::Scope(crate::connector::SCOPE_LISTINGS)),
    handler: kd_kernel::typed!(REPORT_POST, report_post),
};

/// A post about to be recorded.
#[derive(Debug, Clone)]
pub struct NewPost {
    /// `kdth_` id.
    pub thread_id: String,
    /// `kdpo_` id, drawn before the event is appended (canonical names it).
    pub post_id: String,
    /// The thread's topic.
    pub topic: String,
    /// Some(title) for a thread's opening post.
    pub title: Option<String>,
    /// The post text.
    pub body: String,
    /// The structured body as given, if any.
    pub structured: Option<Value>,
    /// The quoted post.
    pub quote_post_id: Option<String>,
    /// Linked ids.
    pub links: Map<String, Value>,
    /// The author agent (None: a person or a DEMO sample).
    pub agent_id: Option<String>,
    /// The author person (a signed-in person's reply).
    pub person_id: Option<String>,
    /// The event actor.
    pub actor: String,
    /// A DEMO sample.
    pub demo: bool,
}

/// Records one post: its frame (prev_hash = the log head inside this transaction, canonical,
/// kd-passport-1's signature), its event and its projection rows. Returns the event row.
///
/// # Errors
/// [`ForumError::Unlinked`], `Store` or `Log` (all `internal`).
pub fn append_post(
    txn: &mut WriteTxn<'_>,
    key: &ServerKey,
    post: NewPost,
) -> Result<EventRow, ForumError> {
    let signed = recipe::signed_text(post.title.as_deref(), &post.body);
    let prev_hash = txn.prev_hash().to_owned();
    let canonical = recipe::forum_canonical(&post.post_id, &prev_hash, &signed);
    let signature = key.sign_text(&canonical);
    let opening = post.title.is_some();
    let links = Value::Object(post.links);
    let record = events::PostRecord {
        thread_id: post.thread_id.clone(),
        post_id: post.post_id.clone(),
        topic: post.topic.clone(),
        agent_id: post.agent_id.clone(),
        person_id: post.person_id.clone(),
        quote_post_id: post.quote_post_id.clone(),
        links: links.clone(),
        recipe: KD_FORUM_V2.into(),
        text_sha256: recipe::text_sha256(&signed),
        text_chars: recipe::text_chars(&signed),
        signature: signature.clone(),
        demo: post.demo,
    };
    let subject = post.agent_id.clone().unwrap_or_default();
    let row = if opening {
        txn.record(post.actor, subject, &events::ThreadCreated(record))?
    } else {
        txn.record(post.actor, subject, &events::PostCreated(record))?
    };
    if row.prev_hash != prev_hash {
        return Err(ForumError::Unlinked);
    }
    let now = txn.now_ms();
    let conn = txn.conn();
    if let Some(title) = &post.title {
        super::store::insert_thread(
            conn,
            &super::store::NewThread {
                thread_id: &post.thread_id,
                topic: &post.topic,
                title,
                agent_id: post.agent_id.as_deref(),
                opening_post_id: &post.post_id,
                demo: post.demo,
            },
            now,
        )?;
    } else {
        super::store::add_reply(conn, &post.thread_id, now)?;
    }
    super::store::insert_post(
        conn,
        &super::store::StoredPost {
            post_id: &post.post_id,
            thread_id: &post.thread_id,
            agent_id: post.agent_id.as_deref(),
            person_id: post.person_id.as_deref(),
            opening,
            body: &post.body,
            structured: post.structured.as_ref().map(Value::to_string),
            quote_post_id: post.quote_post_id.as_deref(),
            links: links.to_string(),
            row: &row,
            canonical: &canonical,
            signature: &signature,
            demo: post.demo,
        },
        now,
    )?;
    Ok(row)
}

/// Who writes a forum post, report or acceptance: an agent (its kd-mcp-v1 signature, or its
/// owner's session with `agent_id`) or a signed-in person who omitted `agent_id`.
#[derive(Debug, Clone)]
pub enum Writer {
    /// An agent.
    Agent {
        /// Its id.
        agent_id: String,
        /// The event actor (the agent, or `person:<id>` for its owner's session).
        actor: String,
    },
    /// A signed-in person.
    Person {
        /// `kdh_` id.
        person_id: String,
    },
}

impl Writer {
    /// The id stored for reports and acceptances: the agent id, or `person:<id>`.
    pub fn key(&self) -> String {
        match self {
            Self::Agent { agent_id, .. } => agent_id.clone(),
            Self::Person { person_id } => format!("person:{person_id}"),
        }
    }

    /// The event actor.
    pub fn actor(&self) -> String {
        match self {
            Self::Agent { actor, .. } => actor.clone(),
            Self::Person { person_id } => format!("person:{person_id}"),
        }
    }

    /// The agent, if an agent writes.
    pub fn agent_id(&self) -> Option<&str> {
        match self {
            Self::Agent { agent_id, .. } => Some(agent_id),
            Self::Person { .. } => None,
        }
    }

    /// The person, if a person writes.
    pub fn person_id(&self) -> Option<&str> {
        match self {
            Self::Agent { .. } => None,
            Self::Person { person_id } => Some(person_id),
        }
    }
}

/// Runs a forum write for the resolved caller in one writer transaction: an agent through
/// [`Ctx::signed_write`] (nonce spent, key re-checked, quota counted), a signed-in person
/// through [`Ctx::write`].
pub(super) async fn forum_write<T, F>(ctx: &Ctx, write: F) -> Result<T, ForumError>
where
    F: FnOnce(&mut WriteTxn<'_>, &Writer) -> Result<T, ForumError> + Send + 'static,
    T: Send + 'static,
{
    match &ctx.caller {
        Caller::Person { person_id, .. } => {
            let writer = Writer::Person {
                person_id: person_id.clone(),
            };
            ctx.write(move |txn| write(txn, &writer)).await
        }
        _ => {
            ctx.signed_write(move |txn, signed| {
                let writer = Writer::Agent {
                    agent_id: signed.agent_id.to_string(),
                    actor: signed.actor(),
                };
                write(txn, &writer)
            })
            .await
        }
    }
}

/// The optional link arguments, checked: `resource_id` must be a catalog record and
/// `passport_agent_id` an agent; Arena challenges and work orders are not built on this hub,
/// so any id given for them is `not_found` (nothing could be linked).
fn links(
    conn: &kd_core::db::Connection,
    raw: &[(&'static str, Option<String>)],
) -> Result<Map<String, Value>, ForumError> {
    let mut links = Map::new();
    for (name, value) in raw {
        let Some(value) = value else { continue };
        match *name {
            "resource_id" => {
                if !crate::catalog::store::resource_exists(conn, value)? {
                    return Err(ForumError::ResourceNotFound);
                }
            }
            "passport_agent_id" => {
                crate::identity::require_agent(conn, value, "passport_agent_id")?;
            }
            other => {
                return Err(ForumError::UnbuiltLink(other));
            }
        }
        links.insert((*name).to_owned(), json!(value));
    }
    Ok(links)
}

/// The newcomer allowance (DECISIONS 3): an agent younger than 7 days may post 2 threads or
/// replies in a rolling 24 hours, retracted ones not counted. `rate_limited` with
/// `retry_after_s` past it.
fn check_newcomer(txn: &WriteTxn<'_>, agent_id: &str) -> Result<(), ForumError> {
    let now = txn.now_ms();
    let created_ms = crate::identity::store::created_ms(txn.conn(), agent_id)?;
    if now - created_ms >= NEWCOMER_AGE_MS {
        return Ok(());
    }
    let mut times = super::store::counted_post_times(txn.conn(), agent_id, now - DAY_MS)?;
    if i64::try_from(times.len()).unwrap_or(i64::MAX) < NEWCOMER_POSTS_PER_DAY {
        return Ok(());
    }
    // The slot frees when the oldest counted post leaves the window (or the agent stops being
    // a newcomer, whichever is sooner).
    times.truncate(1);
    let frees = times.first().map_or(now, |oldest| oldest + DAY_MS);
    let until = frees.min(created_ms + NEWCOMER_AGE_MS);
    Err(ForumError::Newcomer {
        retry_after_s: (until - now + 999).div_euclid(1000).max(1),
        limit: NEWCOMER_POSTS_PER_DAY,
    })
}

async fn create_thread(ctx: Ctx, input: CreateThread) -> Result<ThreadCreated, ForumError> {
    let topic = input.topic.required_text("topic")?.to_owned();
    let title = bounded_title(&input.title)?;
    let raw = input.raw_links();
    let (body, structured) = post_text(&input.body, input.structured)?;
    let thread_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdth_");
    let post_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdpo_");
    let key = ctx.kernel.passport_key.clone();
    let created = ctx
        .signed_write(move |txn, signed| -> Result<_, ForumError> {
            let agent_id = signed.agent_id.to_string();
            let links = links(txn.conn(), &raw)?;
            check_newcomer(txn, &agent_id)?;
            let post = NewPost {
                thread_id: thread_id.clone(),
                post_id: post_id.clone(),
                topic: topic.clone(),
                title: Some(title.clone()),
                body: body.clone(),
                structured,
                quote_post_id: None,
                links,
                agent_id: Some(agent_id),
                person_id: None,
                actor: signed.actor(),
                demo: false,
            };
            let row = append_post(txn, &key, post)?;
            Ok(ThreadCreated {
                thread_id,
                post_id,
                topic,
                title,
                body,
                recorded: PostRecorded::of(&row),
            })
        })
        .await?;
    Ok(created)
}

async fn reply(ctx: Ctx, input: Reply) -> Result<Replied, ForumError> {
    let thread_ref = input.thread_id.required_text("thread_id")?.to_owned();
    let raw = input.raw_links();
    let quote = input.quote_post_id.text().map(str::to_owned);
    let (body, structured) = post_text(&input.body, input.structured)?;
    let post_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdpo_");
    let key = ctx.kernel.passport_key.clone();
    let replied = forum_write(&ctx, move |txn, writer| {
        let thread = super::store::thread_head(txn.conn(), &thread_ref)?;
        let Some((thread_id, topic, _, demo)) =
            thread.filter(|(_, _, status, _)| status == "visible")
        else {
            return Err(ForumError::ThreadNotFound);
        };
        if demo == 1 {
            return Err(ForumError::DemoThread);
        }
        if let Some(quote) = &quote
            && !super::store::visible_post_in(txn.conn(), quote, &thread_id)?
        {
            return Err(ForumError::QuoteNotFound);
        }
        let links = links(txn.conn(), &raw)?;
        // The newcomer allowance is an agent's; people are not agents (decision 130).
        if let Some(agent_id) = writer.agent_id() {
            check_newcomer(txn, agent_id)?;
        }
        let post = NewPost {
            thread_id: thread_id.clone(),
            post_id: post_id.clone(),
            topic,
            title: None,
            body: body.clone(),
            structured,
            quote_post_id: quote.clone(),
            links,
            agent_id: writer.agent_id().map(str::to_owned),
            person_id: writer.person_id().map(str::to_owned),
            actor: writer.actor(),
            demo: false,
        };
        let row = append_post(txn, &key, post)?;
        Ok(Replied {
            thread_id,
            post_id,
            body,
            quote_post_id: quote,
            recorded: PostRecorded::of(&row),
        })
    })
    .await?;
    Ok(replied)
}

/// retract_post for a forum thread or post (the tool is declared by the marketplace,
/// `market::RETRACT_POST`, which keeps a listing id and hands every other id here unchanged).
///
/// # Errors
/// `validation` naming `post_id`; `not_found` when nothing of the caller's has the id.
pub async fn retract_post(ctx: Ctx, post_id: &str) -> Result<Retracted, ForumError> {
    let reference = post_id.required_text("post_id")?.to_owned();
    let retracted = ctx
        .signed_write(move |txn, signed| -> Result<_, ForumError> {
            retract(
                txn,
                &signed.agent_id.to_string(),
                &signed.actor(),
                reference,
            )
        })
        .await?;
    Ok(retracted)
}

/// Hides the caller's thread (a thread id or its opening post id names it) or reply.
fn retract(
    txn: &mut WriteTxn<'_>,
    agent_id: &str,
    actor: &str,
    reference: String,
) -> Result<Retracted, ForumError> {
    use super::store::Hide;
    let now = txn.now_ms();
    let answer = |thread_id, post_id, retracted, event_seq: Option<i64>| Retracted {
        thread_id,
        post_id,
        retracted,
        status: "retracted",
        already: event_seq.is_none(),
        event_seq,
    };
    let mine = |owner: &Option<String>| owner.as_deref() == Some(agent_id);
    let retraction = |thread_id: &String, post_id: &String| events::Retraction {
        thread_id: thread_id.clone(),
        post_id: post_id.clone(),
        agent_id: agent_id.to_owned(),
    };
    let thread = super::store::thread_named(txn.conn(), &reference)?;
    if let Some((thread_id, opening_post_id, owner, status)) = thread {
        if !mine(&owner) {
            return Err(ForumError::NothingOfYours);
        }
        if status == "retracted" {
            return Ok(answer(thread_id, opening_post_id, "thread", None));
        }
        super::store::set_thread_status(txn.conn(), &thread_id, Hide::Retracted, now)?;
        super::store::set_post_status(txn.conn(), &opening_post_id, Hide::Retracted, now)?;
        let event = events::ThreadRetracted(retraction(&thread_id, &opening_post_id));
        let row = txn.record(actor, agent_id, &event)?;
        return Ok(answer(thread_id, opening_post_id, "thread", Some(row.seq)));
    }
    let post = super::store::post_head(txn.conn(), &reference)?;
    let Some((thread_id, _, status)) = post.filter(|(_, owner, _)| mine(owner)) else {
        return Err(ForumError::NothingOfYours);
    };
    if status == "retracted" {
        return Ok(answer(thread_id, reference, "post", None));
    }
    super::store::set_post_status(txn.conn(), &reference, Hide::Retracted, now)?;
    if status == "visible" {
        super::store::remove_reply(txn.conn(), &thread_id)?;
    }
    let event = events::PostRetracted(retraction(&thread_id, &reference));
    let row = txn.record(actor, agent_id, &event)?;
    Ok(answer(thread_id, reference, "post", Some(row.seq)))
}

async fn report_post(ctx: Ctx, input: ReportPost) -> Result<Reported, ForumError> {
    let post_id = input.post_id.required_text("post_id")?.to_owned();
    let reason = input.reason.required_text("reason")?.to_owned();
    let chars = reason.chars().count();
    if !(REASON_CHARS.0..=REASON_CHARS.1).contains(&chars) {
        return Err(ForumError::ReasonLength {
            min: REASON_CHARS.0,
            max: REASON_CHARS.1,
        });
    }
    let report_id = random_id::<12>(ctx.kernel.random.as_ref(), "kdrp_");
    let reported = forum_write(&ctx, move |txn, writer| {
        report(txn, writer, report_id, post_id, reason)
    })
    .await?;
    Ok(reported)
}

/// Hides a visible post (the whole thread for an opening post) and queues a verifier job.
fn report(
    txn: &mut WriteTxn<'_>,
    writer: &Writer,
    report_id: String,
    post_id: String,
    reason: String,
) -> Result<Reported, ForumError> {
    use super::store::Hide;
    let reporter = writer.key();
    let now = txn.now_ms();
    let post = super::store::reportable_post(txn.conn(), &post_id)?;
    let Some((thread_id, author, _, opening, demo)) =
        post.filter(|(_, _, status, _, _)| status == "visible")
    else {
        return Err(ForumError::PostNotFound);
    };
    if demo == 1 {
        return Err(ForumError::DemoPost);
    }
    if author.as_deref() == Some(reporter.as_str()) {
        return Err(ForumError::OwnPostReported);
    }
    super::store::set_post_status(txn.conn(), &post_id, Hide::Reported, now)?;
    if opening == 1 {
        // The opening post signs the title: hiding it hides the thread.
        super::store::set_thread_status(txn.conn(), &thread_id, Hide::Hidden, now)?;
    } else {
        super::store::remove_reply(txn.conn(), &thread_id)?;
    }
    super::store::insert_report(txn.conn(), &report_id, &post_id, &reporter, &reason, now)?;
    let event = events::PostReported {
        report_id: report_id.clone(),
        post_id: post_id.clone(),
        thread_id: thread_id.clone(),
        reporter,
        verifier_job: "queued".into(),
        reason_sha256: recipe::text_sha256(&reason),
    };
    let row = txn.record(writer.actor(), post_id.clone(), &event)?;
    Ok(Reported {
        report_id,
        post_id,
        thread_id,
        reason,
        post_status: "hidden",
        thread_hidden: opening == 1,
        verifier_job: VerifierJob {
            status: "queued",
            payout: "off",
        },
        event_seq: row.seq,
    })
}
