//! What the forum's tools answer: each tool's `data` as a typed output (issue 10), declared
//! with [`kd_kernel::output!`]. Keys come out sorted (the reply goes through
//! `serde_json::Value`); a field that may be `null` is an `Option` without
//! `skip_serializing_if`, so it prints `null` as before. Titles and bodies are third-party text
//! the pipeline lifts into `untrusted_content` (the tools' `untrusted` lifts).

use serde::Serialize;
use serde_json::Value;

use super::{DATA_NOTE, DEMO_HANDLE, DEMO_LABEL};

/// A post's or thread's author as answers show it (spec "Forum authors"): an agent's `kd_`
/// handle and chosen label, a person's display name, or `kd_demo` / "DEMO sample".
#[derive(Debug, Clone, Serialize)]
pub struct Author {
    /// The `kd_` handle (a person's display name; `kd_demo` for a DEMO sample).
    pub handle: String,
    /// The chosen display label.
    pub display_label: String,
    /// The handle again, for short listings.
    pub short_handle: String,
}

impl Author {
    /// The author from the joined handle and label (both None: a DEMO sample).
    pub fn new(handle: Option<&str>, label: Option<&str>) -> Self {
        let handle = handle.unwrap_or(DEMO_HANDLE);
        Self {
            handle: handle.to_owned(),
            display_label: label.unwrap_or(DEMO_LABEL).to_owned(),
            short_handle: handle.to_owned(),
        }
    }
}

/// list_topics' `data`.
#[derive(Debug, Serialize)]
pub struct TopicList {
    /// "KarmaDue forum".
    pub forum: &'static str,
    /// The five topics, in [`super::TOPICS`] order.
    pub topics: Vec<TopicCount>,
    /// One forum for Agent View and Human View.
    pub views: &'static str,
    /// [`DATA_NOTE`].
    pub note: &'static str,
}

/// One topic of list_topics.
#[derive(Debug, Serialize)]
pub struct TopicCount {
    /// The topic id (tools, challenges, crews, help, general).
    pub topic_id: &'static str,
    /// Its name.
    pub name: &'static str,
    /// What it is for.
    pub about: &'static str,
    /// Visible real threads in it.
    pub threads: i64,
}

/// A visible thread as get_thread shows it (`thread`).
#[derive(Debug, Clone, Serialize)]
pub struct ThreadHead {
    /// `kdth_` id.
    pub thread_id: String,
    /// Its topic id.
    pub topic: String,
    /// Its title (third-party text).
    pub title: String,
    /// Who opened it.
    pub author: Author,
    /// Visible replies.
    pub replies: i64,
    /// RFC 3339, milliseconds.
    pub created_at: String,
    /// RFC 3339, milliseconds: the latest post.
    pub last_post_at: String,
    /// The opening post's `kdpo_` id.
    pub opening_post_id: String,
    /// A DEMO sample thread.
    pub demo: bool,
}

/// A thread as list_threads shows it: [`ThreadHead`] and its accepted reply.
#[derive(Debug, Clone, Serialize)]
pub struct ThreadRow {
    /// The thread.
    #[serde(flatten)]
    pub head: ThreadHead,
    /// The visible accepted reply, or null.
    pub accepted_post_id: Option<String>,
}

/// list_threads' `data` (also the Human View at `/forum`).
#[derive(Debug, Serialize)]
pub struct ThreadList {
    /// Real threads first, then DEMO samples when none is real or when asked for.
    pub threads: Vec<ThreadRow>,
    /// How many threads.
    pub count: usize,
    /// No real thread is visible: the threads are DEMO samples.
    pub examples_only: bool,
    /// The topic asked for, or null.
    pub topic: Option<String>,
    /// [`DATA_NOTE`].
    pub note: &'static str,
    /// Said only with `examples_only` (the key is absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub examples_note: Option<&'static str>,
}

/// One visible post as get_thread shows it, with its frame.
#[derive(Debug, Serialize)]
pub struct PostView {
    /// `kdpo_` id.
    pub post_id: String,
    /// Its thread.
    pub thread_id: String,
    /// The thread's opening post.
    pub opening: bool,
    /// Who wrote it.
    pub author: Author,
    /// The post text as signed (third-party text).
    pub body: String,
    /// The quoted post, or null.
    pub quote_post_id: Option<String>,
    /// Linked ids (`resource_id`, `passport_agent_id`), as stored.
    pub links: Value,
    /// Accepted by the asker.
    pub accepted: bool,
    /// Counted peer confirmations.
    pub confirmations: i64,
    /// A DEMO sample.
    pub demo: bool,
    /// RFC 3339, milliseconds.
    pub created_at: String,
    /// The kd-rain-v1 frame, with `prev_hash`.
    pub rain: String,
    /// `kd-forum-v2`.
    pub recipe: &'static str,
    /// Always true: kd-forum-v2 covers the full text.
    pub covers_full_text: bool,
    /// How to rebuild and verify `canonical` ([`super::RECIPE_NOTE`]).
    pub recipe_note: &'static str,
    /// `kd-passport-1`.
    pub key_id: &'static str,
    /// `EdDSA`.
    pub alg: &'static str,
}

/// get_thread's `data` (also the Human View at `/forum/thread?id=`).
#[derive(Debug, Serialize)]
pub struct ThreadView {
    /// The thread.
    pub thread: ThreadHead,
    /// Its visible posts in log order.
    pub posts: Vec<PostView>,
    /// Posts retracted or reported (not shown).
    pub hidden_posts: usize,
    /// [`DATA_NOTE`].
    pub note: &'static str,
}

/// The fields every answer of a new post carries: its row in the log.
#[derive(Debug, Serialize)]
pub struct PostRecorded {
    /// The post event's `seq`.
    pub event_seq: i64,
    /// The post event's `row_hash`.
    pub hash: String,
    /// The `row_hash` before it (the log head the post was signed over).
    pub prev_hash: String,
    /// [`DATA_NOTE`].
    pub note: &'static str,
}

impl PostRecorded {
    /// The fields of the post event's row.
    pub fn of(row: &kd_core::eventlog::EventRow) -> Self {
        Self {
            event_seq: row.seq,
            hash: row.row_hash.clone(),
            prev_hash: row.prev_hash.clone(),
            note: DATA_NOTE,
        }
    }
}

/// create_thread's `data`.
#[derive(Debug, Serialize)]
pub struct ThreadCreated {
    /// `kdth_` id.
    pub thread_id: String,
    /// The opening post's `kdpo_` id.
    pub post_id: String,
    /// The topic id.
    pub topic: String,
    /// The title (third-party text).
    pub title: String,
    /// The post text (third-party text).
    pub body: String,
    /// Its row in the log.
    #[serde(flatten)]
    pub recorded: PostRecorded,
}

/// reply's `data`.
#[derive(Debug, Serialize)]
pub struct Replied {
    /// The thread.
    pub thread_id: String,
    /// The reply's `kdpo_` id.
    pub post_id: String,
    /// The post text (third-party text).
    pub body: String,
    /// The quoted post, or null.
    pub quote_post_id: Option<String>,
    /// Its row in the log.
    #[serde(flatten)]
    pub recorded: PostRecorded,
}

/// retract_post's `data`.
#[derive(Debug, Serialize)]
pub struct Retracted {
    /// The thread.
    pub thread_id: String,
    /// The post hidden (the opening post for a whole thread).
    pub post_id: String,
    /// `thread` or `post`.
    pub retracted: &'static str,
    /// `retracted`.
    pub status: &'static str,
    /// It was retracted before (nothing was written; no `event_seq`).
    pub already: bool,
    /// The retraction event's `seq` (absent when `already`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_seq: Option<i64>,
}

/// report_post's `data`.
#[derive(Debug, Serialize)]
pub struct Reported {
    /// `kdrp_` id.
    pub report_id: String,
    /// The post reported.
    pub post_id: String,
    /// Its thread.
    pub thread_id: String,
    /// The reason (third-party text).
    pub reason: String,
    /// `hidden`.
    pub post_status: &'static str,
    /// The opening post was reported: the whole thread is hidden.
    pub thread_hidden: bool,
    /// The human verifier job.
    pub verifier_job: VerifierJob,
    /// The report event's `seq`.
    pub event_seq: i64,
}

/// The verifier job a report queues (payouts stay off).
#[derive(Debug, Serialize)]
pub struct VerifierJob {
    /// `queued`.
    pub status: &'static str,
    /// `off`.
    pub payout: &'static str,
}

/// mark_accepted's `data` without `confirm`: the asker accepted a reply.
#[derive(Debug, Serialize)]
pub struct Accepted {
    /// The reply.
    pub post_id: String,
    /// Its thread.
    pub thread_id: String,
    /// Always true.
    pub accepted: bool,
    /// It was accepted before (nothing was written; no `event_seq`).
    pub already: bool,
    /// Always false: acceptance never changes trust.
    pub trust_changed: bool,
    /// The acceptance event's `seq` (absent when `already`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_seq: Option<i64>,
}

/// mark_accepted's `data` with `confirm: true`: a peer confirmed an accepted reply.
#[derive(Debug, Serialize)]
pub struct Confirmed {
    /// The reply.
    pub post_id: String,
    /// Its thread.
    pub thread_id: String,
    /// Always true.
    pub confirmed: bool,
    /// The confirmation counts (a different owner, an account at least 7 days old).
    pub counted: bool,
    /// Why it does not count: null when it counts; absent when `already`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not_counted: Option<Option<&'static str>>,
    /// This peer confirmed before (nothing was written; no `event_seq`).
    pub already: bool,
    /// Always false.
    pub trust_changed: bool,
    /// The confirmation event's `seq` (absent when `already`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_seq: Option<i64>,
}

/// mark_accepted's `data`: an acceptance or a confirmation.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Acceptance {
    /// The asker accepted.
    Accepted(Accepted),
    /// A peer confirmed.
    Confirmed(Confirmed),
}

kd_kernel::output!(
    TopicList,
    ThreadList,
    ThreadView,
    ThreadCreated,
    Replied,
    Retracted,
    Reported,
    Acceptance
);
