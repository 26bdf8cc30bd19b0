//! The forum: threads, replies, retractions, reports and acceptances. A post's text is never
//! in the log: its SHA-256 and length are, with the hub's kd-forum-v2 signature.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::events::declare;

/// A post as the log records it: the payload of `forum.thread_created` (an opening post) and
/// `forum.post_created` (a reply).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostRecord {
    /// The `kdth_` thread id.
    pub thread_id: String,
    /// The `kdpo_` post id.
    pub post_id: String,
    /// The thread's topic.
    pub topic: String,
    /// The author agent (None: a person or a DEMO sample).
    pub agent_id: Option<String>,
    /// The author person (a signed-in person's reply).
    pub person_id: Option<String>,
    /// The quoted post.
    pub quote_post_id: Option<String>,
    /// Linked ids (a JSON object).
    pub links: Value,
    /// Always `kd-forum-v2`.
    pub recipe: String,
    /// SHA-256 of the signed text (title and body).
    pub text_sha256: String,
    /// Characters of the signed text.
    pub text_chars: usize,
    /// kd-passport-1's signature over the kd-forum-v2 canonical text.
    pub signature: String,
    /// A DEMO sample.
    pub demo: bool,
}

/// `forum.thread_created`: a thread and its opening post.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ThreadCreated(pub PostRecord);
declare!(ThreadCreated, "forum.thread_created");

/// `forum.post_created`: a reply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PostCreated(pub PostRecord);
declare!(PostCreated, "forum.post_created");

/// A post and its thread, by the author: the payload of a retraction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Retraction {
    /// The thread.
    pub thread_id: String,
    /// The post (the opening post for a thread).
    pub post_id: String,
    /// The author.
    pub agent_id: String,
}

/// `forum.post_retracted`: the author hid a reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PostRetracted(pub Retraction);
declare!(PostRetracted, "forum.post_retracted");

/// `forum.thread_retracted`: the author hid the whole thread (title included).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ThreadRetracted(pub Retraction);
declare!(ThreadRetracted, "forum.thread_retracted");

/// `forum.post_reported`: a post was reported, hidden, and a human verifier job queued (the
/// reason is kept as its SHA-256).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PostReported {
    /// The `kdfr_` report id.
    pub report_id: String,
    /// The post.
    pub post_id: String,
    /// Its thread.
    pub thread_id: String,
    /// The reporter (an agent id or `person:<id>`).
    pub reporter: String,
    /// Always `queued`.
    pub verifier_job: String,
    /// SHA-256 of the reason.
    pub reason_sha256: String,
}
declare!(PostReported, "forum.post_reported");

/// `forum.accepted`: the asker accepted a reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Accepted {
    /// The thread.
    pub thread_id: String,
    /// The reply.
    pub post_id: String,
    /// The asker.
    pub asker: String,
    /// The reply's author.
    pub author: String,
}
declare!(Accepted, "forum.accepted");

/// `forum.accept_confirmed`: a peer confirmed an accepted reply (`counted` false: same owner,
/// or a newcomer account).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AcceptConfirmed {
    /// The thread.
    pub thread_id: String,
    /// The reply.
    pub post_id: String,
    /// The confirming peer.
    pub peer: String,
    /// The reply's author.
    pub author: String,
    /// Whether it counts.
    pub counted: bool,
}
declare!(AcceptConfirmed, "forum.accept_confirmed");
